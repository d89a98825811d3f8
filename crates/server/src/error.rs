//! The crate's error type. Every message is one line; [`ServerError::chain`] joins an error with
//! its causes for a job's failure reason.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// Everything that can go wrong in the server or the client.
#[derive(Debug, Error)]
pub enum ServerError {
    #[error("{action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot listen on {0}")]
    Listen(String, #[source] std::io::Error),
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error(transparent)]
    Platform(#[from] vsp_platform::PlatformError),
    #[error(transparent)]
    Codec(#[from] vsp_codec::Error),
    /// A bad argument or name.
    #[error("{0}")]
    Usage(String),
    /// The server answered with an error (the client's side).
    #[error("the server refused: {message} (HTTP {status})")]
    Refused { status: u16, message: String },
    /// The server could not be reached or the connection broke (the client's side).
    #[error("{0}")]
    Http(String),
    /// A job ended in a state other than done (the client's `--wait`).
    #[error("{0}")]
    Job(String),
}

/// The crate's result type.
pub type Result<T, E = ServerError> = std::result::Result<T, E>;

impl ServerError {
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        ServerError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// This error and its causes on one line (`a: b: c`).
    pub fn chain(&self) -> String {
        chain(self)
    }
}

/// `e` and its causes on one line, repeated messages left out.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !s.is_empty() && !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    parts.join(": ").replace('\n', " ")
}
