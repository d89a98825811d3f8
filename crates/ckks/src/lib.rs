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
//! The device side builds with `--no-default-features` (no `std`, `alloc` only).
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod arith;
pub mod device;
pub mod encoding;
pub mod error;
pub mod params;
pub mod prng;
pub mod seal;
#[cfg(feature = "std")]
pub mod server;

pub use device::encryptor::{
    DeviceConfig, DeviceEncryptor, EncryptionKind, EncryptionSeeds, MemoryMode, NttRoots, Part,
    Sink, SinkError, SlotValues,
};
pub use device::keys::{DevicePublicKey, DeviceSecretKey};
pub use device::memory::{working_memory, MemoryReport};
pub use encoding::{Complex, Encoder, FftRoots, IndexMap};
pub use error::{CkksError, Result};
pub use params::CkksParams;
