//! Where one gate bootstrap goes, by thread CPU time: blind rotation (+ sample extraction) and key
//! switch, each timed in a loop of its own (keys then stay in the last-level cache as far as they fit)
//! and inside full NANDs (every key streamed once per gate, as the engine runs them); then the time per
//! CMUX step with the full 52 MB bootstrapping key against a 3 MB one (n0 = 48) that stays in cache,
//! which tells how memory-bound the rotation is on this machine; and NANDs in batches of 2 to 16
//! (`EvalKey::bootstrap_batch`) against one at a time (`nand_batched_ms_bB_tT=`, per gate, on T = 1
//! and 2 threads batching at once). `small-only` as a second argument runs only the cache-resident
//! rotation (a compute-only profile for `perf record`), `batch-only` only the batches.
//! `cargo run --release -p vsp-tfhe --example gate_breakdown [reps] [small-only|batch-only]`; every
//! timed result is decrypted.
#[path = "../tests/common/mod.rs"]
mod common;

use common::thread_cpu as cpu;

fn main() {
    let reps: u32 = common::arg(1, 40);
    if std::env::args().nth(2).as_deref() == Some("small-only") {
        small_only(reps);
        return;
    }
    if std::env::args().nth(2).as_deref() == Some("batch-only") {
        let (sk, ek) = common::keys();
        for threads in [1, 2] {
            batched(sk, ek, reps, threads);
        }
        return;
    }
    let (sk, ek) = common::keys();
    println!(
        "params {:?}\nkernel {:?}, eval key {} MB",
        ek.params(),
        vsp_tfhe::fft::Kernel::detect(),
        ek.size_bytes() >> 20
    );
    let a = sk.encrypt_bit(true);
    let b = sk.encrypt_bit(false);
    // NAND(1, 0) = 1.
    let t = cpu();
    for _ in 0..reps {
        let c = ek.nand(&a, &b).unwrap();
        assert!(sk.decrypt_bit(&c).unwrap());
    }
    let nand = (cpu() - t) / reps;
    let t = cpu();
    let mut l1 = Vec::new();
    for _ in 0..reps {
        l1.push(ek.bootstrap_to_lvl1(&a, 1 << 29).unwrap());
    }
    let br = (cpu() - t) / reps;
    let t = cpu();
    for x in &l1 {
        let c = ek.key_switch(x).unwrap();
        assert!(sk.decrypt_bit(&c).unwrap());
    }
    let ks = (cpu() - t) / reps;
    println!("nand {nand:?}; blind rotation + extract (loop) {br:?}; key switch (loop) {ks:?}");
    println!("nand - (br + ks) = {:?}", nand.saturating_sub(br + ks));
    for threads in [1, 2] {
        batched(sk, ek, reps, threads);
    }
    // The same rotation with a small level 0 (n0 = 48: a 3 MB bootstrapping key that stays in cache),
    // per CMUX step, against the full key streamed from memory: how memory-bound the rotation is.
    let small = vsp_tfhe::Params {
        n0: 48,
        ..*ek.params()
    };
    let sk2 = vsp_tfhe::SecretKey::generate(&small).unwrap();
    let ek2 = vsp_tfhe::EvalKey::generate(&sk2).unwrap();
    let a2 = sk2.encrypt_bit(true);
    let t = cpu();
    let reps2 = reps * 10;
    let mut l1 = Vec::new();
    for _ in 0..reps2 {
        l1.push(ek2.bootstrap_to_lvl1(&a2, 1 << 29).unwrap());
    }
    let br2 = (cpu() - t) / reps2;
    for x in &l1 {
        assert!(sk2.decrypt_bit(&ek2.key_switch(x).unwrap()).unwrap());
    }
    println!(
        "per CMUX step: streamed key {:.2} µs, key in cache {:.2} µs",
        br.as_secs_f64() * 1e6 / ek.params().n0 as f64,
        br2.as_secs_f64() * 1e6 / small.n0 as f64
    );
}

/// NANDs in batches of B ([`vsp_tfhe::EvalKey::bootstrap_batch`]: the rotations step by step
/// together, one read of each key per batch) against one at a time (B = 1: `nand`), per gate by
/// thread CPU time, on `threads` threads at once (each running the same batches; a barrier starts
/// every size on all of them together, as the engine's workers batch side by side): 5 rounds, each
/// running `reps` gates per thread (rounded up to whole batches) at every B in turn; medians over the
/// rounds and threads. Every result is checked.
fn batched(sk: &vsp_tfhe::SecretKey, ek: &vsp_tfhe::EvalKey, reps: u32, threads: usize) {
    use vsp_tfhe::{Booted, Bootstrap, Gate2};
    let sizes = [1usize, 2, 3, 4, 6, 8, 12, 16];
    let ins: Vec<_> = (0..16)
        .map(|i| (sk.encrypt_bit(i % 2 == 0), sk.encrypt_bit(i % 3 == 0)))
        .collect();
    let barrier = std::sync::Barrier::new(threads);
    let run = || {
        let mut per_gate: Vec<Vec<f64>> = vec![Vec::new(); sizes.len()];
        for _round in 0..5 {
            for (k, &b) in sizes.iter().enumerate() {
                barrier.wait();
                let batches = (reps as usize).div_ceil(b);
                let t = cpu();
                for _ in 0..batches {
                    let outs: Vec<_> = if b == 1 {
                        vec![ek.nand(&ins[0].0, &ins[0].1).unwrap()]
                    } else {
                        let jobs: Vec<_> = ins[..b]
                            .iter()
                            .map(|(x, y)| (Bootstrap::Gate2(Gate2::Nand, x, y), false))
                            .collect();
                        ek.bootstrap_batch(&jobs)
                            .unwrap()
                            .into_iter()
                            .map(|o| match o {
                                Booted::Bit(c) => c,
                                Booted::Ring(_) => panic!("a ring for a bit job"),
                            })
                            .collect()
                    };
                    for (c, (x, y)) in outs.iter().zip(&ins) {
                        let want = !(sk.decrypt_bit(x).unwrap() && sk.decrypt_bit(y).unwrap());
                        assert_eq!(sk.decrypt_bit(c).unwrap(), want);
                    }
                }
                per_gate[k].push((cpu() - t).as_secs_f64() * 1e3 / (batches * b) as f64);
            }
        }
        per_gate
    };
    let mut per_gate: Vec<Vec<f64>> = vec![Vec::new(); sizes.len()];
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads).map(|_| s.spawn(run)).collect();
        for h in hs {
            for (all, mine) in per_gate.iter_mut().zip(h.join().unwrap()) {
                all.extend(mine);
            }
        }
    });
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let one = med(&mut per_gate[0].clone());
    for (k, &b) in sizes.iter().enumerate() {
        let m = med(&mut per_gate[k]);
        println!(
            "nand_batched_ms_b{b}_t{threads}={m:.3} (per gate, thread CPU, median of 5 rounds × \
             {threads} threads; {:.3} of B = 1)",
            m / one
        );
    }
}

/// Only the cache-resident rotation (for `perf record`: the compute part of the profile alone).
fn small_only(reps: u32) {
    let small = vsp_tfhe::Params {
        n0: 48,
        ..vsp_tfhe::Params::default_128()
    };
    let sk = vsp_tfhe::SecretKey::generate(&small).unwrap();
    let ek = vsp_tfhe::EvalKey::generate(&sk).unwrap();
    let a = sk.encrypt_bit(true);
    let t = cpu();
    for _ in 0..reps * 10 {
        let x = ek.bootstrap_to_lvl1(&a, 1 << 29).unwrap();
        assert!(sk.decrypt_bit(&ek.key_switch(&x).unwrap()).unwrap());
    }
    println!(
        "{:?} per rotation + key switch (n0 = 48)",
        (cpu() - t) / (reps * 10)
    );
}
