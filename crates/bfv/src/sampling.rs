//! Samplers for keys, masks and errors: uniform residues (rejection sampling), uniform ternary secrets,
//! the centered binomial distribution and a rounded Gaussian (seed 004's error sampler), all drawn from
//! ChaCha20 streams so that a 32-byte seed reproduces a mask exactly.

use crate::arith::Modulus;
use rand::{Rng, RngCore};

/// Distribution of the encryption errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ErrorDistribution {
    /// Centered binomial with parameter eta (variance eta/2); eta = 21 gives σ ≈ 3.24.
    Cbd {
        /// Number of coin pairs.
        eta: u32,
    },
    /// Rounded Gaussian of standard deviation sigma, clipped at 6σ (the HE standard's σ = 3.2).
    Gaussian {
        /// Standard deviation.
        sigma: f64,
    },
}

impl Default for ErrorDistribution {
    fn default() -> Self {
        ErrorDistribution::Cbd { eta: 21 }
    }
}

impl ErrorDistribution {
    /// Largest absolute value a sample can take.
    pub fn bound(&self) -> u64 {
        match *self {
            ErrorDistribution::Cbd { eta } => eta as u64,
            ErrorDistribution::Gaussian { sigma } => (6.0 * sigma).ceil() as u64,
        }
    }

    /// One sample.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        match *self {
            ErrorDistribution::Cbd { eta } => {
                let mut s = 0i64;
                let mut left = eta;
                while left > 0 {
                    let take = left.min(32);
                    let mask = if take == 32 { u32::MAX } else { (1u32 << take) - 1 };
                    let a = rng.next_u32() & mask;
                    let b = rng.next_u32() & mask;
                    s += a.count_ones() as i64 - b.count_ones() as i64;
                    left -= take;
                }
                s
            }
            ErrorDistribution::Gaussian { sigma } => {
                let bound = 6.0 * sigma;
                loop {
                    // Box–Muller; the second variate is dropped to keep the stream simple.
                    let u1: f64 = rng.gen::<f64>().max(f64::MIN_POSITIVE);
                    let u2: f64 = rng.gen();
                    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * core::f64::consts::PI * u2).cos() * sigma;
                    if z.abs() <= bound {
                        return z.round() as i64;
                    }
                }
            }
        }
    }

    /// n samples as signed integers.
    pub fn sample_vec<R: RngCore + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<i64> {
        (0..n).map(|_| self.sample(rng)).collect()
    }
}

/// Uniform ternary vector in {−1, 0, 1}.
pub fn ternary<R: RngCore + ?Sized>(n: usize, rng: &mut R) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let w = rng.next_u64();
        // 2 bits per trial, value 3 rejected: exactly uniform.
        for k in 0..32 {
            if out.len() == n {
                break;
            }
            let v = (w >> (2 * k)) & 3;
            if v < 3 {
                out.push(v as i64 - 1);
            }
        }
    }
    out
}

/// Fills `out` with uniform residues modulo m (rejection sampling on 64-bit words).
pub fn uniform_into<R: RngCore + ?Sized>(m: &Modulus, out: &mut [u64], rng: &mut R) {
    let q = m.value();
    let limit = u64::MAX - (u64::MAX % q) - 1;
    for x in out.iter_mut() {
        loop {
            let v = rng.next_u64();
            if v <= limit {
                *x = v % q;
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn cbd_and_gaussian_have_expected_variance() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for d in [ErrorDistribution::Cbd { eta: 21 }, ErrorDistribution::Gaussian { sigma: 3.2 }] {
            let v = d.sample_vec(40_000, &mut rng);
            let mean = v.iter().sum::<i64>() as f64 / v.len() as f64;
            let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
            assert!(mean.abs() < 0.1, "{d:?} mean {mean}");
            assert!((var.sqrt() - 3.2).abs() < 0.15, "{d:?} sigma {}", var.sqrt());
            assert!(v.iter().all(|x| x.unsigned_abs() <= d.bound()));
        }
        let t = ternary(30_000, &mut rng);
        for val in -1..=1 {
            let c = t.iter().filter(|&&x| x == val).count();
            assert!((9_000..11_000).contains(&c));
        }
    }
}
