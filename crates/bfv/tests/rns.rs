//! End-to-end tests of the RNS scheme: homomorphic results equal plaintext results for both
//! multiplication methods, relinearisation, rotations, noise budget and thread-count invariance.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use vsp_bfv::*;

mod common;

use common::random_values;

fn rng() -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(7)
}

fn small_params() -> std::sync::Arc<BfvParameters> {
    common::small_params(&[50, 50, 50, 50])
}

/// A test at the small parameters: the parameters, the seeded RNG, N, t, a secret key and the
/// encoder.
fn setup() -> (
    std::sync::Arc<BfvParameters>,
    ChaCha20Rng,
    usize,
    u64,
    SecretKey,
    Encoder,
) {
    let params = small_params();
    let mut r = rng();
    let sk = SecretKey::random(&params, &mut r);
    let (n, t) = (params.degree(), params.plaintext_modulus());
    let enc = Encoder::new(&params);
    (params, r, n, t, sk, enc)
}

fn mul_mod(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| ((*x as u128 * *y as u128) % t as u128) as u64)
        .collect()
}

#[test]
fn encrypt_decrypt_add_multiply_both_methods() {
    let params = small_params();
    let mut r = rng();
    let n = params.degree();
    let t = params.plaintext_modulus();
    let (sk, pk, enc) = common::keys(&params, &mut r);
    let rk = RelinKey::new(&sk, &mut r);
    let a = random_values(&mut r, n, t);
    let b = random_values(&mut r, n, t);
    let ca = pk.encrypt(&enc.encode_batch(&a).unwrap(), &mut r).unwrap();
    let cb = sk.encrypt(&enc.encode_batch(&b).unwrap(), &mut r).unwrap();
    assert_eq!(enc.decode_batch(&sk.decrypt(&ca).unwrap()).unwrap(), a);
    assert_eq!(enc.decode_batch(&sk.decrypt(&cb).unwrap()).unwrap(), b);
    let want_sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + y) % t).collect();
    let want_prod = mul_mod(&a, &b, t);
    for method in [MulMethod::Hps, MulMethod::Behz] {
        let ev = Evaluator::new(&params).with_method(method);
        let s = ev.add(&ca, &cb).unwrap();
        assert_eq!(
            enc.decode_batch(&sk.decrypt(&s).unwrap()).unwrap(),
            want_sum
        );
        let p3 = ev.multiply(&ca, &cb).unwrap();
        assert_eq!(p3.size(), 3);
        assert_eq!(
            enc.decode_batch(&sk.decrypt(&p3).unwrap()).unwrap(),
            want_prod,
            "{method:?} size 3"
        );
        let p2 = ev.relinearize(&p3, &rk).unwrap();
        assert_eq!(
            enc.decode_batch(&sk.decrypt(&p2).unwrap()).unwrap(),
            want_prod,
            "{method:?} relin"
        );
        let sq = ev.relinearize(&ev.square(&ca).unwrap(), &rk).unwrap();
        assert_eq!(
            enc.decode_batch(&sk.decrypt(&sq).unwrap()).unwrap(),
            mul_mod(&a, &a, t)
        );
        assert!(sk.noise_budget(&p2).unwrap() > 0);
    }
}

#[test]
fn depth_four_and_noise_budget_decreases() {
    let (params, mut r, _, t, sk, enc) = setup();
    let rk = RelinKey::new(&sk, &mut r);
    let a = random_values(&mut r, params.degree(), t);
    for method in [MulMethod::Hps, MulMethod::Behz] {
        let ev = Evaluator::new(&params).with_method(method);
        let mut ct = sk.encrypt(&enc.encode_batch(&a).unwrap(), &mut r).unwrap();
        let mut want = a.clone();
        let mut budget = sk.noise_budget(&ct).unwrap();
        for level in 0..4 {
            ct = ev.multiply_relin(&ct, &ct, &rk).unwrap();
            want = mul_mod(&want, &want, t);
            let b = sk.noise_budget(&ct).unwrap();
            assert!(
                b < budget,
                "{method:?} level {level}: budget {b} !< {budget}"
            );
            budget = b;
            assert_eq!(
                enc.decode_batch(&sk.decrypt_checked(&ct).unwrap()).unwrap(),
                want,
                "{method:?} {level}"
            );
        }
        // Keep squaring until the budget is gone: the checked decryption must refuse.
        let mut refused = false;
        for _ in 0..8 {
            ct = ev.multiply_relin(&ct, &ct, &rk).unwrap();
            if matches!(sk.decrypt_checked(&ct), Err(Error::NoiseBudgetExhausted)) {
                refused = true;
                break;
            }
        }
        assert!(refused, "{method:?}: budget never exhausted");
    }
}

#[test]
fn rotations_and_inner_sum() {
    let (params, mut r, n, t, sk, enc) = setup();
    let gk = GaloisKeys::power_of_two(&sk, &mut r);
    let ev = Evaluator::new(&params);
    let a = random_values(&mut r, n, t);
    let ct = sk.encrypt(&enc.encode_batch(&a).unwrap(), &mut r).unwrap();
    let half = n / 2;
    for step in [1i64, 3, -1, 17] {
        let rot = ev.rotate_columns(&ct, step, &gk).unwrap();
        let got = enc.decode_batch(&sk.decrypt(&rot).unwrap()).unwrap();
        for row in 0..2 {
            for j in 0..half {
                let src = (j as i64 + step).rem_euclid(half as i64) as usize;
                assert_eq!(got[row * half + j], a[row * half + src], "step {step}");
            }
        }
    }
    let sw = enc
        .decode_batch(&sk.decrypt(&ev.rotate_rows(&ct, &gk).unwrap()).unwrap())
        .unwrap();
    assert_eq!(&sw[..half], &a[half..]);
    assert_eq!(&sw[half..], &a[..half]);
    let total = a.iter().fold(0u64, |s, v| (s + v) % t);
    let sum = enc
        .decode_batch(&sk.decrypt(&ev.inner_sum(&ct, &gk).unwrap()).unwrap())
        .unwrap();
    assert!(sum.iter().all(|&v| v == total));
}

#[test]
fn plaintext_operations_and_coefficient_encoding() {
    let (params, mut r, n, t, sk, enc) = setup();
    let ev = Evaluator::new(&params);
    let a = random_values(&mut r, n, t);
    let b = random_values(&mut r, n, t);
    let ct = sk.encrypt(&enc.encode_batch(&a).unwrap(), &mut r).unwrap();
    let pb = enc.encode_batch(&b).unwrap();
    let got = enc
        .decode_batch(&sk.decrypt(&ev.mul_plain(&ct, &pb).unwrap()).unwrap())
        .unwrap();
    assert_eq!(got, mul_mod(&a, &b, t));
    let got = enc
        .decode_batch(&sk.decrypt(&ev.sub_plain(&ct, &pb).unwrap()).unwrap())
        .unwrap();
    let want: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + t - y) % t).collect();
    assert_eq!(got, want);
    let neg = enc
        .decode_batch(&sk.decrypt(&ev.negate(&ct).unwrap()).unwrap())
        .unwrap();
    assert_eq!(neg, a.iter().map(|x| (t - x) % t).collect::<Vec<_>>());
    // Coefficient encoding: (1 + 2x)·(3 + x^{n−1}) = 3 + 6x + x^{n−1} + 2x^n = 1 + 6x + x^{n−1}.
    let rk = RelinKey::new(&sk, &mut r);
    let mut p = vec![0u64; n];
    p[n - 1] = 1;
    p[0] = 3;
    let c1 = sk
        .encrypt(&enc.encode_coefficients(&[1, 2]).unwrap(), &mut r)
        .unwrap();
    let c2 = sk
        .encrypt(&enc.encode_coefficients(&p).unwrap(), &mut r)
        .unwrap();
    let prod = enc
        .decode_coefficients(
            &sk.decrypt(&ev.multiply_relin(&c1, &c2, &rk).unwrap())
                .unwrap(),
        )
        .unwrap();
    let mut want = vec![0u64; n];
    want[0] = 1;
    want[1] = 6;
    want[n - 1] = 1;
    assert_eq!(prod, want);
}

#[test]
fn threads_give_identical_results() {
    let (params, mut r, _, _, sk, enc) = setup();
    let rk = RelinKey::new(&sk, &mut r);
    let a = sk
        .encrypt(&enc.encode_batch(&[5, 6, 7]).unwrap(), &mut r)
        .unwrap();
    let b = sk
        .encrypt(&enc.encode_batch(&[8, 9, 10]).unwrap(), &mut r)
        .unwrap();
    for method in [MulMethod::Hps, MulMethod::Behz] {
        let one = Evaluator::new(&params)
            .with_method(method)
            .multiply_relin(&a, &b, &rk)
            .unwrap();
        let two = Evaluator::with_threads(&params, 3)
            .unwrap()
            .with_method(method)
            .multiply_relin(&a, &b, &rk)
            .unwrap();
        assert_eq!(one, two);
    }
}

#[test]
fn invalid_parameters_are_rejected() {
    let too_big = BfvParameters::builder()
        .degree(4096)
        .plaintext_modulus(65537)
        .moduli_sizes(&[40, 40, 40])
        .build();
    assert!(matches!(
        too_big,
        Err(Error::Insecure {
            degree: 4096,
            log_q: 120,
            max: 109
        })
    ));
    assert!(BfvParameters::builder()
        .degree(1000)
        .plaintext_modulus(17)
        .build()
        .is_err());
    assert!(BfvParameters::builder()
        .degree(1024)
        .plaintext_modulus(1)
        .build()
        .is_err());
    assert!(BfvParameters::builder()
        .degree(1024)
        .plaintext_modulus(17)
        .moduli(&[12289, 12289])
        .insecure()
        .build()
        .is_err());
    assert!(BfvParameters::builder()
        .degree(1024)
        .plaintext_modulus(17)
        .moduli(&[12290])
        .build()
        .is_err());
    // Batching needs t ≡ 1 mod 2N.
    let p = BfvParameters::default_128(4096, 1 << 16).unwrap();
    assert!(!p.supports_batching());
    assert!(Encoder::new(&p).encode_batch(&[1]).is_err());
    assert!(Encoder::new(&p).encode_coefficients(&[1 << 16]).is_err());
}

#[test]
fn depth_presets_reach_their_claimed_depth() {
    let mut r = rng();
    for depth in [1usize, 4] {
        let params = BfvParameters::for_depth(depth, 65537).unwrap();
        let sk = SecretKey::random(&params, &mut r);
        let rk = RelinKey::new(&sk, &mut r);
        let enc = Encoder::new(&params);
        let ev = Evaluator::new(&params);
        let t = params.plaintext_modulus();
        let a = random_values(&mut r, params.degree(), t);
        let mut ct = sk.encrypt(&enc.encode_batch(&a).unwrap(), &mut r).unwrap();
        let mut want = a;
        for _ in 0..depth {
            ct = ev.multiply_relin(&ct, &ct, &rk).unwrap();
            want = mul_mod(&want, &want, t);
        }
        assert!(
            sk.noise_budget(&ct).unwrap() > 0,
            "depth {depth} at N = {}",
            params.degree()
        );
        assert_eq!(enc.decode_batch(&sk.decrypt(&ct).unwrap()).unwrap(), want);
    }
}

#[test]
fn large_plaintext_modulus_both_methods() {
    // A 50-bit batching t stresses the auxiliary-base sizing of HPS and BEHZ.
    let t = BfvParameters::batching_modulus(256, 50).unwrap();
    let params = BfvParameters::builder()
        .degree(256)
        .plaintext_modulus(t)
        .moduli_sizes(&[60, 60, 60, 60, 60])
        .insecure()
        .build()
        .unwrap();
    let mut r = rng();
    let sk = SecretKey::random(&params, &mut r);
    let rk = RelinKey::new(&sk, &mut r);
    let enc = Encoder::new(&params);
    let a = random_values(&mut r, 256, t);
    let b = random_values(&mut r, 256, t);
    let ca = sk.encrypt(&enc.encode_batch(&a).unwrap(), &mut r).unwrap();
    let cb = sk.encrypt(&enc.encode_batch(&b).unwrap(), &mut r).unwrap();
    for method in [MulMethod::Hps, MulMethod::Behz] {
        let ev = Evaluator::new(&params).with_method(method);
        let c = ev.multiply_relin(&ca, &cb, &rk).unwrap();
        assert_eq!(
            enc.decode_batch(&sk.decrypt(&c).unwrap()).unwrap(),
            mul_mod(&a, &b, t),
            "{method:?}"
        );
    }
}
