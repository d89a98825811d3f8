//! One job on P ranks: `mpirun -np P vsp run|resume|circuit run|circuit exec|circuit resume …`
//! (docs/mpi.md).
//!
//! Built with the `mpi` feature and started by `mpirun`, a process joins the MPI job ([`start`]) and
//! hands its engine to the MPI executor (`vsp_circuit::mpi`) in [`join`]; there is no flag. Rank 0
//! reads the request (or the snapshot, or the inputs) and writes the snapshots and the result; every
//! rank loads the evaluation key itself. Any error on any rank stops the whole job ([`abort`]).
//! Without the feature, or outside `mpirun`, every function here is the single-process run.

use vsp_cahp::cores::{Core, MemSize, Memory};

use crate::error::{PlatformError, Result};
use crate::wire::tags::MachineTag;

/// The MPI session of this process (finalized when dropped: keep it until the end of `main`).
pub struct Session {
    #[cfg(feature = "mpi")]
    _inner: Option<vsp_circuit::mpi::MpiSession>,
}

#[cfg(feature = "mpi")]
static WORLD: std::sync::OnceLock<vsp_circuit::mpi::World> = std::sync::OnceLock::new();

/// Joins the MPI job when the process was started by `mpirun` (and built with the `mpi` feature).
/// A build without the feature started as one of several ranks is refused: it would run the whole
/// job on each of them, every rank writing the same files.
pub fn start() -> Result<Session> {
    #[cfg(feature = "mpi")]
    {
        if vsp_circuit::mpi::launched_by_mpirun() {
            let s = vsp_circuit::mpi::MpiSession::init()?;
            let _ = WORLD.set(s.world());
            return Ok(Session { _inner: Some(s) });
        }
        Ok(Session { _inner: None })
    }
    #[cfg(not(feature = "mpi"))]
    {
        let ranks = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
            .iter()
            .filter_map(|v| std::env::var(v).ok()?.trim().parse::<u64>().ok())
            .max();
        if let Some(n) = ranks.filter(|&n| n > 1) {
            return Err(PlatformError::usage(format!(
                "started by mpirun on {n} ranks, but this vsp was built without MPI: rebuild it with `cargo build --release -p vsp --features mpi` (docs/mpi.md)"
            )));
        }
        Ok(Session {})
    }
}

/// `(rank, ranks)` when this process is one of several ranks of an MPI job.
pub fn job() -> Option<(usize, usize)> {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        return Some((w.rank(), w.size()));
    }
    None
}

/// True unless this process is a rank other than 0 (which neither reads requests nor writes files).
pub fn is_root() -> bool {
    job().is_none_or(|(r, _)| r == 0)
}

/// Under a job of several ranks: refuses a command that does not run distributed
/// (`distributed` false) and one whose command line differs from another rank's (ranks that
/// disagree would wait for each other forever). Returns whether this process reports (rank 0, or
/// no job).
pub fn check_command(distributed: bool) -> Result<bool> {
    if job().is_none() {
        return Ok(true);
    }
    if !distributed {
        return Err(PlatformError::usage(
            "only `run`, `resume`, `circuit run`, `circuit exec` and `circuit resume` run on several MPI ranks",
        ));
    }
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        w.check_same("command lines", args.join("\0").as_bytes())?;
    }
    Ok(is_root())
}

/// Stops every rank of the job after an error on this one (no rank waits for a dead peer); returns
/// when there is no job of several ranks.
pub fn abort(message: &str) {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        w.abort(message, 1);
    }
    let _ = message;
}

/// Rank 0's `bytes` on every rank (outside a job: `bytes` itself).
fn broadcast(bytes: Option<Vec<u8>>) -> Vec<u8> {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        return w.broadcast(bytes);
    }
    bytes.unwrap_or_default()
}

/// Makes `engine` one rank of the job and gives every rank rank 0's state (inputs, memories): called
/// on every rank after rank 0 has set them up, before the first cycle. Outside a job it does nothing.
pub fn join<B: vsp_circuit::Backend>(engine: &mut vsp_circuit::Engine<B>) -> Result<()> {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        engine.join_mpi(*w)?;
    }
    let _ = engine;
    Ok(())
}

/// Rank 0's machine (core, memory kind and size; rank 0 passes `Some`) on every rank, in the one
/// encoding of a snapshot's tag ([`MachineTag`]).
pub(crate) fn machine_from_root(
    machine: Option<(Core, Memory, MemSize)>,
) -> Result<(Core, Memory, MemSize)> {
    let tag = machine.map(|(c, m, s)| MachineTag::Core(c, m, s).to_bytes());
    let bytes = broadcast(tag);
    match machine {
        Some(m) => Ok(m),
        None => match MachineTag::parse(&mut vsp_codec::Reader::new(&bytes))? {
            MachineTag::Core(c, m, s) => Ok((c, m, s)),
            MachineTag::Circuit => Err(PlatformError::format("rank 0 sent a circuit's tag")),
        },
    }
}
