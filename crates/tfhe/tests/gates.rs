//! Truth tables of every gate over fresh encryptions, chains of gates, and multi-threaded use.

mod common;
use common::keys;
use rand::{Rng, SeedableRng};
use vsp_tfhe::Bit;

type Gate = fn(&vsp_tfhe::EvalKey, &Bit, &Bit) -> Result<Bit, vsp_tfhe::Error>;
type Truth = fn(bool, bool) -> bool;

#[test]
fn truth_tables() {
    let (sk, ek) = keys();
    let gates: [(&str, Gate, Truth); 8] = [
        ("nand", |k, a, b| k.nand(a, b), |a, b| !(a && b)),
        ("and", |k, a, b| k.and(a, b), |a, b| a && b),
        ("or", |k, a, b| k.or(a, b), |a, b| a || b),
        ("nor", |k, a, b| k.nor(a, b), |a, b| !(a || b)),
        ("xor", |k, a, b| k.xor(a, b), |a, b| a ^ b),
        ("xnor", |k, a, b| k.xnor(a, b), |a, b| !(a ^ b)),
        ("andnot", |k, a, b| k.andnot(a, b), |a, b| a && !b),
        ("ornot", |k, a, b| k.ornot(a, b), |a, b| a || !b),
    ];
    for (name, g, f) in gates {
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            let (a, b) = (sk.encrypt_bit(x), sk.encrypt_bit(y));
            let c = g(ek, &a, &b).unwrap();
            assert_eq!(sk.decrypt_bit(&c).unwrap(), f(x, y), "{name}({x}, {y})");
        }
    }
    // The enum's plain evaluation (what vsp-circuit's plain backend runs) is the bootstrapped gate.
    for g in vsp_tfhe::Gate2::ALL {
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            let c = ek.gate2(g, &sk.encrypt_bit(x), &sk.encrypt_bit(y)).unwrap();
            let plain = g.eval_u64(x as u64, y as u64) & 1 == 1;
            assert_eq!(sk.decrypt_bit(&c).unwrap(), plain, "{}({x}, {y})", g.name());
        }
    }
    for x in [false, true] {
        let a = sk.encrypt_bit(x);
        assert_eq!(sk.decrypt_bit(&ek.not(&a).unwrap()).unwrap(), !x);
        assert_eq!(sk.decrypt_bit(&ek.copy(&a).unwrap()).unwrap(), x);
        assert_eq!(sk.decrypt_bit(&ek.constant(x)).unwrap(), x);
        // Constants mix with encrypted inputs.
        let c = ek.and(&a, &ek.constant(true)).unwrap();
        assert_eq!(sk.decrypt_bit(&c).unwrap(), x);
    }
    for bits in 0..8u8 {
        let (c, a, b) = (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4);
        let r = ek
            .mux(&sk.encrypt_bit(c), &sk.encrypt_bit(a), &sk.encrypt_bit(b))
            .unwrap();
        assert_eq!(
            sk.decrypt_bit(&r).unwrap(),
            if c { a } else { b },
            "mux({c},{a},{b})"
        );
    }
}

#[test]
fn ripple_carry_adder_16bit() {
    let (sk, ek) = keys();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let (x, y): (u16, u16) = (rng.gen(), rng.gen());
    let enc = |v: u16| -> Vec<Bit> { (0..16).map(|i| sk.encrypt_bit((v >> i) & 1 == 1)).collect() };
    let (a, b) = (enc(x), enc(y));
    let mut carry = ek.constant(false);
    let mut sum = Vec::new();
    for i in 0..16 {
        let t = ek.xor(&a[i], &b[i]).unwrap();
        sum.push(ek.xor(&t, &carry).unwrap());
        let c1 = ek.and(&a[i], &b[i]).unwrap();
        let c2 = ek.and(&t, &carry).unwrap();
        carry = ek.or(&c1, &c2).unwrap();
    }
    let mut got = 0u16;
    for (i, s) in sum.iter().enumerate() {
        got |= (sk.decrypt_bit(s).unwrap() as u16) << i;
    }
    assert_eq!(got, x.wrapping_add(y));
    assert_eq!(
        sk.decrypt_bit(&carry).unwrap(),
        (x as u32 + y as u32) > 0xffff
    );
}

#[test]
fn thousand_chained_nands_from_threads() {
    let (sk, ek) = keys();
    // 1,000 NANDs in 2 threads sharing one evaluation key: x ← NAND(x, true) toggles x each step.
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|t| {
                s.spawn(move || {
                    let one = sk.encrypt_bit(true);
                    let start = t == 0;
                    let mut x = sk.encrypt_bit(start);
                    for _ in 0..500 {
                        x = ek.nand(&x, &one).unwrap();
                    }
                    // 500 toggles: back to the start value.
                    assert_eq!(sk.decrypt_bit(&x).unwrap(), start);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
}

#[test]
fn wrong_dimension_is_an_error() {
    let (_, ek) = keys();
    let bad = vsp_tfhe::Tlwe::constant(10, true);
    assert!(ek.nand(&bad, &bad).is_err());
}

#[test]
fn keys_and_ciphertexts_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<vsp_tfhe::EvalKey>();
    check::<vsp_tfhe::CircuitKey>();
    check::<vsp_tfhe::TrgswLvl1>();
    check::<vsp_tfhe::TrlweLvl1>();
    check::<vsp_tfhe::TlweLvl0>();
    check::<vsp_tfhe::SecretKey>();
}

#[test]
fn vsp2021_parameters_compute_gates() {
    let p = vsp_tfhe::Params::vsp2021();
    let sk = vsp_tfhe::SecretKey::generate(&p).unwrap();
    let ek = vsp_tfhe::EvalKey::generate(&sk).unwrap();
    for (x, y) in [(false, true), (true, true)] {
        let c = ek.nand(&sk.encrypt_bit(x), &sk.encrypt_bit(y)).unwrap();
        assert_eq!(sk.decrypt_bit(&c).unwrap(), !(x && y));
        let c = ek.xor(&sk.encrypt_bit(x), &sk.encrypt_bit(y)).unwrap();
        assert_eq!(sk.decrypt_bit(&c).unwrap(), x ^ y);
    }
    let r = vsp_tfhe::noise::predict(&p);
    assert!(r.log2_gate_failure < -30.0, "{r:?}");
}
