//! The evaluator: runs a [`Circuit`] cycle by cycle on any [`Backend`].
//!
//! One cycle (Iyokan's semantics, VSP paper seed 000, with the tick moved to the end): the combinational
//! DAG is evaluated from the current inputs, flip-flop states and memory contents (memory reads are
//! combinational: `rdata` shows the word at this cycle's `addr`); the `@` outputs are captured; then the
//! clock edge latches every flip-flop's D input and performs RAM writes (read-before-write: a word written
//! in cycle c is visible from cycle c+1). Where and when the DAG's tasks run is an executor's choice
//! (`executor`): by default on this process's threads — in topological order with one thread, on the
//! list scheduler ([`crate::schedule`]) with more; executors over many processes ([`crate::dist`])
//! plug in from outside, and this module knows nothing of them.
//!
//! | part | what it does |
//! |---|---|
//! | this module | the [`Engine`] API: inputs, outputs, memories, threads, the MUX plan |
//! | `run` | reset, step, run with progress and periodic snapshots |
//! | `cycle` | one cycle: the slots, the DAG, then the clock edge (flip-flops, RAM writes, carried rings) |
//! | `executor` | the `Executor` trait (where and when tasks run) and the local executor |
//! | `ctx` | what each task does over the cycle's slots |
//! | `tasks` | the task table: every task's kind, cost, reads and writes, and the scheduler graph |
//! | [`snapshot`] | the state in a versioned, checksummed file |

use std::sync::Arc;

use crate::backend::Backend;
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::{Circuit, Node};
use crate::error::CircuitError;
use crate::leveled::{LeveledParams, MuxPlan, PlanCounts};
use crate::schedule;

// `ctx`, `executor` and `tasks` are what other executors (`crate::dist`) build on.
pub(crate) mod ctx;
mod cycle;
pub(crate) mod executor;
mod run;
pub mod snapshot;
pub(crate) mod tasks;

use executor::{Executor, Local, View};
pub use snapshot::SnapshotWrap;
pub use tasks::Item;
use tasks::{build_tasks, TaskSet};

/// The contents of one memory as the engine holds them.
pub enum MemState<B: Backend> {
    Rom(B::Rom),
    Ram(B::Ram),
    /// A MUX memory: its cells are flip-flops (see [`crate::MemBlock::cells`]).
    Cells,
}

/// Everything that changes from cycle to cycle; what a snapshot stores.
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

// By hand rather than derived: a derive would ask `B: Clone` of the backend, whose bits, ROMs and RAMs
// are what is cloned.
impl<B: Backend> Clone for MemState<B> {
    fn clone(&self) -> Self {
        match self {
            MemState::Rom(r) => MemState::Rom(r.clone()),
            MemState::Ram(r) => MemState::Ram(r.clone()),
            MemState::Cells => MemState::Cells,
        }
    }
}

impl<B: Backend> Clone for State<B> {
    fn clone(&self) -> Self {
        State {
            cycle: self.cycle,
            inputs: self.inputs.clone(),
            dffs: self.dffs.clone(),
            mems: self.mems.clone(),
            outputs: self.outputs.clone(),
        }
    }
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
    /// Tasks of the DAG whose bootstraps ran in a batch with other tasks' (of `tasks`;
    /// [`crate::Backend::boot_batch`]).
    pub batched: usize,
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

/// Rings of flip-flops, kept across the clock edge for those the plan carries while within their
/// noise budget (`None`: lift it), and the variance bound of each kept ring.
pub(crate) struct Carried<B: Backend> {
    pub(crate) rings: Vec<Option<B::Ring>>,
    pub(crate) vars: Vec<f64>,
}

/// The evaluator for one circuit on one backend.
pub struct Engine<B: Backend> {
    pub(crate) backend: B,
    pub(crate) circuit: Arc<Circuit>,
    pub(crate) threads: usize,
    pub(crate) state: State<B>,
    /// The cycle's task table, cut as the executor asks.
    pub(crate) tasks: Arc<TaskSet>,
    pub(crate) plan: MuxPlan,
    pub(crate) carried: Carried<B>,
    pub(crate) last: CycleStats,
    /// Where and when tasks run.
    pub(crate) exec: Box<dyn Executor<B>>,
}

impl<B: Backend> Engine<B> {
    /// An engine at cycle 0: flip-flops at their initial values, inputs 0, memories all zero.
    /// Threads: all cores for encrypted backends, 1 for the plain one (change with [`Self::set_threads`]).
    /// When the backend asks for it ([`Backend::techmap`]) the engine runs the circuit mapped into
    /// multi-input cells ([`crate::techmap`]): same ports, flip-flops, memories and fingerprint, same
    /// results, fewer bootstraps; [`Self::circuit`] is then the mapped circuit.
    pub fn new(backend: B, circuit: Arc<Circuit>) -> Self {
        let (circuit, plan) = Self::mapped_and_planned(&backend, circuit);
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
        let threads = if backend.reveal(&backend.constant(false)).is_some() {
            1
        } else {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        };
        let grain = <Local as Executor<B>>::grain_on(&Local, threads);
        let tasks = Arc::new(build_tasks(&circuit, &backend, &plan, grain));
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
            carried: Carried {
                rings: Vec::new(),
                vars: Vec::new(),
            },
            plan,
            last: CycleStats::default(),
            exec: Box::new(Local),
        }
        .with_power_up_rings()
    }

    /// The circuit the engine runs and its MUX plan. When the backend asks for it
    /// ([`Backend::techmap`]) the circuit is mapped into multi-input cells, minimising the depth under
    /// the MUX plan of the unmapped circuit; with a MUX plan ([`Backend::leveled`]) it is mapped twice,
    /// as built and with MUXes on a NOT moved onto its operand
    /// ([`crate::techmap::MapParams::swap_not_selects`]), and the cheaper plan is kept (the greedy
    /// planner gains on some netlists from either).
    fn mapped_and_planned(backend: &B, circuit: Arc<Circuit>) -> (Arc<Circuit>, MuxPlan) {
        use crate::techmap::{map, map_planned, MapParams};
        let plan_of = |c: &Circuit| match backend.leveled() {
            Some(lp) => MuxPlan::new(c, &lp),
            None => MuxPlan::gates_only(c),
        };
        let Some(p) = backend.techmap() else {
            let plan = plan_of(&circuit);
            return (circuit, plan);
        };
        let mapped = match backend.leveled() {
            Some(lp) => {
                let unmapped = MuxPlan::new(&circuit, &lp);
                let swapped = MapParams {
                    swap_not_selects: true,
                    ..p
                };
                let mut best: Option<(Circuit, MuxPlan)> = None;
                for q in [p, swapped] {
                    let m = match map_planned(&circuit, &q, &unmapped) {
                        Ok(m) => m,
                        Err(e) => {
                            debug_assert!(false, "technology mapping failed: {e}");
                            continue;
                        }
                    };
                    let plan = MuxPlan::new(&m, &lp);
                    if best
                        .as_ref()
                        .is_none_or(|(_, b)| plan.counts().cost < b.counts().cost)
                    {
                        best = Some((m, plan));
                    }
                }
                best.map(|(m, plan)| (Arc::new(m), plan))
            }
            None => match map(&circuit, &p) {
                Ok(m) => {
                    let plan = plan_of(&m);
                    Some((Arc::new(m), plan))
                }
                Err(e) => {
                    debug_assert!(false, "technology mapping failed: {e}");
                    None
                }
            },
        };
        // An internal error of the mapping: run the circuit as built.
        mapped.unwrap_or_else(|| {
            let plan = plan_of(&circuit);
            (circuit, plan)
        })
    }

    /// Flip-flop rings at power-up: the public initial values.
    fn with_power_up_rings(mut self) -> Self {
        self.reset_dff_rings();
        self
    }

    /// Rings consistent with the flip-flops' initial values, or none (a lift) after any other change.
    fn reset_dff_rings(&mut self) {
        let b = &self.backend;
        self.carried.rings = if self.state.cycle == 0 && self.state.outputs.is_none() {
            self.circuit
                .dffs()
                .iter()
                .map(|d| Some(b.ring_constant(d.init)))
                .collect()
        } else {
            vec![None; self.circuit.dffs().len()]
        };
        self.carried.vars = vec![0.0; self.circuit.dffs().len()];
    }

    /// Replans the MUXes: `Some` evaluates MUXes with well-shared selects as CMUXes ([`crate::leveled`]),
    /// `None` keeps every MUX a gate. The backend's own choice ([`Backend::leveled`]) is the default;
    /// results are the same either way.
    pub fn set_leveled(&mut self, p: Option<LeveledParams>) {
        self.plan = match p {
            Some(p) => MuxPlan::new(&self.circuit, &p),
            None => MuxPlan::gates_only(&self.circuit),
        };
        self.rebuild_tasks();
        // A carried ring may be noisier than the new plan assumes: lift next cycle.
        self.carried.rings.iter_mut().for_each(|r| *r = None);
    }

    /// Rebuilds the task table for the current plan, cut as the executor asks (call it after
    /// replacing the executor).
    pub(crate) fn rebuild_tasks(&mut self) {
        let grain = self.exec.grain_on(self.threads);
        self.tasks = Arc::new(build_tasks(&self.circuit, &self.backend, &self.plan, grain));
        self.exec.tasks_changed();
    }

    /// The executor and what it sees of the engine, borrowed apart from the state it may change.
    pub(crate) fn parts(
        &mut self,
    ) -> (
        View<'_, B>,
        &mut dyn Executor<B>,
        &mut State<B>,
        &mut Carried<B>,
    ) {
        let v = View {
            c: &self.circuit,
            b: &self.backend,
            plan: &self.plan,
            tasks: &self.tasks,
            threads: self.threads,
        };
        (v, &mut *self.exec, &mut self.state, &mut self.carried)
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
        let threads = threads.max(1);
        if threads != self.threads {
            self.threads = threads;
            // The task table may be cut by the thread count (a memory's address selects).
            if self.exec.grain_on(threads) != self.tasks.grain {
                self.rebuild_tasks();
            }
        }
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
        self.carried.rings.iter_mut().for_each(|r| *r = None);
        &mut self.state
    }
    /// Statistics of the last cycle.
    pub fn last_cycle_stats(&self) -> &CycleStats {
        &self.last
    }
    /// Whether this engine is the root of its executor: true for a single-process engine; of the
    /// engines of a distributed job, only rank 0's, which alone holds the whole state after a run, reads
    /// the outputs and writes files.
    pub fn is_root(&self) -> bool {
        self.exec.is_root()
    }

    /// Collective under a distributed executor: brings the flip-flops, rings and memories held
    /// elsewhere to the root, so that its [`Engine::state`] is whole ([`Engine::run`] does this at
    /// its end and before each snapshot). Nothing to do for a single-process engine.
    pub fn gather_state(&mut self) -> Result<(), CircuitError> {
        let (v, exec, state, carried) = self.parts();
        exec.prepare(&v)?;
        exec.gather(&v, state, carried)
    }

    /// Gate bootstraps per cycle by node kind under the plan ([`crate::techmap::kind_counts_under`]:
    /// gates and cell classes, MUXes as `MUX`; selects their circuit bootstrap decides left out).
    pub fn bootstrap_kind_counts(&self) -> std::collections::BTreeMap<String, usize> {
        crate::techmap::kind_counts_under(&self.circuit, Some(&self.plan))
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
        (self.tasks.len(), self.tasks.graph.critical_path())
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
            self.carried.rings[d as usize] = None;
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
}
