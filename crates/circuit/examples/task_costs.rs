//! The measurements behind `TfheBackend::task_cost` and the cost model's split circuit bootstrap
//! (`vsp_circuit::costmodel::CbSplit`), in one process at the default parameters:
//!
//! * thread CPU time (`/proc/thread-self/schedstat`, counted in scheduler ticks: each sample times
//!   enough calls to last ≫ 4 ms) of one gate bootstrap (NAND: the unit, 10
//!   cost units), a MUX, a MUX without its extraction and key switch (a RAM write value), a bootstrap
//!   to a ring (a lift, a refresh, a read's extraction), CMUXes with a ROM (`cb`) and a RAM
//!   (`cb_ram`) selector, and circuit-bootstrapping batches of 1, 2, 4 and 8 bits with both gadgets
//!   (fitted as a fixed part plus a part per bit);
//! * the wall time of a batch on 1 thread and split over `threads` threads
//!   (`CircuitKey::circuit_bootstrap_batch_par`, bit-identical), alternated rep by rep: the median
//!   and the minimum of the ratio (on a loaded machine the split's threads seldom run at once; the
//!   minimum is the nearest to an idle machine), and the calling thread's CPU time in the split over
//!   the one-thread run's: its share of the work, i.e. the split's latency where every thread has a
//!   core of its own.
//!
//! `cargo run --release -p vsp-circuit --example task_costs -- [reps] [threads]` (default 5 and 2).
use std::time::{Duration, Instant};

use vsp_tfhe::{CircuitKey, EvalKey, ExtScratch, Params, SecretKey, Tlwe, TrgswFft};

#[path = "../../tfhe/tests/common/mod.rs"]
mod common;
use common::thread_cpu as cpu;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median over `reps` samples of the thread CPU milliseconds of one call of `f`, a sample timing
/// `times` calls (the kernel counts a thread's time in scheduler ticks of a few ms, so a sample
/// should last ≫ 4 ms).
fn cpu_ms<R>(reps: usize, times: usize, mut f: impl FnMut(usize) -> R) -> f64 {
    median(
        (0..reps)
            .map(|r| {
                let t = cpu();
                for _ in 0..times {
                    std::hint::black_box(f(r));
                }
                ms(cpu() - t) / times as f64
            })
            .collect(),
    )
}

fn main() {
    let arg = |i: usize, d: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(d)
    };
    let (reps, threads) = (arg(1, 5).max(1), arg(2, 2).max(2));
    let p = Params::default_128();
    let sk = SecretKey::generate(&p).unwrap();
    let ek = EvalKey::generate(&sk).unwrap();
    let ck = CircuitKey::generate(&sk).unwrap();
    println!(
        "kernel {:?}; cb {:?}, cb_ram {:?}; {reps} reps, medians of thread CPU time",
        vsp_tfhe::fft::Kernel::detect(),
        p.cb,
        p.cb_ram
    );
    let bits: Vec<Tlwe<u32>> = (0..8).map(|i| sk.encrypt_bit(i % 3 != 1)).collect();
    let (a, b, c) = (&bits[0], &bits[1], &bits[2]);
    let nand = cpu_ms(reps, 25, |_| ek.nand(a, b).unwrap());
    let mux = cpu_ms(reps, 10, |_| ek.mux(a, b, c).unwrap());
    let mux_no_se = cpu_ms(reps, 10, |_| ek.mux_without_se(a, b, c).unwrap());
    let lift = cpu_ms(reps, 25, |_| ek.bootstrap_to_trlwe(a, 1 << 30).unwrap());
    let ring = ek.bootstrap_to_trlwe(a, 1 << 30).unwrap();
    let extract = cpu_ms(reps, 2000, |_| ek.extract_bit(&ring, 0).unwrap());
    let rom_sel: TrgswFft<u32> = ck.circuit_bootstrap_batch(&[b]).unwrap().remove(0);
    let ram_sel: TrgswFft<u32> = ck.circuit_bootstrap_batch_ram(&[b]).unwrap().remove(0);
    let cmux = |s: &TrgswFft<u32>| {
        let mut scratch = ExtScratch::new(p.n1, s.gadget());
        cpu_ms(reps, 10_000, |_| {
            s.cmux_with(&ring, &ring, &mut scratch).unwrap()
        })
    };
    let (cmux_rom, cmux_ram) = (cmux(&rom_sel), cmux(&ram_sel));
    let unit = nand / 10.0;
    println!("| operation | thread CPU ms | cost units (NAND = 10) |");
    println!("|---|---|---|");
    for (what, t) in [
        ("NAND (gate bootstrap)", nand),
        ("MUX", mux),
        (
            "MUX without extraction and key switch (RAM write value)",
            mux_no_se,
        ),
        ("bootstrap to a ring (lift, refresh, read extraction)", lift),
        ("sample extraction", extract),
        ("CMUX, ROM selector (cb)", cmux_rom),
        ("CMUX, RAM selector (cb_ram)", cmux_ram),
    ] {
        println!("| {what} | {t:.3} | {:.4} |", t / unit);
    }
    // Circuit-bootstrapping batches, both gadgets: thread CPU on one thread.
    for (name, ram) in [("cb", false), ("cb_ram", true)] {
        let run = |n: usize, t: usize| {
            let refs: Vec<&Tlwe<u32>> = bits[..n].iter().collect();
            match (ram, t) {
                (false, 1) => ck.circuit_bootstrap_batch(&refs),
                (true, 1) => ck.circuit_bootstrap_batch_ram(&refs),
                (false, t) => ck.circuit_bootstrap_batch_par(&refs, t),
                (true, t) => ck.circuit_bootstrap_batch_ram_par(&refs, t),
            }
            .unwrap()
        };
        let sizes = [1usize, 2, 4, 8];
        let t: Vec<f64> = sizes
            .iter()
            .map(|&n| cpu_ms(reps, 8 / n, |_| run(n, 1)))
            .collect();
        // Least squares: t = fixed + per_bit × n.
        let k = sizes.len() as f64;
        let (sx, sy) = (sizes.iter().sum::<usize>() as f64, t.iter().sum::<f64>());
        let sxx: f64 = sizes.iter().map(|&n| (n * n) as f64).sum();
        let sxy: f64 = sizes.iter().zip(&t).map(|(&n, y)| n as f64 * y).sum();
        let per_bit = (k * sxy - sx * sy) / (k * sxx - sx * sx);
        let fixed = (sy - per_bit * sx) / k;
        println!(
            "{name} batches of {sizes:?}: {} thread CPU ms; fit {fixed:.2} + {per_bit:.2} per bit = \
             {:.2} + {:.2} per bit units",
            t.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(", "),
            fixed / unit,
            per_bit / unit
        );
        // Split over threads: wall time against one thread, alternated.
        // At most one thread per bit, as the engine splits (a batch smaller than its threads
        // splits each rotation over two threads with barriers; the engine leaves that out).
        for n in sizes.into_iter().filter(|&n| n >= threads) {
            assert_eq!(
                run(n, threads),
                run(n, 1),
                "{name}: {n} bits split are bit-identical"
            );
            let (mut ratio, mut one, mut split, mut own) = (vec![], vec![], vec![], vec![]);
            let times = 8 / n;
            for _ in 0..reps {
                let (w, c) = (Instant::now(), cpu());
                for _ in 0..times {
                    std::hint::black_box(run(n, 1));
                }
                let (w1, c1) = (ms(w.elapsed()), ms(cpu() - c));
                let (w, c) = (Instant::now(), cpu());
                for _ in 0..times {
                    std::hint::black_box(run(n, threads));
                }
                let (wt, ct) = (ms(w.elapsed()), ms(cpu() - c));
                one.push(w1);
                split.push(wt);
                ratio.push(wt / w1);
                own.push(ct / c1);
            }
            let least = ratio.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "{name} batch of {n} on {threads} threads: wall {:.2} ms against {:.2} on one per {times} \
                 (medians); latency ratio median {:.3}, least {least:.3}; the calling thread's CPU \
                 time over the one-thread run's (its share of the split, barrier waits included: \
                 the latency on idle cores) median {:.3}",
                median(split),
                median(one),
                median(ratio),
                median(own)
            );
        }
    }
}
