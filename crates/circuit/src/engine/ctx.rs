//! What each task of a cycle does ([`Ctx::exec`]) over the cycle's slots. Where and when a task runs
//! is the executor's business ([`super::executor`]); what it reads and writes is stated once in the
//! task table ([`super::tasks::facts`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::tasks::{span, Task};
use super::MemState;
use crate::backend::{Backend, Boot, Booted};
use crate::blueprint::MemKind;
use crate::circuit::{Circuit, Node, NodeId};
use crate::error::CircuitError;
use crate::leveled::MuxPlan;

/// An internal error of the evaluator (a value the task order guarantees is missing): a bug, never
/// the input's fault.
pub(crate) fn internal(what: &str) -> CircuitError {
    CircuitError::Backend(format!("internal evaluation error: {what}"))
}

/// The slots of one cycle and what the tasks need to fill them (shared by every worker thread).
pub(crate) struct Ctx<'a, B: Backend> {
    pub(crate) c: &'a Circuit,
    pub(crate) b: &'a B,
    pub(crate) plan: &'a MuxPlan,
    pub(crate) values: &'a [OnceLock<B::Bit>],
    pub(crate) rings: &'a [OnceLock<B::Ring>],
    pub(crate) dff_rings: &'a [Option<B::Ring>],
    pub(crate) lifts: &'a AtomicUsize,
    /// Tasks run in batches ([`Ctx::exec_batch`]).
    pub(crate) batched: &'a AtomicUsize,
    pub(crate) sels: &'a [Vec<OnceLock<B::Sel>>],
    pub(crate) msels: &'a [OnceLock<B::Sel>],
    pub(crate) batches: &'a [Vec<u32>],
    pub(crate) wvals: &'a [Vec<OnceLock<B::WriteVal>>],
    /// Per CMUX RAM and data bit, what its read keeps for the write ([`Backend::ram_read_keep`]):
    /// set by the read task before the bit it reads, so a write-value task, which reads that bit,
    /// finds it when they run in one place (elsewhere it finds none and the write reads again).
    pub(crate) kept: &'a [Vec<OnceLock<B::Ring>>],
    /// Per CMUX RAM read in parts: part `part` of data bit `bit` at `part * data_width + bit`.
    pub(crate) ram_parts: &'a [Vec<OnceLock<B::Ring>>],
    pub(crate) mems: &'a [MemState<B>],
}

impl<B: Backend> Ctx<'_, B> {
    /// Node `id`'s bit (an internal error before its task ran).
    pub(crate) fn get(&self, id: NodeId) -> Result<&B::Bit, CircuitError> {
        self.slot(self.values, id, "value")
    }
    /// Stores node `id`'s bit (the first value stored stays).
    pub(crate) fn set(&self, id: NodeId, v: B::Bit) {
        fill(self.values, id, v);
    }
    /// Node `id`'s ring (an internal error before its task ran).
    pub(crate) fn ring(&self, id: NodeId) -> Result<&B::Ring, CircuitError> {
        self.slot(self.rings, id, "ring")
    }
    /// Stores node `id`'s ring (the first ring stored stays).
    pub(crate) fn set_ring(&self, id: NodeId, r: B::Ring) {
        fill(self.rings, id, r);
    }
    fn slot<'s, T>(
        &self,
        slots: &'s [OnceLock<T>],
        id: NodeId,
        what: &str,
    ) -> Result<&'s T, CircuitError> {
        slots
            .get(id as usize)
            .and_then(OnceLock::get)
            .ok_or_else(|| internal(&format!("{what} of {} missing", self.c.node_name(id))))
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
    /// Memory `mem`'s address selectors (an internal error before they are made).
    pub(crate) fn addr(&self, mem: usize) -> Result<Vec<&B::Sel>, CircuitError> {
        self.sels
            .get(mem)
            .ok_or_else(|| internal("memory out of range"))?
            .iter()
            .map(|s| got(s, "address selector"))
            .collect()
    }
    /// Memory `mem`'s address selector slots (some may be empty: a place may make only some).
    fn addr_bits(&self, mem: usize) -> Result<&[OnceLock<B::Sel>], CircuitError> {
        self.sels
            .get(mem)
            .map(Vec::as_slice)
            .ok_or_else(|| internal("memory out of range"))
    }
    /// Most threads task `t` can use at once: a batch of circuit bootstraps can be split
    /// ([`Backend::select_threads`]), at most one thread per bit (each bit's rotation on a thread of
    /// its own; splitting one rotation over two threads, as vsp-tfhe can for a batch smaller than
    /// its threads, is left out: it hung once under load, BENCHMARKS.md "engine over MPI"); every
    /// other task runs on its own thread.
    pub(crate) fn wide(&self, t: Task) -> usize {
        let bits = match t {
            Task::MuxSels(b) => self.batches.get(b as usize).map_or(1, Vec::len),
            Task::Select { count, .. } => count as usize,
            _ => return 1,
        };
        self.b.select_threads().min(bits).max(1)
    }
    /// Whether task `t` is bootstraps that may run in a batch with others ([`Self::exec_batch`]): a
    /// two-input gate, a cell, a gate MUX, a lift of a bit whose ring is not carried over from the
    /// last cycle, a CMUX whose refreshed bit is lifted, a RAM read's extraction, a RAM write value.
    pub(crate) fn batchable(&self, t: Task) -> bool {
        match t {
            Task::Node(id) => {
                matches!(
                    self.c.nodes.get(id as usize),
                    Some(Node::Gate(..) | Node::Cell { .. } | Node::Mux { .. })
                ) && !self.plan.is_fused_select(id)
            }
            Task::Lift(id) => self.carried_ring(id).is_none(),
            Task::Cmux(id) => {
                let i = id as usize;
                self.plan.refresh.get(i).copied().unwrap_or(false)
                    && self.plan.ring.get(i).copied().unwrap_or(false)
            }
            Task::RamRead { .. } | Task::WriteVal { .. } => true,
            _ => false,
        }
    }
    /// The ring node `id` (a flip-flop) carries over from the last cycle, if any.
    fn carried_ring(&self, id: NodeId) -> Option<&B::Ring> {
        match self.c.nodes.get(id as usize) {
            Some(Node::Dff(k)) => self.dff_rings.get(*k as usize).and_then(Option::as_ref),
            _ => None,
        }
    }
    /// Runs batchable tasks ([`Self::batchable`], independent of each other) with their bootstraps
    /// in one batch ([`Backend::boot_batch`]), and the lifts of the gate MUXes refreshed before
    /// their ring in a second: the same slots filled with the same values as [`Self::exec`] of each.
    /// A CMUX runs its CMUX and extraction first, a RAM read its CMUX tree (a read the backend
    /// cannot split runs whole, [`Backend::ram_read_tree`]).
    pub(crate) fn exec_batch(&self, ts: &[Task]) -> Result<(), CircuitError> {
        // What a task makes before its bootstrap: a refreshed CMUX's bit, a RAM read's tree.
        let mut made: Vec<Made<B>> = Vec::with_capacity(ts.len());
        for &t in ts {
            made.push(match t {
                Task::Cmux(id) => {
                    let r = self.cmux_ring(id)?;
                    Made::Bit(self.b.extract(&r)?)
                }
                Task::RamRead { mem, bit } => {
                    let MemState::Ram(ram) = &self.mems[mem as usize] else {
                        return Err(internal("RAM state missing"));
                    };
                    match self
                        .b
                        .ram_read_tree(ram, &self.addr(mem as usize)?, bit as usize)?
                    {
                        Some(tree) => Made::Tree(tree),
                        None => {
                            self.exec(t, 1)?;
                            Made::Done
                        }
                    }
                }
                _ => Made::Nothing,
            });
        }
        // Each task's level-0 inputs (the jobs borrow them).
        let mut ins: Vec<Vec<&B::Bit>> = Vec::with_capacity(ts.len());
        for (&t, m) in ts.iter().zip(&made) {
            let nodes = match (t, m) {
                (_, Made::Done | Made::Bit(_) | Made::Tree(_)) => Vec::new(),
                (Task::Node(id), _) => match &self.c.nodes[id as usize] {
                    Node::Gate(_, x, y) => vec![*x, *y],
                    Node::Cell { spec, ins } => ins[..spec.arity()].to_vec(),
                    Node::Mux { s, a, b } => vec![*s, *a, *b],
                    _ => return Err(internal("a batched task that is no bootstrap")),
                },
                (Task::Lift(id), _) => vec![id],
                (Task::WriteVal { mem, bit }, _) => {
                    let m = &self.c.mems[mem as usize];
                    let we = m.wren.ok_or_else(|| internal("RAM without wren"))?;
                    vec![we, m.wdata[bit as usize], m.rdata[bit as usize]]
                }
                _ => return Err(internal("a batched task that is no bootstrap")),
            };
            ins.push(
                nodes
                    .into_iter()
                    .map(|x| self.get(x))
                    .collect::<Result<_, _>>()?,
            );
        }
        let mut jobs = Vec::with_capacity(ts.len());
        for ((&t, xs), m) in ts.iter().zip(&ins).zip(&made) {
            jobs.push(match (t, m) {
                (_, Made::Done) => continue,
                (_, Made::Bit(bit)) => Boot::Lift(bit),
                (_, Made::Tree(tree)) => Boot::ReadOut(tree),
                (Task::Node(id), _) => {
                    let i = id as usize;
                    let ring = self.plan.ring[i];
                    match &self.c.nodes[i] {
                        Node::Gate(kind, ..) => Boot::Gate {
                            kind: *kind,
                            a: xs[0],
                            b: xs[1],
                            ring,
                        },
                        Node::Cell { spec, .. } => Boot::Cell {
                            spec,
                            ins: xs,
                            ring,
                        },
                        // A MUX refreshed before its ring is made a bit (its lift comes after).
                        Node::Mux { .. } => Boot::Mux {
                            s: xs[0],
                            a: xs[1],
                            b: xs[2],
                            ring: ring && !self.plan.refresh[i],
                        },
                        _ => return Err(internal("a batched task that is no bootstrap")),
                    }
                }
                (Task::Lift(_), _) => Boot::Lift(xs[0]),
                (Task::WriteVal { mem, bit }, _) => Boot::WriteValue {
                    wren: xs[0],
                    wdata: xs[1],
                    rdata: xs[2],
                    kept: at(self.kept, mem, bit).ok().and_then(OnceLock::get),
                },
                _ => return Err(internal("a batched task that is no bootstrap")),
            });
        }
        let mut outs = self.b.boot_batch(&jobs)?.into_iter();
        if jobs.len() > 1 {
            self.batched.fetch_add(jobs.len(), Ordering::Relaxed);
        }
        drop(jobs);
        // Gate MUXes refreshed before their ring: (node, bit), lifted in a second batch.
        let mut refreshed: Vec<(NodeId, B::Bit)> = Vec::new();
        for (&t, m) in ts.iter().zip(made) {
            if matches!(m, Made::Done) {
                continue;
            }
            let out = outs
                .next()
                .ok_or_else(|| internal("a batch of bootstraps lost results"))?;
            match (t, m, out) {
                (Task::Cmux(id), Made::Bit(bit), Booted::Ring(r)) => {
                    self.set_ring(id, r);
                    if self.plan.tlwe[id as usize] {
                        self.set(id, bit);
                    }
                }
                (Task::RamRead { mem, bit }, Made::Tree(tree), Booted::Ring(r)) => {
                    if let Ok(slot) = at(self.kept, mem, bit) {
                        let _ = slot.set(tree);
                    }
                    self.set_from_ring(self.c.mems[mem as usize].rdata[bit as usize], r)?;
                }
                (Task::Lift(id), _, Booted::Ring(r)) => {
                    self.lifts.fetch_add(1, Ordering::Relaxed);
                    self.set_ring(id, r);
                }
                (Task::Node(id), _, Booted::Ring(r)) => self.set_from_ring(id, r)?,
                (Task::Node(id), _, Booted::Bit(v)) => {
                    let i = id as usize;
                    let mux = matches!(self.c.nodes[i], Node::Mux { .. });
                    if mux && self.plan.ring[i] && self.plan.refresh[i] {
                        refreshed.push((id, v));
                    } else {
                        self.set(id, v);
                    }
                }
                (Task::WriteVal { mem, bit }, _, Booted::WriteVal(v)) => {
                    let _ = at(self.wvals, mem, bit)?.set(v);
                }
                _ => return Err(internal("a batched bootstrap of the wrong form")),
            }
        }
        if refreshed.is_empty() {
            return Ok(());
        }
        let lifts: Vec<_> = refreshed.iter().map(|(_, v)| Boot::Lift(v)).collect();
        let rings = self.b.boot_batch(&lifts)?;
        if rings.len() != refreshed.len() {
            return Err(internal("a batch of lifts lost results"));
        }
        for ((id, v), r) in refreshed.into_iter().zip(rings) {
            let Booted::Ring(r) = r else {
                return Err(internal("a lift of the wrong form"));
            };
            self.set_ring(id, r);
            if self.plan.tlwe[id as usize] {
                self.set(id, v);
            }
        }
        Ok(())
    }
    /// The CMUX of MUX node `id` on rings with its select (before any extraction or refresh).
    fn cmux_ring(&self, id: NodeId) -> Result<B::Ring, CircuitError> {
        let Node::Mux { s, a, b: y } = self.c.nodes[id as usize] else {
            return Err(internal("CMUX task on a non-MUX node"));
        };
        let slot = self.plan.sel_slot[s as usize];
        let sel = self
            .msels
            .get(slot as usize)
            .and_then(OnceLock::get)
            .ok_or_else(|| internal("MUX select missing"))?;
        self.b.cmux(sel, self.ring(a)?, self.ring(y)?)
    }
    /// Runs task `t` on up to `lanes` threads (its own and `lanes − 1` idle ones a scheduler lends
    /// it; only [`Self::wide`] tasks use more than one). The values are the same on any number.
    pub(crate) fn exec(&self, t: Task, lanes: usize) -> Result<(), CircuitError> {
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
                    // A select its circuit bootstrap decides: only the linear combination.
                    Node::Gate(k, x, y) if self.plan.is_fused_select(id) => {
                        self.set(id, b.gate_linear(k, self.get(x)?, self.get(y)?)?)
                    }
                    Node::Gate(k, x, y) if ring => {
                        let r = b.gate_ring(k, self.get(x)?, self.get(y)?)?;
                        self.set_from_ring(id, r)?;
                    }
                    Node::Gate(k, x, y) => self.set(id, b.gate(k, self.get(x)?, self.get(y)?)?),
                    Node::Cell { spec, ins } => {
                        let xs = ins[..spec.arity()]
                            .iter()
                            .map(|&x| self.get(x))
                            .collect::<Result<Vec<_>, _>>()?;
                        if self.plan.is_fused_select(id) {
                            self.set(id, b.cell_linear(&spec, &xs)?);
                        } else if ring {
                            self.set_from_ring(id, b.cell_ring(&spec, &xs)?)?;
                        } else {
                            self.set(id, b.cell(&spec, &xs)?);
                        }
                    }
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
                // Selects the plan refreshes first: a gate bootstrap (identity test value) and an
                // extraction make their level-0 bits fresh, so their circuit bootstraps decide
                // within the bound.
                let fresh = slots
                    .iter()
                    .filter(|&&s| self.plan.is_fresh_select(s))
                    .map(|&s| {
                        let bit = self.get(self.plan.sel_nodes[s as usize])?;
                        b.extract(&b.lift(bit)?)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut fresh = fresh.iter();
                let bits = slots
                    .iter()
                    .map(|&s| {
                        if self.plan.is_fresh_select(s) {
                            fresh
                                .next()
                                .ok_or_else(|| internal("select refresh missing"))
                        } else {
                            self.get(self.plan.sel_nodes[s as usize])
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let lanes = lanes.min(bits.len());
                // A batch has one gadget: the low-noise selects take the RAM's.
                let low = slots
                    .first()
                    .is_some_and(|&s| self.plan.is_low_noise_select(s));
                let sels = match (low, lanes > 1) {
                    (false, true) => b.select_batch_on(&bits, lanes)?,
                    (false, false) => b.select_batch(&bits)?,
                    (true, true) => b.ram_select_batch_on(&bits, lanes)?,
                    (true, false) => b.ram_select_batch(&bits)?,
                };
                for (&s, sel) in slots.iter().zip(sels) {
                    let _ = self.msels[s as usize].set(sel);
                }
            }
            Task::Cmux(id) => {
                let r = self.cmux_ring(id)?;
                if self.plan.refresh[id as usize] {
                    self.set_refreshed(id, b.extract(&r)?)?;
                } else {
                    self.set_from_ring(id, r)?;
                }
            }
            Task::Lift(id) => {
                let r = match self.carried_ring(id) {
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
                let lanes = lanes.min(bits.len());
                let sels = match (m.spec.kind, lanes > 1) {
                    (MemKind::Ram, false) => b.ram_select_batch(&bits)?,
                    (MemKind::Ram, true) => b.ram_select_batch_on(&bits, lanes)?,
                    (MemKind::Rom, false) => b.select_batch(&bits)?,
                    (MemKind::Rom, true) => b.select_batch_on(&bits, lanes)?,
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
                let (v, kept) = b.ram_read_keep(ram, &self.addr(mem as usize)?, bit as usize)?;
                if let (Some(k), Ok(slot)) = (kept, at(self.kept, mem, bit)) {
                    let _ = slot.set(k);
                }
                self.set_from_ring(self.c.mems[mem as usize].rdata[bit as usize], v)?;
            }
            Task::RamPart { mem, part, parts } => {
                let MemState::Ram(ram) = &self.mems[mem as usize] else {
                    return Err(internal("RAM state missing"));
                };
                // Only the low selectors: a place holding a part may get the high ones later.
                let addr = self.addr_bits(mem as usize)?;
                let high = parts.trailing_zeros() as usize;
                let low = addr
                    .len()
                    .checked_sub(high)
                    .ok_or_else(|| internal("RAM parts"))?;
                let low_sels = addr[..low]
                    .iter()
                    .map(|s| got(s, "address selector"))
                    .collect::<Result<Vec<_>, _>>()?;
                let w = self.c.mems[mem as usize].rdata.len();
                let first = (part as usize) << low;
                for bit in 0..w {
                    let r = b.ram_read_part(ram, &low_sels, first, bit)?;
                    let _ = at(self.ram_parts, mem, part * w as u32 + bit as u32)?.set(r);
                }
            }
            Task::RamJoin { mem, bit, parts } => {
                let w = self.c.mems[mem as usize].rdata.len() as u32;
                let addr = self.addr_bits(mem as usize)?;
                let high = parts.trailing_zeros() as usize;
                let low = addr
                    .len()
                    .checked_sub(high)
                    .ok_or_else(|| internal("RAM parts"))?;
                let high_sels = addr[low..]
                    .iter()
                    .map(|s| got(s, "address selector"))
                    .collect::<Result<Vec<_>, _>>()?;
                let ps = (0..parts)
                    .map(|part| got(at(self.ram_parts, mem, part * w + bit)?, "RAM read part"))
                    .collect::<Result<Vec<_>, _>>()?;
                let (v, kept) = b.ram_read_join(&ps, &high_sels)?;
                if let (Some(k), Ok(slot)) = (kept, at(self.kept, mem, bit)) {
                    let _ = slot.set(k);
                }
                self.set_from_ring(self.c.mems[mem as usize].rdata[bit as usize], v)?;
            }
            Task::WriteVal { mem, bit } => {
                let m = &self.c.mems[mem as usize];
                let we = m.wren.ok_or_else(|| internal("RAM without wren"))?;
                let v = b.ram_write_value_keep(
                    self.get(we)?,
                    self.get(m.wdata[bit as usize])?,
                    self.get(m.rdata[bit as usize])?,
                    at(self.kept, mem, bit).ok().and_then(OnceLock::get),
                )?;
                let _ = at(self.wvals, mem, bit)?.set(v);
            }
        }
        Ok(())
    }
}

/// What a task of a batch makes before its bootstrap ([`Ctx::exec_batch`]).
enum Made<B: Backend> {
    /// Nothing: its bootstrap reads level-0 bits from the slots.
    Nothing,
    /// A refreshed CMUX's extracted bit, to lift.
    Bit(B::Bit),
    /// A RAM read's CMUX tree, to read out.
    Tree(B::Ring),
    /// The whole task (a read the backend does not split).
    Done,
}

/// Stores `v` in slot `id` unless it holds a value already.
fn fill<T>(slots: &[OnceLock<T>], id: NodeId, v: T) {
    if let Some(slot) = slots.get(id as usize) {
        let _ = slot.set(v);
    }
}

/// The slot of a memory's value `bit` (a selector, a write value).
pub(crate) fn at<T>(
    slots: &[Vec<OnceLock<T>>],
    mem: u32,
    bit: u32,
) -> Result<&OnceLock<T>, CircuitError> {
    slots
        .get(mem as usize)
        .and_then(|v| v.get(bit as usize))
        .ok_or_else(|| internal("memory value out of range"))
}

/// The value in `slot` (an internal error when its task has not run).
pub(crate) fn got<'s, T>(slot: &'s OnceLock<T>, what: &str) -> Result<&'s T, CircuitError> {
    slot.get()
        .ok_or_else(|| internal(&format!("{what} missing")))
}
