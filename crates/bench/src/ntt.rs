//! `ntt` suite: our negacyclic NTT against `tfhe-ntt` and `fhe-math`, forward and inverse,
//! N ∈ {4096, 16384, 65536}, a 50-bit and a 62-bit prime, one thread, one process. "vsp-math
//! default" is `NttTable::new` as BFV and CKKS build it (kernel chosen by `Backend::best` for this
//! CPU and prime, named in the row); the per-kernel rows pick each kernel this CPU has explicitly.
//! Every implementation is checked before it is timed: ours against the portable kernel (forward and
//! round trip), the peers by a negacyclic product through their own transforms. Inverse columns
//! are equal work (all include the N⁻¹ scaling; tfhe-ntt's is `inv` + `normalize`).
//! Ends with `ntt_ratio_vs_tfhe_ntt=<ours default / tfhe-ntt, forward, N=4096, 50-bit>`.

use std::hint::black_box;
use std::time::Instant;

use anyhow::{anyhow, Context};
use vsp_math::{generate_ntt_primes, Backend, Modulus, NttTable};

/// Time of one call in µs: the best of 41 batches of ~1 ms each after a warm-up. The machine is
/// shared; a batch that fits in one scheduler time slice measures the code, a long one the load.
/// Every implementation is timed the same way, interleaved in one process.
fn time_us(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut iters = 0u64;
    while start.elapsed().as_millis() < 20 || iters < 3 {
        f();
        iters += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / iters as f64;
    let batch = ((0.001 / per_call) as u64).max(1);
    (0..41)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / batch as f64
        })
        .fold(f64::INFINITY, f64::min)
}

struct Row {
    n: usize,
    bits: u32,
    name: String,
    fwd: f64,
    inv: f64,
}

pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut headline = None;
    for &n in &[4096usize, 16384, 65536] {
        for &bits in &[50u32, 62] {
            let p = generate_ntt_primes(bits, n, 1)?[0];
            let q = Modulus::new(p)?;
            let data: Vec<u64> = (0..n as u64)
                .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % p)
                .collect();
            // Every timed table of ours must agree with the portable kernel (forward and round trip).
            let mut reference = data.clone();
            NttTable::new(n, q)?
                .with_backend(Backend::Portable)?
                .forward(&mut reference)?;
            let check = |table: &NttTable| -> anyhow::Result<()> {
                let mut x = data.clone();
                table.forward(&mut x)?;
                anyhow::ensure!(
                    x == reference,
                    "{} forward disagrees with portable (N = {n}, q = {p})",
                    table.backend().name()
                );
                table.inverse(&mut x)?;
                anyhow::ensure!(x == data, "{} round trip fails", table.backend().name());
                Ok(())
            };
            let first = rows.len();
            for backend in Backend::available(&q) {
                let table = NttTable::new(n, q)?.with_backend(backend)?;
                check(&table)?;
                let mut buf = data.clone();
                let fwd = time_us(|| table.forward(black_box(&mut buf)).unwrap_or(()));
                let inv = time_us(|| table.inverse(black_box(&mut buf)).unwrap_or(()));
                rows.push(Row {
                    n,
                    bits,
                    name: format!("vsp-math {}", backend.name()),
                    fwd,
                    inv,
                });
            }
            // The default path (what BFV and CKKS run), timed right before the peers it is compared
            // with and listed first.
            let table = NttTable::new(n, q)?;
            check(&table)?;
            let mut buf = data.clone();
            let default_fwd = time_us(|| table.forward(black_box(&mut buf)).unwrap_or(()));
            let default_inv = time_us(|| table.inverse(black_box(&mut buf)).unwrap_or(()));
            rows.insert(
                first,
                Row {
                    n,
                    bits,
                    name: format!("**vsp-math default** (→ {})", table.backend().name()),
                    fwd: default_fwd,
                    inv: default_inv,
                },
            );
            // The peers order their evaluations differently, so each is checked by what its
            // transforms are for: the negacyclic product of `data` and `other` through its own
            // forward, pointwise product and inverse must equal ours through the portable kernel.
            let other: Vec<u64> = data.iter().map(|&x| (x ^ 0x5555) % p).collect();
            let product = {
                let t = NttTable::new(n, q)?.with_backend(Backend::Portable)?;
                let (mut x, mut y) = (data.clone(), other.clone());
                t.forward(&mut x)?;
                t.forward(&mut y)?;
                x.iter_mut().zip(&y).for_each(|(u, &v)| *u = q.mul(*u, v));
                t.inverse(&mut x)?;
                x
            };
            let plan = tfhe_ntt::prime64::Plan::try_new(n, p)
                .ok_or_else(|| anyhow!("tfhe-ntt rejects {p}"))?;
            {
                let (mut x, mut y) = (data.clone(), other.clone());
                plan.fwd(&mut x);
                plan.fwd(&mut y);
                plan.mul_assign_normalize(&mut x, &y);
                plan.inv(&mut x);
                anyhow::ensure!(x == product, "tfhe-ntt product wrong (N = {n}, q = {p})");
            }
            let mut buf = data.clone();
            let t_fwd = time_us(|| plan.fwd(black_box(&mut buf)));
            // Equal work: our inverse (and fhe-math's) include the N⁻¹ scaling, tfhe-ntt's `inv`
            // does not, so its column times `inv` + `normalize`.
            let t_inv = time_us(|| {
                plan.inv(black_box(&mut buf));
                plan.normalize(&mut buf);
            });
            rows.push(Row {
                n,
                bits,
                name: "tfhe-ntt (inverse: inv + normalize)".into(),
                fwd: t_fwd,
                inv: t_inv,
            });
            let fm = fhe_math::zq::Modulus::new(p).map_err(|e| anyhow!("fhe-math modulus: {e}"))?;
            let op =
                fhe_math::ntt::NttOperator::new(&fm, n).context("fhe-math rejects the prime")?;
            {
                let (mut x, mut y) = (data.clone(), other.clone());
                op.forward(&mut x);
                op.forward(&mut y);
                x.iter_mut()
                    .zip(&y)
                    .for_each(|(u, &v)| *u = q.mul(*u % p, v % p));
                op.backward(&mut x);
                anyhow::ensure!(x == product, "fhe-math product wrong (N = {n}, q = {p})");
            }
            let mut buf = data.clone();
            let f_fwd = time_us(|| op.forward(black_box(&mut buf)));
            let f_inv = time_us(|| op.backward(black_box(&mut buf)));
            rows.push(Row {
                n,
                bits,
                name: "fhe-math".into(),
                fwd: f_fwd,
                inv: f_inv,
            });
            if n == 4096 && bits == 50 {
                headline = Some(default_fwd / t_fwd);
            }
        }
    }
    println!("| N | prime | implementation | forward µs | inverse µs | ns/butterfly (fwd) |");
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        let butterflies = (r.n / 2) as f64 * r.n.trailing_zeros() as f64;
        println!(
            "| {} | {}-bit | {} | {:.1} | {:.1} | {:.2} |",
            r.n,
            r.bits,
            r.name,
            r.fwd,
            r.inv,
            r.fwd * 1e3 / butterflies
        );
    }
    let ratio = headline.ok_or_else(|| anyhow!("headline case missing"))?;
    println!("ntt_ratio_vs_tfhe_ntt={ratio:.3}");
    Ok(())
}
