//! What a lower-noise bootstrapping key costs: gadget 2^6 × 3 against the default 2^8 × 2, timed
//! alternately on this thread (CPU time, so a loaded machine does not skew the ratio), every result
//! decrypted, and the gate output's variance measured against `noise::predict`. A gate output of
//! 2.9e-6 instead of 2.2e-5 is what margin-1/16 cells (AND3, OR3, AND-OR in one bootstrap) need; see
//! docs/encrypted-cycle.md. `cargo run --release -p vsp-tfhe --example bk_gadget_cost`.
#[path = "../tests/common/mod.rs"]
mod common;
use common::thread_cpu as cpu;
use vsp_tfhe::{noise, EvalKey, Gadget, Params, SecretKey};

fn main() {
    let base = Params::default_128();
    let var = Params {
        bk1: Gadget {
            levels: 3,
            base_bits: 6,
        },
        ..base
    };
    let mut sets = Vec::new();
    for p in [base, var] {
        let sk = SecretKey::generate(&p).unwrap();
        let ek = EvalKey::generate(&sk).unwrap();
        sets.push((p, sk, ek));
    }
    let mut times = [Vec::new(), Vec::new()];
    let mut errs = [Vec::new(), Vec::new()];
    for round in 0..40 {
        for (i, (_, sk, ek)) in sets.iter().enumerate() {
            let bit = round % 2 == 0;
            let c = sk.encrypt_bit(bit);
            let t = cpu();
            let o = ek.bootstrap(&c).unwrap();
            times[i].push((cpu() - t).as_secs_f64() * 1e3);
            assert_eq!(sk.decrypt_bit(&o).unwrap(), bit);
            let ph = sk.phase_lvl0(&o).unwrap();
            errs[i].push(if ph > 0.0 { ph - 0.125 } else { ph + 0.125 });
        }
    }
    for (i, (p, _, ek)) in sets.iter().enumerate() {
        let mut t = times[i].clone();
        t.sort_by(f64::total_cmp);
        let m = errs[i].iter().sum::<f64>() / errs[i].len() as f64;
        let v = errs[i].iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (errs[i].len() - 1) as f64;
        let r = noise::predict(p);
        println!(
            "bk1 {}x2^{}: bootstrap {:.2} ms CPU (median of 40), key {} MB, gate output var measured {:.2e} model {:.2e}",
            p.bk1.levels, p.bk1.base_bits, t[t.len() / 2], ek.size_bytes() >> 20, v, r.gate_out
        );
    }
}
