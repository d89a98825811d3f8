//! `bfv` suite: vsp-bfv (HPS and BEHZ) encrypt / decrypt / multiply / relinearize / mul+relin at
//! N = 1024/4096/8192/16384 (log Q 27/109/218/438, t = 65537), 1 and 2 threads; then seed 002's comparison
//! of BEHZ and HPS mul+relin as log Q (depth) grows at N = 16384.
//!
//! Peers: fhe.rs (`fhe` 0.1.1, single-threaded by design) in this process with exactly our moduli and
//! t, timed interleaved with ours (each round runs every column once, so load changes on a shared
//! machine hit all columns alike); and Microsoft SEAL 4.x through `seal-python`, run as a child process
//! (`python3`) with the same N and t = 65537, skipped with a note when the module is missing. SEAL is
//! given exactly our primes as its ciphertext modulus plus a 60-bit special prime (its BFVDefault
//! would spend one of the same-sized primes as the special prime, leaving it a smaller Q than ours;
//! that row is shown too, for reference). Our, fhe.rs's and SEAL's mul+relin results are decrypted
//! and checked against the plaintext product (SEAL: inside the child, for the last result of every
//! timed operation, and its mul+relin slots are sent back and compared here).
//! Ends with `mul_relin_ratio_vs_seal_8192=<ours HPS 1 thread / SEAL>` (when SEAL ran) and, last,
//! `mul_relin_ratio_vs_fhe_rs_8192=<ours HPS 1 thread / fhe.rs>`.

use std::hint::black_box;
use std::time::Instant;

use fhe_traits::{FheDecoder, FheDecrypter, FheEncoder, FheEncrypter};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand09::SeedableRng as _;
use vsp_bfv::{BfvParameters, Encoder, Evaluator, MulMethod, PublicKey, RelinKey, SecretKey};
use vsp_math::generate_ntt_primes;

/// SEAL through seal-python: encrypt, decrypt, multiply, relinearize, mul+relin (ms) and the noise
/// budget left after one mul+relin, on the first line; the decrypted slots of the last timed
/// mul+relin on the second. argv: N, reps, and the coefficient modulus: `default` (BFVDefault) or
/// comma-separated primes, the last one SEAL's special (key-switching) prime. The script itself
/// decrypts the last result of every timed operation (encrypt, decrypt, multiply, relinearize,
/// mul+relin) and exits non-zero if one is wrong.
const SEAL_SCRIPT: &str = r#"import seal, time, sys
def med(f, reps):
    f(); v=[]
    for _ in range(reps):
        s=time.perf_counter(); f(); v.append((time.perf_counter()-s)*1e3)
    v.sort(); return v[len(v)//2]
n=int(sys.argv[1]); reps=int(sys.argv[2]); t=65537
p=seal.EncryptionParameters(seal.scheme_type.bfv)
p.set_poly_modulus_degree(n)
p.set_plain_modulus(t)
if sys.argv[3]=="default":
    p.set_coeff_modulus(seal.CoeffModulus.BFVDefault(n))
    ctx=seal.SEALContext(p)
else:
    p.set_coeff_modulus([seal.Modulus(int(q)) for q in sys.argv[3].split(",")])
    # Our Q as SEAL's ciphertext modulus plus a special prime exceeds the 128-bit table at the key
    # level, so SEAL's own security check is switched off (the ciphertexts match ours exactly).
    ctx=seal.SEALContext(p, True, seal.sec_level_type.none)
assert ctx.parameters_set(), ctx.parameter_error_message()
kg=seal.KeyGenerator(ctx)
pk=kg.create_public_key(); rk=kg.create_relin_keys()
enc=seal.Encryptor(ctx,pk); dec=seal.Decryptor(ctx,kg.secret_key()); ev=seal.Evaluator(ctx)
be=seal.BatchEncoder(ctx)
vals=[i % t for i in range(n)]; want=[v*v % t for v in vals]
pt=be.encode(vals)
a=enc.encrypt(pt); b=enc.encrypt(pt)
c3=ev.multiply(a,b)
last={}
def keep(k, x): last[k]=x
e=med(lambda: keep("enc", enc.encrypt(pt)), reps)
d=med(lambda: keep("dec", dec.decrypt(a)), reps)
m=med(lambda: keep("mul", ev.multiply(a,b)), reps)
r=med(lambda: keep("relin", ev.relinearize(c3, rk)), reps)
mr=med(lambda: keep("mr", ev.relinearize(ev.multiply(a,b), rk)), reps)
slots=lambda ptx: [int(x) % t for x in be.decode(ptx)]
checks={"encrypt": (slots(dec.decrypt(last["enc"])), vals), "decrypt": (slots(last["dec"]), vals),
        "multiply": (slots(dec.decrypt(last["mul"])), want), "relinearize": (slots(dec.decrypt(last["relin"])), want),
        "mul+relin": (slots(dec.decrypt(last["mr"])), want)}
bad=[k for k,(got,w) in checks.items() if got!=w]
if bad: sys.exit("SEAL decrypts wrongly: " + ", ".join(bad))
print(f"{e:.3f} {d:.3f} {m:.3f} {r:.3f} {mr:.3f} {dec.invariant_noise_budget(last['mr'])}")
print(" ".join(map(str, checks["mul+relin"][0])))
"#;

/// SEAL's times (encrypt, decrypt, multiply, relinearize, mul+relin in ms, noise budget) with
/// coefficient modulus `coeff` (see [`SEAL_SCRIPT`]), after checking that its last timed mul+relin
/// decrypts to `expect`; or why SEAL did not run.
fn seal_times(n: usize, reps: usize, coeff: &str, expect: &[u64]) -> Result<Vec<f64>, String> {
    let out = std::process::Command::new("python3")
        .args(["-c", SEAL_SCRIPT, &n.to_string(), &reps.to_string(), coeff])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("no output")
            .to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let v: Vec<f64> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let slots: Vec<u64> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() != 6 {
        return Err(format!("unexpected SEAL output {text:?}"));
    }
    if slots != expect {
        return Err("SEAL's mul+relin does not decrypt to the plaintext product".into());
    }
    Ok(v)
}

/// Time of one call of `f` in ms.
fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// A timed operation: runs once and returns its own time in ms (so per-run setup, such as cloning
/// an input that the operation consumes, stays outside the measurement).
type Op<'a> = Box<dyn FnMut() -> f64 + 'a>;

/// Median times (ms) of `ops`, timed interleaved: one warm-up round, then `reps` rounds that each run
/// every op once in order, so that load changes on a shared machine affect all columns alike.
fn interleaved(reps: usize, mut ops: Vec<Op<'_>>) -> Vec<f64> {
    for op in ops.iter_mut() {
        op();
    }
    let mut samples = vec![Vec::with_capacity(reps); ops.len()];
    for _ in 0..reps {
        for (op, s) in ops.iter_mut().zip(samples.iter_mut()) {
            s.push(op());
        }
    }
    samples
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect()
}

/// fhe.rs (`fhe` 0.1.1) set up with exactly our moduli and t: keys, the same batched plaintext, two
/// fresh ciphertexts, their degree-2 product, and the fused multiply+relinearize strategy.
struct FheRs {
    sk: fhe::bfv::SecretKey,
    pk: fhe::bfv::PublicKey,
    rk: fhe::bfv::RelinearizationKey,
    mul_relin: fhe::bfv::Multiplicator,
    pt: fhe::bfv::Plaintext,
    a: fhe::bfv::Ciphertext,
    b: fhe::bfv::Ciphertext,
    c3: fhe::bfv::Ciphertext,
    rng: rand09::rngs::StdRng,
}

impl FheRs {
    fn new(params: &BfvParameters, vals: &[u64]) -> anyhow::Result<Self> {
        let par = fhe::bfv::BfvParametersBuilder::new()
            .set_degree(params.degree())
            .set_plaintext_modulus(params.plaintext_modulus())
            .set_moduli(params.moduli())
            .build_arc()?;
        let mut rng = rand09::rngs::StdRng::seed_from_u64(2);
        let sk = fhe::bfv::SecretKey::random(&par, &mut rng);
        let pk = fhe::bfv::PublicKey::new(&sk, &mut rng);
        let rk = fhe::bfv::RelinearizationKey::new(&sk, &mut rng)?;
        let mul_relin = fhe::bfv::Multiplicator::default(&rk)?;
        let pt = fhe::bfv::Plaintext::try_encode(vals, fhe::bfv::Encoding::simd(), &par)?;
        let a: fhe::bfv::Ciphertext = pk.try_encrypt(&pt, &mut rng)?;
        let b: fhe::bfv::Ciphertext = pk.try_encrypt(&pt, &mut rng)?;
        let c3 = &a * &b;
        Ok(Self {
            sk,
            pk,
            rk,
            mul_relin,
            pt,
            a,
            b,
            c3,
            rng,
        })
    }

    /// A fresh public-key encryption of the plaintext.
    fn encrypt(&mut self) -> Option<fhe::bfv::Ciphertext> {
        self.pk.try_encrypt(&self.pt, &mut self.rng).ok()
    }

    /// Decrypted slots of `a · b` through the fused strategy.
    fn check_mul_relin(&self) -> anyhow::Result<Vec<u64>> {
        let c = self.mul_relin.multiply(&self.a, &self.b)?;
        let pt = self.sk.try_decrypt(&c)?;
        Ok(Vec::<u64>::try_decode(&pt, fhe::bfv::Encoding::simd())?)
    }
}

/// One table row: label, threads, encrypt, decrypt, multiply, relinearize, mul+relin (ms).
struct Row {
    label: String,
    threads: usize,
    t: [f64; 5],
}

pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(1);
    let t = 65537;
    let mut ours_8192 = None;
    let mut fhe_8192 = None;
    let mut seal_8192 = None;
    let mut seal_checked = Vec::new();
    let mut ratios = Vec::new();
    println!("## vsp-bfv vs fhe.rs and SEAL, t = {t} (ms, median)");
    println!("| N | log Q | method | threads | encrypt (pk) | decrypt | multiply | relinearize | mul+relin |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in &[1024usize, 4096, 8192, 16384] {
        let params = BfvParameters::default_128(n, t)?;
        let sk = SecretKey::random(&params, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let rk = RelinKey::new(&sk, &mut rng);
        let enc = Encoder::new(&params);
        let vals: Vec<u64> = (0..n as u64).map(|i| i % t).collect();
        let expect: Vec<u64> = vals.iter().map(|&v| v * v % t).collect();
        let pt = enc.encode_batch(&vals)?;
        let a = pk.encrypt(&pt, &mut rng)?;
        let b = pk.encrypt(&pt, &mut rng)?;
        let reps = if n >= 16384 { 5 } else { 9 };
        // fhe.rs's relinearisation key needs at least two moduli (N = 1024 has one): peers from 4096.
        let mut peer = if n >= 4096 {
            Some(FheRs::new(&params, &vals)?)
        } else {
            None
        };
        if let Some(p) = &peer {
            anyhow::ensure!(
                p.check_mul_relin()? == expect,
                "fhe.rs mul+relin decrypts wrongly at N = {n}"
            );
        }
        let evs: Vec<(MulMethod, usize, Evaluator)> = [MulMethod::Hps, MulMethod::Behz]
            .into_iter()
            .flat_map(|m| [1usize, 2].map(move |th| (m, th)))
            .map(|(m, th)| Ok((m, th, Evaluator::with_threads(&params, th)?.with_method(m))))
            .collect::<anyhow::Result<_>>()?;
        // N = 1024 (log Q = 27) has no room for a product with t = 65537: timed, not checked.
        for (m, th, ev) in evs.iter().filter(|_| n >= 4096) {
            let got = enc.decode_batch(&sk.decrypt(&ev.multiply_relin(&a, &b, &rk)?)?)?;
            anyhow::ensure!(
                got == expect,
                "vsp {m:?} ({th} threads) mul+relin decrypts wrongly at N = {n}"
            );
        }
        let c3 = evs[0].2.multiply(&a, &b)?;

        // Encrypt and decrypt do not depend on the method or thread count: ours once, beside fhe.rs.
        let (encrypt, decrypt, peer_ed) = {
            let rng = &mut rng;
            let mut ops: Vec<Op<'_>> = vec![Box::new(|| {
                ms(|| drop(black_box(pk.encrypt(&pt, rng).ok())))
            })];
            if let Some(p) = peer.as_mut() {
                ops.push(Box::new(move || ms(|| drop(black_box(p.encrypt())))));
            }
            let e = interleaved(reps, ops);
            let mut ops: Vec<Op<'_>> =
                vec![Box::new(|| ms(|| drop(black_box(sk.decrypt(&a).ok()))))];
            if let Some(p) = peer.as_ref() {
                ops.push(Box::new(move || {
                    ms(|| drop(black_box(p.sk.try_decrypt(&p.a).ok())))
                }));
            }
            let d = interleaved(reps, ops);
            (e[0], d[0], e.get(1).copied().zip(d.get(1).copied()))
        };
        // Multiply, relinearize, mul+relin: fhe.rs first, then every (method, threads) of ours.
        let timed = |op: usize| -> Vec<f64> {
            let mut ops: Vec<Op<'_>> = Vec::new();
            if let Some(p) = peer.as_ref() {
                ops.push(match op {
                    0 => Box::new(move || ms(|| drop(black_box(&p.a * &p.b)))),
                    1 => Box::new(move || {
                        // relinearizes works in place: the clone stays outside the measurement.
                        let mut c = p.c3.clone();
                        ms(|| {
                            black_box(p.rk.relinearizes(&mut c).ok());
                        })
                    }),
                    _ => Box::new(move || {
                        ms(|| drop(black_box(p.mul_relin.multiply(&p.a, &p.b).ok())))
                    }),
                });
            }
            for (_, _, ev) in &evs {
                let (a, b, c3, rk) = (&a, &b, &c3, &rk);
                ops.push(match op {
                    0 => Box::new(move || ms(|| drop(black_box(ev.multiply(a, b).ok())))),
                    1 => Box::new(move || ms(|| drop(black_box(ev.relinearize(c3, rk).ok())))),
                    _ => Box::new(move || ms(|| drop(black_box(ev.multiply_relin(a, b, rk).ok())))),
                });
            }
            interleaved(reps, ops)
        };
        let (mul, relin, both) = (timed(0), timed(1), timed(2));
        let off = usize::from(peer.is_some());
        let mut rows = Vec::new();
        if let Some((e, d)) = peer_ed {
            rows.push(Row {
                label: "fhe.rs 0.1.1 (`fhe`)".into(),
                threads: 1,
                t: [e, d, mul[0], relin[0], both[0]],
            });
        }
        for (i, (m, th, _)) in evs.iter().enumerate() {
            let j = i + off;
            rows.push(Row {
                label: format!("vsp {m:?}"),
                threads: *th,
                t: [encrypt, decrypt, mul[j], relin[j], both[j]],
            });
        }
        if n >= 4096 {
            // SEAL keeps its last prime as the special (key-switching) prime, so BFVDefault gives its
            // ciphertexts a smaller Q than ours (ours has no special prime). The comparison row gives
            // SEAL exactly our primes as ciphertext modulus plus a 60-bit special prime; BFVDefault is
            // shown for reference.
            let special = generate_ntt_primes(60, n, 2)?
                .into_iter()
                .find(|q| !params.moduli().contains(q))
                .ok_or_else(|| anyhow::anyhow!("no 60-bit special prime for N = {n}"))?;
            let same_q: Vec<String> = params
                .moduli()
                .iter()
                .chain([&special])
                .map(u64::to_string)
                .collect();
            let last_bits = params.moduli().last().map_or(0, |q| 64 - q.leading_zeros());
            let variants = [
                (
                    "SEAL 4 (BEHZ), our Q + 60-bit special prime",
                    same_q.join(","),
                    params.log_q(),
                ),
                (
                    "SEAL 4 (BEHZ), BFVDefault (last prime special)",
                    "default".to_string(),
                    params.log_q() - last_bits,
                ),
            ];
            for (k, (label, coeff, log_q)) in variants.into_iter().enumerate() {
                match seal_times(n, reps, &coeff, &expect) {
                    Ok(v) => {
                        println!(
                            "| {n} | {log_q} | {label} | 1 | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                            v[0], v[1], v[2], v[3], v[4]
                        );
                        seal_checked.push(format!("N = {n}, {label}: noise budget {} bits", v[5]));
                        if n == 8192 && k == 0 {
                            seal_8192 = Some(v[4]);
                        }
                    }
                    Err(e) if e.contains("decrypt") => {
                        anyhow::bail!("{label}, N = {n}: {e}")
                    }
                    Err(e) => println!("| {n} | {log_q} | {label}: not run ({e}) | | | | | | |"),
                }
            }
        }
        for r in &rows {
            let [e, d, m, rl, b] = r.t;
            println!(
                "| {n} | {} | {} | {} | {e:.2} | {d:.2} | {m:.2} | {rl:.2} | {b:.2} |",
                params.log_q(),
                r.label,
                r.threads
            );
        }
        // rows[off] is ours HPS, 1 thread; rows[0] is fhe.rs when it ran.
        let ours = &rows[off];
        if peer.is_some() {
            let theirs = &rows[0];
            let mut q = [0.0; 5];
            for (k, x) in q.iter_mut().enumerate() {
                *x = ours.t[k] / theirs.t[k];
            }
            ratios.push((n, params.log_q(), q));
        }
        if n == 8192 {
            ours_8192 = Some(ours.t[4]);
            fhe_8192 = peer.is_some().then_some(rows[0].t[4]);
        }
    }
    for line in &seal_checked {
        println!("SEAL checked (every timed operation's last result decrypted): {line}");
    }
    println!();
    println!("## vsp-bfv (HPS, 1 thread) / fhe.rs, same process, interleaved");
    println!("| N | log Q | encrypt | decrypt | multiply | relinearize | mul+relin |");
    println!("|---|---|---|---|---|---|---|");
    for (n, lq, q) in &ratios {
        println!(
            "| {n} | {lq} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            q[0], q[1], q[2], q[3], q[4]
        );
    }
    println!();
    println!("## Seed 002: BEHZ vs HPS mul+relin as log Q grows (N = 16384, 1 thread, ms)");
    println!("| primes | log Q | BEHZ | HPS | HPS/BEHZ |");
    println!("|---|---|---|---|---|");
    for &k in &[2usize, 4, 6, 9] {
        let params = BfvParameters::builder()
            .degree(16384)
            .plaintext_modulus(t)
            .moduli_sizes(&vec![48; k])
            .build()?;
        let sk = SecretKey::random(&params, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let rk = RelinKey::new(&sk, &mut rng);
        let pt = Encoder::new(&params).encode_batch(&[1, 2, 3])?;
        let a = pk.encrypt(&pt, &mut rng)?;
        let evs: Vec<Evaluator> = [MulMethod::Behz, MulMethod::Hps]
            .into_iter()
            .map(|m| Evaluator::new(&params).with_method(m))
            .collect();
        let ops: Vec<Op<'_>> = evs
            .iter()
            .map(|ev| -> Op<'_> {
                let (a, rk) = (&a, &rk);
                Box::new(move || ms(|| drop(black_box(ev.multiply_relin(a, a, rk).ok()))))
            })
            .collect();
        let res = interleaved(3, ops);
        println!(
            "| {k} | {} | {:.1} | {:.1} | {:.2} |",
            params.log_q(),
            res[0],
            res[1],
            res[1] / res[0]
        );
    }
    println!();
    if let Some(h) = ours_8192 {
        println!("mul_relin_ms_8192={h:.2}");
        if let Some(s) = seal_8192 {
            println!("mul_relin_ratio_vs_seal_8192={:.3}", h / s);
        }
        if let Some(f) = fhe_8192 {
            println!("mul_relin_ratio_vs_fhe_rs_8192={:.3}", h / f);
        }
    }
    Ok(())
}
