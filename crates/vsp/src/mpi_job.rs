//! `mpirun -np P vsp run|resume|circuit run|circuit exec|circuit resume …`: one job on P ranks
//! (docs/mpi.md).
//!
//! Built with the `mpi` feature and started by `mpirun`, the binary joins the MPI job and hands its
//! engine to the MPI executor (`vsp_circuit::mpi`); there is no flag. Rank 0 reads the request (or the
//! snapshot, or the inputs) and writes the snapshots and the result; every rank loads the evaluation
//! key itself. Any error on any rank stops the whole job. Without the feature, or outside `mpirun`,
//! everything here is the single-process run.

use anyhow::Result;

/// The MPI session of this process (finalized when dropped at the end of `main`).
pub struct Session {
    #[cfg(feature = "mpi")]
    _inner: Option<vsp_circuit::mpi::MpiSession>,
}

#[cfg(feature = "mpi")]
static WORLD: std::sync::OnceLock<vsp_circuit::mpi::World> = std::sync::OnceLock::new();

/// Joins the MPI job when the process was started by `mpirun` (and built with the `mpi` feature).
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
        // Started as one of several ranks, this build would run the whole job on each of them,
        // every rank writing the same files.
        let ranks = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
            .iter()
            .filter_map(|v| std::env::var(v).ok()?.trim().parse::<u64>().ok())
            .max();
        if let Some(n) = ranks.filter(|&n| n > 1) {
            anyhow::bail!(
                "started by mpirun on {n} ranks, but this vsp was built without MPI: rebuild it with `cargo build --release -p vsp --features mpi` (docs/mpi.md)"
            );
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

/// Stops every rank of the job after an error on this one (no rank waits for a dead peer). Returns
/// when there is no job of several ranks.
pub fn fail(e: &anyhow::Error) {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        w.abort(&crate::one_line(e), 1);
    }
    let _ = e;
}

/// Checks that every rank runs the same command line (ranks that disagree would wait for each other
/// forever).
pub fn check_same_command() -> Result<()> {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        let args: Vec<String> = std::env::args().skip(1).collect();
        w.check_same("command lines", args.join("\0").as_bytes())?;
    }
    Ok(())
}

/// Rank 0's `bytes` on every rank (outside a job: `bytes` itself).
pub fn broadcast(bytes: Option<Vec<u8>>) -> Vec<u8> {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        return w.broadcast(bytes);
    }
    bytes.unwrap_or_default()
}

/// Makes `engine` one rank of the job and gives every rank rank 0's state (inputs, memories): call it
/// on every rank after rank 0 has set them up, before the first cycle. Outside a job it does nothing.
pub fn join<B: vsp_circuit::Backend>(engine: &mut vsp_circuit::Engine<B>) -> Result<()> {
    #[cfg(feature = "mpi")]
    if let Some(w) = WORLD.get().filter(|w| w.size() > 1) {
        engine.join_mpi(*w)?;
    }
    let _ = engine;
    Ok(())
}

/// Rank 0's core (rank 0 passes `Some`) on every rank.
pub fn core_from_root(core: Option<vsp_cahp::cores::Core>) -> vsp_cahp::cores::Core {
    use vsp_cahp::cores::Core;
    let tag = core.map(|c| match c {
        Core::Pearl => 0u8,
        Core::Ruby => 1,
    });
    match broadcast(tag.map(|t| vec![t])).first() {
        Some(1) => Core::Ruby,
        Some(_) => Core::Pearl,
        None => core.unwrap_or(Core::Pearl),
    }
}

/// Rank 0's memory kind (rank 0 passes `Some`) on every rank.
pub fn memory_from_root(memory: Option<vsp_cahp::cores::Memory>) -> vsp_cahp::cores::Memory {
    use vsp_cahp::cores::Memory;
    let tag = memory.map(|m| match m {
        Memory::Cmux => 0u8,
        Memory::Mux => 1,
    });
    match broadcast(tag.map(|t| vec![t])).first() {
        Some(1) => Memory::Mux,
        Some(_) => Memory::Cmux,
        None => memory.unwrap_or(Memory::Cmux),
    }
}

/// Rank 0's memory size (rank 0 passes `Some`) on every rank.
pub fn size_from_root(size: Option<vsp_cahp::cores::MemSize>) -> vsp_cahp::cores::MemSize {
    use vsp_cahp::cores::MemSize;
    let tag = size.map(|s| vec![s.rom_log2(), s.ram_log2()]);
    match broadcast(tag)[..] {
        [rom, ram] => MemSize::from_log2(rom, ram).unwrap_or_default(),
        _ => size.unwrap_or_default(),
    }
}

/// The machine of an MPI rank other than 0: `core` with `memory` of `size`, no request loaded (it
/// takes rank 0's state in [`join`]).
pub fn follower_machine(
    keys: &vsp_platform::keys::ServerKeys,
    core: vsp_cahp::cores::Core,
    memory: vsp_cahp::cores::Memory,
    size: vsp_cahp::cores::MemSize,
    threads: Option<usize>,
) -> Result<vsp_platform::Machine<vsp_circuit::TfheBackend>> {
    let backend = vsp_circuit::TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
    let mut m = vsp_platform::Machine::new(backend, core, memory, size)?;
    m.set_threads(threads);
    Ok(m)
}
