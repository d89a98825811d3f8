//! Samplers for keys, masks and errors, drawn from vsp-math's samplers: uniform residues, uniform
//! ternary secrets, the centered binomial distribution and the CDT discrete Gaussian (seed 004's
//! error sampler). Masks come from ChaCha20 streams, so a 32-byte seed reproduces them exactly.

use crate::arith::Modulus;
use rand::RngCore;
use std::sync::{Arc, Mutex};
use vsp_math::sampler;

/// Distribution of the encryption errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ErrorDistribution {
    /// Centered binomial with parameter eta ∈ 1..=32 (variance eta/2); eta = 21 gives σ ≈ 3.24.
    Cbd {
        /// Number of coin pairs.
        eta: u32,
    },
    /// Discrete Gaussian of standard deviation sigma, cut at 6σ (the HE standard's σ = 3.2), drawn
    /// by the constant-time CDT sampler (seed 004).
    Gaussian {
        /// Standard deviation.
        sigma: f64,
    },
    /// The same discrete Gaussian (cut at 6σ) drawn by the discrete Ziggurat sampler with 64
    /// rectangles (seed 001's sampler; faster, not constant-time).
    Ziggurat {
        /// Standard deviation.
        sigma: f64,
    },
}

/// Rectangles of the Ziggurat error sampler.
pub const ZIGGURAT_RECTANGLES: usize = 64;

/// Ziggurat tables are built once per σ (a few thousand exp evaluations) and shared.
fn ziggurat(sigma: f64) -> Option<Arc<sampler::ZigguratSampler>> {
    static CACHE: Mutex<Vec<(u64, Arc<sampler::ZigguratSampler>)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, z)) = cache.iter().find(|(b, _)| *b == sigma.to_bits()) {
        return Some(z.clone());
    }
    let z = Arc::new(sampler::ZigguratSampler::new(sigma, 6.0, ZIGGURAT_RECTANGLES).ok()?);
    if cache.len() >= 8 {
        cache.remove(0);
    }
    cache.push((sigma.to_bits(), z.clone()));
    Some(z)
}

impl Default for ErrorDistribution {
    fn default() -> Self {
        ErrorDistribution::Cbd { eta: 21 }
    }
}

impl ErrorDistribution {
    /// Checks the distribution's parameter.
    pub fn validate(&self) -> crate::Result<()> {
        let ok = match *self {
            ErrorDistribution::Cbd { eta } => (1..=32).contains(&eta),
            ErrorDistribution::Gaussian { sigma } => sampler::CdtSampler::new(sigma, 6.0).is_ok(),
            ErrorDistribution::Ziggurat { sigma } => ziggurat(sigma).is_some(),
        };
        if ok {
            Ok(())
        } else {
            Err(crate::Error::InvalidParameters(format!(
                "error distribution {self:?} out of range"
            )))
        }
    }

    /// Largest absolute value a sample can take.
    pub fn bound(&self) -> u64 {
        match *self {
            ErrorDistribution::Cbd { eta } => eta as u64,
            ErrorDistribution::Gaussian { sigma } | ErrorDistribution::Ziggurat { sigma } => {
                (6.0 * sigma).ceil() as u64
            }
        }
    }

    /// n samples as signed integers (an unvalidated distribution yields zeros; parameters validate
    /// it at construction).
    pub fn sample_vec<R: RngCore + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<i64> {
        match *self {
            ErrorDistribution::Cbd { eta } => {
                sampler::centered_binomial_vec(rng, eta, n).unwrap_or_else(|_| vec![0; n])
            }
            ErrorDistribution::Gaussian { sigma } => match sampler::CdtSampler::new(sigma, 6.0) {
                Ok(s) => s.sample_vec(rng, n),
                Err(_) => vec![0; n],
            },
            ErrorDistribution::Ziggurat { sigma } => match ziggurat(sigma) {
                Some(z) => z.sample_vec(rng, n),
                None => vec![0; n],
            },
        }
    }
}

/// Uniform ternary vector in {−1, 0, 1}.
pub fn ternary<R: RngCore + ?Sized>(n: usize, rng: &mut R) -> Vec<i64> {
    sampler::ternary_vec(rng, n)
}

/// Fills `out` with uniform residues modulo m.
pub fn uniform_into<R: RngCore + ?Sized>(m: &Modulus, out: &mut [u64], rng: &mut R) {
    for x in out.iter_mut() {
        *x = sampler::uniform_below(rng, m.value());
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
        for d in [
            ErrorDistribution::Cbd { eta: 21 },
            ErrorDistribution::Gaussian { sigma: 3.2 },
            ErrorDistribution::Ziggurat { sigma: 3.2 },
        ] {
            let v = d.sample_vec(40_000, &mut rng);
            let mean = v.iter().sum::<i64>() as f64 / v.len() as f64;
            let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
            assert!(mean.abs() < 0.1, "{d:?} mean {mean}");
            assert!(
                (var.sqrt() - 3.2).abs() < 0.15,
                "{d:?} sigma {}",
                var.sqrt()
            );
            assert!(v.iter().all(|x| x.unsigned_abs() <= d.bound()));
        }
        let t = ternary(30_000, &mut rng);
        for val in -1..=1 {
            let c = t.iter().filter(|&&x| x == val).count();
            assert!((9_000..11_000).contains(&c));
        }
    }
}
