//! Typed errors for everything in vsp-math that a caller can get wrong.
//!
//! Every public constructor validates its parameters and returns one of these instead of panicking,
//! so that a scheme crate can turn a bad parameter file into a clear message.

use thiserror::Error;

/// What went wrong in a vsp-math call.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MathError {
    /// A modulus outside the supported range (2 ≤ q < 2^62, or < 2^31 for the 32-bit variant).
    #[error("modulus {value} is out of range: {reason}")]
    ModulusOutOfRange { value: u64, reason: &'static str },
    /// A modulus that must be prime is not.
    #[error("modulus {0} is not prime")]
    NotPrime(u64),
    /// A prime that must be ≡ 1 (mod 2N) for a negacyclic NTT of size N is not.
    #[error("prime {q} is not congruent to 1 mod 2N = {two_n}")]
    NotNttFriendly { q: u64, two_n: u64 },
    /// The ring degree is not a power of two or outside the supported range.
    #[error("ring degree {n} is invalid: {reason}")]
    InvalidDegree { n: usize, reason: &'static str },
    /// A bit size outside what the operation supports.
    #[error("bit size {bits} is out of range {min}..={max}")]
    BitSizeOutOfRange { bits: u32, min: u32, max: u32 },
    /// Not enough primes of the requested shape exist.
    #[error("only {found} primes of {bits} bits that are 1 mod {two_n} exist below the search limit, {wanted} wanted")]
    NotEnoughPrimes {
        bits: u32,
        two_n: u64,
        wanted: usize,
        found: usize,
    },
    /// The element has no inverse modulo the modulus.
    #[error("{value} has no inverse modulo {modulus}")]
    NotInvertible { value: u64, modulus: u64 },
    /// A value passed as a root of unity is not a primitive 2N-th root.
    #[error("{root} is not a primitive {order}-th root of unity modulo {modulus}")]
    NotPrimitiveRoot { root: u64, order: u64, modulus: u64 },
    /// Two moduli of an RNS basis share a factor.
    #[error("moduli {a} and {b} are not coprime")]
    NotCoprime { a: u64, b: u64 },
    /// An RNS basis with no moduli.
    #[error("an RNS basis needs at least one modulus")]
    EmptyBasis,
    /// A buffer or operand has the wrong length.
    #[error("length mismatch in {what}: expected {expected}, got {got}")]
    LengthMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// Two operands live in different rings, bases or representations.
    #[error("incompatible operands: {0}")]
    Incompatible(&'static str),
    /// A sampler parameter (σ, tail cut, η, Hamming weight) is unusable.
    #[error("invalid sampler parameter: {0}")]
    InvalidSamplerParameter(&'static str),
    /// The requested SIMD backend is not available on this CPU or for this modulus.
    #[error("NTT backend {backend} unavailable: {reason}")]
    BackendUnavailable {
        backend: &'static str,
        reason: &'static str,
    },
    /// The operating system's random source failed.
    #[error("operating-system randomness unavailable")]
    OsRandomness,
}

/// Shorthand for results in this crate.
pub type Result<T> = core::result::Result<T, MathError>;
