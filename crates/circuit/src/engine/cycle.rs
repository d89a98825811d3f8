//! One cycle: the combinational DAG (its tasks run by the [`super::executor`]), then the clock edge —
//! flip-flops latch their D inputs, RAMs take their writes (read-before-write), and the rings of the
//! flip-flops the MUX plan carries are kept while within their noise budget.

use std::sync::atomic::AtomicUsize;
use std::sync::OnceLock;
use std::time::Instant;

use super::executor::{self, internal, Ctx};
use super::{CycleStats, Engine, MemState, State};
use crate::backend::Backend;
use crate::blueprint::MemImpl;
use crate::circuit::{Circuit, MemBlock, Node};
use crate::error::CircuitError;
use crate::leveled::MuxPlan;

impl<B: Backend> Engine<B> {
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

    /// Evaluates the DAG and latches, without touching the cycle counter.
    pub(super) fn cycle_inner(&mut self, tick: &mut dyn FnMut(usize)) -> Result<(), CircuitError> {
        #[cfg(feature = "mpi")]
        if self.dist.is_some() {
            return crate::mpi::cycle(self, tick);
        }
        let t0 = Instant::now();
        let slots = Slots::new(&self.circuit, &self.backend, &self.plan, &self.state);
        let ctx = Ctx {
            c: &self.circuit,
            b: &self.backend,
            plan: &self.plan,
            values: &slots.values,
            rings: &slots.rings,
            dff_rings: &self.dff_rings,
            lifts: &slots.lifts,
            sels: &slots.sels,
            msels: &slots.msels,
            batches: &self.batches,
            wvals: &slots.wvals,
            mems: &self.state.mems,
        };
        let (busy, threads) =
            executor::run_tasks(&ctx, &self.tasks, &self.graph, self.threads, tick)?;
        let eval_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let mut outputs = Vec::new();
        for p in self.circuit.outputs() {
            for &n in &p.bits {
                outputs.push(ctx.get(n)?.clone());
            }
        }
        let dffs = self
            .circuit
            .dffs()
            .iter()
            .map(|d| ctx.get(d.d).cloned())
            .collect::<Result<Vec<_>, _>>()?;
        let lifts = self.clock_edge(slots, dffs)?;
        self.state.outputs = Some(outputs);
        self.last = CycleStats {
            cycle: self.state.cycle,
            eval_seconds,
            latch_seconds: t1.elapsed().as_secs_f64(),
            busy_seconds: busy,
            threads,
            tasks: self.tasks.len(),
            lifts,
        };
        Ok(())
    }

    /// The clock edge: the flip-flops take `dffs` (their D inputs), each CMUX RAM takes its write,
    /// and the D rings within their budget are carried into the next cycle. Returns the cycle's lifts.
    fn clock_edge(&mut self, slots: Slots<B>, dffs: Vec<B::Bit>) -> Result<usize, CircuitError> {
        let c = &*self.circuit;
        for (m, (sel, wv)) in slots.sels.iter().zip(slots.wvals).enumerate() {
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
                self.backend.ram_write(ram, &addr, &vals, self.threads)?;
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
                .then(|| slots.rings[d.d as usize].get().cloned())
                .flatten();
            dff_ring_var.push(if ring.is_some() { v } else { 0.0 });
            dff_rings.push(ring);
        }
        self.state.dffs = dffs;
        self.dff_rings = dff_rings;
        self.dff_ring_var = dff_ring_var;
        Ok(slots.lifts.into_inner())
    }
}

/// The slots one cycle's tasks fill, each written once by the task that produces it: every node's
/// bit and ring, every CMUX memory's address selectors and RAM write values, the MUX plan's selects,
/// and the count of lifts.
struct Slots<B: Backend> {
    values: Vec<OnceLock<B::Bit>>,
    rings: Vec<OnceLock<B::Ring>>,
    sels: Vec<Vec<OnceLock<B::Sel>>>,
    msels: Vec<OnceLock<B::Sel>>,
    wvals: Vec<Vec<OnceLock<B::WriteVal>>>,
    lifts: AtomicUsize,
}

impl<B: Backend> Slots<B> {
    /// Empty slots with the sources filled in: inputs, constants, flip-flops, and the rings of the
    /// constants the plan uses as rings.
    fn new(c: &Circuit, b: &B, plan: &MuxPlan, state: &State<B>) -> Self {
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
                Node::Dff(k) => state.dffs[*k as usize].clone(),
                _ => continue,
            };
            let _ = values[i].set(v);
        }
        Slots {
            sels: per_cmux_memory(c, |m| m.addr.len()),
            wvals: per_cmux_memory(c, |m| m.wdata.len()),
            msels: plan.sel_nodes.iter().map(|_| OnceLock::new()).collect(),
            values,
            rings,
            lifts: AtomicUsize::new(0),
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
