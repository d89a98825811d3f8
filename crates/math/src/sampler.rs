//! Samplers for RLWE secrets, errors and masks: uniform mod q, binary, ternary (dense and fixed
//! Hamming weight), centered binomial, a discrete Gaussian (CDT, constant time with respect to the
//! output) and a continuous Gaussian on f64 ([`gaussian_f64`](crate::sampler::gaussian_f64), TFHE's
//! torus noise). Every sampler takes any [`RngCore`](rand_core::RngCore), so the same code draws
//! from the OS-seeded CSPRNG and
//! from a [`crate::prng::SeededStream`].
//!
//! The CDT sampler follows seed 004's "Gaussian PRNG" in software: a cumulative table with 64-bit
//! thresholds is scanned completely for every sample (no early exit, branch-free comparisons), so the
//! time taken does not depend on the value returned. Thresholds are computed in f64 from the tail
//! side, so each table entry is within about 2^-53 (relative) of the ideal tail mass.

use alloc::vec::Vec;
use rand_core::RngCore;

use crate::error::{MathError, Result};
use crate::modulus::Modulus;

/// A uniform f64 in (0, 1] from 53 random bits.
#[inline]
fn unit_open0<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 1.0) / 9_007_199_254_740_992.0
}

/// A centered normal sample of standard deviation `sigma` (Box–Muller, one sample per two draws):
/// TFHE's noise, a continuous Gaussian rounded to the torus grid by the caller (CGGI16 §2.1).
#[inline]
pub fn gaussian_f64<R: RngCore + ?Sized>(rng: &mut R, sigma: f64) -> f64 {
    let u1 = unit_open0(rng);
    let u2 = unit_open0(rng);
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2) * sigma
}

/// A uniform value in [0, q): draws ⌈log2 q⌉ bits and rejects values ≥ q (no modulo bias).
#[inline]
pub fn uniform<R: RngCore + ?Sized>(rng: &mut R, q: &Modulus) -> u64 {
    let mask = if q.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << q.bits()) - 1
    };
    loop {
        let x = rng.next_u64() & mask;
        if x < q.value() {
            return x;
        }
    }
}

/// A uniform value in [0, bound) for any bound ≥ 1 (rejection; 0 when bound ≤ 1).
#[inline]
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    if bound <= 1 {
        return 0;
    }
    let mask = u64::MAX >> (bound - 1).leading_zeros();
    loop {
        let x = rng.next_u64() & mask;
        if x < bound {
            return x;
        }
    }
}

/// Fills `out` with uniform values in [0, q).
pub fn fill_uniform<R: RngCore + ?Sized>(rng: &mut R, q: &Modulus, out: &mut [u64]) {
    for x in out.iter_mut() {
        *x = uniform(rng, q);
    }
}

/// `n` uniform values in [0, q).
pub fn uniform_vec<R: RngCore + ?Sized>(rng: &mut R, q: &Modulus, n: usize) -> Vec<u64> {
    let mut v = alloc::vec![0u64; n];
    fill_uniform(rng, q, &mut v);
    v
}

/// `n` uniform bits as 0/1.
pub fn binary_vec<R: RngCore + ?Sized>(rng: &mut R, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    let mut word = 0u64;
    for i in 0..n {
        if i % 64 == 0 {
            word = rng.next_u64();
        }
        out.push(((word >> (i % 64)) & 1) as i64);
    }
    out
}

/// One uniform value of {−1, 0, 1}. Rejects the fourth 2-bit pattern, which reveals nothing about
/// the accepted value.
#[inline]
pub fn ternary<R: RngCore + ?Sized>(rng: &mut R) -> i64 {
    loop {
        let mut word = rng.next_u64();
        for _ in 0..32 {
            let r = word & 3;
            if r < 3 {
                return r as i64 - 1;
            }
            word >>= 2;
        }
    }
}

/// `n` uniform ternary values.
pub fn ternary_vec<R: RngCore + ?Sized>(rng: &mut R, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    let mut word = 0u64;
    let mut left = 0;
    while out.len() < n {
        if left == 0 {
            word = rng.next_u64();
            left = 32;
        }
        let r = word & 3;
        word >>= 2;
        left -= 1;
        if r < 3 {
            out.push(r as i64 - 1);
        }
    }
    out
}

/// A ternary vector of length `n` with exactly `h` non-zero entries (random signs), as used by
/// sparse-secret CKKS/BFV parameter sets. Positions come from a partial Fisher–Yates shuffle.
pub fn ternary_hamming_vec<R: RngCore + ?Sized>(
    rng: &mut R,
    n: usize,
    h: usize,
) -> Result<Vec<i64>> {
    if h > n || n == 0 {
        return Err(MathError::InvalidSamplerParameter(
            "Hamming weight must be at most the length",
        ));
    }
    let mut positions: Vec<usize> = (0..n).collect();
    let mut out = alloc::vec![0i64; n];
    for i in 0..h {
        let j = i + uniform_below(rng, (n - i) as u64) as usize;
        positions.swap(i, j);
        let sign = (rng.next_u32() & 1) as i64;
        out[positions[i]] = 1 - 2 * sign;
    }
    Ok(out)
}

/// Centered binomial with parameter η: Σ_{i<η} (a_i − b_i) for uniform bits, in [−η, η],
/// variance η/2. η must be in 1..=32.
pub fn centered_binomial<R: RngCore + ?Sized>(rng: &mut R, eta: u32) -> Result<i64> {
    if !(1..=32).contains(&eta) {
        return Err(MathError::InvalidSamplerParameter(
            "centered binomial η must be in 1..=32",
        ));
    }
    Ok(cbd_one(rng, eta))
}

#[inline]
fn cbd_one<R: RngCore + ?Sized>(rng: &mut R, eta: u32) -> i64 {
    let mask = if eta == 32 {
        u32::MAX as u64
    } else {
        (1u64 << eta) - 1
    };
    let w = rng.next_u64();
    (w & mask).count_ones() as i64 - ((w >> 32) & mask).count_ones() as i64
}

/// `n` centered-binomial values with parameter η ∈ 1..=32.
pub fn centered_binomial_vec<R: RngCore + ?Sized>(
    rng: &mut R,
    eta: u32,
    n: usize,
) -> Result<Vec<i64>> {
    centered_binomial(rng, eta)?;
    Ok((0..n).map(|_| cbd_one(rng, eta)).collect())
}

/// Writes the residues of signed values mod q into `out` (lengths must match).
pub fn to_residues(values: &[i64], q: &Modulus, out: &mut [u64]) -> Result<()> {
    if values.len() != out.len() {
        return Err(MathError::LengthMismatch {
            what: "residue output",
            expected: values.len(),
            got: out.len(),
        });
    }
    for (o, &v) in out.iter_mut().zip(values) {
        *o = q.reduce_i64(v);
    }
    Ok(())
}

/// Checks a Gaussian's σ (positive, finite) and tail cut τ (finite, ≥ 1).
fn check_gaussian(sigma: f64, tail_cut: f64) -> Result<()> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(MathError::InvalidSamplerParameter(
            "σ must be positive and finite",
        ));
    }
    if !(tail_cut.is_finite() && tail_cut >= 1.0) {
        return Err(MathError::InvalidSamplerParameter(
            "tail cut must be finite and at least 1",
        ));
    }
    Ok(())
}

/// ⌈τσ⌉, the largest magnitude a sampler returns; at most [`CdtSampler::MAX_BOUND`].
fn tail_bound(sigma: f64, tail_cut: f64) -> Result<i64> {
    let bound_f = libm::ceil(sigma * tail_cut);
    if bound_f > CdtSampler::MAX_BOUND as f64 {
        return Err(MathError::InvalidSamplerParameter(
            "σ·tail cut exceeds 2^15",
        ));
    }
    Ok(bound_f as i64)
}

/// Discrete Gaussian D_{Z,σ} restricted to [−⌈τσ⌉, ⌈τσ⌉], sampled by a full scan of a cumulative
/// distribution table (constant time in the returned value).
#[derive(Clone, Debug, PartialEq)]
pub struct CdtSampler {
    sigma: f64,
    bound: i64,
    /// thresholds[i] = 2^64 − round(2^64 · P(|x| > i)), i = 0 … bound−1.
    thresholds: Vec<u64>,
}

impl CdtSampler {
    /// Largest supported bound ⌈τσ⌉ (keeps the table at most 256 KiB).
    pub const MAX_BOUND: i64 = 1 << 15;

    /// A sampler with standard deviation σ > 0 and tail cut τ ≥ 1 (values beyond ⌈τσ⌉ never occur).
    /// SEAL uses σ = 3.2 with τ = 6 (bound 19); τ ≥ 9.2 makes the cut mass below 2^-64.
    pub fn new(sigma: f64, tail_cut: f64) -> Result<Self> {
        check_gaussian(sigma, tail_cut)?;
        let bound = tail_bound(sigma, tail_cut)?;
        let weight = |k: i64| {
            let x = k as f64 / sigma;
            let w = libm::exp(-0.5 * x * x);
            if k == 0 {
                w
            } else {
                2.0 * w
            }
        };
        // Tail sums from the far end keep relative precision where the masses are tiny.
        let mut tails = alloc::vec![0f64; bound as usize + 1];
        let mut acc = 0.0;
        for k in (0..=bound).rev() {
            tails[k as usize] = acc; // mass of |x| > k
            acc += weight(k);
        }
        let total = acc;
        let two64 = 18_446_744_073_709_551_616.0f64;
        // Entries whose tail mass rounds to 0 can never be reached and are dropped (their total mass
        // is below 2^-64 per entry); the scan length stays fixed for a given (σ, τ).
        let thresholds = tails[..bound as usize]
            .iter()
            .map(|&t| libm::round(t / total * two64))
            .take_while(|&scaled| scaled >= 1.0)
            .map(|scaled| {
                if scaled >= two64 {
                    0
                } else {
                    0u64.wrapping_sub(scaled as u64)
                }
            })
            .collect();
        Ok(Self {
            sigma,
            bound,
            thresholds,
        })
    }

    /// The standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The largest |x| the sampler returns.
    pub fn bound(&self) -> i64 {
        self.bound
    }

    /// One sample. Reads two 64-bit words; the work done is independent of the value returned.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        let r = rng.next_u64();
        let sign_word = rng.next_u64();
        let mut magnitude = 0i64;
        for &t in &self.thresholds {
            // r ≥ t ⇔ no borrow; added without a branch.
            let (_, borrow) = r.overflowing_sub(t);
            magnitude += 1 - borrow as i64;
        }
        let mask = -((sign_word & 1) as i64);
        (magnitude ^ mask) - mask
    }

    /// Fills `out` with samples.
    pub fn fill<R: RngCore + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        for x in out.iter_mut() {
            *x = self.sample(rng);
        }
    }

    /// `n` samples.
    pub fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<i64> {
        let mut v = alloc::vec![0i64; n];
        self.fill(rng, &mut v);
        v
    }
}

/// The discrete Ziggurat sampler of D_{Z,σ} cut at ⌈τσ⌉ (Buchmann, Cabarcas, Göpfert, Hülsing,
/// Weiden, "Discrete Ziggurat: a time-memory trade-off for sampling from a Gaussian distribution
/// over the integers", SAC 2013): the Gaussian sampler seed 001 uses for textbook FV.
///
/// The positive half {0, …, B} of ρ(x) = exp(−x²/2σ²) is covered by m rectangles of *equal* area,
/// R_i = {0, …, x_i} × [y_i, y_{i−1}] with y_m = 0, x_m = B, and x_{i−1} = max{x : ρ(x) ≥ y_{i−1}}.
/// A sample picks a rectangle uniformly, x uniformly in it and a sign; x ≤ x_{i−1} lies under the
/// curve and is returned at once, otherwise a uniform y in the band is compared with ρ(x). Because
/// the areas are equal, the accepted points are uniform under the curve: the output is exactly the
/// cut discrete Gaussian (up to f64 rounding of ρ, ~2^-53). Zero is kept with probability 1/2
/// (both signs map to it). Not constant-time: use [`CdtSampler`] where timing matters.
#[derive(Clone, Debug)]
pub struct ZigguratSampler {
    sigma: f64,
    bound: i64,
    /// x_0 … x_m (x_0 = −1 when the top rectangle has no part fully under the curve).
    xs: Vec<i64>,
    /// y_0 … y_m (y_0 ≥ 1 = ρ(0), y_m = 0).
    ys: Vec<f64>,
}

impl ZigguratSampler {
    /// Most rectangles accepted.
    pub const MAX_RECTANGLES: usize = 4096;

    /// A sampler of standard deviation σ cut at ⌈τσ⌉ with m rectangles (1 ≤ m ≤ 4096; more
    /// rectangles, fewer ρ evaluations and rejections, more memory).
    pub fn new(sigma: f64, tail_cut: f64, rectangles: usize) -> Result<Self> {
        check_gaussian(sigma, tail_cut)?;
        if !(1..=Self::MAX_RECTANGLES).contains(&rectangles) {
            return Err(MathError::InvalidSamplerParameter(
                "Ziggurat needs 1 to 4096 rectangles",
            ));
        }
        let bound = tail_bound(sigma, tail_cut)?;
        let m = rectangles;
        // Bisection for (nearly) the smallest common area whose stack of m rectangles reaches
        // ρ(0) = 1 exactly at the top one: less area above the curve, fewer rejections.
        let mut lo = 0.0f64; // too small: the stack stays below 1
        let mut hi = (bound + 1) as f64 + 1.0; // too big: a lower rectangle already passes 1
        let mut best = None;
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            match Self::build(sigma, bound, m, mid) {
                Ok(z) => {
                    hi = mid;
                    best = Some(z);
                }
                Err(true) => hi = mid,
                Err(false) => lo = mid,
            }
        }
        best.ok_or(MathError::InvalidSamplerParameter(
            "Ziggurat construction failed",
        ))
    }

    /// ρ(x) = exp(−x²/2σ²).
    #[inline]
    fn rho(sigma: f64, x: i64) -> f64 {
        let t = x as f64 / sigma;
        libm::exp(-0.5 * t * t)
    }

    /// The stack of m rectangles of area `area` from the bottom, if its top reaches 1 with every
    /// lower edge y_1 … y_m at most 1; otherwise Err(true) when the area is too big (a lower edge
    /// passes 1) and Err(false) when it is too small (the top stays below 1).
    fn build(sigma: f64, bound: i64, m: usize, area: f64) -> core::result::Result<Self, bool> {
        let mut xs = alloc::vec![0i64; m + 1];
        let mut ys = alloc::vec![0f64; m + 1];
        xs[m] = bound;
        ys[m] = 0.0;
        for i in (1..=m).rev() {
            if ys[i] > 1.0 || xs[i] < 0 {
                return Err(true);
            }
            let y = ys[i] + area / (xs[i] + 1) as f64;
            ys[i - 1] = y;
            // x_{i−1} = max{x ≤ x_i : ρ(x) ≥ y}, or −1.
            let mut x = xs[i];
            while x >= 0 && Self::rho(sigma, x) < y {
                x -= 1;
            }
            xs[i - 1] = x;
        }
        if ys[0] >= 1.0 {
            Ok(Self {
                sigma,
                bound,
                xs,
                ys,
            })
        } else {
            Err(false)
        }
    }

    /// The standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The largest |x| the sampler returns.
    pub fn bound(&self) -> i64 {
        self.bound
    }

    /// The number of rectangles m.
    pub fn rectangles(&self) -> usize {
        self.xs.len() - 1
    }

    /// The fraction of proposals accepted: (mass under the cut half-curve, zero counted once per
    /// sign) over the m rectangles' total area.
    pub fn acceptance(&self) -> f64 {
        let m = self.rectangles();
        let area = (self.ys[m - 1] - self.ys[m]) * (self.xs[m] + 1) as f64;
        let under: f64 = (0..=self.bound)
            .map(|x| Self::rho(self.sigma, x))
            .sum::<f64>()
            - 0.5;
        under / (m as f64 * area)
    }

    /// One sample.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        let m = self.rectangles() as u64;
        loop {
            let i = 1 + uniform_below(rng, m) as usize;
            let w = rng.next_u64();
            let negative = w & 1 == 1;
            let x = uniform_below(rng, self.xs[i] as u64 + 1) as i64;
            if x == 0 && negative {
                continue;
            }
            let accept = x <= self.xs[i - 1] || {
                let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                let y = self.ys[i] + u * (self.ys[i - 1] - self.ys[i]);
                y <= Self::rho(self.sigma, x)
            };
            if accept {
                return if negative { -x } else { x };
            }
        }
    }

    /// Fills `out` with samples.
    pub fn fill<R: RngCore + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        for x in out.iter_mut() {
            *x = self.sample(rng);
        }
    }

    /// `n` samples.
    pub fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<i64> {
        let mut v = alloc::vec![0i64; n];
        self.fill(rng, &mut v);
        v
    }
}

#[cfg(test)]
mod tests;
