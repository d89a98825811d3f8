//! The server's encrypted run of a circuit: the engine and the key it runs under, with snapshots
//! and traced runs.

use std::path::Path;
use std::sync::Arc;

use vsp_circuit::{Circuit, Engine, TfheBackend};

use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ServerKeys;
use crate::processor::run::{
    read_snapshot, run_engine, save_engine, snapshot_wrap, RunProgress, Snapshots, Stamp,
};
use crate::wire::tags::MachineTag;

/// An encrypted circuit run on the server: the engine and the key it runs under.
pub struct CircuitMachine {
    pub engine: Engine<TfheBackend>,
    pub(super) stamp: Stamp,
}

impl CircuitMachine {
    /// A run of `request` on `circuit` with the server's keys.
    pub fn start(
        keys: &ServerKeys,
        circuit: Arc<Circuit>,
        request: CircuitRequest,
        threads: Option<usize>,
    ) -> Result<CircuitMachine> {
        keys.check_stamp("the request", &request.stamp)?;
        let mut m = Self::new(keys, circuit, threads)?;
        request.load(&mut m.engine)?;
        Ok(m)
    }

    /// A run on `circuit` with no request loaded: a rank of a distributed run other than the root,
    /// which takes the root's state from it instead of reading the request (docs/mpi.md).
    pub fn follower(
        keys: &ServerKeys,
        circuit: Arc<Circuit>,
        threads: Option<usize>,
    ) -> Result<CircuitMachine> {
        Self::new(keys, circuit, threads)
    }

    fn new(keys: &ServerKeys, circuit: Arc<Circuit>, threads: Option<usize>) -> Result<Self> {
        let backend = TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
        let mut engine = Engine::new(backend, circuit);
        if let Some(t) = threads {
            engine.set_threads(t.max(1));
        }
        Ok(CircuitMachine {
            engine,
            stamp: keys.stamp(),
        })
    }

    /// Continues from a snapshot written by [`CircuitMachine::save`] for the same circuit.
    pub fn resume(
        keys: &ServerKeys,
        circuit: Arc<Circuit>,
        path: &Path,
        threads: Option<usize>,
    ) -> Result<CircuitMachine> {
        let snapshot = read_snapshot(keys, path)?;
        if snapshot.tag != MachineTag::Circuit {
            return Err(PlatformError::usage(format!(
                "{} is a processor snapshot: continue it with `vsp resume`",
                path.display()
            )));
        }
        let mut m = Self::new(keys, circuit, threads)?;
        m.engine
            .restore_snapshot(&snapshot.state)
            .context(|| format!("{}: corrupt or for another circuit", path.display()))?;
        Ok(m)
    }

    /// Writes the state atomically; returns the file's size.
    pub fn save(&self, path: &Path) -> Result<u64> {
        save_engine(&self.engine, path, &self.snapshot_wrap())
    }

    fn snapshot_wrap(&self) -> vsp_circuit::SnapshotWrap {
        snapshot_wrap(self.stamp.clone(), MachineTag::Circuit)
    }

    /// [`CircuitMachine::run`], recording every cycle's encrypted outputs in `trace` (numbered as
    /// [`Trace`] numbers them: the engine's cycle, so a resumed run continues the count). The
    /// cycles run one engine run each, with a snapshot after every `snapshots.every`-th and after
    /// the last, as one run would write them.
    pub fn run_traced(
        &mut self,
        cycles: u64,
        reset: bool,
        snapshots: Option<&Snapshots>,
        trace: &mut EncryptedTrace,
        progress: &mut dyn FnMut(&RunProgress<'_>),
    ) -> Result<()> {
        crate::processor::run::target_cycle(self.engine.cycle(), cycles)?;
        if reset {
            self.engine.reset()?;
        }
        let names: Vec<String> = self
            .engine
            .circuit()
            .outputs()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let root = self.engine.is_root();
        let t0 = std::time::Instant::now();
        for done in 0..cycles {
            let every = snapshots.map_or(1, |s| s.every.max(1));
            let write = snapshots.filter(|_| (done + 1) % every == 0 || done + 1 == cycles);
            let one = vsp_circuit::RunOptions {
                max_cycles: 1,
                snapshot: write.map(|s| s.path.clone()),
                snapshot_wrap: Some(self.snapshot_wrap()),
                ..Default::default()
            };
            let cycle = self.engine.cycle();
            self.engine.run(&one, &mut |p| {
                progress(&RunProgress {
                    done: done + p.cycles_done,
                    total: cycles,
                    elapsed: t0.elapsed().as_secs_f64(),
                    engine: p,
                })
            })?;
            if root {
                let outputs = names
                    .iter()
                    .map(|n| self.engine.output(n))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                trace.record(cycle, outputs)?;
            }
        }
        Ok(())
    }

    /// Runs `cycles` cycles (after one reset cycle when asked) with snapshots and progress as
    /// [`crate::Machine::run`] does.
    pub fn run(
        &mut self,
        cycles: u64,
        reset: bool,
        snapshots: Option<&Snapshots>,
        progress: &mut dyn FnMut(&RunProgress<'_>),
    ) -> Result<()> {
        crate::processor::run::target_cycle(self.engine.cycle(), cycles)?;
        if reset {
            self.engine.reset()?;
        }
        let wrap = self.snapshot_wrap();
        run_engine(&mut self.engine, cycles, snapshots, wrap, progress)
    }
}
