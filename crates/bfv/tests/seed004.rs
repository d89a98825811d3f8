//! Seed 004 (BFV encryption accelerator with an integrated Gaussian PRNG, N = 1024): BFV at
//! N = 1024 with SEAL's 128-bit modulus (one 27-bit prime, 132120577) and the discrete Gaussian
//! (σ = 3.2, cut at 6σ) as the error distribution instead of the default CBD. Checks that public- and
//! secret-key encryptions decrypt, and that the errors are what the Gaussian says: the sampled error
//! of secret-key encryptions fits the discrete Gaussian (χ² test over 20 480 samples, fixed seed), and
//! the public-key error has the predicted variance σ²(1 + 4N/3).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;
use vsp_bfv::*;

mod common;

const N: usize = 1024;
const T: u64 = 12289; // prime, ≡ 1 mod 2048: batching; SEAL accepts it at N = 1024 too.
const SIGMA: f64 = 3.2;

fn params() -> Arc<BfvParameters> {
    BfvParameters::builder()
        .degree(N)
        .plaintext_modulus(T)
        .moduli(&[132120577])
        .error_distribution(ErrorDistribution::Gaussian { sigma: SIGMA })
        .build()
        .unwrap()
}

#[test]
fn n1024_gaussian_parameters_are_secure_and_match_seal() {
    let p = params();
    assert_eq!(p.degree(), N);
    assert_eq!(p.moduli(), &[132120577], "SEAL's BFVDefault(1024)");
    assert_eq!(p.log_q(), 27);
    assert!(!p.is_insecure());
    assert!(p.supports_batching());
    assert_eq!(
        p.error_distribution(),
        ErrorDistribution::Gaussian { sigma: SIGMA }
    );
    // Same set with the default CBD error: different parameters (the id covers the distribution).
    let cbd = BfvParameters::default_128(N, T).unwrap();
    assert_ne!(cbd.id(), p.id());
    // Both Gaussian samplers survive serialization of the parameters.
    for e in [
        ErrorDistribution::Gaussian { sigma: SIGMA },
        ErrorDistribution::Ziggurat { sigma: SIGMA },
    ] {
        let q = BfvParameters::builder()
            .degree(N)
            .plaintext_modulus(T)
            .moduli(&[132120577])
            .error_distribution(e)
            .build()
            .unwrap();
        let back = BfvParameters::from_bytes(&q.to_bytes()).unwrap();
        assert_eq!(back.error_distribution(), e);
        assert_eq!(back.id(), q.id());
    }
}

#[test]
fn n1024_gaussian_encryption_decrypts() {
    let p = params();
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let (sk, pk, enc) = common::keys(&p, &mut rng);
    for round in 0..20 {
        let vals: Vec<u64> = (0..N).map(|_| rng.gen_range(0..T)).collect();
        let pt = if round % 2 == 0 {
            enc.encode_batch(&vals).unwrap()
        } else {
            enc.encode_coefficients(&vals).unwrap()
        };
        for ct in [
            pk.encrypt(&pt, &mut rng).unwrap(),
            sk.encrypt(&pt, &mut rng).unwrap(),
        ] {
            let got = sk.decrypt_checked(&ct).unwrap();
            let dec = if round % 2 == 0 {
                enc.decode_batch(&got).unwrap()
            } else {
                enc.decode_coefficients(&got).unwrap()
            };
            assert_eq!(dec, vals, "round {round}");
            // Δ ≈ 2^13.4 and Q mod t = 1538: a fresh ciphertext keeps a few bits (SEAL: 3).
            assert!(sk.noise_budget(&ct).unwrap() >= 1);
        }
    }
}

/// P(X = x) of the discrete Gaussian of σ cut at ⌈6σ⌉.
fn pmf(x: i64) -> f64 {
    let cut = (6.0 * SIGMA).ceil() as i64;
    let rho = |v: i64| (-(v * v) as f64 / (2.0 * SIGMA * SIGMA)).exp();
    let z: f64 = (-cut..=cut).map(rho).sum();
    if x.abs() > cut {
        0.0
    } else {
        rho(x) / z
    }
}

/// The `power`-th moment of `samples` about `mean`.
fn central_moment(samples: &[i64], mean: f64, power: i32) -> f64 {
    samples
        .iter()
        .map(|&x| (x as f64 - mean).powi(power))
        .sum::<f64>()
        / samples.len() as f64
}

#[test]
fn n1024_secret_key_errors_follow_the_discrete_gaussian() {
    let p = params();
    let mut rng = ChaCha20Rng::seed_from_u64(40);
    let sk = SecretKey::random(&p, &mut rng);
    let enc = Encoder::new(&p);
    let mut samples = Vec::new();
    for _ in 0..20 {
        let vals: Vec<u64> = (0..N).map(|_| rng.gen_range(0..T)).collect();
        let pt = enc.encode_coefficients(&vals).unwrap();
        let ct = sk.encrypt(&pt, &mut rng).unwrap();
        samples.extend(sk.noise(&ct, &pt).unwrap());
    }
    let k = samples.len() as f64;
    assert!(samples.iter().all(|x| x.abs() <= 20), "beyond the 6σ cut");
    let mean = samples.iter().sum::<i64>() as f64 / k;
    let var = central_moment(&samples, mean, 2);
    assert!(mean.abs() < 0.1, "mean {mean}");
    assert!((var.sqrt() - SIGMA).abs() < 0.1, "σ {}", var.sqrt());
    // χ² over the cells −8 … 8 and the two tails (19 cells, 18 degrees of freedom):
    // 60 is beyond the 10^-6 quantile (≈ 55.6), so a correct sampler fails with probability < 10^-6.
    let mut chi2 = 0.0;
    let mut cells: Vec<(f64, usize)> = (-8..=8)
        .map(|x| (pmf(x), samples.iter().filter(|&&s| s == x).count()))
        .collect();
    let tail: f64 = (9..=20).map(pmf).sum();
    cells.push((tail, samples.iter().filter(|&&s| s < -8).count()));
    cells.push((tail, samples.iter().filter(|&&s| s > 8).count()));
    for (prob, count) in cells {
        let expected = prob * k;
        chi2 += (count as f64 - expected).powi(2) / expected;
    }
    assert!(chi2 < 60.0, "χ² = {chi2:.1} with 18 degrees of freedom");
    // A Gaussian's excess kurtosis is ≈ 0 (standard error here ≈ 0.034).
    let m4 = central_moment(&samples, mean, 4);
    let kurt = m4 / (var * var) - 3.0;
    assert!(kurt.abs() < 0.15, "excess kurtosis {kurt}");
}

#[test]
fn n1024_public_key_error_has_the_predicted_variance() {
    let p = params();
    let mut rng = ChaCha20Rng::seed_from_u64(41);
    let (sk, pk, enc) = common::keys(&p, &mut rng);
    let mut samples = Vec::new();
    for _ in 0..20 {
        let pt = enc.encode_coefficients(&[1, 2, 3]).unwrap();
        let ct = pk.encrypt(&pt, &mut rng).unwrap();
        samples.extend(sk.noise(&ct, &pt).unwrap());
    }
    let k = samples.len() as f64;
    let mean = samples.iter().sum::<i64>() as f64 / k;
    let var = central_moment(&samples, mean, 2);
    // e0 + e_pk·u + e1·s with u, s uniform ternary (E[u²] = 2/3) and e_pk, e0, e1 Gaussian. e_pk
    // and s are fixed across the samples, so their actual norms deviate from the mean by a few
    // per cent; the 10 % window covers that and the estimate's own error (≈ 1 %).
    let predicted = SIGMA * SIGMA * (1.0 + 2.0 / 3.0 * N as f64 + N as f64 * 2.0 / 3.0);
    assert!(mean.abs() < 5.0, "mean {mean}");
    let ratio = var / predicted;
    assert!(
        (0.9..1.1).contains(&ratio),
        "variance {var:.0}, predicted {predicted:.0}"
    );
}
