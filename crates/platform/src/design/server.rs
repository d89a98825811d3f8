//! The server's half of a design run: a request or snapshot opened under the evaluation key (on
//! every MPI rank: rank 0 reads, the others take its state), the cycles run, the encrypted result
//! and trace written ([`ServerRun::run_circuit`], as `vsp circuit exec` and `resume` play it). The
//! root/follower choreography is [`crate::server`]'s.

use std::path::Path;
use std::sync::Arc;

use vsp_circuit::Circuit;

use super::run::{check_reset, public_warning};
use super::{load_design, CircuitMachine, CircuitRequest, EncryptedTrace};
use crate::error::Result;
use crate::keys::ServerKeys;
use crate::processor::run::Snapshots;
use crate::server::{check_snapshot_header, mpi, watched, ServerRun, Watch};
use crate::wire::envelope::{Envelope, Kind};

/// What the server's half of a design run does after opening: its cycles (after a public reset
/// cycle when asked), snapshots, result and encrypted trace.
pub struct Exec<'a> {
    pub cycles: u64,
    pub reset: bool,
    pub snapshots: Option<&'a Snapshots>,
    pub output: &'a Path,
    pub trace: Option<&'a Path>,
}

/// What [`CircuitMachine::exec`] wrote: the trace's size (when asked for) and the result's.
pub struct Executed {
    pub trace_bytes: Option<u64>,
    pub result_bytes: u64,
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
            let env = Envelope::read(input, Kind::Request)?;
            ServerKeys::check_header(
                eval_key,
                &format!("the request {}", input.display()),
                env.key_id,
                &env.params,
            )?;
            Some(env)
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
        let trace_bytes = match (&trace, plan.trace) {
            (Some(tr), Some(path)) => Some(crate::wire::envelope::save(
                tr,
                path,
                self.engine.backend().params(),
            )?),
            _ => None,
        };
        let result_bytes = self.result()?.write(plan.output)?;
        Ok(Some(Executed {
            trace_bytes,
            result_bytes,
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
