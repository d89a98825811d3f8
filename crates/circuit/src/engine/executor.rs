//! Executors: where and when a cycle's tasks run. The engine owns the circuit, the state and what a
//! cycle means (`cycle`: slots, the DAG, then the clock edge); an [`Executor`] answers the questions
//! that depend on where work runs — which flip-flops and memories this place holds, who runs which
//! task and how values travel, who writes a RAM, who reads the outputs and writes files.
//!
//! [`Local`] is the default: every task on this process's threads, in topological order on one
//! thread or on the list scheduler ([`crate::schedule`]). Executors over many processes
//! ([`crate::dist`]) are other implementations; the engine does not know them.

use std::time::{Duration, Instant};

use super::ctx::Ctx;
use super::tasks::{ram_parts, Grain, Task, TaskSet, ENGINE_GRAIN};
use super::{Carried, State};
use crate::backend::Backend;
use crate::circuit::{Circuit, NodeId};
use crate::error::CircuitError;
use crate::leveled::MuxPlan;
use crate::schedule::{self, TaskGraph};

/// What an executor sees of the engine: the circuit, the backend, the MUX plan, the cycle's task
/// table and the threads a place may use.
pub(crate) struct View<'a, B: Backend> {
    pub(crate) c: &'a Circuit,
    pub(crate) b: &'a B,
    pub(crate) plan: &'a MuxPlan,
    pub(crate) tasks: &'a std::sync::Arc<TaskSet>,
    pub(crate) threads: usize,
}

/// What running a cycle's DAG took on this place.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DagRun {
    /// Seconds workers spent inside tasks.
    pub(crate) busy: f64,
    pub(crate) threads: usize,
    /// Tasks this place ran.
    pub(crate) tasks: usize,
}

/// Where and when a cycle's tasks run (see the module doc). Every method but
/// [`Executor::run_dag`] has the single-place answer as its default.
pub(crate) trait Executor<B: Backend>: Send + Sync {
    /// How finely the engine cuts a cycle into tasks for this executor.
    fn grain(&self) -> Grain {
        ENGINE_GRAIN
    }
    /// How finely to cut a cycle when this place runs `threads` worker threads (by default as
    /// [`Executor::grain`], whatever the threads).
    fn grain_on(&self, _threads: usize) -> Grain {
        self.grain()
    }
    /// The engine's task table changed (a new MUX plan): forget what was derived from it.
    fn tasks_changed(&mut self) {}
    /// Prepares for a cycle (or a gather) over `v`'s tasks; called before each.
    fn prepare(&mut self, _v: &View<'_, B>) -> Result<(), CircuitError> {
        Ok(())
    }
    /// Whether this place reads the outputs, decides for all and writes files.
    fn is_root(&self) -> bool {
        true
    }
    /// Whether this place holds flip-flop `k` (computes its D input, keeps its state and ring).
    fn holds_dff(&self, _k: usize) -> bool {
        true
    }
    /// Whether this place holds CMUX memory `m` (its reads, its clock-edge write).
    fn holds_mem(&self, _m: usize) -> bool {
        true
    }
    /// Whether node `n`'s ring is made anywhere in a cycle, where this place cannot see it in its
    /// own slots (`None`: look at the slots).
    fn ring_exists(&self, _n: NodeId) -> Option<bool> {
        None
    }
    /// Runs this place's share of the cycle's tasks through `ctx`, receiving and sending what other
    /// places need; `tick` hears the tasks done now and then.
    fn run_dag(
        &mut self,
        v: &View<'_, B>,
        ctx: &Ctx<'_, B>,
        tick: &mut dyn FnMut(usize),
    ) -> Result<DagRun, CircuitError>;
    /// The clock-edge write of CMUX RAM `m`, held here (whole, or some of its parts when the task
    /// table cuts it: [`super::tasks::Grain::ram_parts`]), at `addr` with `vals`.
    fn write_ram(
        &mut self,
        v: &View<'_, B>,
        m: usize,
        ram: &mut B::Ram,
        addr: &[&B::Sel],
        vals: &[B::WriteVal],
    ) -> Result<(), CircuitError> {
        write_ram_here(v, m, ram, addr, vals)
    }
    /// This place's part in the clock edge of CMUX RAM `m`, held elsewhere (`ram`: its copy here,
    /// whose bookkeeping a place keeps in step when the RAM is spread).
    fn help_ram(
        &mut self,
        _v: &View<'_, B>,
        _m: usize,
        _ram: &mut B::Ram,
    ) -> Result<(), CircuitError> {
        Ok(())
    }
    /// The root's `flag`, on every place.
    fn agree(&self, flag: bool) -> bool {
        flag
    }
    /// Brings to the root the flip-flops, rings and memories held elsewhere, so that its state is
    /// whole (before a snapshot, at the end of a run).
    fn gather(
        &mut self,
        _v: &View<'_, B>,
        _state: &mut State<B>,
        _carried: &mut Carried<B>,
    ) -> Result<(), CircuitError> {
        Ok(())
    }
    /// What an error inside a cycle becomes (an executor whose places would wait forever for a
    /// failed one stops them all here).
    fn fail(&self, e: CircuitError) -> CircuitError {
        e
    }
}

/// The clock-edge write of CMUX RAM `m`, all of it in this place: whole, or part by part when the
/// task table cuts the RAM into parts (the same cells as the whole write), then its bookkeeping and
/// refreshes.
pub(crate) fn write_ram_here<B: Backend>(
    v: &View<'_, B>,
    m: usize,
    ram: &mut B::Ram,
    addr: &[&B::Sel],
    vals: &[B::WriteVal],
) -> Result<(), CircuitError> {
    let parts = ram_parts(v.c, v.tasks.grain, m);
    if parts == 1 {
        return v.b.ram_write(ram, addr, vals, v.threads);
    }
    let b = v.b;
    let w = b.ram_shape(ram).1;
    for part in 0..parts {
        b.ram_write_part(ram, addr, vals, part, parts, 0..w, v.threads)?;
    }
    let list = b.ram_write_bookkeep(ram)?;
    let cells = list
        .iter()
        .map(|&i| b.ram_cell(ram, i))
        .collect::<Result<Vec<_>, _>>()?;
    let fresh = b.refresh_ram_cells(&cells.iter().collect::<Vec<_>>(), v.threads)?;
    for (&i, cell) in list.iter().zip(fresh) {
        b.set_ram_cell(ram, i, cell)?;
    }
    Ok(())
}

/// The default executor: every task on this process's threads.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Local;

impl<B: Backend> Executor<B> for Local {
    fn grain_on(&self, threads: usize) -> Grain {
        ENGINE_GRAIN.on_threads(threads)
    }
    fn run_dag(
        &mut self,
        v: &View<'_, B>,
        ctx: &Ctx<'_, B>,
        tick: &mut dyn FnMut(usize),
    ) -> Result<DagRun, CircuitError> {
        run_tasks(ctx, &v.tasks.tasks, &v.tasks.graph, v.threads, tick)
    }
}

/// How often a long cycle reports its task progress.
const TICK: Duration = Duration::from_millis(500);

/// Runs `tasks` (in topological order; `graph` is theirs) through `ctx` on the list scheduler with
/// `threads` workers: a batch of circuit bootstraps split over the workers that would idle while it
/// runs ([`schedule::run_wide`], [`Ctx::wide`]), and ready bootstraps beyond the free workers run in
/// batches ([`schedule::run_batched`], [`Ctx::exec_batch`]) — on one worker too, whenever several
/// are ready; a backend whose batches gain nothing ([`Backend::boot_batch_max`] 1) runs its tasks
/// in order on the calling thread with one. `tick` hears the tasks done about every [`TICK`]. The
/// local executor runs its tasks with this.
pub(crate) fn run_tasks<B: Backend>(
    ctx: &Ctx<'_, B>,
    tasks: &[Task],
    graph: &TaskGraph,
    threads: usize,
    tick: &mut dyn FnMut(usize),
) -> Result<DagRun, CircuitError> {
    let exec = |t: usize, lanes: usize| ctx.exec(tasks[t], lanes);
    let wide = |t: usize| ctx.wide(tasks[t]);
    if threads <= 1 && ctx.b.boot_batch_max() <= 1 {
        let t0 = Instant::now();
        let mut last_tick = Instant::now();
        for t in 0..tasks.len() {
            exec(t, 1)?;
            if last_tick.elapsed() > TICK {
                tick(t + 1);
                last_tick = Instant::now();
            }
        }
        Ok(DagRun {
            busy: t0.elapsed().as_secs_f64(),
            threads: 1,
            tasks: tasks.len(),
        })
    } else {
        let batchable = |t: usize| ctx.batchable(tasks[t]);
        let exec_batch = |ts: &[usize]| {
            let group: Vec<Task> = ts.iter().map(|&t| tasks[t]).collect();
            ctx.exec_batch(&group)
        };
        let batching = schedule::Batching {
            max: ctx.b.boot_batch_max(),
            batchable: &batchable,
            exec: &exec_batch,
        };
        let timing = schedule::run_batched(graph, threads, &exec, &wide, &batching, TICK, tick)?;
        Ok(DagRun {
            busy: timing.busy,
            threads: timing.threads,
            tasks: tasks.len(),
        })
    }
}
