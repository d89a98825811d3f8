//! Technology mapping into multi-input bootstrapped cells ([`vsp_tfhe::cells`]).
//!
//! One gate bootstrap can decide any function f(b) = [(Σ wᵢbᵢ + t) mod 4 ∈ {0, 1}] of up to four
//! level-0 bits, wᵢ ∈ {−1, 1, 2}: majority and "not all equal" of three (a full adder's carry),
//! XOR of three or four (its sum), x ⊕ g(y, z), x ⊕ MAJ(y, z, w) and functions of the count of ones
//! modulo 4. This pass covers a circuit's two-input gates (NOTs folded into the cells' weights) with
//! such cells, for any circuit, by cut enumeration on the gate graph (MUXes, flip-flops, inputs and
//! memory reads are leaves; MUXes stay as they are, so select-once CMUXes plan on the mapped circuit
//! exactly as before):
//!
//! 1. every gate gets up to [`MapParams::cuts_per_node`] cuts of at most `max_inputs` leaves with
//!    their truth tables; a cut is a candidate when its function is a cell
//!    ([`vsp_tfhe::cells::all_cells`]) and its decision meets the per-decision failure bound with each
//!    leaf at its worst-case variance (a gate, cell or memory-read output is a fresh bootstrap; any
//!    other bit — a MUX result, which may come out of a CMUX chain, or a flip-flop fed by one — is taken
//!    at the level-0 bound `v_tlwe_max` that the MUX plan keeps); a gate's own two fanins always are;
//! 2. a depth-optimal choice gives the cycle's least bootstrap depth D (every MUX one level, or, under
//!    a MUX plan ([`map_planned`], what the engine uses), as the cycle's tasks run: CMUX data free,
//!    selects a circuit bootstrap, gate MUXes two);
//! 3. area recovery under that depth: two passes by area flow, then two of exact area (the
//!    bootstraps a choice adds, by reference counting), each choice keeping every node within its
//!    required time, so the mapped cycle is no deeper than D (+ [`MapParams::depth_slack`]).
//!
//! The result is a [`Circuit`] with the same ports, flip-flops, memories and fingerprint (it is the
//! same design to the client), where a covered gate whose cut is its own two fanins stays a gate and
//! others become [`Node::Cell`]. Gates nothing reads any more are dropped; gates the original circuit
//! never read are kept (the engine evaluates them, as before). Results are bit-for-bit those of the
//! unmapped circuit: `tests/techmap.rs` runs both cores and random netlists mapped and unmapped on
//! the plain backend and compares every output and flip-flop each cycle.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use vsp_tfhe::cells::{all_cells, MAX_CELL_INPUTS};
use vsp_tfhe::CellSpec;

use crate::circuit::{Circuit, Node, NodeId, Step};
use crate::error::CircuitError;
use crate::leveled::MuxPlan;
use crate::netlist::GateKind;
use crate::noise::NoiseModel;

/// What the mapping may use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapParams {
    /// The most inputs of a cell (2 keeps the gates as they are; at most 4).
    pub max_inputs: usize,
    /// Variance of a fresh bootstrap's level-0 output (gate, cell, memory read).
    pub v_fresh: f64,
    /// Variance of a client-encrypted input bit.
    pub v_input: f64,
    /// Worst-case variance of any other level-0 bit (MUX results, flip-flops fed by them).
    pub v_noisy: f64,
    /// Modulus-switch variance at a bootstrap's input.
    pub v_ms: f64,
    /// log2 of the per-decision failure bound every cell keeps.
    pub log2_max_failure: f64,
    /// Bootstrap levels the area recovery may add to the least depth.
    pub depth_slack: u32,
    /// Cuts kept per gate.
    pub cuts_per_node: usize,
    /// A MUX whose select is a NOT selects on the NOT's operand with its data swapped (the same
    /// function), so the MUX plan can group it with the MUXes on that operand: one circuit bootstrap
    /// for both polarities. Whether that lowers a plan's cost depends on the circuit (the planner is
    /// greedy): the engine maps both ways and keeps the cheaper plan.
    pub swap_not_selects: bool,
}

impl MapParams {
    /// The mapping for a TFHE parameter set: cells of up to four inputs, per-decision failure
    /// ≤ 2^-64 (the bound the MUX plan keeps), no extra depth.
    pub fn for_params(p: &vsp_tfhe::Params) -> MapParams {
        let m = NoiseModel::of(p);
        let log2_max_failure = crate::leveled::GATE_FAILURE_LOG2;
        let z = NoiseModel::z_for(2f64.powf(log2_max_failure));
        // The MUX plan's level-0 bound (`LeveledParams::v_tlwe_max`); a gate MUX's result is below it.
        let v_tlwe_max = ((0.125 / z).powi(2) - m.v_ms) / 2.0;
        MapParams {
            max_inputs: MAX_CELL_INPUTS,
            v_fresh: m.v_br + m.v_ks,
            v_input: p.sigma0 * p.sigma0,
            v_noisy: v_tlwe_max.max(2.0 * m.v_br + m.v_ks),
            v_ms: m.v_ms,
            log2_max_failure,
            depth_slack: 0,
            cuts_per_node: 24,
            swap_not_selects: false,
        }
    }

    /// Whether a cell whose inputs have (at most) these variances meets the failure bound.
    pub fn fits(&self, spec: &CellSpec, vars: &[f64]) -> bool {
        let v: f64 = spec
            .weights()
            .iter()
            .zip(vars)
            .map(|(&w, &x)| f64::from(w) * f64::from(w) * x)
            .sum::<f64>()
            + self.v_ms;
        let z = NoiseModel::z_for(2f64.powf(self.log2_max_failure));
        v <= (spec.margin() / z).powi(2)
    }
}

/// Latencies the mapping minimises, in tenths of a gate bootstrap (the scheduler's task costs).
/// Without a MUX plan every MUX and memory read counts as one bootstrap level; with one
/// ([`map_planned`]) they count as the cycle's tasks do: a gate MUX two bootstraps, a CMUX nothing
/// on its data but a circuit bootstrap (5) on its select, a lifted operand one, a ROM read 5 + 1 after
/// its address (one bit per task, as 64 MPI ranks run it), a RAM read 5 + 1.2.
#[derive(Clone, Debug)]
struct Delays {
    gate_mux: u32,
    select: u32,
    lift: u32,
    rom: u32,
    ram: u32,
    /// Per node: a MUX the plan runs as a CMUX.
    cmux: Vec<bool>,
    /// Per node: a bit the plan lifts to a ring.
    lifted: Vec<bool>,
}

const GATE: u32 = 10;

impl Delays {
    fn levels(n: usize) -> Delays {
        Delays {
            gate_mux: GATE,
            select: 0,
            lift: 0,
            rom: GATE,
            ram: GATE,
            cmux: vec![false; n],
            lifted: vec![false; n],
        }
    }
    fn planned(c: &Circuit, plan: &MuxPlan) -> Delays {
        let n = c.nodes.len();
        let flag = |v: &[bool]| (0..n).map(|i| v.get(i).copied().unwrap_or(false)).collect();
        Delays {
            gate_mux: 2 * GATE,
            select: 5 * GATE,
            lift: GATE,
            // One data bit per read task, as on many ranks (the floor the depth is about).
            rom: 5 * GATE + GATE,
            ram: 5 * GATE + 12,
            cmux: flag(&plan.cmux),
            lifted: flag(&plan.lift),
        }
    }
    /// The latency from operand `k` (0 = select) of MUX `i` to its result.
    fn mux(&self, i: usize, k: usize, operand: NodeId) -> u32 {
        if !self.cmux[i] {
            self.gate_mux
        } else if k == 0 {
            self.select
        } else if self.lifted[operand as usize] {
            self.lift
        } else {
            0
        }
    }
    fn mem(&self, c: &Circuit, m: usize) -> u32 {
        match c.mems[m].spec.kind {
            crate::blueprint::MemKind::Rom => self.rom,
            crate::blueprint::MemKind::Ram => self.ram,
        }
    }
}

/// The cell of least noise weight for each truth table, per arity.
fn table() -> &'static [HashMap<u16, CellSpec>] {
    static T: OnceLock<Vec<HashMap<u16, CellSpec>>> = OnceLock::new();
    T.get_or_init(|| {
        (0..=MAX_CELL_INPUTS)
            .map(|k| all_cells(k).into_iter().collect())
            .collect()
    })
}

/// The cell computing truth table `tt` of `k` inputs, if there is one.
pub fn cell_for(tt: u16, k: usize) -> Option<CellSpec> {
    table().get(k)?.get(&tt).copied()
}

/// A short name of a cell's class for statistics: `MAJ3`, `NAE3` (not all equal), `XOR3`, `XOR4`,
/// `XAND3` (x ⊕ a two-input threshold of y, z), `XMAJ4`, `XNAE4`, `SYM4` (a function of the count of
/// ones modulo 4), `CELL2` (a two-input function of a cut other than a gate's fanins).
pub fn cell_class(spec: &CellSpec) -> String {
    let k = spec.arity();
    let w = spec.weights();
    let odd = w.iter().filter(|&&x| x != 2).count();
    let neg = w.iter().filter(|&&x| x == -1).count() as i32;
    let maj = (i32::from(spec.offset()) - neg).rem_euclid(2) == 0;
    match (odd, k) {
        (0, _) => format!("XOR{k}"),
        (_, 2) => "CELL2".into(),
        (3, 3) => if maj { "MAJ3" } else { "NAE3" }.into(),
        (4, 4) => "SYM4".into(),
        (2, 3) => "XAND3".into(),
        (3, 4) => if maj { "XMAJ4" } else { "XNAE4" }.into(),
        _ => format!("CELL{k}"),
    }
}

/// Bootstraps per cycle by the kind of the node that spends them (`AND`…, `MUX` two each, cell
/// classes from [`cell_class`]); MUXes that run as CMUXes are counted here as gate MUXes.
pub fn kind_counts(c: &Circuit) -> BTreeMap<String, usize> {
    kind_counts_under(c, None)
}

/// [`kind_counts`] of the nodes a plan bootstraps: without the selects whose circuit bootstrap
/// decides their gate ([`MuxPlan::is_fused_select`]).
pub fn kind_counts_under(c: &Circuit, plan: Option<&MuxPlan>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for (id, n) in c.nodes().iter().enumerate() {
        if plan.is_some_and(|p| p.is_fused_select(id as NodeId)) {
            continue;
        }
        let name = match n {
            Node::Gate(k, ..) => k.name().to_string(),
            Node::Mux { .. } => "MUX".into(),
            Node::Cell { spec, .. } => cell_class(spec),
            _ => continue,
        };
        *m.entry(name).or_insert(0) += 1;
    }
    m
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cut {
    leaves: [NodeId; MAX_CELL_INPUTS],
    n: u8,
    tt: u16,
}

impl Cut {
    fn leaves(&self) -> &[NodeId] {
        &self.leaves[..self.n as usize]
    }
    fn trivial(x: NodeId) -> Cut {
        Cut {
            leaves: [x, 0, 0, 0],
            n: 1,
            tt: 0b10,
        }
    }
}

/// The truth table `tt` over `from` re-expressed over `to` (a superset).
fn expand(tt: u16, from: &[NodeId], to: &[NodeId]) -> u16 {
    let pos: Vec<usize> = from
        .iter()
        .map(|x| to.iter().position(|y| y == x).unwrap_or(0))
        .collect();
    let mut out = 0u16;
    for m in 0..(1usize << to.len()) {
        let mut mf = 0usize;
        for (j, &p) in pos.iter().enumerate() {
            mf |= ((m >> p) & 1) << j;
        }
        out |= ((tt >> mf) & 1) << m;
    }
    out
}

fn mask(k: usize) -> u16 {
    if k >= 4 {
        u16::MAX
    } else {
        (1u16 << (1 << k)) - 1
    }
}

/// Drops the leaves `tt` does not depend on.
fn reduce(mut c: Cut) -> Cut {
    let mut i = 0;
    while i < c.n as usize {
        let k = c.n as usize;
        let depends =
            (0..(1usize << k)).any(|m| ((c.tt >> m) & 1) != ((c.tt >> (m ^ (1 << i))) & 1));
        if depends {
            i += 1;
            continue;
        }
        let mut tt = 0u16;
        for m in 0..(1usize << (k - 1)) {
            let low = m & ((1 << i) - 1);
            let full = low | ((m >> i) << (i + 1));
            tt |= ((c.tt >> full) & 1) << m;
        }
        for j in i..k - 1 {
            c.leaves[j] = c.leaves[j + 1];
        }
        c.n -= 1;
        c.tt = tt;
    }
    c
}

/// How a gate is evaluated: its own gate, or a cell over a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Impl {
    Gate,
    Cell(Cut, CellSpec),
}

struct Mapper<'a> {
    c: &'a Circuit,
    p: &'a MapParams,
    /// `(base, negated)` of every node: NOT chains stripped.
    base: Vec<(NodeId, bool)>,
    /// Per gate: its candidate cuts (leaves are bases).
    cands: Vec<Vec<(Cut, CellSpec)>>,
    choice: Vec<Impl>,
    arrival: Vec<u32>,
    area_flow: Vec<f64>,
    /// Per base node: how many readers it has in the original circuit (through NOTs).
    uses: Vec<u32>,
    refs: Vec<u32>,
    /// Per gate: every cut kept (candidates or not), for its readers' cuts.
    all_cuts: Vec<Vec<Cut>>,
    delays: Delays,
}

impl<'a> Mapper<'a> {
    fn is_gate(&self, x: NodeId) -> bool {
        matches!(self.c.nodes[x as usize], Node::Gate(..))
    }

    fn fanin_bases(&self, g: NodeId) -> [NodeId; 2] {
        match self.c.nodes[g as usize] {
            Node::Gate(_, a, b) => [self.base[a as usize].0, self.base[b as usize].0],
            _ => [g, g],
        }
    }

    /// The leaves (bases) of `g`'s implementation `im`.
    fn leaves(&self, g: NodeId, im: &Impl) -> Vec<NodeId> {
        match im {
            Impl::Gate => self.fanin_bases(g).to_vec(),
            Impl::Cell(cut, _) => cut.leaves().to_vec(),
        }
    }

    fn arrival_of(&self, leaves: &[NodeId]) -> u32 {
        GATE + leaves
            .iter()
            .map(|&x| self.arrival[x as usize])
            .max()
            .unwrap_or(0)
    }

    fn flow_of(&self, leaves: &[NodeId], est: &dyn Fn(NodeId) -> f64) -> f64 {
        1.0 + leaves
            .iter()
            .filter(|&&x| self.is_gate(x))
            .map(|&x| self.area_flow[x as usize] / est(x).max(1.0))
            .sum::<f64>()
    }

    /// Worst-case level-0 variance of every node (see the module documentation).
    fn variance_bounds(&self) -> Vec<f64> {
        let c = self.c;
        let fresh = |n: &Node| -> Option<f64> {
            match n {
                Node::Gate(..) | Node::Cell { .. } | Node::MemOut { .. } => Some(self.p.v_fresh),
                Node::Const(_) => Some(0.0),
                Node::Input(_) => Some(self.p.v_input),
                _ => None,
            }
        };
        c.nodes
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let b = &c.nodes[self.base[i].0 as usize];
                let v = match b {
                    Node::Dff(k) => {
                        let d = self.base[c.dffs[*k as usize].d as usize].0;
                        fresh(&c.nodes[d as usize])
                    }
                    _ => fresh(b),
                };
                v.unwrap_or(self.p.v_noisy)
            })
            .collect()
    }

    /// Arrival times of the non-gate nodes and of the gates under their current choices, in order.
    fn propagate(&mut self, order: &[Step], choose: &mut dyn FnMut(&mut Self, NodeId)) {
        for step in order {
            match *step {
                Step::Node(id) => {
                    let i = id as usize;
                    match self.c.nodes[i] {
                        Node::Not(a) => self.arrival[i] = self.arrival[a as usize],
                        Node::Gate(..) => choose(self, id),
                        Node::Mux { s, a, b } => {
                            self.arrival[i] = [s, a, b]
                                .iter()
                                .enumerate()
                                .map(|(k, &x)| {
                                    let src = self.base[x as usize].0;
                                    self.arrival[x as usize] + self.delays.mux(i, k, src)
                                })
                                .max()
                                .unwrap_or(0);
                        }
                        Node::Cell { spec, ins } => {
                            self.arrival[i] = self.arrival_of(&ins[..spec.arity()]);
                        }
                        _ => {}
                    }
                }
                Step::MemRead(m) => {
                    let mem = &self.c.mems[m as usize];
                    let a = mem
                        .addr
                        .iter()
                        .map(|&x| self.arrival[x as usize])
                        .max()
                        .unwrap_or(0)
                        + self.delays.mem(self.c, m as usize);
                    for &r in &mem.rdata {
                        self.arrival[r as usize] = a;
                    }
                }
            }
        }
    }

    fn enumerate_cuts(&mut self, g: NodeId, vb: &[f64]) -> Vec<Cut> {
        let Node::Gate(kind, a, b) = self.c.nodes[g as usize] else {
            return Vec::new();
        };
        let k = self.p.max_inputs;
        let (ba, na) = self.base[a as usize];
        let (bb, nb) = self.base[b as usize];
        let list = |x: NodeId, cuts: &[Vec<Cut>]| -> Vec<Cut> {
            let mut v = vec![Cut::trivial(x)];
            v.extend(cuts[x as usize].iter().copied());
            v
        };
        let la = list(ba, &self.all_cuts);
        let lb = list(bb, &self.all_cuts);
        let mut out: Vec<Cut> = Vec::new();
        for ca in &la {
            for cb in &lb {
                let mut leaves: Vec<NodeId> = ca.leaves().to_vec();
                for &x in cb.leaves() {
                    if !leaves.contains(&x) {
                        leaves.push(x);
                    }
                }
                if leaves.len() > k {
                    continue;
                }
                leaves.sort_unstable();
                let m = mask(leaves.len());
                let mut ta = expand(ca.tt, ca.leaves(), &leaves);
                let mut tb = expand(cb.tt, cb.leaves(), &leaves);
                if na {
                    ta = !ta & m;
                }
                if nb {
                    tb = !tb & m;
                }
                let tt = (kind.eval_u64(u64::from(ta), u64::from(tb)) as u16) & m;
                let mut cut = Cut {
                    leaves: [0; MAX_CELL_INPUTS],
                    n: leaves.len() as u8,
                    tt,
                };
                cut.leaves[..leaves.len()].copy_from_slice(&leaves);
                let cut = reduce(cut);
                if cut.n < 2 || out.iter().any(|o| o.leaves() == cut.leaves()) {
                    continue;
                }
                out.push(cut);
            }
        }
        // Keep the most promising: shallow, then small area flow, then few leaves.
        let est = |x: NodeId| f64::from(self.uses[x as usize]);
        let mut keyed: Vec<(u32, f64, u8, Cut)> = out
            .into_iter()
            .map(|c| {
                (
                    self.arrival_of(c.leaves()),
                    self.flow_of(c.leaves(), &est),
                    c.n,
                    c,
                )
            })
            .collect();
        keyed.sort_by(|x, y| {
            x.0.cmp(&y.0)
                .then(x.1.total_cmp(&y.1))
                .then(x.2.cmp(&y.2))
                .then(x.3.leaves().cmp(y.3.leaves()))
        });
        keyed.truncate(self.p.cuts_per_node);
        let cuts: Vec<Cut> = keyed.into_iter().map(|x| x.3).collect();
        let fanins = {
            let mut f = [ba, bb];
            f.sort_unstable();
            f
        };
        self.cands[g as usize] = cuts
            .iter()
            .filter(|c| c.leaves() != fanins)
            .filter_map(|c| {
                let spec = cell_for(c.tt, c.n as usize)?;
                let vars: Vec<f64> = c.leaves().iter().map(|&x| vb[x as usize]).collect();
                (c.n <= 2 || self.p.fits(&spec, &vars)).then_some((*c, spec))
            })
            .collect();
        cuts
    }
}

impl Mapper<'_> {
    fn new<'b>(c: &'b Circuit, p: &'b MapParams) -> Mapper<'b> {
        let n = c.nodes.len();
        let mut base: Vec<(NodeId, bool)> = (0..n as NodeId).map(|i| (i, false)).collect();
        for step in &c.order {
            if let Step::Node(id) = *step {
                if let Node::Not(a) = c.nodes[id as usize] {
                    let (b, neg) = base[a as usize];
                    base[id as usize] = (b, !neg);
                }
            }
        }
        let mut uses = vec![0u32; n];
        let count = |x: NodeId, uses: &mut Vec<u32>| uses[base[x as usize].0 as usize] += 1;
        for node in &c.nodes {
            if !matches!(node, Node::Not(_)) {
                for x in node.operands() {
                    count(x, &mut uses);
                }
            }
        }
        for x in sinks(c) {
            count(x, &mut uses);
        }
        Mapper {
            c,
            p,
            base,
            cands: vec![Vec::new(); n],
            choice: vec![Impl::Gate; n],
            arrival: vec![0; n],
            area_flow: vec![0.0; n],
            uses,
            refs: vec![0; n],
            all_cuts: vec![Vec::new(); n],
            delays: Delays::levels(n),
        }
    }
}

/// Every node read from outside the cycle's logic: outputs, flip-flop inputs, memory ports.
fn sinks(c: &Circuit) -> Vec<NodeId> {
    let mut v: Vec<NodeId> = c
        .outputs
        .iter()
        .flat_map(|p| p.bits.iter().copied())
        .collect();
    v.extend(c.dffs.iter().map(|d| d.d));
    for m in &c.mems {
        v.extend(m.addr.iter().copied());
        v.extend(m.wren);
        v.extend(m.wdata.iter().copied());
    }
    v
}

/// Maps `c` into multi-input cells under `p`, every MUX and memory read counting one bootstrap
/// level in the depth it keeps.
pub fn map(c: &Circuit, p: &MapParams) -> Result<Circuit, CircuitError> {
    map_with(c, p, None)
}

/// Maps `c` minimising the depth as the cycle's tasks run under `plan` (a MUX plan of `c`): CMUX
/// data cost nothing, their selects a circuit bootstrap, gate MUXes two bootstraps (see the
/// scheduler's task costs). What the engine uses when it plans CMUXes.
pub fn map_planned(c: &Circuit, p: &MapParams, plan: &MuxPlan) -> Result<Circuit, CircuitError> {
    map_with(c, p, Some(plan))
}

/// The cycle's critical path in gate bootstraps under `plan` as [`map_planned`] counts it (every MUX
/// and memory read one level without a plan).
pub fn critical_path(c: &Circuit, plan: Option<&MuxPlan>) -> f64 {
    with_arrivals(c, plan, |mp| {
        f64::from(mp.arrival.iter().copied().max().unwrap_or(0)) / f64::from(GATE)
    })
}

/// `f` of the mapper after every node's arrival time was propagated with gates only (every MUX and
/// memory read one level without a plan; `plan`'s delays with one).
fn with_arrivals<R>(c: &Circuit, plan: Option<&MuxPlan>, f: impl FnOnce(&Mapper) -> R) -> R {
    let p = MapParams::for_params(&vsp_tfhe::Params::default_128());
    let mut mp = Mapper::new(c, &p);
    if let Some(plan) = plan {
        mp.delays = Delays::planned(c, plan);
    }
    let order = c.order.clone();
    mp.propagate(&order, &mut |m, g| {
        let l = m.leaves(g, &Impl::Gate);
        m.arrival[g as usize] = m.arrival_of(&l);
    });
    f(&mp)
}

/// The nodes on the cycle's critical path as [`critical_path`] counts it, from the source (an input,
/// a flip-flop or a constant) to the latest node, each with its arrival time in gate bootstraps: what
/// to restructure when the path is too long (`vsp-bench plan` prints it).
pub fn critical_chain(c: &Circuit, plan: Option<&MuxPlan>) -> Vec<(NodeId, f64)> {
    with_arrivals(c, plan, |mp| chain_of(c, mp))
}

/// The critical chain through the arrival times of `mp` (see [`critical_chain`]).
fn chain_of(c: &Circuit, mp: &Mapper) -> Vec<(NodeId, f64)> {
    // Which memory each read-data node belongs to.
    let mut mem_of = vec![usize::MAX; c.nodes.len()];
    for (k, m) in c.mems.iter().enumerate() {
        for &r in &m.rdata {
            mem_of[r as usize] = k;
        }
    }
    let at = |x: NodeId| mp.arrival[x as usize];
    let latest = |xs: &mut dyn Iterator<Item = NodeId>| xs.max_by_key(|&x| (at(x), x));
    let Some(mut i) = (0..c.nodes.len() as NodeId).max_by_key(|&x| (at(x), x)) else {
        return Vec::new();
    };
    let mut chain = vec![i];
    loop {
        let next = match c.nodes[i as usize] {
            Node::Not(a) => Some(a),
            Node::Gate(_, a, b) => latest(&mut [a, b].into_iter()),
            Node::Cell { spec, ins } => latest(&mut ins[..spec.arity()].iter().copied()),
            Node::Mux { s, a, b } => [s, a, b]
                .into_iter()
                .enumerate()
                .max_by_key(|&(k, x)| {
                    (
                        at(x) + mp.delays.mux(i as usize, k, mp.base[x as usize].0),
                        x,
                    )
                })
                .map(|(_, x)| x),
            Node::MemOut { .. } if mem_of[i as usize] != usize::MAX => {
                latest(&mut c.mems[mem_of[i as usize]].addr.iter().copied())
            }
            _ => None,
        };
        match next {
            Some(x) if !chain.contains(&x) => {
                chain.push(x);
                i = x;
            }
            _ => break,
        }
    }
    chain.reverse();
    chain
        .into_iter()
        .map(|x| (x, f64::from(at(x)) / f64::from(GATE)))
        .collect()
}

fn map_with(c: &Circuit, p: &MapParams, plan: Option<&MuxPlan>) -> Result<Circuit, CircuitError> {
    if p.max_inputs < 3 {
        return Ok(c.clone());
    }
    let n = c.nodes.len();
    let mut mp = Mapper::new(c, p);
    if let Some(plan) = plan {
        mp.delays = Delays::planned(c, plan);
    }
    let vb = mp.variance_bounds();
    let order = c.order.clone();

    // Pass 0: cuts and the depth-optimal choice.
    mp.propagate(&order, &mut |m, g| {
        let cuts = m.enumerate_cuts(g, &vb);
        m.all_cuts[g as usize] = cuts;
        choose_depth(m, g);
    });
    let depth = mp.arrival.iter().copied().max().unwrap_or(0) + GATE * p.depth_slack;

    // Area flow, then exact area, under the depth bound.
    for pass in 0..4 {
        let required = mp.cover(depth);
        let exact = pass >= 2;
        mp.propagate(&order, &mut |m, g| {
            let r = required[g as usize];
            if m.refs[g as usize] == 0 {
                choose_depth(m, g);
            } else if exact {
                choose_exact(m, g, r);
            } else {
                choose_flow(m, g, r);
            }
        });
    }
    let _ = mp.cover(depth);

    // Emit: covered gates as gates or cells; unread NOTs and gates dropped.
    let mut nodes = c.nodes.clone();
    // Per node: MUX reads moved off it (a gate the cover references only through them is dropped).
    let mut moved = vec![0u32; n];
    if p.swap_not_selects {
        for node in nodes.iter_mut() {
            if let Node::Mux { s, a, b } = *node {
                if let Node::Not(x) = c.nodes[s as usize] {
                    *node = Node::Mux { s: x, a: b, b: a };
                }
            }
        }
        swap_complement_selects(c, &mut nodes, &mut moved);
    }
    let mut keep = vec![false; n];
    let mut needed = vec![false; n];
    for x in sinks(c) {
        needed[x as usize] = true;
    }
    for (i, node) in c.nodes.iter().enumerate() {
        // What the original circuit never read stays (it was evaluated, and still is).
        let unread = mp.uses[i] == 0 && !matches!(node, Node::Not(_));
        if unread || !matches!(node, Node::Gate(..) | Node::Not(_)) {
            needed[i] = true;
        }
    }
    for step in order.iter().rev() {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        match c.nodes[i] {
            Node::Gate(..) => {
                if mp.refs[i] == moved[i] && !needed[i] {
                    continue;
                }
                needed[i] = true;
                if let Impl::Cell(cut, spec) = mp.choice[i] {
                    let mut ins = [0; MAX_CELL_INPUTS];
                    ins[..cut.n as usize].copy_from_slice(cut.leaves());
                    nodes[i] = Node::Cell { spec, ins };
                }
            }
            Node::Not(_) if !needed[i] => continue,
            _ => {}
        }
        for x in nodes[i].operands() {
            needed[x as usize] = true;
        }
    }
    for (i, node) in c.nodes.iter().enumerate() {
        keep[i] = needed[i] || !matches!(node, Node::Gate(..) | Node::Not(_));
    }
    c.rebuilt(&nodes, &keep)
}

/// The gate computing the complement of `kind(a, b)`, as `(kind, a, b)` with commutative operands
/// in order (so that equal functions of the same operands compare equal).
fn complement_gate(kind: GateKind, a: NodeId, b: NodeId) -> (GateKind, NodeId, NodeId) {
    let (lo, hi) = (a.min(b), a.max(b));
    match kind {
        GateKind::And => (GateKind::Nand, lo, hi),
        GateKind::Nand => (GateKind::And, lo, hi),
        GateKind::Or => (GateKind::Nor, lo, hi),
        GateKind::Nor => (GateKind::Or, lo, hi),
        GateKind::Xor => (GateKind::Xnor, lo, hi),
        GateKind::Xnor => (GateKind::Xor, lo, hi),
        // ¬(a ∧ ¬b) = b ∨ ¬a, ¬(a ∨ ¬b) = b ∧ ¬a
        GateKind::AndNot => (GateKind::OrNot, b, a),
        GateKind::OrNot => (GateKind::AndNot, b, a),
    }
}

/// `kind(a, b)` in the form [`complement_gate`] returns.
fn gate_key(kind: GateKind, a: NodeId, b: NodeId) -> (GateKind, NodeId, NodeId) {
    match kind {
        GateKind::AndNot | GateKind::OrNot => (kind, a, b),
        _ => (kind, a.min(b), a.max(b)),
    }
}

/// MUXes whose selects are complementary gates of the same operands (an AND and a NAND of `x`, `y`;
/// an ANDNOT(x, y) and an ORNOT(y, x) …: synthesis builds both polarities) select on one of them,
/// the one more MUXes read (then the first), with their data swapped (the same function): one
/// circuit bootstrap for both, and the other gate is dropped when nothing else reads it.
fn swap_complement_selects(c: &Circuit, nodes: &mut [Node], moved: &mut [u32]) {
    let mut reads: HashMap<NodeId, usize> = HashMap::new();
    for node in nodes.iter() {
        if let Node::Mux { s, .. } = *node {
            *reads.entry(s).or_default() += 1;
        }
    }
    let mut by_key: HashMap<(GateKind, NodeId, NodeId), NodeId> = HashMap::new();
    let mut sels: Vec<NodeId> = reads.keys().copied().collect();
    sels.sort_unstable();
    for &s in &sels {
        if let Node::Gate(k, a, b) = c.nodes[s as usize] {
            by_key.entry(gate_key(k, a, b)).or_insert(s);
        }
    }
    let rank = |s: NodeId| (reads[&s], std::cmp::Reverse(s));
    for node in nodes.iter_mut() {
        let Node::Mux { s, a, b } = *node else {
            continue;
        };
        let Node::Gate(k, x, y) = c.nodes[s as usize] else {
            continue;
        };
        if let Some(&t) = by_key.get(&complement_gate(k, x, y)) {
            if rank(t) > rank(s) {
                *node = Node::Mux { s: t, a: b, b: a };
                moved[s as usize] += 1;
            }
        }
    }
}

fn choose_depth(m: &mut Mapper<'_>, g: NodeId) {
    let est = |x: NodeId| f64::from(m.uses[x as usize]);
    let mut best = (Impl::Gate, {
        let l = m.fanin_bases(g);
        (m.arrival_of(&l), m.flow_of(&l, &est))
    });
    for (cut, spec) in &m.cands[g as usize] {
        let a = m.arrival_of(cut.leaves());
        let f = m.flow_of(cut.leaves(), &est);
        let (ba, bf) = best.1;
        if a < ba || (a == ba && f < bf - 1e-9) {
            best = (Impl::Cell(*cut, *spec), (a, f));
        }
    }
    m.choice[g as usize] = best.0;
    m.arrival[g as usize] = best.1 .0;
    m.area_flow[g as usize] = best.1 .1;
}

/// `g`'s implementations (the gate, then its cut candidates) with their leaves and arrival time:
/// those that meet `required`, and the current choice in any case.
fn timed_options(m: &Mapper<'_>, g: NodeId, required: u32) -> Vec<(Impl, Vec<NodeId>, u32)> {
    let current = m.choice[g as usize];
    let mut options = vec![Impl::Gate];
    options.extend(m.cands[g as usize].iter().map(|&(c, s)| Impl::Cell(c, s)));
    options
        .into_iter()
        .filter_map(|im| {
            let l = m.leaves(g, &im);
            let a = m.arrival_of(&l);
            (a <= required || im == current).then_some((im, l, a))
        })
        .collect()
}

fn choose_flow(m: &mut Mapper<'_>, g: NodeId, required: u32) {
    let est = |x: NodeId| f64::from(m.refs[x as usize].max(1));
    let mut best: Option<(Impl, u32, f64)> = None;
    for (im, l, a) in timed_options(m, g, required) {
        let f = m.flow_of(&l, &est);
        let better = match &best {
            None => true,
            Some((_, ba, bf)) => f < bf - 1e-9 || ((f - bf).abs() <= 1e-9 && a < *ba),
        };
        if better {
            best = Some((im, a, f));
        }
    }
    if let Some((im, a, f)) = best {
        m.choice[g as usize] = im;
        m.arrival[g as usize] = a;
        m.area_flow[g as usize] = f;
    }
}

fn choose_exact(m: &mut Mapper<'_>, g: NodeId, required: u32) {
    let current = m.choice[g as usize];
    m.deref(g);
    let mut best: Option<(Impl, u32, u32)> = None;
    for (im, _, a) in timed_options(m, g, required) {
        m.choice[g as usize] = im;
        let area = m.reference(g);
        m.deref(g);
        let better = match &best {
            None => true,
            Some((_, ba, bar)) => area < *bar || (area == *bar && a < *ba),
        };
        if better {
            best = Some((im, a, area));
        }
    }
    let (im, a, _) = best.unwrap_or((current, m.arrival[g as usize], 0));
    m.choice[g as usize] = im;
    m.arrival[g as usize] = a;
    let est = |x: NodeId| f64::from(m.refs[x as usize].max(1));
    m.area_flow[g as usize] = m.flow_of(&m.leaves(g, &im), &est);
    m.reference(g);
}

impl Mapper<'_> {
    /// References `g`'s leaves; returns the bootstraps that adds (g's own included).
    fn reference(&mut self, g: NodeId) -> u32 {
        let mut area = 1;
        for x in self.leaves(g, &self.choice[g as usize].clone()) {
            if !self.is_gate(x) {
                continue;
            }
            if self.refs[x as usize] == 0 {
                area += self.reference(x);
            }
            self.refs[x as usize] += 1;
        }
        area
    }

    /// Undoes [`Self::reference`]; returns the bootstraps that frees.
    fn deref(&mut self, g: NodeId) -> u32 {
        let mut area = 1;
        for x in self.leaves(g, &self.choice[g as usize].clone()) {
            if !self.is_gate(x) {
                continue;
            }
            self.refs[x as usize] -= 1;
            if self.refs[x as usize] == 0 {
                area += self.deref(x);
            }
        }
        area
    }

    /// Recomputes the references of the current cover from the sinks and returns every node's
    /// required time under the depth bound.
    fn cover(&mut self, depth: u32) -> Vec<u32> {
        let c = self.c;
        let n = c.nodes.len();
        self.refs = vec![0; n];
        let mut required = vec![depth; n];
        // Roots: sinks, every MUX's and memory's operands, and gates the circuit never read.
        let mut roots: Vec<NodeId> = sinks(c);
        for node in &c.nodes {
            if let Node::Mux { .. } | Node::Cell { .. } = node {
                roots.extend(node.operands());
            }
        }
        for (i, node) in c.nodes.iter().enumerate() {
            if self.uses[i] == 0 && matches!(node, Node::Gate(..)) {
                roots.push(i as NodeId);
            }
        }
        for x in roots {
            let b = self.base[x as usize].0;
            if self.is_gate(b) {
                if self.refs[b as usize] == 0 {
                    self.reference(b);
                }
                self.refs[b as usize] += 1;
            }
        }
        for step in c.order.iter().rev() {
            match *step {
                Step::Node(id) => {
                    let i = id as usize;
                    let r = required[i];
                    let ops: Vec<(NodeId, u32)> = match c.nodes[i] {
                        Node::Gate(..) if self.refs[i] > 0 => self
                            .leaves(id, &self.choice[i])
                            .into_iter()
                            .map(|x| (x, GATE))
                            .collect(),
                        Node::Not(a) => vec![(a, 0)],
                        Node::Mux { s, a, b } => [s, a, b]
                            .iter()
                            .enumerate()
                            .map(|(k, &x)| (x, self.delays.mux(i, k, self.base[x as usize].0)))
                            .collect(),
                        Node::Cell { .. } => c.nodes[i].operands().map(|x| (x, GATE)).collect(),
                        _ => continue,
                    };
                    for (x, dec) in ops {
                        let t = &mut required[x as usize];
                        *t = (*t).min(r.saturating_sub(dec));
                    }
                }
                Step::MemRead(m) => {
                    let mem = &c.mems[m as usize];
                    let r = mem
                        .rdata
                        .iter()
                        .map(|&x| required[x as usize])
                        .min()
                        .unwrap_or(depth);
                    let dec = self.delays.mem(c, m as usize);
                    for &a in &mem.addr {
                        let t = &mut required[a as usize];
                        *t = (*t).min(r.saturating_sub(dec));
                    }
                }
            }
        }
        required
    }
}

/// The cycle's bootstrap depth as the mapping counts it: a gate, a cell and a MUX (as gates) one
/// level each, a memory read one level after its address, NOT none.
pub fn depth(c: &Circuit) -> u32 {
    let mut d = vec![0u32; c.nodes.len()];
    let mut worst = 0;
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let n = &c.nodes[id as usize];
                let m = n.operands().map(|x| d[x as usize]).max().unwrap_or(0);
                d[id as usize] = m + n.bootstraps().min(1);
                worst = worst.max(d[id as usize]);
            }
            Step::MemRead(m) => {
                let mem = &c.mems[m as usize];
                let a = 1 + mem.addr.iter().map(|&x| d[x as usize]).max().unwrap_or(0);
                for &r in &mem.rdata {
                    d[r as usize] = a;
                }
                worst = worst.max(a);
            }
        }
    }
    worst
}

/// Maps `c` with `p` when given, else returns it as is (what [`crate::Engine::new`] does with its
/// backend's [`crate::Backend::techmap`]).
pub fn map_opt(c: &Circuit, p: Option<&MapParams>) -> Result<Circuit, CircuitError> {
    match p {
        Some(p) => map(c, p),
        None => Ok(c.clone()),
    }
}
