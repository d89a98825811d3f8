//! Typed errors of vsp-ckks. Every fallible entry point returns [`CkksError`]; nothing a caller can
//! feed (parameters, values, serialized bytes, keys) makes the crate panic.

use thiserror::Error;

/// Everything that can go wrong in vsp-ckks.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CkksError {
    /// The parameter set is impossible or unsupported (degree, primes, scale, security).
    #[error("invalid parameters: {0}")]
    InvalidParams(&'static str),
    /// A modulus is not a prime congruent to 1 mod 2N (or too large for the device word size).
    #[error("modulus {0} is not an NTT-friendly prime for this degree (need prime q = 1 mod 2N, q < 2^30 on the device)")]
    BadModulus(u64),
    /// More values than slots were given.
    #[error("{given} values do not fit into {slots} slots")]
    TooManyValues {
        /// Values given.
        given: usize,
        /// Slots available (N/2).
        slots: usize,
    },
    /// A value is NaN/infinite, or value × scale does not fit the coefficient modulus.
    #[error("encoded value out of range: {0}")]
    ValueOutOfRange(&'static str),
    /// The caller-provided sink refused data.
    #[error("the output sink failed")]
    SinkFailed,
    /// A buffer supplied by the caller has the wrong length.
    #[error("buffer length mismatch: expected {expected}, got {got}")]
    LengthMismatch {
        /// Expected length.
        expected: usize,
        /// Length received.
        got: usize,
    },
    /// Two operands do not live at the same level / parameters / scale.
    #[error("operands mismatch: {0}")]
    Mismatch(&'static str),
    /// An operation needs a key or a modulus level that is not available.
    #[error("operation not possible: {0}")]
    NotPossible(&'static str),
    /// The secret-key store failed to deliver the key.
    #[error("the secret-key store failed")]
    KeyStoreFailed,
    /// An arithmetic-core error (vsp-math).
    #[error("arithmetic: {0}")]
    Math(#[from] vsp_math::MathError),
    /// Serialized input is malformed, truncated, or does not match the parameters.
    #[error("malformed serialized data: {0}")]
    Format(&'static str),
}

/// Result alias of this crate.
pub type Result<T> = core::result::Result<T, CkksError>;
