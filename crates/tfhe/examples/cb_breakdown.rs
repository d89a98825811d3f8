//! Where a circuit bootstrap goes, by thread CPU time: the level-2 many-LUT blind rotation (+ sample
//! extraction), the two private key switches (x ↦ −s1·x for the mask rows, identity for the body rows),
//! and the rest (the TRGSW rows' transforms), for one bit and for a batch of 8 (the batch streams the
//! private key-switching key once); then one circuit bootstrap at 1 and 2 threads
//! ([`vsp_tfhe::CircuitKey::circuit_bootstrap_batch_par`]): wall time, the process's CPU time and the
//! calling thread's (one of the two workers: on a loaded machine, where the two threads seldom run at
//! once, the wall time says little, and the calling thread's CPU time is its share of the work plus
//! its spinning at the barriers).
//! `cargo run --release -p vsp-tfhe --example cb_breakdown [reps]`; every result is checked by a CMUX
//! that must select the right pattern. `VSP_TFHE_KERNEL=avx2` selects the AVX2 kernels.
#[path = "../tests/common/mod.rs"]
mod common;
use std::time::{Duration, Instant};
use vsp_tfhe::{CircuitKey, Params, PrivFunction, SecretKey, Tlwe, TrgswFft};

use common::thread_cpu as cpu;

/// This process's CPU time (all threads), from /proc/self/stat (clock ticks of 10 ms).
fn cpu_process() -> Duration {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit_once(')')
        .map(|x| x.1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the ')'.
    Duration::from_millis((tick(11) + tick(12)) * 10)
}

fn check(sk: &SecretKey, g: &TrgswFft<u32>, bit: bool) {
    let bits1: Vec<bool> = (0..1024).map(|i| i % 3 == 0).collect();
    let bits0: Vec<bool> = (0..1024).map(|i| i % 5 == 0).collect();
    let d1 = sk.encrypt_trlwe_bits(&bits1).unwrap();
    let d0 = sk.encrypt_trlwe_bits(&bits0).unwrap();
    let out = sk.decrypt_trlwe_bits(&g.cmux(&d1, &d0).unwrap()).unwrap();
    assert_eq!(
        out,
        if bit { bits1 } else { bits0 },
        "circuit bootstrap of {bit}"
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let reps: usize = common::arg(1, 3);
    let p = Params::default_128();
    let sk = SecretKey::generate(&p).unwrap();
    let ck = CircuitKey::generate(&sk).unwrap();
    println!(
        "kernel {:?}; bk2 {:?}, privks {:?}, cb {:?}; circuit key {} MB",
        vsp_tfhe::fft::Kernel::detect(),
        p.bk2,
        p.privks,
        p.cb,
        ck.size_bytes() >> 20
    );
    for batch in [1usize, 8] {
        let (mut rot, mut minus, mut ident, mut total) = (vec![], vec![], vec![], vec![]);
        for r in 0..reps {
            let bits: Vec<bool> = (0..batch).map(|i| (i + r) % 3 != 1).collect();
            let cs: Vec<Tlwe<u32>> = bits.iter().map(|&b| sk.encrypt_bit(b)).collect();
            let refs: Vec<&Tlwe<u32>> = cs.iter().collect();
            let t = cpu();
            let lvl2 = ck.level2_gadget_samples_batch(&refs).unwrap();
            rot.push(cpu() - t);
            let t = cpu();
            let m = ck
                .private_key_switch(&lvl2, PrivFunction::MinusKey)
                .unwrap();
            minus.push(cpu() - t);
            let t = cpu();
            let i = ck
                .private_key_switch(&lvl2, PrivFunction::Identity)
                .unwrap();
            ident.push(cpu() - t);
            assert_eq!((m.len(), i.len()), (lvl2.len(), lvl2.len()));
            let t = cpu();
            let gs = ck.circuit_bootstrap_batch(&refs).unwrap();
            total.push(cpu() - t);
            for (g, &b) in gs.iter().zip(&bits) {
                check(&sk, g, b);
            }
        }
        let med = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2] / batch as u32
        };
        let (rot, minus, ident, total) = (
            med(&mut rot),
            med(&mut minus),
            med(&mut ident),
            med(&mut total),
        );
        let rest = total.saturating_sub(rot + minus + ident);
        println!(
            "batch {batch}: per CB (median of {reps}, thread CPU ms): total {:.2} = level-2 rotation + \
             extraction {:.2} ({:.0}%) + privKS −s1·x {:.2} ({:.0}%) + privKS identity {:.2} ({:.0}%) + \
             rest (TRGSW transforms) {:.2} ({:.0}%)",
            ms(total),
            ms(rot),
            100.0 * ms(rot) / ms(total),
            ms(minus),
            100.0 * ms(minus) / ms(total),
            ms(ident),
            100.0 * ms(ident) / ms(total),
            ms(rest),
            100.0 * ms(rest) / ms(total),
        );
    }
    // Latency of one circuit bootstrap at 1 and 2 threads (bit-identical results).
    for threads in [1usize, 2] {
        let (mut wall, mut cpu_all, mut cpu_me) = (vec![], vec![], vec![]);
        let mut first = None;
        for r in 0..reps {
            let bit = r % 2 == 0;
            let c = sk.encrypt_bit(bit);
            let (w, t, me) = (Instant::now(), cpu_process(), cpu());
            let g = ck.circuit_bootstrap_batch_par(&[&c], threads).unwrap();
            wall.push(w.elapsed());
            cpu_me.push(cpu() - me);
            cpu_all.push(cpu_process() - t);
            check(&sk, &g[0], bit);
            if r == 0 {
                first = Some((c, g));
            }
        }
        let (c, g) = first.unwrap();
        assert_eq!(
            ck.circuit_bootstrap_batch(&[&c]).unwrap(),
            g,
            "bit-identical"
        );
        wall.sort();
        cpu_all.sort();
        cpu_me.sort();
        println!(
            "one CB at {threads} thread(s): wall {:.2} ms, process CPU {:.0} ms (10 ms ticks), \
             calling thread's CPU {:.2} ms (medians of {reps})",
            ms(wall[reps / 2]),
            ms(cpu_all[reps / 2]),
            ms(cpu_me[reps / 2])
        );
    }
}
