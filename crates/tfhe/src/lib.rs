//! # vsp-tfhe — TFHE for the Virtual Secure Platform
//!
//! Torus FHE after Chillotti, Gama, Georgieva, Izabachène (CGGI16/17, JoC 2020) with the level structure
//! of TFHEpp as used by VSP (Matsuoka et al., USENIX Security 2021, seed 000): level-0 TLWE gate
//! ciphertexts, level-1 TRLWE/TRGSW for CMUX memory, level-2 (64-bit torus) inside circuit bootstrapping.
//!
//! ## Use
//! ```no_run
//! use vsp_tfhe::{Params, SecretKey, EvalKey};
//! let params = Params::default_128();
//! let sk = SecretKey::generate(&params)?;
//! let ek = EvalKey::generate(&sk)?;           // Send + Sync: share it across threads
//! let (a, b) = (sk.encrypt_bit(true), sk.encrypt_bit(false));
//! let c = ek.nand(&a, &b)?;
//! assert!(sk.decrypt_bit(&c)?);
//! # Ok::<(), vsp_tfhe::Error>(())
//! ```
//! Gates: `nand and or nor xor xnor andnot ornot not copy mux constant` on [`EvalKey`]; `mux_without_se`,
//! `bit_to_trlwe`, `extract_bit` link gates to CMUX memory. [`TrgswFft::cmux`] and
//! [`TrgswFft::external_product`] are the leveled operations; TRGSW selectors come from
//! [`SecretKey::encrypt_trgsw_lvl1`] or from [`CircuitKey::circuit_bootstrap`] (returns TRGSW(m) and
//! TRGSW(1−m)).
//!
//! ## Threads
//! [`EvalKey`] and [`CircuitKey`] are immutable and `Send + Sync`; every call allocates its own small
//! scratch (or takes an [`ExtScratch`]), so one key serves any number of threads. Key generation and
//! decompression use rayon. [`CircuitKey::circuit_bootstrap_batch_par`] runs one circuit-bootstrapping
//! batch on several scoped threads of its own (lower latency, the same result bit for bit).
//!
//! ## Keys and files
//! [`CompressedEvalKey`] / [`CompressedCircuitKey`] hold a public mask seed plus bodies (what files store,
//! see [`serialize`]); `decompress()` regenerates masks and transforms the bootstrapping keys.
//! Ciphertexts implement serde and have checked `to_bytes`/`from_bytes`.
//!
//! ## Modules
//! | module | what it holds |
//! |---|---|
//! | [`params`] | `default_128`, `vsp2021`, `cggi16_insecure`, with security rationale |
//! | [`torus`] | u32/u64 torus words, balanced gadget decomposition, modulus switching |
//! | [`fft`] | negacyclic f64 FFT (N/2-point, twisted); `fft_avx2`, `fft_avx512` are its `unsafe` SIMD kernels, chosen at run time and tested against the portable code |
//! | [`noise`] | variance predictions and failure probabilities |
//! | [`rng`] | seeds and domain-separated streams, on vsp-math's ChaCha20 and Gaussian sampler |
//! | [`secret_key`] | secret keys, encryption/decryption of bits, TRLWE and TRGSW |
//! | [`tlwe`], [`trlwe`], [`trgsw`] | ciphertexts, monomials, sample extraction, external product, CMUX |
//! | [`bootstrap`] | blind rotation, identity key switch, gate bootstrapping, [`EvalKey`] |
//! | [`gates`] | every bootstrapped gate, MUX and HomMUX without SE/IKS |
//! | [`circuit_bootstrap`] | private functional key switching and circuit bootstrapping, [`CircuitKey`] |
//! | `keygen` | seeded encryption shared by key generation and decompression (private) |
//! | `privks` | the private key-switching key in a blocked layout and its AVX-512/AVX2/portable kernels (private) |
//! | [`serialize`] | versioned, checksummed files in the [`vsp_codec`] envelope |
//! | [`error`] | [`Error`], wrapping the codec's errors |

#![allow(clippy::needless_range_loop)] // index loops mirror the papers' formulas

pub mod batch;
pub mod bootstrap;
pub mod cells;
pub mod circuit_bootstrap;
pub mod error;
pub mod fft;
mod fft_avx2;
mod fft_avx512;
pub mod gates;
mod keygen;
pub mod noise;
pub mod params;
mod privks;
pub mod rng;
pub mod secret_key;
pub mod serialize;
pub mod tlwe;
pub mod torus;
pub mod trgsw;
pub mod trlwe;

pub use batch::{Booted, Bootstrap};
pub use bootstrap::{CompressedEvalKey, EvalKey};
pub use cells::CellSpec;
pub use circuit_bootstrap::{CircuitKey, CompressedCircuitKey, PrivFunction};
pub use error::Error;
pub use gates::{Bit, Gate2};
pub use params::{KeyDist, ParamId, Params};
pub use rng::Seed;
pub use secret_key::SecretKey;
pub use tlwe::{Tlwe, TlweLvl0};
pub use torus::{Gadget, Torus};
pub use trgsw::{ExtScratch, TrgswFft, TrgswLvl1};
pub use trlwe::{Trlwe, TrlweLvl1};
