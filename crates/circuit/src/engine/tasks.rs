//! The task table: one cycle of a circuit under a MUX plan as a list of tasks in topological order,
//! with every task's facts — its kind, its cost, the values it reads and the values it writes
//! ([`Facts`]) — from one function ([`facts`]) that the list scheduler's graph, the distributed
//! partition and the cost model all read; and the batches of MUX selects circuit-bootstrapped together.
//!
//! What a task *does* is in `ctx` ([`super::Ctx::exec`]); adding a kind of task (or of gate) means
//! one arm there and one arm in [`facts`].

use std::collections::HashMap;

use crate::backend::{Backend, TaskKind};
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::{Circuit, Node, NodeId, Step};
use crate::leveled::{MuxPlan, NO_SLOT};
use crate::schedule::TaskGraph;

/// One unit of scheduled work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Task {
    Node(NodeId),
    /// Circuit-bootstraps the MUX plan's selects of batch number `b` ([`TaskSet::batches`]).
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
    /// Part `part` of `parts` of every read of a RAM spread over places ([`Grain::ram_parts`]): the
    /// CMUX trees of every data bit over the part's words (held where the part is).
    RamPart {
        mem: u32,
        part: u32,
        parts: u32,
    },
    /// Data bit `bit` of a spread RAM's read, joined from its `parts` parts.
    RamJoin {
        mem: u32,
        bit: u32,
        parts: u32,
    },
    WriteVal {
        mem: u32,
        bit: u32,
    },
}

/// A value of one cycle that a task writes (once) and others read: what fills the cycle's slots
/// (`cycle::Slots`) and what crosses between processes of a distributed executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Item {
    /// A node's level-0 bit.
    Bit(NodeId),
    /// A node's ring (see [`crate::leveled`]).
    Ring(NodeId),
    /// The selector of address bit `bit` of memory `mem` (a TRGSW in TFHE).
    Sel { mem: u32, bit: u32 },
    /// The clock-edge write value of data bit `bit` of RAM `mem`.
    WriteVal { mem: u32, bit: u32 },
    /// The circuit-bootstrapped select of MUX-plan slot `n` (made and used in one process).
    MuxSel(u32),
    /// Part `part` of the read tree of data bit `bit` of a spread RAM `mem` (a ring).
    RamPart { mem: u32, part: u32, bit: u32 },
}

/// The facts of one task.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Facts {
    pub(crate) kind: TaskKind,
    /// `task_cost(kind)` times the task's share of that kind (a batch of selects, part of a ROM word).
    pub(crate) cost: f64,
    /// What it reads and writes, ascending, without repeats.
    pub(crate) reads: Vec<Item>,
    pub(crate) writes: Vec<Item>,
}

/// Most selects circuit-bootstrapped in one task: a batch streams the private key-switching key once.
pub(crate) const SELECT_BATCH: usize = 8;

/// How finely a cycle is cut into tasks (an executor may cut finer, e.g. a distributed one on many
/// processes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grain {
    /// MUX selects per circuit-bootstrapping batch.
    pub(crate) select_batch: usize,
    /// Memory address bits per circuit-bootstrapping task.
    pub(crate) mem_select: usize,
    /// ROM data bits per read task.
    pub(crate) rom_bits: usize,
    /// Parts a CMUX RAM's words are cut into (a power of two; 1: the RAM is read and written whole,
    /// by one place). Each part is held by one place, which reads its words' trees
    /// ([`Task::RamPart`]) and writes its words at the clock edge; a read joins the parts
    /// ([`Task::RamJoin`]).
    pub(crate) ram_parts: usize,
}

/// The single-process engine's tasks on one thread: batches of [`SELECT_BATCH`], a memory's address
/// and a ROM read each one task ([`Grain::on_threads`] for more threads).
pub(crate) const ENGINE_GRAIN: Grain = Grain {
    select_batch: SELECT_BATCH,
    mem_select: usize::MAX,
    rom_bits: usize::MAX,
    ram_parts: 1,
};

impl Grain {
    /// This grain for a place running `threads` worker threads: a memory's address bits in about
    /// `threads` tasks of at least `SELECT_BATCH / threads` bits (its circuit bootstraps would
    /// otherwise sit on one thread, ahead of every read of the memory; a batch shares one pass over
    /// the private key-switching key, so the tasks are no smaller than needed).
    pub(crate) fn on_threads(self, threads: usize) -> Grain {
        if threads <= 1 {
            return self;
        }
        Grain {
            mem_select: self.mem_select.min((SELECT_BATCH / threads).max(1)),
            ..self
        }
    }
}

/// One cycle's tasks with their facts, the scheduler graph built from those facts and the MUX select
/// batches.
#[derive(Clone, Debug)]
pub(crate) struct TaskSet {
    pub(crate) grain: Grain,
    /// In topological order.
    pub(crate) tasks: Vec<Task>,
    pub(crate) facts: Vec<Facts>,
    /// Predecessors: the writer of every item a task reads; priorities: upward ranks over the costs.
    pub(crate) graph: TaskGraph,
    /// MUX-plan select slots circuit-bootstrapped together ([`Task::MuxSels`]).
    pub(crate) batches: Vec<Vec<u32>>,
    /// The task writing each item.
    pub(crate) producer: HashMap<Item, u32>,
}

impl TaskSet {
    /// Number of tasks.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len()
    }
}

/// Parts RAM `m` of `c` is cut into under `grain`: a power of two, at most its words.
pub(crate) fn ram_parts(c: &Circuit, grain: Grain, m: usize) -> usize {
    let mem = &c.mems[m];
    if mem.spec.imp != MemImpl::Cmux || mem.spec.kind != MemKind::Ram {
        return 1;
    }
    let words = 1usize << mem.addr.len().min(usize::BITS as usize - 2);
    let p = grain.ram_parts.max(1);
    let p = if p.is_power_of_two() {
        p
    } else {
        p.next_power_of_two() / 2
    };
    p.min(words)
}

/// `first..first + count` as indices.
pub(crate) fn span(first: u32, count: u32) -> std::ops::Range<usize> {
    let f = first as usize;
    f..f.saturating_add(count as usize)
}

/// The items a result made in ring form (or refreshed) becomes: its bit and its ring, as planned.
fn stored(plan: &MuxPlan, id: NodeId, w: &mut Vec<Item>) {
    if plan.tlwe[id as usize] {
        w.push(Item::Bit(id));
    }
    if plan.ring[id as usize] {
        w.push(Item::Ring(id));
    }
}

/// The kind, cost and items of task `t` (of `c` under `plan`, with select `batches`): the one
/// statement of what each kind of task needs and makes ([`super::Ctx::exec`] does it).
/// A gate's or a cell's task kind: a bootstrap, or (a select its circuit bootstrap decides) only
/// its linear combination, free like a NOT.
fn gate_kind(plan: &MuxPlan, id: NodeId) -> TaskKind {
    if plan.is_fused_select(id) {
        TaskKind::Not
    } else {
        TaskKind::Gate
    }
}

pub(crate) fn facts<B: Backend>(
    c: &Circuit,
    b: &B,
    plan: &MuxPlan,
    batches: &[Vec<u32>],
    t: Task,
) -> Facts {
    let (mut r, mut w) = (Vec::new(), Vec::new());
    let sels = |mem: u32| {
        (0..c.mems[mem as usize].addr.len() as u32).map(move |bit| Item::Sel { mem, bit })
    };
    let (kind, share) = match t {
        Task::Node(id) => {
            let i = id as usize;
            let (tlwe, ring) = (plan.tlwe[i], plan.ring[i]);
            let made = |w: &mut Vec<Item>| {
                if ring {
                    stored(plan, id, w)
                } else {
                    w.push(Item::Bit(id))
                }
            };
            match c.nodes[i] {
                Node::Not(a) => {
                    if tlwe {
                        r.push(Item::Bit(a));
                        w.push(Item::Bit(id));
                    }
                    if ring {
                        r.push(Item::Ring(a));
                        w.push(Item::Ring(id));
                    }
                    (TaskKind::Not, 1.0)
                }
                Node::Gate(_, x, y) => {
                    r.extend([Item::Bit(x), Item::Bit(y)]);
                    made(&mut w);
                    (gate_kind(plan, id), 1.0)
                }
                // A multi-input cell is one bootstrap, like a gate.
                Node::Cell { spec, ins } => {
                    r.extend(ins[..spec.arity()].iter().map(|&x| Item::Bit(x)));
                    made(&mut w);
                    (gate_kind(plan, id), 1.0)
                }
                Node::Mux { s, a, b } => {
                    r.extend([Item::Bit(s), Item::Bit(a), Item::Bit(b)]);
                    made(&mut w);
                    (TaskKind::Mux, 1.0)
                }
                // Sources and memory outputs are never node tasks (the executor refuses them). Every
                // kind of node is named here, so that a new one cannot go without its facts.
                Node::Input(_) | Node::Const(_) | Node::Dff(_) | Node::MemOut { .. } => {
                    (TaskKind::Gate, 0.0)
                }
            }
        }
        Task::MuxSels(bt) => {
            let slots = batches.get(bt as usize).map_or(&[][..], Vec::as_slice);
            r.extend(slots.iter().map(|&s| Item::Bit(plan.sel_nodes[s as usize])));
            w.extend(slots.iter().map(|&s| Item::MuxSel(s)));
            // A batch has one gadget (`task_list`): the circuit's, or the low-noise RAM one.
            let low = slots.first().is_some_and(|&s| plan.is_low_noise_select(s));
            // Selects refreshed first: a bootstrap (a lift's work) and an extraction each.
            let fresh = slots.iter().filter(|&&s| plan.is_fresh_select(s)).count();
            let cost = b.select_cost(slots.len(), low) + fresh as f64 * b.task_cost(TaskKind::Lift);
            return finish_cost(TaskKind::Select, cost, r, w);
        }
        Task::Cmux(id) => {
            let mut low = false;
            if let Node::Mux { s, a, b } = c.nodes[id as usize] {
                r.extend([Item::Ring(a), Item::Ring(b)]);
                let slot = plan.sel_slot[s as usize];
                if slot != NO_SLOT {
                    r.push(Item::MuxSel(slot));
                    low = plan.is_low_noise_select(slot);
                }
            }
            stored(plan, id, &mut w);
            if low {
                // A low-noise select's TRGSW has the RAM's gadget: a RAM CMUX's cost.
                return finish_cost(TaskKind::Cmux, b.ram_cmux_cost(), r, w);
            }
            (TaskKind::Cmux, 1.0)
        }
        Task::Lift(id) => {
            r.push(Item::Bit(id));
            w.push(Item::Ring(id));
            (TaskKind::Lift, 1.0)
        }
        Task::Select { mem, first, count } => {
            let addr = &c.mems[mem as usize].addr;
            r.extend(addr[span(first, count)].iter().map(|&a| Item::Bit(a)));
            w.extend((first..first + count).map(|bit| Item::Sel { mem, bit }));
            let ram = c.mems[mem as usize].spec.kind == MemKind::Ram;
            let cost = b.select_cost(count as usize, ram);
            return finish_cost(TaskKind::Select, cost, r, w);
        }
        Task::RomRead { mem, first, count } => {
            r.extend(sels(mem));
            let m = &c.mems[mem as usize];
            for &n in &m.rdata[span(first, count)] {
                stored(plan, n, &mut w);
            }
            // Its bits' extractions, and the whole tree, which every part of a word runs.
            let cost = b.task_cost(TaskKind::RomRead) * f64::from(count)
                + b.task_cost(TaskKind::Cmux) * b.rom_tree_cmuxes(&m.spec) as f64;
            return finish_cost(TaskKind::RomRead, cost, r, w);
        }
        Task::RamRead { mem, bit } => {
            r.extend(sels(mem));
            let m = &c.mems[mem as usize];
            stored(plan, m.rdata[bit as usize], &mut w);
            // Its extraction, and its tree.
            let cost = b.task_cost(TaskKind::RamRead)
                + b.ram_cmux_cost() * b.ram_tree_cmuxes(&m.spec) as f64;
            return finish_cost(TaskKind::RamRead, cost, r, w);
        }
        Task::RamPart { mem, part, parts } => {
            let m = &c.mems[mem as usize];
            let high = parts.trailing_zeros() as usize;
            let low = m.addr.len().saturating_sub(high);
            r.extend((0..low as u32).map(|bit| Item::Sel { mem, bit }));
            w.extend((0..m.rdata.len() as u32).map(|bit| Item::RamPart { mem, part, bit }));
            // (2^low − 1) CMUXes per data bit.
            let cmuxes = ((1u64 << low) - 1) * m.rdata.len() as u64;
            return finish_cost(TaskKind::Cmux, b.ram_cmux_cost() * cmuxes as f64, r, w);
        }
        Task::RamJoin { mem, bit, parts } => {
            let m = &c.mems[mem as usize];
            let high = parts.trailing_zeros() as usize;
            let low = m.addr.len().saturating_sub(high);
            r.extend((low as u32..m.addr.len() as u32).map(|bit| Item::Sel { mem, bit }));
            r.extend((0..parts).map(|part| Item::RamPart { mem, part, bit }));
            stored(plan, m.rdata[bit as usize], &mut w);
            // The join's parts − 1 CMUXes and the extraction's bootstrap (a lift's work).
            let cost = b.ram_cmux_cost() * f64::from(parts - 1) + b.task_cost(TaskKind::Lift);
            return finish_cost(TaskKind::RamRead, cost, r, w);
        }
        Task::WriteVal { mem, bit } => {
            let m = &c.mems[mem as usize];
            let i = bit as usize;
            r.extend(m.wren.map(Item::Bit));
            r.extend([Item::Bit(m.wdata[i]), Item::Bit(m.rdata[i])]);
            w.push(Item::WriteVal { mem, bit });
            (TaskKind::WriteValue, 1.0)
        }
    };
    finish(b, kind, share, r, w)
}

/// The facts of a task of `kind` worth `share` of that kind's cost.
fn finish<B: Backend>(b: &B, kind: TaskKind, share: f64, r: Vec<Item>, w: Vec<Item>) -> Facts {
    finish_cost(kind, b.task_cost(kind) * share, r, w)
}

/// The facts of a task of `kind` costing `cost` units (reads and writes sorted, without repeats).
fn finish_cost(kind: TaskKind, cost: f64, mut r: Vec<Item>, mut w: Vec<Item>) -> Facts {
    for v in [&mut r, &mut w] {
        v.sort_unstable();
        v.dedup();
    }
    Facts {
        kind,
        cost,
        reads: r,
        writes: w,
    }
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

/// Builds one cycle's [`TaskSet`], cut as `grain` says.
pub(crate) fn build_tasks<B: Backend>(c: &Circuit, b: &B, plan: &MuxPlan, grain: Grain) -> TaskSet {
    let (tasks, batches) = task_list(c, plan, grain);
    let facts: Vec<Facts> = tasks
        .iter()
        .map(|&t| facts(c, b, plan, &batches, t))
        .collect();
    let mut producer = HashMap::new();
    let mut preds = Vec::with_capacity(tasks.len());
    for (t, f) in facts.iter().enumerate() {
        let mut p: Vec<u32> = f
            .reads
            .iter()
            .filter_map(|i| producer.get(i).copied())
            .collect();
        p.sort_unstable();
        p.dedup();
        preds.push(p);
        for &i in &f.writes {
            producer.insert(i, t as u32);
        }
    }
    let cost: Vec<f64> = facts.iter().map(|f| f.cost).collect();
    TaskSet {
        grain,
        graph: TaskGraph::new(&preds, &cost),
        tasks,
        facts,
        batches,
        producer,
    }
}

/// The task list in topological order and the batches of MUX selects.
fn task_list(c: &Circuit, plan: &MuxPlan, grain: Grain) -> (Vec<Task>, Vec<Vec<u32>>) {
    let mut tasks = Vec::new();
    // Nodes whose value exists by now (sources, or their task is listed) and sources lifted.
    let mut made: Vec<bool> = c
        .nodes
        .iter()
        .map(|n| matches!(n, Node::Input(_) | Node::Const(_) | Node::Dff(_)))
        .collect();
    let mut lifted = vec![false; c.nodes.len()];
    // Whether each MUX select is in a batch yet.
    let mut batched = vec![false; plan.sel_nodes.len()];
    let mut batches: Vec<Vec<u32>> = Vec::new();
    // Bootstraps on the longest path to each node: selects of about the same depth are batched.
    let depth = bootstrap_depth(c, plan);
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let i = id as usize;
                // Sources used as rings are lifted once, right before their first ring consumer.
                for x in c.operands(id) {
                    let x = x as usize;
                    if plan.lift[x] && !lifted[x] {
                        lifted[x] = true;
                        tasks.push(Task::Lift(x as NodeId));
                    }
                }
                match c.nodes[i] {
                    Node::Mux { s, .. } if plan.cmux[i] => {
                        let slot = plan.sel_slot[s as usize];
                        debug_assert_ne!(slot, NO_SLOT);
                        if !batched[slot as usize] {
                            // One batch: this select and up to select_batch − 1 others not yet
                            // batched whose values exist by now and are no deeper (so none delays
                            // this one), deepest first, all with this select's gadget.
                            let d = depth[s as usize];
                            let low = plan.is_low_noise_select(slot);
                            let mut others: Vec<(u32, u32)> = (0..plan.sel_nodes.len() as u32)
                                .filter(|&u| u != slot && !batched[u as usize])
                                .filter(|&u| plan.is_low_noise_select(u) == low)
                                .map(|u| (depth[plan.sel_nodes[u as usize] as usize], u))
                                .filter(|&(du, u)| {
                                    du <= d && made[plan.sel_nodes[u as usize] as usize]
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
                            for &u in &members {
                                batched[u as usize] = true;
                            }
                            tasks.push(Task::MuxSels(batches.len() as u32));
                            batches.push(members);
                        }
                        tasks.push(Task::Cmux(id));
                    }
                    _ => tasks.push(Task::Node(id)),
                }
                made[i] = true;
            }
            Step::MemRead(m) => {
                let mem = &c.mems[m as usize];
                for (first, count) in chunks(mem.addr.len(), grain.mem_select) {
                    tasks.push(Task::Select {
                        mem: m,
                        first,
                        count,
                    });
                }
                match mem.spec.kind {
                    MemKind::Rom => {
                        for (first, count) in chunks(mem.rdata.len(), grain.rom_bits) {
                            tasks.push(Task::RomRead {
                                mem: m,
                                first,
                                count,
                            });
                        }
                    }
                    MemKind::Ram => match ram_parts(c, grain, m as usize) as u32 {
                        1 => tasks.extend(
                            (0..mem.rdata.len() as u32).map(|bit| Task::RamRead { mem: m, bit }),
                        ),
                        parts => {
                            tasks.extend((0..parts).map(|part| Task::RamPart {
                                mem: m,
                                part,
                                parts,
                            }));
                            tasks.extend((0..mem.rdata.len() as u32).map(|bit| Task::RamJoin {
                                mem: m,
                                bit,
                                parts,
                            }));
                        }
                    },
                }
                for &r in &mem.rdata {
                    made[r as usize] = true;
                }
            }
        }
    }
    for (m, mem) in c.mems.iter().enumerate() {
        if mem.spec.imp == MemImpl::Cmux && mem.spec.kind == MemKind::Ram {
            tasks.extend(
                (0..mem.wdata.len() as u32).map(|bit| Task::WriteVal { mem: m as u32, bit }),
            );
        }
    }
    (tasks, batches)
}

/// Gate bootstraps on the longest path from the cycle's sources to each node (CMUXes and NOTs add
/// none; a memory read adds one after its address).
pub(super) fn bootstrap_depth(c: &Circuit, plan: &MuxPlan) -> Vec<u32> {
    let mut depth = vec![0u32; c.nodes.len()];
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let i = id as usize;
                let d = |x: NodeId| depth[x as usize];
                // A select its circuit bootstrap decides is no bootstrap of its own.
                let boot = u32::from(!plan.is_fused_select(id));
                depth[i] = match c.nodes[i] {
                    Node::Not(a) => d(a),
                    Node::Gate(_, a, b) => boot + d(a).max(d(b)),
                    Node::Cell { spec, ins } => {
                        boot + ins[..spec.arity()].iter().map(|&x| d(x)).max().unwrap_or(0)
                    }
                    // A select refreshed before its circuit bootstrap is one bootstrap deeper.
                    Node::Mux { s, a, b } if plan.cmux[i] => {
                        let fresh = plan.is_fresh_select(plan.sel_slot[s as usize]);
                        (d(s) + u32::from(fresh)).max(d(a)).max(d(b))
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Blueprint, CircuitError, Engine, PlainBackend};

    /// A 256 × 16 CMUX RAM wired to the ports.
    fn ram() -> Circuit {
        let text = "[[builtin]]\ntype = \"ram\"\nname = \"ram\"\nin_addr_width = 8\n\
                    in_wdata_width = 16\nout_rdata_width = 16\n[connect]\n\"ram/addr\" = \"@addr\"\n\
                    \"ram/wren\" = \"@wren\"\n\"ram/wdata\" = \"@wdata\"\n\"@rdata\" = \"ram/rdata\"\n";
        let bp = Blueprint::from_str_with_resolver(text, |p| {
            Err(CircuitError::Usage(format!("no file {p}")))
        })
        .unwrap();
        Circuit::try_from(&bp).unwrap()
    }

    /// On more threads a memory's address bits are circuit-bootstrapped by several tasks, each read
    /// waits for all of them, and the cycle computes the same.
    #[test]
    fn address_selects_are_cut_by_threads() {
        let c = ram();
        let plan = MuxPlan::gates_only(&c);
        for (threads, want) in [
            (1, vec![8]),
            (2, vec![4, 4]),
            (3, vec![2; 4]),
            (8, vec![1; 8]),
        ] {
            let set = build_tasks(&c, &PlainBackend, &plan, ENGINE_GRAIN.on_threads(threads));
            let selects: Vec<u32> = set
                .tasks
                .iter()
                .filter_map(|t| match *t {
                    Task::Select { count, .. } => Some(count),
                    _ => None,
                })
                .collect();
            assert_eq!(selects, want, "{threads} threads");
            let sel_tasks: Vec<u32> = (0..set.len() as u32)
                .filter(|&t| matches!(set.tasks[t as usize], Task::Select { .. }))
                .collect();
            let reads = (0..set.len())
                .filter(|&t| matches!(set.tasks[t], Task::RamRead { .. }))
                .collect::<Vec<_>>();
            assert_eq!(reads.len(), 16);
            for t in reads {
                let producers: Vec<u32> = set.facts[t]
                    .reads
                    .iter()
                    .filter_map(|i| set.producer.get(i).copied())
                    .collect();
                assert!(
                    sel_tasks.iter().all(|s| producers.contains(s)),
                    "a read must wait for every address select task"
                );
            }
            // The select tasks' cost is the whole address's, however cut.
            let cost: f64 = sel_tasks.iter().map(|&t| set.facts[t as usize].cost).sum();
            assert_eq!(cost, PlainBackend.select_cost(8, true));
        }
        // The engine cuts its table for its threads, and the cycles agree.
        let c = std::sync::Arc::new(c);
        let mut outs = Vec::new();
        for threads in [1, 4] {
            let mut e = Engine::new(PlainBackend, c.clone());
            e.set_threads(threads);
            let selects = e
                .tasks
                .tasks
                .iter()
                .filter(|t| matches!(t, Task::Select { .. }))
                .count();
            assert_eq!(selects, if threads == 1 { 1 } else { 4 });
            let mut o = Vec::new();
            for (addr, wren, wdata) in [(5, 1, 0xBEEF), (9, 1, 0x1234), (5, 0, 7), (9, 0, 0)] {
                e.set_input_value("addr", addr).unwrap();
                e.set_input_value("wren", wren).unwrap();
                e.set_input_value("wdata", wdata).unwrap();
                e.step().unwrap();
                o.push(e.output_value("rdata", 0).unwrap());
            }
            outs.push(o);
        }
        assert_eq!(outs[0], vec![0, 0, 0xBEEF, 0x1234]);
        assert_eq!(outs[0], outs[1]);
    }

    /// The local executor with a RAM cut into `parts` parts (as a distributed executor cuts it).
    struct Spread(usize);
    impl<B: Backend> crate::engine::executor::Executor<B> for Spread {
        fn grain(&self) -> Grain {
            Grain {
                ram_parts: self.0,
                ..ENGINE_GRAIN
            }
        }
        fn run_dag(
            &mut self,
            v: &crate::engine::executor::View<'_, B>,
            ctx: &crate::engine::ctx::Ctx<'_, B>,
            tick: &mut dyn FnMut(usize),
        ) -> Result<crate::engine::executor::DagRun, CircuitError> {
            crate::engine::executor::run_tasks(ctx, &v.tasks.tasks, &v.tasks.graph, v.threads, tick)
        }
    }

    /// A RAM read in parts and joined, and written part by part, computes what the whole RAM does
    /// (64 lanes of different addresses at once), and its tasks say so: a part per range of words
    /// reading the low address selectors, a join per data bit reading every part and the high ones.
    #[test]
    fn a_ram_in_parts_reads_and_writes_as_a_whole() {
        let c = std::sync::Arc::new(ram());
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Per cycle: per lane an address (some repeated), write enable and data, bit-sliced.
        let cycles: Vec<[Vec<u64>; 3]> = (0..24)
            .map(|_| {
                let lanes: Vec<(u64, u64, u64)> = (0..64)
                    .map(|_| (rnd() % 24, rnd() % 2, rnd() & 0xFFFF))
                    .collect();
                let slice = |w: usize, f: &dyn Fn(&(u64, u64, u64)) -> u64| -> Vec<u64> {
                    (0..w)
                        .map(|i| (0..64).map(|l| ((f(&lanes[l]) >> i) & 1) << l).sum())
                        .collect()
                };
                [slice(8, &|t| t.0), slice(1, &|t| t.1), slice(16, &|t| t.2)]
            })
            .collect();
        let mut runs = Vec::new();
        for parts in [1usize, 2, 4, 256] {
            let mut e = Engine::new(PlainBackend, c.clone());
            e.exec = Box::new(Spread(parts));
            e.rebuild_tasks();
            let kinds = |f: fn(&Task) -> bool| e.tasks.tasks.iter().filter(|t| f(t)).count();
            if parts == 1 {
                assert_eq!(kinds(|t| matches!(t, Task::RamRead { .. })), 16);
            } else {
                assert_eq!(kinds(|t| matches!(t, Task::RamPart { .. })), parts);
                assert_eq!(kinds(|t| matches!(t, Task::RamJoin { .. })), 16);
                assert_eq!(kinds(|t| matches!(t, Task::RamRead { .. })), 0);
                let high = parts.trailing_zeros();
                for (t, task) in e.tasks.tasks.iter().enumerate() {
                    let f = &e.tasks.facts[t];
                    let sels: Vec<u32> = f
                        .reads
                        .iter()
                        .filter_map(|i| match i {
                            Item::Sel { bit, .. } => Some(*bit),
                            _ => None,
                        })
                        .collect();
                    match task {
                        Task::RamPart { .. } => {
                            assert_eq!(sels, (0..8 - high).collect::<Vec<_>>());
                            assert_eq!(f.writes.len(), 16);
                        }
                        Task::RamJoin { .. } => {
                            assert_eq!(sels, (8 - high..8).collect::<Vec<_>>());
                            assert_eq!(f.reads.len() - sels.len(), parts);
                        }
                        _ => {}
                    }
                }
            }
            let mut outs = Vec::new();
            for [addr, wren, wdata] in &cycles {
                for (port, bits) in [("addr", addr), ("wren", wren), ("wdata", wdata)] {
                    e.set_input(port, bits.clone()).unwrap();
                }
                e.step().unwrap();
                outs.push(e.output("rdata").unwrap());
            }
            runs.push((outs, e.snapshot_bytes()));
        }
        // Reads see earlier writes (some lanes read what they wrote).
        assert!(runs[0].0.iter().skip(1).any(|o| o.iter().any(|&b| b != 0)));
        for r in &runs[1..] {
            assert_eq!(r.0, runs[0].0, "the reads");
            assert_eq!(r.1, runs[0].1, "the RAM and every register");
        }
    }
}
