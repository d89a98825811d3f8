//! The one error type of the crate: every message names the cell, wire, port, file or key at fault.

use thiserror::Error;

/// Errors of netlist construction, import, blueprint loading, evaluation and snapshots.
#[derive(Debug, Error)]
pub enum CircuitError {
    /// A netlist is malformed (undriven wire, unconnected DFF, duplicate port, …).
    #[error("invalid netlist: {0}")]
    Netlist(String),
    /// A combinational loop; the message names a cell on it.
    #[error("{0}")]
    CombinationalLoop(String),
    /// The Yosys JSON could not be parsed or uses something we do not accept.
    #[error("Yosys JSON: {0}")]
    Yosys(String),
    /// A Yosys cell type outside the accepted gate set.
    #[error(
        "Yosys JSON: {}cell {cell:?} has unsupported type {ty}; {hint}",
        file.as_ref().map(|f| format!("{f}: ")).unwrap_or_default()
    )]
    UnsupportedCell {
        /// The netlist file, when it was read from one.
        file: Option<String>,
        cell: String,
        ty: String,
        hint: String,
    },
    /// The blueprint TOML is malformed or inconsistent.
    #[error("blueprint: {0}")]
    Blueprint(String),
    /// Two ends of a connection have different widths.
    #[error("width mismatch: {0}")]
    WidthMismatch(String),
    /// Unknown port, memory, or value of the wrong size given to the engine.
    #[error("{0}")]
    Usage(String),
    /// A snapshot file is corrupt, truncated, of another version or for another circuit/backend.
    #[error("snapshot: {0}")]
    Snapshot(String),
    /// vsp-tfhe refused an operation (wrong key shape, parameters, a ciphertext of the wrong size, …).
    #[error("TFHE backend: {0}")]
    Tfhe(#[from] vsp_tfhe::Error),
    /// The evaluation itself failed (mismatched keys, a worker task that panicked, an internal
    /// inconsistency): no lower error to wrap.
    #[error("TFHE backend: {0}")]
    Backend(String),
    /// The MPI job failed or its ranks disagree (the `mpi` module, feature `mpi`).
    #[error("MPI: {0}")]
    Mpi(String),
    /// A file failed the codec's checks (magic, version, lengths, checksum), or reading or
    /// writing it failed.
    #[error(transparent)]
    Codec(#[from] vsp_codec::Error),
    /// An error in a named file.
    #[error("{path}: {source}")]
    InFile {
        path: String,
        #[source]
        source: Box<CircuitError>,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl CircuitError {
    /// A Yosys import error of the netlist file `file`, naming it.
    pub(crate) fn in_netlist_file(self, file: &str) -> Self {
        match self {
            CircuitError::Yosys(m) => CircuitError::Yosys(format!("{file}: {m}")),
            CircuitError::UnsupportedCell {
                file: None,
                cell,
                ty,
                hint,
            } => CircuitError::UnsupportedCell {
                file: Some(file.to_string()),
                cell,
                ty,
                hint,
            },
            other => other,
        }
    }

    pub(crate) fn in_file(path: &std::path::Path, source: CircuitError) -> Self {
        CircuitError::InFile {
            path: path.display().to_string(),
            source: Box::new(source),
        }
    }
}
