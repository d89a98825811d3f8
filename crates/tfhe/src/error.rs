//! The crate's error type.

/// Everything that can go wrong in vsp-tfhe.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Impossible or inconsistent parameters.
    #[error("invalid parameters: {0}")]
    Params(String),
    /// An insecure parameter set was requested without the opt-in.
    #[error("insecure parameters refused: {0}")]
    Insecure(String),
    /// A ciphertext or key has the wrong size for the parameters or operation.
    #[error("dimension mismatch: {0}")]
    Dimension(String),
    /// A file or byte string is malformed, truncated, corrupt or of the wrong kind/parameters.
    #[error("bad format: {0}")]
    Format(String),
    /// An intact file made with other values of a named parameter set: by another version of the
    /// software, whose defaults differed (its keys and ciphertexts cannot be used with this build's).
    #[error("parameter fingerprint mismatch: made with other values of parameter set {0} than this build's")]
    ParamsChanged(String),
    /// A file's envelope or body failed the codec's checks, or writing it failed.
    #[error(transparent)]
    Codec(#[from] vsp_codec::Error),
    /// Filesystem error.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}
