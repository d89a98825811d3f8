//! Running an engine: reset, one step, and a run of many cycles with progress reports, an optional
//! stop output and periodic snapshots (written by the root only, from the gathered state).

use std::time::Instant;

use super::snapshot::SnapshotWrap;
use super::{CycleStats, Engine, Progress, RunOptions, RunReport};
use crate::backend::Backend;
use crate::error::CircuitError;

impl<B: Backend> Engine<B> {
    /// Runs one reset cycle if the circuit has a 1-bit `@reset` input: `@reset` = 1, evaluate, latch,
    /// then `@reset` = 0. The cycle counter does not advance. Returns whether a reset input exists.
    pub fn reset(&mut self) -> Result<bool, CircuitError> {
        match self.circuit.input("reset") {
            Some(p) if p.bits.len() == 1 => {
                let one = self.backend.constant(true);
                self.set_input("reset", vec![one])?;
                self.cycle_inner(&mut |_| {})?;
                let zero = self.backend.constant(false);
                self.set_input("reset", vec![zero])?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Evaluates one cycle and latches; returns its statistics.
    pub fn step(&mut self) -> Result<CycleStats, CircuitError> {
        let next = next_cycle(self.state.cycle)?;
        self.cycle_inner(&mut |_| {})?;
        self.last.cycle = self.state.cycle;
        self.state.cycle = next;
        Ok(self.last.clone())
    }

    /// Runs cycles as `opts` says, reporting progress to `progress`.
    pub fn run(
        &mut self,
        opts: &RunOptions,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<RunReport, CircuitError> {
        let stop_range = match &opts.stop_when {
            Some(name) => {
                let (start, w) = self.output_range(name)?;
                if w != 1 {
                    return Err(CircuitError::Usage(format!(
                        "stop output @{name} must be 1 bit wide"
                    )));
                }
                if self.backend.reveal(&self.backend.constant(true)).is_none() {
                    return Err(CircuitError::Usage(
                        "stopping on an output needs a plain backend; encrypted runs need a cycle count"
                            .into(),
                    ));
                }
                Some(start)
            }
            None => None,
        };
        let t0 = Instant::now();
        let mut report = RunReport::default();
        // Cycles of this run when the last periodic snapshot was written.
        let mut saved_at = None;
        while report.cycles < opts.max_cycles {
            let done = report.cycles;
            let cycle = self.state.cycle;
            let started = Instant::now();
            let total = self.tasks.len();
            let mut tick = |d: usize| {
                let el = t0.elapsed().as_secs_f64();
                let mean = (done > 0).then(|| el / done as f64);
                progress(&Progress {
                    cycle,
                    cycles_in_run: opts.max_cycles,
                    cycles_done: done,
                    tasks_done: d,
                    tasks_total: total,
                    cycle_seconds: started.elapsed().as_secs_f64(),
                    mean_cycle_seconds: mean,
                    eta_seconds: mean.map(|m| m * (opts.max_cycles - done) as f64),
                    cycle_finished: false,
                })
            };
            let next = next_cycle(cycle)?;
            self.cycle_inner(&mut tick)?;
            self.state.cycle = next;
            self.last.cycle = cycle;
            report.cycles += 1;
            let mean = t0.elapsed().as_secs_f64() / report.cycles as f64;
            progress(&Progress {
                cycle,
                cycles_in_run: opts.max_cycles,
                cycles_done: report.cycles,
                tasks_done: total,
                tasks_total: total,
                cycle_seconds: started.elapsed().as_secs_f64(),
                mean_cycle_seconds: Some(mean),
                eta_seconds: Some(mean * (opts.max_cycles - report.cycles) as f64),
                cycle_finished: true,
            });
            if let (Some(every), Some(path)) = (opts.snapshot_every, &opts.snapshot) {
                if every > 0 && report.cycles % every == 0 {
                    self.save_run_snapshot(path, opts.snapshot_wrap.as_ref())?;
                    saved_at = Some(report.cycles);
                }
            }
            if let Some(i) = stop_range {
                if self.stop_now(i)? {
                    report.stopped = true;
                    break;
                }
            }
        }
        if let Some(path) = &opts.snapshot {
            // The last cycle's periodic snapshot is already the final one.
            if saved_at != Some(report.cycles) {
                self.save_run_snapshot(path, opts.snapshot_wrap.as_ref())?;
            }
        } else {
            // The root gathers the state held elsewhere, so that outputs, memories and snapshots
            // read there are whole.
            self.gather_state()?;
        }
        report.seconds = t0.elapsed().as_secs_f64();
        report.last = self.last.clone();
        Ok(report)
    }

    /// Writes a snapshot during or after [`Self::run`] (the state gathered on the root, which alone
    /// writes it).
    fn save_run_snapshot(
        &mut self,
        path: &std::path::Path,
        wrap: Option<&SnapshotWrap>,
    ) -> Result<(), CircuitError> {
        self.gather_state()?;
        if !self.exec.is_root() {
            return Ok(());
        }
        self.write_snapshot(path, wrap).map(|_| ())
    }

    /// Whether 1-bit output number `i` is 1 in every lane (the root decides for all).
    fn stop_now(&self, i: usize) -> Result<bool, CircuitError> {
        let local = self
            .state
            .outputs
            .as_ref()
            .and_then(|o| o.get(i))
            .is_some_and(|b| self.backend.reveal(b) == Some(u64::MAX));
        Ok(self.exec.agree(local))
    }
}

/// The cycle counter after one more cycle (a counter at its limit is an error, never a wrap).
pub(crate) fn next_cycle(c: u64) -> Result<u64, CircuitError> {
    c.checked_add(1)
        .ok_or_else(|| CircuitError::Usage("the cycle counter is at its limit".into()))
}
