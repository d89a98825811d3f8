//! Quick speed check of every NTT backend this CPU has (the side-by-side comparison with peers is
//! `cargo run --release -p vsp-bench -- ntt`). Usage: `cargo run --release -p vsp-math --example
//! ntt_speed [N] [bits]`.

use std::time::Instant;

use vsp_math::{generate_ntt_primes, Backend, Modulus, NttTable};

fn main() -> Result<(), vsp_math::MathError> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4096);
    let bits: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let q = Modulus::new(generate_ntt_primes(bits, n, 1)?[0])?;
    for backend in Backend::available(&q) {
        let table = NttTable::new(n, q)?.with_backend(backend)?;
        let mut a: Vec<u64> = (0..n as u64).map(|i| i * 7919 % q.value()).collect();
        let mut best = [f64::INFINITY; 2];
        // Short batches, best of many: the machine is shared, and a batch that fits in one time
        // slice measures the code rather than the scheduler.
        let reps = (4_000_000 / (n * n.trailing_zeros() as usize)).max(1);
        for _ in 0..60 {
            let t = Instant::now();
            for _ in 0..reps {
                table.forward(&mut a)?;
            }
            best[0] = best[0].min(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
            let t = Instant::now();
            for _ in 0..reps {
                table.inverse(&mut a)?;
            }
            best[1] = best[1].min(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
        }
        println!(
            "N={n} {bits}-bit {:>12}: forward {:8.1} µs  inverse {:8.1} µs",
            backend.name(),
            best[0],
            best[1]
        );
    }
    Ok(())
}
