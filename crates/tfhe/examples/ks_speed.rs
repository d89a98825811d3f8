//! Thread CPU time of the identity key switch (level 1 → 0) alone, one sample at a time
//! ([`vsp_tfhe::EvalKey::key_switch`]: the whole key streamed from memory per call), and of full NANDs
//! in batches of 8 ([`vsp_tfhe::EvalKey::bootstrap_batch`], one key switch pass per batch), per call
//! and per gate: medians over `rounds` rounds. Every result is decrypted.
//! `cargo run --release -p vsp-tfhe --example ks_speed [rounds]`
#[path = "../tests/common/mod.rs"]
mod common;

use common::thread_cpu as cpu;
use vsp_tfhe::{Booted, Bootstrap, Gate2};

fn main() {
    let rounds: u32 = common::arg(1, 7);
    let (sk, ek) = common::keys();
    let l1: Vec<_> = (0..16)
        .map(|i| {
            ek.bootstrap_to_lvl1(&sk.encrypt_bit(i % 3 == 0), 1 << 29)
                .unwrap()
        })
        .collect();
    let ins: Vec<_> = (0..8)
        .map(|i| (sk.encrypt_bit(i % 2 == 0), sk.encrypt_bit(i % 3 == 0)))
        .collect();
    let (mut ks, mut nand8) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = cpu();
        for _ in 0..25 {
            for (i, x) in l1.iter().enumerate() {
                let c = ek.key_switch(x).unwrap();
                assert_eq!(sk.decrypt_bit(&c).unwrap(), i % 3 == 0);
            }
        }
        ks.push((cpu() - t).as_secs_f64() * 1e3 / 400.0);
        let t = cpu();
        for _ in 0..4 {
            let jobs: Vec<_> = ins
                .iter()
                .map(|(x, y)| (Bootstrap::Gate2(Gate2::Nand, x, y), false))
                .collect();
            for (o, (x, y)) in ek.bootstrap_batch(&jobs).unwrap().iter().zip(&ins) {
                let Booted::Bit(c) = o else {
                    panic!("a ring for a bit job")
                };
                let want = !(sk.decrypt_bit(x).unwrap() && sk.decrypt_bit(y).unwrap());
                assert_eq!(sk.decrypt_bit(c).unwrap(), want);
            }
        }
        nand8.push((cpu() - t).as_secs_f64() * 1e3 / 32.0);
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "key_switch_ms={:.4} nand_batched_ms_b8={:.4} (thread CPU, medians of {rounds} rounds)",
        med(ks),
        med(nand8)
    );
}
