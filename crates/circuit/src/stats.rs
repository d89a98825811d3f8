//! Netlist statistics: gates by type, DFFs, critical-path depth and TFHE bootstraps per cycle —
//! the numbers the cost model (`VSP-COST-MODEL.md`) plans with.

use std::fmt;

use crate::netlist::{Cell, GateKind, Netlist};

/// Counts and depth of one netlist (or of a flattened circuit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetlistStats {
    /// Two-input gates, indexed like [`GateKind::ALL`].
    pub gates: [u64; 8],
    pub not: u64,
    pub mux: u64,
    /// Multi-input cells of a technology-mapped circuit ([`crate::techmap`]; one bootstrap each).
    pub cells: u64,
    pub dff: u64,
    pub constants: u64,
    pub input_bits: u64,
    pub output_bits: u64,
    /// Longest combinational path counted in bootstrap latencies (a gate or MUX = 1 level, NOT = 0).
    pub critical_path: u64,
    /// Gate bootstraps per cycle (gate 1, MUX 2, NOT 0).
    pub bootstraps_per_cycle: u64,
}

impl NetlistStats {
    /// Computes the statistics of `n`.
    pub fn of(n: &Netlist) -> Self {
        let mut s = Self::of_cells(n.cells(), n.topo_order());
        s.output_bits = n.outputs().iter().map(|p| p.width() as u64).sum();
        s
    }

    /// Statistics of a cell list with a known topological order of its combinational cells.
    pub(crate) fn of_cells(cells: &[Cell], order: &[crate::netlist::Wire]) -> Self {
        let mut s = NetlistStats::default();
        for c in cells {
            match c {
                Cell::Input { .. } => s.input_bits += 1,
                Cell::Const(_) => s.constants += 1,
                Cell::Not(_) => s.not += 1,
                Cell::Gate(k, ..) => {
                    let i = GateKind::ALL.iter().position(|g| g == k).unwrap_or(0);
                    s.gates[i] += 1;
                }
                Cell::Mux { .. } => s.mux += 1,
                Cell::Dff { .. } => s.dff += 1,
            }
            s.bootstraps_per_cycle += u64::from(c.bootstraps());
        }
        let mut depth = vec![0u64; cells.len()];
        for &w in order {
            let c = &cells[w.index()];
            let d = c.comb_inputs().map(|i| depth[i.index()]).max().unwrap_or(0);
            depth[w.index()] = d + u64::from(c.bootstraps() > 0);
        }
        s.critical_path = depth.into_iter().max().unwrap_or(0);
        s
    }

    /// Total two-input gates plus MUXes plus NOTs (plus multi-input cells).
    pub fn logic_cells(&self) -> u64 {
        self.gates.iter().sum::<u64>() + self.mux + self.not + self.cells
    }
}

impl fmt::Display for NetlistStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, n) in GateKind::ALL.iter().zip(self.gates) {
            write!(f, "{}={} ", k.name(), n)?;
        }
        write!(
            f,
            "MUX={} NOT={} CELL={} | logic={} DFF={} const={} in={} out={} | critical_path={} bootstraps/cycle={}",
            self.mux,
            self.not,
            self.cells,
            self.logic_cells(),
            self.dff,
            self.constants,
            self.input_bits,
            self.output_bits,
            self.critical_path,
            self.bootstraps_per_cycle
        )
    }
}
