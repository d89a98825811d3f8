//! `bfv` suite: vsp-bfv (HPS and BEHZ) encrypt / decrypt / multiply / relinearize / mul+relin at
//! N = 1024/4096/8192/16384 (log Q 27/109/218/438, t = 65537), 1 and 2 threads; then seed 002's comparison
//! of BEHZ and HPS mul+relin as log Q (depth) grows at N = 16384.
//!
//! The peer is Microsoft SEAL 4.x through `seal-python`, run as a child process (`python3`) with the
//! same N, SEAL's BFVDefault moduli (the same sizes as ours) and t = 65537; it is skipped with a note
//! when the module is missing. fhe.rs (`fhe` 0.1.1) needs a rand 0.9 generator, which this crate's
//! manifest does not provide (it pins rand 0.8), so it is not measured here (see BENCHMARKS.md).
//! Ends with `mul_relin_ratio_vs_seal_8192=<ours HPS 1 thread / SEAL>`.

use std::hint::black_box;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::SeedableRng;
use vsp_bfv::{BfvParameters, Encoder, Evaluator, MulMethod, PublicKey, RelinKey, SecretKey};

/// SEAL through seal-python: encrypt, decrypt, multiply, relinearize, mul+relin (ms) and the noise
/// budget left after one mul+relin.
const SEAL_SCRIPT: &str = r#"import seal, time, sys
def med(f, reps):
    f(); v=[]
    for _ in range(reps):
        s=time.perf_counter(); f(); v.append((time.perf_counter()-s)*1e3)
    v.sort(); return v[len(v)//2]
n=int(sys.argv[1]); reps=int(sys.argv[2])
p=seal.EncryptionParameters(seal.scheme_type.bfv)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus(seal.CoeffModulus.BFVDefault(n))
p.set_plain_modulus(65537)
ctx=seal.SEALContext(p)
kg=seal.KeyGenerator(ctx)
pk=kg.create_public_key(); rk=kg.create_relin_keys()
enc=seal.Encryptor(ctx,pk); dec=seal.Decryptor(ctx,kg.secret_key()); ev=seal.Evaluator(ctx)
be=seal.BatchEncoder(ctx)
pt=be.encode([i % 65537 for i in range(n)])
a=enc.encrypt(pt); b=enc.encrypt(pt)
c3=ev.multiply(a,b)
e=med(lambda: enc.encrypt(pt), reps)
d=med(lambda: dec.decrypt(a), reps)
m=med(lambda: ev.multiply(a,b), reps)
r=med(lambda: ev.relinearize(c3, rk), reps)
mr=med(lambda: ev.relinearize(ev.multiply(a,b), rk), reps)
print(f"{e:.3f} {d:.3f} {m:.3f} {r:.3f} {mr:.3f} {dec.invariant_noise_budget(ev.relinearize(c3, rk))}")
"#;

fn seal_times(n: usize, reps: usize) -> Option<Vec<f64>> {
    let out = std::process::Command::new("python3")
        .args(["-c", SEAL_SCRIPT, &n.to_string(), &reps.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let v: Vec<f64> = String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|x| x.parse().ok()).collect();
    (v.len() == 6).then_some(v)
}

/// Median time of one call in ms over `reps` runs after one warm-up.
fn time_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(1);
    let t = 65537;
    let mut headline = None;
    let mut seal_8192 = None;
    println!("## vsp-bfv, t = {t} (ms, median)");
    println!("| N | log Q | method | threads | encrypt (pk) | decrypt | multiply | relinearize | mul+relin |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in &[1024usize, 4096, 8192, 16384] {
        let params = BfvParameters::default_128(n, t)?;
        let sk = SecretKey::random(&params, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let rk = RelinKey::new(&sk, &mut rng);
        let enc = Encoder::new(&params);
        let vals: Vec<u64> = (0..n as u64).map(|i| i % t).collect();
        let pt = enc.encode_batch(&vals)?;
        let a = pk.encrypt(&pt, &mut rng)?;
        let b = pk.encrypt(&pt, &mut rng)?;
        let reps = if n >= 16384 { 5 } else { 9 };
        let encrypt = time_ms(reps, || {
            black_box(pk.encrypt(&pt, &mut rng).ok());
        });
        let decrypt = time_ms(reps, || {
            black_box(sk.decrypt(&a).ok());
        });
        match seal_times(n, reps) {
            Some(v) => {
                println!(
                    "| {n} | {} | SEAL 4 (BEHZ, seal-python) | 1 | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    params.log_q(),
                    v[0],
                    v[1],
                    v[2],
                    v[3],
                    v[4]
                );
                if n == 8192 {
                    seal_8192 = Some(v[4]);
                }
            }
            None => println!("| {n} | {} | SEAL: seal-python not available | | | | | | |", params.log_q()),
        }
        for method in [MulMethod::Hps, MulMethod::Behz] {
            for threads in [1usize, 2] {
                let ev = Evaluator::with_threads(&params, threads)?.with_method(method);
                let c3 = ev.multiply(&a, &b)?;
                let mul = time_ms(reps, || {
                    black_box(ev.multiply(&a, &b).ok());
                });
                let relin = time_ms(reps, || {
                    black_box(ev.relinearize(&c3, &rk).ok());
                });
                let both = time_ms(reps, || {
                    black_box(ev.multiply_relin(&a, &b, &rk).ok());
                });
                println!(
                    "| {n} | {} | {method:?} | {threads} | {encrypt:.2} | {decrypt:.2} | {mul:.2} | {relin:.2} | {both:.2} |",
                    params.log_q()
                );
                if n == 8192 && threads == 1 && method == MulMethod::Hps {
                    headline = Some(both);
                }
            }
        }
    }
    println!();
    println!("## Seed 002: BEHZ vs HPS mul+relin as log Q grows (N = 16384, 1 thread, ms)");
    println!("| primes | log Q | BEHZ | HPS | HPS/BEHZ |");
    println!("|---|---|---|---|---|");
    for &k in &[2usize, 4, 6, 9] {
        let params = BfvParameters::builder().degree(16384).plaintext_modulus(t).moduli_sizes(&vec![48; k]).build()?;
        let sk = SecretKey::random(&params, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let rk = RelinKey::new(&sk, &mut rng);
        let pt = Encoder::new(&params).encode_batch(&[1, 2, 3])?;
        let a = pk.encrypt(&pt, &mut rng)?;
        let mut res = Vec::new();
        for method in [MulMethod::Behz, MulMethod::Hps] {
            let ev = Evaluator::new(&params).with_method(method);
            res.push(time_ms(3, || {
                black_box(ev.multiply_relin(&a, &a, &rk).ok());
            }));
        }
        println!("| {k} | {} | {:.1} | {:.1} | {:.2} |", params.log_q(), res[0], res[1], res[1] / res[0]);
    }
    println!();
    if let Some(h) = headline {
        println!("mul_relin_ms_8192={h:.2}");
        if let Some(s) = seal_8192 {
            println!("mul_relin_ratio_vs_seal_8192={:.3}", h / s);
        }
    }
    Ok(())
}
