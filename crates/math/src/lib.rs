//! # vsp-math — the RLWE arithmetic core of VSP
//!
//! Word-size modular arithmetic, the negacyclic NTT, RNS bases with CRT and base conversions, RNS
//! polynomials, samplers and seeded PRNGs: everything the TFHE, BFV and CKKS crates share, and no
//! scheme logic. It follows seed 001 ("Fast arithmetic hardware library for RLWE-based HE": Barrett
//! reduction, NTT, LUT-based CRT, Gaussian sampling), seed 003 (SEAL-Embedded's Harvey NTT with
//! on-the-fly roots, in SEAL's bit-reversed order) and seed 004 (the Gaussian PRNG), in software.
//!
//! Without the default `std` feature the crate is `no_std` + `alloc` (everything except
//! OS-seeded randomness); without `alloc` as well it is the allocation-free core (`modulus`,
//! `montgomery`, `prime` but for prime generation), for the embedded CKKS encryptor.

//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`modulus`] | [`Modulus`] (Barrett, Shoup, lazy reductions, inverses, powers) and [`Modulus32`] |
//! | [`montgomery`] | Montgomery multiplication for chains of products by varying operands |
//! | [`ntt`] | negacyclic NTT tables and run-time selected SIMD backends (AVX2, AVX2+FMA, AVX-512 IFMA: the crate's `unsafe` kernels, each tested against the portable code) |
//! | [`prime`] | Miller–Rabin, NTT-friendly prime generation, primitive roots |
//! | [`prng`] | OS-seeded ChaCha20 and domain-separated ChaCha20 / SHAKE256 seed streams (also vsp-tfhe's) |
//! | [`rns`] | RNS bases, CRT, base conversions, RNS polynomials |
//! | [`sampler`] | uniform, binary, ternary, centered-binomial and discrete/continuous Gaussian samplers |
//! | [`error`] | [`MathError`] |

#![cfg_attr(not(feature = "std"), no_std)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

/// Typed errors ([`MathError`]) for every invalid parameter or operand.
pub mod error;
/// `Modulus` (Barrett, Shoup, lazy reductions, inverses, powers) and `Modulus32`.
pub mod modulus;
/// Montgomery multiplication for chains of products by varying operands.
pub mod montgomery;
/// Negacyclic NTT tables, run-time selected SIMD backends and the on-the-fly variant.
#[cfg(feature = "alloc")]
pub mod ntt;
/// Miller–Rabin, NTT-friendly prime generation, primitive roots.
pub mod prime;
/// OS-seeded ChaCha20 CSPRNG and domain-separated ChaCha20 / SHAKE256 seed streams.
#[cfg(feature = "alloc")]
pub mod prng;
/// RNS bases, CRT reconstruction, fast/HPS/Shenoy–Kumaresan base conversion, HPS scale-and-round,
/// RNS polynomials.
#[cfg(feature = "alloc")]
pub mod rns;
/// Uniform, binary, ternary, centered-binomial and discrete-Gaussian samplers.
#[cfg(feature = "alloc")]
pub mod sampler;

pub use error::{MathError, Result};
pub use modulus::{Modulus, Modulus32, ShoupConst, MAX_MODULUS_BITS};
pub use montgomery::Montgomery;
#[cfg(feature = "alloc")]
pub use ntt::{Backend, NttOnTheFly, NttTable};
#[cfg(feature = "alloc")]
pub use prime::generate_ntt_primes;
pub use prime::{is_prime, minimal_primitive_root, previous_ntt_prime, primitive_root};
#[cfg(feature = "alloc")]
pub use prng::{ChaCha20, Seed, SeededStream, StreamKind, SEED_BYTES};
#[cfg(feature = "alloc")]
pub use rns::{
    BaseConverter, Representation, RnsBasis, RnsContext, RnsPoly, ScaleRound, ShenoyKumaresan,
};
#[cfg(feature = "alloc")]
pub use sampler::{CdtSampler, ZigguratSampler};
