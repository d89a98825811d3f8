//! The device side (no `std`, allocation only at setup): SEAL-Embedded's encode-and-encrypt
//! pipeline (Natarajan & Dai, TCHES 2021(3)) with its memory knobs.

/// The pipeline over caller memory and the allocation-free `BufferEncryptor`.
pub mod buffer;
/// Configuration knobs and the streaming sink interface.
pub mod config;
/// The streaming symmetric / public-key encryptor (owned buffers).
#[cfg(feature = "alloc")]
pub mod encryptor;
/// Device key material (packed secret, data-level public key).
pub mod keys;
/// Working-memory accounting.
#[cfg(feature = "alloc")]
pub mod memory;
/// The 32-bit NTT with on-the-fly, one-shot and loaded roots.
pub mod ntt;
