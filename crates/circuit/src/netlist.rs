//! The gate-level netlist IR: one synchronous module made of input ports, constants, the two-input
//! gates of the TFHE gate set, NOT, MUX and positive-edge DFFs, with named multi-bit ports.
//!
//! This follows the cell set Iyokan evaluates (VSP paper, seed 000, "Iyokan"): every wire is the output of
//! exactly one cell, so a [`Wire`] is simply the index of its driving cell. A netlist is validated when it is
//! built ([`NetlistBuilder::build`]): every referenced wire exists, every DFF has a D input, port names are
//! unique and there is no combinational loop. Errors name the offending cell or port.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::CircuitError;

/// A wire, identified by the index of the cell that drives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Wire(pub u32);

impl Wire {
    /// The index of the driving cell.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The two-input gates: vsp-tfhe's [`vsp_tfhe::Gate2`], one list for the netlist and the
/// bootstrapped gates (semantics, names and the plain bit-sliced evaluation live there).
pub use vsp_tfhe::Gate2 as GateKind;

/// One cell; its output is the wire with the cell's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cell {
    /// Bit `bit` of input port number `port`.
    Input { port: u32, bit: u32 },
    /// A constant driver.
    Const(bool),
    /// `!a` (free in TFHE: a negation of the ciphertext).
    Not(Wire),
    /// A two-input gate (one bootstrap in TFHE).
    Gate(GateKind, Wire, Wire),
    /// `y = s ? b : a` (Yosys `$_MUX_`; two bootstraps in TFHE).
    Mux { s: Wire, a: Wire, b: Wire },
    /// A positive-edge flip-flop: its output is its state; at each clock edge the state becomes `d`.
    Dff { d: Wire, init: bool },
}

impl Cell {
    /// The combinational inputs of the cell (a DFF's D edge is sequential and not listed).
    pub fn comb_inputs(&self) -> impl Iterator<Item = Wire> {
        let (v, n): ([Wire; 3], usize) = match *self {
            Cell::Input { .. } | Cell::Const(_) | Cell::Dff { .. } => ([Wire(0); 3], 0),
            Cell::Not(a) => ([a, Wire(0), Wire(0)], 1),
            Cell::Gate(_, a, b) => ([a, b, Wire(0)], 2),
            Cell::Mux { s, a, b } => ([s, a, b], 3),
        };
        v.into_iter().take(n)
    }

    /// Every wire the cell reads, including a DFF's D input.
    pub fn all_inputs(&self) -> impl Iterator<Item = Wire> {
        let d = match *self {
            Cell::Dff { d, .. } => Some(d),
            _ => None,
        };
        self.comb_inputs().chain(d)
    }

    /// Bootstraps this cell costs in TFHE (gate 1, MUX 2, NOT/constant/input/DFF 0).
    pub fn bootstraps(&self) -> u32 {
        match self {
            Cell::Gate(..) => 1,
            Cell::Mux { .. } => 2,
            _ => 0,
        }
    }
}

/// A named multi-bit port; bit 0 is the least significant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub name: String,
    pub bits: Vec<Wire>,
}

impl Port {
    /// The width in bits.
    pub fn width(&self) -> usize {
        self.bits.len()
    }
}

/// A validated netlist. Build one with [`NetlistBuilder`] or import it with [`crate::yosys`].
#[derive(Clone, Debug)]
pub struct Netlist {
    cells: Vec<Cell>,
    names: Vec<Option<String>>,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    /// Combinational cells (everything but DFFs, inputs and constants) in topological order.
    order: Vec<Wire>,
}

impl Netlist {
    /// All cells; the cell at index `i` drives `Wire(i)`.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }
    /// The cell driving `w`.
    pub fn cell(&self, w: Wire) -> Option<&Cell> {
        self.cells.get(w.index())
    }
    /// The human-readable name of the cell driving `w` (Yosys cell name or `port[bit]`), if known.
    pub fn cell_name(&self, w: Wire) -> String {
        describe(&self.names, &self.cells, &self.inputs, w)
    }
    /// Input ports in declaration order.
    pub fn inputs(&self) -> &[Port] {
        &self.inputs
    }
    /// Output ports in declaration order.
    pub fn outputs(&self) -> &[Port] {
        &self.outputs
    }
    /// The input port called `name`.
    pub fn input(&self, name: &str) -> Option<&Port> {
        self.inputs.iter().find(|p| p.name == name)
    }
    /// The output port called `name`.
    pub fn output(&self, name: &str) -> Option<&Port> {
        self.outputs.iter().find(|p| p.name == name)
    }
    /// Combinational cells in a topological order (inputs of each come earlier or are sources).
    pub fn topo_order(&self) -> &[Wire] {
        &self.order
    }
    /// Gate counts, DFFs, critical path and bootstraps per cycle.
    pub fn stats(&self) -> crate::stats::NetlistStats {
        crate::stats::NetlistStats::of(self)
    }
}

fn describe(names: &[Option<String>], cells: &[Cell], inputs: &[Port], w: Wire) -> String {
    match (
        names.get(w.index()).and_then(|n| n.as_deref()),
        cells.get(w.index()),
    ) {
        (Some(n), _) => n.to_string(),
        (None, Some(Cell::Input { port, bit })) => {
            let p = inputs
                .get(*port as usize)
                .map(|p| p.name.as_str())
                .unwrap_or("?");
            format!("{p}[{bit}]")
        }
        (None, Some(c)) => format!("cell #{} ({c:?})", w.0),
        (None, None) => format!("wire #{}", w.0),
    }
}

/// Builds a [`Netlist`] cell by cell; [`NetlistBuilder::build`] validates it.
#[derive(Default, Debug, Clone)]
pub struct NetlistBuilder {
    cells: Vec<Cell>,
    names: Vec<Option<String>>,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    /// DFFs created by [`Self::dff`] whose D has not been connected yet.
    pending_dff: HashSet<u32>,
}

impl NetlistBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, c: Cell) -> Wire {
        let w = Wire(self.cells.len() as u32);
        self.cells.push(c);
        self.names.push(None);
        w
    }

    /// Declares an input port of `width` bits and returns its wires (LSB first).
    pub fn input(&mut self, name: &str, width: usize) -> Vec<Wire> {
        let port = self.inputs.len() as u32;
        let bits: Vec<Wire> = (0..width)
            .map(|bit| {
                self.push(Cell::Input {
                    port,
                    bit: bit as u32,
                })
            })
            .collect();
        self.inputs.push(Port {
            name: name.to_string(),
            bits: bits.clone(),
        });
        bits
    }
    /// Declares an output port driven by `bits` (LSB first).
    pub fn output(&mut self, name: &str, bits: &[Wire]) {
        self.outputs.push(Port {
            name: name.to_string(),
            bits: bits.to_vec(),
        });
    }
    /// A constant driver.
    pub fn constant(&mut self, v: bool) -> Wire {
        self.push(Cell::Const(v))
    }
    /// `!a`.
    pub fn not(&mut self, a: Wire) -> Wire {
        self.push(Cell::Not(a))
    }
    /// A two-input gate.
    pub fn gate(&mut self, kind: GateKind, a: Wire, b: Wire) -> Wire {
        self.push(Cell::Gate(kind, a, b))
    }
    /// `s ? b : a`.
    pub fn mux(&mut self, s: Wire, a: Wire, b: Wire) -> Wire {
        self.push(Cell::Mux { s, a, b })
    }
    /// A DFF with initial value `init`; connect its D input later with [`Self::connect_dff`].
    pub fn dff(&mut self, init: bool) -> Wire {
        let w = self.push(Cell::Dff {
            d: Wire(u32::MAX),
            init,
        });
        self.pending_dff.insert(w.0);
        w
    }
    /// A DFF whose D input is already known.
    pub fn dff_with(&mut self, d: Wire, init: bool) -> Wire {
        self.push(Cell::Dff { d, init })
    }
    /// Connects the D input of a DFF made by [`Self::dff`].
    pub fn connect_dff(&mut self, q: Wire, d: Wire) -> Result<(), CircuitError> {
        match self.cells.get_mut(q.index()) {
            Some(Cell::Dff { d: slot, .. }) => {
                *slot = d;
                self.pending_dff.remove(&q.0);
                Ok(())
            }
            _ => Err(CircuitError::Netlist(format!("wire #{} is not a DFF", q.0))),
        }
    }
    /// Gives the cell driving `w` a name used in error messages and statistics.
    pub fn name(&mut self, w: Wire, name: &str) {
        if let Some(slot) = self.names.get_mut(w.index()) {
            *slot = Some(name.to_string());
        }
    }
    /// Adds a raw cell (used by importers); validation happens in [`Self::build`].
    pub fn raw(&mut self, c: Cell, name: Option<String>) -> Wire {
        let w = self.push(c);
        if let Some(n) = name {
            self.names[w.index()] = Some(n);
        }
        w
    }
    /// Replaces the cell driving `w` (used by importers that create cells before their inputs exist).
    pub fn set_raw(&mut self, w: Wire, c: Cell) -> Result<(), CircuitError> {
        let slot = self
            .cells
            .get_mut(w.index())
            .ok_or_else(|| CircuitError::Netlist(format!("wire #{} does not exist", w.0)))?;
        *slot = c;
        self.pending_dff.remove(&w.0);
        Ok(())
    }

    /// Validates and freezes the netlist.
    pub fn build(self) -> Result<Netlist, CircuitError> {
        let n = self.cells.len();
        let name_of = |w: Wire| describe(&self.names, &self.cells, &self.inputs, w);
        if let Some(&q) = self.pending_dff.iter().min() {
            return Err(CircuitError::Netlist(format!(
                "DFF {} has no D input connected",
                name_of(Wire(q))
            )));
        }
        for (i, c) in self.cells.iter().enumerate() {
            for w in c.all_inputs() {
                if w.index() >= n {
                    return Err(CircuitError::Netlist(format!(
                        "cell {} reads wire #{} which is not driven by any cell",
                        name_of(Wire(i as u32)),
                        w.0
                    )));
                }
            }
            if let Cell::Input { port, bit } = *c {
                let ok = self
                    .inputs
                    .get(port as usize)
                    .and_then(|p| p.bits.get(bit as usize))
                    .is_some_and(|&w| w.index() == i);
                if !ok {
                    return Err(CircuitError::Netlist(format!(
                        "cell #{i} claims to be input bit {bit} of port #{port}, which does not exist"
                    )));
                }
            }
        }
        let mut seen = HashSet::new();
        for p in self.inputs.iter().chain(&self.outputs) {
            if p.name.is_empty() || p.bits.is_empty() {
                return Err(CircuitError::Netlist(format!(
                    "port {:?} must have a name and at least one bit",
                    p.name
                )));
            }
            if !seen.insert(p.name.as_str()) {
                return Err(CircuitError::Netlist(format!(
                    "port name {:?} is used twice",
                    p.name
                )));
            }
            if let Some(w) = p.bits.iter().find(|w| w.index() >= n) {
                return Err(CircuitError::Netlist(format!(
                    "port {} refers to wire #{} which is not driven",
                    p.name, w.0
                )));
            }
        }
        let order = topo_sort(&self.cells).map_err(|w| {
            CircuitError::CombinationalLoop(format!(
                "combinational loop through cell {}",
                name_of(w)
            ))
        })?;
        Ok(Netlist {
            cells: self.cells,
            names: self.names,
            inputs: self.inputs,
            outputs: self.outputs,
            order,
        })
    }
}

/// Kahn's algorithm over combinational edges; on a loop returns one cell that lies on it.
pub(crate) fn topo_sort(cells: &[Cell]) -> Result<Vec<Wire>, Wire> {
    let n = cells.len();
    let mut indeg = vec![0u32; n];
    let mut fanout_start = vec![0u32; n + 1];
    for c in cells {
        for w in c.comb_inputs() {
            fanout_start[w.index() + 1] += 1;
        }
    }
    for i in 0..n {
        fanout_start[i + 1] += fanout_start[i];
    }
    let mut fill = fanout_start.clone();
    let mut fanout = vec![0u32; fanout_start[n] as usize];
    for (i, c) in cells.iter().enumerate() {
        for w in c.comb_inputs() {
            fanout[fill[w.index()] as usize] = i as u32;
            fill[w.index()] += 1;
            indeg[i] += 1;
        }
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut done = 0usize;
    while let Some(i) = stack.pop() {
        done += 1;
        if matches!(
            cells[i as usize],
            Cell::Not(_) | Cell::Gate(..) | Cell::Mux { .. }
        ) {
            order.push(Wire(i));
        }
        for &j in &fanout[fanout_start[i as usize] as usize..fanout_start[i as usize + 1] as usize]
        {
            indeg[j as usize] -= 1;
            if indeg[j as usize] == 0 {
                stack.push(j);
            }
        }
    }
    if done == n {
        return Ok(order);
    }
    // Walk backwards from an unfinished cell along unfinished inputs until a cell repeats: it is on a loop.
    let start = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
    let mut visited: HashMap<usize, ()> = HashMap::new();
    let mut cur = start;
    loop {
        if visited.insert(cur, ()).is_some() {
            return Err(Wire(cur as u32));
        }
        match cells[cur].comb_inputs().find(|w| indeg[w.index()] > 0) {
            Some(w) => cur = w.index(),
            None => return Err(Wire(cur as u32)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_orders_a_half_adder() {
        let mut b = NetlistBuilder::new();
        let x = b.input("x", 2);
        let s = b.gate(GateKind::Xor, x[0], x[1]);
        let c = b.gate(GateKind::And, x[0], x[1]);
        b.output("s", &[s, c]);
        let n = b.build().unwrap();
        let mut order = n.topo_order().to_vec();
        order.sort();
        assert_eq!(order, vec![s, c]);
        assert_eq!(n.stats().bootstraps_per_cycle, 2);
    }

    #[test]
    fn loop_is_named() {
        let mut b = NetlistBuilder::new();
        let x = b.input("x", 1);
        let q = b.dff(false);
        let g1 = b.raw(Cell::Gate(GateKind::And, x[0], Wire(3)), Some("g1".into()));
        let g2 = b.raw(Cell::Gate(GateKind::Or, g1, q), Some("g2".into()));
        b.connect_dff(q, g2).unwrap();
        b.output("y", &[g2]);
        let e = b.build().unwrap_err().to_string();
        assert!(
            e.contains("combinational loop") && (e.contains("g1") || e.contains("g2")),
            "{e}"
        );
    }

    #[test]
    fn dff_breaks_loops_and_unconnected_dff_is_an_error() {
        let mut b = NetlistBuilder::new();
        let q = b.dff(true);
        let nq = b.not(q);
        b.connect_dff(q, nq).unwrap();
        b.output("q", &[q]);
        assert!(b.build().is_ok());

        let mut b = NetlistBuilder::new();
        let q = b.dff(true);
        b.name(q, "state_reg");
        b.output("q", &[q]);
        let e = b.build().unwrap_err().to_string();
        assert!(e.contains("state_reg") && e.contains("no D input"), "{e}");
    }

    #[test]
    fn duplicate_port_and_dangling_wire() {
        let mut b = NetlistBuilder::new();
        let x = b.input("x", 1);
        b.output("x", &x);
        assert!(b.build().unwrap_err().to_string().contains("used twice"));
        let mut b = NetlistBuilder::new();
        let x = b.input("x", 1);
        let g = b.raw(
            Cell::Gate(GateKind::And, x[0], Wire(99)),
            Some("bad".into()),
        );
        b.output("y", &[g]);
        let e = b.build().unwrap_err().to_string();
        assert!(e.contains("bad") && e.contains("#99"), "{e}");
    }
}
