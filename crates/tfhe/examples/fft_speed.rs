//! Per-kernel speed of the negacyclic FFT and the Fourier-domain products, one thread.
//!
//! `cargo run --release -p vsp-tfhe --example fft_speed [rounds]`
//!
//! For N = 1024 and 2048 and every kernel this CPU has, prints the median over `rounds` rounds (kernels
//! alternate inside each round, so machine load hits them alike) of: forward transform, backward
//! transform, forward + backward, and `mul_acc_rows` over 2ℓ = 4 rows (the external product's MAC for
//! `Params::default_128`'s level-1 gadget) with the key in cache, and the same streaming through 630
//! different keys (40 MB at N = 1024, as the blind rotation does: memory-bound). Times in µs per call.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;
use vsp_tfhe::fft::{FftPlan, Kernel};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Mean µs per call of `f` over `reps` calls.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / reps as f64
}

/// `fft_speed loop <portable|avx2|avx512> <n> <fb|fwd|bwd|mac|macs|cmux|cmux7> <reps>` (fb: forward then
/// backward in place, a round trip with no copy; fwd/bwd: one transform plus a copy of the input back;
/// macs: mul_acc_rows streaming 630 keys; cmux: `TrgswFft::cmux_with` with the gadget 2^3 × 4 on
/// a TRGSW of random Fourier data, the shared plan's kernel; cmux7: the same with the RAM's
/// gadget 2^2 × 7): only that loop, for `perf stat`
/// (user-mode cycles are immune to the time-sharing that makes wall-clock medians noisy).
fn single_loop(args: &[String]) {
    if let Some((levels, base_bits)) = match args[4].as_str() {
        "cmux" => Some((4, 3)),
        "cmux7" => Some((7, 2)),
        _ => None,
    } {
        let gadget = vsp_tfhe::Gadget { levels, base_bits };
        cmux_loop(
            gadget,
            args[3].parse().expect("n"),
            args[5].parse().expect("reps"),
        );
        return;
    }
    let kernel = match args[2].as_str() {
        "portable" => Kernel::Portable,
        "avx2" => Kernel::Avx2Fma,
        _ => Kernel::Avx512,
    };
    let n: usize = args[3].parse().expect("n");
    let reps: usize = args[5].parse().expect("reps");
    let p = FftPlan::with_kernel(n, kernel);
    let input: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1021) as f64).collect();
    let mut buf = input.clone();
    let (x, key) = (vec![1.5; 4 * n], vec![2.5; 8 * n]);
    let (mut acc_a, mut acc_b) = (vec![0.0; n], vec![0.0; n]);
    let keys = if args[4] == "macs" { 630 } else { 1 };
    let big = vec![0.5; keys * 8 * n];
    let mut next = big.chunks_exact(8 * n).cycle();
    for _ in 0..reps {
        match args[4].as_str() {
            "fb" => {
                let (re, im) = buf.split_at_mut(n / 2);
                p.forward_in_place(re, im);
                p.backward_in_place(&mut buf);
            }
            "fwd" => {
                let (re, im) = buf.split_at_mut(n / 2);
                p.forward_in_place(re, im);
                buf.copy_from_slice(&input);
            }
            "bwd" => {
                p.backward_in_place(&mut buf);
                buf.copy_from_slice(&input);
            }
            "mac" => p.mul_acc_rows(&mut acc_a, &mut acc_b, &x, &key, 4),
            _ => {
                let k = next.next().unwrap_or(&key);
                p.mul_acc_rows(&mut acc_a, &mut acc_b, &x, k, 4)
            }
        }
        black_box((&buf, &acc_a, &acc_b));
    }
    println!("{:?} n={n} {} x{reps}", p.kernel(), args[4]);
}

/// `reps` CMUXes of degree n with `gadget` (see [`single_loop`]), printing the thread CPU time per
/// CMUX.
fn cmux_loop(gadget: vsp_tfhe::Gadget, n: usize, reps: usize) {
    use vsp_tfhe::{ExtScratch, TrgswFft, Trlwe};
    let data: Vec<f64> = (0..2 * gadget.levels as usize * 2 * n)
        .map(|i| ((i * 7919) % 2039) as f64 - 1019.0)
        .collect();
    let g = TrgswFft::<u32>::from_fourier_data(n, gadget, data).expect("TRGSW");
    let word = |i: usize, s: usize| (i as u32).wrapping_mul(2654435761).wrapping_add(s as u32);
    let poly = |s: usize| (0..n).map(|i| word(i, s)).collect::<Vec<u32>>();
    let d0 = Trlwe::from_polys(poly(1), poly(2)).expect("TRLWE");
    let d1 = Trlwe::from_polys(poly(3), poly(4)).expect("TRLWE");
    let mut s = ExtScratch::new(n, gadget);
    let t = common::thread_cpu();
    for _ in 0..reps {
        black_box(g.cmux_with(&d1, &d0, &mut s).expect("CMUX"));
    }
    println!(
        "cmux n={n} gadget 2^{} x {} {:?}: {:.2} µs per CMUX (thread CPU time)",
        gadget.base_bits,
        gadget.levels,
        vsp_tfhe::fft::plan(n).kernel(),
        (common::thread_cpu() - t).as_secs_f64() * 1e6 / reps as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 6 && args[1] == "loop" {
        single_loop(&args);
        return;
    }
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let kernels = Kernel::available();
    println!(
        "kernels: {kernels:?} (default {:?}, MAC {:?})",
        Kernel::detect(),
        Kernel::detect_mac()
    );
    println!(
        "| N | kernel | forward µs | backward µs | fwd+bwd µs | mul_acc_rows(4) µs | streamed µs |"
    );
    println!("|---|---|---|---|---|---|---|");
    for n in [1024usize, 2048] {
        let rows = 4;
        let plans: Vec<FftPlan> = kernels
            .iter()
            .map(|&k| FftPlan::with_kernel(n, k))
            .collect();
        let input: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1021) as f64 - 510.0).collect();
        let x: Vec<f64> = (0..rows * n).map(|i| ((i * 31) % 97) as f64).collect();
        let key: Vec<f64> = (0..rows * 2 * n)
            .map(|i| ((i * 131) % 1009) as f64 * 1e6)
            .collect();
        let keys = 630;
        let big: Vec<f64> = (0..keys * rows * 2 * n)
            .map(|i| ((i * 131) % 1009) as f64)
            .collect();
        let mut res = vec![[(); 5].map(|_| Vec::new()); plans.len()];
        let reps = 2000 * 1024 / n;
        let mut buf = input.clone();
        let (mut acc_a, mut acc_b) = (vec![0.0; n], vec![0.0; n]);
        for _ in 0..rounds {
            for (p, r) in plans.iter().zip(res.iter_mut()) {
                r[0].push(time(reps, || {
                    buf.copy_from_slice(&input);
                    let (re, im) = buf.split_at_mut(n / 2);
                    p.forward_in_place(re, im);
                    black_box(&buf);
                }));
                r[1].push(time(reps, || {
                    buf.copy_from_slice(&input);
                    p.backward_in_place(&mut buf);
                    black_box(&buf);
                }));
                r[2].push(time(reps, || {
                    buf.copy_from_slice(&input);
                    let (re, im) = buf.split_at_mut(n / 2);
                    p.forward_in_place(re, im);
                    p.backward_in_place(&mut buf);
                    black_box(&buf);
                }));
                r[3].push(time(reps, || {
                    p.mul_acc_rows(&mut acc_a, &mut acc_b, &x, &key, rows);
                    black_box((&acc_a, &acc_b));
                }));
                let t = Instant::now();
                for key in big.chunks_exact(rows * 2 * n) {
                    p.mul_acc_rows(&mut acc_a, &mut acc_b, &x, key, rows);
                    black_box((&acc_a, &acc_b));
                }
                r[4].push(t.elapsed().as_secs_f64() * 1e6 / keys as f64);
            }
        }
        for (p, r) in plans.iter().zip(res) {
            let [f, b, fb, mac, stream] = r.map(median);
            println!(
                "| {n} | {:?} | {f:.2} | {b:.2} | {fb:.2} | {mac:.2} | {stream:.2} |",
                p.kernel()
            );
        }
    }
}
