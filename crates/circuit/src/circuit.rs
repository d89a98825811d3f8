//! The flattened circuit: all netlist instances of a blueprint merged into one graph of nodes, MUX
//! memories expanded into gates and flip-flops, CMUX memories kept as memory blocks, external `@` ports.
//! This is what the evaluator runs (Iyokan's task graph, VSP paper seed 000).

use crate::blueprint::{Blueprint, MemImpl, MemKind, MemorySpec};
use crate::error::CircuitError;
use crate::netlist::GateKind;
use crate::stats::NetlistStats;

/// Index of a node in [`Circuit::nodes`].
pub type NodeId = u32;

/// A node of the flattened circuit; each produces one bit per cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// Bit number `i` of the flattened list of external input bits ([`Circuit::input_bits`]).
    Input(u32),
    Const(bool),
    Not(NodeId),
    Gate(GateKind, NodeId, NodeId),
    /// `s ? b : a`.
    Mux {
        s: NodeId,
        a: NodeId,
        b: NodeId,
    },
    /// A multi-input cell (one bootstrap in TFHE): `spec` over `ins[..spec.arity()]`; made by the
    /// technology mapping ([`crate::techmap`]), never by the flattener.
    Cell {
        spec: vsp_tfhe::CellSpec,
        ins: [NodeId; vsp_tfhe::cells::MAX_CELL_INPUTS],
    },
    /// The state of flip-flop number `i` ([`Circuit::dffs`]).
    Dff(u32),
    /// Read-data bit `bit` of CMUX memory `mem`.
    MemOut {
        mem: u32,
        bit: u32,
    },
}

impl Node {
    pub(crate) fn operands(&self) -> impl Iterator<Item = NodeId> {
        let (v, n) = match *self {
            Node::Not(a) => ([a, 0, 0, 0], 1),
            Node::Gate(_, a, b) => ([a, b, 0, 0], 2),
            Node::Mux { s, a, b } => ([s, a, b, 0], 3),
            Node::Cell { spec, ins } => (ins, spec.arity()),
            _ => ([0; 4], 0),
        };
        v.into_iter().take(n)
    }
    fn map_operands(&mut self, f: &mut impl FnMut(NodeId) -> NodeId) {
        match self {
            Node::Cell { spec, ins } => {
                for x in ins.iter_mut().take(spec.arity()) {
                    *x = f(*x);
                }
            }
            Node::Not(a) => *a = f(*a),
            Node::Gate(_, a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            Node::Mux { s, a, b } => {
                *s = f(*s);
                *a = f(*a);
                *b = f(*b);
            }
            _ => {}
        }
    }
    /// Bootstraps this node costs in TFHE.
    pub fn bootstraps(&self) -> u32 {
        match self {
            Node::Gate(..) | Node::Cell { .. } => 1,
            Node::Mux { .. } => 2,
            _ => 0,
        }
    }
}

/// Applies the renumbering `map` to every node reference outside the nodes themselves: the
/// flip-flops' `q` and `d`, the external ports' bits and the memories' ports.
fn remap_refs(
    dffs: &mut [Dff],
    inputs: &mut [ExtPort],
    outputs: &mut [ExtPort],
    mems: &mut [MemBlock],
    map: &mut impl FnMut(NodeId) -> NodeId,
) {
    for d in dffs {
        d.q = map(d.q);
        d.d = map(d.d);
    }
    for p in inputs.iter_mut().chain(outputs.iter_mut()) {
        p.bits.iter_mut().for_each(|b| *b = map(*b));
    }
    for m in mems {
        m.addr
            .iter_mut()
            .chain(m.wdata.iter_mut())
            .chain(m.rdata.iter_mut())
            .for_each(|b| *b = map(*b));
        m.wren = m.wren.map(&mut *map);
    }
}

/// A flip-flop: output node `q`, data input `d`, initial value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dff {
    pub q: NodeId,
    pub d: NodeId,
    pub init: bool,
}

/// An external (`@`) port: a name and its bits (input: [`Node::Input`] nodes; output: driving nodes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtPort {
    pub name: String,
    pub bits: Vec<NodeId>,
}

/// A memory of the blueprint after flattening.
#[derive(Clone, Debug)]
pub struct MemBlock {
    pub spec: MemorySpec,
    pub addr: Vec<NodeId>,
    pub wren: Option<NodeId>,
    pub wdata: Vec<NodeId>,
    /// The nodes carrying read data ([`Node::MemOut`] for CMUX memories, tree roots for MUX ones).
    pub rdata: Vec<NodeId>,
    /// MUX memories: the flip-flop index of word `j`, bit `i` at `j * data_width + i`.
    pub cells: Vec<u32>,
}

/// Something the evaluator runs in dependency order: a node, or a CMUX memory's read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Node(NodeId),
    MemRead(u32),
}

/// The flattened, validated circuit.
#[derive(Clone, Debug)]
pub struct Circuit {
    pub(crate) nodes: Vec<Node>,
    pub(crate) names: Vec<String>,
    pub(crate) inputs: Vec<ExtPort>,
    pub(crate) outputs: Vec<ExtPort>,
    pub(crate) dffs: Vec<Dff>,
    pub(crate) mems: Vec<MemBlock>,
    pub(crate) order: Vec<Step>,
    pub(crate) n_input_bits: u32,
    pub(crate) fingerprint: [u8; 32],
}

impl TryFrom<&Blueprint> for Circuit {
    type Error = CircuitError;
    /// [`Circuit::compile`].
    fn try_from(bp: &Blueprint) -> Result<Self, CircuitError> {
        crate::flatten::flatten(bp)
    }
}

impl Circuit {
    /// Flattens and validates a blueprint.
    pub fn compile(bp: &Blueprint) -> Result<Self, CircuitError> {
        crate::flatten::flatten(bp)
    }
    /// Reads a blueprint file and compiles it.
    pub fn from_blueprint_path(path: &std::path::Path) -> Result<Self, CircuitError> {
        Self::compile(&Blueprint::from_path(path)?)
    }
    /// All nodes.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// A readable name of node `id` (`instance/cell`, `@port[bit]`, `mem/rdata[bit]`).
    pub fn node_name(&self, id: NodeId) -> &str {
        self.names
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("?")
    }
    /// External inputs in order.
    pub fn inputs(&self) -> &[ExtPort] {
        &self.inputs
    }
    /// External outputs in order.
    pub fn outputs(&self) -> &[ExtPort] {
        &self.outputs
    }
    /// The external input `name`.
    pub fn input(&self, name: &str) -> Option<&ExtPort> {
        self.inputs.iter().find(|p| p.name == name)
    }
    /// The external output `name`.
    pub fn output(&self, name: &str) -> Option<&ExtPort> {
        self.outputs.iter().find(|p| p.name == name)
    }
    /// Total number of external input bits.
    pub fn input_bits(&self) -> usize {
        self.n_input_bits as usize
    }
    /// All flip-flops (including the cells of MUX memories).
    pub fn dffs(&self) -> &[Dff] {
        &self.dffs
    }
    /// All memories.
    pub fn memories(&self) -> &[MemBlock] {
        &self.mems
    }
    /// The memory called `name` and its index.
    pub fn memory(&self, name: &str) -> Option<(usize, &MemBlock)> {
        self.mems
            .iter()
            .enumerate()
            .find(|(_, m)| m.spec.name == name)
    }
    /// Evaluation order of one cycle.
    pub fn order(&self) -> &[Step] {
        &self.order
    }
    /// A SHA3-256 digest of the structure, stored in snapshots so a resume uses the same circuit.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }
    /// Statistics of the whole flattened circuit (CMUX memories not included; see the memory docs).
    pub fn stats(&self) -> NetlistStats {
        let mut s = NetlistStats::default();
        for n in &self.nodes {
            match *n {
                Node::Input(_) => s.input_bits += 1,
                Node::MemOut { .. } => {}
                Node::Const(_) => s.constants += 1,
                Node::Not(_) => s.not += 1,
                Node::Gate(k, ..) => {
                    let i = GateKind::ALL.iter().position(|g| *g == k).unwrap_or(0);
                    s.gates[i] += 1;
                }
                Node::Mux { .. } => s.mux += 1,
                Node::Cell { .. } => s.cells += 1,
                Node::Dff(_) => s.dff += 1,
            }
            s.bootstraps_per_cycle += u64::from(n.bootstraps());
        }
        // Memory reads start paths (as inputs do).
        let mut depth = vec![0u64; self.nodes.len()];
        for step in &self.order {
            let Step::Node(id) = *step else { continue };
            let n = &self.nodes[id as usize];
            let d = n.operands().map(|i| depth[i as usize]).max().unwrap_or(0);
            depth[id as usize] = d + u64::from(n.bootstraps() > 0);
        }
        s.critical_path = depth.into_iter().max().unwrap_or(0);
        s.input_bits = u64::from(self.n_input_bits);
        s.output_bits = self.outputs.iter().map(|p| p.bits.len() as u64).sum();
        s
    }

    /// The same circuit with its nodes replaced: `keep[i]` says whether old node `i` stays, `nodes[i]`
    /// is what it becomes (operands in old ids, all of them kept). Ports, flip-flops and memories
    /// are renumbered; the fingerprint stays the original's (the design the client encrypted for is
    /// the same; see [`crate::techmap`]).
    pub(crate) fn rebuilt(&self, nodes: &[Node], keep: &[bool]) -> Result<Circuit, CircuitError> {
        let mut new_id = vec![UNSET; nodes.len()];
        let mut out = Vec::new();
        let mut names = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            if keep[i] {
                new_id[i] = out.len() as NodeId;
                out.push(*n);
                names.push(self.names.get(i).cloned().unwrap_or_default());
            }
        }
        let mut bad = None;
        let mut map = |x: NodeId| {
            let y = new_id[x as usize];
            if y == UNSET {
                bad = Some(x);
            }
            y
        };
        for n in &mut out {
            n.map_operands(&mut map);
        }
        let mut dffs = self.dffs.clone();
        let (mut inputs, mut outputs) = (self.inputs.clone(), self.outputs.clone());
        let mut mems = self.mems.clone();
        remap_refs(&mut dffs, &mut inputs, &mut outputs, &mut mems, &mut map);
        if let Some(x) = bad {
            return Err(CircuitError::Backend(format!(
                "internal rebuild error: {} is used but dropped",
                self.node_name(x)
            )));
        }
        let order = order_steps(&out, &names, &mems)?;
        Ok(Circuit {
            nodes: out,
            names,
            inputs,
            outputs,
            dffs,
            mems,
            order,
            n_input_bits: self.n_input_bits,
            fingerprint: self.fingerprint,
        })
    }

    /// Builds the dependency graph used by the evaluators: the predecessors of each node.
    pub(crate) fn operands(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes[id as usize].operands()
    }
}

/// Helpers used by the flattener to build the node list.
#[derive(Default)]
pub(crate) struct NodeArena {
    pub nodes: Vec<Node>,
    pub names: Vec<String>,
    /// `alias[i] = Some(j)`: node i is a placeholder that stands for node j (port connection).
    pub alias: Vec<Option<NodeId>>,
}

/// A placeholder id for an unconnected alias.
pub(crate) const UNSET: NodeId = u32::MAX;

impl NodeArena {
    pub fn push(&mut self, n: Node, name: String) -> NodeId {
        self.nodes.push(n);
        self.names.push(name);
        self.alias.push(None);
        (self.nodes.len() - 1) as NodeId
    }
    pub fn placeholder(&mut self, name: String) -> NodeId {
        let id = self.push(Node::Const(false), name);
        self.alias[id as usize] = Some(UNSET);
        id
    }
    /// Builds `s ? b : a` trees over `leaves` (LSB of the address selects between neighbours first).
    pub fn mux_tree(&mut self, addr: &[NodeId], leaves: Vec<NodeId>, name: &str) -> NodeId {
        let mut level = leaves;
        for (k, &s) in addr.iter().enumerate() {
            let mut next = Vec::with_capacity(level.len() / 2);
            for (j, pair) in level.chunks(2).enumerate() {
                let id = match pair {
                    [a, b] => {
                        self.push(Node::Mux { s, a: *a, b: *b }, format!("{name}/mux{k}_{j}"))
                    }
                    [a] => *a,
                    _ => continue,
                };
                next.push(id);
            }
            level = next;
        }
        level.first().copied().unwrap_or(UNSET)
    }
}

/// Expands a MUX memory into gates and flip-flops. Returns the [`MemBlock`] with `cells` set.
pub(crate) fn expand_mux_memory(
    arena: &mut NodeArena,
    dffs: &mut Vec<Dff>,
    spec: &MemorySpec,
    addr: Vec<NodeId>,
    wren: Option<NodeId>,
    wdata: Vec<NodeId>,
) -> MemBlock {
    let (words, w, name) = (spec.words(), spec.data_width, spec.name.as_str());
    let mut cells = Vec::with_capacity(words * w);
    let mut q = Vec::with_capacity(words * w);
    for j in 0..words {
        for i in 0..w {
            let d = dffs.len() as u32;
            let id = arena.push(Node::Dff(d), format!("{name}/cell[{j}][{i}]"));
            dffs.push(Dff {
                q: id,
                d: id,
                init: false,
            });
            cells.push(d);
            q.push(id);
        }
    }
    if let (MemKind::Ram, Some(we)) = (spec.kind, wren) {
        // Write decoder: line_j = wren & (addr == j), built as a tree over address bits from the top.
        let mut lines = vec![we];
        for k in (0..spec.addr_width).rev() {
            let a = addr[k];
            let mut next = Vec::with_capacity(lines.len() * 2);
            for (t, &l) in lines.iter().enumerate() {
                next.push(arena.push(
                    Node::Gate(GateKind::AndNot, l, a),
                    format!("{name}/dec{k}_{t}_0"),
                ));
                next.push(arena.push(
                    Node::Gate(GateKind::And, l, a),
                    format!("{name}/dec{k}_{t}_1"),
                ));
            }
            lines = next;
        }
        // After the loop, lines[j] has address bits from MSB to LSB, i.e. index j = the address.
        for j in 0..words {
            for i in 0..w {
                let cell = q[j * w + i];
                let d = arena.push(
                    Node::Mux {
                        s: lines[j],
                        a: cell,
                        b: wdata[i],
                    },
                    format!("{name}/wr[{j}][{i}]"),
                );
                dffs[cells[j * w + i] as usize].d = d;
            }
        }
    }
    let rdata = (0..w)
        .map(|i| {
            let leaves: Vec<NodeId> = (0..words).map(|j| q[j * w + i]).collect();
            arena.mux_tree(&addr, leaves, &format!("{name}/rd{i}"))
        })
        .collect();
    MemBlock {
        spec: spec.clone(),
        addr,
        wren,
        wdata,
        rdata,
        cells,
    }
}

/// Resolves aliases, drops them, computes the order and the fingerprint.
pub(crate) fn finish(
    mut arena: NodeArena,
    mut inputs: Vec<ExtPort>,
    mut outputs: Vec<ExtPort>,
    mut dffs: Vec<Dff>,
    mut mems: Vec<MemBlock>,
    n_input_bits: u32,
) -> Result<Circuit, CircuitError> {
    let n = arena.nodes.len();
    // Resolve alias chains (a connection chain longer than n is a loop of wires).
    let mut target: Vec<NodeId> = (0..n as NodeId).collect();
    for (i, t) in target.iter_mut().enumerate() {
        let mut cur = i as NodeId;
        let mut steps = 0;
        while let Some(next) = arena.alias[cur as usize] {
            if next == UNSET {
                return Err(CircuitError::Blueprint(format!(
                    "input {} is not connected",
                    arena.names[cur as usize]
                )));
            }
            cur = next;
            steps += 1;
            if steps > n {
                return Err(CircuitError::CombinationalLoop(format!(
                    "connections form a loop through {}",
                    arena.names[i]
                )));
            }
        }
        *t = cur;
    }
    let mut new_id = vec![UNSET; n];
    let mut nodes = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    for (i, slot) in new_id.iter_mut().enumerate() {
        if arena.alias[i].is_none() {
            *slot = nodes.len() as NodeId;
            nodes.push(arena.nodes[i]);
            names.push(std::mem::take(&mut arena.names[i]));
        }
    }
    let map = |x: NodeId| new_id[target[x as usize] as usize];
    for node in &mut nodes {
        node.map_operands(&mut |x| map(x));
    }
    remap_refs(&mut dffs, &mut inputs, &mut outputs, &mut mems, &mut {
        map
    });
    let order = order_steps(&nodes, &names, &mems)?;
    let mut c = Circuit {
        nodes,
        names,
        inputs,
        outputs,
        dffs,
        mems,
        order,
        n_input_bits,
        fingerprint: [0; 32],
    };
    c.fingerprint = fingerprint(&c);
    Ok(c)
}

fn order_steps(
    nodes: &[Node],
    names: &[String],
    mems: &[MemBlock],
) -> Result<Vec<Step>, CircuitError> {
    // Vertices: nodes 0..n, then one read vertex per CMUX memory.
    let n = nodes.len();
    let total = n + mems.len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); total];
    for (i, node) in nodes.iter().enumerate() {
        preds[i].extend(node.operands());
        if let Node::MemOut { mem, .. } = node {
            preds[i].push((n + *mem as usize) as u32);
        }
    }
    for (m, mem) in mems.iter().enumerate() {
        if mem.spec.imp == MemImpl::Cmux {
            preds[n + m].extend(mem.addr.iter().copied());
        }
    }
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); total];
    let mut indeg = vec![0usize; total];
    for (v, ps) in preds.iter().enumerate() {
        indeg[v] = ps.len();
        for &p in ps {
            succ[p as usize].push(v as u32);
        }
    }
    let mut stack: Vec<usize> = (0..total).filter(|&v| indeg[v] == 0).rev().collect();
    let mut order = Vec::with_capacity(total);
    let mut done = 0;
    while let Some(v) = stack.pop() {
        done += 1;
        if v >= n {
            if mems[v - n].spec.imp == MemImpl::Cmux {
                order.push(Step::MemRead((v - n) as u32));
            }
        } else if nodes[v].operands().next().is_some() {
            order.push(Step::Node(v as NodeId));
        }
        for &s in &succ[v] {
            indeg[s as usize] -= 1;
            if indeg[s as usize] == 0 {
                stack.push(s as usize);
            }
        }
    }
    if done < total {
        let v = (0..total).find(|&v| indeg[v] > 0).unwrap_or(0);
        let name = if v < n {
            names[v].clone()
        } else {
            format!("memory {}", mems[v - n].spec.name)
        };
        return Err(CircuitError::CombinationalLoop(format!(
            "combinational loop through {name} (the blueprint connects an output back to an input \
             without a flip-flop in between)"
        )));
    }
    Ok(order)
}

fn fingerprint(c: &Circuit) -> [u8; 32] {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update(format!("{:?}", c.nodes));
    h.update(format!("{:?}", c.dffs));
    h.update(format!("{:?}{:?}", c.inputs, c.outputs));
    for m in &c.mems {
        h.update(format!(
            "{:?}{:?}{:?}{:?}{:?}",
            m.spec, m.addr, m.wren, m.wdata, m.rdata
        ));
    }
    h.finalize().into()
}
