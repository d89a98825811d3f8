//! Seed 002 (RNS BFV with BEHZ and HPS, multi-threaded): at each multiplicative depth d, the
//! smallest 128-bit set that supports it (`BfvParameters::for_depth(d, 65537)`), the HPS
//! mul+relin time on 1 and 2 threads and the parallel efficiency t₁/(2·t₂); and decryption, HPS
//! (fixed point, `SecretKey::decrypt`) against BEHZ (integer, `BehzDecryptor`), 1 thread.
//!
//! Every timed result is decrypted and checked. 1- and 2-thread runs (and the two decryptions) are
//! interleaved round by round, medians reported, so that load changes hit both columns alike; on a
//! shared 2-core machine the 2-thread column is only as good as the second core is idle — the suite
//! prints the load average before and after.
//!
//! Usage: `cargo run --release -p vsp-bench -- seed002 [reps]` (default 9). Ends with
//! `seed002_efficiency_depth<d>=<e>` for the deepest set.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vsp_bfv::{
    BehzDecryptor, BfvParameters, Encoder, Evaluator, MulMethod, PublicKey, RelinKey, SecretKey,
};

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let reps: usize = match args.first() {
        Some(r) => r.parse()?,
        None => 9,
    };
    anyhow::ensure!(reps > 0, "reps must be positive");
    println!("load average before: {}", load());
    println!("| depth | N | log Q | primes | mul+relin 1 thread ms | 2 threads ms | speed-up | efficiency | decrypt HPS ms | decrypt BEHZ ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let t = 65537u64;
    let mut last = None;
    for depth in [1usize, 2, 8, 12] {
        let p = BfvParameters::for_depth(depth, t)?;
        let n = p.degree();
        let mut rng = StdRng::seed_from_u64(depth as u64);
        let sk = SecretKey::random(&p, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let rk = RelinKey::new(&sk, &mut rng);
        let enc = Encoder::new(&p);
        let vals: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
        let want: Vec<u64> = vals.iter().map(|&v| v * v % t).collect();
        let ct = pk.encrypt(&enc.encode_batch(&vals)?, &mut rng)?;
        let one = Evaluator::new(&p).with_method(MulMethod::Hps);
        let two = Evaluator::with_threads(&p, 2)?.with_method(MulMethod::Hps);
        let behz = BehzDecryptor::new(&p)?;
        // Checks first: both evaluators' products and both decryptions.
        for ev in [&one, &two] {
            let prod = ev.multiply_relin(&ct, &ct, &rk)?;
            anyhow::ensure!(
                enc.decode_batch(&sk.decrypt(&prod)?)? == want,
                "depth {depth}: product wrong"
            );
            anyhow::ensure!(
                behz.decrypt(&sk, &prod)? == sk.decrypt(&prod)?,
                "depth {depth}: BEHZ decryption differs from HPS"
            );
        }
        let (mut s1, mut s2, mut dh, mut db) = (vec![], vec![], vec![], vec![]);
        // Every timed result is decrypted (or decoded) and compared, outside the timed region.
        for _ in 0..reps {
            for (ev, times, name) in [(&one, &mut s1, "1-thread"), (&two, &mut s2, "2-thread")] {
                let mut out = None;
                times.push(ms(|| out = Some(ev.multiply_relin(&ct, &ct, &rk))));
                let prod = out.ok_or_else(|| anyhow::anyhow!("{name} product never ran"))??;
                anyhow::ensure!(
                    enc.decode_batch(&sk.decrypt(&prod)?)? == want,
                    "depth {depth}: {name} product wrong"
                );
            }
            let mut d = None;
            dh.push(ms(|| d = Some(sk.decrypt(&ct))));
            let d = d.ok_or_else(|| anyhow::anyhow!("HPS decryption never ran"))??;
            anyhow::ensure!(enc.decode_batch(&d)? == vals, "HPS decryption wrong");
            let mut b = None;
            db.push(ms(|| b = Some(behz.decrypt(&sk, &ct))));
            let b = b.ok_or_else(|| anyhow::anyhow!("BEHZ decryption never ran"))??;
            anyhow::ensure!(enc.decode_batch(&b)? == vals, "BEHZ decryption wrong");
        }
        let (t1, t2) = (median(s1), median(s2));
        let eff = t1 / (2.0 * t2);
        println!(
            "| {depth} | {n} | {} | {} | {t1:.2} | {t2:.2} | {:.2}× | {:.0} % | {:.3} | {:.3} |",
            p.log_q(),
            p.moduli().len(),
            t1 / t2,
            100.0 * eff,
            median(dh),
            median(db)
        );
        last = Some((depth, eff));
    }
    println!("load average after: {}", load());
    if let Some((d, e)) = last {
        println!("seed002_efficiency_depth{d}={e:.2}");
    }
    Ok(())
}
