//! The evaluator: runs a [`Circuit`] cycle by cycle on any [`Backend`].
//!
//! One cycle (Iyokan's semantics, VSP paper seed 000, with the tick moved to the end): the combinational
//! DAG is evaluated from the current inputs, flip-flop states and memory contents (memory reads are
//! combinational: `rdata` shows the word at this cycle's `addr`); the `@` outputs are captured; then the
//! clock edge latches every flip-flop's D input and performs RAM writes (read-before-write: a word written
//! in cycle c is visible from cycle c+1). With one thread the DAG runs in topological order; with more it
//! runs on the list scheduler ([`crate::schedule`]).
//!
//! | part | what it does |
//! |---|---|
//! | this module | the run loop: the [`Engine`] API (inputs, outputs, memories, reset, step, run with progress and periodic snapshots) |
//! | `cycle` | one cycle: the DAG, then the clock edge (flip-flops, RAM writes, carried rings) |
//! | `executor` | runs one cycle's tasks: in order on one thread or on the list scheduler |
//! | `tasks` | builds the task list and the scheduler graph from the circuit and the MUX plan |

use std::sync::Arc;
use std::time::Instant;

use crate::backend::Backend;
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::{Circuit, Node};
use crate::error::CircuitError;
use crate::leveled::{LeveledParams, MuxPlan, PlanCounts};
use crate::schedule::{self, TaskGraph};
use crate::snapshot::SnapshotWrap;

mod cycle;
mod executor;
mod tasks;

// The MPI executor (`crate::mpi`) runs the same tasks with the same executor.
#[cfg(feature = "mpi")]
pub(crate) use executor::{internal, Ctx};
pub(crate) use tasks::Task;
pub(crate) use tasks::{build_tasks, Grain, ENGINE_GRAIN, SELECT_BATCH};

/// The contents of one memory as the engine holds them.
#[derive(Clone)]
pub enum MemState<B: Backend> {
    Rom(B::Rom),
    Ram(B::Ram),
    /// A MUX memory: its cells are flip-flops (see [`crate::MemBlock::cells`]).
    Cells,
}

/// Everything that changes from cycle to cycle; what a snapshot stores.
#[derive(Clone)]
pub struct State<B: Backend> {
    /// Cycles completed (the reset cycle is not counted).
    pub cycle: u64,
    /// Current value of every external input bit.
    pub inputs: Vec<B::Bit>,
    /// Current state of every flip-flop.
    pub dffs: Vec<B::Bit>,
    pub mems: Vec<MemState<B>>,
    /// The `@` output bits of the last evaluated cycle (`None` before the first).
    pub outputs: Option<Vec<B::Bit>>,
}

/// Progress of a run, passed to the callback during and after every cycle.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// The cycle being evaluated (0-based, counted from the engine's creation).
    pub cycle: u64,
    /// Cycles this run will do at most.
    pub cycles_in_run: u64,
    /// Cycles of this run already finished.
    pub cycles_done: u64,
    /// Tasks (gates, memory operations) of the current cycle finished / total.
    pub tasks_done: usize,
    pub tasks_total: usize,
    /// Seconds spent in the current cycle so far (or in the whole cycle when `cycle_finished`).
    pub cycle_seconds: f64,
    /// Mean seconds per finished cycle in this run.
    pub mean_cycle_seconds: Option<f64>,
    /// Estimated seconds until the run ends (assuming it runs all `cycles_in_run`).
    pub eta_seconds: Option<f64>,
    /// True for the report sent when a cycle ends.
    pub cycle_finished: bool,
}

/// Timing statistics of one cycle.
#[derive(Clone, Debug, Default)]
pub struct CycleStats {
    pub cycle: u64,
    /// Wall seconds for the combinational DAG.
    pub eval_seconds: f64,
    /// Wall seconds for the clock edge (flip-flops and RAM writes).
    pub latch_seconds: f64,
    /// Seconds workers spent inside tasks during the DAG (≤ eval_seconds × threads).
    pub busy_seconds: f64,
    pub threads: usize,
    pub tasks: usize,
    /// Bits lifted to rings by a bootstrap in this cycle ([`crate::leveled`]).
    pub lifts: usize,
}

impl CycleStats {
    /// busy / (wall × threads) of the DAG evaluation.
    pub fn efficiency(&self) -> f64 {
        schedule::RunTiming {
            wall: self.eval_seconds,
            busy: self.busy_seconds,
            threads: self.threads,
        }
        .efficiency()
    }
}

/// When to stop a [`Engine::run`] and what to save.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Run at most this many cycles.
    pub max_cycles: u64,
    /// Stop after the first cycle in which this `@` output (1 bit) is 1 in every lane (plain backend
    /// only; an encrypted backend cannot see it and returns an error).
    pub stop_when: Option<String>,
    /// Write a snapshot here after the run (and every `snapshot_every` cycles when set), atomically:
    /// a failed write leaves the previous snapshot (or nothing) and no temporary file.
    pub snapshot: Option<std::path::PathBuf>,
    pub snapshot_every: Option<u64>,
    /// What a snapshot file holds: `None` the engine's own snapshot ([`Engine::snapshot_bytes`]);
    /// a wrapper puts it in another envelope (the platform's machines add their key id and machine).
    pub snapshot_wrap: Option<SnapshotWrap>,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    pub cycles: u64,
    /// True when `stop_when` fired.
    pub stopped: bool,
    pub seconds: f64,
    /// Statistics of the last cycle.
    pub last: CycleStats,
}

/// The evaluator for one circuit on one backend.
pub struct Engine<B: Backend> {
    pub(crate) backend: B,
    pub(crate) circuit: Arc<Circuit>,
    pub(crate) threads: usize,
    pub(crate) state: State<B>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) graph: TaskGraph,
    /// Batches of MUX-plan select slots circuit-bootstrapped together ([`Task::MuxSels`]).
    pub(crate) batches: Vec<Vec<u32>>,
    pub(crate) plan: MuxPlan,
    /// Rings of flip-flops, kept across the clock edge for those the plan carries while within their
    /// noise budget (`None`: lift it), and the variance bound of each kept ring.
    pub(crate) dff_rings: Vec<Option<B::Ring>>,
    pub(crate) dff_ring_var: Vec<f64>,
    pub(crate) last: CycleStats,
    /// The MPI executor's state when this engine is one rank of a job ([`crate::mpi`]).
    #[cfg(feature = "mpi")]
    pub(crate) dist: Option<crate::mpi::Dist>,
}

impl<B: Backend> Engine<B> {
    /// An engine at cycle 0: flip-flops at their initial values, inputs 0, memories all zero.
    /// Threads: all cores for encrypted backends, 1 for the plain one (change with [`Self::set_threads`]).
    /// When the backend asks for it ([`Backend::techmap`]) the engine runs the circuit mapped into
    /// multi-input cells ([`crate::techmap`]): same ports, flip-flops, memories and fingerprint, same
    /// results, fewer bootstraps; [`Self::circuit`] is then the mapped circuit.
    pub fn new(backend: B, circuit: Arc<Circuit>) -> Self {
        let circuit = match backend.techmap() {
            // Minimise the depth as the cycle will run: under the MUX plan of the unmapped circuit.
            Some(p) => match match backend.leveled() {
                Some(lp) => crate::techmap::map_planned(&circuit, &p, &MuxPlan::new(&circuit, &lp)),
                None => crate::techmap::map(&circuit, &p),
            } {
                Ok(m) => Arc::new(m),
                Err(e) => {
                    // An internal error of the mapping: run the circuit as built.
                    debug_assert!(false, "technology mapping failed: {e}");
                    circuit
                }
            },
            None => circuit,
        };
        let inputs = vec![backend.constant(false); circuit.input_bits()];
        let dffs = circuit
            .dffs()
            .iter()
            .map(|d| backend.constant(d.init))
            .collect();
        let mems = circuit
            .memories()
            .iter()
            .map(|m| match (m.spec.imp, m.spec.kind) {
                (MemImpl::Mux, _) => MemState::Cells,
                (MemImpl::Cmux, MemKind::Rom) => MemState::Rom(backend.zero_rom(&m.spec)),
                (MemImpl::Cmux, MemKind::Ram) => MemState::Ram(backend.zero_ram(&m.spec)),
            })
            .collect();
        let plan = match backend.leveled() {
            Some(p) => MuxPlan::new(&circuit, &p),
            None => MuxPlan::gates_only(&circuit),
        };
        let (tasks, graph, batches) = build_tasks(&circuit, &backend, &plan, ENGINE_GRAIN);
        let threads = if backend.reveal(&backend.constant(false)).is_some() {
            1
        } else {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        };
        let state = State {
            cycle: 0,
            inputs,
            dffs,
            mems,
            outputs: None,
        };
        Engine {
            backend,
            circuit,
            threads,
            state,
            tasks,
            graph,
            batches,
            dff_rings: Vec::new(),
            dff_ring_var: Vec::new(),
            plan,
            last: CycleStats::default(),
            #[cfg(feature = "mpi")]
            dist: None,
        }
        .with_power_up_rings()
    }

    /// Flip-flop rings at power-up: the public initial values.
    fn with_power_up_rings(mut self) -> Self {
        self.reset_dff_rings();
        self
    }

    /// Rings consistent with the flip-flops' initial values, or none (a lift) after any other change.
    fn reset_dff_rings(&mut self) {
        let b = &self.backend;
        self.dff_rings = if self.state.cycle == 0 && self.state.outputs.is_none() {
            self.circuit
                .dffs()
                .iter()
                .map(|d| Some(b.ring_constant(d.init)))
                .collect()
        } else {
            vec![None; self.circuit.dffs().len()]
        };
        self.dff_ring_var = vec![0.0; self.circuit.dffs().len()];
    }

    /// Replans the MUXes: `Some` evaluates MUXes with well-shared selects as CMUXes ([`crate::leveled`]),
    /// `None` keeps every MUX a gate. The backend's own choice ([`Backend::leveled`]) is the default;
    /// results are the same either way.
    pub fn set_leveled(&mut self, p: Option<LeveledParams>) {
        self.plan = match p {
            Some(p) => MuxPlan::new(&self.circuit, &p),
            None => MuxPlan::gates_only(&self.circuit),
        };
        (self.tasks, self.graph, self.batches) =
            build_tasks(&self.circuit, &self.backend, &self.plan, ENGINE_GRAIN);
        #[cfg(feature = "mpi")]
        if let Some(d) = &mut self.dist {
            d.invalidate();
        }
        // A carried ring may be noisier than the new plan assumes: lift next cycle.
        self.dff_rings.iter_mut().for_each(|r| *r = None);
    }

    /// What one cycle of the core logic costs under the current MUX plan.
    pub fn plan_counts(&self) -> PlanCounts {
        self.plan.counts()
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }
    /// The circuit.
    pub fn circuit(&self) -> &Arc<Circuit> {
        &self.circuit
    }
    /// Worker threads used per cycle (1 = sequential topological evaluation).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }
    /// Worker threads used per cycle.
    pub fn threads(&self) -> usize {
        self.threads
    }
    /// Cycles completed.
    pub fn cycle(&self) -> u64 {
        self.state.cycle
    }
    /// The whole mutable state.
    pub fn state(&self) -> &State<B> {
        &self.state
    }
    pub(crate) fn state_mut(&mut self) -> &mut State<B> {
        // Whoever changes the state directly may change flip-flops: carried rings no longer match.
        self.dff_rings.iter_mut().for_each(|r| *r = None);
        &mut self.state
    }
    /// Statistics of the last cycle.
    pub fn last_cycle_stats(&self) -> &CycleStats {
        &self.last
    }
    /// This engine's rank when it is one rank of an MPI job of several (`mpi` feature); `None` for a
    /// single-process engine. Only rank 0 holds the whole state after a run and writes files.
    pub fn mpi_rank(&self) -> Option<usize> {
        #[cfg(feature = "mpi")]
        if let Some(d) = &self.dist {
            return Some(d.rank);
        }
        None
    }

    /// The static partition of this engine's cycle over `ranks` MPI ranks under the current MUX plan
    /// (what the MPI executor runs; input of the [`crate::costmodel`]).
    pub fn plan_partition(&self, ranks: usize) -> crate::partition::Partition {
        crate::partition::Partition::new(&self.circuit, &self.backend, &self.plan, ranks)
    }

    /// The cycle's logic depth in gate bootstraps under the current plan: the most gates, cells, gate
    /// MUXes and memory reads on one path (CMUXes, NOTs and circuit bootstraps count none).
    pub fn bootstrap_depth(&self) -> u32 {
        tasks::bootstrap_depth(&self.circuit, &self.plan)
            .into_iter()
            .max()
            .unwrap_or(0)
    }

    /// Tasks per cycle and the critical path in cost units (Gate = 10).
    pub fn schedule_info(&self) -> (usize, f64) {
        (self.graph.len(), self.graph.critical_path())
    }

    /// Sets external input `name` (LSB first); it keeps this value until set again.
    pub fn set_input(&mut self, name: &str, bits: Vec<B::Bit>) -> Result<(), CircuitError> {
        let port = self.circuit.input(name).ok_or_else(|| {
            CircuitError::Usage(format!(
                "no external input @{name} (inputs: {})",
                self.port_list(true)
            ))
        })?;
        if bits.len() != port.bits.len() {
            return Err(CircuitError::WidthMismatch(format!(
                "@{name} is {} bits wide, got {} bits",
                port.bits.len(),
                bits.len()
            )));
        }
        for (&node, b) in port.bits.iter().zip(bits) {
            if let Node::Input(i) = self.circuit.nodes[node as usize] {
                self.state.inputs[i as usize] = b;
            }
        }
        Ok(())
    }

    /// The bits of external output `name` computed in the last cycle.
    pub fn output(&self, name: &str) -> Result<Vec<B::Bit>, CircuitError> {
        let (start, port) = self.output_range(name)?;
        let outs = self.state.outputs.as_ref().ok_or_else(|| {
            CircuitError::Usage("no cycle has been evaluated yet, so outputs have no value".into())
        })?;
        Ok(outs[start..start + port].to_vec())
    }

    fn output_range(&self, name: &str) -> Result<(usize, usize), CircuitError> {
        let mut start = 0;
        for p in self.circuit.outputs() {
            if p.name == name {
                return Ok((start, p.bits.len()));
            }
            start += p.bits.len();
        }
        Err(CircuitError::Usage(format!(
            "no external output @{name} (outputs: {})",
            self.port_list(false)
        )))
    }

    fn port_list(&self, inputs: bool) -> String {
        let ps = if inputs {
            self.circuit.inputs()
        } else {
            self.circuit.outputs()
        };
        ps.iter()
            .map(|p| format!("@{}", p.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn memory_index(&self, name: &str) -> Result<usize, CircuitError> {
        self.circuit.memory(name).map(|(i, _)| i).ok_or_else(|| {
            let names: Vec<&str> = self
                .circuit
                .memories()
                .iter()
                .map(|m| m.spec.name.as_str())
                .collect();
            CircuitError::Usage(format!("no memory named {name:?} (memories: {names:?})"))
        })
    }

    /// Replaces the contents of CMUX ROM `name`.
    pub fn set_rom(&mut self, name: &str, rom: B::Rom) -> Result<(), CircuitError> {
        let shape = self.backend.rom_shape(&rom);
        let slot = self.cmux_slot(name, "ROM", shape, |m| matches!(m, MemState::Rom(_)))?;
        *slot = MemState::Rom(rom);
        Ok(())
    }

    /// Replaces the contents of CMUX RAM `name`.
    pub fn set_ram(&mut self, name: &str, ram: B::Ram) -> Result<(), CircuitError> {
        let shape = self.backend.ram_shape(&ram);
        let slot = self.cmux_slot(name, "RAM", shape, |m| matches!(m, MemState::Ram(_)))?;
        *slot = MemState::Ram(ram);
        Ok(())
    }

    /// The state of CMUX memory `name` (`what`: ROM or RAM, as `is_kind` tells) about to take an
    /// image of `shape` (address bits, data bits).
    fn cmux_slot(
        &mut self,
        name: &str,
        what: &str,
        shape: (usize, usize),
        is_kind: fn(&MemState<B>) -> bool,
    ) -> Result<&mut MemState<B>, CircuitError> {
        let i = self.memory_index(name)?;
        let spec = &self.circuit.memories()[i].spec;
        if !is_kind(&self.state.mems[i]) {
            return Err(CircuitError::Usage(format!(
                "memory {name} is not a CMUX {what}"
            )));
        }
        if shape != (spec.addr_width, spec.data_width) {
            return Err(CircuitError::WidthMismatch(format!(
                "{what} {name} is {}×{} bits, the image is {}×{}",
                spec.addr_width, spec.data_width, shape.0, shape.1
            )));
        }
        Ok(&mut self.state.mems[i])
    }

    /// The contents of memory `name`: its CMUX state, or `Cells` for MUX memories.
    pub fn memory(&self, name: &str) -> Result<&MemState<B>, CircuitError> {
        Ok(&self.state.mems[self.memory_index(name)?])
    }

    /// The index of MUX memory `name` (an error for a CMUX memory).
    fn mux_memory_index(&self, name: &str) -> Result<usize, CircuitError> {
        let i = self.memory_index(name)?;
        if self.circuit.memories()[i].spec.imp != MemImpl::Mux {
            return Err(CircuitError::Usage(format!(
                "memory {name} is a CMUX memory, not a MUX one"
            )));
        }
        Ok(i)
    }

    /// Sets the cells of MUX memory `name` (word `j` bit `i` at `j * data_width + i`).
    pub fn set_memory_cells(&mut self, name: &str, bits: Vec<B::Bit>) -> Result<(), CircuitError> {
        let m = &self.circuit.memories()[self.mux_memory_index(name)?];
        if bits.len() != m.cells.len() {
            return Err(CircuitError::WidthMismatch(format!(
                "memory {name} has {} cells, got {}",
                m.cells.len(),
                bits.len()
            )));
        }
        for (&d, b) in m.cells.iter().zip(bits) {
            self.state.dffs[d as usize] = b;
            self.dff_rings[d as usize] = None;
        }
        Ok(())
    }

    /// The cells of MUX memory `name` (word `j` bit `i` at `j * data_width + i`).
    pub fn memory_cells(&self, name: &str) -> Result<Vec<B::Bit>, CircuitError> {
        Ok(self.circuit.memories()[self.mux_memory_index(name)?]
            .cells
            .iter()
            .map(|&d| self.state.dffs[d as usize].clone())
            .collect())
    }

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
            // Under MPI rank 0 gathers the state the other ranks own, so that outputs, memories and
            // snapshots read there are whole.
            #[cfg(feature = "mpi")]
            if self.dist.is_some() {
                self.gather_state()?;
            }
        }
        report.seconds = t0.elapsed().as_secs_f64();
        report.last = self.last.clone();
        Ok(report)
    }

    /// Writes a snapshot during or after [`Self::run`] (under MPI: gathers the state on rank 0, which
    /// writes it).
    fn save_run_snapshot(
        &mut self,
        path: &std::path::Path,
        wrap: Option<&SnapshotWrap>,
    ) -> Result<(), CircuitError> {
        #[cfg(feature = "mpi")]
        if let Some(d) = &self.dist {
            let root = d.rank == 0;
            self.gather_state()?;
            if !root {
                return Ok(());
            }
        }
        self.write_snapshot(path, wrap).map(|_| ())
    }

    /// Whether 1-bit output number `i` is 1 in every lane (under MPI: rank 0 decides for all).
    fn stop_now(&self, i: usize) -> Result<bool, CircuitError> {
        let local = self
            .state
            .outputs
            .as_ref()
            .and_then(|o| o.get(i))
            .is_some_and(|b| self.backend.reveal(b) == Some(u64::MAX));
        #[cfg(feature = "mpi")]
        if self.dist.is_some() {
            return Ok(crate::mpi::root_decides(local));
        }
        Ok(local)
    }
}

/// The cycle counter after one more cycle (a counter at its limit is an error, never a wrap).
pub(crate) fn next_cycle(c: u64) -> Result<u64, CircuitError> {
    c.checked_add(1)
        .ok_or_else(|| CircuitError::Usage("the cycle counter is at its limit".into()))
}
