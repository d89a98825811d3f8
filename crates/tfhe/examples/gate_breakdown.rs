//! Where one gate bootstrap goes, by thread CPU time: blind rotation (+ sample extraction) and key
//! switch, each timed in a loop of its own (keys then stay in the last-level cache as far as they fit)
//! and inside full NANDs (every key streamed once per gate, as the engine runs them); then the time per
//! CMUX step with the full 52 MB bootstrapping key against a 3 MB one (n0 = 48) that stays in cache,
//! which tells how memory-bound the rotation is on this machine. `small-only` as a second argument runs
//! only the latter (a compute-only profile for `perf record`).
//! `cargo run --release -p vsp-tfhe --example gate_breakdown [reps] [small-only]`; every timed result is
//! decrypted.
#[path = "../tests/common/mod.rs"]
mod common;
use std::time::Duration;

fn cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(
        s.split_whitespace()
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0),
    )
}

fn main() {
    let reps: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(40);
    if std::env::args().nth(2).as_deref() == Some("small-only") {
        small_only(reps);
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
