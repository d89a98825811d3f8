//! The server side (needs `std`): key generation, reception and re-expansion of streamed/seeded
//! ciphertexts, decryption and decoding, and the evaluator (add, multiply, relinearize, rescale).

/// NTT-form RNS ciphertexts in SEAL's layout.
pub mod ciphertext;
/// Per-parameter tables (vsp-math NTT, Barrett moduli, encoder).
pub mod context;
/// Decryption, CRT reconstruction and decoding.
pub mod decryptor;
/// Add, multiply, relinearize, rescale, modulus drop.
pub mod evaluator;
/// Secret, public and relinearisation key generation.
pub mod keys;
/// Collecting streamed ciphertexts and re-expanding seeds.
pub mod receive;
/// Small modular helpers.
pub mod ring;

pub use ciphertext::Ciphertext;
pub use context::ServerContext;
pub use decryptor::Decryptor;
pub use evaluator::Evaluator;
pub use keys::{KeyGenerator, PublicKey, RelinKeys, SecretKey};
pub use receive::{expand_seeded, Collector};
