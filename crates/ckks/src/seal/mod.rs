//! Microsoft SEAL 4.x serialization (`serialization.h`, `ciphertext.cpp`, `plaintext.cpp`,
//! `kswitchkeys.cpp`, `encryptionparams.cpp`, `randomgen.cpp` of github.com/microsoft/SEAL): the
//! 16-byte SEALHeader, parms_id (BLAKE2b-256 of the parameter words), uncompressed bodies, and the
//! seeded ciphertext form with a SHAKE256 seed. Verified against seal-python 4.4 in
//! `tests/seal_interop.rs`.

/// BLAKE2b for parms_id.
pub mod blake2b;
/// SEALHeader, parms_id and ciphertext preambles (no std).
pub mod header;
/// Readers and writers of SEAL ciphertexts and keys (std).
#[cfg(feature = "std")]
pub mod objects;
/// Streaming seeded-ciphertext writer for the device (no std).
pub mod stream;

pub use header::parms_id;
#[cfg(feature = "std")]
pub use objects::{
    read_ciphertext, read_public_key, read_relin_keys, read_secret_key, save_atomic,
    write_ciphertext, write_public_key, write_relin_keys, write_secret_key,
    write_seeded_ciphertext,
};
pub use stream::SealSeededWriter;
