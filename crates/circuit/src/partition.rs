//! A static partition of one cycle's task DAG over `P` ranks, computed once per circuit and MUX plan:
//! what the MPI executor ([`crate::mpi`]) runs and what the distributed cost model
//! ([`crate::costmodel`]) prices.
//!
//! * Tasks are levelled by their longest path from the cycle's sources (a task at level `L` reads only
//!   values made at levels below `L`).
//! * Work that shares state is placed as one unit: a RAM's reads and its clock-edge write (its cells
//!   live on one rank); a batch of circuit-bootstrapped MUX selects with every CMUX it drives (that
//!   select never travels); a flip-flop's lift with the task that computes its D input (a carried
//!   ring stays where it was made). A memory's address selectors (TRGSWs) and a RAM's write values
//!   travel, so the tasks making them go anywhere, and so do ROM reads (every rank holds the ROM).
//! * On more than 2 ranks big tasks are cut up ([`select_batch_for`]): smaller MUX select batches, a
//!   memory's address bits and a ROM word's bits in several tasks.
//! * A CMUX RAM's clock edge has two parts ([`RamEdge`]): the write (external products over cells
//!   the owner holds) runs on the memory's rank, the refresh of the cycle's cells (a bootstrap each,
//!   most of the edge) is split evenly over every rank ([`refresh_share`]).
//! * Units are placed largest first on the least-loaded rank; the remaining tasks level by level,
//!   largest first, each on the rank that already holds most of its operands among those whose load at
//!   that level stays within the level's fair share, else on the least-loaded one. That balances the
//!   bootstrap work of every level and keeps operands where they are used.
//! * A value (a level-0 bit, a ring, a selector, a write value) crosses ranks only when a task, the outputs (rank 0) or a
//!   flip-flop's owner on another rank reads it: the partition lists those messages, one per
//!   (producing level, source rank, destination rank), with the level at which the receiver first
//!   needs it.

use std::ops::Range;

use crate::backend::{Backend, TaskKind};
use crate::circuit::{Circuit, Node, NodeId};
use crate::engine::{build_tasks, Grain, Task, ENGINE_GRAIN, SELECT_BATCH};
use crate::leveled::MuxPlan;

/// Selects circuit-bootstrapped per batch on `ranks` ranks: the single-process engine's batch up to
/// 2 ranks, then smaller ones (down to 1), so that the select work of a level can spread.
pub fn select_batch_for(ranks: usize) -> usize {
    grain_for(ranks).select_batch
}

/// How a cycle is cut into tasks on `ranks` ranks: as the single-process engine up to 2 ranks; on
/// more, smaller select batches and a memory's address bits and a ROM word's bits in several tasks
/// (one each from 64 ranks on), so that no big task sits alone on the critical path.
pub(crate) fn grain_for(ranks: usize) -> Grain {
    if ranks <= 2 {
        return ENGINE_GRAIN;
    }
    Grain {
        select_batch: (SELECT_BATCH * 2 / ranks).max(1),
        mem_select: (SELECT_BATCH / ranks).max(1),
        rom_bits: (32 / ranks).max(1),
    }
}

/// The refreshed cells (positions in a RAM edge's list of `cells`) rank `r` of `ranks` refreshes:
/// contiguous, as even as can be.
pub fn refresh_share(cells: usize, ranks: usize, r: usize) -> Range<usize> {
    let ranks = ranks.max(1);
    let at = |r: usize| (cells as u128 * r as u128 / ranks as u128) as usize;
    at(r)..at(r + 1)
}

/// The clock edge of one CMUX RAM: the write runs on the memory's rank, then the cycle's refreshes
/// are split over every rank ([`refresh_share`]), in memory order.
#[derive(Clone, Debug, PartialEq)]
pub struct RamEdge {
    pub mem: u32,
    /// The rank holding the memory (and doing the write).
    pub owner: u32,
    /// Cost units of the write.
    pub write_units: f64,
    /// Cells refreshed per cycle (about: the policy's round-robin share) and the units of one.
    pub refresh_cells: usize,
    pub refresh_units: f64,
}

/// An item that can cross ranks: a node's level-0 bit (`2n`) or its ring (`2n + 1`), or a memory's
/// prepared address bit ([`sel_item`]).
pub(crate) fn bit_item(n: NodeId) -> u64 {
    u64::from(n) << 1
}
pub(crate) fn ring_item(n: NodeId) -> u64 {
    (u64::from(n) << 1) | 1
}
const SEL_FLAG: u64 = 1 << 63;
const WVAL_FLAG: u64 = 1 << 62;
/// The selector of address bit `bit` of memory `mem`.
pub(crate) fn sel_item(mem: u32, bit: u32) -> u64 {
    SEL_FLAG | (u64::from(mem) << 32) | u64::from(bit)
}
/// The write value of data bit `bit` of RAM `mem`.
pub(crate) fn wval_item(mem: u32, bit: u32) -> u64 {
    WVAL_FLAG | (u64::from(mem) << 32) | u64::from(bit)
}

/// What an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    Bit(NodeId),
    Ring(NodeId),
    Sel { mem: u32, bit: u32 },
    WriteVal { mem: u32, bit: u32 },
}

pub(crate) fn item(i: u64) -> Item {
    if i & SEL_FLAG != 0 {
        Item::Sel {
            mem: ((i & !SEL_FLAG) >> 32) as u32,
            bit: i as u32,
        }
    } else if i & WVAL_FLAG != 0 {
        Item::WriteVal {
            mem: ((i & !WVAL_FLAG) >> 32) as u32,
            bit: i as u32,
        }
    } else if i & 1 == 1 {
        Item::Ring((i >> 1) as NodeId)
    } else {
        Item::Bit((i >> 1) as NodeId)
    }
}

/// The selectors of every address bit of memory `mem`.
fn mem_sels(c: &Circuit, mem: u32) -> impl Iterator<Item = u64> + '_ {
    (0..c.mems[mem as usize].addr.len() as u32).map(move |k| sel_item(mem, k))
}

fn span(first: u32, count: u32) -> std::ops::Range<usize> {
    first as usize..first as usize + count as usize
}

/// The items a task reads and writes.
#[derive(Clone, Debug, Default)]
pub(crate) struct TaskIo {
    pub reads: Vec<u64>,
    pub writes: Vec<u64>,
}

/// The items a result stored by `set_from_ring` / `set_refreshed` becomes.
fn stored(plan: &MuxPlan, id: NodeId, w: &mut Vec<u64>) {
    if plan.tlwe[id as usize] {
        w.push(bit_item(id));
    }
    if plan.ring[id as usize] {
        w.push(ring_item(id));
    }
}

/// What task `t` reads and writes (mirrors the executor, `engine::Ctx::exec`).
pub(crate) fn task_io(c: &Circuit, plan: &MuxPlan, batches: &[Vec<u32>], t: Task) -> TaskIo {
    let mut io = TaskIo::default();
    let (r, w) = (&mut io.reads, &mut io.writes);
    match t {
        Task::Node(id) => {
            let i = id as usize;
            let (tlwe, ring) = (plan.tlwe[i], plan.ring[i]);
            match c.nodes[i] {
                Node::Not(a) => {
                    if tlwe {
                        r.push(bit_item(a));
                        w.push(bit_item(id));
                    }
                    if ring {
                        r.push(ring_item(a));
                        w.push(ring_item(id));
                    }
                }
                Node::Gate(_, x, y) => {
                    r.extend([bit_item(x), bit_item(y)]);
                    if ring {
                        stored(plan, id, w);
                    } else {
                        w.push(bit_item(id));
                    }
                }
                Node::Cell { spec, ins } => {
                    r.extend(ins[..spec.arity()].iter().map(|&x| bit_item(x)));
                    if ring {
                        stored(plan, id, w);
                    } else {
                        w.push(bit_item(id));
                    }
                }
                Node::Mux { s, a, b } => {
                    r.extend([bit_item(s), bit_item(a), bit_item(b)]);
                    if ring {
                        stored(plan, id, w);
                    } else {
                        w.push(bit_item(id));
                    }
                }
                _ => {}
            }
        }
        Task::MuxSels(b) => {
            if let Some(slots) = batches.get(b as usize) {
                r.extend(slots.iter().map(|&s| bit_item(plan.sel_nodes[s as usize])));
            }
        }
        Task::Cmux(id) => {
            if let Node::Mux { a, b, .. } = c.nodes[id as usize] {
                r.extend([ring_item(a), ring_item(b)]);
            }
            stored(plan, id, w);
        }
        Task::Lift(id) => {
            r.push(bit_item(id));
            w.push(ring_item(id));
        }
        Task::Select { mem, first, count } => {
            let addr = &c.mems[mem as usize].addr;
            r.extend(addr[span(first, count)].iter().map(|&a| bit_item(a)));
            w.extend((first..first + count).map(|k| sel_item(mem, k)));
        }
        Task::RomRead { mem, first, count } => {
            r.extend(mem_sels(c, mem));
            for &n in &c.mems[mem as usize].rdata[span(first, count)] {
                stored(plan, n, w);
            }
        }
        Task::RamRead { mem, bit } => {
            r.extend(mem_sels(c, mem));
            stored(plan, c.mems[mem as usize].rdata[bit as usize], w)
        }
        Task::WriteVal { mem, bit } => {
            let m = &c.mems[mem as usize];
            let i = bit as usize;
            r.extend(m.wren.map(bit_item));
            r.extend([bit_item(m.wdata[i]), bit_item(m.rdata[i])]);
            w.push(wval_item(mem, bit));
        }
    }
    r.sort_unstable();
    r.dedup();
    io
}

/// The scheduler kind and weight of a task (its cost is `task_cost(kind) × weight`).
pub(crate) fn task_kind(c: &Circuit, batches: &[Vec<u32>], t: Task) -> (TaskKind, f64) {
    match t {
        Task::Node(id) => match c.nodes[id as usize] {
            Node::Not(_) => (TaskKind::Not, 1.0),
            Node::Mux { .. } => (TaskKind::Mux, 1.0),
            _ => (TaskKind::Gate, 1.0),
        },
        Task::MuxSels(b) => (
            TaskKind::Select,
            batches.get(b as usize).map_or(0, Vec::len) as f64,
        ),
        Task::Cmux(_) => (TaskKind::Cmux, 1.0),
        Task::Lift(_) => (TaskKind::Lift, 1.0),
        Task::Select { count, .. } => (TaskKind::Select, f64::from(count)),
        Task::RomRead { mem, count, .. } => (
            TaskKind::RomRead,
            f64::from(count) / c.mems[mem as usize].rdata.len().max(1) as f64,
        ),
        Task::RamRead { .. } => (TaskKind::RamRead, 1.0),
        Task::WriteVal { .. } => (TaskKind::WriteValue, 1.0),
    }
}

/// A message of one cycle: the items `src` made at `level` (−1: the cycle's sources, i.e. flip-flop
/// states) that `dst` reads, needed by `dst` before its tasks of level `deadline` (`levels`: at the
/// clock edge).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub level: i64,
    pub src: u32,
    pub dst: u32,
    pub deadline: u32,
    /// Items in ascending order (`2n`: node `n`'s bit, `2n + 1`: its ring; then memory selectors).
    pub items: Vec<u64>,
}

impl Message {
    /// (level-0 bits, rings) the message carries (RAM write values are rings).
    pub fn counts(&self) -> (usize, usize) {
        let rings = self
            .items
            .iter()
            .filter(|&&i| matches!(item(i), Item::Ring(_) | Item::WriteVal { .. }))
            .count();
        (self.items.len() - rings - self.sels(), rings)
    }
    /// Memory address selectors (TRGSWs in TFHE) the message carries.
    pub fn sels(&self) -> usize {
        self.items
            .iter()
            .filter(|&&i| matches!(item(i), Item::Sel { .. }))
            .count()
    }
}

/// Who holds a source item (no task makes it).
const EVERYWHERE: u32 = u32::MAX;

/// The partition of one cycle over `ranks` ranks.
#[derive(Clone, Debug)]
pub struct Partition {
    pub ranks: usize,
    /// The tasks of a cycle this partition places (built for [`select_batch_for`] `ranks`) and
    /// their select batches (what the MPI executor runs).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) tasks: Vec<Task>,
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) batches: Vec<Vec<u32>>,
    /// Selects per batch.
    pub select_batch: usize,
    /// The critical path of the cycle's task DAG, in cost units.
    pub critical_path_units: f64,
    /// The clock edge of every CMUX RAM.
    pub ram_edges: Vec<RamEdge>,
    /// Per task: the rank that runs it.
    pub owner: Vec<u32>,
    /// Per task: its level (longest path from the sources, in tasks).
    pub level: Vec<u32>,
    /// Number of levels.
    pub levels: u32,
    /// Per task: its cost in the backend's units.
    pub cost: Vec<f64>,
    pub kind: Vec<TaskKind>,
    /// Per flip-flop: the rank holding its state (where its D input is computed).
    pub dff_owner: Vec<u32>,
    /// Per memory: the rank holding its contents (CMUX memories; MUX memories are flip-flops).
    pub mem_owner: Vec<u32>,
    /// Per node: whether its ring exists in a cycle (some task makes it, or a planned constant).
    pub ring_exists: Vec<bool>,
    /// Every message of a cycle, sorted by (level, src, dst).
    pub messages: Vec<Message>,
}

/// Disjoint sets over task indices (placement units).
struct Units {
    parent: Vec<u32>,
}
impl Units {
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (lo, hi) = (a.min(b), a.max(b));
            self.parent[hi as usize] = lo;
        }
    }
}

impl Partition {
    /// Partitions the tasks of `c` under `plan` over `ranks` ranks (1 gives everything to rank 0).
    pub(crate) fn new<B: Backend>(c: &Circuit, b: &B, plan: &MuxPlan, ranks: usize) -> Partition {
        let ranks = ranks.max(1);
        let grain = grain_for(ranks);
        let select_batch = grain.select_batch;
        let (tasks, graph, batches) = build_tasks(c, b, plan, grain);
        let (tasks, batches) = (&tasks[..], &batches[..]);
        let n = tasks.len();
        let io: Vec<TaskIo> = tasks
            .iter()
            .map(|&t| task_io(c, plan, batches, t))
            .collect();
        let (kind, cost): (Vec<TaskKind>, Vec<f64>) = tasks
            .iter()
            .map(|&t| {
                let (k, w) = task_kind(c, batches, t);
                (k, b.task_cost(k) * w)
            })
            .unzip();
        // The task making each item.
        let mut producer: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
        for (t, x) in io.iter().enumerate() {
            for &w in &x.writes {
                producer.insert(w, t as u32);
            }
        }
        let mut ring_exists = vec![false; c.nodes.len()];
        for (i, node) in c.nodes.iter().enumerate() {
            if matches!(node, Node::Const(_)) && plan.ring[i] {
                ring_exists[i] = true;
            }
        }
        for &w in producer.keys() {
            if let Item::Ring(node) = item(w) {
                ring_exists[node as usize] = true;
            }
        }
        // Placement units and same-unit dependencies the items do not show (selects, memory state).
        let mut units = Units {
            parent: (0..n as u32).collect(),
        };
        let mut extra_preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut slot_task = vec![u32::MAX; plan.sel_nodes.len()];
        let mut mem_first = vec![u32::MAX; c.mems.len()];
        let mut forced: Vec<Option<u32>> = vec![None; n];
        for (t, &task) in tasks.iter().enumerate() {
            let t = t as u32;
            match task {
                Task::MuxSels(bt) => {
                    for &s in batches.get(bt as usize).map_or(&[][..], Vec::as_slice) {
                        slot_task[s as usize] = t;
                    }
                }
                Task::Cmux(id) => {
                    if let Node::Mux { s, .. } = c.nodes[id as usize] {
                        let st = plan
                            .sel_slot
                            .get(s as usize)
                            .and_then(|&slot| slot_task.get(slot as usize))
                            .copied()
                            .unwrap_or(u32::MAX);
                        if st != u32::MAX {
                            units.union(t, st);
                            extra_preds[t as usize].push(st);
                        }
                    }
                }
                // A RAM's reads stay with its cells; selects, write values and ROM reads (every
                // rank holds the ROM) go anywhere, their selectors and write values travel.
                Task::RamRead { mem, .. } => {
                    let m = mem as usize;
                    if mem_first[m] == u32::MAX {
                        mem_first[m] = t;
                    } else {
                        units.union(t, mem_first[m]);
                    }
                }
                Task::RomRead { mem, .. } => {
                    let m = mem as usize;
                    if mem_first[m] == u32::MAX {
                        mem_first[m] = t;
                    }
                }
                Task::Select { .. } | Task::WriteVal { .. } => {}
                Task::Lift(id) => {
                    if let Node::Dff(k) = c.nodes[id as usize] {
                        let d = c.dffs[k as usize].d;
                        match producer.get(&bit_item(d)) {
                            Some(&p) => units.union(t, p),
                            None => forced[t as usize] = Some(0),
                        }
                    }
                }
                Task::Node(_) => {}
            }
        }
        // Levels.
        let mut level = vec![0u32; n];
        for t in 0..n {
            let mut l = 0;
            for r in &io[t].reads {
                if let Some(&p) = producer.get(r) {
                    if (p as usize) < t {
                        l = l.max(level[p as usize] + 1);
                    }
                }
            }
            for &p in &extra_preds[t] {
                if (p as usize) < t {
                    l = l.max(level[p as usize] + 1);
                }
            }
            level[t] = l;
        }
        let levels = level.iter().map(|&l| l + 1).max().unwrap_or(0);
        let nl = levels as usize;
        // Placement.
        let mut owner = vec![u32::MAX; n];
        let mut level_load = vec![0f64; nl * ranks];
        let mut total = vec![0f64; ranks];
        let mut members: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for t in 0..n as u32 {
            let root = units.find(t);
            members.entry(root).or_default().push(t);
        }
        let mut multi: Vec<(f64, u32, Option<u32>)> = members
            .iter()
            .filter(|(_, m)| m.len() > 1 || m.iter().any(|&t| forced[t as usize].is_some()))
            .map(|(&root, m)| {
                let w: f64 = m.iter().map(|&t| cost[t as usize]).sum();
                let f = m.iter().find_map(|&t| forced[t as usize]);
                (w, root, f)
            })
            .collect();
        // A memory's unit also carries its clock-edge RAM write (work outside the DAG; the refresh
        // is spread over every rank, the same share for each).
        let mut edge_of_root: std::collections::HashMap<u32, f64> = Default::default();
        let is_cmux_ram = |m: usize| {
            let spec = &c.mems[m].spec;
            mem_first[m] != u32::MAX
                && spec.kind == crate::blueprint::MemKind::Ram
                && spec.imp == crate::blueprint::MemImpl::Cmux
        };
        let write_units = |m: usize| {
            let spec = &c.mems[m].spec;
            (spec.words() * spec.data_width) as f64 * b.task_cost(TaskKind::RamWriteCell)
        };
        for (m, &first) in mem_first.iter().enumerate() {
            if is_cmux_ram(m) {
                *edge_of_root.entry(units.find(first)).or_default() += write_units(m);
            }
        }
        for x in multi.iter_mut() {
            x.0 += edge_of_root.get(&x.1).copied().unwrap_or(0.0);
        }
        multi.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut edge = vec![0f64; ranks];
        for (w, root, f) in multi {
            let r = f.map_or_else(|| argmin(&total), |r| r as usize);
            edge[r] += edge_of_root.get(&root).copied().unwrap_or(0.0);
            total[r] += w;
            for &t in &members[&root] {
                owner[t as usize] = r as u32;
                level_load[level[t as usize] as usize * ranks + r] += cost[t as usize];
            }
        }
        let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); nl];
        for t in 0..n {
            if owner[t] == u32::MAX {
                by_level[level[t] as usize].push(t as u32);
            }
        }
        let mut level_total = vec![0f64; nl];
        for t in 0..n {
            level_total[level[t] as usize] += cost[t];
        }
        let holder_of = |item: u64, owner: &[u32]| -> Option<u32> {
            producer
                .get(&item)
                .map(|&p| owner[p as usize])
                .filter(|&r| r != u32::MAX)
        };
        // Each rank's share of every level: equal, less the clock edge a rank does after its levels
        // (so the ranks of the RAMs take less DAG work and all finish together).
        let dag: f64 = cost.iter().sum();
        let edges: f64 = edge.iter().sum();
        let raw: Vec<f64> = edge
            .iter()
            .map(|&e| ((dag + edges) / ranks as f64 - e).max(0.0))
            .collect();
        let sum: f64 = raw.iter().sum();
        let share: Vec<f64> = if dag > 0.0 && sum > 0.0 {
            raw.iter().map(|&x| x / sum).collect()
        } else {
            vec![1.0 / ranks as f64; ranks]
        };
        let mut aff = vec![0f64; ranks];
        for (l, ts) in by_level.iter_mut().enumerate() {
            ts.sort_by(|&x, &y| {
                cost[y as usize]
                    .total_cmp(&cost[x as usize])
                    .then(x.cmp(&y))
            });
            for &t in ts.iter() {
                let ct = cost[t as usize];
                aff.iter_mut().for_each(|a| *a = 0.0);
                for &r in &io[t as usize].reads {
                    if let Some(h) = holder_of(r, &owner) {
                        // Weighted by size: a ring is ≈ 3 bits, a selector ≈ 16 rings.
                        aff[h as usize] += match item(r) {
                            Item::Bit(_) => 1.0,
                            Item::Ring(_) | Item::WriteVal { .. } => 3.0,
                            Item::Sel { .. } => 48.0,
                        };
                    }
                }
                let loads = &level_load[l * ranks..(l + 1) * ranks];
                let mut best: Option<usize> = None;
                for r in 0..ranks {
                    let cap = (level_total[l] * share[r]).max(ct) * 1.1 + 1e-9;
                    if loads[r] + ct > cap {
                        continue;
                    }
                    best = match best {
                        None => Some(r),
                        Some(q) => {
                            let better = aff[r] > aff[q]
                                || (aff[r] == aff[q]
                                    && (loads[r] < loads[q]
                                        || (loads[r] == loads[q] && total[r] < total[q])));
                            Some(if better { r } else { q })
                        }
                    };
                }
                let r = best.unwrap_or_else(|| {
                    // The rank furthest below its share of this level.
                    let rel = |r: usize| (loads[r] + ct) / share[r].max(1e-9);
                    let mut q = 0;
                    for r in 1..ranks {
                        if rel(r) < rel(q) || (rel(r) == rel(q) && total[r] < total[q]) {
                            q = r;
                        }
                    }
                    q
                });
                owner[t as usize] = r as u32;
                level_load[l * ranks + r] += ct;
                total[r] += ct;
            }
        }
        // Owners of state.
        let dff_owner: Vec<u32> = c
            .dffs
            .iter()
            .map(|d| holder_of(bit_item(d.d), &owner).unwrap_or(0))
            .collect();
        let mem_owner: Vec<u32> = (0..c.mems.len())
            .map(|m| {
                let t = mem_first[m];
                if t == u32::MAX {
                    0
                } else {
                    owner[t as usize]
                }
            })
            .collect();
        // Who holds each item: a task's owner, a flip-flop's owner, or every rank (inputs, constants).
        let holder = |item: u64| -> u32 {
            if let Some(h) = holder_of(item, &owner) {
                return h;
            }
            match self::item(item) {
                Item::Bit(n) | Item::Ring(n) => match c.nodes[n as usize] {
                    Node::Dff(k) => dff_owner[k as usize],
                    _ => EVERYWHERE,
                },
                Item::Sel { .. } | Item::WriteVal { .. } => EVERYWHERE,
            }
        };
        // Needs: (item, dst) → earliest level.
        let mut need: std::collections::BTreeMap<(u64, u32), u32> = Default::default();
        let mut add = |item: u64, dst: u32, deadline: u32| {
            let h = holder(item);
            if h != EVERYWHERE && h != dst {
                let e = need.entry((item, dst)).or_insert(deadline);
                *e = (*e).min(deadline);
            }
        };
        for t in 0..n {
            for &r in &io[t].reads {
                add(r, owner[t], level[t]);
            }
        }
        for p in &c.outputs {
            for &bit in &p.bits {
                add(bit_item(bit), 0, levels);
            }
        }
        for (m, &o) in mem_owner.iter().enumerate() {
            if is_cmux_ram(m) {
                for s in mem_sels(c, m as u32) {
                    add(s, o, levels);
                }
                for k in 0..c.mems[m].wdata.len() as u32 {
                    add(wval_item(m as u32, k), o, levels);
                }
            }
        }
        for (k, d) in c.dffs.iter().enumerate() {
            add(bit_item(d.d), dff_owner[k], levels);
            if plan.carry.get(k).copied().unwrap_or(false) && ring_exists[d.d as usize] {
                add(ring_item(d.d), dff_owner[k], levels);
            }
        }
        let mut grouped: std::collections::BTreeMap<(i64, u32, u32), (u32, Vec<u64>)> =
            Default::default();
        for ((item, dst), deadline) in need {
            let lvl = producer
                .get(&item)
                .map_or(-1, |&p| i64::from(level[p as usize]));
            let e = grouped
                .entry((lvl, holder(item), dst))
                .or_insert((deadline, Vec::new()));
            e.0 = e.0.min(deadline);
            e.1.push(item);
        }
        let ram_edges = (0..c.mems.len())
            .filter(|&m| is_cmux_ram(m))
            .map(|m| RamEdge {
                mem: m as u32,
                owner: mem_owner[m],
                write_units: write_units(m),
                refresh_cells: b.ram_refreshes_per_cycle(&c.mems[m].spec),
                refresh_units: b.task_cost(TaskKind::RamRefreshCell),
            })
            .collect();
        let messages = grouped
            .into_iter()
            .map(|((level, src, dst), (deadline, items))| Message {
                level,
                src,
                dst,
                deadline,
                items,
            })
            .collect();
        Partition {
            ranks,
            tasks: tasks.to_vec(),
            batches: batches.to_vec(),
            select_batch,
            critical_path_units: graph.critical_path(),
            ram_edges,
            owner,
            level,
            levels,
            cost,
            kind,
            dff_owner,
            mem_owner,
            ring_exists,
            messages,
        }
    }

    /// Bootstrap work (cost units) of each rank.
    pub fn work(&self) -> Vec<f64> {
        let mut w = vec![0.0; self.ranks];
        for (t, &r) in self.owner.iter().enumerate() {
            w[r as usize] += self.cost[t];
        }
        w
    }

    /// (level-0 bits, rings) crossing ranks per cycle.
    pub fn crossing(&self) -> (usize, usize) {
        self.messages.iter().fold((0, 0), |(b, r), m| {
            let (x, y) = m.counts();
            (b + x, r + y)
        })
    }
    /// Memory selectors crossing ranks per cycle.
    pub fn crossing_sels(&self) -> usize {
        self.messages.iter().map(Message::sels).sum()
    }
}

fn argmin(v: &[f64]) -> usize {
    let mut q = 0;
    for (i, &x) in v.iter().enumerate() {
        if x < v[q] {
            q = i;
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};
    use std::sync::Arc;

    use super::*;
    use crate::costmodel::{predict, Measured, Network};
    use crate::{Blueprint, Engine, GateKind, LeveledParams, NetlistBuilder, PlainBackend};

    /// A random circuit with flip-flops, NOTs and MUXes whose selects drive several MUXes (so the
    /// TFHE plan makes CMUXes, select batches and lifts).
    fn random_circuit(seed: u64) -> Arc<Circuit> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut b = NetlistBuilder::new();
        let mut w = b.input("x", 8);
        let dffs: Vec<_> = (0..12).map(|i| b.dff(i % 3 == 0)).collect();
        w.extend(&dffs);
        let sels: Vec<_> = w[..4].to_vec();
        for i in 0..150 {
            let (a, c) = (w[next(w.len())], w[next(w.len())]);
            let v = match i % 5 {
                0 => b.not(a),
                1 | 2 => b.mux(sels[next(sels.len())], a, c),
                _ => b.gate(GateKind::ALL[next(GateKind::ALL.len())], a, c),
            };
            w.push(v);
        }
        for (k, &q) in dffs.iter().enumerate() {
            b.connect_dff(q, w[w.len() - 1 - k]).unwrap();
        }
        let outs = w[w.len() - 8..].to_vec();
        b.output("y", &outs);
        let bp = Blueprint::single("core", b.build().unwrap());
        Arc::new(Circuit::compile(&bp).unwrap())
    }

    fn memuser() -> Arc<Circuit> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/memuser.toml");
        Arc::new(Circuit::from_blueprint_path(&p).unwrap())
    }

    fn engines() -> Vec<Engine<PlainBackend>> {
        let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
        let mut v = Vec::new();
        for c in [memuser(), random_circuit(1), random_circuit(7)] {
            let mut e = Engine::new(PlainBackend, c.clone());
            v.push(Engine::new(PlainBackend, c));
            e.set_leveled(Some(lp));
            v.push(e);
        }
        v
    }

    /// Every value a rank reads at level L is made there earlier, held there, or arrives in a
    /// message from a lower level due by L; outputs reach rank 0 and D inputs their flip-flop's rank.
    #[test]
    fn every_read_is_local_or_received_in_time() {
        let mut cmuxes = 0;
        for e in engines() {
            let (c, plan) = (&*e.circuit, &e.plan);
            for ranks in [1, 2, 3, 7] {
                let p = e.plan_partition(ranks);
                cmuxes += p
                    .tasks
                    .iter()
                    .filter(|t| matches!(t, Task::Cmux(_)))
                    .count();
                assert_eq!(p.owner.len(), p.tasks.len());
                assert!(p.batches.iter().all(|b| b.len() <= p.select_batch));
                assert!(p.owner.iter().all(|&r| (r as usize) < ranks));
                if ranks == 1 {
                    assert!(p.messages.is_empty());
                    assert_eq!(p.tasks, e.tasks, "one rank runs the engine's own tasks");
                }
                let mut made: HashMap<u64, usize> = HashMap::new();
                let io: Vec<TaskIo> = p
                    .tasks
                    .iter()
                    .map(|&t| task_io(c, plan, &p.batches, t))
                    .collect();
                for (t, x) in io.iter().enumerate() {
                    for &w in &x.writes {
                        assert!(made.insert(w, t).is_none(), "one writer per item");
                    }
                }
                let mut got: HashMap<(u64, u32), (i64, u32)> = HashMap::new();
                for m in &p.messages {
                    assert_ne!(m.src, m.dst);
                    assert!(m.deadline as i64 > m.level);
                    for &i in &m.items {
                        assert!(got.insert((i, m.dst), (m.level, m.deadline)).is_none());
                        if let Some(&t) = made.get(&i) {
                            assert_eq!(p.owner[t], m.src);
                            assert_eq!(i64::from(p.level[t]), m.level);
                        }
                    }
                }
                let has = |i: u64, r: u32, at: u32| -> bool {
                    match made.get(&i) {
                        Some(&t) if p.owner[t] == r => p.level[t] < at,
                        Some(_) => got.get(&(i, r)).is_some_and(|&(_, d)| d <= at),
                        None => match item(i) {
                            Item::Bit(n) | Item::Ring(n) => match c.nodes[n as usize] {
                                Node::Dff(k) => {
                                    p.dff_owner[k as usize] == r
                                        || got.get(&(i, r)).is_some_and(|&(_, d)| d <= at)
                                }
                                _ => true,
                            },
                            Item::Sel { .. } | Item::WriteVal { .. } => false,
                        },
                    }
                };
                for (t, x) in io.iter().enumerate() {
                    for &i in &x.reads {
                        assert!(has(i, p.owner[t], p.level[t]), "task {t} misses item {i}");
                    }
                }
                for port in &c.outputs {
                    for &n in &port.bits {
                        assert!(has(bit_item(n), 0, p.levels));
                    }
                }
                for (k, d) in c.dffs.iter().enumerate() {
                    assert!(has(bit_item(d.d), p.dff_owner[k], p.levels));
                }
                for edge in &p.ram_edges {
                    assert_eq!(edge.owner, p.mem_owner[edge.mem as usize]);
                    for s in mem_sels(c, edge.mem) {
                        assert!(has(s, edge.owner, p.levels), "the RAM write's selectors");
                    }
                    for k in 0..c.mems[edge.mem as usize].wdata.len() as u32 {
                        let v = wval_item(edge.mem, k);
                        assert!(has(v, edge.owner, p.levels), "the RAM write's values");
                    }
                }
                if ranks == 7 && c.mems.len() > 1 {
                    let parts = p
                        .tasks
                        .iter()
                        .filter(|t| matches!(t, Task::Select { .. } | Task::RomRead { .. }))
                        .count();
                    assert!(parts > 2 * c.mems.len(), "selects and ROM reads are cut up");
                }
                let total: f64 = p.work().iter().sum();
                let cost: f64 = p.cost.iter().sum();
                assert!((total - cost).abs() <= 1e-9 * cost.max(1.0));
                let owners: HashSet<u32> = p.owner.iter().copied().collect();
                if ranks > 1 && p.tasks.len() > 50 {
                    assert!(owners.len() > 1, "work is spread");
                }
            }
        }
        assert!(cmuxes > 0, "the plans exercise CMUXes");
    }

    /// Refresh shares cover every cell once, in order, as evenly as possible.
    #[test]
    fn refresh_shares_split_evenly() {
        for cells in [0, 1, 7, 304, 4096] {
            for ranks in [1, 2, 3, 64, 256] {
                let shares: Vec<_> = (0..ranks).map(|r| refresh_share(cells, ranks, r)).collect();
                assert_eq!(shares[0].start, 0);
                assert_eq!(shares[ranks - 1].end, cells);
                for w in shares.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let (lo, hi) = shares.iter().fold((usize::MAX, 0), |(lo, hi), s| {
                    (lo.min(s.len()), hi.max(s.len()))
                });
                assert!(hi - lo <= 1, "{cells} cells on {ranks} ranks");
            }
        }
        assert_eq!(select_batch_for(1), SELECT_BATCH);
        assert_eq!(select_batch_for(2), SELECT_BATCH);
        assert!(select_batch_for(4) < SELECT_BATCH);
        assert_eq!(select_batch_for(64), 1);
    }

    /// The model on one rank is the work plus the clock edge; more ranks over a free network are
    /// never slower than the critical path allows and not slower than one rank.
    #[test]
    fn cost_model_is_consistent() {
        for e in engines() {
            let m = Measured {
                seconds_per_unit: 1e-3,
                bit_bytes: 2528,
                ring_bytes: 16400,
                sel_bytes: 131_080,
            };
            let free = Network {
                bandwidth_bits: f64::INFINITY,
                latency: 0.0,
            };
            let p1 = e.plan_partition(1);
            let one = predict(&p1, &m, &free, 1);
            let edge: f64 = p1
                .ram_edges
                .iter()
                .map(|x| x.write_units + x.refresh_cells as f64 * x.refresh_units)
                .sum();
            let work: f64 = (p1.cost.iter().sum::<f64>() + edge) * 1e-3;
            assert!((one.seconds - work.max(one.critical_path_seconds)).abs() < 1e-9);
            for ranks in [2, 4, 64] {
                let part = e.plan_partition(ranks);
                let p = predict(&part, &m, &free, 1);
                assert!(p.seconds >= p.critical_path_seconds - 1e-12);
                assert!(p.seconds <= one.seconds + 1e-9);
                let slow = predict(&part, &m, &Network::TEN_GBE, 1);
                assert!(slow.seconds >= p.seconds - 1e-12);
            }
        }
    }

    /// A RAM's clock edge: the write on its rank, the refresh cells split over every rank, and the
    /// model charges them so (TFHE costs, plain circuit: no key needed to plan).
    #[test]
    fn ram_refresh_is_spread_over_ranks() {
        let c = memuser();
        let params = vsp_tfhe::Params::default_128();
        let noise = crate::noise::NoiseModel::of(&params);
        let spec = &c
            .mems
            .iter()
            .find(|m| m.spec.kind == crate::blueprint::MemKind::Ram)
            .unwrap()
            .spec;
        let cells = crate::cmux::refreshes_per_cycle(
            &noise,
            crate::noise::RefreshPolicy::default(),
            spec.addr_width,
            spec.data_width,
        );
        assert!(cells >= spec.data_width, "at least a word a cycle");
        let m = Measured {
            seconds_per_unit: 1e-3,
            bit_bytes: 2528,
            ring_bytes: 16400,
            sel_bytes: 131_080,
        };
        // The same partitions with the RAM refreshing `cells` cells of 10 units each, or none.
        let e = Engine::new(PlainBackend, c.clone());
        let with_refresh = |ranks: usize, cells: usize| {
            let mut p = e.plan_partition(ranks);
            assert_eq!(p.ram_edges.len(), 1);
            for x in &mut p.ram_edges {
                x.refresh_cells = cells;
                x.refresh_units = 10.0;
            }
            p
        };
        let free = Network {
            bandwidth_bits: f64::INFINITY,
            latency: 0.0,
        };
        let unit = 10.0 * 1e-3;
        let t =
            |ranks: usize, cells: usize| predict(&with_refresh(ranks, cells), &m, &free, 1).seconds;
        // One rank does every refresh; on four each does at most a quarter after its levels.
        assert!((t(1, cells) - t(1, 0) - cells as f64 * unit).abs() < 1e-9);
        let four = t(4, cells) - t(4, 0);
        assert!(four > 0.0);
        assert!(four <= cells.div_ceil(4) as f64 * unit + 1e-9, "{four}");
    }
}
