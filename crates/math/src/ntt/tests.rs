//! NTT tests: evaluation order, round trips and products against a schoolbook reference, for every
//! backend this CPU has (a kernel the CPU has must build, one it lacks must be refused; the features
//! are detected here, independently of the module's own checks).

use super::*;
use crate::prime::generate_ntt_primes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_poly(rng: &mut ChaCha8Rng, n: usize, q: u64) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..q)).collect()
}

/// What this CPU offers, detected here independently of the NTT module's own checks.
#[cfg(target_arch = "x86_64")]
fn cpu_has(feature: &str) -> bool {
    match feature {
        "avx2" => std::is_x86_feature_detected!("avx2"),
        "fma" => std::is_x86_feature_detected!("fma"),
        "avx512f" => std::is_x86_feature_detected!("avx512f"),
        "avx512dq" => std::is_x86_feature_detected!("avx512dq"),
        "avx512ifma" => std::is_x86_feature_detected!("avx512ifma"),
        _ => false,
    }
}
#[cfg(not(target_arch = "x86_64"))]
fn cpu_has(_: &str) -> bool {
    false
}

/// The kernels that must run for modulus q on this CPU, from the CPU's features and the kernels'
/// documented limits (52-bit products and double precision only for q < 2^50).
fn expected_backends(q: &Modulus) -> std::vec::Vec<Backend> {
    let small = q.bits() <= IFMA_MAX_BITS;
    let mut out = std::vec![Backend::Portable];
    if cpu_has("avx2") {
        out.push(Backend::Avx2);
    }
    if small && cpu_has("avx2") && cpu_has("fma") {
        out.push(Backend::Avx2Fma);
    }
    if cpu_has("avx512f") && cpu_has("avx512dq") {
        out.push(Backend::Avx512);
    }
    if small && cpu_has("avx512f") && cpu_has("avx512ifma") {
        out.push(Backend::Ifma);
    }
    out
}

/// A table on every kernel this CPU has for q; portable first. A kernel the CPU has must build
/// (and one it lacks must be refused), so a loop over `[1..]` never silently tests nothing on a
/// machine with SIMD.
fn all_backends(n: usize, q: u64) -> Vec<NttTable> {
    let m = Modulus::new(q).unwrap();
    let base = NttTable::new(n, m).unwrap();
    let expected = expected_backends(&m);
    let mut out = Vec::new();
    for b in Backend::ALL {
        let built = base.clone().with_backend(b);
        assert_eq!(
            built.is_ok(),
            expected.contains(&b),
            "NTT kernel {} for q = {q}: the CPU has it iff it builds",
            b.name()
        );
        if let Ok(t) = built {
            out.push(t);
        }
    }
    out.sort_by_key(|t| t.backend() != Backend::Portable);
    assert_eq!(out[0].backend(), Backend::Portable);
    assert_eq!(out.len(), expected.len());
    out
}

#[test]
fn output_order_is_seal_bit_reversed() {
    let n = 16;
    let q = Modulus::new(generate_ntt_primes(20, n, 1).unwrap()[0]).unwrap();
    let table = NttTable::new(n, q).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let a = random_poly(&mut rng, n, q.value());
    let mut fa = a.clone();
    table.forward(&mut fa).unwrap();
    for (j, &value) in fa.iter().enumerate() {
        let br = j.reverse_bits() >> (usize::BITS - 4);
        let x = q.pow(table.psi(), 2 * br as u64 + 1);
        let eval = a.iter().rev().fold(0u64, |acc, &c| q.add(q.mul(acc, x), c));
        assert_eq!(value, eval, "slot {j}");
    }
}

#[test]
fn products_match_schoolbook_for_every_backend() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for bits in [30u32, 50, 62] {
        let n = 1024;
        let q = generate_ntt_primes(bits, n, 1).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        let a = random_poly(&mut rng, n, q);
        let b = random_poly(&mut rng, n, q);
        let expected = negacyclic_schoolbook(&a, &b, &m);
        for table in all_backends(n, q) {
            assert_eq!(
                table.negacyclic_mul(&a, &b).unwrap(),
                expected,
                "{:?} q={q}",
                table.backend()
            );
        }
    }
}

#[test]
fn round_trips_and_sparse_products_for_all_sizes() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for log_n in 1..=17 {
        let n = 1usize << log_n;
        let bits = if log_n % 2 == 0 { 50 } else { 62 };
        let q = generate_ntt_primes(bits, n, 1).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        let a = random_poly(&mut rng, n, q);
        // A sparse b keeps the schoolbook reference cheap at large N.
        let mut b = vec![0u64; n];
        for _ in 0..3 {
            b[rng.gen_range(0..n)] = rng.gen_range(0..q);
        }
        let expected = negacyclic_schoolbook(&b, &a, &m);
        let mut reference: Option<Vec<u64>> = None;
        for table in all_backends(n, q) {
            let mut x = a.clone();
            table.forward(&mut x).unwrap();
            assert!(x.iter().all(|&v| v < q));
            match &reference {
                None => reference = Some(x.clone()),
                Some(r) => assert_eq!(&x, r, "{:?} n={n} disagrees with portable", table.backend()),
            }
            table.inverse(&mut x).unwrap();
            assert_eq!(x, a, "{:?} n={n} round trip", table.backend());
            assert_eq!(
                table.negacyclic_mul(&a, &b).unwrap(),
                expected,
                "{:?} n={n}",
                table.backend()
            );
        }
    }
}

/// `a` (reduced) with (i mod `k`)·q added to entry i: values spread over [0, k·q).
fn lifted(a: &[u64], k: u64, q: u64) -> Vec<u64> {
    a.iter()
        .enumerate()
        .map(|(i, &v)| v + (i as u64 % k) * q)
        .collect()
}

#[test]
fn lazy_input_ranges_are_accepted() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let n = 4096;
    for bits in [50u32, 62] {
        let q = generate_ntt_primes(bits, n, 1).unwrap()[0];
        let a = random_poly(&mut rng, n, q);
        let tables = all_backends(n, q);
        let mut expected = a.clone();
        tables[0].forward(&mut expected).unwrap();
        for table in &tables {
            // Forward accepts [0, 4q): add q or 3q to some inputs.
            let mut x = lifted(&a, 4, q);
            table.forward(&mut x).unwrap();
            assert_eq!(x, expected, "{:?}", table.backend());
            // Inverse accepts [0, 2q).
            let mut y = lifted(&x, 2, q);
            table.inverse(&mut y).unwrap();
            assert_eq!(y, a, "{:?}", table.backend());
        }
    }
}

#[test]
fn on_the_fly_matches_table() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (n, bits) in [(2usize, 20u32), (1024, 30), (4096, 62)] {
        let q = Modulus::new(generate_ntt_primes(bits, n, 1).unwrap()[0]).unwrap();
        let table = NttTable::new(n, q).unwrap();
        let otf = NttOnTheFly::new(n, q).unwrap();
        let a = random_poly(&mut rng, n, q.value());
        let (mut x, mut y) = (a.clone(), a.clone());
        table.forward(&mut x).unwrap();
        otf.forward(&mut y).unwrap();
        assert_eq!(x, y);
        otf.inverse(&mut y).unwrap();
        assert_eq!(y, a);
    }
}

#[test]
fn bad_parameters_are_errors() {
    let q = Modulus::new(generate_ntt_primes(30, 1024, 1).unwrap()[0]).unwrap();
    assert!(matches!(
        NttTable::new(1000, q),
        Err(MathError::InvalidDegree { .. })
    ));
    assert!(matches!(
        NttTable::new(4096, q),
        Err(MathError::NotNttFriendly { .. })
    ));
    assert!(matches!(
        NttTable::new(1024, Modulus::new(2049).unwrap()),
        Err(MathError::NotPrime(_))
    ));
    assert!(matches!(
        NttTable::with_root(1024, q, 2),
        Err(MathError::NotPrimitiveRoot { .. })
    ));
    let t = NttTable::new(1024, q).unwrap();
    assert!(matches!(
        t.forward(&mut [0u64; 512]),
        Err(MathError::LengthMismatch { .. })
    ));
    assert!(matches!(
        t.inverse(&mut [0u64; 2048]),
        Err(MathError::LengthMismatch { .. })
    ));
    assert!(NttOnTheFly::new(1024, Modulus::new(97).unwrap()).is_err());
}

#[test]
fn extreme_inputs_agree_across_backends() {
    // Worst cases for the lazy ranges: every input at the top of its allowed range.
    for (n, bits) in [(16usize, 50u32), (4096, 50), (4096, 62), (64, 40)] {
        let q = generate_ntt_primes(bits, n, 1).unwrap()[0];
        let tables = all_backends(n, q);
        for fill in [q - 1, 4 * q - 1, 2 * q + 1] {
            let mut expected = vec![fill; n];
            tables[0].forward(&mut expected).unwrap();
            let mut expected_inv = vec![(2 * q - 1).min(fill); n];
            tables[0].inverse(&mut expected_inv).unwrap();
            for table in &tables[1..] {
                let mut x = vec![fill; n];
                table.forward(&mut x).unwrap();
                assert_eq!(x, expected, "{:?} n={n} fill={fill}", table.backend());
                let mut y = vec![(2 * q - 1).min(fill); n];
                table.inverse(&mut y).unwrap();
                assert_eq!(y, expected_inv, "{:?} n={n} inverse", table.backend());
            }
        }
    }
}

#[test]
fn default_backend_follows_the_documented_rule() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let n = 1024;
    for bits in [20u32, 30, 49, 50, 51, 62] {
        let q = generate_ntt_primes(bits, n, 1).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        // The documented rule (Backend::preference's doc), restated from the CPU's features.
        let has = expected_backends(&m);
        let rule: &[Backend] = if bits <= IFMA_MAX_BITS {
            &[
                Backend::Ifma,
                Backend::Avx2Fma,
                Backend::Avx512,
                Backend::Avx2,
            ]
        } else {
            &[Backend::Avx512, Backend::Avx2]
        };
        let expected = rule
            .iter()
            .copied()
            .find(|b| has.contains(b))
            .unwrap_or(Backend::Portable);
        assert_eq!(Backend::best(&m), expected, "q = {q}");
        assert!(expected.is_available(&m));
        // 52-bit-product and double-precision kernels only for q < 2^50.
        if bits > IFMA_MAX_BITS {
            assert!(!matches!(expected, Backend::Ifma | Backend::Avx2Fma));
        }
        // The default table runs on that kernel and agrees with the portable one.
        let table = NttTable::new(n, m).unwrap();
        assert_eq!(table.backend(), expected);
        std::println!(
            "q = {q} ({bits} bits): default NTT kernel {}",
            expected.name()
        );
        let portable = table.clone().with_backend(Backend::Portable).unwrap();
        let a = random_poly(&mut rng, n, q);
        let (mut x, mut y) = (a.clone(), a.clone());
        table.forward(&mut x).unwrap();
        portable.forward(&mut y).unwrap();
        assert_eq!(x, y, "default {} vs portable, q = {q}", expected.name());
        table.inverse(&mut x).unwrap();
        assert_eq!(x, a);
    }
}

#[test]
fn unavailable_backends_are_refused() {
    let q = Modulus::new(generate_ntt_primes(62, 1024, 1).unwrap()[0]).unwrap();
    let base = NttTable::new(1024, q).unwrap();
    // The q < 2^50 kernels refuse a 62-bit prime on every CPU.
    for b in [Backend::Ifma, Backend::Avx2Fma] {
        assert!(!b.is_available(&q));
        assert!(matches!(
            base.clone().with_backend(b),
            Err(MathError::BackendUnavailable { .. })
        ));
    }
}
