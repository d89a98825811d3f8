//! # vsp-bfv: the FV/BFV scheme, textbook and RNS
//!
//! Fan–Vercauteren (ePrint 2012/144) somewhat-homomorphic encryption over `Z_Q[x]/(x^N + 1)` with
//! plaintexts in `Z_t[x]/(x^N + 1)`, in two forms:
//! * the **RNS scheme** used for real work: Q is a chain of word-size primes, products are scaled by
//!   t/Q with the HPS (Halevi–Polyakov–Shoup, ePrint 2018/117) or BEHZ (Bajard et al., SAC 2016)
//!   method — seed 002, Al Badawi et al., ePrint 2018/589 — and relinearisation/rotations use
//!   RNS-digit key switching;
//! * the **textbook scheme** ([`textbook`]) over one big modulus with exact big-integer scaling and
//!   seed 001's relinearisation versions 1 (base-T digits) and 2 (modulus raising), the reference
//!   the RNS methods are tested against.
//!
//! ```
//! use vsp_bfv::*;
//! let params = BfvParameters::default_128(4096, 65537).unwrap();
//! let mut rng = rand::thread_rng();
//! let sk = SecretKey::random(&params, &mut rng);
//! let pk = PublicKey::new(&sk, &mut rng);
//! let rk = RelinKey::new(&sk, &mut rng);
//! let enc = Encoder::new(&params);
//! let a = pk.encrypt(&enc.encode_batch(&[1, 2, 3]).unwrap(), &mut rng).unwrap();
//! let b = pk.encrypt(&enc.encode_batch(&[4, 5, 6]).unwrap(), &mut rng).unwrap();
//! let ev = Evaluator::new(&params);
//! let c = ev.multiply_relin(&a, &b, &rk).unwrap();
//! assert_eq!(&enc.decode_batch(&sk.decrypt(&c).unwrap()).unwrap()[..3], &[4, 10, 18]);
//! ```

//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`params`] | parameters, the 128-bit security table and presets ([`BfvParameters`]) |
//! | [`keys`] | secret, public, relinearisation and Galois keys |
//! | [`encoding`] | plaintexts, coefficient encoding and SIMD batching ([`Encoder`]) |
//! | [`encrypt`] | encryption, decryption and the invariant noise budget |
//! | [`ciphertext`] | ciphertexts (coefficient form, optionally seeded) |
//! | [`evaluator`] | homomorphic operations ([`Evaluator`]) |
//! | [`sampling`] | error distributions and samplers |
//! | [`serialize`] | versioned binary files in the [`vsp_codec`] envelope |
//! | [`textbook`] | textbook FV over one big modulus with relinearisation v1/v2 (the reference) |
//! | `rns`, `hps`, `behz`, `poly`, `arith`, `exec` | RNS plumbing, HPS and BEHZ scaling, polynomial helpers, thread execution (private) |
//! | [`error`] | [`Error`], wrapping the codec's errors |

#![forbid(unsafe_code)]

mod arith;
mod behz;
/// Ciphertexts (coefficient form, optionally seeded).
pub mod ciphertext;
/// Plaintexts, coefficient encoding and SIMD batching.
pub mod encoding;
/// Encryption, decryption and the invariant noise budget.
pub mod encrypt;
/// Typed errors.
pub mod error;
/// Homomorphic operations.
pub mod evaluator;
mod exec;
mod hps;
/// Secret, public, relinearisation and Galois keys.
pub mod keys;
/// Parameters, the 128-bit security table and presets.
pub mod params;
mod poly;
mod rns;
/// Error distributions and samplers.
pub mod sampling;
/// Versioned binary serialization.
pub mod serialize;
/// Textbook FV over one big modulus with relinearisation v1/v2 (the reference).
pub mod textbook;

pub use behz::BehzDecryptor;
pub use ciphertext::Ciphertext;
pub use encoding::{Encoder, Plaintext};
pub use encrypt::Decryptor;
pub use error::{Error, Result};
pub use evaluator::Evaluator;
pub use keys::{GaloisKeys, PublicKey, RelinKey, SecretKey};
pub use params::{BfvParameters, BfvParametersBuilder, MulMethod};
pub use sampling::ErrorDistribution;
