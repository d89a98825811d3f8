//! The codec's typed error: one line each, naming the file format and the field at fault.

use thiserror::Error;

/// Errors of reading, checking and writing files.
#[derive(Debug, Error)]
pub enum Error {
    /// The bytes do not start with the format's magic.
    #[error("not a {format} file (bad magic)")]
    BadMagic {
        /// The format expected.
        format: &'static str,
    },
    /// The file was written in another version of the format (an older build, or a newer one).
    #[error("unsupported {format} format version {found}: this build reads version {supported} (regenerate the file with this build)")]
    Version {
        /// The format.
        format: &'static str,
        /// The version in the file.
        found: u16,
        /// The version this build reads.
        supported: u16,
    },
    /// The file holds another kind of object than the one expected.
    #[error("wrong kind of {format} file: found {found}, expected {expected}")]
    Kind {
        /// The format.
        format: &'static str,
        /// The kind in the file (its name, or its number when unknown).
        found: String,
        /// The kind the caller asked for.
        expected: &'static str,
    },
    /// The bytes end before a field does.
    #[error("file is truncated or corrupt: it ends inside the {0}")]
    Truncated(String),
    /// The header's body length disagrees with the bytes present.
    #[error("file is truncated or has trailing data: header announces {announced} body bytes, {present} present")]
    BodyLength {
        /// Body bytes the header announces.
        announced: u64,
        /// Body bytes present.
        present: u64,
    },
    /// The SHA3-256 checksum does not match.
    #[error("{format} file is corrupt (checksum mismatch)")]
    Checksum {
        /// The format.
        format: &'static str,
    },
    /// A count read from the file exceeds what the field can hold or the bytes that remain.
    #[error("corrupt file: {what} has length {found}, at most {max} possible here")]
    TooLong {
        /// The field.
        what: String,
        /// The length read.
        found: u64,
        /// The largest length possible.
        max: u64,
    },
    /// Bytes remain after the last field.
    #[error("corrupt file: {0} unexpected trailing bytes")]
    Trailing(usize),
    /// A field holds an impossible value.
    #[error("corrupt file: {0}")]
    Invalid(String),
    /// The output path is not a regular file.
    #[error("refusing to write {path}: it is {what}, not a regular file (remove it or choose another path)")]
    NotRegular {
        /// The path.
        path: String,
        /// What is there (a symbolic link, a directory, …).
        what: &'static str,
    },
    /// The output path names one of the command's inputs.
    #[error(
        "refusing to write {path} over the {what} {input} (the same file): choose another output"
    )]
    SameFile {
        /// The output path.
        path: String,
        /// What the input is.
        what: String,
        /// The input path.
        input: String,
    },
    /// An input path that is not a regular file (never opened for reading, so a FIFO cannot hang
    /// the reader and a device cannot feed it without end).
    #[error("cannot read {path}: it is {what}, not a regular file")]
    NotRegularInput {
        /// The path.
        path: String,
        /// What is there (a FIFO, a device, a directory, …).
        what: &'static str,
    },
    /// An input larger than any file of its kind.
    #[error("cannot read {path}: it holds {size}, more than {what} can (at most {max})")]
    TooLarge {
        /// The path.
        path: String,
        /// Its size (`more` when it grew past the bound while being read).
        size: String,
        /// The kind of file expected (`a secret key`).
        what: String,
        /// The bound.
        max: String,
    },
    /// A text input that is not UTF-8.
    #[error("cannot read {path}: it is not UTF-8 text (bad byte at offset {offset})")]
    NotText {
        /// The path.
        path: String,
        /// Offset of the first byte that is not UTF-8.
        offset: usize,
    },
    /// Another process holds the output's lock.
    #[error("refusing to write {path}: another process is writing it (it holds {lock})")]
    Locked {
        /// The output.
        path: String,
        /// Its lock file.
        lock: String,
    },
    /// Reading or writing failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot read", "cannot create", …).
        action: &'static str,
        /// The file.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    }
}
