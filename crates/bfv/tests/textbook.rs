//! The RNS methods against the textbook big-integer reference, and textbook relinearisation v1/v2.

use num_bigint::{BigInt, BigUint};
use num_traits::{Signed, Zero};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use vsp_bfv::textbook::{TbCiphertext, TbPublicKey, TbSecretKey, TextbookFv};
use vsp_bfv::*;

mod common;

use common::random_values;

#[test]
fn hps_equals_textbook_and_behz_is_within_a_few_units() {
    let params = common::small_params(&[50, 50, 50, 50]);
    let mut r = ChaCha20Rng::seed_from_u64(11);
    let t = params.plaintext_modulus();
    let (sk, pk, enc) = common::keys(&params, &mut r);
    let tb = TextbookFv::from_rns(&params).unwrap();
    let tsk = tb.secret_key_from_rns(&sk);
    let a = random_values(&mut r, params.degree(), t);
    let b = random_values(&mut r, params.degree(), t);
    let ca = pk
        .encrypt(&enc.encode_coefficients(&a).unwrap(), &mut r)
        .unwrap();
    let cb = pk
        .encrypt(&enc.encode_coefficients(&b).unwrap(), &mut r)
        .unwrap();
    let want = tb
        .multiply(&tb.from_rns_ciphertext(&ca), &tb.from_rns_ciphertext(&cb))
        .unwrap();
    let hps = Evaluator::new(&params)
        .with_method(MulMethod::Hps)
        .multiply(&ca, &cb)
        .unwrap();
    assert_eq!(
        tb.from_rns_ciphertext(&hps),
        want,
        "HPS must round exactly like the textbook scheme"
    );
    let behz = Evaluator::new(&params)
        .with_method(MulMethod::Behz)
        .multiply(&ca, &cb)
        .unwrap();
    let got = tb.from_rns_ciphertext(&behz);
    let q = tb.modulus().clone();
    let mut max_diff = BigInt::zero();
    for (pg, pw) in got.0.iter().zip(&want.0) {
        for (x, y) in pg.iter().zip(pw) {
            let mut d = (x - y) % &q;
            if d > &q >> 1u32 {
                d -= &q;
            } else if d < -(&q >> 1u32) {
                d += &q;
            }
            max_diff = max_diff.max(d.abs());
        }
    }
    // BEHZ floors instead of rounding and keeps a fast-conversion overflow of at most k + 1 units.
    assert!(
        max_diff <= BigInt::from(params.moduli().len() + 2),
        "BEHZ off by {max_diff}"
    );
    let m_tb = tb.decrypt(&tsk, &want).unwrap();
    assert_eq!(
        m_tb,
        Encoder::new(&params)
            .decode_coefficients(&sk.decrypt(&behz).unwrap())
            .unwrap()
    );
    assert_eq!(
        m_tb,
        enc.decode_coefficients(&sk.decrypt(&hps).unwrap()).unwrap()
    );
}

/// a·b mod (X^n + 1, t).
fn negacyclic(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    vsp_math::ntt::negacyclic_schoolbook(a, b, &vsp_math::Modulus::new(t).unwrap())
}

/// Fresh textbook keys (secret, public), two random plaintexts a and b, a's encryption (checked to decrypt), the
/// product of both encryptions and the plaintext product it must decrypt to.
struct Product {
    sk: TbSecretKey,
    pk: TbPublicKey,
    a: Vec<u64>,
    b: Vec<u64>,
    ca: TbCiphertext,
    prod: TbCiphertext,
    want: Vec<u64>,
}

fn product(tb: &TextbookFv, n: usize, t: u64, r: &mut ChaCha20Rng) -> Product {
    let sk = tb.secret_key(r);
    let pk = tb.public_key(&sk, r).unwrap();
    let a = random_values(r, n, t);
    let b = random_values(r, n, t);
    let ca = tb.encrypt(&pk, &a, r).unwrap();
    let cb = tb.encrypt(&pk, &b, r).unwrap();
    assert_eq!(tb.decrypt(&sk, &ca).unwrap(), a);
    let prod = tb.multiply(&ca, &cb).unwrap();
    let want = negacyclic(&a, &b, t);
    Product {
        sk,
        pk,
        a,
        b,
        ca,
        prod,
        want,
    }
}

#[test]
fn textbook_relinearisation_v1_and_v2() {
    let mut r = ChaCha20Rng::seed_from_u64(3);
    let n = 64;
    let t = 257u64;
    // A 200-bit odd modulus: far from the table for n = 64, so insecure.
    let q = (BigUint::from(1u32) << 200u32) - 75u32;
    let tb = TextbookFv::new(n, q, t, ErrorDistribution::default(), true).unwrap();
    let Product { sk, prod, want, .. } = product(&tb, n, t, &mut r);
    assert_eq!(tb.decrypt(&sk, &prod).unwrap(), want);
    let small = tb.relin_key_v1(&sk, 1 << 4, &mut r).unwrap();
    let large = tb.relin_key_v1(&sk, 1 << 50, &mut r).unwrap();
    assert_eq!(small.len(), 50);
    assert_eq!(large.len(), 4);
    let r_small = tb.relinearize_v1(&prod, &small).unwrap();
    let r_large = tb.relinearize_v1(&prod, &large).unwrap();
    let v2 = tb
        .relin_key_v2(&sk, tb.default_v2_modulus(), &mut r)
        .unwrap();
    let r_v2 = tb.relinearize_v2(&prod, &v2).unwrap();
    for (name, c) in [
        ("v1 T=2^4", &r_small),
        ("v1 T=2^50", &r_large),
        ("v2", &r_v2),
    ] {
        assert_eq!(c.0.len(), 2);
        assert_eq!(tb.decrypt(&sk, c).unwrap(), want, "{name}");
    }
    // Seed 001's trade-off: a smaller base leaves more budget; v2 with p = q³ adds almost nothing.
    let b_before = tb.noise_budget(&sk, &prod).unwrap();
    let b_small = tb.noise_budget(&sk, &r_small).unwrap();
    let b_large = tb.noise_budget(&sk, &r_large).unwrap();
    let b_v2 = tb.noise_budget(&sk, &r_v2).unwrap();
    assert!(b_small > b_large, "T=2^4 {b_small} vs T=2^50 {b_large}");
    assert!(b_v2 + 1 >= b_before, "v2 {b_v2} vs before {b_before}");
    // A tiny p makes v2 noisy: the budget drops well below the p = q³ case.
    let weak = tb
        .relin_key_v2(&sk, BigUint::from(1u32) << 20u32, &mut r)
        .unwrap();
    let b_weak = tb
        .noise_budget(&sk, &tb.relinearize_v2(&prod, &weak).unwrap())
        .unwrap();
    assert!(b_weak + 20 < b_v2, "weak p {b_weak} vs {b_v2}");
    // Depth 2 with v1.
    let sq = tb
        .relinearize_v1(&tb.multiply(&r_small, &r_small).unwrap(), &small)
        .unwrap();
    assert_eq!(tb.decrypt(&sk, &sq).unwrap(), negacyclic(&want, &want, t));
    assert!(matches!(
        tb.relinearize_v1(&TbCiphertext(vec![]), &small),
        Err(Error::CiphertextSize(0))
    ));
}

#[test]
fn textbook_security_checks() {
    let q = (BigUint::from(1u32) << 1200u32) - 1u32;
    let refused = TextbookFv::new(1024, q.clone(), 2, ErrorDistribution::default(), false);
    assert!(matches!(
        refused,
        Err(Error::Insecure {
            degree: 1024,
            log_q: 1200,
            max: 27
        })
    ));
    // Seed 001's set is accepted for reproduction with the insecure flag.
    assert!(TextbookFv::new(1024, q, 2, ErrorDistribution::default(), true).is_ok());
    let q = (BigUint::from(1u32) << 100u32) - 15u32;
    let tb = TextbookFv::new(4096, q, 2, ErrorDistribution::default(), false).unwrap();
    let mut r = ChaCha20Rng::seed_from_u64(1);
    let sk = tb.secret_key(&mut r);
    // v2's key modulus p·q ≈ q⁴ = 400 bits is refused at n = 4096.
    assert!(matches!(
        tb.relin_key_v2(&sk, tb.default_v2_modulus(), &mut r),
        Err(Error::Insecure { .. })
    ));
}

/// Seed 001's Ziggurat sampler selected as textbook FV's error distribution: fresh errors follow
/// the discrete Gaussian (mean, σ), encryption, multiplication, both relinearisations, and the scalar
/// and plaintext operations the logistic-regression demo uses all decrypt right.
#[test]
fn textbook_fv_with_the_ziggurat_sampler() {
    let mut r = ChaCha20Rng::seed_from_u64(5);
    let n = 256;
    let t = 65537u64;
    let q = (BigUint::from(1u32) << 300u32) - 153u32;
    let zig = ErrorDistribution::Ziggurat { sigma: 3.2 };
    zig.validate().unwrap();
    let tb = TextbookFv::new(n, q.clone(), t, zig, true).unwrap();
    let Product {
        sk,
        pk,
        a,
        b,
        ca,
        prod,
        want,
    } = product(&tb, n, t, &mut r);
    let v1 = tb.relin_key_v1(&sk, 1 << 32, &mut r).unwrap();
    let v2 = tb
        .relin_key_v2(&sk, tb.default_v2_modulus(), &mut r)
        .unwrap();
    assert_eq!(
        tb.decrypt(&sk, &tb.relinearize_v1(&prod, &v1).unwrap())
            .unwrap(),
        want
    );
    assert_eq!(
        tb.decrypt(&sk, &tb.relinearize_v2(&prod, &v2).unwrap())
            .unwrap(),
        want
    );
    // k·a + b as plaintext: scalar multiplication (negative k) and plaintext addition.
    let k = -1234i64;
    let got = tb
        .decrypt(&sk, &tb.add_plain(&tb.mul_scalar(&ca, k), &b).unwrap())
        .unwrap();
    let expect: Vec<u64> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| (k.rem_euclid(t as i64) as u64 * x + y) % t)
        .collect();
    assert_eq!(got, expect);
    assert!(tb.add_plain(&ca, &[t]).is_err());
    // The same distribution through the RNS scheme's sampler: Gaussian statistics.
    let v = zig.sample_vec(200_000, &mut r);
    let mean = v.iter().sum::<i64>() as f64 / v.len() as f64;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
    assert!(mean.abs() < 0.05, "mean {mean}");
    assert!((var.sqrt() / 3.2 - 1.0).abs() < 0.01, "σ {}", var.sqrt());
    assert!(v.iter().all(|x| x.unsigned_abs() <= zig.bound()));
    // An empty message encrypts zero.
    let zero = tb.encrypt(&pk, &[], &mut r).unwrap();
    assert_eq!(tb.decrypt(&sk, &zero).unwrap(), vec![0; n]);
}
