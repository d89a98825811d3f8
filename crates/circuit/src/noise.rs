//! Noise model of the CMUX memory and the refresh policy that replaces Iyokan's every-cycle refresh.
//!
//! Variances are in squared torus units, from vsp-tfhe's formulas ([`vsp_tfhe::noise`]: CGGI16
//! Thm. 3.13/3.14 for the external product and blind rotation, CGGI17 Thm. 4.3 for private key
//! switching), which vsp-tfhe's `tests/noise.rs` checks against measurements.
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
//! demultiplexer's, 2·V_br + 2a·V_ext. The RAM's address TRGSWs use their own, finer gadget
//! (`Params::cb_ram`), so V_ext here is [`NoiseModel::v_ext_ram`] (1.9e-6 against the circuit's 7.0e-6
//! with the default parameters). The bound goes from v to max(v + a·V_ext, 2·V_br + 2a·V_ext). A word refreshed at the end of cycle t is decided (read
//! through the `a`-level tree, or refreshed) at most `K` cycles later with variance at most
//! bound_after(K) + V_ks + V_ms; `K` is the largest period keeping that under `V_lim = (1/4 / z)²`, where
//! `z` makes a Gaussian tail
//! (Mills-ratio bound `P(|X| > zσ) ≤ √(2/π)·e^(−z²/2)/z`) at most `p_cycle / decisions`; decisions per
//! cycle = every cell (refresh or carry) plus every read bit, so the union bound gives ≤ `p_cycle` per cycle.
//!
//! How tight (docs/encrypted-cycle.md, "How tight the RAM's bound is"): the bound is the worst case
//! over the encrypted addresses — a word written in the cycle after its refresh (every read-tree and
//! demultiplexer level with select 1, so every external product's gadget-rounding term arises; with
//! select 0 only the TRGSW-noise term does), then written around for K − 1 cycles at the address
//! that differs from it in the top bit only. A word that was never written sits V_br + a·V_ext_ram
//! below its tracked bound, which is the price of not knowing the address, not a model term the
//! ciphertexts lack: against the model of their own histories the worst-case unaddressed and the
//! written cells measure 0.95× and 0.98–0.99× (`tests/tfhe.rs`), one RAM-select CMUX 0.96×.

use vsp_tfhe::noise as tfhe_noise;
use vsp_tfhe::Params;

/// Variances of the operations the CMUX memory uses, for one parameter set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseModel {
    /// A fresh level-1 TRLWE encryption (client-side memory image).
    pub v_fresh: f64,
    /// Noise a TRGSW made by circuit bootstrapping carries.
    pub v_trgsw: f64,
    /// Noise one external product / CMUX with such a TRGSW adds.
    pub v_ext: f64,
    /// Noise one external product with a RAM address TRGSW (gadget `Params::cb_ram`) adds: what the
    /// RAM's read and write trees add per level.
    pub v_ext_ram: f64,
    /// Noise of a blind-rotation output (gate bootstrapping to TRLWE).
    pub v_br: f64,
    /// Noise the level-1 → level-0 key switch adds.
    pub v_ks: f64,
    /// Modulus-switching (rounding to 2N) error of a blind rotation's input, as a variance.
    pub v_ms: f64,
}

impl NoiseModel {
    /// The model of `p`, from vsp-tfhe's noise formulas ([`vsp_tfhe::noise`], the one source).
    ///
    /// Blind rotation charges each CMUX's rounding error with weight ½ (it only arises when the key bit
    /// is 1, half of a binary key's bits); vsp-tfhe's `tests/noise.rs` measures 0.98× that prediction,
    /// where charging it in full (as this module once did) overestimated the measurement by 1.28×.
    pub fn of(p: &Params) -> Self {
        let v_trgsw = tfhe_noise::cb_trgsw_var(p);
        NoiseModel {
            v_fresh: p.sigma1 * p.sigma1,
            v_trgsw,
            v_ext: tfhe_noise::cmux_add_var(p, v_trgsw),
            v_ext_ram: tfhe_noise::cmux_add_var_for(p, &p.cb_ram, v_trgsw),
            v_br: tfhe_noise::blind_rotate_var(p),
            v_ks: tfhe_noise::key_switch_var(p),
            // Rounding each of the n0 + 1 input coefficients to a multiple of 1/(2N).
            v_ms: tfhe_noise::mod_switch_var(p, p.n1, 1),
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
    /// errors ([`Self::v_ext_ram`]) of the demultiplexer; the addressed one becomes the write value (two blind rotations) with
    /// the errors of the read tree and of the demultiplexer.
    pub fn after_write(&self, v: f64, a: usize) -> f64 {
        let ext = a as f64 * self.v_ext_ram;
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
