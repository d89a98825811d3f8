//! Microsoft SEAL 4.x serialization (`serialization.h`, `ciphertext.cpp`, `plaintext.cpp`,
//! `kswitchkeys.cpp`, `encryptionparams.cpp` of github.com/microsoft/SEAL): the 16-byte SEALHeader,
//! parms_id (BLAKE2b-256 of the parameter words), uncompressed bodies.

pub mod blake2b;
