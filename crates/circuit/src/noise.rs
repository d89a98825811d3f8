//! Noise model of the CMUX memory and the refresh policy that replaces Iyokan's every-cycle refresh.
//!
//! Variances are in squared torus units, computed from the parameter set with the standard TFHE
//! formulas (CGGI16 Thm. 3.13/3.14 for the external product and blind rotation, CGGI17 Thm. 4.3 for private
//! key switching). Digits are balanced, so a digit in base Bg has variance (Bg² + 2)/12; a ternary key
//! coefficient has E[s²] = 2/3, a binary one 1/2. Every estimate rounds *up* (e.g. the key switch is
//! charged per digit magnitude) so the derived refresh period is conservative.
//!
//! RAM cells store bit b as ±1/4 in coefficient 0 of a level-1 TRLWE ("wide" encoding: twice the gate
//! encoding's distance, four times its variance budget). A cell is read through an `a`-level CMUX tree,
//! sample-extracted, key-switched and gate-bootstrapped (sign → fresh ±1/8 gate bit), and is refreshed by
//! extraction, key switch and a blind rotation back to a ±1/4 TRLWE. Every decision is correct when the
//! total error is below 1/4. Each cycle every cell receives one demultiplexed write: the change δ = v − r
//! (write value minus the stored bit r as read by the `a`-level CMUX tree) goes down an `a`-level tree of
//! external products and is added to every cell, so every cell's variance grows each cycle whether or not
//! it was written. An unaddressed cell gains `a` external-product errors (v → v + a·V_ext); the addressed
//! cell becomes the fresh write value (two blind rotations) minus the read tree's errors plus the
//! demultiplexer's, 2·V_br + 2a·V_ext. The bound goes from v to max(v + a·V_ext, 2·V_br + 2a·V_ext). A word refreshed at the end of cycle t is decided (read
//! through the `a`-level tree, or refreshed) at most `K` cycles later with variance at most
//! bound_after(K) + V_ks + V_ms; `K` is the largest period keeping that under `V_lim = (1/4 / z)²`, where
//! `z` makes a Gaussian tail
//! (Mills-ratio bound `P(|X| > zσ) ≤ √(2/π)·e^(−z²/2)/z`) at most `p_cycle / decisions`; decisions per
//! cycle = every cell (refresh or carry) plus every read bit, so the union bound gives ≤ `p_cycle` per cycle.

use vsp_tfhe::{Gadget, KeyDist, Params};

fn digit_var(g: Gadget) -> f64 {
    let bg = (1u64 << g.base_bits) as f64;
    (bg * bg + 2.0) / 12.0
}

fn key_sq(k: KeyDist) -> f64 {
    match k {
        KeyDist::Binary => 0.5,
        KeyDist::Ternary => 2.0 / 3.0,
    }
}

/// Rounding variance of a gadget decomposition that keeps `levels·base_bits` bits.
fn precision_var(g: Gadget) -> f64 {
    let eps = 2f64.powi(-((g.levels * g.base_bits) as i32));
    eps * eps / 12.0
}

/// Variances of the operations the CMUX memory uses, for one parameter set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseModel {
    /// A fresh level-1 TRLWE encryption (client-side memory image).
    pub v_fresh: f64,
    /// Noise a TRGSW made by circuit bootstrapping carries.
    pub v_trgsw: f64,
    /// Noise one external product / CMUX with such a TRGSW adds.
    pub v_ext: f64,
    /// Noise of a blind-rotation output (gate bootstrapping to TRLWE).
    pub v_br: f64,
    /// Noise the level-1 → level-0 key switch adds.
    pub v_ks: f64,
    /// Modulus-switching (rounding to 2N) error of a blind rotation's input, as a variance.
    pub v_ms: f64,
}

impl NoiseModel {
    /// The model of `p`.
    pub fn of(p: &Params) -> Self {
        let (n0, n1, n2) = (p.n0 as f64, p.n1 as f64, p.n2 as f64);
        let s1 = key_sq(p.key1);
        let s2 = key_sq(p.key2);
        // Level-2 blind rotation (inside circuit bootstrapping): n0 CMUXes at level 2.
        let v_br2 = n0
            * (2.0 * f64::from(p.bk2.levels) * n2 * digit_var(p.bk2) * p.sigma2 * p.sigma2
                + (1.0 + n2 * s2) * precision_var(p.bk2));
        // Private key switching level 2 → level 1: (N2 + 1)·t key entries scaled by digits, plus rounding.
        let v_privks =
            (n2 + 1.0) * f64::from(p.privks.levels) * digit_var(p.privks) * p.sigma1 * p.sigma1
                + (n2 * s2 + 1.0) * precision_var(p.privks);
        let v_trgsw = v_privks + v_br2;
        let v_ext = 2.0 * f64::from(p.cb.levels) * n1 * digit_var(p.cb) * v_trgsw
            + (1.0 + n1 * s1) * precision_var(p.cb);
        let v_br = n0
            * (2.0 * f64::from(p.bk1.levels) * n1 * digit_var(p.bk1) * p.sigma1 * p.sigma1
                + (1.0 + n1 * s1) * precision_var(p.bk1));
        let v_ks = n1 * f64::from(p.ks.levels) * digit_var(p.ks) * p.sigma0 * p.sigma0
            + n1 * s1 * precision_var(p.ks);
        // Rounding each of n0 + 1 coefficients to a multiple of 1/(2N): uniform error, variance 1/(12·(2N)²);
        // the level-0 key is binary (half the coefficients count on average).
        let v_ms = (n0 * 0.5 + 1.0) / (12.0 * (2.0 * n1) * (2.0 * n1));
        NoiseModel {
            v_fresh: p.sigma1 * p.sigma1,
            v_trgsw,
            v_ext,
            v_br,
            v_ks,
            v_ms,
        }
    }

    /// The `z` with `√(2/π)·e^(−z²/2)/z ≤ p` (Gaussian two-sided tail bound), by bisection.
    pub fn z_for(p: f64) -> f64 {
        let tail = |z: f64| (2.0 / std::f64::consts::PI).sqrt() * (-z * z / 2.0).exp() / z;
        let (mut lo, mut hi) = (1.0f64, 64.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if tail(mid) > p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }

    /// A word's variance bound after one write cycle: an unaddressed cell gains the `a` external-product
    /// errors of the demultiplexer; the addressed one becomes the write value (two blind rotations) with
    /// the errors of the read tree and of the demultiplexer.
    pub fn after_write(&self, v: f64, a: usize) -> f64 {
        let ext = a as f64 * self.v_ext;
        (v + ext).max(2.0 * self.v_br + 2.0 * ext)
    }

    /// The variance bound of a word `k` write cycles after its refresh.
    pub fn bound_after(&self, a: usize, k: u64) -> f64 {
        let mut v = self.after_refresh();
        for _ in 0..k.min(1 << 20) {
            v = self.after_write(v, a);
        }
        v
    }

    /// The largest refresh period K (cycles) keeping the per-cycle failure probability of a RAM of
    /// `2^a × w` bits at most `2^failure_log2`; `None` if even refreshing every cycle is not enough.
    pub fn refresh_period(&self, a: usize, w: usize, failure_log2: f64) -> Option<u64> {
        let cells = (1u64 << a) as f64 * w as f64;
        let decisions = cells + w as f64;
        let z = Self::z_for(2f64.powf(failure_log2) / decisions);
        let v_lim = (0.25 / z) * (0.25 / z);
        // A word refreshed every K cycles is decided (refresh input, or a read through the tree, which
        // adds at most what one more write adds) with variance at most bound_after(K) + KS + MS.
        let fixed = self.v_ks + self.v_ms;
        let mut k = 0u64;
        while k < 1 << 20 && self.bound_after(a, k + 1) + fixed <= v_lim {
            k += 1;
        }
        (k >= 1).then_some(k)
    }

    /// Variance of a word's cells right after a refresh.
    pub fn after_refresh(&self) -> f64 {
        self.v_br
    }

    /// log2 of the per-cycle failure probability bound of a RAM whose worst cell variance at its next
    /// decision is `v_cell` (union bound over all cells and read bits).
    pub fn failure_log2(&self, a: usize, w: usize, v_cell: f64) -> f64 {
        let decisions = (1u64 << a) as f64 * w as f64 + w as f64;
        let _ = a;
        let v = v_cell + self.v_ks + self.v_ms;
        let z = 0.25 / v.sqrt();
        let tail = (2.0 / std::f64::consts::PI).sqrt() * (-z * z / 2.0).exp() / z;
        (decisions * tail).log2()
    }
}

/// When the CMUX RAM refreshes its cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RefreshPolicy {
    /// Every cell every cycle (Iyokan's design; the baseline of the benchmark).
    EveryCycle,
    /// Round-robin: `ceil(words / K)` words per cycle with K from [`NoiseModel::refresh_period`] for the
    /// given per-cycle failure probability (log2), plus any word whose tracked variance bound would exceed
    /// the limit.
    NoiseBudget { failure_log2: f64 },
}

impl Default for RefreshPolicy {
    fn default() -> Self {
        RefreshPolicy::NoiseBudget {
            failure_log2: -40.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_parameters_allow_a_long_refresh_period() {
        let m = NoiseModel::of(&Params::default_128());
        let k = m.refresh_period(8, 16, -40.0).unwrap();
        println!("K = {k}, model {m:?}");
        assert!(k >= 5, "K = {k}, model {m:?}");
        // Refreshing at period K keeps the bound below 2^-40; K + 3 would not.
        assert!(m.failure_log2(8, 16, m.bound_after(8, k)) <= -40.0);
        assert!(m.failure_log2(8, 16, m.bound_after(8, k + 3)) > -40.0);
        let z = NoiseModel::z_for(2f64.powi(-52));
        assert!((8.0..8.5).contains(&z), "{z}");
    }
}
