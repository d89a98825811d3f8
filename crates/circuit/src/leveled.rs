//! Select-once MUXes: which MUX cells the engine evaluates as CMUXes, planned once per circuit.
//!
//! A gate-level MUX costs two gate bootstraps. When one select signal drives many MUXes it is far
//! cheaper to circuit-bootstrap that select once per cycle into a TRGSW and evaluate every MUX it drives
//! as a CMUX (one external product, ≈ 1/770 of a bootstrap) on data in the *ring* form: a level-1 TRLWE
//! whose constant coefficient holds the bit (±1/8). A gate bootstrap produces that form for free (it is
//! the blind rotation's output before sample extraction), memory reads end in such a bootstrap too, a
//! constant is a trivial TRLWE, a NOT negates it; bits that only exist as level-0 TLWEs (inputs and
//! flip-flops) cost one bootstrap to lift. Where a gate, a flip-flop, an output or a select consumes a
//! CMUX result, it is sample-extracted and key-switched (no bootstrap).
//!
//! Noise: every CMUX adds `v_ext` to the selected operand's variance. The plan keeps two invariants,
//! from which every decision's failure probability follows:
//! * every level-0 bit has variance ≤ `v_tlwe_max`, chosen so that a two-input gate whose inputs are both
//!   at that bound fails with probability ≤ 2^-64 (NAND-like a+b with margin 1/8 is the binding case;
//!   XOR's 2a+2b has twice the margin for four times the variance);
//! * every ring has variance ≤ `v_ring_max = v_tlwe_max − v_ks`, so its extraction meets the first.
//!
//! A CMUX whose operand would break the second is preceded by a *refresh* of that operand (extract,
//! key-switch, bootstrap back to a fresh ring). Flip-flops whose bit feeds a CMUX either lift it every
//! cycle or *carry* their D's ring across the clock edge while its variance is within a per-flip-flop
//! budget (checked by the engine every cycle); refresh *cuts* after the carried rings' first CMUX levels
//! give them budget where that pays, and so does circuit-bootstrapping the selects of the CMUXes they
//! pass through with the RAM's low-noise gadget (`Params::cb_ram`, [`LeveledParams::v_ext_low`]). The plan then picks the selects to convert greedily by
//! cost (in gate-bootstrap units): start from every select with two or more MUXes, and drop the select
//! whose removal lowers the total cost most, until none does.
//!
//! A select whose own level-0 variance (a CMUX chain's result) would make its circuit bootstrap's
//! decision break the per-gate bound is first refreshed by a gate bootstrap (`MuxPlan::sel_fresh`,
//! [`PlanCounts::select_refreshes`]), so the low-noise gadget's wider stride may take it.
//!
//! **Selects decided by their circuit bootstrap.** A circuit bootstrap decides the sign of its input's
//! phase exactly as a gate bootstrap does (its test polynomial is the sign, at every gadget level), so
//! a select that is a gate or a cell can go to its circuit bootstrap as the gate's level-0 linear
//! combination ([`crate::Backend::gate_linear`]) instead of as the gate's bootstrapped output: one
//! bootstrap less, and one less on the select's path. The plan does it (`MuxPlan::sel_fused`,
//! [`PlanCounts::fused_selects`]) where nothing else reads the gate's level-0 bit or ring, and where
//! the decision — the inputs' weighted variances plus the circuit bootstrap's modulus switch, at the
//! gate's margin — keeps the per-gate bound.

use crate::blueprint::MemImpl;
use crate::circuit::{Circuit, Node, NodeId, Step};
use crate::noise::NoiseModel;

/// Costs (in gate bootstraps) and variances the planner needs from a backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeveledParams {
    /// One circuit bootstrapping (TLWE → TRGSW).
    pub cost_cb: f64,
    /// One CMUX.
    pub cost_cmux: f64,
    /// One sample extraction + key switch.
    pub cost_ks: f64,
    /// Variance of a blind-rotation output (a gate's ring).
    pub v_br: f64,
    /// Variance the level-1 → level-0 key switch adds.
    pub v_ks: f64,
    /// Variance one CMUX with a circuit-bootstrapped select adds.
    pub v_ext: f64,
    /// Modulus-switch variance at a gate bootstrap's input.
    pub v_ms: f64,
    /// Modulus-switch variance at a circuit bootstrap's input.
    pub v_ms_cb: f64,
    /// Variance of a level-0 input bit as the client encrypts it.
    pub v_input: f64,
    /// The level-0 variance bound (per-gate failure ≤ 2^-64 with both inputs at it).
    pub v_tlwe_max: f64,
    /// One circuit bootstrapping with the low-noise gadget (`Params::cb_ram`, the RAM's), which the
    /// planner may give a select whose CMUXes carry flip-flop rings.
    pub cost_cb_low: f64,
    /// One CMUX with such a select.
    pub cost_cmux_low: f64,
    /// Variance one CMUX with such a select adds.
    pub v_ext_low: f64,
    /// Modulus-switch variance at such a circuit bootstrap's input (its many-LUT stride).
    pub v_ms_cb_low: f64,
    /// One refresh of a select before its circuit bootstrap (a gate bootstrap, 1; its extraction
    /// and key switch are priced at `cost_ks`), which the planner gives a select whose own variance
    /// would make its circuit bootstrap's decision break the per-gate bound.
    pub cost_select_refresh: f64,
}

/// log2 of the per-gate failure bound the plan keeps.
pub const GATE_FAILURE_LOG2: f64 = -64.0;

impl LeveledParams {
    /// Planner parameters from a noise model and measured relative costs. `None` when the parameters
    /// leave no room for even one CMUX after a gate MUX (the engine then keeps every MUX a gate).
    pub fn from_noise(
        m: &NoiseModel,
        v_ms_cb: f64,
        v_input: f64,
        cost_cb: f64,
        cost_cmux: f64,
        cost_ks: f64,
    ) -> Option<Self> {
        let z = NoiseModel::z_for(2f64.powf(GATE_FAILURE_LOG2));
        let v_tlwe_max = ((0.125 / z).powi(2) - m.v_ms) / 2.0;
        let p = LeveledParams {
            cost_cb,
            cost_cmux,
            cost_ks,
            v_br: m.v_br,
            v_ks: m.v_ks,
            v_ext: m.v_ext,
            v_ms: m.v_ms,
            v_ms_cb,
            v_input,
            v_tlwe_max,
            // No second gadget unless `with_low_noise_selects` names one.
            cost_cb_low: cost_cb,
            cost_cmux_low: cost_cmux,
            v_ext_low: m.v_ext,
            v_ms_cb_low: v_ms_cb,
            cost_select_refresh: 1.0,
        };
        // A gate MUX's ring (two rotations) must take at least one CMUX, and a fresh input must fit.
        (2.0 * p.v_br + p.v_ext <= p.v_ring_max() && v_input <= v_tlwe_max).then_some(p)
    }

    /// The planner parameters of a TFHE parameter set (what [`crate::TfheBackend`] uses). Costs are
    /// relative to one gate bootstrap. A CMUX and a CMUX with the RAM's low-noise gadget
    /// (`Params::cb_ram`, [`Self::with_low_noise_selects`]) are the TFHE backend's measured task
    /// costs (`tfhe_backend`'s `costs`: thread CPU time over a NAND's, `examples/task_costs`, AMD
    /// EPYC Zen 4, December 2026): 0.0013 and 0.0024 gate (≈ 1/770 and 1/420; planned at 0.0015
    /// and 0.0028 before). An extraction + key switch is weighed at ≈ 1/20 gate. A circuit
    /// bootstrap is weighed at 5 gates although it costs 2.6 (in a batch of 8) to 3.8 (alone)
    /// (the scheduler's costs): planned at 3, Pearl traded 11 gate bootstraps for 3 circuit
    /// bootstraps (−0.4 % of its cost) and lengthened its critical path from 36.5 to 38.2; Ruby's
    /// plan did not change (`vsp-bench plan`, 2026-12-04). One with the low-noise gadget is
    /// weighed at 5 × 46.3 / 38.3 ≈ 6.0 (the medians of the two gadgets' measured one-bit costs in
    /// `costs`, whose fitted `CB` and `CB_RAM` give 46.3 / 38.0).
    pub fn for_params(p: &vsp_tfhe::Params) -> Option<Self> {
        use crate::tfhe_backend::costs;
        let m = NoiseModel::of(p);
        LeveledParams::from_noise(
            &m,
            vsp_tfhe::noise::mod_switch_var(p, p.n2, p.cb_stride()),
            p.sigma0 * p.sigma0,
            5.0,
            costs::CMUX / costs::GATE,
            0.05,
        )
        .map(|lp| {
            lp.with_low_noise_selects(
                m.v_ext_ram,
                vsp_tfhe::noise::mod_switch_var(p, p.n2, vsp_tfhe::Params::stride_of(p.cb_ram)),
                5.0 * 46.3 / 38.3,
                costs::CMUX_RAM / costs::GATE,
            )
        })
    }

    /// The same parameters with a second, low-noise select gadget: a CMUX with it adds `v_ext_low`,
    /// its circuit bootstrap's input has modulus-switch variance `v_ms_cb_low`, and the two cost
    /// `cost_cb_low` and `cost_cmux_low`. The planner gives it to a select where that lowers the
    /// cycle's cost (fewer lifts of carried flip-flops, fewer refreshes).
    pub fn with_low_noise_selects(
        self,
        v_ext_low: f64,
        v_ms_cb_low: f64,
        cost_cb_low: f64,
        cost_cmux_low: f64,
    ) -> Self {
        LeveledParams {
            v_ext_low,
            v_ms_cb_low,
            cost_cb_low,
            cost_cmux_low,
            ..self
        }
    }

    /// The ring variance bound.
    pub fn v_ring_max(&self) -> f64 {
        self.v_tlwe_max - self.v_ks
    }

    /// The longest CMUX chain from a gate's ring before a refresh.
    pub fn max_chain(&self) -> usize {
        ((self.v_ring_max() - self.v_br) / self.v_ext)
            .floor()
            .max(0.0) as usize
    }
}

/// What one cycle costs under a plan (counts per cycle, core logic only; memories not included).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlanCounts {
    /// Two-input gates (one bootstrap each).
    pub gates: usize,
    /// Multi-input cells of a technology-mapped circuit (one bootstrap each, [`crate::techmap`]).
    pub cells: usize,
    /// MUXes left as gates (two bootstraps each).
    pub gate_muxes: usize,
    /// MUXes evaluated as CMUXes.
    pub cmuxes: usize,
    /// Selects circuit-bootstrapped once per cycle.
    pub circuit_bootstraps: usize,
    /// Of those, the selects circuit-bootstrapped with the low-noise gadget (`Params::cb_ram`).
    pub low_noise_selects: usize,
    /// CMUXes whose select has the low-noise gadget (of `cmuxes`).
    pub low_noise_cmuxes: usize,
    /// Level-0 bits lifted to rings by a bootstrap every cycle (inputs and flip-flops feeding CMUXes).
    pub lifts: usize,
    /// Flip-flops that carry their D's ring across the clock edge, lifted only in the cycles where
    /// that ring is over the flip-flop's noise budget (the engine reports how often).
    pub carried: usize,
    /// CMUX results refreshed by a bootstrap because a longer chain would exceed the noise bound.
    pub refreshes: usize,
    /// Selects refreshed by a gate bootstrap (and extraction) before their circuit bootstrap,
    /// because their own level-0 variance (a CMUX chain's result) would make that circuit
    /// bootstrap's decision break the per-gate bound.
    pub select_refreshes: usize,
    /// Selects that are a gate or a cell whose decision their circuit bootstrap makes (no gate
    /// bootstrap of their own; not in `gates` or `cells`).
    pub fused_selects: usize,
    /// Sample extractions + key switches of rings (no bootstrap).
    pub extractions: usize,
    /// Level-1 → level-0 key switches in all (gates, gate MUXes and extractions).
    pub key_switches: usize,
    /// Lifts per cycle of carried flip-flops in steady state, predicted by running the engine's
    /// carry rule on the noise model (included in `cost`).
    pub carried_lifts: f64,
    /// Total cost in gate-bootstrap units.
    pub cost: f64,
    /// log2 of the union bound of all decisions' failure probabilities in one cycle.
    pub log2_failure: f64,
    /// log2 of the failure probability of the cycle's worst single decision.
    pub log2_worst_decision: f64,
}

impl PlanCounts {
    /// Gate bootstraps per cycle (gates, cells, 2 per gate MUX, lifts, refreshes, select
    /// refreshes, predicted carried lifts).
    pub fn bootstraps(&self) -> f64 {
        (self.gates
            + self.cells
            + 2 * self.gate_muxes
            + self.lifts
            + self.refreshes
            + self.select_refreshes) as f64
            + self.carried_lifts
    }
}

/// The evaluation plan of a circuit's MUXes and the value forms each node needs.
#[derive(Clone, Debug, Default)]
pub struct MuxPlan {
    /// Per node: evaluated as a CMUX.
    pub(crate) cmux: Vec<bool>,
    /// Per node: index into `sel_nodes` when it selects CMUXes.
    pub(crate) sel_slot: Vec<u32>,
    /// The selects that are circuit-bootstrapped each cycle.
    pub(crate) sel_nodes: Vec<NodeId>,
    /// Per select slot: circuit-bootstrapped with the low-noise gadget (`Params::cb_ram`).
    pub(crate) sel_low: Vec<bool>,
    /// Per select slot: the select's level-0 bit is refreshed by a gate bootstrap before its circuit
    /// bootstrap (set by the noise pass where the select's own variance would break the bound).
    pub(crate) sel_fresh: Vec<bool>,
    /// Per select slot: the select is a gate or a cell that is not bootstrapped; its circuit
    /// bootstrap takes the gate's linear combination and decides it (see the module documentation).
    pub(crate) sel_fused: Vec<bool>,
    /// Per node: the level-0 form is needed.
    pub(crate) tlwe: Vec<bool>,
    /// Per node: the ring form is needed.
    pub(crate) ring: Vec<bool>,
    /// Per node: the ring is lifted from the level-0 form by a bootstrap.
    pub(crate) lift: Vec<bool>,
    /// Per flip-flop: its ring may be carried from D across the clock edge (no lift) while its
    /// variance is within `budget`.
    pub(crate) carry: Vec<bool>,
    /// Per flip-flop: the largest variance a carried ring may start a cycle with.
    pub(crate) budget: Vec<f64>,
    /// The parameters the plan was made under (`None`: gates only).
    pub(crate) params: Option<LeveledParams>,
    /// Per MUX node: its ring is made fresh by a bootstrap of its level-0 result (a CMUX chain that
    /// would grow too long, or a gate MUX's two-rotation ring).
    pub(crate) refresh: Vec<bool>,
    /// What a cycle costs.
    pub counts: PlanCounts,
}

/// No slot.
pub(crate) const NO_SLOT: u32 = u32::MAX;

impl MuxPlan {
    /// The plan with every MUX a gate (what backends without CMUX support run).
    pub fn gates_only(c: &Circuit) -> MuxPlan {
        let none = vec![false; c.nodes.len()];
        with_failure(c, evaluate(c, None, &none, &none))
    }

    /// Every MUX a gate, with costs and the failure bound computed under `p` (for comparisons).
    pub fn gates_only_under(c: &Circuit, p: &LeveledParams) -> MuxPlan {
        let none = vec![false; c.nodes.len()];
        with_failure(c, evaluate(c, Some(p), &none, &none))
    }

    /// Plans `c` under `p`: chooses the selects whose MUXes become CMUXes.
    pub fn new(c: &Circuit, p: &LeveledParams) -> MuxPlan {
        if p.v_br + p.v_ext > p.v_ring_max() {
            // Not even one CMUX after a fresh ring fits the bound.
            return MuxPlan::gates_only(c);
        }
        // MUX nodes grouped by select.
        let mut groups: Vec<(NodeId, Vec<NodeId>)> = Vec::new();
        let mut group_of = vec![usize::MAX; c.nodes.len()];
        for step in &c.order {
            let Step::Node(id) = *step else { continue };
            if let Node::Mux { s, .. } = c.nodes[id as usize] {
                let g = &mut group_of[s as usize];
                if *g == usize::MAX {
                    *g = groups.len();
                    groups.push((s, Vec::new()));
                }
                groups[*g].1.push(id);
            }
        }
        let mut on: Vec<bool> = groups.iter().map(|(_, m)| m.len() >= 2).collect();
        let flags = |on: &[bool]| group_flags(c.nodes.len(), &groups, on);
        let none = vec![false; c.nodes.len()];
        let mut best = evaluate(c, Some(p), &flags(&on), &none);
        loop {
            let mut improved: Option<(usize, MuxPlan)> = None;
            for g in 0..groups.len() {
                if !on[g] {
                    continue;
                }
                on[g] = false;
                let cand = evaluate(c, Some(p), &flags(&on), &none);
                on[g] = true;
                let bar = improved
                    .as_ref()
                    .map_or(best.counts.cost, |(_, b)| b.counts.cost);
                if cand.counts.cost < bar - 1e-9 {
                    improved = Some((g, cand));
                }
            }
            match improved {
                Some((g, plan)) => {
                    on[g] = false;
                    best = plan;
                }
                None => {
                    let cmux = flags(&on);
                    let plan = cut_for_carries(c, p, best);
                    let plan = low_noise_selects(c, p, &cmux, plan);
                    return with_failure(c, low_noise_chains(c, p, &groups, &mut on, plan));
                }
            }
        }
    }

    /// Counts per cycle.
    pub fn counts(&self) -> PlanCounts {
        self.counts
    }

    /// The selects circuit-bootstrapped every cycle, and the sources (inputs, flip-flops) lifted to
    /// rings (every cycle, or, for carried flip-flops, when over budget; `true` marks those).
    pub fn selects_and_lifts(&self, c: &Circuit) -> (Vec<NodeId>, Vec<(NodeId, bool)>) {
        let lifts = (0..self.lift.len())
            .filter(|&i| self.lift[i])
            .map(|i| (i as NodeId, self.carried(c, i as NodeId)))
            .collect();
        (self.sel_nodes.clone(), lifts)
    }

    /// Lifts of carried flip-flops in each of the first `cycles` cycles, by the engine's rule (carry
    /// D's ring while its variance is within the flip-flop's budget, else lift it next cycle) on the
    /// noise model, from power-up (`power_up`: every ring the public initial value) or from a cycle
    /// that lifts them all (a reloaded snapshot). Every register bit has the same worst-case noise,
    /// so they are lifted together, in bursts: a run of a few cycles can measure 0 or a whole burst
    /// per cycle, against the steady-state average of [`PlanCounts::carried_lifts`].
    pub fn carried_lift_schedule(&self, c: &Circuit, cycles: usize, power_up: bool) -> Vec<usize> {
        let Some(p) = &self.params else {
            return vec![0; cycles];
        };
        let mut sim = LiftSim::new(c, p, self, power_up);
        (0..cycles).map(|_| sim.step(c, p, self)).collect()
    }

    /// True when node `id` is a MUX the plan evaluates as a CMUX (its select circuit-bootstrapped).
    pub fn is_cmux(&self, id: NodeId) -> bool {
        self.cmux.get(id as usize).copied().unwrap_or(false)
    }

    /// True when MUX-plan select slot `slot` is circuit-bootstrapped with the low-noise gadget
    /// (`Params::cb_ram`, `Backend::ram_select_batch`) instead of the circuit's.
    pub fn is_low_noise_select(&self, slot: u32) -> bool {
        self.sel_low.get(slot as usize).copied().unwrap_or(false)
    }

    /// True when MUX-plan select slot `slot` is refreshed by a gate bootstrap (identity test value,
    /// then extraction and key switch) before its circuit bootstrap.
    pub fn is_fresh_select(&self, slot: u32) -> bool {
        self.sel_fresh.get(slot as usize).copied().unwrap_or(false)
    }

    /// Selects refreshed before their circuit bootstrap.
    pub fn fresh_selects(&self) -> usize {
        self.sel_fresh.iter().filter(|&&x| x).count()
    }

    /// True when node `id` is a select (a gate or a cell) whose circuit bootstrap decides it: the
    /// engine computes only its linear combination ([`crate::Backend::gate_linear`]).
    pub fn is_fused_select(&self, id: NodeId) -> bool {
        let slot = self.sel_slot.get(id as usize).copied().unwrap_or(NO_SLOT);
        slot != NO_SLOT && self.sel_fused.get(slot as usize).copied().unwrap_or(false)
    }

    /// True when node `i` is a CMUX whose select has the low-noise gadget.
    fn low_cmux(&self, c: &Circuit, i: usize) -> bool {
        match c.nodes[i] {
            Node::Mux { s, .. } if self.cmux[i] => {
                self.is_low_noise_select(self.sel_slot[s as usize])
            }
            _ => false,
        }
    }

    /// The variance CMUX node `i` adds (its select's gadget).
    fn v_ext(&self, c: &Circuit, p: &LeveledParams, i: usize) -> f64 {
        if self.low_cmux(c, i) {
            p.v_ext_low
        } else {
            p.v_ext
        }
    }

    /// True when `id` is a flip-flop that carries its ring across the clock edge.
    pub(crate) fn carried(&self, c: &Circuit, id: NodeId) -> bool {
        matches!(c.nodes[id as usize], Node::Dff(k) if self.carry[k as usize])
    }

    /// The output nodes (`q`) of the flip-flops that carry their ring across the clock edge.
    fn carried_outputs<'a>(&'a self, c: &'a Circuit) -> impl Iterator<Item = usize> + 'a {
        c.dffs
            .iter()
            .zip(&self.carry)
            .filter(|(_, &carry)| carry)
            .map(|(d, _)| d.q as usize)
    }

    /// The ring variance of every node in a cycle whose carried flip-flop rings start with the given
    /// variances (`dff_rv[k]`, used for flip-flops the plan carries; others are lifted).
    pub(crate) fn ring_vars(&self, c: &Circuit, dff_rv: &[f64]) -> Vec<f64> {
        let Some(p) = &self.params else {
            return vec![0.0; c.nodes.len()];
        };
        let mut refresh = self.refresh.clone();
        let dff_tv = vec![0.0; c.dffs.len()];
        forward(c, p, self, &mut refresh, false, &dff_tv, Some(dff_rv)).1
    }

    /// Whether a carried ring of variance `v` may start a cycle in flip-flop `k`.
    pub(crate) fn within_budget(&self, k: usize, v: f64) -> bool {
        self.carry[k] && v <= self.budget[k]
    }
}

/// The ring source a NOT chain stands for.
fn ring_source(c: &Circuit, mut id: NodeId) -> NodeId {
    while let Node::Not(a) = c.nodes[id as usize] {
        id = a;
    }
    id
}

/// log2 of the probability that a centered normal of variance `var` leaves (−margin, margin), by the
/// Mills-ratio bound (never below the true value).
fn log2_tail(var: f64, margin: f64) -> f64 {
    if var <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let z = margin / var.sqrt();
    let tail = (2.0 / std::f64::consts::PI).sqrt() * (-z * z / 2.0).exp() / z;
    tail.min(1.0).log2()
}

/// Builds the plan for the given CMUX flags (`p = None`: no CMUX at all) and low-noise selects
/// (`low`, per node: a select circuit-bootstrapped with the low-noise gadget).
fn evaluate(c: &Circuit, p: Option<&LeveledParams>, cmux: &[bool], low: &[bool]) -> MuxPlan {
    let n = c.nodes.len();
    let is_cmux = |id: NodeId| p.is_some() && cmux[id as usize];
    let mut tlwe = vec![false; n];
    let mut ring = vec![false; n];
    for port in &c.outputs {
        for &b in &port.bits {
            tlwe[b as usize] = true;
        }
    }
    for d in &c.dffs {
        tlwe[d.d as usize] = true;
    }
    for m in &c.mems {
        if m.spec.imp == MemImpl::Cmux {
            for &a in m.addr.iter().chain(m.wren.iter()).chain(&m.wdata) {
                tlwe[a as usize] = true;
            }
            // The RAM write value also reads the old data bit.
            if m.wren.is_some() {
                for &r in &m.rdata {
                    tlwe[r as usize] = true;
                }
            }
        }
    }
    // Forms needed, consumers before producers. A flip-flop whose Q is needed as a ring may carry the
    // ring of its D across the clock edge instead of lifting Q with a bootstrap every cycle, when D
    // makes a ring anyway (a gate, a MUX, a memory read, a constant); the engine carries it while its
    // variance stays within the flip-flop's budget (see `budgets`). That makes D's ring needed too,
    // so repeat until nothing changes.
    let mut carry = vec![false; c.dffs.len()];
    loop {
        for step in c.order.iter().rev() {
            let Step::Node(id) = *step else { continue };
            let i = id as usize;
            if !tlwe[i] && !ring[i] {
                tlwe[i] = true; // evaluated even when unused, as before
            }
            match c.nodes[i] {
                Node::Not(a) => {
                    tlwe[a as usize] |= tlwe[i];
                    ring[a as usize] |= ring[i];
                }
                Node::Gate(_, a, b) => {
                    tlwe[a as usize] = true;
                    tlwe[b as usize] = true;
                }
                Node::Cell { spec, ins } => {
                    for &x in &ins[..spec.arity()] {
                        tlwe[x as usize] = true;
                    }
                }
                Node::Mux { s, a, b } if is_cmux(id) => {
                    tlwe[s as usize] = true;
                    ring[a as usize] = true;
                    ring[b as usize] = true;
                }
                Node::Mux { s, a, b } => {
                    for x in [s, a, b] {
                        tlwe[x as usize] = true;
                    }
                }
                _ => {}
            }
        }
        let mut changed = false;
        if p.is_some() {
            for (k, d) in c.dffs.iter().enumerate() {
                let carryable = matches!(
                    c.nodes[ring_source(c, d.d) as usize],
                    Node::Gate(..)
                        | Node::Cell { .. }
                        | Node::Mux { .. }
                        | Node::MemOut { .. }
                        | Node::Const(_)
                );
                if !carry[k] && ring[d.q as usize] && carryable {
                    carry[k] = true;
                    changed |= !ring[d.d as usize];
                    ring[d.d as usize] = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut lift = vec![false; n];
    for (i, node) in c.nodes.iter().enumerate() {
        if ring[i] && matches!(node, Node::Input(_) | Node::Dff(_)) {
            lift[i] = true;
        }
    }
    let mut sel_slot = vec![NO_SLOT; n];
    let mut sel_nodes = Vec::new();
    for step in &c.order {
        let Step::Node(id) = *step else { continue };
        if let Node::Mux { s, .. } = c.nodes[id as usize] {
            if is_cmux(id) && sel_slot[s as usize] == NO_SLOT {
                sel_slot[s as usize] = sel_nodes.len() as u32;
                sel_nodes.push(s);
            }
        }
    }
    let cmux_flags: Vec<bool> = (0..n as NodeId).map(is_cmux).collect();
    let sel_low = sel_nodes.iter().map(|&s| low[s as usize]).collect();
    let sel_fresh = vec![false; sel_nodes.len()];
    let sel_fused = vec![false; sel_nodes.len()];
    let mut plan = MuxPlan {
        cmux: cmux_flags,
        sel_slot,
        sel_nodes,
        sel_low,
        sel_fresh,
        sel_fused,
        tlwe,
        ring,
        lift,
        carry,
        budget: vec![0.0; c.dffs.len()],
        refresh: vec![false; n],
        params: p.copied(),
        counts: PlanCounts::default(),
    };
    if let Some(p) = p {
        noise_pass(c, p, &mut plan, false);
        plan.budget = budgets(c, p, &plan);
    }
    settle(c, p, &mut plan);
    plan
}

/// The variance at a select's circuit bootstrap input, and its modulus switch's: the circuit's or
/// the low-noise gadget's stride.
fn select_ms(p: &LeveledParams, low: bool) -> f64 {
    if low {
        p.v_ms_cb_low
    } else {
        p.v_ms_cb
    }
}

/// Decides which selects are refreshed before their circuit bootstrap (those whose own level-0
/// variance, carried rings at their budgets, would break the per-gate bound there while a fresh
/// bit keeps it) and counts the plan, all but its failure bounds (candidates are compared by cost;
/// [`with_failure`] adds them to the plan chosen).
fn settle(c: &Circuit, p: Option<&LeveledParams>, plan: &mut MuxPlan) {
    if let Some(p) = p {
        let tv = noise_pass(c, p, &mut plan.clone(), true);
        let fresh = p.v_br + p.v_ks;
        plan.sel_fresh = plan
            .sel_nodes
            .iter()
            .zip(&plan.sel_low)
            .map(|(&s, &low)| {
                let ms = select_ms(p, low);
                log2_tail(tv[s as usize] + ms, 0.125) > GATE_FAILURE_LOG2
                    && log2_tail(fresh + ms, 0.125) <= GATE_FAILURE_LOG2
            })
            .collect();
        let only_cb = read_only_by_selects(c, plan);
        plan.sel_fused = (0..plan.sel_nodes.len())
            .map(|k| {
                let s = plan.sel_nodes[k];
                let ms = select_ms(p, plan.sel_low[k]);
                !plan.sel_fresh[k]
                    && only_cb[s as usize]
                    && decision(c, &tv, s)
                        .is_some_and(|(v, m)| log2_tail(v + ms, m) <= GATE_FAILURE_LOG2)
            })
            .collect();
    }
    plan.counts = count(c, p, plan);
}

/// A gate's or a cell's decision: the variance of its linear combination (its inputs' variances
/// `tv`, weighted; no modulus switch) and its margin. `None` for other nodes.
fn decision(c: &Circuit, tv: &[f64], id: NodeId) -> Option<(f64, f64)> {
    match c.nodes[id as usize] {
        Node::Gate(k, a, b) => {
            let v = tv[a as usize] + tv[b as usize];
            Some(if k.is_xor_like() {
                (4.0 * v, 0.25)
            } else {
                (v, 0.125)
            })
        }
        Node::Cell { spec, ins } => Some((
            spec.weights()
                .iter()
                .zip(&ins)
                .map(|(&w, &x)| f64::from(w) * f64::from(w) * tv[x as usize])
                .sum(),
            spec.margin(),
        )),
        _ => None,
    }
}

/// Per node: a gate or a cell whose only reader is the circuit bootstrap of CMUX selects (no other
/// node, flip-flop, output or memory port reads its bit, and its ring is not needed), i.e. whose
/// bootstrap that circuit bootstrap can make instead.
fn read_only_by_selects(c: &Circuit, plan: &MuxPlan) -> Vec<bool> {
    let n = c.nodes.len();
    let mut other = vec![false; n];
    for (id, node) in c.nodes.iter().enumerate() {
        match *node {
            Node::Mux { s, a, b } => {
                other[s as usize] |= !plan.cmux[id];
                other[a as usize] = true;
                other[b as usize] = true;
            }
            _ => {
                for x in node.operands() {
                    other[x as usize] = true;
                }
            }
        }
    }
    for d in &c.dffs {
        other[d.d as usize] = true;
    }
    for port in &c.outputs {
        for &b in &port.bits {
            other[b as usize] = true;
        }
    }
    for m in &c.mems {
        for &b in m
            .addr
            .iter()
            .chain(m.wren.iter())
            .chain(&m.wdata)
            .chain(&m.rdata)
        {
            other[b as usize] = true;
        }
    }
    (0..n)
        .map(|i| {
            matches!(c.nodes[i], Node::Gate(..) | Node::Cell { .. })
                && !other[i]
                && !plan.ring[i]
                && plan.sel_slot[i] != NO_SLOT
        })
        .collect()
}

/// The plan with its failure bounds counted ([`PlanCounts::log2_failure`],
/// [`PlanCounts::log2_worst_decision`]): every node's level-0 variance with carried rings at their
/// budgets, as [`settle`] saw it.
fn with_failure(c: &Circuit, mut plan: MuxPlan) -> MuxPlan {
    let (failure, worst) = match plan.params {
        Some(p) => {
            let tv = noise_pass(c, &p, &mut plan.clone(), true);
            failure_log2(c, &p, &plan, &tv)
        }
        None => (f64::NEG_INFINITY, f64::NEG_INFINITY),
    };
    plan.counts.log2_failure = failure;
    plan.counts.log2_worst_decision = worst;
    plan
}

/// Steady-state lifts per cycle of the carried flip-flops: the engine's rule (carry D's ring while
/// its variance is within the budget, else lift) run on the noise model from a cycle that lifts them
/// all. Register bits share one worst-case noise, so they are lifted together, every few cycles: the
/// mean is taken over whole periods (the first state after 16 cycles that recurs, within 64 more),
/// else over cycles 16–79.
fn carried_lifts(c: &Circuit, p: &LeveledParams, plan: &MuxPlan) -> f64 {
    const WARM: usize = 16;
    const MAX_PERIOD: usize = 64;
    let mut sim = LiftSim::new(c, p, plan, false);
    if sim.carried.is_empty() {
        return 0.0;
    }
    // A state that a cycle leaves unchanged stays so: the rest of the warm-up is skipped, and the
    // rest of the 64 cycles each lift what this one did (the same mean as running them).
    for _ in 0..WARM {
        sim.step(c, p, plan);
        if !sim.changed {
            break;
        }
    }
    let (lifted0, var0) = (sim.lifted.clone(), sim.var.clone());
    let mut total = 0usize;
    for n in 1..=MAX_PERIOD {
        let lifts = sim.step(c, p, plan);
        total += lifts;
        let same_var = sim
            .var
            .iter()
            .zip(&var0)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        if sim.lifted == lifted0 && same_var {
            return total as f64 / n as f64;
        }
        if !sim.changed {
            total += lifts * (MAX_PERIOD - n);
            break;
        }
    }
    total as f64 / MAX_PERIOD as f64
}

/// The engine's carry rule on the noise model, one cycle at a time.
///
/// Only the ring variances that depend on a carried flip-flop's starting ring change from one cycle
/// to the next: those nodes (the *cone*: the carried flip-flops' outputs, NOTs of cone nodes, and
/// unrefreshed CMUXes reading one) are recomputed each cycle, in evaluation order and with the same
/// arithmetic as [`forward`], so every variance is bit-identical to a full pass
/// ([`MuxPlan::ring_vars`]); every other node keeps the variance of one full pass made up front.
struct LiftSim {
    carried: Vec<usize>,
    /// Per flip-flop: its ring is lifted this cycle.
    lifted: Vec<bool>,
    /// Per flip-flop: the variance of the ring it carries into this cycle (when not lifted).
    var: Vec<f64>,
    /// Every node's ring variance (the cone's as of the last cycle run).
    rv: Vec<f64>,
    /// The cone below the carried flip-flops, in evaluation order.
    cone: Vec<ConeOp>,
    /// Whether the last cycle run changed `lifted` or `var`.
    changed: bool,
}

/// How a node of [`LiftSim`]'s cone gets its ring variance.
enum ConeOp {
    /// A NOT: node `.0` copies node `.1`'s.
    Not(usize, usize),
    /// An unrefreshed CMUX: node `.0` is the larger of `.1`'s and `.2`'s, plus `.3`.
    Cmux(usize, usize, usize, f64),
}

impl LiftSim {
    /// From power-up (every ring the public initial value, variance 0) or from a cycle that lifts
    /// every carried flip-flop (a reloaded snapshot, a replanned engine).
    fn new(c: &Circuit, p: &LeveledParams, plan: &MuxPlan, power_up: bool) -> LiftSim {
        let carried: Vec<usize> = (0..c.dffs.len()).filter(|&k| plan.carry[k]).collect();
        let mut rv = Vec::new();
        let mut cone = Vec::new();
        if !carried.is_empty() {
            rv = plan.ring_vars(c, &vec![p.v_br; c.dffs.len()]);
            let mut in_cone = vec![false; c.nodes.len()];
            for &k in &carried {
                in_cone[c.dffs[k].q as usize] = true;
            }
            for step in &c.order {
                let Step::Node(id) = *step else { continue };
                let i = id as usize;
                match c.nodes[i] {
                    Node::Not(a) if in_cone[a as usize] => {
                        in_cone[i] = true;
                        cone.push(ConeOp::Not(i, a as usize));
                    }
                    Node::Mux { a, b, .. }
                        if plan.cmux[i]
                            && !plan.refresh[i]
                            && (in_cone[a as usize] || in_cone[b as usize]) =>
                    {
                        in_cone[i] = true;
                        cone.push(ConeOp::Cmux(i, a as usize, b as usize, plan.v_ext(c, p, i)));
                    }
                    _ => {}
                }
            }
        }
        LiftSim {
            carried,
            lifted: vec![!power_up; c.dffs.len()],
            var: vec![0.0; c.dffs.len()],
            rv,
            cone,
            changed: true,
        }
    }

    /// Runs one cycle; returns its lifts.
    fn step(&mut self, c: &Circuit, p: &LeveledParams, plan: &MuxPlan) -> usize {
        let lifts = self.carried.iter().filter(|&&k| self.lifted[k]).count();
        let rv = &mut self.rv;
        for &k in &self.carried {
            rv[c.dffs[k].q as usize] = if self.lifted[k] { p.v_br } else { self.var[k] };
        }
        for op in &self.cone {
            match *op {
                ConeOp::Not(i, a) => rv[i] = rv[a],
                ConeOp::Cmux(i, a, b, ext) => rv[i] = rv[a].max(rv[b]) + ext,
            }
        }
        self.changed = false;
        for &k in &self.carried {
            let v = rv[c.dffs[k].d as usize];
            let lifted = !plan.within_budget(k, v);
            self.changed |= lifted != self.lifted[k] || v.to_bits() != self.var[k].to_bits();
            self.lifted[k] = lifted;
            self.var[k] = v;
        }
        lifts
    }
}

/// Gives carried flip-flops noise budget by refreshing the CMUX rings their bits reach after `L`
/// CMUXes (for the best `L`, or none): a register file's read trees, for example, use up a register's
/// whole budget with the chains after them, so without a cut every register is lifted every cycle;
/// refreshing the read ports' outputs costs one bootstrap per port bit and lets every register carry
/// its ring for several cycles. Chooses by the predicted cost (lifts included).
fn cut_for_carries(c: &Circuit, p: &LeveledParams, plan: MuxPlan) -> MuxPlan {
    if !plan.carry.iter().any(|&x| x) {
        return plan;
    }
    let n = c.nodes.len();
    // depth[x]: the most CMUXes between a carried flip-flop's ring and x's ring (None: not reached).
    let mut depth: Vec<Option<usize>> = vec![None; n];
    for q in plan.carried_outputs(c) {
        depth[q] = Some(0);
    }
    for step in &c.order {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        depth[i] = match c.nodes[i] {
            Node::Not(a) if plan.ring[i] => depth[a as usize],
            Node::Mux { a, b, .. } if plan.cmux[i] && !plan.refresh[i] => {
                match (depth[a as usize], depth[b as usize]) {
                    (None, None) => None,
                    (x, y) => Some(x.unwrap_or(0).max(y.unwrap_or(0)) + 1),
                }
            }
            _ => None,
        };
    }
    let max_depth = depth.iter().flatten().copied().max().unwrap_or(0);
    let mut best = plan;
    for level in 1..=max_depth {
        let mut cand = best.clone();
        let mut added = 0;
        for (i, d) in depth.iter().enumerate() {
            if *d == Some(level) && cand.ring[i] && !cand.refresh[i] {
                cand.refresh[i] = true;
                added += 1;
            }
        }
        if added == 0 {
            continue;
        }
        cand.budget = budgets(c, p, &cand);
        settle(c, Some(p), &mut cand);
        if cand.counts.cost < best.counts.cost - 1e-9 {
            best = cand;
        }
    }
    best
}

/// Gives the low-noise select gadget (`Params::cb_ram`) to the selects whose CMUXes a carried
/// flip-flop's ring passes through, where that lowers the cycle's cost: their CMUXes add `v_ext_low`
/// instead of `v_ext`, so the carried rings (a register file's, through its write and read trees) stay
/// within budget for more cycles and are lifted less often, for a dearer circuit bootstrap and dearer
/// CMUXes. Starts from the plan with every such select low-noise (if it is the cheaper) and returns
/// selects to the circuit's gadget while that lowers the cost: in each round every select whose
/// return alone lowers it without adding a lift or a refresh, if together they lower it more than the
/// best alone, else that best one;
/// each candidate gets its own refresh cut ([`cut_for_carries`]). A select whose circuit bootstrap
/// with the low-noise gadget's wider many-LUT stride would break the per-gate bound is refreshed by
/// a gate bootstrap first ([`settle`]); the descent runs twice, once with such selects as candidates
/// and once without, and the cheaper result is kept.
fn low_noise_selects(c: &Circuit, p: &LeveledParams, cmux: &[bool], plan: MuxPlan) -> MuxPlan {
    if p.v_ext_low >= p.v_ext || !plan.carry.iter().any(|&x| x) {
        return plan;
    }
    let n = c.nodes.len();
    // The selects of CMUXes a carried ring reaches before a refresh.
    let uncut = evaluate(c, Some(p), cmux, &vec![false; n]);
    let mut reach = vec![false; n];
    for q in uncut.carried_outputs(c) {
        reach[q] = true;
    }
    let mut low = vec![false; n];
    for step in &c.order {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        match c.nodes[i] {
            Node::Not(a) if uncut.ring[i] => reach[i] = reach[a as usize],
            Node::Mux { s, a, b } if uncut.cmux[i] && (reach[a as usize] || reach[b as usize]) => {
                low[s as usize] = true;
                reach[i] = !uncut.refresh[i];
            }
            _ => {}
        }
    }
    // Without the candidates whose own decision would break the per-gate bound with the wider
    // stride, and with them (refreshed first).
    let tv = {
        let mut all = evaluate(c, Some(p), cmux, &low);
        noise_pass(c, p, &mut all, true)
    };
    let strict = strict_of(&low, &tv, p);
    if low == strict {
        return low_noise_descent(c, p, cmux, plan, low);
    }
    let a = low_noise_descent(c, p, cmux, plan.clone(), strict);
    let b = low_noise_descent(c, p, cmux, plan, low);
    if b.counts.cost < a.counts.cost - 1e-9 {
        b
    } else {
        a
    }
}

/// `low` without the selects whose low-noise circuit bootstrap would break the per-gate bound at
/// level-0 variance `tv`.
fn strict_of(low: &[bool], tv: &[f64], p: &LeveledParams) -> Vec<bool> {
    low.iter()
        .zip(tv)
        .map(|(&l, &v)| l && log2_tail(v + p.v_ms_cb_low, 0.125) <= GATE_FAILURE_LOG2)
        .collect()
}

/// [`low_noise_selects`]'s descent from every candidate in `low` low-noise.
fn low_noise_descent(
    c: &Circuit,
    p: &LeveledParams,
    cmux: &[bool],
    plan: MuxPlan,
    mut low: Vec<bool>,
) -> MuxPlan {
    let n = c.nodes.len();
    let plan_for = |low: &[bool]| {
        let cand = cut_for_carries(c, p, evaluate(c, Some(p), cmux, low));
        low_decisions_ok(c, p, &cand).then_some(cand)
    };
    let cands: Vec<NodeId> = (0..n as NodeId).filter(|&s| low[s as usize]).collect();
    let mut best = plan;
    let Some(all) = plan_for(&low) else {
        return best;
    };
    if all.counts.cost >= best.counts.cost - 1e-9 {
        return best;
    }
    best = all;
    // Drop, in rounds, every select whose return alone lowers the cost without a lift or refresh
    // more, when together they lower it more than the best alone, else only the best one.
    loop {
        let mut single: Vec<(f64, NodeId, MuxPlan)> = Vec::new();
        for &s in &cands {
            if !low[s as usize] {
                continue;
            }
            low[s as usize] = false;
            let cand = plan_for(&low);
            low[s as usize] = true;
            if let Some(cand) = cand.filter(|x| x.counts.cost < best.counts.cost - 1e-9) {
                single.push((cand.counts.cost, s, cand));
            }
        }
        if single.is_empty() {
            return best;
        }
        single.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        // Returns that cost no lift and no refresh only save their selects' price, so they add up.
        let free: Vec<NodeId> = single
            .iter()
            .filter(|(_, _, x)| {
                x.counts.carried_lifts <= best.counts.carried_lifts + 1e-9
                    && x.counts.refreshes <= best.counts.refreshes
                    && x.counts.lifts <= best.counts.lifts
            })
            .map(|(_, s, _)| *s)
            .collect();
        if free.len() > 1 {
            let mut fewer = low.clone();
            for s in &free {
                fewer[*s as usize] = false;
            }
            if let Some(cand) = plan_for(&fewer).filter(|x| x.counts.cost < single[0].0 - 1e-9) {
                low = fewer;
                best = cand;
                continue;
            }
        }
        let (_, s, cand) = single.swap_remove(0);
        low[s as usize] = false;
        best = cand;
    }
}

/// Per node: a MUX of a select group that is on.
fn group_flags(n: usize, groups: &[(NodeId, Vec<NodeId>)], on: &[bool]) -> Vec<bool> {
    let mut f = vec![false; n];
    for (g, (_, muxes)) in groups.iter().enumerate() {
        if on[g] {
            for &m in muxes {
                f[m as usize] = true;
            }
        }
    }
    f
}

/// The most groups on the circuit's gadget with refreshed chains that one round of
/// [`low_noise_chains`] tries with low-noise selects; with more (a MUX memory's read and write trees:
/// 294 on the MUX-memory Pearl), it tries none, which bounds the planning time (each candidate is
/// several full plans; the MUX-memory Pearl's rounds would otherwise take minutes each). Pearl's
/// netlists have at most 9.
const MAX_REFRESHED_GROUPS: usize = 32;

/// Turns select groups that the drop left as gates back into CMUXes where the low-noise gadget makes
/// them pay. The drop prices the circuit's gadget only, under which a chain of more than
/// [`LeveledParams::max_chain`] CMUXes (8 at the default parameters) must be refreshed, so where MUX
/// trees follow each other (a register read, an operand select, a shifter, a result select) a whole
/// level of them stays two bootstraps per MUX — 53 MUXes on one select on Pearl. With the low-noise
/// gadget for that select and for the selects of the CMUXes whose rings reach its MUXes, a chain of
/// 33 fits. Each round tries every such group so (then hands the added selects back to the circuit's
/// gadget one at a time while that lowers the cost) and keeps the best candidate that lowers the
/// cycle's cost. A select whose low-noise circuit bootstrap would break the per-gate bound (its own
/// variance a CMUX chain's) either keeps the circuit's gadget or is refreshed by a gate bootstrap
/// first ([`settle`]): each group is tried with such selects left out, with them (refreshed where
/// the hand-back leaves them too noisy), and with only the selects upstream of its MUXes added (its
/// own select refreshed if need be), and the cheapest kept. Groups kept as CMUXes on the circuit's
/// gadget are tried the same way where their chains are refreshed (a refreshed MUX of the group, or
/// one it reads): on Pearl that removes all 77 chain refreshes (plan cost 880.8 → 824.3).
fn low_noise_chains(
    c: &Circuit,
    p: &LeveledParams,
    groups: &[(NodeId, Vec<NodeId>)],
    on: &mut [bool],
    mut best: MuxPlan,
) -> MuxPlan {
    if p.v_ext_low >= p.v_ext {
        return best;
    }
    let n = c.nodes.len();
    loop {
        let mut low = vec![false; n];
        for (&s, &l) in best.sel_nodes.iter().zip(&best.sel_low) {
            low[s as usize] = l;
        }
        // A group on the circuit's gadget is a candidate where its chains are refreshed: a
        // refreshed MUX of its own, or one it reads; unless there are more such groups than
        // `MAX_REFRESHED_GROUPS` (see there).
        let refreshed = |m: &NodeId| {
            let Node::Mux { a, b, .. } = c.nodes[*m as usize] else {
                return false;
            };
            [*m, a, b].iter().any(|&x| best.refresh[x as usize])
        };
        let mut refreshed_on: Vec<bool> = (0..groups.len())
            .map(|g| {
                on[g]
                    && groups[g].1.len() >= 2
                    && !low[groups[g].0 as usize]
                    && groups[g].1.iter().any(refreshed)
            })
            .collect();
        if refreshed_on.iter().filter(|&&x| x).count() > MAX_REFRESHED_GROUPS {
            refreshed_on.fill(false);
        }
        let mut improved: Option<(usize, MuxPlan)> = None;
        for g in 0..groups.len() {
            let was_on = on[g];
            if groups[g].1.len() < 2 || (was_on && !refreshed_on[g]) {
                continue;
            }
            on[g] = true;
            let cmux = group_flags(n, groups, on);
            on[g] = was_on;
            // g's select and the selects of every CMUX upstream of g's MUXes and of its select
            // through rings (each handed back below if that is cheaper).
            let mut cand_low = low.clone();
            cand_low[groups[g].0 as usize] = true;
            let mut seen = vec![false; n];
            mark_upstream_selects(c, &cmux, groups[g].1.clone(), &mut seen, &mut cand_low);
            // Those upstream of g's MUXes only (g's select, if too noisy, refreshed instead).
            let mux_low = cand_low.clone();
            mark_upstream_selects(c, &cmux, vec![groups[g].0], &mut seen, &mut cand_low);
            let plan_for = |low: &[bool]| {
                let cand = cut_for_carries(c, p, evaluate(c, Some(p), &cmux, low));
                low_decisions_ok(c, p, &cand).then_some(cand)
            };
            // Selects whose own circuit bootstrap would break the per-gate bound with the low-noise
            // gadget's wider stride keep the circuit's gadget, or take it refreshed first.
            let tv = noise_pass(c, p, &mut evaluate(c, Some(p), &cmux, &cand_low), true);
            let mut strict = cand_low.clone();
            for s in 0..n {
                if cand_low[s] && !low[s] {
                    strict[s] = log2_tail(tv[s] + p.v_ms_cb_low, 0.125) <= GATE_FAILURE_LOG2;
                }
            }
            let mut tries = vec![strict];
            for t in [cand_low, mux_low] {
                if !tries.contains(&t) {
                    tries.push(t);
                }
            }
            let mut found: Option<MuxPlan> = None;
            for mut cand_low in tries {
                let Some(mut cand) = plan_for(&cand_low) else {
                    continue;
                };
                for s in 0..n {
                    if cand_low[s] && !low[s] {
                        cand_low[s] = false;
                        match plan_for(&cand_low)
                            .filter(|x| x.counts.cost < cand.counts.cost - 1e-9)
                        {
                            Some(x) => cand = x,
                            None => cand_low[s] = true,
                        }
                    }
                }
                if found
                    .as_ref()
                    .is_none_or(|f| cand.counts.cost < f.counts.cost - 1e-9)
                {
                    found = Some(cand);
                }
            }
            let Some(cand) = found else {
                continue;
            };
            let bar = improved
                .as_ref()
                .map_or(best.counts.cost, |(_, b)| b.counts.cost);
            if cand.counts.cost < bar - 1e-9 {
                improved = Some((g, cand));
            }
        }
        match improved {
            Some((g, plan)) => {
                on[g] = true;
                best = plan;
            }
            None => return best,
        }
    }
}

/// Marks (in `low`) the selects of the CMUXes (`cmux`) from `stack` up through rings, skipping
/// nodes already `seen`.
fn mark_upstream_selects(
    c: &Circuit,
    cmux: &[bool],
    mut stack: Vec<NodeId>,
    seen: &mut [bool],
    low: &mut [bool],
) {
    while let Some(x) = stack.pop() {
        let up = match c.nodes[x as usize] {
            Node::Mux { s, a, b } if cmux[x as usize] => {
                low[s as usize] = true;
                [Some(a), Some(b)]
            }
            Node::Not(a) => [Some(a), None],
            _ => [None, None],
        };
        for y in up.into_iter().flatten() {
            if !std::mem::replace(&mut seen[y as usize], true) {
                stack.push(y);
            }
        }
    }
}

/// Whether every low-noise select's circuit bootstrap keeps the per-gate failure bound (its wider
/// many-LUT stride rounds its input more coarsely).
fn low_decisions_ok(c: &Circuit, p: &LeveledParams, plan: &MuxPlan) -> bool {
    let mut scratch = plan.clone();
    let tv = noise_pass(c, p, &mut scratch, true);
    let fresh = p.v_br + p.v_ks;
    (0..plan.sel_nodes.len())
        .filter(|&k| plan.sel_low[k])
        .all(|k| {
            let v = if plan.sel_fresh[k] {
                fresh
            } else {
                tv[plan.sel_nodes[k] as usize]
            };
            log2_tail(v + p.v_ms_cb_low, 0.125) <= GATE_FAILURE_LOG2
        })
}

/// The largest ring variance each carried flip-flop may start a cycle with: the plan was made with
/// every flip-flop ring as fresh as a lift (`v_br`); a ring of variance V instead reaches, after the
/// longest CMUX chain it feeds (to an extraction, a refresh or the next clock edge), V plus the sum of
/// the chain's CMUX variances (`v_ext`, or `v_ext_low` for a low-noise select),
/// which must stay within `v_ring_max`. Every node downstream then stays within its bound (the CMUX
/// bound is a max over operands), so the plan's refreshes and failure bounds hold unchanged.
fn budgets(c: &Circuit, p: &LeveledParams, plan: &MuxPlan) -> Vec<f64> {
    let n = c.nodes.len();
    // depth[x]: the most variance the CMUXes x's ring passes through add before it stops being a
    // ring (each CMUX its select's gadget's).
    let mut depth = vec![0.0f64; n];
    for step in c.order.iter().rev() {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        match c.nodes[i] {
            Node::Not(a) if plan.ring[i] => {
                depth[a as usize] = depth[a as usize].max(depth[i]);
            }
            Node::Mux { a, b, .. } if plan.cmux[i] => {
                let d = plan.v_ext(c, p, i) + if plan.refresh[i] { 0.0 } else { depth[i] };
                for o in [a, b] {
                    depth[o as usize] = depth[o as usize].max(d);
                }
            }
            _ => {}
        }
    }
    c.dffs
        .iter()
        .map(|d| p.v_ring_max() - depth[d.q as usize])
        .collect()
}

/// One forward pass over a cycle: the level-0 (`tv`) and ring (`rv`) variance of every node, given the
/// flip-flops' level-0 variances and, for carried flip-flop rings, their variances (`None`: every
/// flip-flop ring lifted, variance `v_br`). With `mark`, an operand too noisy for one more CMUX gets
/// its source MUX refreshed (in `refresh`).
fn forward(
    c: &Circuit,
    p: &LeveledParams,
    plan: &MuxPlan,
    refresh: &mut [bool],
    mark: bool,
    dff_tv: &[f64],
    dff_rv: Option<&[f64]>,
) -> (Vec<f64>, Vec<f64>) {
    let n = c.nodes.len();
    let v_gate = p.v_br + p.v_ks;
    let mut tv = vec![0.0f64; n];
    let mut rv = vec![0.0f64; n];
    for (i, node) in c.nodes.iter().enumerate() {
        match *node {
            Node::Input(_) => tv[i] = p.v_input,
            Node::Const(_) => {}
            Node::Dff(k) => {
                let k = k as usize;
                tv[i] = dff_tv[k];
                rv[i] = match dff_rv {
                    Some(v) if plan.carry[k] => v[k],
                    _ => p.v_br,
                };
            }
            // Memory reads end in a bootstrap to a ring.
            Node::MemOut { .. } => {
                tv[i] = v_gate;
                rv[i] = p.v_br;
            }
            _ => {}
        }
        if plan.lift[i] && matches!(node, Node::Input(_)) {
            rv[i] = p.v_br;
        }
    }
    for step in &c.order {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        match c.nodes[i] {
            Node::Not(a) => {
                tv[i] = tv[a as usize];
                rv[i] = rv[a as usize];
            }
            Node::Gate(..) | Node::Cell { .. } => {
                tv[i] = v_gate;
                rv[i] = p.v_br;
            }
            Node::Mux { a, b, .. } if plan.cmux[i] => {
                let ext = plan.v_ext(c, p, i);
                if mark {
                    for o in [a, b] {
                        if rv[o as usize] + ext <= p.v_ring_max() {
                            continue;
                        }
                        // Too noisy for one more CMUX: make the operand's ring fresh at its source.
                        let src = ring_source(c, o);
                        if let Node::Mux { .. } = c.nodes[src as usize] {
                            refresh[src as usize] = true;
                            rv[src as usize] = p.v_br;
                            rv[o as usize] = p.v_br;
                        }
                    }
                }
                let raw = rv[a as usize].max(rv[b as usize]) + ext;
                tv[i] = raw + p.v_ks;
                rv[i] = if refresh[i] { p.v_br } else { raw };
            }
            Node::Mux { .. } => {
                tv[i] = 2.0 * p.v_br + p.v_ks;
                rv[i] = if refresh[i] { p.v_br } else { 2.0 * p.v_br };
            }
            _ => {}
        }
    }
    (tv, rv)
}

/// Plans the refreshes (every flip-flop ring taken as lifted) and returns every node's level-0
/// variance with carried flip-flop rings at their budgets (`report`) or lifted; flip-flops' level-0
/// variances at their fixed point over cycles (power-up: public constants).
fn noise_pass(c: &Circuit, p: &LeveledParams, plan: &mut MuxPlan, report: bool) -> Vec<f64> {
    let mut dff_tv = vec![0.0f64; c.dffs.len()];
    let mut refresh = plan.refresh.clone();
    let budget = plan.budget.clone();
    let mut tv = Vec::new();
    for _round in 0..64 {
        let before = refresh.clone();
        let dff_rv = report.then_some(budget.as_slice());
        tv = forward(c, p, plan, &mut refresh, !report, &dff_tv, dff_rv).0;
        let next: Vec<f64> = c.dffs.iter().map(|d| tv[d.d as usize]).collect();
        let stable = next == dff_tv && before == refresh;
        dff_tv = next;
        if stable {
            break;
        }
    }
    plan.refresh = refresh;
    tv
}

/// Counts a plan (its failure bounds left at −∞: [`with_failure`] counts them).
fn count(c: &Circuit, p: Option<&LeveledParams>, plan: &MuxPlan) -> PlanCounts {
    let mut k = PlanCounts {
        circuit_bootstraps: plan.sel_nodes.len(),
        low_noise_selects: plan.sel_low.iter().filter(|&&x| x).count(),
        select_refreshes: plan.fresh_selects(),
        fused_selects: plan.sel_fused.iter().filter(|&&x| x).count(),
        ..Default::default()
    };
    // A select refresh is extracted and key-switched to a fresh level-0 bit.
    k.extractions += k.select_refreshes;
    k.key_switches += k.select_refreshes;
    for step in &c.order {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        match c.nodes[i] {
            // Decided by its circuit bootstrap: no bootstrap, no key switch of its own.
            Node::Gate(..) | Node::Cell { .. } if plan.is_fused_select(id) => {}
            Node::Gate(..) | Node::Cell { .. } => {
                if matches!(c.nodes[i], Node::Cell { .. }) {
                    k.cells += 1;
                } else {
                    k.gates += 1;
                }
                if plan.ring[i] && plan.tlwe[i] {
                    k.extractions += 1;
                }
                k.key_switches += usize::from(plan.tlwe[i]);
            }
            Node::Mux { .. } if plan.cmux[i] => {
                k.cmuxes += 1;
                k.low_noise_cmuxes += usize::from(plan.low_cmux(c, i));
                if plan.tlwe[i] || plan.refresh[i] {
                    k.extractions += 1;
                    k.key_switches += 1;
                }
                if plan.refresh[i] {
                    k.refreshes += 1;
                }
            }
            Node::Mux { .. } => {
                k.gate_muxes += 1;
                if plan.refresh[i] {
                    k.refreshes += 1;
                } else if plan.ring[i] && plan.tlwe[i] {
                    k.extractions += 1;
                }
                k.key_switches += usize::from(plan.tlwe[i] || plan.refresh[i]);
            }
            _ => {}
        }
    }
    k.lifts = (0..c.nodes.len())
        .filter(|&i| plan.lift[i] && !plan.carried(c, i as NodeId))
        .count();
    k.carried = (0..c.nodes.len())
        .filter(|&i| plan.lift[i] && plan.carried(c, i as NodeId))
        .count();
    let (cb, cm, ks) = p.map_or((0.0, 0.0, 0.0), |p| (p.cost_cb, p.cost_cmux, p.cost_ks));
    let (cb_low, cm_low) = p.map_or((0.0, 0.0), |p| (p.cost_cb_low, p.cost_cmux_low));
    k.carried_lifts = p.map_or(0.0, |p| carried_lifts(c, p, plan));
    let cost_fresh = p.map_or(0.0, |p| p.cost_select_refresh);
    k.cost = (k.gates + k.cells + 2 * k.gate_muxes + k.lifts + k.refreshes) as f64
        + cost_fresh * k.select_refreshes as f64
        + k.carried_lifts
        + cb * (k.circuit_bootstraps - k.low_noise_selects) as f64
        + cb_low * k.low_noise_selects as f64
        + cm * (k.cmuxes - k.low_noise_cmuxes) as f64
        + cm_low * k.low_noise_cmuxes as f64
        + ks * k.extractions as f64;
    k.log2_failure = f64::NEG_INFINITY;
    k.log2_worst_decision = f64::NEG_INFINITY;
    k
}

/// The union bound over one cycle's decisions (gates, cells, gate MUX halves, lifts, refreshes,
/// select refreshes, selects), and the worst single decision, both as log2; `tv`: every node's level-0
/// variance with carried rings at their budgets (from [`noise_pass`] with `report`).
fn failure_log2(c: &Circuit, p: &LeveledParams, plan: &MuxPlan, tv: &[f64]) -> (f64, f64) {
    let mut sum = 0.0f64;
    let mut worst = f64::NEG_INFINITY;
    let mut add = |l2: f64| {
        sum += l2.exp2();
        worst = worst.max(l2);
    };
    for step in &c.order {
        let Step::Node(id) = *step else { continue };
        let i = id as usize;
        match c.nodes[i] {
            // A select decided by its circuit bootstrap is counted with the selects below.
            Node::Gate(..) | Node::Cell { .. } if plan.is_fused_select(id) => {}
            Node::Gate(..) | Node::Cell { .. } => {
                if let Some((v, m)) = decision(c, tv, id) {
                    add(log2_tail(v + p.v_ms, m));
                }
            }
            Node::Mux { s, a, b } if !plan.cmux[i] => {
                add(log2_tail(tv[s as usize] + tv[a as usize] + p.v_ms, 0.125));
                add(log2_tail(tv[s as usize] + tv[b as usize] + p.v_ms, 0.125));
                if plan.refresh[i] {
                    add(log2_tail(tv[i] + p.v_ms, 0.125));
                }
            }
            // A refresh bootstraps the extracted raw CMUX result.
            Node::Mux { .. } if plan.refresh[i] => add(log2_tail(tv[i] + p.v_ms, 0.125)),
            _ => {}
        }
    }
    for (i, &v) in tv.iter().enumerate() {
        // Carried flip-flops are lifted whenever their ring is over budget: count them every cycle.
        if plan.lift[i] {
            add(log2_tail(v + p.v_ms, 0.125));
        }
        let slot = plan.sel_slot[i];
        if slot != NO_SLOT {
            let ms = select_ms(p, plan.is_low_noise_select(slot));
            if plan.is_fresh_select(slot) {
                // The refresh's gate bootstrap decides on the select as it is; the circuit
                // bootstrap then on a fresh bit.
                add(log2_tail(v + p.v_ms, 0.125));
                add(log2_tail(p.v_br + p.v_ks + ms, 0.125));
            } else if let Some((dv, m)) = plan
                .is_fused_select(i as NodeId)
                .then(|| decision(c, tv, i as NodeId))
                .flatten()
            {
                // The circuit bootstrap decides the gate's linear combination.
                add(log2_tail(dv + ms, m));
            } else {
                add(log2_tail(v + ms, 0.125));
            }
        }
    }
    (sum.log2(), worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Blueprint;

    fn mux_ram() -> Circuit {
        let text = r#"
[[builtin]]
type = "mux-ram"
name = "ram"
in_addr_width = 4
in_wdata_width = 2
out_rdata_width = 2
[connect]
"ram/addr" = "@addr"
"ram/wren" = "@wren"
"ram/wdata" = "@wdata"
"@rdata" = "ram/rdata"
"#;
        Circuit::compile(&Blueprint::from_str_with_base(text, std::path::Path::new(".")).unwrap())
            .unwrap()
    }

    #[test]
    fn no_cmux_when_the_noise_leaves_no_room() {
        let c = mux_ram();
        let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
        assert!(
            MuxPlan::new(&c, &LeveledParams { cost_cb: 0.1, ..lp })
                .counts()
                .cmuxes
                > 0
        );
        // One CMUX after a fresh ring would already break the bound: every MUX stays a gate.
        let noisy = LeveledParams {
            cost_cb: 0.1,
            v_ext: lp.v_ring_max(),
            ..lp
        };
        let k = MuxPlan::new(&c, &noisy).counts();
        assert_eq!((k.cmuxes, k.circuit_bootstraps), (0, 0), "{k:?}");
        // And the constructor refuses parameters where a gate MUX's ring cannot take one CMUX.
        let m = NoiseModel::of(&vsp_tfhe::Params::default_128());
        let worse = NoiseModel {
            v_br: m.v_br * 4.0,
            ..m
        };
        assert!(LeveledParams::from_noise(&worse, lp.v_ms_cb, lp.v_input, 5.0, 0.0, 0.0).is_none());
    }

    /// The lift simulation recomputes only the carried flip-flops' cone each cycle: its variances
    /// and lifts are those of full forward passes ([`MuxPlan::ring_vars`]), bit for bit.
    #[test]
    fn lift_sim_matches_full_passes() {
        let c = mux_ram();
        let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
        let plan = MuxPlan::new(&c, &LeveledParams { cost_cb: 0.1, ..lp });
        let p = plan.params.unwrap();
        assert!(
            plan.carry.iter().any(|&x| x),
            "the test needs carried flip-flops"
        );
        for power_up in [false, true] {
            let mut sim = LiftSim::new(&c, &p, &plan, power_up);
            let (mut lifted, mut var) = (vec![!power_up; c.dffs.len()], vec![0.0; c.dffs.len()]);
            for _ in 0..40 {
                let start: Vec<f64> = (0..c.dffs.len())
                    .map(|k| if lifted[k] { p.v_br } else { var[k] })
                    .collect();
                let rv = plan.ring_vars(&c, &start);
                let want = sim.carried.iter().filter(|&&k| lifted[k]).count();
                assert_eq!(sim.step(&c, &p, &plan), want);
                for &k in &sim.carried {
                    let v = rv[c.dffs[k].d as usize];
                    lifted[k] = !plan.within_budget(k, v);
                    var[k] = v;
                }
                assert_eq!(sim.lifted, lifted);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&sim.var), bits(&var));
            }
        }
    }

    #[test]
    fn dear_selects_keep_muxes_as_gates() {
        let c = mux_ram();
        let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
        let cheap = MuxPlan::new(&c, &LeveledParams { cost_cb: 0.1, ..lp }).counts();
        let dear = MuxPlan::new(
            &c,
            &LeveledParams {
                cost_cb: 1000.0,
                cost_cb_low: 1000.0,
                ..lp
            },
        )
        .counts();
        assert_eq!(dear.cmuxes, 0, "{dear:?}");
        assert!(cheap.cost < dear.cost, "{cheap:?} vs {dear:?}");
        assert!(dear.cost <= MuxPlan::gates_only_under(&c, &lp).counts().cost + 1e-9);
    }
}
