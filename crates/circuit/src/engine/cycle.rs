//! One cycle, whatever the executor: the slots filled from the state, the combinational DAG (run
//! where and when the [`super::executor`] says), then the clock edge — flip-flops latch their D
//! inputs, RAMs take their writes (read-before-write), and the rings of the flip-flops the MUX plan
//! carries are kept while within their noise budget.

use std::sync::atomic::AtomicUsize;
use std::sync::OnceLock;
use std::time::Instant;

use super::ctx::{got, internal, Ctx};
use super::executor::{Executor, View};
use super::tasks::ram_parts;
use super::{Carried, CycleStats, Engine, MemState, State};
use crate::backend::Backend;
use crate::blueprint::MemImpl;
use crate::circuit::{Circuit, MemBlock, Node};
use crate::error::CircuitError;
use crate::leveled::MuxPlan;

/// Ring variance of every node this cycle, from the flip-flop rings carried into it (a lifted
/// flip-flop starts at V_br); empty when the plan carries no flip-flop.
fn carried_ring_vars<B: Backend>(c: &Circuit, plan: &MuxPlan, carried: &Carried<B>) -> Vec<f64> {
    if !plan.carry.iter().any(|&x| x) {
        return Vec::new();
    }
    let v_lift = plan.params.map_or(0.0, |p| p.v_br);
    let start: Vec<f64> = carried
        .rings
        .iter()
        .zip(&carried.vars)
        .map(|(r, &v)| if r.is_some() { v } else { v_lift })
        .collect();
    plan.ring_vars(c, &start)
}

impl<B: Backend> Engine<B> {
    /// Evaluates the DAG and latches, without touching the cycle counter; an error goes through the
    /// executor's [`Executor::fail`].
    pub(super) fn cycle_inner(&mut self, tick: &mut dyn FnMut(usize)) -> Result<(), CircuitError> {
        self.cycle_body(tick).map_err(|e| self.exec.fail(e))
    }

    fn cycle_body(&mut self, tick: &mut dyn FnMut(usize)) -> Result<(), CircuitError> {
        let Engine {
            backend,
            circuit,
            threads,
            state,
            tasks,
            plan,
            carried,
            last,
            exec,
        } = self;
        let v = View {
            c: circuit,
            b: backend,
            plan,
            tasks,
            threads: *threads,
        };
        let exec: &mut dyn Executor<B> = &mut **exec;
        exec.prepare(&v)?;
        let t0 = Instant::now();
        let mut slots = Slots::new(&v, state, |k| exec.holds_dff(k));
        let ctx = slots.ctx(&v, carried, &state.mems);
        let run = exec.run_dag(&v, &ctx, tick)?;
        let eval_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let outputs = if exec.is_root() {
            let mut o = Vec::new();
            for p in v.c.outputs() {
                for &n in &p.bits {
                    o.push(ctx.get(n)?.clone());
                }
            }
            Some(o)
        } else {
            None
        };
        let dffs =
            v.c.dffs()
                .iter()
                .enumerate()
                .map(|(k, d)| match exec.holds_dff(k) {
                    true => ctx.get(d.d).cloned(),
                    false => Ok(state.dffs[k].clone()),
                })
                .collect::<Result<Vec<_>, _>>()?;
        // Each CMUX RAM takes its write where it is held (the same order on every place).
        for (m, mem) in state.mems.iter_mut().enumerate() {
            let MemState::Ram(ram) = mem else { continue };
            if !exec.holds_mem(m) {
                exec.help_ram(&v, m, ram)?;
                continue;
            }
            let addr = slots.sels[m]
                .iter()
                .map(|s| got(s, "address selector"))
                .collect::<Result<Vec<_>, _>>()?;
            let vals = std::mem::take(&mut slots.wvals[m])
                .into_iter()
                .map(|w| {
                    w.into_inner()
                        .ok_or_else(|| internal("RAM write value missing"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            exec.write_ram(&v, m, ram, &addr, &vals)?;
        }
        *carried = carry_rings(&v, exec, &slots, carried)?;
        state.dffs = dffs;
        state.outputs = outputs;
        *last = CycleStats {
            cycle: state.cycle,
            eval_seconds,
            latch_seconds: t1.elapsed().as_secs_f64(),
            busy_seconds: run.busy,
            threads: run.threads,
            tasks: run.tasks,
            lifts: slots.lifts.into_inner(),
            batched: slots.batched.into_inner(),
        };
        Ok(())
    }
}

/// The D rings carried into the next cycle: each whose variance (tracked from this cycle's actual
/// lifts and carries) is within its flip-flop's budget; the others are lifted next cycle. Decided the
/// same on every place (variances and which rings exist are known everywhere); a place keeps the
/// rings of the flip-flops it holds and a placeholder for the others'.
fn carry_rings<B: Backend>(
    v: &View<'_, B>,
    exec: &dyn Executor<B>,
    slots: &Slots<B>,
    carried: &Carried<B>,
) -> Result<Carried<B>, CircuitError> {
    let rv = carried_ring_vars(v.c, v.plan, carried);
    let n = v.c.dffs().len();
    let mut next = Carried {
        rings: Vec::with_capacity(n),
        vars: Vec::with_capacity(n),
    };
    for (k, d) in v.c.dffs().iter().enumerate() {
        let slot = &slots.rings[d.d as usize];
        let var = rv.get(d.d as usize).copied().unwrap_or(f64::INFINITY);
        let exists = exec.ring_exists(d.d).unwrap_or(slot.get().is_some());
        let ring = if !(exists && v.plan.within_budget(k, var)) {
            None
        } else if exec.holds_dff(k) {
            Some(got(slot, "carried ring")?.clone())
        } else {
            Some(v.b.ring_constant(false))
        };
        next.vars.push(if ring.is_some() { var } else { 0.0 });
        next.rings.push(ring);
    }
    Ok(next)
}

/// The slots one cycle's tasks fill, each written once by the task that produces it: every node's
/// bit and ring, every CMUX memory's address selectors and RAM write values, the MUX plan's selects,
/// and the counts of lifts and of tasks run in batches.
struct Slots<B: Backend> {
    values: Vec<OnceLock<B::Bit>>,
    rings: Vec<OnceLock<B::Ring>>,
    sels: Vec<Vec<OnceLock<B::Sel>>>,
    msels: Vec<OnceLock<B::Sel>>,
    wvals: Vec<Vec<OnceLock<B::WriteVal>>>,
    kept: Vec<Vec<OnceLock<B::Ring>>>,
    ram_parts: Vec<Vec<OnceLock<B::Ring>>>,
    lifts: AtomicUsize,
    batched: AtomicUsize,
}

impl<B: Backend> Slots<B> {
    /// Empty slots with the sources filled in: inputs, constants, the flip-flops this place holds
    /// (the others' values arrive, if needed), and the rings of the constants the plan uses as rings.
    fn new(v: &View<'_, B>, state: &State<B>, holds_dff: impl Fn(usize) -> bool) -> Self {
        let (c, b, plan) = (v.c, v.b, v.plan);
        let values: Vec<OnceLock<B::Bit>> = (0..c.nodes.len()).map(|_| OnceLock::new()).collect();
        let rings: Vec<OnceLock<B::Ring>> = (0..c.nodes.len()).map(|_| OnceLock::new()).collect();
        for (i, n) in c.nodes.iter().enumerate() {
            let v = match n {
                Node::Input(k) => state.inputs[*k as usize].clone(),
                Node::Const(v) => {
                    if plan.ring[i] {
                        let _ = rings[i].set(b.ring_constant(*v));
                    }
                    b.constant(*v)
                }
                Node::Dff(k) if holds_dff(*k as usize) => state.dffs[*k as usize].clone(),
                _ => continue,
            };
            let _ = values[i].set(v);
        }
        Slots {
            sels: per_cmux_memory(c, |m| m.addr.len()),
            wvals: per_cmux_memory(c, |m| m.wdata.len()),
            kept: per_cmux_memory(c, |m| m.rdata.len()),
            ram_parts: (0..c.mems.len())
                .map(|m| {
                    let k = match ram_parts(c, v.tasks.grain, m) {
                        1 => 0,
                        p => p * c.mems[m].rdata.len(),
                    };
                    (0..k).map(|_| OnceLock::new()).collect()
                })
                .collect(),
            msels: plan.sel_nodes.iter().map(|_| OnceLock::new()).collect(),
            values,
            rings,
            lifts: AtomicUsize::new(0),
            batched: AtomicUsize::new(0),
        }
    }

    /// The tasks' view of these slots.
    fn ctx<'a>(
        &'a self,
        v: &View<'a, B>,
        carried: &'a Carried<B>,
        mems: &'a [MemState<B>],
    ) -> Ctx<'a, B> {
        Ctx {
            c: v.c,
            b: v.b,
            plan: v.plan,
            values: &self.values,
            rings: &self.rings,
            dff_rings: &carried.rings,
            lifts: &self.lifts,
            batched: &self.batched,
            sels: &self.sels,
            msels: &self.msels,
            batches: &v.tasks.batches,
            wvals: &self.wvals,
            kept: &self.kept,
            ram_parts: &self.ram_parts,
            mems,
        }
    }
}

/// `n(m)` empty slots for each CMUX memory `m` (none for MUX memories).
fn per_cmux_memory<T>(c: &Circuit, n: impl Fn(&MemBlock) -> usize) -> Vec<Vec<OnceLock<T>>> {
    c.memories()
        .iter()
        .map(|m| {
            let k = if m.spec.imp == MemImpl::Cmux { n(m) } else { 0 };
            (0..k).map(|_| OnceLock::new()).collect()
        })
        .collect()
}
