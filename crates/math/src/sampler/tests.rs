//! Statistical tests of the samplers: mean, variance, tails and a chi-square goodness of fit against
//! the ideal distribution. Seeds are fixed, so the tests are deterministic; the acceptance limits are
//! those of a 10^-6 false-alarm rate, and a biased sampler (wrong σ, modulo bias, wrong sign
//! handling) fails them by orders of magnitude.

use super::*;
use crate::prng::{Seed, SeededStream};

/// Chi-square statistic of observed counts against expected probabilities (bins with tiny expected
/// counts are merged into the last bin).
fn chi_square(counts: &[u64], probs: &[f64], total: u64) -> (f64, usize) {
    let mut stat = 0.0;
    let mut df = 0usize;
    let (mut pool_obs, mut pool_exp) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        let e = p * total as f64;
        if e < 20.0 {
            pool_obs += c as f64;
            pool_exp += e;
            continue;
        }
        stat += (c as f64 - e).powi(2) / e;
        df += 1;
    }
    if pool_exp > 0.0 {
        stat += (pool_obs - pool_exp).powi(2) / pool_exp.max(1.0);
        df += 1;
    }
    (stat, df.saturating_sub(1))
}

/// Upper limit for a chi-square with `df` degrees of freedom at a ~10^-6 false-alarm rate
/// (Wilson–Hilferty approximation with z = 4.75).
fn chi_limit(df: usize) -> f64 {
    let k = df as f64;
    let z = 4.75;
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

fn stream() -> SeededStream {
    SeededStream::chacha20(&Seed::from_bytes([9u8; 32]), b"sampler-tests")
}

#[test]
fn uniform_is_unbiased() {
    let mut rng = stream();
    // q = 2^bits − small: a modulo-biased sampler would over-weight low values heavily.
    let q = Modulus::new(5).unwrap();
    let total = 200_000u64;
    let mut counts = [0u64; 5];
    for _ in 0..total {
        counts[uniform(&mut rng, &q) as usize] += 1;
    }
    let (stat, df) = chi_square(&counts, &[0.2; 5], total);
    assert!(stat < chi_limit(df), "chi2 {stat} df {df}");
    let big = Modulus::new((1 << 61) + (1 << 60)).unwrap();
    let v = uniform_vec(&mut rng, &big, 100_000);
    assert!(v.iter().all(|&x| x < big.value()));
    // Mean of U[0, q) is (q−1)/2; its standard error here is q/(√12·√n) ≈ q·9e−4.
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    assert!(
        (mean / big.value() as f64 - 0.5).abs() < 0.005,
        "mean {mean}"
    );
    for bound in [1u64, 2, 3, 1000] {
        assert!((0..100).all(|_| uniform_below(&mut rng, bound) < bound));
    }
}

#[test]
fn ternary_and_binary_are_uniform() {
    let mut rng = stream();
    let total = 300_000;
    let v = ternary_vec(&mut rng, total);
    let mut counts = [0u64; 3];
    for &x in &v {
        counts[(x + 1) as usize] += 1;
    }
    let (stat, df) = chi_square(&counts, &[1.0 / 3.0; 3], total as u64);
    assert!(stat < chi_limit(df), "chi2 {stat}");
    let mut c2 = [0u64; 3];
    for _ in 0..30_000 {
        c2[(ternary(&mut rng) + 1) as usize] += 1;
    }
    let (stat, df) = chi_square(&c2, &[1.0 / 3.0; 3], 30_000);
    assert!(stat < chi_limit(df), "chi2 {stat}");
    let b = binary_vec(&mut rng, 100_000);
    let ones = b.iter().filter(|&&x| x == 1).count() as u64;
    assert!(b.iter().all(|&x| x == 0 || x == 1));
    let (stat, df) = chi_square(&[100_000 - ones, ones], &[0.5, 0.5], 100_000);
    assert!(stat < chi_limit(df), "chi2 {stat}");
}

#[test]
fn hamming_weight_ternary_is_exact() {
    let mut rng = stream();
    let v = ternary_hamming_vec(&mut rng, 4096, 64).unwrap();
    assert_eq!(v.iter().filter(|&&x| x != 0).count(), 64);
    assert!(v.iter().all(|&x| (-1..=1).contains(&x)));
    // Positions are spread: each half of the vector holds some of the non-zeros.
    assert!(v[..2048].iter().any(|&x| x != 0) && v[2048..].iter().any(|&x| x != 0));
    assert!(ternary_hamming_vec(&mut rng, 10, 11).is_err());
    assert_eq!(
        ternary_hamming_vec(&mut rng, 5, 5)
            .unwrap()
            .iter()
            .filter(|&&x| x != 0)
            .count(),
        5
    );
}

fn binomial(n: u64, k: u64) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

#[test]
fn centered_binomial_matches_its_law() {
    let mut rng = stream();
    for eta in [2u32, 3, 21] {
        let total = 200_000;
        let v = centered_binomial_vec(&mut rng, eta, total).unwrap();
        let e = eta as i64;
        let mut counts = vec![0u64; 2 * eta as usize + 1];
        for &x in &v {
            assert!(x.abs() <= e);
            counts[(x + e) as usize] += 1;
        }
        // P(x = k) = C(2η, η + k) / 4^η.
        let probs: Vec<f64> = (-e..=e)
            .map(|k| binomial(2 * eta as u64, (e + k) as u64) / 4f64.powi(eta as i32))
            .collect();
        let (stat, df) = chi_square(&counts, &probs, total as u64);
        assert!(stat < chi_limit(df), "η={eta} chi2 {stat} df {df}");
        let mean = v.iter().sum::<i64>() as f64 / total as f64;
        let var = v.iter().map(|&x| (x * x) as f64).sum::<f64>() / total as f64 - mean * mean;
        assert!(
            mean.abs() < 5.0 * (eta as f64 / 2.0 / total as f64).sqrt(),
            "mean {mean}"
        );
        assert!((var / (eta as f64 / 2.0) - 1.0).abs() < 0.02, "var {var}");
    }
    assert!(centered_binomial(&mut rng, 0).is_err());
    assert!(centered_binomial(&mut rng, 33).is_err());
}

/// Checks samples against the discrete Gaussian of parameter `sigma` on [−bound, bound]: support,
/// χ² against the law, mean, standard deviation within 1 %, and (σ ≥ 3) the mass beyond 2σ within 5 %.
fn assert_discrete_gaussian(v: &[i64], sigma: f64, bound: i64, what: &str) {
    let total = v.len();
    let mut counts = vec![0u64; 2 * bound as usize + 1];
    for &x in v {
        assert!(x.abs() <= bound);
        counts[(x + bound) as usize] += 1;
    }
    let weights: Vec<f64> = (-bound..=bound)
        .map(|k| (-(k as f64).powi(2) / (2.0 * sigma * sigma)).exp())
        .collect();
    let norm: f64 = weights.iter().sum();
    let probs: Vec<f64> = weights.iter().map(|w| w / norm).collect();
    let (stat, df) = chi_square(&counts, &probs, total as u64);
    assert!(stat < chi_limit(df), "{what} chi2 {stat} df {df}");
    let mean = v.iter().sum::<i64>() as f64 / total as f64;
    let var = v.iter().map(|&x| (x * x) as f64).sum::<f64>() / total as f64 - mean * mean;
    assert!(
        mean.abs() < 5.0 * sigma / (total as f64).sqrt(),
        "{what} mean {mean}"
    );
    assert!(
        (var.sqrt() / sigma - 1.0).abs() < 0.01,
        "{what} std {}",
        var.sqrt()
    );
    // Tails: P(|x| > 2σ) ≈ 4.55 % for a continuous-like Gaussian (σ ≥ 3); check within 5 %.
    if sigma >= 3.0 {
        let beyond = v
            .iter()
            .filter(|&&x| (x as f64).abs() > 2.0 * sigma)
            .count() as f64
            / total as f64;
        let ideal: f64 = probs
            .iter()
            .zip(-bound..=bound)
            .filter(|(_, k)| (*k as f64).abs() > 2.0 * sigma)
            .map(|(p, _)| p)
            .sum();
        assert!(
            (beyond / ideal - 1.0).abs() < 0.05,
            "{what} tail {beyond} vs {ideal}"
        );
    }
}

#[test]
fn cdt_gaussian_matches_its_law() {
    let mut rng = stream();
    for (sigma, tau) in [(3.2f64, 6.0f64), (1.0, 10.0), (19.2, 9.5)] {
        let s = CdtSampler::new(sigma, tau).unwrap();
        let bound = s.bound();
        assert_eq!(bound, (sigma * tau).ceil() as i64);
        let v = s.sample_vec(&mut rng, 400_000);
        assert_discrete_gaussian(&v, sigma, bound, &format!("σ={sigma}"));
    }
}

/// Seed 001's Ziggurat sampler against the same law and limits as the CDT sampler, for several
/// rectangle counts (1 rectangle is plain rejection sampling; 64 is the default of vsp-bfv).
#[test]
fn ziggurat_gaussian_matches_its_law() {
    let mut rng = stream();
    for (sigma, tau, m) in [
        (3.2f64, 6.0f64, 64usize),
        (3.2, 6.0, 1),
        (3.2, 6.0, 7),
        (1.0, 10.0, 16),
        (19.2, 9.5, 256),
    ] {
        let s = ZigguratSampler::new(sigma, tau, m).unwrap();
        assert_eq!(s.rectangles(), m);
        let bound = s.bound();
        assert_eq!(bound, (sigma * tau).ceil() as i64);
        assert!(s.acceptance() > 0.0 && s.acceptance() <= 1.0);
        let v = s.sample_vec(&mut rng, 400_000);
        assert_discrete_gaussian(&v, sigma, bound, &format!("σ={sigma} m={m}"));
    }
    // More rectangles waste less area.
    let a1 = ZigguratSampler::new(3.2, 6.0, 1).unwrap().acceptance();
    let a64 = ZigguratSampler::new(3.2, 6.0, 64).unwrap().acceptance();
    assert!(
        a64 > 0.8 && a1 < 0.5,
        "acceptance {a1} (m = 1), {a64} (m = 64)"
    );
}

#[test]
fn ziggurat_rejects_bad_parameters() {
    assert!(ZigguratSampler::new(0.0, 6.0, 64).is_err());
    assert!(ZigguratSampler::new(f64::NAN, 6.0, 64).is_err());
    assert!(ZigguratSampler::new(3.2, 0.5, 64).is_err());
    assert!(ZigguratSampler::new(1e9, 6.0, 64).is_err());
    assert!(ZigguratSampler::new(3.2, 6.0, 0).is_err());
    assert!(ZigguratSampler::new(3.2, 6.0, 5000).is_err());
}

#[test]
fn cdt_rejects_bad_parameters() {
    assert!(CdtSampler::new(0.0, 6.0).is_err());
    assert!(CdtSampler::new(-1.0, 6.0).is_err());
    assert!(CdtSampler::new(f64::NAN, 6.0).is_err());
    assert!(CdtSampler::new(3.2, 0.5).is_err());
    assert!(CdtSampler::new(1e9, 6.0).is_err());
}

#[test]
fn residues_of_signed_values() {
    let q = Modulus::new(97).unwrap();
    let mut out = [0u64; 4];
    to_residues(&[-1, 0, 1, -97 * 3 - 5], &q, &mut out).unwrap();
    assert_eq!(out, [96, 0, 1, 92]);
    assert!(to_residues(&[1, 2], &q, &mut out).is_err());
}

#[test]
fn gaussian_f64_has_the_requested_moments() {
    let mut rng = stream();
    let sigma = 3.5;
    let n = 200_000;
    let xs: Vec<f64> = (0..n).map(|_| gaussian_f64(&mut rng, sigma)).collect();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    // Standard errors: sigma/sqrt(n) ≈ 0.008 for the mean, sigma²·sqrt(2/n) ≈ 0.04 for the variance.
    assert!(mean.abs() < 0.05, "mean {mean}");
    assert!((var - sigma * sigma).abs() < 0.25, "variance {var}");
    assert!(xs.iter().all(|x| x.is_finite()));
}
