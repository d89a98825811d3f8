//! The server side (needs `std`): key generation, reception and re-expansion of streamed/seeded
//! ciphertexts, decryption and decoding, and the evaluator (add, multiply, relinearize, rescale).

pub mod ciphertext;
pub mod context;
pub mod decryptor;
pub mod evaluator;
pub mod keys;
pub mod receive;
pub mod ring;

pub use ciphertext::Ciphertext;
pub use context::ServerContext;
pub use decryptor::Decryptor;
pub use evaluator::Evaluator;
pub use keys::{KeyGenerator, PublicKey, RelinKeys, SecretKey};
pub use receive::{expand_seeded, Collector};
