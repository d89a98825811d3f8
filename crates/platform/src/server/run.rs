//! The processor's server run: request or snapshot → machine (on every MPI rank) → result.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use vsp_cahp::cores::{Core, MemSize, Memory};
use vsp_circuit::TfheBackend;
use vsp_codec::text::{fmt_bytes, fmt_secs};
use vsp_codec::OutputLock;

use super::mpi;
use crate::error::{PlatformError, Result};
use crate::files::{check_output, lock_output};
use crate::keys::ServerKeys;
use crate::processor::machine::Machine;
use crate::processor::packets::{request_memory, Request};
use crate::processor::program::memory_name;
use crate::processor::run::Snapshot;
use crate::processor::run::{RunProgress, Snapshots};
use crate::wire::envelope::{read_header, Envelope, Kind};

/// What a server run tells its caller (a command shows a spinner, a bar and warnings; a library
/// user may ignore all of it: every method has a default).
pub trait Watch {
    /// Loads the evaluation key (seconds: it is decompressed) as a [`Watch::step`], then notes the
    /// time it took.
    fn load_keys(&mut self, path: &Path) -> Result<Arc<ServerKeys>> {
        let t = Instant::now();
        self.step("loading the evaluation key (regenerating masks from seeds)");
        let keys = ServerKeys::load(path);
        self.step_done();
        let keys = keys?;
        let secs = fmt_secs(t.elapsed().as_secs_f64());
        self.note(&format!("evaluation key ready in {secs}"));
        Ok(Arc::new(keys))
    }
    /// A run of `cycles` cycles starts.
    fn running(&mut self, _cycles: u64) {}
    /// Progress within the run.
    fn cycle(&mut self, _p: &RunProgress<'_>) {}
    /// The run's cycles are done (before anything is written).
    fn ran(&mut self) {}
    /// Something the user should know (a key file others can read, a run that encrypts nothing).
    fn warn(&mut self, _message: &str) {}
    /// What the run is doing (a resumed run's machine and cycle): a line a quiet watcher drops.
    fn note(&mut self, _line: &str) {}
    /// A step of unknown length starts (key generation, encryption).
    fn step(&mut self, _what: &str) {}
    /// The step started last ended.
    fn step_done(&mut self) {}
    /// A line of the result (what `vsp demo` reports).
    fn say(&mut self, _line: &str) {}
}

/// The quiet watcher.
impl Watch for () {}

/// Checks an output path (regular or absent, not one of `inputs`: [`check_output`]) and claims it
/// for this process until the lock is dropped: a second process writing the same file is refused
/// at once instead of both finishing and the last rename winning. Under MPI only rank 0 writes, so
/// only rank 0 claims.
pub fn claim(output: &Path, inputs: &[(&str, &Path)]) -> Result<Option<OutputLock>> {
    check_output(output, inputs)?;
    if !mpi::is_root() {
        return Ok(None);
    }
    Ok(Some(lock_output(output)?))
}

/// Most worker threads a run takes.
pub const MAX_THREADS: usize = 1024;

/// A count of worker threads, 1..=[`MAX_THREADS`] (a huge count used to panic spawning threads).
pub fn parse_threads(s: &str) -> Result<usize> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(PlatformError::usage(format!(
            "must be a number of threads from 1 to {MAX_THREADS}"
        ))),
    }
}

/// Where a server run writes snapshots, as a command asks for them.
pub struct SnapshotPlan {
    /// The path (default: OUTPUT.snapshot).
    pub path: Option<PathBuf>,
    /// Every this many cycles (the run's end always writes one).
    pub every: u64,
    /// No snapshot at all.
    pub none: bool,
}

impl SnapshotPlan {
    /// The snapshots, their path checked against the command's inputs and `output` (a resumed run
    /// writes a new snapshot: never the one it resumes from), and the claims on both outputs
    /// ([`claim`]), held until the run is written.
    pub fn resolve(
        &self,
        output: &Path,
        inputs: &[(&str, &Path)],
    ) -> Result<(Option<Snapshots>, Vec<OutputLock>)> {
        let snapshot = match (&self.path, self.none) {
            (_, true) => None,
            (Some(p), false) => Some(p.clone()),
            (None, false) => {
                let mut name = output.as_os_str().to_owned();
                name.push(".snapshot");
                Some(PathBuf::from(name))
            }
        };
        let mut read = inputs.to_vec();
        let mut locks = Vec::new();
        if let Some(s) = &snapshot {
            locks.extend(claim(s, &read)?);
            read.push(("snapshot", s));
        }
        locks.extend(claim(output, &read)?);
        let plan = snapshot.map(|path| Snapshots {
            path,
            every: self.every,
        });
        Ok((plan, locks))
    }
}

/// A server run as `vsp run`, `resume`, `circuit exec` and `circuit resume` ask for it.
pub struct ServerRun {
    /// The evaluation key.
    pub eval_key: PathBuf,
    /// Where the encrypted result goes.
    pub output: PathBuf,
    /// Cycles to run (on top of a snapshot's).
    pub cycles: u64,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// The snapshots to write.
    pub snapshots: SnapshotPlan,
}

impl ServerRun {
    /// The snapshots, and the claims on the outputs (result, snapshot, and an encrypted `trace`),
    /// each checked against the run's inputs and the outputs before it.
    pub fn claim(
        &self,
        inputs: &[(&str, &Path)],
        trace: Option<&Path>,
    ) -> Result<(Option<Snapshots>, Vec<OutputLock>)> {
        let (snapshots, mut locks) = self.snapshots.resolve(&self.output, inputs)?;
        if let Some(t) = trace {
            let mut all = inputs.to_vec();
            all.push(("output", &self.output));
            all.extend(snapshots.as_ref().map(|s| ("snapshot", s.path.as_path())));
            locks.extend(claim(t, &all)?);
        }
        Ok((snapshots, locks))
    }

    /// The processor's server run from `start`: outputs claimed, machine opened (a resumed one
    /// noted), cycles run, result written. `None` on an MPI rank other than 0.
    pub fn run_processor(&self, start: Start<'_>, watch: &mut dyn Watch) -> Result<Option<Ran>> {
        let ek = self.eval_key.as_path();
        let (snapshots, _locks, mut machine) = match start {
            Start::Request {
                input,
                core,
                memory,
            } => {
                let (s, l) = self.claim(&[("evaluation key", ek), ("request", input)], None)?;
                let m = open_request(ek, input, core, memory, self.threads, watch)?;
                (s, l, m)
            }
            Start::Snapshot(snapshot) => {
                let (s, l) = self.claim(&[("snapshot", snapshot), ("evaluation key", ek)], None)?;
                let m = open_snapshot(ek, snapshot, self.threads, watch)?;
                watch.note(&format!(
                    "resuming {} ({} memory, {}) at cycle {}",
                    m.core(),
                    memory_name(m.memory()),
                    m.size(),
                    m.cycle()
                ));
                (s, l, m)
            }
        };
        advance(
            &mut machine,
            self.cycles,
            snapshots.as_ref(),
            &self.output,
            watch,
        )
    }
}

/// Where a processor's server run starts.
pub enum Start<'a> {
    /// The request at `input`, run on `core` (`memory`, when given, checked against the request's).
    Request {
        input: &'a Path,
        core: Core,
        memory: Option<Memory>,
    },
    /// A snapshot.
    Snapshot(&'a Path),
}

/// Checks from the headers alone that the snapshot was made under the evaluation key (before the
/// key is loaded and decompressed).
pub fn check_snapshot_header(snapshot: &Path, eval_key: &Path) -> Result<()> {
    let (id, params) = read_header::<Snapshot<'static>>(snapshot)?;
    ServerKeys::check_header(
        eval_key,
        &format!("the snapshot {}", snapshot.display()),
        id,
        &params,
    )
}

/// Reads the request (of either kind) at `input` and checks from its header that it was made
/// under the evaluation key (before the key is loaded and decompressed).
pub fn read_request(input: &Path, eval_key: &Path) -> Result<Envelope> {
    let envelope = Envelope::read(input, Kind::Request)?;
    ServerKeys::check_header(
        eval_key,
        &format!("the request {}", input.display()),
        envelope.key_id,
        &envelope.params,
    )?;
    Ok(envelope)
}

/// The machine of a server run of the request at `input` on `core` (`memory`, when given, checked
/// against the request's). The request's key is checked against the evaluation key's header before
/// that key is loaded. Under MPI rank 0 reads the request and the other ranks take its machine and
/// state.
pub fn open_request(
    eval_key: &Path,
    input: &Path,
    core: Core,
    memory: Option<Memory>,
    threads: Option<usize>,
    watch: &mut dyn Watch,
) -> Result<Machine<TfheBackend>> {
    let mut machine = if mpi::is_root() {
        let envelope = read_request(input, eval_key)?;
        // The request names its memory and size; the machine is built for them.
        let (has, size) = request_memory(&envelope).map_err(|e| e.in_file(input))?;
        if let Some(m) = memory.filter(|&m| m != has) {
            return Err(PlatformError::usage(format!(
                "{} was encrypted for {} memory, not {} (encrypt it again with `vsp enc --memory {}`)",
                input.display(),
                memory_name(has),
                memory_name(m),
                memory_name(m)
            )));
        }
        let keys = watch.load_keys(eval_key)?;
        let request =
            Request::from_envelope(&envelope, keys.ek.params()).map_err(|e| e.in_file(input))?;
        drop(envelope);
        let m = Machine::start(&keys, &request, core, threads)?;
        mpi::machine_from_root(Some((core, has, size)))?;
        m
    } else {
        follower(eval_key, threads, watch)?
    };
    mpi::join(machine.engine_mut())?;
    Ok(machine)
}

/// The machine of a server run continued from `snapshot` (its key checked against the evaluation
/// key's header first); under MPI rank 0 reads the snapshot and the other ranks take its state.
pub fn open_snapshot(
    eval_key: &Path,
    snapshot: &Path,
    threads: Option<usize>,
    watch: &mut dyn Watch,
) -> Result<Machine<TfheBackend>> {
    let mut machine = if mpi::is_root() {
        check_snapshot_header(snapshot, eval_key)?;
        let keys = watch.load_keys(eval_key)?;
        let m = Machine::resume(&keys, snapshot, threads)?;
        mpi::machine_from_root(Some((m.core(), m.memory(), m.size())))?;
        m
    } else {
        follower(eval_key, threads, watch)?
    };
    mpi::join(machine.engine_mut())?;
    Ok(machine)
}

/// An MPI rank other than 0: rank 0's machine with no request loaded (it takes rank 0's state when
/// it joins).
fn follower(
    eval_key: &Path,
    threads: Option<usize>,
    watch: &mut dyn Watch,
) -> Result<Machine<TfheBackend>> {
    let keys = watch.load_keys(eval_key)?;
    let (core, memory, size) = mpi::machine_from_root(None)?;
    Machine::encrypted(&keys, core, memory, size, threads)
}

/// What a run did and wrote: the machine, the result's size, the snapshot, the seconds it took.
pub struct Ran {
    pub cycles: u64,
    pub core: Core,
    pub size: MemSize,
    pub threads: usize,
    pub output: PathBuf,
    pub result_bytes: u64,
    pub snapshot: Option<PathBuf>,
    pub seconds: f64,
}

/// The run's summary, as `vsp run` and `vsp resume` end: cycles, machine, threads, time (total
/// and per cycle), the result and the snapshot written.
impl fmt::Display for Ran {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (time, per_cycle) = (
            fmt_secs(self.seconds),
            self.seconds / self.cycles.max(1) as f64,
        );
        let (out, bytes) = (self.output.display(), fmt_bytes(self.result_bytes));
        write!(
            f,
            "ran {} cycles on {} ({}) with {} threads in {time} ({per_cycle:.2} s/cycle); wrote result {out} ({bytes})",
            self.cycles, self.core, self.size, self.threads
        )?;
        match &self.snapshot {
            Some(s) => write!(f, ", snapshot {}", s.display()),
            None => Ok(()),
        }
    }
}

/// Runs `cycles` cycles with `run`, telling `watch` (the start, the progress, the end); whether this
/// process writes what the run made (false on an MPI rank other than 0).
pub(crate) fn watched(
    watch: &mut dyn Watch,
    cycles: u64,
    run: impl FnOnce(&mut dyn FnMut(&RunProgress<'_>)) -> Result<()>,
) -> Result<bool> {
    watch.running(cycles);
    run(&mut |p| watch.cycle(p))?;
    watch.ran();
    Ok(mpi::is_root())
}

/// Runs `cycles` more cycles of `machine` (snapshots as planned) and writes the encrypted result to
/// `output`. `None` on an MPI rank other than 0, which writes nothing.
pub fn advance(
    machine: &mut Machine<TfheBackend>,
    cycles: u64,
    snapshots: Option<&Snapshots>,
    output: &Path,
    watch: &mut dyn Watch,
) -> Result<Option<Ran>> {
    let t = Instant::now();
    if !watched(watch, cycles, |p| machine.run(cycles, snapshots, p))? {
        return Ok(None);
    }
    let result_bytes = machine.result()?.write(output)?;
    Ok(Some(Ran {
        cycles,
        core: machine.core(),
        size: machine.size(),
        threads: machine.engine().threads(),
        output: output.to_path_buf(),
        result_bytes,
        snapshot: snapshots.map(|s| s.path.clone()),
        seconds: t.elapsed().as_secs_f64(),
    }))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use vsp_cahp::cores::{Core, MemSize};

    /// `vsp run`'s closing line, with and without a snapshot.
    #[test]
    fn a_run_sums_itself_up_on_one_line() {
        let mut ran = super::Ran {
            cycles: 4,
            core: Core::Pearl,
            size: MemSize::B512,
            threads: 2,
            output: PathBuf::from("out.res"),
            result_bytes: 2048,
            snapshot: Some(PathBuf::from("out.res.snapshot")),
            seconds: 10.0,
        };
        let line = "ran 4 cycles on pearl (512 B ROM and RAM) with 2 threads in 10s (2.50 s/cycle); wrote result out.res (2.0 KiB)";
        assert_eq!(
            ran.to_string(),
            format!("{line}, snapshot out.res.snapshot")
        );
        ran.snapshot = None;
        assert_eq!(ran.to_string(), line);
        ran.cycles = 0;
        assert!(ran.to_string().contains("(10.00 s/cycle)"));
    }

    #[test]
    fn thread_counts_from_1_to_the_most() {
        assert_eq!(super::parse_threads("1").ok(), Some(1));
        assert_eq!(super::parse_threads("1024").ok(), Some(super::MAX_THREADS));
        for bad in ["0", "1025", "-1", "", "many", "18446744073709551616"] {
            let e = super::parse_threads(bad).unwrap_err().to_string();
            assert_eq!(e, "must be a number of threads from 1 to 1024", "{bad:?}");
        }
    }
}
