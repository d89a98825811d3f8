//! Seed 002: BEHZ decryption (SEAL's integer scale-and-round with the γ correction) beside HPS
//! decryption (`SecretKey::decrypt`, fixed point). Both compute ⌊t·x/Q⌉ mod t, so they must agree on
//! every coefficient of every ciphertext that still has noise budget: fresh ones, and products at
//! each depth until the budget is gone, for prime and power-of-two t and one to several primes.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use vsp_bfv::*;

mod common;

fn check_set(params: std::sync::Arc<BfvParameters>, seed: u64) -> usize {
    let mut r = ChaCha20Rng::seed_from_u64(seed);
    let t = params.plaintext_modulus();
    let (sk, pk, enc) = common::keys(&params, &mut r);
    let rk = RelinKey::new(&sk, &mut r);
    let ev = Evaluator::new(&params);
    let behz = BehzDecryptor::new(&params).unwrap();
    let n = params.degree();
    let vals: Vec<u64> = (0..n).map(|_| r.gen_range(0..t.min(16))).collect();
    let pt = enc.encode_coefficients(&vals).unwrap();
    let mut ct = pk.encrypt(&pt, &mut r).unwrap();
    let sym = sk.encrypt(&pt, &mut r).unwrap();
    assert_eq!(behz.decrypt(&sk, &sym).unwrap(), sk.decrypt(&sym).unwrap());
    let mut compared = 0;
    loop {
        let budget = sk.noise_budget(&ct).unwrap();
        if budget == 0 {
            break;
        }
        let hps = sk.decrypt(&ct).unwrap();
        let got = behz.decrypt(&sk, &ct).unwrap();
        assert!(
            got == hps,
            "N = {n}, t = {t}, depth {compared}, budget {budget}: BEHZ and HPS differ"
        );
        compared += 1;
        ct = ev.multiply_relin(&ct, &ct, &rk).unwrap();
    }
    // Degree-2 ciphertexts (before relinearisation) decrypt alike too.
    let fresh = pk.encrypt(&pt, &mut r).unwrap();
    let c3 = ev.multiply(&fresh, &fresh).unwrap();
    assert_eq!(behz.decrypt(&sk, &c3).unwrap(), sk.decrypt(&c3).unwrap());
    compared
}

#[test]
fn behz_decryption_equals_hps_decryption() {
    // (params, at least this many depths compared)
    let sets = [
        (BfvParameters::default_128(4096, 65537).unwrap(), 2),
        (BfvParameters::default_128(8192, 65537).unwrap(), 4),
        (
            BfvParameters::builder()
                .degree(4096)
                .plaintext_modulus(1 << 20)
                .build()
                .unwrap(),
            1,
        ),
        (
            BfvParameters::builder()
                .degree(1024)
                .plaintext_modulus(12289)
                .moduli(&[132120577])
                .error_distribution(ErrorDistribution::Gaussian { sigma: 3.2 })
                .build()
                .unwrap(),
            1,
        ),
    ];
    for (i, (p, min_depths)) in sets.into_iter().enumerate() {
        let k = p.moduli().len();
        let depths = check_set(p, 100 + i as u64);
        assert!(
            depths >= min_depths,
            "set {i} ({k} primes): only {depths} depths compared"
        );
    }
}

#[test]
fn behz_decryptor_refuses_other_keys() {
    let mut r = ChaCha20Rng::seed_from_u64(7);
    let a = BfvParameters::default_128(4096, 65537).unwrap();
    let b = BfvParameters::default_128(4096, 40961).unwrap();
    let dec = BehzDecryptor::new(&a).unwrap();
    let skb = SecretKey::random(&b, &mut r);
    let ct = skb
        .encrypt(&Encoder::new(&b).encode_coefficients(&[1]).unwrap(), &mut r)
        .unwrap();
    assert!(matches!(
        dec.decrypt(&skb, &ct),
        Err(Error::ParameterMismatch(_))
    ));
}
