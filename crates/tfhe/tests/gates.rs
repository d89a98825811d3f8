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
    common::check_mux(|c, a, b| {
        let r = ek
            .mux(&sk.encrypt_bit(c), &sk.encrypt_bit(a), &sk.encrypt_bit(b))
            .unwrap();
        sk.decrypt_bit(&r).unwrap()
    });
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

/// A batch of bootstraps ([`vsp_tfhe::EvalKey::bootstrap_batch`]) gives each job what its own call
/// gives, bit for bit: batches of 1 to 11 mixing gates, cells, refreshes, gate MUXes, samples and
/// ring coefficients with two test values, to bits and to rings, on the FFT kernel this CPU runs;
/// and they decrypt to the gates' values. A wrong dimension in any job fails the batch.
#[test]
fn batched_bootstraps_equal_single_calls() {
    use vsp_tfhe::{Booted, Bootstrap, CellSpec, Gate2};
    let (sk, ek) = keys();
    let bits: Vec<(bool, Bit)> = [true, false, true, true, false]
        .into_iter()
        .map(|v| (v, sk.encrypt_bit(v)))
        .collect();
    let maj = CellSpec::new(&[1, 1, 1], 2).unwrap();
    let xor3 = CellSpec::new(&[2, 2, 2], 0).unwrap();
    let cell_ins: Vec<&Bit> = bits[..3].iter().map(|(_, c)| c).collect();
    let plain: Vec<bool> = bits[..3].iter().map(|(v, _)| *v).collect();
    let (a, b) = (&bits[0].1, &bits[1].1);
    // A ring holding 1 in coefficient 0 and 0 in coefficient 3 (as a memory's ring).
    let ring = sk.encrypt_trlwe_bits(&[true, false, false, false]).unwrap();
    // (job, ring, expected plain value)
    let jobs: Vec<(Bootstrap<'_>, bool, bool)> = vec![
        (Bootstrap::Gate2(Gate2::Nand, a, b), false, true),
        (Bootstrap::Cell(&maj, &cell_ins), true, maj.eval(&plain)),
        (
            Bootstrap::Gate2(Gate2::Xor, &bits[2].1, &bits[3].1),
            true,
            false,
        ),
        (Bootstrap::Refresh(&bits[4].1), false, false),
        (Bootstrap::Cell(&xor3, &cell_ins), false, xor3.eval(&plain)),
        // c ? a : b with c = 1, a = 1, b = 0, then with c = 0 (the other half decides).
        (
            Bootstrap::Mux(&bits[0].1, &bits[2].1, &bits[1].1),
            false,
            true,
        ),
        (
            Bootstrap::Mux(&bits[1].1, &bits[2].1, &bits[4].1),
            true,
            false,
        ),
        (Bootstrap::Sample(&bits[3].1, 1 << 30), true, true),
        (Bootstrap::Sample(&bits[1].1, 1 << 29), false, false),
        (Bootstrap::Coefficient(&ring, 0, 1 << 30), true, true),
        (Bootstrap::Coefficient(&ring, 3, 1 << 29), false, false),
    ];
    let sample = |x: &Bit, mu: u32, ring: bool| -> Booted {
        match ring {
            true => Booted::Ring(ek.bootstrap_to_trlwe(x, mu).unwrap()),
            false => {
                let l1 = ek.bootstrap_to_lvl1(x, mu).unwrap();
                Booted::Bit(ek.key_switch(&l1).unwrap())
            }
        }
    };
    let single = |job: Bootstrap<'_>, ring: bool| -> Booted {
        match (job, ring) {
            (Bootstrap::Gate2(g, x, y), false) => Booted::Bit(ek.gate2(g, x, y).unwrap()),
            (Bootstrap::Gate2(g, x, y), true) => Booted::Ring(ek.gate2_trlwe(g, x, y).unwrap()),
            (Bootstrap::Cell(s, ins), false) => Booted::Bit(ek.cell(s, ins).unwrap()),
            (Bootstrap::Cell(s, ins), true) => Booted::Ring(ek.cell_trlwe(s, ins).unwrap()),
            (Bootstrap::Refresh(x), false) => Booted::Bit(ek.bootstrap(x).unwrap()),
            (Bootstrap::Refresh(x), true) => Booted::Ring(ek.bit_to_trlwe(x).unwrap()),
            (Bootstrap::Mux(c, x, y), false) => Booted::Bit(ek.mux(c, x, y).unwrap()),
            (Bootstrap::Mux(c, x, y), true) => Booted::Ring(ek.mux_without_se(c, x, y).unwrap()),
            (Bootstrap::Sample(x, mu), ring) => sample(x, mu, ring),
            (Bootstrap::Coefficient(r, i, mu), ring) => {
                sample(&ek.extract_bit(r, i).unwrap(), mu, ring)
            }
        }
    };
    let want: Vec<Booted> = jobs.iter().map(|&(j, r, _)| single(j, r)).collect();
    for n in 1..=jobs.len() {
        // Batches rotated by one, so that every job sits at several places in a batch.
        for start in [0, 1] {
            let idx: Vec<usize> = (0..n).map(|i| (i + start) % jobs.len()).collect();
            let batch: Vec<(Bootstrap<'_>, bool)> =
                idx.iter().map(|&i| (jobs[i].0, jobs[i].1)).collect();
            let got = ek.bootstrap_batch(&batch).unwrap();
            assert_eq!(got.len(), n);
            for (&i, out) in idx.iter().zip(&got) {
                assert_eq!(out, &want[i], "job {i} in a batch of {n}");
                let bit = match out {
                    Booted::Bit(c) => c.clone(),
                    Booted::Ring(r) => ek.extract_bit(r, 0).unwrap(),
                };
                assert_eq!(sk.decrypt_bit(&bit).unwrap(), jobs[i].2, "job {i}");
            }
        }
    }
    let short = vsp_tfhe::Tlwe::constant(10, true);
    let bad = [
        (Bootstrap::Gate2(Gate2::And, a, b), false),
        (Bootstrap::Refresh(&short), true),
    ];
    assert!(ek.bootstrap_batch(&bad).is_err());
    let short_ring = vsp_tfhe::Trlwe::<u32>::zero(16);
    for bad in [
        Bootstrap::Coefficient(&short_ring, 0, 1 << 29),
        Bootstrap::Coefficient(&ring, 1 << 20, 1 << 29),
        Bootstrap::Mux(a, &short, b),
        Bootstrap::Sample(&short, 1 << 30),
    ] {
        assert!(ek
            .bootstrap_batch(&[(jobs[0].0, false), (bad, true)])
            .is_err());
    }
}
