//! Errors of the C compiler: every failure names what went wrong and, for IR input, the line.

use thiserror::Error;

/// Everything that can go wrong between a C file and CAHPv3 assembly text.
#[derive(Debug, Error)]
pub enum CcError {
    /// `clang` could not be started.
    #[error(
        "clang was not found ({0}); vsp cc uses Debian's clang as its C front end: \
         install it with `apt-get install -y clang` or point CcOptions::clang at it"
    )]
    ClangMissing(String),
    /// clang ran but rejected the program (its diagnostics are included).
    #[error("clang failed on {path}: {stderr}")]
    ClangFailed {
        /// The C file.
        path: String,
        /// clang's diagnostics.
        stderr: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The LLVM IR text is malformed (or uses syntax this reader does not know).
    #[error("LLVM IR line {line}: {msg}")]
    Parse {
        /// 1-based line in the IR text.
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// The IR is well formed but uses a construct the CAHPv3 back end does not lower.
    #[error("LLVM IR line {line}: not supported by the CAHPv3 back end: {what}")]
    Unsupported {
        /// 1-based line in the IR text (0 when not tied to a line).
        line: usize,
        /// The construct.
        what: String,
    },
    /// The vsp-cahp assembler rejected the generated assembly (a program too large for the ROM,
    /// a branch out of range, …).
    #[error("assembling the compiled program failed: {0}")]
    Assemble(String),
    /// The compiled program (with crt0 and the runtime helpers) is larger than the ROM.
    #[error(
        "the program does not fit in the ROM: its code takes {used} bytes, the ROM holds {limit} \
         ({})",
        if *try_oz { "try -Oz or a smaller program" } else { "make the program smaller" }
    )]
    DoesNotFit {
        /// Bytes of code.
        used: usize,
        /// ROM size.
        limit: usize,
        /// Whether the program was built at an optimisation level other than `-Oz` (the one that
        /// gives the smallest code), so that the message suggests it; see
        /// [`CcError::with_opt_hint`].
        try_oz: bool,
    },
    /// A program-level problem: undefined symbol, missing `main`, code too large for a branch, …
    #[error("{0}")]
    Program(String),
}

impl CcError {
    /// The error of a program built with `opts`: a program that does not fit suggests `-Oz` only
    /// when it was built at another level.
    pub fn with_opt_hint(self, opts: &crate::compile::CcOptions) -> Self {
        match self {
            CcError::DoesNotFit { used, limit, .. } => CcError::DoesNotFit {
                used,
                limit,
                try_oz: opts.opt != "-Oz",
            },
            e => e,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, CcError>;

/// A parse error at `line`.
pub(crate) fn parse_err<T>(line: usize, msg: impl Into<String>) -> Result<T> {
    Err(CcError::Parse {
        line,
        msg: msg.into(),
    })
}

/// An unsupported-construct error at `line`.
pub(crate) fn unsupported<T>(line: usize, what: impl Into<String>) -> Result<T> {
    Err(CcError::Unsupported {
        line,
        what: what.into(),
    })
}
