//! Circuit bootstrapping, CMUX trees, TRLWE helpers and "HomMUX without SE and IKS".

mod common;

use std::sync::OnceLock;
use vsp_tfhe::{CircuitKey, EvalKey, Params, SecretKey, Trlwe};

fn keys() -> &'static (SecretKey, EvalKey, CircuitKey) {
    static K: OnceLock<(SecretKey, EvalKey, CircuitKey)> = OnceLock::new();
    K.get_or_init(|| {
        let sk = SecretKey::generate(&Params::default_128()).unwrap();
        let ek = EvalKey::generate(&sk).unwrap();
        let ck = CircuitKey::generate(&sk).unwrap();
        (sk, ek, ck)
    })
}

fn cells(sk: &SecretKey, n: usize) -> Vec<(Vec<bool>, Trlwe<u32>)> {
    (0..n)
        .map(|i| {
            // The low bits spell the index (cells differ), the rest a pattern.
            let bits: Vec<bool> = (0..16)
                .map(|j| {
                    if j < 4 {
                        (i >> j) & 1 == 1
                    } else {
                        (i * 7 + j * 3) % 5 < 2
                    }
                })
                .collect();
            let c = sk.encrypt_trlwe_bits(&bits).unwrap();
            (bits, c)
        })
        .collect()
}

#[test]
fn circuit_bootstrap_and_inverse_select() {
    let (sk, _, ck) = keys();
    let c = cells(sk, 2);
    for m in [false, true] {
        let (g, ginv) = ck.circuit_bootstrap(&sk.encrypt_bit(m)).unwrap();
        let sel = g.cmux(&c[1].1, &c[0].1).unwrap();
        let want = if m { &c[1].0 } else { &c[0].0 };
        assert_eq!(&sk.decrypt_trlwe_bits(&sel).unwrap()[..16], &want[..]);
        let sel = ginv.cmux(&c[1].1, &c[0].1).unwrap();
        let want = if m { &c[0].0 } else { &c[1].0 };
        assert_eq!(&sk.decrypt_trlwe_bits(&sel).unwrap()[..16], &want[..]);
    }
}

#[test]
fn cmux_tree_reads_every_address() {
    let (sk, ek, ck) = keys();
    let mem = cells(sk, 8);
    // The 8 cells must differ, or reading the wrong one could pass.
    for (i, a) in mem.iter().enumerate() {
        assert!(mem[..i].iter().all(|b| b.0 != a.0), "cells {i} repeats");
    }
    for addr in 0..8usize {
        let sels: Vec<_> = (0..3)
            .map(|b| {
                ck.circuit_bootstrap_one(&sk.encrypt_bit((addr >> b) & 1 == 1))
                    .unwrap()
            })
            .collect();
        // Binary CMUX tree, least significant address bit first.
        let mut level: Vec<Trlwe<u32>> = mem.iter().map(|(_, c)| c.clone()).collect();
        for sel in &sels {
            level = level
                .chunks(2)
                .map(|p| sel.cmux(&p[1], &p[0]).unwrap())
                .collect();
        }
        assert_eq!(
            &sk.decrypt_trlwe_bits(&level[0]).unwrap()[..16],
            &mem[addr].0[..]
        );
        // Sample extraction + identity key switch back to a gate ciphertext.
        for i in [0usize, 3, 15] {
            let bit = ek.extract_bit(&level[0], i).unwrap();
            assert_eq!(
                sk.decrypt_bit(&bit).unwrap(),
                mem[addr].0[i],
                "addr {addr} bit {i}"
            );
        }
    }
}

#[test]
fn fresh_trgsw_cmux_and_rotation() {
    let (sk, _, _) = keys();
    let c = cells(sk, 2);
    for m in [0i64, 1] {
        let g = sk.encrypt_trgsw_lvl1(m);
        let out = g.cmux(&c[1].1, &c[0].1).unwrap();
        assert_eq!(
            &sk.decrypt_trlwe_bits(&out).unwrap()[..16],
            &c[m as usize].0[..]
        );
    }
    // X^-3 brings coefficient 3 to position 0; X^(N) negates.
    let r = c[0].1.mul_monomial(-3);
    assert_eq!(sk.decrypt_trlwe_bits(&r).unwrap()[0], c[0].0[3]);
    let r = c[0].1.mul_monomial(1024);
    assert_eq!(sk.decrypt_trlwe_bits(&r).unwrap()[5], !c[0].0[5]);
    let t = Trlwe::<u32>::trivial_bits(1024, &[true, false, true]).unwrap();
    assert_eq!(
        &sk.decrypt_trlwe_bits(&t).unwrap()[..3],
        &[true, false, true]
    );
}

#[test]
fn hommux_without_se_and_refresh() {
    let (sk, ek, _) = keys();
    common::check_mux(|c, a, b| {
        let r = ek
            .mux_without_se(&sk.encrypt_bit(c), &sk.encrypt_bit(a), &sk.encrypt_bit(b))
            .unwrap();
        sk.decrypt_trlwe_bits(&r).unwrap()[0]
    });
    for m in [false, true] {
        let t = ek.bit_to_trlwe(&sk.encrypt_bit(m)).unwrap();
        assert_eq!(sk.decrypt_trlwe_bits(&t).unwrap()[0], m);
        assert_eq!(sk.decrypt_bit(&ek.extract_bit(&t, 0).unwrap()).unwrap(), m);
    }
}

#[test]
fn batched_circuit_bootstrapping_equals_one_at_a_time() {
    let (sk, _, ck) = keys();
    let bits = [true, false, true];
    let cs: Vec<_> = bits.iter().map(|&b| sk.encrypt_bit(b)).collect();
    let refs: Vec<_> = cs.iter().collect();
    let batch = ck.circuit_bootstrap_batch(&refs).unwrap();
    assert_eq!(batch.len(), 3);
    let (when1, when0) = (
        sk.encrypt_trlwe_bits(&[true; 16]).unwrap(),
        sk.encrypt_trlwe_bits(&[false; 16]).unwrap(),
    );
    for ((g, c), &b) in batch.iter().zip(&cs).zip(&bits) {
        // The private key switch is deterministic: the same TRGSW, so the same CMUX output.
        let one = ck.circuit_bootstrap_one(c).unwrap();
        let (x, y) = (
            g.cmux(&when1, &when0).unwrap(),
            one.cmux(&when1, &when0).unwrap(),
        );
        assert_eq!((x.a(), x.b()), (y.a(), y.b()));
        assert_eq!(sk.decrypt_trlwe_bits(&x).unwrap()[0], b);
    }
}

/// The multi-threaded circuit bootstrap gives the one-thread batch's TRGSWs bit for bit, in both of
/// its modes (fewer bits than threads: each level-2 rotation on two threads; otherwise the bits split
/// into groups) and for both output gadgets; each TRGSW selects the right cell.
#[test]
fn parallel_circuit_bootstrapping_is_bit_identical() {
    let (sk, _, ck) = keys();
    let c = cells(sk, 2);
    for (bits, threads) in [(1usize, 2usize), (1, 3), (3, 2), (2, 4)] {
        let vals: Vec<bool> = (0..bits).map(|i| (i + threads) % 2 == 0).collect();
        let cs: Vec<_> = vals.iter().map(|&b| sk.encrypt_bit(b)).collect();
        let refs: Vec<_> = cs.iter().collect();
        for ram in [false, true] {
            let (seq, par) = if ram {
                (
                    ck.circuit_bootstrap_batch_ram(&refs).unwrap(),
                    ck.circuit_bootstrap_batch_ram_par(&refs, threads).unwrap(),
                )
            } else {
                (
                    ck.circuit_bootstrap_batch(&refs).unwrap(),
                    ck.circuit_bootstrap_batch_par(&refs, threads).unwrap(),
                )
            };
            assert_eq!(par.len(), bits);
            assert!(
                par == seq,
                "{bits} bits on {threads} threads (ram {ram}): not bit-identical"
            );
            for (g, &v) in par.iter().zip(&vals) {
                let sel = g.cmux(&c[1].1, &c[0].1).unwrap();
                let want = if v { &c[1].0 } else { &c[0].0 };
                assert_eq!(&sk.decrypt_trlwe_bits(&sel).unwrap()[..16], &want[..]);
            }
        }
    }
    // Hostile input: a TLWE of the wrong dimension is an error on every path.
    let bad = vsp_tfhe::Tlwe::from_words(vec![0u32; 17]).unwrap();
    for threads in [1, 2, 5] {
        assert!(ck.circuit_bootstrap_batch_par(&[&bad], threads).is_err());
        assert!(ck
            .circuit_bootstrap_batch_par(&[&bad, &bad, &bad], threads)
            .is_err());
    }
}

/// A circuit bootstrap decides the sign of its input's phase as a gate bootstrap does, so the
/// circuit bootstrap of a gate's or a cell's linear combination (`gate2_input`, `cell_input`, not
/// bootstrapped) selects exactly as the bootstrapped gate would: what `vsp_circuit`'s planner uses
/// for selects that are gates. Every two-input gate, a majority, a 3-input XOR and a weight-2 cell,
/// every input combination, with both gadgets (the circuit's and the RAM's wider stride).
#[test]
fn circuit_bootstrap_of_a_gate_linear_combination_selects_as_the_gate() {
    use vsp_tfhe::{CellSpec, Gate2};
    let (sk, ek, ck) = keys();
    let c = cells(sk, 2);
    assert_ne!(c[0].0, c[1].0);
    let check = |lin: &vsp_tfhe::Tlwe<u32>, want: bool, what: &str| {
        let g = ck.circuit_bootstrap_one(lin).unwrap();
        let ram = ck.circuit_bootstrap_batch_ram(&[lin]).unwrap().remove(0);
        for (name, t) in [("circuit", &g), ("RAM", &ram)] {
            let out = sk
                .decrypt_trlwe_bits(&t.cmux(&c[1].1, &c[0].1).unwrap())
                .unwrap();
            let expect = if want { &c[1].0 } else { &c[0].0 };
            assert_eq!(&out[..16], &expect[..], "{what} with the {name} gadget");
        }
    };
    for g in Gate2::ALL {
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            let (x, y) = (sk.encrypt_bit(a), sk.encrypt_bit(b));
            let lin = ek.gate2_input(g, &x, &y).unwrap();
            let want = g.eval_u64(u64::from(a), u64::from(b)) & 1 == 1;
            // The bootstrapped gate agrees with the truth table, so the select is checked against it.
            assert_eq!(sk.decrypt_bit(&ek.gate2(g, &x, &y).unwrap()).unwrap(), want);
            check(&lin, want, &format!("{g:?}({a}, {b})"));
        }
    }
    let specs = [
        CellSpec::new(&[1, 1, 1], 2).unwrap(),
        CellSpec::new(&[2, 2, 2], 0).unwrap(),
        CellSpec::new(&[2, 1, -1], 1).unwrap(),
    ];
    for spec in specs {
        for m in 0..8u32 {
            let bits: Vec<bool> = (0..3).map(|i| (m >> i) & 1 == 1).collect();
            let cts: Vec<_> = bits.iter().map(|&b| sk.encrypt_bit(b)).collect();
            let refs: Vec<_> = cts.iter().collect();
            let lin = ek.cell_input(&spec, &refs).unwrap();
            check(&lin, spec.eval(&bits), &format!("{spec:?}{bits:?}"));
        }
    }
}
