//! A static partition of one cycle's task table over `P` ranks, computed once per circuit and MUX
//! plan: what the MPI executor (`crate::dist::mpi`) runs and what the cost model
//! ([`crate::costmodel`]) prices. It reads every task's kind, cost and items from the engine's task
//! table (`engine::tasks`), restating none of them; it decides placement and messages, nothing else.
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
//!   most of the edge) is split evenly over every rank ([`refreshers`]).
//! * Units are placed largest first on the least-loaded rank; the remaining tasks level by level,
//!   largest first, each on the rank that already holds most of its operands among those whose load at
//!   that level stays within the level's fair share, else on the least-loaded one. That balances the
//!   bootstrap work of every level and keeps operands where they are used.
//! * A value ([`Item`]) crosses ranks only when a task, the outputs (rank 0) or a flip-flop's owner
//!   on another rank reads it: the partition lists those messages, one per (producing task,
//!   destination rank) — so a message leaves as soon as its task is done, never waiting for others
//!   of its level — with the level at which the receiver first needs it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::backend::{Backend, TaskKind};
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::{Circuit, Node};
use crate::costmodel::{predict, Measured, Network};
use crate::engine::tasks::{
    build_tasks, ram_parts, Grain, Task, TaskSet, ENGINE_GRAIN, SELECT_BATCH,
};
use crate::engine::{Engine, Item};
use crate::leveled::MuxPlan;
use crate::schedule::TaskGraph;

/// Selects circuit-bootstrapped per batch on `ranks` ranks: the single-process engine's batch up to
/// 2 ranks, then smaller ones (down to 1), so that the select work of a level can spread.
pub fn select_batch_for(ranks: usize) -> usize {
    grain_for(ranks).select_batch
}

/// Most parts a CMUX RAM is cut into (`grain_for`): every part's holder receives the RAM's
/// address selectors and write values each cycle, so more parts cost more messages.
pub const RAM_PARTS_MAX: usize = 16;

/// How a cycle is cut into tasks on `ranks` ranks: as the single-process engine up to 2 ranks; on
/// more, smaller select batches and a memory's address bits and a ROM word's bits in several tasks
/// (one each from 64 ranks on), so that no big task sits alone on the critical path, and each CMUX
/// RAM in parts held by different ranks (the largest power of two up to `ranks`, at most
/// [`RAM_PARTS_MAX`]).
pub(crate) fn grain_for(ranks: usize) -> Grain {
    if ranks <= 2 {
        return ENGINE_GRAIN;
    }
    let pow2 = 1usize << (usize::BITS - 1 - ranks.leading_zeros());
    Grain {
        select_batch: (SELECT_BATCH * 2 / ranks).max(1),
        mem_select: (SELECT_BATCH / ranks).max(1),
        rom_bits: (32 / ranks).max(1),
        ram_parts: pow2.min(RAM_PARTS_MAX),
    }
}

/// The rank holding part `part` of `parts` of a spread RAM on `ranks` ranks: spread evenly, and a
/// function of these three only, so a new task table (a new MUX plan) never moves a part's cells.
pub fn ram_holder(part: usize, parts: usize, ranks: usize) -> u32 {
    (part as u128 * ranks as u128 / parts.max(1) as u128) as u32
}

/// Who refreshes each cell of a clock edge's refresh list `list` (cells `word * data_width + bit`
/// of a RAM whose parts `holders` hold) on `ranks` ranks: the rank for each position of `list`.
/// Shares are as even as can be. A spread RAM's holders write their parts a few data bits at a
/// time and send each cell as soon as its bit is written, so the cells are dealt in bit order;
/// the ranks that hold no part come first (they are free while the holders write), and the first
/// of them take the larger shares (when the cells do not divide evenly) and with them the
/// earliest cells. A function of its arguments only, so every rank computes the same answer.
pub fn refreshers(list: &[usize], data_width: usize, holders: &[u32], ranks: usize) -> Vec<u32> {
    let (ranks, w) = (ranks.max(1), data_width.max(1));
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by_key(|&k| (list[k] % w, list[k]));
    let holds = |r: usize| holders.iter().any(|&h| h as usize == r);
    let by_freedom = (0..ranks)
        .filter(|&r| !holds(r))
        .chain((0..ranks).filter(|&r| holds(r)));
    let (base, extra) = (list.len() / ranks, list.len() % ranks);
    let mut out = vec![0u32; list.len()];
    let mut next = order.into_iter();
    for (p, r) in by_freedom.enumerate() {
        for k in next.by_ref().take(base + usize::from(p < extra)) {
            out[k] = r as u32;
        }
    }
    out
}

/// The clock edge of one CMUX RAM: the write runs where its cells are (the memory's rank, or each
/// part's holder writing its part when the RAM is spread), then the cycle's refreshes are split
/// over every rank ([`refreshers`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RamEdge {
    pub mem: u32,
    /// The rank holding each part of the memory's words (one: the memory is whole there), each
    /// doing the write of its part.
    pub holders: Vec<u32>,
    /// Cost units of the write of one part (all its data bits; each bit the same share).
    pub write_units: f64,
    /// Words, and data bits of a word.
    pub words: usize,
    pub data_width: usize,
    /// Cells refreshed per cycle (about: the policy's round-robin share) and the units of one.
    pub refresh_cells: usize,
    pub refresh_units: f64,
}

/// A message of one cycle: the items one task of `src` made at `level` (−1: the cycle's sources,
/// i.e. flip-flop states) that `dst` reads, needed by `dst` before its tasks of level `deadline`
/// (`levels`: at the clock edge).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub level: i64,
    pub src: u32,
    pub dst: u32,
    /// Its number among the cycle's messages from `src` to `dst`, in this order (what tells them
    /// apart on the wire).
    pub seq: u32,
    pub deadline: u32,
    /// Items in ascending order.
    pub items: Vec<Item>,
    /// How many of its selectors have the circuit's gadget (a ROM's address, an ordinary MUX
    /// select: fewer levels, a smaller TRGSW than a RAM's or a low-noise select's).
    pub small_sels: usize,
}

impl Message {
    /// (level-0 bits, rings) the message carries (RAM write values are rings).
    pub fn counts(&self) -> (usize, usize) {
        let rings = self
            .items
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Item::Ring(_) | Item::WriteVal { .. } | Item::RamPart { .. }
                )
            })
            .count();
        (self.items.len() - rings - self.sels(), rings)
    }
    /// Selectors (TRGSWs in TFHE: memory addresses and MUX selects) the message carries.
    pub fn sels(&self) -> usize {
        self.items
            .iter()
            .filter(|i| matches!(i, Item::Sel { .. } | Item::MuxSel(_)))
            .count()
    }
}

/// Who holds a source item (no task makes it).
const EVERYWHERE: u32 = u32::MAX;

/// Whether `i` is a selector with the circuit's gadget (a ROM's address bit, a MUX select not on
/// the low-noise gadget), the smaller TRGSW on the wire.
fn small_sel(c: &Circuit, plan: &MuxPlan, i: &Item) -> bool {
    match *i {
        Item::Sel { mem, .. } => c
            .mems
            .get(mem as usize)
            .is_some_and(|m| m.spec.kind == MemKind::Rom),
        Item::MuxSel(slot) => !plan.is_low_noise_select(slot),
        _ => false,
    }
}

/// The partition of one cycle over `ranks` ranks.
#[derive(Clone, Debug)]
pub struct Partition {
    pub ranks: usize,
    /// The task table this partition places (cut for `ranks`: [`select_batch_for`]).
    pub(crate) set: Arc<TaskSet>,
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
    /// Per flip-flop: the rank holding its state (where its D input is computed).
    pub dff_owner: Vec<u32>,
    /// Per memory: the rank holding its contents (CMUX memories; MUX memories are flip-flops).
    pub mem_owner: Vec<u32>,
    /// Per node: whether its ring exists in a cycle (some task makes it, or a planned constant).
    pub ring_exists: Vec<bool>,
    /// Every message of a cycle, sorted by (level, src, dst).
    pub messages: Vec<Message>,
    /// How its tasks were placed.
    pub placement: Placement,
    /// Per task: the order in which its rank runs its ready tasks (higher first): the upward rank
    /// in the cycle's DAG, or for [`Placement::Earliest`] the schedule it was placed by (earlier
    /// planned start first), so that each rank runs its tasks in the order the placement assumed.
    pub priority: Vec<f64>,
}

/// How a partition places tasks on ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Units first, then level by level, balancing each level's work and keeping operands local.
    Balanced,
    /// As [`Placement::Balanced`], each level's tasks by upward rank, and its critical ones (within
    /// 5 % of the level's highest upward rank) on ranks with no other work of the level where the
    /// level's shares allow, so that they need not wait behind other tasks.
    Critical,
    /// Each task where it would finish earliest, communication priced in ([`PLACEMENT_PRICE`]).
    Earliest,
    /// The one of the three the cost model predicts fastest at [`PLACEMENT_PRICE`] (the default).
    Best,
}

impl<B: Backend> Engine<B> {
    /// The static partition of this engine's cycle over `ranks` MPI ranks under the current MUX plan
    /// (what the MPI executor runs; input of the [`crate::costmodel`]).
    pub fn plan_partition(&self, ranks: usize) -> Partition {
        self.plan_partition_with(ranks, Placement::Best)
    }
    /// [`Self::plan_partition`] placed as `how` says.
    pub fn plan_partition_with(&self, ranks: usize, how: Placement) -> Partition {
        self.plan_partition_cut(ranks, how, None)
    }
    /// [`Self::plan_partition_with`] with each CMUX RAM cut into `ram_parts` parts (a power of two,
    /// at most its words; `None`: as the MPI executor cuts it on `ranks` ranks) — for the cost
    /// model's what-ifs: the executor runs [`Self::plan_partition`]'s cut.
    pub fn plan_partition_cut(
        &self,
        ranks: usize,
        how: Placement,
        ram_parts: Option<usize>,
    ) -> Partition {
        let ranks = ranks.max(1);
        let mut grain = grain_for(ranks);
        if let Some(p) = ram_parts {
            grain.ram_parts = p.max(1);
        }
        let set = Arc::new(build_tasks(&self.circuit, &self.backend, &self.plan, grain));
        Partition::of(&self.circuit, &self.backend, &self.plan, set, ranks, how)
    }
}

/// Cost units of the clock-edge write of one part of CMUX RAM `m` (the whole RAM when it is not
/// spread): on a rank, two external products per cell, each about a CMUX (the read tree for the
/// stored bit and the demultiplexer); a spread RAM's write values carry the read's change, so a part
/// runs only the demultiplexer: per data bit, the path down to its words and their subtree.
fn ram_write_units<B: Backend>(c: &Circuit, b: &B, set: &TaskSet, m: usize) -> f64 {
    let spec = &c.mems[m].spec;
    match ram_parts(c, set.grain, m) {
        1 => (spec.words() * spec.data_width) as f64 * b.task_cost(TaskKind::RamWriteCell),
        parts => {
            let split = parts.trailing_zeros() as usize;
            let products = split + spec.words() / parts - 1;
            (products * spec.data_width) as f64 * b.ram_cmux_cost()
        }
    }
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

/// The units of placement: the disjoint sets, each memory's first read task (`u32::MAX`: none),
/// and the rank a unit must go to (a lift of a flip-flop whose D input no task makes: rank 0).
struct Grouping {
    units: Units,
    mem_first: Vec<u32>,
    forced: Vec<Option<u32>>,
}

fn grouping(c: &Circuit, set: &TaskSet, ranks: usize, cmux_with_select: bool) -> Grouping {
    // Each spread RAM's read join per data bit (its write value stays with it: it keeps the read's
    // tree, which the write of every part needs).
    let mut joins: HashMap<(u32, u32), u32> = HashMap::new();
    let n = set.len();
    let mut g = Grouping {
        units: Units {
            parent: (0..n as u32).collect(),
        },
        mem_first: vec![u32::MAX; c.mems.len()],
        forced: vec![None; n],
    };
    for (t, &task) in set.tasks.iter().enumerate() {
        let t = t as u32;
        match task {
            // A CMUX stays with the batch circuit-bootstrapping its select (`cmux_with_select`: for
            // the placements by level, whose selects then never travel).
            Task::Cmux(_) if cmux_with_select => {
                for i in &set.facts[t as usize].reads {
                    if let (Item::MuxSel(_), Some(&p)) = (i, set.producer.get(i)) {
                        g.units.union(t, p);
                    }
                }
            }
            // A RAM's reads stay with its cells; selects, write values and ROM reads (every rank
            // holds the ROM) go anywhere, their selectors and write values travel.
            Task::RamRead { mem, .. } => match g.mem_first[mem as usize] {
                u32::MAX => g.mem_first[mem as usize] = t,
                first => g.units.union(t, first),
            },
            Task::RomRead { mem, .. } => {
                if g.mem_first[mem as usize] == u32::MAX {
                    g.mem_first[mem as usize] = t;
                }
            }
            // A spread RAM's part goes where its cells are.
            Task::RamPart { mem, part, parts } => {
                if g.mem_first[mem as usize] == u32::MAX {
                    g.mem_first[mem as usize] = t;
                }
                g.forced[t as usize] = Some(ram_holder(part as usize, parts as usize, ranks));
            }
            Task::RamJoin { mem, bit, .. } => {
                joins.insert((mem, bit), t);
            }
            Task::WriteVal { mem, bit } => {
                if let Some(&j) = joins.get(&(mem, bit)) {
                    g.units.union(t, j);
                }
            }
            Task::Lift(id) => {
                if let Node::Dff(k) = c.nodes[id as usize] {
                    let d = c.dffs[k as usize].d;
                    match set.producer.get(&Item::Bit(d)) {
                        Some(&p) => g.units.union(t, p),
                        None => g.forced[t as usize] = Some(0),
                    }
                }
            }
            Task::Node(_) | Task::MuxSels(_) | Task::Select { .. } | Task::Cmux(_) => {}
        }
    }
    g
}

/// Each task's level: one more than the deepest producer of what it reads.
fn levels(set: &TaskSet) -> Vec<u32> {
    let mut level = vec![0u32; set.len()];
    for t in 0..set.len() {
        level[t] = set.facts[t]
            .reads
            .iter()
            .filter_map(|i| set.producer.get(i))
            .filter(|&&p| (p as usize) < t)
            .map(|&p| level[p as usize] + 1)
            .max()
            .unwrap_or(0);
    }
    level
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

/// How much holding an operand draws a task: by size (a ring ≈ 3 bits, a selector ≈ 16 rings).
fn affinity(i: &Item) -> f64 {
    match i {
        Item::Bit(_) => 1.0,
        Item::Ring(_) | Item::WriteVal { .. } | Item::RamPart { .. } => 3.0,
        Item::Sel { .. } => 48.0,
        Item::MuxSel(_) => 0.0,
    }
}

impl Partition {
    /// Partitions the task table `set` (of `c` under `plan`, cut as [`grain_for`] says for `ranks`)
    /// over `ranks` ranks (1 gives everything to rank 0), placed as `how` says.
    pub(crate) fn of<B: Backend>(
        c: &Circuit,
        b: &B,
        plan: &MuxPlan,
        set: Arc<TaskSet>,
        ranks: usize,
        how: Placement,
    ) -> Partition {
        let ranks = ranks.max(1);
        let Grouping {
            mut units,
            mem_first,
            forced,
        } = grouping(c, &set, ranks, true);
        let level = levels(&set);
        let levels = level.iter().map(|&l| l + 1).max().unwrap_or(0);
        let is_cmux_ram = |m: usize| {
            let spec = &c.mems[m].spec;
            mem_first[m] != u32::MAX && spec.kind == MemKind::Ram && spec.imp == MemImpl::Cmux
        };
        // A memory's unit (a spread RAM's part) also carries its clock-edge RAM write (work
        // outside the DAG; the refresh is spread over every rank, the same share for each).
        let mut edge_of_root: HashMap<u32, f64> = HashMap::new();
        for (t, task) in set.tasks.iter().enumerate() {
            let m = match *task {
                Task::RamRead { mem, .. } if mem_first[mem as usize] == t as u32 => mem,
                Task::RamPart { mem, .. } => mem,
                _ => continue,
            };
            if is_cmux_ram(m as usize) {
                *edge_of_root.entry(units.find(t as u32)).or_default() +=
                    ram_write_units(c, b, &set, m as usize);
            }
        }
        let mut balanced_by = |critical_first: bool| {
            place(
                &set,
                &level,
                levels,
                ranks,
                &mut units,
                &forced,
                &edge_of_root,
                critical_first,
            )
        };
        let balanced = balanced_by(false);
        let critical = balanced_by(true);
        // Placed by finish times, a CMUX may go where its select is not (the select travels).
        let mut free_units = grouping(c, &set, ranks, false).units;
        let small = |i: &Item| small_sel(c, plan, i);
        let (earliest, planned) = place_earliest(
            &set,
            ranks,
            &mut free_units,
            &forced,
            &PLACEMENT_PRICE,
            &small,
        );
        let finish = |owner: Vec<u32>, how: Placement| {
            let mut p = Partition::finish(
                c,
                b,
                plan,
                set.clone(),
                ranks,
                owner,
                &mem_first,
                &level,
                how,
            );
            if how == Placement::Earliest {
                p.priority = planned.clone();
            }
            p
        };
        match how {
            Placement::Balanced => finish(balanced, Placement::Balanced),
            Placement::Critical => finish(critical, Placement::Critical),
            Placement::Earliest => finish(earliest, Placement::Earliest),
            // Work placement from the cost model: the placement it predicts fastest
            // (communication priced in), the first of balanced, critical, earliest on a tie.
            Placement::Best => {
                let pb = finish(balanced, Placement::Balanced);
                if ranks == 1 {
                    return pb;
                }
                let time = |p: &Partition| {
                    predict(p, &PLACEMENT_PRICE.measured, &PLACEMENT_PRICE.network, 1).seconds
                };
                let mut best = (time(&pb), pb);
                for (owner, how) in [
                    (critical, Placement::Critical),
                    (earliest, Placement::Earliest),
                ] {
                    let p = finish(owner, how);
                    let t = time(&p);
                    if t < best.0 {
                        best = (t, p);
                    }
                }
                best.1
            }
        }
    }

    /// The partition of `set` with tasks placed on `owner`: the owners of state, the messages and
    /// the clock edges.
    #[allow(clippy::too_many_arguments)]
    fn finish<B: Backend>(
        c: &Circuit,
        b: &B,
        plan: &MuxPlan,
        set: Arc<TaskSet>,
        ranks: usize,
        owner: Vec<u32>,
        mem_first: &[u32],
        level: &[u32],
        placement: Placement,
    ) -> Partition {
        let levels = level.iter().map(|&l| l + 1).max().unwrap_or(0);
        let is_cmux_ram = |m: usize| {
            let spec = &c.mems[m].spec;
            mem_first[m] != u32::MAX && spec.kind == MemKind::Ram && spec.imp == MemImpl::Cmux
        };
        let mut ring_exists: Vec<bool> = c
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| matches!(node, Node::Const(_)) && plan.ring[i])
            .collect();
        for i in set.producer.keys() {
            if let Item::Ring(node) = i {
                ring_exists[*node as usize] = true;
            }
        }
        let holder_of =
            |i: &Item| -> Option<u32> { set.producer.get(i).map(|&p| owner[p as usize]) };
        // Owners of state.
        let dff_owner: Vec<u32> = c
            .dffs
            .iter()
            .map(|d| holder_of(&Item::Bit(d.d)).unwrap_or(0))
            .collect();
        let mem_owner: Vec<u32> = mem_first
            .iter()
            .map(|&t| if t == u32::MAX { 0 } else { owner[t as usize] })
            .collect();
        // Who holds each item: a task's owner, a flip-flop's owner, or every rank (inputs, constants).
        let holder = |i: &Item| -> u32 {
            if let Some(h) = holder_of(i) {
                return h;
            }
            match i {
                Item::Bit(n) | Item::Ring(n) => match c.nodes[*n as usize] {
                    Node::Dff(k) => dff_owner[k as usize],
                    _ => EVERYWHERE,
                },
                Item::Sel { .. }
                | Item::WriteVal { .. }
                | Item::MuxSel(_)
                | Item::RamPart { .. } => EVERYWHERE,
            }
        };
        // Needs: (item, dst) → earliest level.
        let mut need: BTreeMap<(Item, u32), u32> = BTreeMap::new();
        let mut add = |i: Item, dst: u32, deadline: u32| {
            let h = holder(&i);
            if h != EVERYWHERE && h != dst {
                let e = need.entry((i, dst)).or_insert(deadline);
                *e = (*e).min(deadline);
            }
        };
        for (t, f) in set.facts.iter().enumerate() {
            for &r in &f.reads {
                add(r, owner[t], level[t]);
            }
        }
        for p in &c.outputs {
            for &bit in &p.bits {
                add(Item::Bit(bit), 0, levels);
            }
        }
        let holders = |m: usize| -> Vec<u32> {
            match ram_parts(c, set.grain, m) {
                1 => vec![mem_owner[m]],
                parts => (0..parts).map(|j| ram_holder(j, parts, ranks)).collect(),
            }
        };
        for m in (0..c.mems.len()).filter(|&m| is_cmux_ram(m)) {
            let mut hs = holders(m);
            hs.dedup();
            for o in hs {
                for bit in 0..c.mems[m].addr.len() as u32 {
                    add(Item::Sel { mem: m as u32, bit }, o, levels);
                }
                for bit in 0..c.mems[m].wdata.len() as u32 {
                    add(Item::WriteVal { mem: m as u32, bit }, o, levels);
                }
            }
        }
        for (k, d) in c.dffs.iter().enumerate() {
            add(Item::Bit(d.d), dff_owner[k], levels);
            if plan.carry.get(k).copied().unwrap_or(false) && ring_exists[d.d as usize] {
                add(Item::Ring(d.d), dff_owner[k], levels);
            }
        }
        // One message per (making task, destination): it leaves as soon as that task is done (the
        // cycle's sources: one per source rank and destination, at the start).
        // (producing level, making task, source, destination) → (deadline, items).
        type Key = (i64, i64, u32, u32);
        let mut grouped: BTreeMap<Key, (u32, Vec<Item>)> = BTreeMap::new();
        for ((i, dst), deadline) in need {
            let (lvl, maker) = set
                .producer
                .get(&i)
                .map_or((-1, -1), |&p| (i64::from(level[p as usize]), i64::from(p)));
            let e = grouped
                .entry((lvl, maker, holder(&i), dst))
                .or_insert((deadline, Vec::new()));
            e.0 = e.0.min(deadline);
            e.1.push(i);
        }
        let ram_edges = (0..c.mems.len())
            .filter(|&m| is_cmux_ram(m))
            .map(|m| RamEdge {
                mem: m as u32,
                holders: holders(m),
                write_units: ram_write_units(c, b, &set, m),
                words: c.mems[m].spec.words(),
                data_width: c.mems[m].spec.data_width,
                refresh_cells: b.ram_refreshes_per_cycle(&c.mems[m].spec),
                refresh_units: b.task_cost(TaskKind::RamRefreshCell),
            })
            .collect();
        let mut seq: HashMap<(u32, u32), u32> = HashMap::new();
        let messages = grouped
            .into_iter()
            .map(|((level, _, src, dst), (deadline, items))| {
                let n = seq.entry((src, dst)).or_default();
                *n += 1;
                Message {
                    level,
                    src,
                    dst,
                    seq: *n - 1,
                    deadline,
                    small_sels: items.iter().filter(|i| small_sel(c, plan, i)).count(),
                    items,
                }
            })
            .collect();
        Partition {
            ranks,
            select_batch: set.grain.select_batch,
            critical_path_units: set.graph.critical_path(),
            ram_edges,
            owner,
            levels,
            dff_owner,
            mem_owner,
            ring_exists,
            messages,
            level: level.to_vec(),
            placement,
            priority: (0..set.len()).map(|t| set.graph.priority(t)).collect(),
            set,
        }
    }

    /// Per task, for a rank of one thread, the task its rank runs just before it when the
    /// placement planned each rank's order ([`Placement::Earliest`]) and the cycle is bound by its
    /// critical path (no rank's work exceeds it; `None` otherwise, where throughput matters more
    /// than order and a rank runs whatever is ready, batching what it can): the rank's tasks of
    /// nonzero cost in their planned order, each waiting for the one before to finish, so that a
    /// task ready early cannot take the rank from one planned before it (the order is the plan's
    /// start times, which no data dependency contradicts: no deadlock). `u32::MAX`: first on its
    /// rank, or of zero cost (runs whenever its operands are there).
    pub fn planned_order(&self) -> Option<Vec<u32>> {
        let busiest = self.work().into_iter().fold(0.0, f64::max);
        if self.placement != Placement::Earliest || busiest > self.critical_path_units {
            return None;
        }
        let mut by_rank: Vec<Vec<u32>> = vec![Vec::new(); self.ranks];
        for (t, &r) in self.owner.iter().enumerate() {
            if self.cost(t) > 0.0 {
                by_rank[r as usize].push(t as u32);
            }
        }
        let mut before = vec![u32::MAX; self.owner.len()];
        for ts in &mut by_rank {
            ts.sort_by(|&a, &b| {
                self.priority[b as usize]
                    .total_cmp(&self.priority[a as usize])
                    .then(a.cmp(&b))
            });
            for w in ts.windows(2) {
                before[w[1] as usize] = w[0];
            }
        }
        Some(before)
    }

    /// Tasks of a cycle.
    pub fn tasks(&self) -> usize {
        self.set.len()
    }
    /// Task `t`'s cost in the backend's units (from the task table).
    pub fn cost(&self, t: usize) -> f64 {
        self.set.facts[t].cost
    }
    /// Task `t`'s kind (from the task table).
    pub fn kind(&self, t: usize) -> TaskKind {
        self.set.facts[t].kind
    }
    /// Items task `t` writes (a batch of selects: one per bit).
    pub fn writes(&self, t: usize) -> usize {
        self.set.facts[t].writes.len()
    }

    /// Bootstrap work (cost units) of each rank.
    pub fn work(&self) -> Vec<f64> {
        let mut w = vec![0.0; self.ranks];
        for (t, &r) in self.owner.iter().enumerate() {
            w[r as usize] += self.cost(t);
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
    /// A what-if for the cost model: this partition (the same placement and messages) with every
    /// task of `kind` costing `factor` times as much — a lower-latency version of that kind of task,
    /// say — and the priorities and critical path recomputed.
    pub fn with_kind_scaled(&self, kind: TaskKind, factor: f64) -> Partition {
        self.with_scaled(|k, _| if k == kind { factor } else { 1.0 })
    }

    /// This partition with each task's cost times `factor(kind, items it writes)`, the priorities
    /// and critical path recomputed.
    pub fn with_scaled(&self, factor: impl Fn(TaskKind, usize) -> f64) -> Partition {
        let mut set = (*self.set).clone();
        for f in set.facts.iter_mut() {
            f.cost *= factor(f.kind, f.writes.len());
        }
        let preds: Vec<Vec<u32>> = set
            .facts
            .iter()
            .enumerate()
            .map(|(t, f)| {
                let mut p: Vec<u32> = f
                    .reads
                    .iter()
                    .filter_map(|i| set.producer.get(i).copied())
                    .filter(|&q| (q as usize) < t)
                    .collect();
                p.sort_unstable();
                p.dedup();
                p
            })
            .collect();
        let cost: Vec<f64> = set.facts.iter().map(|f| f.cost).collect();
        set.graph = TaskGraph::new(&preds, &cost);
        let priority = if self.placement == Placement::Earliest {
            self.priority.clone()
        } else {
            (0..set.len()).map(|t| set.graph.priority(t)).collect()
        };
        Partition {
            critical_path_units: set.graph.critical_path(),
            set: Arc::new(set),
            priority,
            ..self.clone()
        }
    }

    /// The tasks on the cycle's critical path (the DAG's longest path in cost units), in order:
    /// from a task with the largest upward rank, each time to the successor carrying the rest.
    pub fn critical_tasks(&self) -> Vec<usize> {
        let set = &self.set;
        let n = set.len();
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (t, f) in set.facts.iter().enumerate() {
            for i in &f.reads {
                if let Some(&p) = set.producer.get(i) {
                    succ[p as usize].push(t as u32);
                }
            }
        }
        let pr = |t: usize| set.graph.priority(t);
        let Some(mut t) = (0..n).max_by(|&a, &b| pr(a).total_cmp(&pr(b)).then(b.cmp(&a))) else {
            return Vec::new();
        };
        let mut path = vec![t];
        while let Some(&s) = succ[t]
            .iter()
            .max_by(|&&a, &&b| pr(a as usize).total_cmp(&pr(b as usize)).then(b.cmp(&a)))
        {
            t = s as usize;
            path.push(t);
        }
        path
    }
    /// The critical path by kind of task: (kind, tasks, cost units), largest first.
    pub fn critical_kinds(&self) -> Vec<(TaskKind, usize, f64)> {
        let mut by: Vec<(TaskKind, usize, f64)> = Vec::new();
        for t in self.critical_tasks() {
            let k = self.kind(t);
            match by.iter_mut().find(|x| x.0 == k) {
                Some(x) => {
                    x.1 += 1;
                    x.2 += self.cost(t);
                }
                None => by.push((k, 1, self.cost(t))),
            }
        }
        by.sort_by(|a, b| b.2.total_cmp(&a.2));
        by
    }
    /// Memory selectors crossing ranks per cycle.
    pub fn crossing_sels(&self) -> usize {
        self.messages.iter().map(Message::sels).sum()
    }
}

/// A task whose upward rank is within this fraction of its level's highest is critical
/// ([`Placement::Critical`]).
const CRITICAL: f64 = 0.95;

/// Places every task on a rank: the units (with their clock-edge work `edge_of_root`) largest first
/// on the least-loaded rank, then the other tasks level by level, largest first (`critical_first`:
/// by upward rank, the critical ones each on a rank with no other work of its level if it can),
/// each on the rank holding most of its operands among those within the level's fair share, else
/// on the one furthest below it.
#[allow(clippy::too_many_arguments)]
fn place(
    set: &TaskSet,
    level: &[u32],
    levels: u32,
    ranks: usize,
    units: &mut Units,
    forced: &[Option<u32>],
    edge_of_root: &HashMap<u32, f64>,
    critical_first: bool,
) -> Vec<u32> {
    let n = set.len();
    let nl = levels as usize;
    let cost = |t: u32| set.facts[t as usize].cost;
    let mut owner = vec![u32::MAX; n];
    let mut level_load = vec![0f64; nl * ranks];
    let mut total = vec![0f64; ranks];
    let mut members: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for t in 0..n as u32 {
        let root = units.find(t);
        members.entry(root).or_default().push(t);
    }
    let mut multi: Vec<(f64, u32, Option<u32>)> = members
        .iter()
        .filter(|(_, m)| m.len() > 1 || m.iter().any(|&t| forced[t as usize].is_some()))
        .map(|(&root, m)| {
            let w: f64 = m.iter().map(|&t| cost(t)).sum();
            let f = m.iter().find_map(|&t| forced[t as usize]);
            (w + edge_of_root.get(&root).copied().unwrap_or(0.0), root, f)
        })
        .collect();
    multi.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    let mut edge = vec![0f64; ranks];
    for (w, root, f) in multi {
        let r = f.map_or_else(|| argmin(&total), |r| r as usize);
        edge[r] += edge_of_root.get(&root).copied().unwrap_or(0.0);
        total[r] += w;
        for &t in &members[&root] {
            owner[t as usize] = r as u32;
            level_load[level[t as usize] as usize * ranks + r] += cost(t);
        }
    }
    let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); nl];
    let mut level_total = vec![0f64; nl];
    for t in 0..n {
        if owner[t] == u32::MAX {
            by_level[level[t] as usize].push(t as u32);
        }
        level_total[level[t] as usize] += cost(t as u32);
    }
    // Each rank's share of every level: equal, less the clock edge a rank does after its levels
    // (so the ranks of the RAMs take less DAG work and all finish together).
    let dag: f64 = set.facts.iter().map(|f| f.cost).sum();
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
        let pr = |t: u32| set.graph.priority(t as usize);
        if critical_first {
            ts.sort_by(|&x, &y| {
                pr(y)
                    .total_cmp(&pr(x))
                    .then(cost(y).total_cmp(&cost(x)))
                    .then(x.cmp(&y))
            });
        } else {
            ts.sort_by(|&x, &y| cost(y).total_cmp(&cost(x)).then(x.cmp(&y)));
        }
        let top = ts.iter().map(|&t| pr(t)).fold(0.0, f64::max);
        for &t in ts.iter() {
            let ct = cost(t);
            aff.iter_mut().for_each(|a| *a = 0.0);
            for r in &set.facts[t as usize].reads {
                let h = set.producer.get(r).map(|&p| owner[p as usize]);
                if let Some(h) = h.filter(|&h| h != u32::MAX) {
                    aff[h as usize] += affinity(r);
                }
            }
            if critical_first && pr(t) >= top * CRITICAL && ct > 0.0 {
                // A critical task: where it need not wait behind other work of its level.
                let loads = &level_load[l * ranks..(l + 1) * ranks];
                for r in 0..ranks {
                    if loads[r] > 0.0 {
                        aff[r] -= 1000.0;
                    }
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
    owner
}

/// What the partition assumes when it prices placements: the cost model's inputs at the default
/// parameters (a quiet machine's 1.36 ms per cost unit; 3,232 B per level-0 bit, 8,208 B per ring,
/// 229,392 B per RAM or low-noise selector, 131,080 B per ROM or ordinary MUX selector) on the cluster network (10 Gb/s, 20 µs).
pub struct Pricing {
    pub measured: Measured,
    pub network: Network,
}

/// The pricing the partition places work with ([`Pricing`]).
pub const PLACEMENT_PRICE: Pricing = Pricing {
    measured: Measured {
        seconds_per_unit: 1.36e-3,
        bit_bytes: 3232,
        ring_bytes: 8208,
        sel_bytes: 229_392,
        small_sel_bytes: 131_080,
    },
    network: Network::TEN_GBE,
};

/// Places every task where it would finish earliest (list scheduling with communication priced
/// in, HEFT with insertion into a rank's idle gaps): tasks in order of upward rank (the critical path first), each on
/// the rank where `max(rank free, operands there) + cost` is least, an operand made elsewhere
/// arriving `latency + bytes / bandwidth` after its maker finished. A task of a unit that is
/// already placed (or forced) goes with it; the cycle's sources are everywhere at time 0.
fn place_earliest(
    set: &TaskSet,
    ranks: usize,
    units: &mut Units,
    forced: &[Option<u32>],
    price: &Pricing,
    small_sel: &dyn Fn(&Item) -> bool,
) -> (Vec<u32>, Vec<f64>) {
    let n = set.len();
    let m = &price.measured;
    // An item's time on its sender's link, and its latency, in cost units.
    let send = |i: &Item| -> f64 {
        let bytes = match i {
            Item::Bit(_) => m.bit_bytes,
            Item::Ring(_) | Item::WriteVal { .. } | Item::RamPart { .. } => m.ring_bytes,
            Item::Sel { .. } | Item::MuxSel(_) if small_sel(i) => m.small_sel_bytes,
            Item::Sel { .. } | Item::MuxSel(_) => m.sel_bytes,
        };
        bytes as f64 * 8.0 / price.network.bandwidth_bits / m.seconds_per_unit
    };
    let latency = price.network.latency / m.seconds_per_unit;
    // Each rank's link, free from this time on (sends queue on it, one after another), and when
    // each item already sent to a rank arrives there (sent once, whoever reads it).
    let mut link = vec![0f64; ranks];
    let mut sent: HashMap<(Item, u32), f64> = HashMap::new();
    let mut unit_rank: HashMap<u32, u32> = HashMap::new();
    for (t, f) in forced.iter().enumerate() {
        if let Some(r) = f {
            unit_rank.insert(units.find(t as u32), *r);
        }
    }
    let pr = |t: u32| set.graph.priority(t as usize);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| pr(b).total_cmp(&pr(a)).then(a.cmp(&b)));
    let mut owner = vec![u32::MAX; n];
    let mut finish = vec![0f64; n];
    let mut start_at = vec![0f64; n];
    // Per rank: its busy intervals, in time order (a task may go into an earlier gap).
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); ranks];
    let mut load = vec![0f64; ranks];
    let mut ready = vec![0f64; ranks];
    // The earliest start at or after `at` on rank `r` for `cost`, and where it goes in the list.
    let slot = |iv: &[(f64, f64)], at: f64, cost: f64| -> (f64, usize) {
        let mut start = at;
        for (k, &(s, e)) in iv.iter().enumerate() {
            if start + cost <= s {
                return (start, k);
            }
            start = start.max(e);
        }
        (start, iv.len())
    };
    for t in order {
        let f = &set.facts[t as usize];
        ready.iter_mut().for_each(|x| *x = 0.0);
        for i in &f.reads {
            let Some(&p) = set.producer.get(i) else {
                continue;
            };
            let (o, done) = (owner[p as usize], finish[p as usize]);
            if o == u32::MAX {
                continue;
            }
            let far = done.max(link[o as usize]) + send(i) + latency;
            for (r, x) in ready.iter_mut().enumerate() {
                let at = if r as u32 == o {
                    done
                } else {
                    sent.get(&(*i, r as u32)).copied().unwrap_or(far)
                };
                *x = x.max(at);
            }
        }
        let root = units.find(t);
        let (r, (start, k)) = match unit_rank.get(&root) {
            Some(&r) => (
                r as usize,
                slot(&busy[r as usize], ready[r as usize], f.cost),
            ),
            None => {
                let mut best = (0, slot(&busy[0], ready[0], f.cost));
                for r in 1..ranks {
                    let s = slot(&busy[r], ready[r], f.cost);
                    if s.0 < best.1 .0 || (s.0 == best.1 .0 && load[r] < load[best.0]) {
                        best = (r, s);
                    }
                }
                unit_rank.insert(root, best.0 as u32);
                best
            }
        };
        owner[t as usize] = r as u32;
        finish[t as usize] = start + f.cost;
        if f.cost > 0.0 {
            busy[r].insert(k, (start, start + f.cost));
        }
        // The operands it reads from other ranks now leave on their makers' links.
        for i in &f.reads {
            let Some(&p) = set.producer.get(i) else {
                continue;
            };
            let o = owner[p as usize];
            if o == u32::MAX || o as usize == r || sent.contains_key(&(*i, r as u32)) {
                continue;
            }
            let leave = finish[p as usize].max(link[o as usize]);
            link[o as usize] = leave + send(i);
            sent.insert((*i, r as u32), link[o as usize] + latency);
        }
        load[r] += f.cost;
        start_at[t as usize] = start;
    }
    // Earlier planned start first; among equal starts, the higher upward rank (at most `top`).
    // Along a data dependency the planned start does not fall and the upward rank does not rise,
    // so the order never asks a task to run before one it needs.
    let end = start_at.iter().copied().fold(0f64, f64::max) + 1.0;
    let top = set.graph.critical_path().max(1.0);
    // Tasks of no cost (a NOT, a CMUX) first whenever they are ready: they hold a rank for no time
    // in the plan, so they must not wait behind one that starts at the same moment.
    let priority = (0..n)
        .map(|t| {
            let p = (end - start_at[t]) * 2.0 * top + pr(t as u32);
            if set.facts[t].cost > 0.0 {
                p
            } else {
                p + end * 2.0 * top
            }
        })
        .collect();
    (owner, priority)
}

#[cfg(test)]
#[path = "partition_tests.rs"]
mod tests;
