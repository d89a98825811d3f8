//! The evaluator: runs a [`Circuit`] cycle by cycle on any [`Backend`].
//!
//! One cycle (Iyokan's semantics, VSP paper seed 000, with the tick moved to the end): the combinational
//! DAG is evaluated from the current inputs, flip-flop states and memory contents (memory reads are
//! combinational: `rdata` shows the word at this cycle's `addr`); the `@` outputs are captured; then the
//! clock edge latches every flip-flop's D input and performs RAM writes (read-before-write: a word written
//! in cycle c is visible from cycle c+1). With one thread the DAG runs in topological order; with more it
//! runs on the list scheduler ([`crate::schedule`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::backend::{Backend, TaskKind};
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::{Circuit, Node, NodeId, Step};
use crate::error::CircuitError;
use crate::leveled::{LeveledParams, MuxPlan, PlanCounts, NO_SLOT};
use crate::schedule::{self, TaskGraph};

/// One unit of scheduled work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Task {
    Node(NodeId),
    /// Circuit-bootstraps the MUX plan's selects of batch number `b` ([`Engine`]'s `batches`).
    MuxSels(u32),
    /// A MUX evaluated as a CMUX (with its extraction and refresh as planned).
    Cmux(NodeId),
    /// Lifts a source bit (input, flip-flop) to ring form.
    Lift(NodeId),
    /// Circuit-bootstraps address bits `first..first + count` of memory `mem` (one batch).
    Select {
        mem: u32,
        first: u32,
        count: u32,
    },
    /// Reads data bits `first..first + count` of the addressed ROM word.
    RomRead {
        mem: u32,
        first: u32,
        count: u32,
    },
    RamRead {
        mem: u32,
        bit: u32,
    },
    WriteVal {
        mem: u32,
        bit: u32,
    },
}

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
    /// Write a snapshot here after the run (and every `snapshot_every` cycles when set).
    pub snapshot: Option<std::path::PathBuf>,
    pub snapshot_every: Option<u64>,
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
    pub fn new(backend: B, circuit: Arc<Circuit>) -> Self {
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
    /// Ring variance of every node this cycle, from the flip-flop rings carried into it (a lifted
    /// flip-flop starts at V_br); empty when the plan carries no flip-flop.
    pub(crate) fn carried_ring_vars(&self) -> Vec<f64> {
        if !self.plan.carry.iter().any(|&x| x) {
            return Vec::new();
        }
        let v_lift = self.plan.params.map_or(0.0, |p| p.v_br);
        let start: Vec<f64> = self
            .dff_rings
            .iter()
            .zip(&self.dff_ring_var)
            .map(|(r, &v)| if r.is_some() { v } else { v_lift })
            .collect();
        self.plan.ring_vars(&self.circuit, &start)
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
        let i = self.memory_index(name)?;
        let spec = &self.circuit.memories()[i].spec;
        let shape = self.backend.rom_shape(&rom);
        match &mut self.state.mems[i] {
            MemState::Rom(slot) if shape == (spec.addr_width, spec.data_width) => {
                *slot = rom;
                Ok(())
            }
            MemState::Rom(_) => Err(CircuitError::WidthMismatch(format!(
                "ROM {name} is {}×{} bits, the image is {}×{}",
                spec.addr_width, spec.data_width, shape.0, shape.1
            ))),
            _ => Err(CircuitError::Usage(format!(
                "memory {name} is not a CMUX ROM"
            ))),
        }
    }

    /// Replaces the contents of CMUX RAM `name`.
    pub fn set_ram(&mut self, name: &str, ram: B::Ram) -> Result<(), CircuitError> {
        let i = self.memory_index(name)?;
        let spec = &self.circuit.memories()[i].spec;
        let shape = self.backend.ram_shape(&ram);
        match &mut self.state.mems[i] {
            MemState::Ram(slot) if shape == (spec.addr_width, spec.data_width) => {
                *slot = ram;
                Ok(())
            }
            MemState::Ram(_) => Err(CircuitError::WidthMismatch(format!(
                "RAM {name} is {}×{} bits, the image is {}×{}",
                spec.addr_width, spec.data_width, shape.0, shape.1
            ))),
            _ => Err(CircuitError::Usage(format!(
                "memory {name} is not a CMUX RAM"
            ))),
        }
    }

    /// The contents of memory `name`: its CMUX state, or `Cells` for MUX memories.
    pub fn memory(&self, name: &str) -> Result<&MemState<B>, CircuitError> {
        Ok(&self.state.mems[self.memory_index(name)?])
    }

    /// Sets the cells of MUX memory `name` (word `j` bit `i` at `j * data_width + i`).
    pub fn set_memory_cells(&mut self, name: &str, bits: Vec<B::Bit>) -> Result<(), CircuitError> {
        let m = &self.circuit.memories()[self.memory_index(name)?];
        if m.spec.imp != MemImpl::Mux {
            return Err(CircuitError::Usage(format!(
                "memory {name} is a CMUX memory, not a MUX one"
            )));
        }
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
        let m = &self.circuit.memories()[self.memory_index(name)?];
        if m.spec.imp != MemImpl::Mux {
            return Err(CircuitError::Usage(format!(
                "memory {name} is a CMUX memory, not a MUX one"
            )));
        }
        Ok(m.cells
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
                    self.save_run_snapshot(path)?;
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
            self.save_run_snapshot(path)?;
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
    fn save_run_snapshot(&mut self, path: &std::path::Path) -> Result<(), CircuitError> {
        #[cfg(feature = "mpi")]
        if let Some(d) = &self.dist {
            let root = d.rank == 0;
            self.gather_state()?;
            if !root {
                return Ok(());
            }
        }
        self.save_snapshot(path)
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

    /// Evaluates the DAG and latches, without touching the cycle counter.
    fn cycle_inner(&mut self, tick: &mut dyn FnMut(usize)) -> Result<(), CircuitError> {
        #[cfg(feature = "mpi")]
        if self.dist.is_some() {
            return crate::mpi::cycle(self, tick);
        }
        let c = &*self.circuit;
        let b = &self.backend;
        let t0 = Instant::now();
        let values: Vec<OnceLock<B::Bit>> = (0..c.nodes.len()).map(|_| OnceLock::new()).collect();
        for (i, n) in c.nodes.iter().enumerate() {
            let v = match n {
                Node::Input(k) => self.state.inputs[*k as usize].clone(),
                Node::Const(v) => b.constant(*v),
                Node::Dff(k) => self.state.dffs[*k as usize].clone(),
                _ => continue,
            };
            let _ = values[i].set(v);
        }
        let sels: Vec<Vec<OnceLock<B::Sel>>> = c
            .memories()
            .iter()
            .map(|m| {
                let n = if m.spec.imp == MemImpl::Cmux {
                    m.addr.len()
                } else {
                    0
                };
                (0..n).map(|_| OnceLock::new()).collect()
            })
            .collect();
        let wvals: Vec<Vec<OnceLock<B::WriteVal>>> = c
            .memories()
            .iter()
            .map(|m| {
                let n = if m.spec.imp == MemImpl::Cmux {
                    m.wdata.len()
                } else {
                    0
                };
                (0..n).map(|_| OnceLock::new()).collect()
            })
            .collect();
        let plan = &self.plan;
        let rings: Vec<OnceLock<B::Ring>> = (0..c.nodes.len()).map(|_| OnceLock::new()).collect();
        for (i, n) in c.nodes.iter().enumerate() {
            if let (Node::Const(v), true) = (n, plan.ring[i]) {
                let _ = rings[i].set(b.ring_constant(*v));
            }
        }
        let lifts = AtomicUsize::new(0);
        let msels: Vec<OnceLock<B::Sel>> = plan.sel_nodes.iter().map(|_| OnceLock::new()).collect();
        let mems = &self.state.mems;
        let ctx = Ctx {
            c,
            b,
            plan,
            values: &values,
            rings: &rings,
            dff_rings: &self.dff_rings,
            lifts: &lifts,
            sels: &sels,
            msels: &msels,
            batches: &self.batches,
            wvals: &wvals,
            mems,
        };
        let exec = |t: usize| ctx.exec(self.tasks[t]);
        let (busy, threads) = if self.threads <= 1 {
            let mut last_tick = Instant::now();
            for t in 0..self.tasks.len() {
                exec(t)?;
                if last_tick.elapsed() > Duration::from_millis(500) {
                    tick(t + 1);
                    last_tick = Instant::now();
                }
            }
            (t0.elapsed().as_secs_f64(), 1)
        } else {
            let timing = schedule::run(
                &self.graph,
                self.threads,
                &exec,
                Duration::from_millis(500),
                tick,
            )?;
            (timing.busy, timing.threads)
        };
        let eval_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let get = |id: NodeId| -> Result<B::Bit, CircuitError> { ctx.get(id).cloned() };
        let mut outputs = Vec::new();
        for p in c.outputs() {
            for &n in &p.bits {
                outputs.push(get(n)?);
            }
        }
        let dffs = c
            .dffs()
            .iter()
            .map(|d| get(d.d))
            .collect::<Result<Vec<_>, _>>()?;
        // RAM writes at the clock edge.
        for (m, (sel, wv)) in sels.iter().zip(wvals).enumerate() {
            if let MemState::Ram(ram) = &mut self.state.mems[m] {
                let addr = sel
                    .iter()
                    .map(|s| s.get().ok_or_else(|| internal("address selector missing")))
                    .collect::<Result<Vec<_>, _>>()?;
                let vals = wv
                    .into_iter()
                    .map(|w| {
                        w.into_inner()
                            .ok_or_else(|| internal("RAM write value missing"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                b.ram_write(ram, &addr, &vals, self.threads)?;
            }
        }
        // Carry each D ring whose variance (tracked from this cycle's actual lifts and carries) is
        // within its flip-flop's budget; the others are lifted next cycle.
        let rv = self.carried_ring_vars();
        let mut dff_rings = Vec::with_capacity(c.dffs().len());
        let mut dff_ring_var = Vec::with_capacity(c.dffs().len());
        for (k, d) in c.dffs().iter().enumerate() {
            let v = rv.get(d.d as usize).copied().unwrap_or(f64::INFINITY);
            let ring = self
                .plan
                .within_budget(k, v)
                .then(|| rings[d.d as usize].get().cloned())
                .flatten();
            dff_ring_var.push(if ring.is_some() { v } else { 0.0 });
            dff_rings.push(ring);
        }
        self.state.dffs = dffs;
        self.dff_rings = dff_rings;
        self.dff_ring_var = dff_ring_var;
        self.state.outputs = Some(outputs);
        self.last = CycleStats {
            cycle: self.state.cycle,
            eval_seconds,
            latch_seconds: t1.elapsed().as_secs_f64(),
            busy_seconds: busy,
            threads,
            tasks: self.tasks.len(),
            lifts: lifts.into_inner(),
        };
        Ok(())
    }
}

/// The cycle counter after one more cycle (a counter at its limit is an error, never a wrap).
pub(crate) fn next_cycle(c: u64) -> Result<u64, CircuitError> {
    c.checked_add(1)
        .ok_or_else(|| CircuitError::Usage("the cycle counter is at its limit".into()))
}

pub(crate) fn internal(what: &str) -> CircuitError {
    CircuitError::Backend(format!("internal evaluation error: {what}"))
}

/// Shared read-only view used by the task executor.
pub(crate) struct Ctx<'a, B: Backend> {
    pub(crate) c: &'a Circuit,
    pub(crate) b: &'a B,
    pub(crate) plan: &'a MuxPlan,
    pub(crate) values: &'a [OnceLock<B::Bit>],
    pub(crate) rings: &'a [OnceLock<B::Ring>],
    pub(crate) dff_rings: &'a [Option<B::Ring>],
    pub(crate) lifts: &'a AtomicUsize,
    pub(crate) sels: &'a [Vec<OnceLock<B::Sel>>],
    pub(crate) msels: &'a [OnceLock<B::Sel>],
    pub(crate) batches: &'a [Vec<u32>],
    pub(crate) wvals: &'a [Vec<OnceLock<B::WriteVal>>],
    pub(crate) mems: &'a [MemState<B>],
}

impl<B: Backend> Ctx<'_, B> {
    pub(crate) fn get(&self, id: NodeId) -> Result<&B::Bit, CircuitError> {
        self.values
            .get(id as usize)
            .and_then(OnceLock::get)
            .ok_or_else(|| internal(&format!("value of {} missing", self.c.node_name(id))))
    }
    pub(crate) fn set(&self, id: NodeId, v: B::Bit) {
        if let Some(slot) = self.values.get(id as usize) {
            let _ = slot.set(v);
        }
    }
    pub(crate) fn ring(&self, id: NodeId) -> Result<&B::Ring, CircuitError> {
        self.rings
            .get(id as usize)
            .and_then(OnceLock::get)
            .ok_or_else(|| internal(&format!("ring of {} missing", self.c.node_name(id))))
    }
    pub(crate) fn set_ring(&self, id: NodeId, r: B::Ring) {
        if let Some(slot) = self.rings.get(id as usize) {
            let _ = slot.set(r);
        }
    }
    /// Stores a result produced in ring form: the ring if planned, its extraction if the bit is needed.
    fn set_from_ring(&self, id: NodeId, r: B::Ring) -> Result<(), CircuitError> {
        let i = id as usize;
        if self.plan.tlwe[i] {
            self.set(id, self.b.extract(&r)?);
        }
        if self.plan.ring[i] {
            self.set_ring(id, r);
        }
        Ok(())
    }
    /// Stores a bit whose ring is made fresh by a bootstrap (a refresh).
    fn set_refreshed(&self, id: NodeId, bit: B::Bit) -> Result<(), CircuitError> {
        let i = id as usize;
        if self.plan.ring[i] {
            self.set_ring(id, self.b.lift(&bit)?);
        }
        if self.plan.tlwe[i] {
            self.set(id, bit);
        }
        Ok(())
    }
    /// Memory `mem`'s selector of address bit `bit` (sent between MPI ranks).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn sel(&self, mem: u32, bit: u32) -> Result<&B::Sel, CircuitError> {
        self.sels
            .get(mem as usize)
            .and_then(|v| v.get(bit as usize))
            .and_then(OnceLock::get)
            .ok_or_else(|| internal("selector missing"))
    }
    /// Memory `mem`'s write value of data bit `bit` (sent between MPI ranks).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn wval(&self, mem: u32, bit: u32) -> Result<&B::WriteVal, CircuitError> {
        self.wvals
            .get(mem as usize)
            .and_then(|v| v.get(bit as usize))
            .and_then(OnceLock::get)
            .ok_or_else(|| internal("write value missing"))
    }
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn set_wval(&self, mem: u32, bit: u32, v: B::WriteVal) -> Result<(), CircuitError> {
        let slot = self
            .wvals
            .get(mem as usize)
            .and_then(|x| x.get(bit as usize))
            .ok_or_else(|| internal("write value out of range"))?;
        let _ = slot.set(v);
        Ok(())
    }
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn set_sel(&self, mem: u32, bit: u32, s: B::Sel) -> Result<(), CircuitError> {
        let slot = self
            .sels
            .get(mem as usize)
            .and_then(|v| v.get(bit as usize))
            .ok_or_else(|| internal("selector out of range"))?;
        let _ = slot.set(s);
        Ok(())
    }
    fn addr(&self, mem: usize) -> Result<Vec<&B::Sel>, CircuitError> {
        self.sels[mem]
            .iter()
            .map(|s| s.get().ok_or_else(|| internal("selector missing")))
            .collect()
    }
    pub(crate) fn exec(&self, t: Task) -> Result<(), CircuitError> {
        let b = self.b;
        match t {
            Task::Node(id) => {
                let i = id as usize;
                let (tlwe, ring) = (self.plan.tlwe[i], self.plan.ring[i]);
                match self.c.nodes[i] {
                    Node::Not(a) => {
                        if tlwe {
                            self.set(id, b.not(self.get(a)?)?);
                        }
                        if ring {
                            self.set_ring(id, b.ring_not(self.ring(a)?));
                        }
                    }
                    Node::Gate(k, x, y) if ring => {
                        let r = b.gate_ring(k, self.get(x)?, self.get(y)?)?;
                        self.set_from_ring(id, r)?;
                    }
                    Node::Gate(k, x, y) => self.set(id, b.gate(k, self.get(x)?, self.get(y)?)?),
                    Node::Mux { s, a, b: y } if ring && self.plan.refresh[i] => {
                        let bit = b.mux(self.get(s)?, self.get(a)?, self.get(y)?)?;
                        self.set_refreshed(id, bit)?;
                    }
                    Node::Mux { s, a, b: y } if ring => {
                        let r = b.mux_ring(self.get(s)?, self.get(a)?, self.get(y)?)?;
                        self.set_from_ring(id, r)?;
                    }
                    Node::Mux { s, a, b: y } => {
                        self.set(id, b.mux(self.get(s)?, self.get(a)?, self.get(y)?)?)
                    }
                    _ => return Err(internal("source node scheduled")),
                }
            }
            Task::MuxSels(batch) => {
                let slots = self
                    .batches
                    .get(batch as usize)
                    .ok_or_else(|| internal("select batch missing"))?;
                let bits = slots
                    .iter()
                    .map(|&s| self.get(self.plan.sel_nodes[s as usize]))
                    .collect::<Result<Vec<_>, _>>()?;
                for (&s, sel) in slots.iter().zip(b.select_batch(&bits)?) {
                    let _ = self.msels[s as usize].set(sel);
                }
            }
            Task::Cmux(id) => {
                let Node::Mux { s, a, b: y } = self.c.nodes[id as usize] else {
                    return Err(internal("CMUX task on a non-MUX node"));
                };
                let slot = self.plan.sel_slot[s as usize];
                let sel = self
                    .msels
                    .get(slot as usize)
                    .and_then(OnceLock::get)
                    .ok_or_else(|| internal("MUX select missing"))?;
                let r = b.cmux(sel, self.ring(a)?, self.ring(y)?)?;
                if self.plan.refresh[id as usize] {
                    self.set_refreshed(id, b.extract(&r)?)?;
                } else {
                    self.set_from_ring(id, r)?;
                }
            }
            Task::Lift(id) => {
                let carried = match self.c.nodes[id as usize] {
                    Node::Dff(k) => self.dff_rings.get(k as usize).and_then(Option::as_ref),
                    _ => None,
                };
                let r = match carried {
                    Some(r) => r.clone(),
                    None => {
                        self.lifts.fetch_add(1, Ordering::Relaxed);
                        b.lift(self.get(id)?)?
                    }
                };
                self.set_ring(id, r);
            }
            Task::Select { mem, first, count } => {
                let range = span(first, count);
                let m = &self.c.mems[mem as usize];
                let bits = m
                    .addr
                    .get(range.clone())
                    .ok_or_else(|| internal("address bits out of range"))?
                    .iter()
                    .map(|&a| self.get(a))
                    .collect::<Result<Vec<_>, _>>()?;
                let sels = match m.spec.kind {
                    MemKind::Ram => b.ram_select_batch(&bits)?,
                    MemKind::Rom => b.select_batch(&bits)?,
                };
                let slots = self.sels[mem as usize]
                    .get(range)
                    .ok_or_else(|| internal("selectors out of range"))?;
                for (slot, sel) in slots.iter().zip(sels) {
                    let _ = slot.set(sel);
                }
            }
            Task::RomRead { mem, first, count } => {
                let MemState::Rom(rom) = &self.mems[mem as usize] else {
                    return Err(internal("ROM state missing"));
                };
                let range = span(first, count);
                let nodes = self.c.mems[mem as usize]
                    .rdata
                    .get(range.clone())
                    .ok_or_else(|| internal("ROM bits out of range"))?;
                let out = b.rom_read_bits(rom, &self.addr(mem as usize)?, range)?;
                for (&node, r) in nodes.iter().zip(out) {
                    self.set_from_ring(node, r)?;
                }
            }
            Task::RamRead { mem, bit } => {
                let MemState::Ram(ram) = &self.mems[mem as usize] else {
                    return Err(internal("RAM state missing"));
                };
                let v = b.ram_read(ram, &self.addr(mem as usize)?, bit as usize)?;
                self.set_from_ring(self.c.mems[mem as usize].rdata[bit as usize], v)?;
            }
            Task::WriteVal { mem, bit } => {
                let m = &self.c.mems[mem as usize];
                let we = m.wren.ok_or_else(|| internal("RAM without wren"))?;
                let v = b.ram_write_value(
                    self.get(we)?,
                    self.get(m.wdata[bit as usize])?,
                    self.get(m.rdata[bit as usize])?,
                )?;
                let _ = self.wvals[mem as usize][bit as usize].set(v);
            }
        }
        Ok(())
    }
}

/// Most selects circuit-bootstrapped in one task: a batch streams the private key-switching key once.
pub(crate) const SELECT_BATCH: usize = 8;

/// How finely a cycle is cut into tasks (the MPI executor cuts finer on many ranks,
/// [`crate::partition::grain_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grain {
    /// MUX selects per circuit-bootstrapping batch.
    pub(crate) select_batch: usize,
    /// Memory address bits per circuit-bootstrapping task.
    pub(crate) mem_select: usize,
    /// ROM data bits per read task.
    pub(crate) rom_bits: usize,
}

/// The single-process engine's tasks: batches of [`SELECT_BATCH`], a memory's address and a ROM
/// read each one task.
pub(crate) const ENGINE_GRAIN: Grain = Grain {
    select_batch: SELECT_BATCH,
    mem_select: usize::MAX,
    rom_bits: usize::MAX,
};

/// `first..first + count` as indices.
fn span(first: u32, count: u32) -> std::ops::Range<usize> {
    let f = first as usize;
    f..f.saturating_add(count as usize)
}

/// `(first, count)` chunks of at most `per` covering `0..n` (one empty chunk when `n` is 0).
fn chunks(n: usize, per: usize) -> Vec<(u32, u32)> {
    let per = per.max(1);
    if n == 0 {
        return vec![(0, 0)];
    }
    (0..n)
        .step_by(per)
        .map(|f| (f as u32, per.min(n - f) as u32))
        .collect()
}

/// Builds the task list (in topological order), the scheduler graph with upward-rank priorities, and
/// the batches of MUX selects, cut as `grain` says.
pub(crate) fn build_tasks<B: Backend>(
    c: &Circuit,
    b: &B,
    plan: &MuxPlan,
    grain: Grain,
) -> (Vec<Task>, TaskGraph, Vec<Vec<u32>>) {
    let mut tasks = Vec::new();
    let mut preds: Vec<Vec<u32>> = Vec::new();
    let mut cost = Vec::new();
    // The task producing each node's level-0 value and its ring (None for sources).
    let mut producer: Vec<Option<u32>> = vec![None; c.nodes.len()];
    let mut ring_producer: Vec<Option<u32>> = vec![None; c.nodes.len()];
    // The task circuit-bootstrapping each MUX select.
    let mut sel_task: Vec<Option<u32>> = vec![None; plan.sel_nodes.len()];
    let mut batches: Vec<Vec<u32>> = Vec::new();
    // Bootstraps on the longest path to each node: selects of about the same depth are batched.
    let depth = bootstrap_depth(c, plan);
    let available = |n: NodeId, producer: &[Option<u32>]| {
        matches!(
            c.nodes[n as usize],
            Node::Input(_) | Node::Const(_) | Node::Dff(_)
        ) || producer[n as usize].is_some()
    };
    let mut push = |t: Task, p: Vec<u32>, k: TaskKind, weight: f64, tasks: &mut Vec<Task>| -> u32 {
        tasks.push(t);
        preds.push(p);
        cost.push(b.task_cost(k) * weight);
        (tasks.len() - 1) as u32
    };
    let deps = |ids: &mut dyn Iterator<Item = NodeId>, producer: &[Option<u32>]| -> Vec<u32> {
        let mut v: Vec<u32> = ids.filter_map(|i| producer[i as usize]).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let i = id as usize;
                // Sources used as rings are lifted once, right before their first ring consumer.
                for x in c.operands(id) {
                    let x = x as usize;
                    if plan.lift[x] && ring_producer[x].is_none() {
                        let p = deps(&mut std::iter::once(x as NodeId), &producer);
                        ring_producer[x] = Some(push(
                            Task::Lift(x as NodeId),
                            p,
                            TaskKind::Lift,
                            1.0,
                            &mut tasks,
                        ));
                    }
                }
                let t = match c.nodes[i] {
                    Node::Mux { s, a, b: y } if plan.cmux[i] => {
                        let slot = plan.sel_slot[s as usize];
                        debug_assert_ne!(slot, NO_SLOT);
                        let st = match sel_task[slot as usize] {
                            Some(t) => t,
                            None => {
                                // One batch: this select and up to select_batch − 1 others not yet
                                // batched whose values exist by now and are no deeper (so none
                                // delays this one), deepest first.
                                let d = depth[s as usize];
                                let mut others: Vec<(u32, u32)> = (0..plan.sel_nodes.len() as u32)
                                    .filter(|&u| u != slot && sel_task[u as usize].is_none())
                                    .map(|u| (depth[plan.sel_nodes[u as usize] as usize], u))
                                    .filter(|&(du, u)| {
                                        du <= d && available(plan.sel_nodes[u as usize], &producer)
                                    })
                                    .collect();
                                others.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
                                let mut members = vec![slot];
                                members.extend(
                                    others
                                        .into_iter()
                                        .take(grain.select_batch.max(1) - 1)
                                        .map(|(_, u)| u),
                                );
                                let p = deps(
                                    &mut members.iter().map(|&u| plan.sel_nodes[u as usize]),
                                    &producer,
                                );
                                let t = push(
                                    Task::MuxSels(batches.len() as u32),
                                    p,
                                    TaskKind::Select,
                                    members.len() as f64,
                                    &mut tasks,
                                );
                                for &u in &members {
                                    sel_task[u as usize] = Some(t);
                                }
                                batches.push(members);
                                t
                            }
                        };
                        let mut p = deps(&mut [a, y].into_iter(), &ring_producer);
                        p.push(st);
                        p.sort_unstable();
                        p.dedup();
                        push(Task::Cmux(id), p, TaskKind::Cmux, 1.0, &mut tasks)
                    }
                    Node::Not(a) => {
                        let mut p = Vec::new();
                        if plan.tlwe[i] {
                            p.extend(producer[a as usize]);
                        }
                        if plan.ring[i] {
                            p.extend(ring_producer[a as usize]);
                        }
                        p.sort_unstable();
                        p.dedup();
                        push(Task::Node(id), p, TaskKind::Not, 1.0, &mut tasks)
                    }
                    Node::Mux { .. } => {
                        let p = deps(&mut c.operands(id), &producer);
                        push(Task::Node(id), p, TaskKind::Mux, 1.0, &mut tasks)
                    }
                    _ => {
                        let p = deps(&mut c.operands(id), &producer);
                        push(Task::Node(id), p, TaskKind::Gate, 1.0, &mut tasks)
                    }
                };
                producer[i] = Some(t);
                ring_producer[i] = Some(t);
            }
            Step::MemRead(m) => {
                let mem = &c.mems[m as usize];
                let sel: Vec<u32> = chunks(mem.addr.len(), grain.mem_select)
                    .into_iter()
                    .map(|(first, count)| {
                        let bits = &mem.addr[span(first, count)];
                        let p = deps(&mut bits.iter().copied(), &producer);
                        push(
                            Task::Select {
                                mem: m,
                                first,
                                count,
                            },
                            p,
                            TaskKind::Select,
                            f64::from(count),
                            &mut tasks,
                        )
                    })
                    .collect();
                match mem.spec.kind {
                    MemKind::Rom => {
                        let width = mem.rdata.len().max(1) as f64;
                        for (first, count) in chunks(mem.rdata.len(), grain.rom_bits) {
                            let t = push(
                                Task::RomRead {
                                    mem: m,
                                    first,
                                    count,
                                },
                                sel.clone(),
                                TaskKind::RomRead,
                                f64::from(count) / width,
                                &mut tasks,
                            );
                            for &r in &mem.rdata[span(first, count)] {
                                producer[r as usize] = Some(t);
                                ring_producer[r as usize] = Some(t);
                            }
                        }
                    }
                    MemKind::Ram => {
                        for (i, &r) in mem.rdata.iter().enumerate() {
                            let t = push(
                                Task::RamRead {
                                    mem: m,
                                    bit: i as u32,
                                },
                                sel.clone(),
                                TaskKind::RamRead,
                                1.0,
                                &mut tasks,
                            );
                            producer[r as usize] = Some(t);
                            ring_producer[r as usize] = Some(t);
                        }
                    }
                }
            }
        }
    }
    for (m, mem) in c.mems.iter().enumerate() {
        if mem.spec.imp != MemImpl::Cmux || mem.spec.kind != MemKind::Ram {
            continue;
        }
        for i in 0..mem.wdata.len() {
            let ids = [mem.wren.unwrap_or(0), mem.wdata[i], mem.rdata[i]];
            let p = deps(&mut ids.into_iter(), &producer);
            push(
                Task::WriteVal {
                    mem: m as u32,
                    bit: i as u32,
                },
                p,
                TaskKind::WriteValue,
                1.0,
                &mut tasks,
            );
        }
    }
    let g = TaskGraph::new(&preds, &cost);
    (tasks, g, batches)
}

/// Gate bootstraps on the longest path from the cycle's sources to each node (CMUXes and NOTs add
/// none; a memory read adds one after its address).
fn bootstrap_depth(c: &Circuit, plan: &MuxPlan) -> Vec<u32> {
    let mut depth = vec![0u32; c.nodes.len()];
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let i = id as usize;
                let d = |x: NodeId| depth[x as usize];
                depth[i] = match c.nodes[i] {
                    Node::Not(a) => d(a),
                    Node::Gate(_, a, b) => 1 + d(a).max(d(b)),
                    Node::Mux { s, a, b } if plan.cmux[i] => d(s).max(d(a)).max(d(b)),
                    Node::Mux { s, a, b } => 1 + d(s).max(d(a)).max(d(b)),
                    _ => 0,
                };
            }
            Step::MemRead(m) => {
                let mem = &c.mems[m as usize];
                let a = mem
                    .addr
                    .iter()
                    .map(|&x| depth[x as usize])
                    .max()
                    .unwrap_or(0);
                for &r in &mem.rdata {
                    depth[r as usize] = a + 1;
                }
            }
        }
    }
    depth
}
