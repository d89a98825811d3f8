//! Thread CPU time of the private key switches alone, per circuit-bootstrapped bit, for a batch of 1
//! and of 8 bits (means over many calls, so the 4 ms scheduler ticks average out); the batch's
//! outputs are checked against the same samples switched one bit at a time.
//! `cargo run --release -p vsp-tfhe --example privks_speed [reps]`.
#[path = "../tests/common/mod.rs"]
mod common;
use common::thread_cpu as cpu;
use vsp_tfhe::{CircuitKey, Params, PrivFunction, SecretKey, Tlwe};

fn main() {
    let reps: usize = common::arg(1, 40);
    let p = Params::default_128();
    let sk = SecretKey::generate(&p).expect("keygen");
    let ck = CircuitKey::generate(&sk).expect("circuit key");
    for batch in [1usize, 8] {
        let cs: Vec<Tlwe<u32>> = (0..batch).map(|i| sk.encrypt_bit(i % 3 != 1)).collect();
        let refs: Vec<&Tlwe<u32>> = cs.iter().collect();
        let lvl2 = ck.level2_gadget_samples_batch(&refs).expect("rotation");
        let calls = (reps * 8 / batch).max(1);
        let t = cpu();
        for _ in 0..calls {
            for f in [PrivFunction::MinusKey, PrivFunction::Identity] {
                std::hint::black_box(ck.private_key_switch(&lvl2, f).expect("privks"));
            }
        }
        let per_bit = (cpu() - t).as_secs_f64() * 1e3 / (calls * batch) as f64;
        let levels = lvl2.len() / batch;
        for f in [PrivFunction::MinusKey, PrivFunction::Identity] {
            let all = ck.private_key_switch(&lvl2, f).expect("privks");
            for (b, one) in lvl2.chunks(levels).enumerate() {
                let single = ck.private_key_switch(one, f).expect("privks");
                assert_eq!(single, all[b * levels..(b + 1) * levels], "{f:?}, bit {b}");
            }
        }
        println!("privks_ms_per_bit_batch{batch}={per_bit:.3} (both functions, thread CPU, {calls} calls)");
    }
}
