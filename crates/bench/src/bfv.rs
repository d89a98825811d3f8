//! `bfv` suite: vsp-bfv (HPS and BEHZ) encrypt / decrypt / multiply / relinearize / mul+relin at
//! N = 4096/8192/16384/32768 (log Q 109/218/438/881, t = 65537), 1 and 2 threads with the parallel
//! efficiency; then seed 002's comparison of BEHZ and HPS mul+relin as log Q (depth) grows at
//! N = 16384.
//!
//! Peers, one thread each, every timed result checked:
//! * fhe.rs (`fhe` 0.1.1) in this process with exactly our moduli and t, timed interleaved with ours
//!   (each round runs every column once, so load changes on a shared machine hit all columns alike);
//! * Microsoft SEAL 4.x through `seal-python`, a child process (`python3`), given exactly our primes
//!   as its ciphertext modulus plus a 60-bit special prime (its BFVDefault spends one of the
//!   same-sized primes as the special prime, leaving its ciphertexts a smaller Q than ours);
//! * OpenFHE through its `openfhe` wheel (CPython 3.10 only), a child process run by
//!   `$VSP_OPENFHE_PYTHON` or else `.venv-openfhe/bin/python` in the workspace root, with
//!   `OMP_NUM_THREADS=1`: HPS multiplication, BV (RNS-digit) key switching as ours, the same N and as
//!   many CRT primes of our largest prime size (log Q within 3 bits of ours; OpenFHE picks its own
//!   primes, so the exact Q differs). Skipped with a note when that interpreter is missing.
//!
//! The SEAL and OpenFHE children decrypt the last result of every timed operation and exit non-zero
//! if one is wrong; they send their mul+relin slots back and they are compared here too.
//! Ends with `mul_relin_ratio_vs_fhe_rs_8192=`, `mul_relin_ratio_vs_seal_8192=` (when SEAL ran) and
//! `mul_relin_ratio_vs_openfhe_8192=` (when OpenFHE ran), each ours (HPS, 1 thread) / theirs.

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
/// mul+relin on the second. argv: N, reps, and the coefficient modulus: comma-separated primes, the
/// last one SEAL's special (key-switching) prime. The script itself
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

/// OpenFHE through its Python wheel, like [`SEAL_SCRIPT`]: argv N, reps, prime bits, number of
/// primes. The multiplicative depth is raised until OpenFHE's Q has that many primes of that size
/// (HPS, BV key switching, one thread); the first line ends with log2 Q instead of a noise budget.
const OPENFHE_SCRIPT: &str = r#"import openfhe as o, time, sys, math
def med(f, reps):
    f(); v=[]
    for _ in range(reps):
        s=time.perf_counter(); f(); v.append((time.perf_counter()-s)*1e3)
    v.sort(); return v[len(v)//2]
n=int(sys.argv[1]); reps=int(sys.argv[2]); bits=int(sys.argv[3]); k=int(sys.argv[4]); t=65537
for depth in range(1, 80):
    p=o.CCParamsBFVRNS()
    p.SetPlaintextModulus(t); p.SetMultiplicativeDepth(depth); p.SetRingDim(n)
    p.SetMultiplicationTechnique(o.HPS); p.SetKeySwitchTechnique(o.BV); p.SetScalingModSize(bits)
    # OpenFHE's table is for its own Q; ours is checked by vsp-bfv, the same N and log Q here.
    p.SetSecurityLevel(o.HEStd_NotSet)
    cc=o.GenCryptoContext(p)
    if math.log2(cc.GetModulus()) > (k - 0.5) * bits: break
for f in [o.PKE, o.KEYSWITCH, o.LEVELEDSHE]: cc.Enable(f)
assert cc.GetRingDimension()==n
kp=cc.KeyGen(); cc.EvalMultKeyGen(kp.secretKey)
vals=[i % t for i in range(n)]; want=[v*v % t for v in vals]
pt=cc.MakePackedPlaintext([v if v <= t//2 else v - t for v in vals])
a=cc.Encrypt(kp.publicKey, pt); b=cc.Encrypt(kp.publicKey, pt)
c3=cc.EvalMultNoRelin(a, b)
last={}
def keep(k, x): last[k]=x
e=med(lambda: keep("enc", cc.Encrypt(kp.publicKey, pt)), reps)
d=med(lambda: keep("dec", cc.Decrypt(kp.secretKey, a)), reps)
m=med(lambda: keep("mul", cc.EvalMultNoRelin(a, b)), reps)
r=med(lambda: keep("relin", cc.Relinearize(c3)), reps)
mr=med(lambda: keep("mr", cc.EvalMult(a, b)), reps)
def slots(ptx):
    ptx.SetLength(n); return [int(x) % t for x in ptx.GetPackedValue()]
dec=lambda c: slots(cc.Decrypt(kp.secretKey, c))
checks={"encrypt": (dec(last["enc"]), vals), "decrypt": (slots(last["dec"]), vals),
        "multiply": (dec(last["mul"]), want), "relinearize": (dec(last["relin"]), want),
        "mul+relin": (dec(last["mr"]), want)}
bad=[k for k,(got,w) in checks.items() if got!=w]
if bad: sys.exit("OpenFHE decrypts wrongly: " + ", ".join(bad))
print(f"{e:.3f} {d:.3f} {m:.3f} {r:.3f} {mr:.3f} {math.log2(cc.GetModulus()):.1f}")
print(" ".join(map(str, checks["mul+relin"][0])))
"#;

/// The interpreter with the `openfhe` wheel: `$VSP_OPENFHE_PYTHON`, else the workspace's
/// `.venv-openfhe` (made with `python3.10 -m venv .venv-openfhe && .venv-openfhe/bin/pip install
/// openfhe`), if it exists.
fn openfhe_python() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("VSP_OPENFHE_PYTHON") {
        return Some(p.into());
    }
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-openfhe/bin/python");
    p.exists().then_some(p)
}

/// A peer's times (encrypt, decrypt, multiply, relinearize, mul+relin in ms, and one more figure)
/// from a child `python` running `script` with `args`, after checking that its last timed mul+relin
/// decrypts to `expect`; or why it did not run (an `Err` containing "decrypt" is a wrong result).
fn child_times(
    python: &std::ffi::OsStr,
    script: &str,
    args: &[String],
    expect: &[u64],
) -> Result<Vec<f64>, String> {
    let text = crate::common::script_output(
        std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .args(args)
            .env("OMP_NUM_THREADS", "1"),
        &python.to_string_lossy(),
    )?;
    // The numbers of one output line (none when the line is missing).
    fn numbers<T: std::str::FromStr>(line: Option<&str>) -> Vec<T> {
        line.unwrap_or("")
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect()
    }
    let mut lines = text.lines();
    let v: Vec<f64> = numbers(lines.next());
    let slots: Vec<u64> = numbers(lines.next());
    if v.len() != 6 {
        return Err(format!("unexpected output {text:?}"));
    }
    if slots != expect {
        return Err("its mul+relin does not decrypt to the plaintext product".into());
    }
    Ok(v)
}

/// Time of one call of `f` in ms.
fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// Times `f` and keeps its result in `slot` (stored, and the previous one dropped, after the clock
/// stops), so that the last result of every timed operation can be checked.
fn keep<T>(slot: &mut Option<T>, f: impl FnOnce() -> T) -> f64 {
    let t = Instant::now();
    let r = black_box(f());
    let e = t.elapsed().as_secs_f64() * 1e3;
    *slot = Some(r);
    e
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

    /// Decrypted slots of a ciphertext.
    fn decrypt(&self, c: &fhe::bfv::Ciphertext) -> anyhow::Result<Vec<u64>> {
        let pt = self.sk.try_decrypt(c)?;
        Ok(Vec::<u64>::try_decode(&pt, fhe::bfv::Encoding::simd())?)
    }

    /// Decrypted slots of `a · b` through the fused strategy.
    fn check_mul_relin(&self) -> anyhow::Result<Vec<u64>> {
        let c = self.mul_relin.multiply(&self.a, &self.b)?;
        let pt = self.sk.try_decrypt(&c)?;
        Ok(Vec::<u64>::try_decode(&pt, fhe::bfv::Encoding::simd())?)
    }
}

/// One table row: label, log Q, threads, encrypt, decrypt, multiply, relinearize, mul+relin (ms).
struct Row {
    label: String,
    log_q: String,
    threads: usize,
    t: [f64; 5],
}

/// The 1-minute load average, so that a reader can judge the 2-thread rows.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(1);
    let t = 65537;
    let mut ours_8192 = None;
    let mut fhe_8192 = None;
    let mut seal_8192 = None;
    let mut openfhe_8192 = None;
    let mut notes = Vec::new();
    let mut ratios = Vec::new();
    let mut threads = Vec::new();
    let openfhe = openfhe_python();
    if openfhe.is_none() {
        notes.push(
            "OpenFHE not run: no $VSP_OPENFHE_PYTHON and no .venv-openfhe in the workspace".into(),
        );
    }
    println!(
        "## vsp-bfv vs fhe.rs, SEAL and OpenFHE, t = {t} (ms, median; load average {} at start)",
        load_average()
    );
    println!("| N | log Q | implementation | threads | encrypt (pk) | decrypt | multiply | relinearize | mul+relin |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in &[4096usize, 8192, 16384, 32768] {
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
        let reps = match n {
            32768 => 3,
            16384 => 5,
            _ => 9,
        };
        let mut peer = FheRs::new(&params, &vals)?;
        anyhow::ensure!(
            peer.check_mul_relin()? == expect,
            "fhe.rs mul+relin decrypts wrongly at N = {n}"
        );
        let evs: Vec<(MulMethod, usize, Evaluator)> = [MulMethod::Hps, MulMethod::Behz]
            .into_iter()
            .flat_map(|m| [1usize, 2].map(move |th| (m, th)))
            .map(|(m, th)| Ok((m, th, Evaluator::with_threads(&params, th)?.with_method(m))))
            .collect::<anyhow::Result<_>>()?;
        for (m, th, ev) in &evs {
            let got = enc.decode_batch(&sk.decrypt(&ev.multiply_relin(&a, &b, &rk)?)?)?;
            anyhow::ensure!(
                got == expect,
                "vsp {m:?} ({th} threads) mul+relin decrypts wrongly at N = {n}"
            );
        }
        let c3 = evs[0].2.multiply(&a, &b)?;

        // Encrypt and decrypt do not depend on the method or thread count: ours once, beside fhe.rs.
        // Every op keeps its last result (stored outside the timed region), checked afterwards.
        let (encrypt, decrypt, peer_ed) = {
            let (mut ours_ct, mut peer_ct) = (None, None);
            let (mut ours_pt, mut peer_pt) = (None, None);
            let rng = &mut rng;
            let p = &mut peer;
            let ops: Vec<Op<'_>> = vec![
                Box::new(|| keep(&mut ours_ct, || pk.encrypt(&pt, rng))),
                Box::new(|| keep(&mut peer_ct, || p.encrypt())),
            ];
            let e = interleaved(reps, ops);
            let p = &peer;
            let ops: Vec<Op<'_>> = vec![
                Box::new(|| keep(&mut ours_pt, || sk.decrypt(&a))),
                Box::new(|| keep(&mut peer_pt, || p.sk.try_decrypt(&p.a))),
            ];
            let d = interleaved(reps, ops);
            let ours_ct = ours_ct.ok_or_else(|| anyhow::anyhow!("encrypt never ran"))??;
            anyhow::ensure!(
                enc.decode_batch(&sk.decrypt(&ours_ct)?)? == vals,
                "vsp encrypt: wrong ciphertext at N = {n}"
            );
            let peer_ct = peer_ct
                .flatten()
                .ok_or_else(|| anyhow::anyhow!("fhe.rs encrypt"))?;
            anyhow::ensure!(
                peer.decrypt(&peer_ct)? == vals,
                "fhe.rs encrypt: wrong ciphertext at N = {n}"
            );
            let ours_pt = ours_pt.ok_or_else(|| anyhow::anyhow!("decrypt never ran"))??;
            anyhow::ensure!(
                enc.decode_batch(&ours_pt)? == vals,
                "vsp decrypt: wrong plaintext at N = {n}"
            );
            let peer_pt = peer_pt.ok_or_else(|| anyhow::anyhow!("fhe.rs decrypt never ran"))??;
            anyhow::ensure!(
                Vec::<u64>::try_decode(&peer_pt, fhe::bfv::Encoding::simd())? == vals,
                "fhe.rs decrypt: wrong plaintext at N = {n}"
            );
            (e[0], d[0], (e[1], d[1]))
        };
        // Multiply, relinearize, mul+relin: fhe.rs first, then every (method, threads) of ours.
        // Each op's last result is decrypted afterwards (products relinearized first, untimed).
        let timed = |op: usize| -> anyhow::Result<Vec<f64>> {
            let mut peer_out: Option<anyhow::Result<fhe::bfv::Ciphertext>> = None;
            let mut ours_out: Vec<Option<vsp_bfv::Result<vsp_bfv::Ciphertext>>> =
                evs.iter().map(|_| None).collect();
            let times = {
                let p = &peer;
                let slot = &mut peer_out;
                let mut ops: Vec<Op<'_>> = vec![match op {
                    0 => Box::new(move || keep(slot, || Ok(&p.a * &p.b))),
                    1 => Box::new(move || {
                        // relinearizes works in place: the clone stays outside the measurement.
                        let mut c = p.c3.clone();
                        let t = ms(|| {
                            black_box(p.rk.relinearizes(&mut c).ok());
                        });
                        *slot = Some(Ok(c));
                        t
                    }),
                    _ => Box::new(move || keep(slot, || Ok(p.mul_relin.multiply(&p.a, &p.b)?))),
                }];
                for ((_, _, ev), slot) in evs.iter().zip(ours_out.iter_mut()) {
                    let (a, b, c3, rk) = (&a, &b, &c3, &rk);
                    ops.push(match op {
                        0 => Box::new(move || keep(slot, || ev.multiply(a, b))),
                        1 => Box::new(move || keep(slot, || ev.relinearize(c3, rk))),
                        _ => Box::new(move || keep(slot, || ev.multiply_relin(a, b, rk))),
                    });
                }
                interleaved(reps, ops)
            };
            let mut c = peer_out.ok_or_else(|| anyhow::anyhow!("fhe.rs op never ran"))??;
            if op == 0 {
                peer.rk.relinearizes(&mut c)?;
            }
            anyhow::ensure!(
                peer.decrypt(&c)? == expect,
                "fhe.rs op {op}: wrong result at N = {n}"
            );
            for ((m, th, ev), out) in evs.iter().zip(ours_out) {
                let mut c = out.ok_or_else(|| anyhow::anyhow!("vsp op never ran"))??;
                if op == 0 {
                    c = ev.relinearize(&c, &rk)?;
                }
                anyhow::ensure!(
                    enc.decode_batch(&sk.decrypt(&c)?)? == expect,
                    "vsp {m:?} ({th} threads) op {op}: wrong result at N = {n}"
                );
            }
            Ok(times)
        };
        let (mul, relin, both) = (timed(0)?, timed(1)?, timed(2)?);
        let lq = params.log_q().to_string();
        let mut rows = vec![Row {
            label: "fhe.rs 0.1.1 (`fhe`)".into(),
            log_q: lq.clone(),
            threads: 1,
            t: [peer_ed.0, peer_ed.1, mul[0], relin[0], both[0]],
        }];
        for (i, (m, th, _)) in evs.iter().enumerate() {
            rows.push(Row {
                label: format!("vsp {m:?}"),
                log_q: lq.clone(),
                threads: *th,
                t: [encrypt, decrypt, mul[i + 1], relin[i + 1], both[i + 1]],
            });
        }
        // SEAL: our primes as its ciphertext modulus plus a 60-bit special prime.
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
        let seal_args = [n.to_string(), reps.to_string(), same_q.join(",")];
        match child_times("python3".as_ref(), SEAL_SCRIPT, &seal_args, &expect) {
            Ok(v) => {
                rows.push(Row {
                    label: "SEAL 4 (BEHZ), our Q + 60-bit special prime".into(),
                    log_q: lq.clone(),
                    threads: 1,
                    t: [v[0], v[1], v[2], v[3], v[4]],
                });
                notes.push(format!(
                    "SEAL checked (every timed operation's last result decrypted), N = {n}: \
                     noise budget {} bits after mul+relin",
                    v[5]
                ));
                if n == 8192 {
                    seal_8192 = Some(v[4]);
                }
            }
            Err(e) if e.contains("decrypt") => anyhow::bail!("SEAL, N = {n}: {e}"),
            Err(e) => notes.push(format!("SEAL not run at N = {n}: {e}")),
        }
        if let Some(py) = &openfhe {
            let bits = params
                .moduli()
                .iter()
                .map(|q| 64 - q.leading_zeros())
                .max()
                .unwrap_or(60);
            let args = [
                n.to_string(),
                reps.to_string(),
                bits.to_string(),
                params.moduli().len().to_string(),
            ];
            match child_times(py.as_os_str(), OPENFHE_SCRIPT, &args, &expect) {
                Ok(v) => {
                    rows.push(Row {
                        label: format!(
                            "OpenFHE 1.6 (HPS, BV), {} × {bits}-bit primes",
                            params.moduli().len()
                        ),
                        log_q: format!("{:.0}", v[5]),
                        threads: 1,
                        t: [v[0], v[1], v[2], v[3], v[4]],
                    });
                    notes.push(format!(
                        "OpenFHE checked (every timed operation's last result decrypted), N = {n}"
                    ));
                    if n == 8192 {
                        openfhe_8192 = Some(v[4]);
                    }
                }
                Err(e) if e.contains("decrypt") => anyhow::bail!("OpenFHE, N = {n}: {e}"),
                Err(e) => notes.push(format!("OpenFHE not run at N = {n}: {e}")),
            }
        }
        for r in &rows {
            let [e, d, m, rl, b] = r.t;
            println!(
                "| {n} | {} | {} | {} | {e:.2} | {d:.2} | {m:.2} | {rl:.2} | {b:.2} |",
                r.log_q, r.label, r.threads
            );
        }
        // rows[1] is ours HPS 1 thread, rows[0] fhe.rs; rows 1..5 are (HPS, BEHZ) × (1, 2) threads.
        let ours = &rows[1];
        let mut q = [0.0; 5];
        for (k, x) in q.iter_mut().enumerate() {
            *x = ours.t[k] / rows[0].t[k];
        }
        ratios.push((n, params.log_q(), q));
        for pair in rows[1..5].chunks(2) {
            threads.push((n, pair[0].label.clone(), pair[0].t[4], pair[1].t[4]));
        }
        if n == 8192 {
            ours_8192 = Some(ours.t[4]);
            fhe_8192 = Some(rows[0].t[4]);
        }
    }
    for line in &notes {
        println!("{line}");
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
    println!(
        "## mul+relin on 1 and 2 threads (ms; efficiency = t1 / (2·t2); load average {} now)",
        load_average()
    );
    println!("| N | method | 1 thread | 2 threads | speedup | efficiency |");
    println!("|---|---|---|---|---|---|");
    for (n, label, t1, t2) in &threads {
        println!(
            "| {n} | {label} | {t1:.2} | {t2:.2} | {:.2} | {:.2} |",
            t1 / t2,
            t1 / (2.0 * t2)
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
        let mut outs: Vec<Option<vsp_bfv::Result<vsp_bfv::Ciphertext>>> =
            evs.iter().map(|_| None).collect();
        let ops: Vec<Op<'_>> = evs
            .iter()
            .zip(outs.iter_mut())
            .map(|(ev, slot)| -> Op<'_> {
                let (a, rk) = (&a, &rk);
                Box::new(move || keep(slot, || ev.multiply_relin(a, a, rk)))
            })
            .collect();
        let res = interleaved(3, ops);
        let enc = Encoder::new(&params);
        for (m, out) in ["BEHZ", "HPS"].iter().zip(outs) {
            let c = out.ok_or_else(|| anyhow::anyhow!("{m} never ran"))??;
            let got = enc.decode_batch(&sk.decrypt(&c)?)?;
            anyhow::ensure!(got[..3] == [1, 4, 9], "{m} mul+relin wrong with {k} primes");
        }
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
        if let Some(f) = fhe_8192 {
            println!("mul_relin_ratio_vs_fhe_rs_8192={:.3}", h / f);
        }
        if let Some(s) = seal_8192 {
            println!("mul_relin_ratio_vs_seal_8192={:.3}", h / s);
        }
        if let Some(o) = openfhe_8192 {
            println!("mul_relin_ratio_vs_openfhe_8192={:.3}", h / o);
        }
    }
    Ok(())
}
