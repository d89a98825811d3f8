//! The crate's error type: lower crates' errors are wrapped, not flattened to strings, and every
//! message names the file, key, core or argument at fault.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in vsp-platform.
#[derive(Debug, Error)]
pub enum PlatformError {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file or directory could not be created, written, synced or moved into place.
    #[error("cannot {action} {}", path.display())]
    Write {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// An error inside the file at `path` (the cause is the source).
    #[error("{}", path.display())]
    InFile {
        path: PathBuf,
        source: Box<PlatformError>,
    },
    /// A file is not a vsp file, of another version, truncated, corrupt or malformed.
    #[error("{0}")]
    Format(String),
    /// A file made for another key or parameter set.
    #[error("{0}")]
    KeyMismatch(String),
    /// An output path that must not be written (not a regular file, or one of the inputs).
    #[error("{0}")]
    Refused(String),
    /// A bad argument: unknown core, parameter set or memory kind, a program too large, …
    #[error("{0}")]
    Usage(String),
    /// What was being done when `source` failed.
    #[error("{context}")]
    Context {
        context: String,
        source: Box<PlatformError>,
    },
    /// The shared file codec (envelope, reader, atomic write).
    #[error(transparent)]
    Codec(#[from] vsp_codec::Error),
    #[error(transparent)]
    Circuit(#[from] vsp_circuit::CircuitError),
    #[error(transparent)]
    Tfhe(#[from] vsp_tfhe::Error),
    #[error(transparent)]
    Image(#[from] vsp_cahp::ImageError),
    #[error(transparent)]
    Asm(#[from] vsp_cahp::AsmError),
    #[error(transparent)]
    Load(#[from] vsp_cahp::LoadError),
    #[error(transparent)]
    Sim(#[from] vsp_cahp::SimError),
    #[error(transparent)]
    Cc(#[from] vsp_cc::CcError),
}

/// The crate's result type.
pub type Result<T, E = PlatformError> = std::result::Result<T, E>;

impl PlatformError {
    /// A [`PlatformError::Format`] error.
    pub fn format(msg: impl Into<String>) -> Self {
        PlatformError::Format(msg.into())
    }

    /// A [`PlatformError::Usage`] error.
    pub fn usage(msg: impl Into<String>) -> Self {
        PlatformError::Usage(msg.into())
    }

    /// This error as the cause of a failure inside the file `path`.
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        PlatformError::InFile {
            path: path.into(),
            source: Box::new(self),
        }
    }

    /// This error as the cause of `context`.
    pub fn context(self, context: impl Into<String>) -> Self {
        PlatformError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }
}

/// `.context(..)` on results whose error converts into a [`PlatformError`].
pub trait ResultExt<T> {
    /// Wraps the error with what was being done.
    fn context(self, context: impl FnOnce() -> String) -> Result<T>;
    /// Wraps the error with the file it happened in.
    fn in_file(self, path: &std::path::Path) -> Result<T>;
}

impl<T, E: Into<PlatformError>> ResultExt<T> for std::result::Result<T, E> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| e.into().context(context()))
    }
    fn in_file(self, path: &std::path::Path) -> Result<T> {
        self.map_err(|e| e.into().in_file(path))
    }
}
