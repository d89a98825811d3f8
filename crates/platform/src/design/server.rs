//! The server's half of a design run: a request or snapshot opened under the evaluation key (on
//! every MPI rank: rank 0 reads, the others take its state), the cycles run, the encrypted result
//! and trace written ([`ServerRun::run_circuit`], as `vsp circuit exec` and `resume` play it). The
//! root/follower choreography is [`crate::server`]'s.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use vsp_circuit::Circuit;
use vsp_codec::text::fmt_bytes;

use super::run::{check_reset, public_warning};
use super::{load_design, CircuitMachine, CircuitRequest, EncryptedTrace};
use crate::error::Result;
use crate::processor::run::Snapshots;
use crate::server::{check_snapshot_header, mpi, read_request, watched, ServerRun, Watch};

/// What the server's half of a design run does after opening: its cycles (after a public reset
/// cycle when asked), snapshots, result and encrypted trace.
pub struct Exec<'a> {
    pub cycles: u64,
    pub reset: bool,
    pub snapshots: Option<&'a Snapshots>,
    pub output: &'a Path,
    pub trace: Option<&'a Path>,
}

/// What [`CircuitMachine::exec`] did and wrote: the cycles, the result (and its size), and the
/// encrypted trace (and its size) when asked for.
pub struct Executed {
    pub cycles: u64,
    pub output: PathBuf,
    pub result_bytes: u64,
    pub trace: Option<(PathBuf, u64)>,
}

impl Executed {
    /// The line that says the trace was written (`vsp circuit exec --trace`), if one was.
    pub fn trace_line(&self) -> Option<String> {
        let (path, size) = self.trace.as_ref()?;
        Some(format!(
            "wrote encrypted trace {} ({})",
            path.display(),
            fmt_bytes(*size)
        ))
    }
}

/// The run's summary, as `vsp circuit exec` and `resume` end (the reset cycle not counted).
impl fmt::Display for Executed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (out, size) = (self.output.display(), fmt_bytes(self.result_bytes));
        write!(f, "ran {} cycles; wrote result {out} ({size})", self.cycles)
    }
}

impl CircuitMachine {
    /// The server's run of the request at `input` on `circuit` (the request's key checked against
    /// the evaluation key's header before that key is loaded; a request that encrypts nothing is
    /// warned about). Under MPI rank 0 reads the request and the other ranks take its state.
    pub fn open_request(
        eval_key: &Path,
        input: &Path,
        circuit: Arc<Circuit>,
        reset: bool,
        threads: Option<usize>,
        watch: &mut dyn Watch,
    ) -> Result<CircuitMachine> {
        let env = if mpi::is_root() {
            Some(read_request(input, eval_key)?)
        } else {
            None
        };
        let keys = watch.load_keys(eval_key)?;
        let mut m = match env {
            Some(env) => {
                let request = CircuitRequest::from_envelope(&env, &circuit, keys.ek.params())
                    .map_err(|e| e.in_file(input))?;
                drop(env);
                if request.inputs.is_empty() && request.memories.is_empty() {
                    watch.warn(&public_warning(reset));
                }
                CircuitMachine::start(&keys, circuit, request, threads)?
            }
            None => CircuitMachine::follower(&keys, circuit, threads)?,
        };
        mpi::join(&mut m.engine)?;
        Ok(m)
    }

    /// The server's run on `circuit` continued from `snapshot` (its key checked against the
    /// evaluation key's header first); under MPI rank 0 reads it and the other ranks take its state.
    pub fn open_snapshot(
        eval_key: &Path,
        snapshot: &Path,
        circuit: Arc<Circuit>,
        threads: Option<usize>,
        watch: &mut dyn Watch,
    ) -> Result<CircuitMachine> {
        if mpi::is_root() {
            check_snapshot_header(snapshot, eval_key)?;
        }
        let keys = watch.load_keys(eval_key)?;
        let mut m = if mpi::is_root() {
            CircuitMachine::resume(&keys, circuit, snapshot, threads)?
        } else {
            CircuitMachine::follower(&keys, circuit, threads)?
        };
        mpi::join(&mut m.engine)?;
        Ok(m)
    }

    /// Runs the server's half and writes the encrypted result (and trace); `None` on an MPI rank
    /// other than 0, which writes nothing.
    pub fn exec(&mut self, plan: &Exec<'_>, watch: &mut dyn Watch) -> Result<Option<Executed>> {
        let mut trace = plan.trace.map(|_| EncryptedTrace::new(self));
        let (cycles, reset, snapshots) = (plan.cycles, plan.reset, plan.snapshots);
        let root = watched(watch, cycles, |p| match &mut trace {
            Some(tr) => self.run_traced(cycles, reset, snapshots, tr, p),
            None => self.run(cycles, reset, snapshots, p),
        })?;
        if !root {
            return Ok(None);
        }
        let params = self.engine.backend().params();
        let trace = match (&trace, plan.trace) {
            (Some(tr), Some(path)) => {
                let size = crate::wire::envelope::save(tr, path, params)?;
                Some((path.to_path_buf(), size))
            }
            _ => None,
        };
        Ok(Some(Executed {
            cycles,
            output: plan.output.to_path_buf(),
            result_bytes: self.result()?.write(plan.output)?,
            trace,
        }))
    }
}

/// Where a circuit's server run starts.
pub enum CircuitStart<'a> {
    /// The request at `input` (after one public reset cycle when `reset`).
    Request { input: &'a Path, reset: bool },
    /// A snapshot.
    Snapshot(&'a Path),
}

impl ServerRun {
    /// The server's run of the design at `blueprint` from `start`: the outputs claimed (`trace`:
    /// every cycle's encrypted outputs), the machine opened (a resumed one noted), the cycles run,
    /// the result and trace written. `None` on an MPI rank other than 0.
    pub fn run_circuit(
        &self,
        blueprint: &Path,
        start: CircuitStart<'_>,
        trace: Option<&Path>,
        watch: &mut dyn Watch,
    ) -> Result<Option<Executed>> {
        let (ek, threads) = (self.eval_key.as_path(), self.threads);
        let (snapshots, _locks, mut m, reset) = match start {
            CircuitStart::Request { input, reset } => {
                let read = [("blueprint", blueprint), ("evaluation key", ek)];
                let (s, l) = self.claim(&[&read[..], &[("request", input)]].concat(), trace)?;
                let circuit = load_design(blueprint)?;
                check_reset(&circuit, reset)?;
                let m = CircuitMachine::open_request(ek, input, circuit, reset, threads, watch)?;
                (s, l, m, reset)
            }
            CircuitStart::Snapshot(snapshot) => {
                let read = [
                    ("snapshot", snapshot),
                    ("blueprint", blueprint),
                    ("evaluation key", ek),
                ];
                let (s, l) = self.claim(&read, trace)?;
                let circuit = load_design(blueprint)?;
                let m = CircuitMachine::open_snapshot(ek, snapshot, circuit, threads, watch)?;
                watch.note(&format!("resuming at cycle {}", m.engine.cycle()));
                (s, l, m, false)
            }
        };
        let plan = Exec {
            cycles: self.cycles,
            reset,
            snapshots: snapshots.as_ref(),
            output: &self.output,
            trace,
        };
        m.exec(&plan, watch)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// `vsp circuit exec`'s closing lines: the trace's (when written), then the run's.
    #[test]
    fn an_exec_sums_itself_up() {
        let mut done = super::Executed {
            cycles: 5,
            output: PathBuf::from("out.res"),
            result_bytes: 3 << 20,
            trace: Some((PathBuf::from("t.trace"), 512)),
        };
        assert_eq!(
            done.to_string(),
            "ran 5 cycles; wrote result out.res (3.0 MiB)"
        );
        let line = done.trace_line();
        assert_eq!(
            line.as_deref(),
            Some("wrote encrypted trace t.trace (512 B)")
        );
        done.trace = None;
        assert_eq!(done.trace_line(), None);
    }
}
