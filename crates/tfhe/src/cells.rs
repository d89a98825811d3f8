//! Multi-input bootstrapped cells: one gate bootstrap decides a Boolean function of up to four
//! level-0 bits.
//!
//! Bits are ±1/8 on the torus. A cell forms Σ wᵢ·xᵢ + offset and bootstraps it with the gates' test
//! polynomial (the sign). Writing xᵢ = (2bᵢ − 1)/8, the phase is (Σ wᵢbᵢ + t)/4 + δ for an offset
//! chosen per cell, so the noiseless phase sits on one of four points a quarter apart. Which Boolean
//! functions fit follows from the negacyclic test polynomial (value at φ + 1/2 = −value at φ): with
//! four points, a decision of margin 1/8 can only split them into two adjacent pairs, so every cell is
//!
//!   f(b) = [(Σ wᵢ·bᵢ + t) mod 4 ∈ {0, 1}],  wᵢ ∈ {−1, 1, 2}, t ∈ {0, 1, 2, 3},
//!
//! with δ = 1/8 (margin 1/8, decision variance Σ wᵢ²·Var(xᵢ)). When every weight is 2 only two
//! antipodal points occur and δ = 1/4 gives margin 1/4 (XOR of the inputs, as the two-input XOR
//! gate's 2a + 2b + 1/4). A weight 3 or −2 is the same as −1 or 2 modulo 4 at a higher variance; any
//! other test polynomial on the same four points is a rotation of the sign, i.e. another `t`. An
//! exhaustive enumeration (all weights in −4..4, all four negacyclic test polynomials) confirms the
//! set: of the 3-input functions depending on all inputs, 18 fit at variance weight 3 (majority and
//! "not all equal" with any input polarities, XOR3/XNOR3) and 24 at 6 (x ⊕ g(y, z) for a two-input
//! threshold g); AND3, OR3 and MUX do not fit at all (they need margin 1/16). Of the 4-input ones, 34
//! fit at weight 4 (XOR4 and functions of the count of ones modulo 4) and 64 at 7 (x ⊕ majority or
//! x ⊕ not-all-equal of the others).
//!
//! Noise: a cell's decision variance is Σ wᵢ²·Var(xᵢ) + V_ms with margin 1/8, or the same with margin
//! 1/4 for all-2 weights ([`CellSpec::noise_weight`] gives the equivalent count of margin-1/8 inputs).
//! With the default parameters and fresh gate outputs as inputs (2.2e-5 each) a weight-7 cell
//! decides at 2^-72, weight 3 at 2^-154; `crates/tfhe/tests/noise.rs` measures the variance.
//! The output is a fresh gate bit (or, [`EvalKey::cell_trlwe`], a fresh ring for CMUX data).

use crate::bootstrap::EvalKey;
use crate::gates::Bit;
use crate::tlwe::Tlwe;
use crate::trlwe::Trlwe;
use crate::Error;

/// The most inputs a cell takes.
pub const MAX_CELL_INPUTS: usize = 4;

const MU: u32 = 1 << 29; // 1/8

/// A multi-input cell: f(b) = [(Σ wᵢ·bᵢ + t) mod 4 ∈ {0, 1}] (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellSpec {
    weights: [i8; MAX_CELL_INPUTS],
    arity: u8,
    t: u8,
}

impl CellSpec {
    /// A cell with the given weights (each −1, 1 or 2; one to four of them) and offset `t` (0..4;
    /// even when every weight is 2).
    pub fn new(weights: &[i8], t: u8) -> Result<CellSpec, Error> {
        if weights.is_empty() || weights.len() > MAX_CELL_INPUTS {
            return Err(Error::Params(format!(
                "a cell takes 1 to {MAX_CELL_INPUTS} inputs, not {}",
                weights.len()
            )));
        }
        if let Some(w) = weights.iter().find(|w| ![-1, 1, 2].contains(*w)) {
            return Err(Error::Params(format!(
                "cell weight {w}: only -1, 1 and 2 decide with margin 1/8"
            )));
        }
        if t > 3 {
            return Err(Error::Params(format!("cell offset {t} is not in 0..4")));
        }
        let mut w = [0i8; MAX_CELL_INPUTS];
        w[..weights.len()].copy_from_slice(weights);
        let spec = CellSpec {
            weights: w,
            arity: weights.len() as u8,
            t,
        };
        if spec.is_xor_like() && t % 2 == 1 {
            return Err(Error::Params(
                "an all-2 (XOR) cell needs an even offset".into(),
            ));
        }
        Ok(spec)
    }

    /// The weights, one per input.
    pub fn weights(&self) -> &[i8] {
        &self.weights[..self.arity as usize]
    }
    /// The number of inputs.
    pub fn arity(&self) -> usize {
        self.arity as usize
    }
    /// The offset `t`.
    pub fn offset(&self) -> u8 {
        self.t
    }
    /// Every weight is 2: an XOR (or XNOR) of the inputs, decided with margin 1/4.
    pub fn is_xor_like(&self) -> bool {
        self.weights().iter().all(|&w| w == 2)
    }
    /// The decision margin: 1/4 for XOR-like cells, else 1/8.
    pub fn margin(&self) -> f64 {
        if self.is_xor_like() {
            0.25
        } else {
            0.125
        }
    }
    /// Σ wᵢ², the factor on the inputs' variance in the decision variance.
    pub fn sum_sq_weights(&self) -> f64 {
        self.weights()
            .iter()
            .map(|&w| f64::from(w) * f64::from(w))
            .sum()
    }
    /// The decision's noise in units of one margin-1/8 input: Σ wᵢ² (margin 1/8) or Σ wᵢ²/4 (XOR-like,
    /// margin 1/4). A two-input gate has 2.
    pub fn noise_weight(&self) -> f64 {
        if self.is_xor_like() {
            self.sum_sq_weights() / 4.0
        } else {
            self.sum_sq_weights()
        }
    }
    /// The cell's value on plain bits.
    pub fn eval(&self, bits: &[bool]) -> bool {
        let s: i32 = self
            .weights()
            .iter()
            .zip(bits)
            .map(|(&w, &b)| i32::from(w) * i32::from(b))
            .sum();
        (s + i32::from(self.t)).rem_euclid(4) < 2
    }
    /// The truth table: bit m is f(b) with bᵢ = bit i of m.
    pub fn truth_table(&self) -> u16 {
        let k = self.arity();
        let mut tt = 0u16;
        for m in 0..(1usize << k) {
            let bits: Vec<bool> = (0..k).map(|i| (m >> i) & 1 == 1).collect();
            if self.eval(&bits) {
                tt |= 1 << m;
            }
        }
        tt
    }
    /// The torus offset added to Σ wᵢ·xᵢ: (Σ wᵢ + 2t + 1)/8, plus 1/8 for XOR-like cells.
    fn torus_offset(&self) -> u32 {
        let sum: i64 = self.weights().iter().map(|&w| i64::from(w)).sum();
        let eighths = sum + 2 * i64::from(self.t) + 1 + i64::from(self.is_xor_like());
        (eighths.rem_euclid(8) as u32).wrapping_mul(MU)
    }
}

impl EvalKey {
    fn cell_linear(&self, spec: &CellSpec, inputs: &[&Bit]) -> Result<Tlwe<u32>, Error> {
        if inputs.len() != spec.arity() {
            return Err(Error::Dimension(format!(
                "a {}-input cell given {} inputs",
                spec.arity(),
                inputs.len()
            )));
        }
        for t in inputs {
            self.check0(t)?;
        }
        let terms: Vec<(i64, &Bit)> = spec
            .weights()
            .iter()
            .zip(inputs)
            .map(|(&w, &x)| (i64::from(w), x))
            .collect();
        Tlwe::linear(&terms, spec.torus_offset())
    }

    /// The level-0 sample a cell bootstraps (its phase is the decision; exposed for noise tests).
    pub fn cell_input(&self, spec: &CellSpec, inputs: &[&Bit]) -> Result<Tlwe<u32>, Error> {
        self.cell_linear(spec, inputs)
    }

    /// A multi-input cell, bootstrapped (blind rotation, sample extraction, key switch): a fresh bit.
    pub fn cell(&self, spec: &CellSpec, inputs: &[&Bit]) -> Result<Bit, Error> {
        let lin = self.cell_linear(spec, inputs)?;
        self.bootstrap(&lin)
    }

    /// A multi-input cell stopped after the blind rotation: a level-1 TRLWE whose constant
    /// coefficient is the result (±1/8), ready to be a CMUX data input; [`EvalKey::extract_bit`] of it
    /// equals [`EvalKey::cell`].
    pub fn cell_trlwe(&self, spec: &CellSpec, inputs: &[&Bit]) -> Result<Trlwe<u32>, Error> {
        let lin = self.cell_linear(spec, inputs)?;
        self.bootstrap_to_trlwe(&lin, MU)
    }
}

/// Every cell of `arity` inputs, one per distinct truth table, the one of least noise weight (ties:
/// the first in a fixed order), as `(truth table, spec)`; cells that do not depend on every input
/// are left out.
pub fn all_cells(arity: usize) -> Vec<(u16, CellSpec)> {
    use std::collections::BTreeMap;
    let mut best: BTreeMap<u16, CellSpec> = BTreeMap::new();
    if arity == 0 || arity > MAX_CELL_INPUTS {
        return Vec::new();
    }
    let choices = [-1i8, 1, 2];
    let combos = 3usize.pow(arity as u32);
    for code in 0..combos {
        let mut c = code;
        let w: Vec<i8> = (0..arity)
            .map(|_| {
                let x = choices[c % 3];
                c /= 3;
                x
            })
            .collect();
        for t in 0..4u8 {
            let Ok(spec) = CellSpec::new(&w, t) else {
                continue;
            };
            let tt = spec.truth_table();
            if !depends_on_all(tt, arity) {
                continue;
            }
            match best.get(&tt) {
                Some(b) if b.noise_weight() <= spec.noise_weight() => {}
                _ => {
                    best.insert(tt, spec);
                }
            }
        }
    }
    best.into_iter().collect()
}

/// Whether the truth table of `k` inputs depends on each of them.
pub fn depends_on_all(tt: u16, k: usize) -> bool {
    (0..k).all(|i| (0..(1usize << k)).any(|m| ((tt >> m) & 1) != ((tt >> (m ^ (1 << i))) & 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form against a brute force over every weight in −4..4, every offset and every
    /// negacyclic test polynomial on the four quarter points: the same functions at the same least
    /// noise weight, and AND3/OR3/MUX nowhere.
    #[test]
    fn cell_set_matches_exhaustive_enumeration() {
        for k in 1..=MAX_CELL_INPUTS {
            let mut brute: std::collections::BTreeMap<u16, f64> = Default::default();
            let n = 9usize.pow(k as u32);
            for code in 0..n {
                let mut c = code;
                let w: Vec<i32> = (0..k)
                    .map(|_| {
                        let x = (c % 9) as i32 - 4;
                        c /= 9;
                        x
                    })
                    .collect();
                if w.iter().all(|&x| x == 0) {
                    continue;
                }
                let even = w.iter().all(|x| x % 2 == 0);
                let cost: f64 =
                    w.iter().map(|&x| f64::from(x * x)).sum::<f64>() / if even { 4.0 } else { 1.0 };
                for t in 0..4 {
                    for g in 0..4u8 {
                        let gq = |q: i32| {
                            let (g0, g1) = (g & 1 == 1, g & 2 == 2);
                            match q {
                                0 => g0,
                                1 => g1,
                                2 => !g0,
                                _ => !g1,
                            }
                        };
                        let mut tt = 0u16;
                        for m in 0..(1usize << k) {
                            let s: i32 = (0..k).map(|i| w[i] * ((m >> i) & 1) as i32).sum();
                            if gq((s + t).rem_euclid(4)) {
                                tt |= 1 << m;
                            }
                        }
                        if depends_on_all(tt, k) {
                            let e = brute.entry(tt).or_insert(f64::INFINITY);
                            *e = e.min(cost);
                        }
                    }
                }
            }
            let ours: std::collections::BTreeMap<u16, f64> = all_cells(k)
                .into_iter()
                .map(|(tt, s)| (tt, s.noise_weight()))
                .collect();
            assert_eq!(ours, brute, "{k} inputs");
        }
        let three = all_cells(3);
        let has = |tt: u16| three.iter().any(|(t, _)| *t == tt);
        // Bit m of a truth table is f(a, b, c) with a = bit 0 of m.
        assert!(has(0xe8), "MAJ3");
        assert!(has(0x96), "XOR3");
        assert!(has(0x7e), "NAE3");
        assert!(!has(0x80), "AND3");
        assert!(!has(0xfe), "OR3");
        assert!(!has(0xe4) && !has(0xca) && !has(0xd8), "MUX");
        assert_eq!(three.len(), 42);
        assert_eq!(all_cells(4).len(), 146);
    }

    #[test]
    fn offsets_put_the_phase_mid_quarter() {
        for k in 1..=MAX_CELL_INPUTS {
            for (_, spec) in all_cells(k) {
                for m in 0..(1usize << k) {
                    let bits: Vec<bool> = (0..k).map(|i| (m >> i) & 1 == 1).collect();
                    // Noiseless phase in eighths: Σ w·(2b − 1) + 8·offset.
                    let s: i64 = spec
                        .weights()
                        .iter()
                        .zip(&bits)
                        .map(|(&w, &b)| i64::from(w) * if b { 1 } else { -1 })
                        .sum();
                    let phase = (s + i64::from(spec.torus_offset() / MU)).rem_euclid(8);
                    // The sign decides: (0, 1/2) is 1. Distance to 0 and 1/2 is the margin.
                    assert_eq!(phase < 4 && phase > 0, spec.eval(&bits), "{spec:?} {m}");
                    let dist = phase.min((phase - 4).abs()).min(8 - phase);
                    assert_eq!(dist as f64 / 8.0, spec.margin(), "{spec:?} {m}");
                }
            }
        }
    }
}
