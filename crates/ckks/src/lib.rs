//! vsp-ckks: CKKS for small devices, readable by Microsoft SEAL.
//!
//! Follows seed 003, SEAL-Embedded (Natarajan & Dai, "SEAL-Embedded: A Homomorphic Encryption Library
//! for the Internet of Things", TCHES 2021(3)): a device encodes with the canonical embedding and
//! encrypts (symmetric with a shareable seed, or with a public key), streaming one prime at a time
//! through a caller's sink with small, accounted working memory. The server side (behind the default
//! `std` feature) generates keys, re-expands seeded ciphertexts, decrypts, decodes, adds, multiplies,
//! relinearizes and rescales, and reads and writes SEAL 4.x's serialization format so that SEAL and
//! this crate exchange keys and ciphertexts.
//!
//! The device side builds with `--no-default-features` (no `std`, and no allocator at all:
//! [`BufferEncryptor`] over caller buffers and tables); the `alloc` feature adds the owned
//! [`DeviceEncryptor`], and `std` (default) the server side.
//!
//! ```
//! use vsp_ckks::server::{Collector, Decryptor, KeyGenerator, ServerContext};
//! use vsp_ckks::{CkksParams, DeviceConfig, DeviceEncryptor, EncryptionSeeds};
//! # fn main() -> vsp_ckks::Result<()> {
//! let mut rng = rand::rngs::OsRng;
//! // Server: N = 4096, three 30-bit primes, scale 2^25 (SEAL-Embedded's default).
//! let ctx = ServerContext::new(CkksParams::default())?;
//! let keys = KeyGenerator::new(&ctx, &mut rng)?;
//! let device_pk = keys.public_key(&mut rng)?.to_device(&ctx)?;
//! // Device: ≈ 49 KiB of working memory, ciphertext streamed prime by prime into a sink.
//! let mut enc = DeviceEncryptor::new(DeviceConfig::low_memory(CkksParams::default()))?;
//! let mut received = Collector::new(&ctx); // any `Sink`, e.g. a closure sending over a radio
//! enc.encrypt_asymmetric(&[1.5, -2.25, 3.0], &device_pk, &EncryptionSeeds::random(&mut rng), &mut received)?;
//! // Server: decrypt and decode.
//! let slots = Decryptor::new(&ctx, keys.secret_key()).decrypt_real(&received.finish()?)?;
//! assert!((slots[1] + 2.25).abs() < 1e-2);
//! # Ok(())
//! # }
//! ```
//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`params`] | parameter sets (SEAL-Embedded presets, user primes, 128-bit security cap) |
//! | [`arith`] | device-side 32-bit Barrett/Shoup arithmetic and small helpers |
//! | [`device`] | the device side: streaming encryptor, keys, 32-bit NTT, memory accounting (no std) |
//! | [`encoding`] | the canonical-embedding encoder/decoder with SEAL's slot order |
//! | [`prng`] | SEAL's SHAKE256 seed stream and the device's private noise samplers |
//! | [`seal`] | Microsoft SEAL 4.x serialization (files written with [`vsp_codec`]'s atomic write) |
//! | [`server`] | the server side: keys, reception, decryption, evaluation (std) |
//! | [`error`] | [`CkksError`] |

#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

/// Device-specific modular arithmetic (32-bit Barrett/Shoup) and small helpers.
pub mod arith;
/// The device side: streaming encryptor, keys, 32-bit NTT, memory accounting (no std).
pub mod device;
/// Canonical-embedding encoder/decoder with SEAL's slot order.
pub mod encoding;
/// The crate's error type.
pub mod error;
/// Parameter sets (SEAL-Embedded presets, user primes, 128-bit security cap).
pub mod params;
/// SEAL's SHAKE256 seed stream and the device's private noise samplers.
pub mod prng;
/// Microsoft SEAL 4.x serialization.
pub mod seal;
/// The server side: keys, reception, decryption, evaluation (std).
#[cfg(feature = "std")]
pub mod server;

pub use device::buffer::{fill_tables, BufferEncryptor, DeviceMemory, EncryptionSeeds};
pub use device::config::{
    BufferSizes, DeviceConfig, EncryptionKind, MemoryMode, NttRoots, Part, SecretKeyForm,
    SecretKeyStore, Sink, SinkError, SlotValues, StoreError,
};
#[cfg(feature = "alloc")]
pub use device::encryptor::DeviceEncryptor;
#[cfg(feature = "alloc")]
pub use device::keys::{DevicePublicKey, DeviceSecretKey};
pub use device::keys::{PackedSecretKey, PublicKeyView};
#[cfg(feature = "alloc")]
pub use device::memory::{working_memory, MemoryReport};
#[cfg(feature = "alloc")]
pub use encoding::Encoder;
pub use encoding::{Complex, EncoderView, FftRoots, IndexMap};
pub use error::{CkksError, Result};
pub use params::CkksParams;
