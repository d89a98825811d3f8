//! Typed errors of vsp-bfv: every failure a caller can provoke with bad input ends here.

use thiserror::Error;

/// Everything that can go wrong in vsp-bfv.
#[derive(Debug, Error)]
pub enum Error {
    /// The parameters are impossible or inconsistent (message names the problem).
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),
    /// The parameters are below the 128-bit HomomorphicEncryption.org bound and were not marked insecure.
    #[error(
        "insecure parameters: log2 Q = {log_q} exceeds the 128-bit bound {max} for N = {degree} \
         (HomomorphicEncryption.org standard); opt in with `insecure()` to reproduce papers"
    )]
    Insecure {
        /// Ring degree.
        degree: usize,
        /// Total bit size of the ciphertext modulus.
        log_q: u32,
        /// The bound from the standard.
        max: u32,
    },
    /// Objects built for different parameter sets were combined.
    #[error("parameter mismatch: {0}")]
    ParameterMismatch(&'static str),
    /// A value does not fit (wrong length, value ≥ t, …).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A ciphertext has a degree the operation does not accept.
    #[error("unsupported ciphertext size {0} for this operation")]
    CiphertextSize(usize),
    /// A required key (rotation step, relinearisation) was not generated.
    #[error("missing key: {0}")]
    MissingKey(String),
    /// Decryption would be wrong: the invariant noise budget is exhausted.
    #[error("noise budget exhausted: decryption result would be wrong")]
    NoiseBudgetExhausted,
    /// Serialized bytes are malformed, truncated, of a different kind or version.
    #[error("serialization: {0}")]
    Format(String),
    /// A file's envelope or a length failed the codec's checks, or writing the file failed.
    #[error(transparent)]
    Codec(#[from] vsp_codec::Error),
    /// The arithmetic core vsp-math refused something (e.g. no NTT-friendly prime of that size).
    #[error("arithmetic: {0}")]
    Arithmetic(#[from] vsp_math::MathError),
    /// An arithmetic precondition of the scheme failed (a batching root, an inverse in a base).
    #[error("arithmetic: {0}")]
    Precondition(&'static str),
    /// Fewer NTT-friendly primes of the size exist than the parameters ask for.
    #[error("arithmetic: not enough {bits}-bit primes ≡ 1 mod {modulus}")]
    NotEnoughPrimes {
        /// The primes' bit size.
        bits: u32,
        /// The modulus the primes must be ≡ 1 to (2N).
        modulus: usize,
    },
    /// Thread-pool creation failed.
    #[error("thread pool: {0}")]
    ThreadPool(#[from] rayon::ThreadPoolBuildError),
}

/// Result alias of this crate.
pub type Result<T> = core::result::Result<T, Error>;
