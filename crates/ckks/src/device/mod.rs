//! The device side (no `std`, allocation only at setup): SEAL-Embedded's encode-and-encrypt
//! pipeline (Natarajan & Dai, TCHES 2021(3)) with its memory knobs.

pub mod encryptor;
pub mod keys;
pub mod memory;
pub mod ntt;
