//! `ckks` suite: vsp-ckks device encode+encrypt against Microsoft SEAL 4.4 (seal-python, run as a
//! child process), for N = 4096 and 8192 with SEAL-Embedded's parameters, plus the working memory
//! of each device configuration (measured equal to this accounting by vsp-ckks's tests/memory.rs).
//!
//! Both sides encode 2^(log N − 1) real values and encrypt them; SEAL is timed in C++ calls with
//! preallocated outputs (`encode(VectorDouble, scale, Plaintext)`, `encrypt(Plaintext, Ciphertext)`),
//! ours with a sink that copies every limb into a preallocated upload buffer.
//! Last line: `ckks_encrypt_ratio_vs_seal_4096=<ours/SEAL>` (public-key encryption, fastest configs).

use std::process::Command;
use std::time::Instant;

use rand::SeedableRng;
use vsp_ckks::server::{KeyGenerator, ServerContext};
use vsp_ckks::{
    working_memory, CkksParams, DeviceConfig, DeviceEncryptor, EncryptionKind, EncryptionSeeds,
    FftRoots, IndexMap, MemoryMode, NttRoots, Part, SinkError,
};

/// Best of `reps` runs of `f`, in microseconds. The minimum, not the median: the shared 2-core
/// machine is heavily loaded and SEAL runs at another moment in another process, so only the
/// least-disturbed run of each side is comparable.
fn best_us(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e6
        })
        .fold(f64::INFINITY, f64::min)
}

const SEAL_SCRIPT: &str = r#"
import sys, time, seal
n = int(sys.argv[1]); reps = int(sys.argv[2]); primes = [int(x) for x in sys.argv[3].split(',')]
p = seal.EncryptionParameters(seal.scheme_type.ckks)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus([seal.Modulus(q) for q in primes])
ctx = seal.SEALContext(p)
assert ctx.parameters_set(), ctx.parameter_error_message()
kg = seal.KeyGenerator(ctx)
pk = seal.PublicKey(); kg.create_public_key(pk)
enc = seal.Encryptor(ctx, pk); enc.set_secret_key(kg.secret_key())
coder = seal.CKKSEncoder(ctx)
vals = seal.VectorDouble([((j * 37) % 101) / 10.0 - 5.0 for j in range(n // 2)])
pt = seal.Plaintext(); ct = seal.Ciphertext()
def med(f):
    f(); ts = []
    for _ in range(reps):
        s = time.perf_counter(); f(); ts.append((time.perf_counter() - s) * 1e6)
    return min(ts)
def asym():
    coder.encode(vals, 2.0 ** 25, pt); enc.encrypt(pt, ct)
def sym():
    coder.encode(vals, 2.0 ** 25, pt); enc.encrypt_symmetric(pt, ct)
def enc_only():
    enc.encrypt(pt, ct)
coder.encode(vals, 2.0 ** 25, pt)
print(f"asym={med(asym)} sym={med(sym)} encode={med(lambda: coder.encode(vals, 2.0 ** 25, pt))}")
"#;

/// SEAL's (asymmetric, symmetric, encode-only) best times in µs, or why not.
fn seal_times(params: &CkksParams, reps: usize) -> Result<(f64, f64, f64), String> {
    let primes: Vec<String> = params.key_primes().iter().map(u64::to_string).collect();
    let out = Command::new("python3")
        .args([
            "-c",
            SEAL_SCRIPT,
            &params.n().to_string(),
            &reps.to_string(),
            &primes.join(","),
        ])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| -> Result<f64, String> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("unexpected SEAL output {text:?}"))
    };
    Ok((get("asym=")?, get("sym=")?, get("encode=")?))
}

pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let mut rng = rand_chacha_rng();
    let mut ratio_4096 = None;
    for (n, reps) in [(4096usize, 200usize), (8192, 100)] {
        let params = CkksParams::seal_embedded(n)?;
        let ctx = ServerContext::new(params.clone())?;
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        let dsk = kg.secret_key().to_device()?;
        let dpk = kg.public_key(&mut rng)?.to_device(&ctx)?;
        let values: Vec<f64> = (0..n / 2)
            .map(|j| ((j * 37) % 101) as f64 / 10.0 - 5.0)
            .collect();
        let l = params.data_primes().len();
        let mut upload = vec![0u32; 2 * l * n];
        println!("## vsp-ckks encode+encrypt, N = {n}, {l} data primes (µs, best of {reps})");
        println!("| configuration | symmetric (seeded) | asymmetric | working RAM sym / asym (B) | tables (B) |");
        println!("|---|---|---|---|---|");
        let mut best_asym = f64::INFINITY;
        let configs = [
            (
                "fast: loaded roots, 2 buffers",
                DeviceConfig::fast(params.clone()),
            ),
            (
                "loaded roots, 1 buffer",
                DeviceConfig {
                    memory: MemoryMode::Low,
                    ..DeviceConfig::fast(params.clone())
                },
            ),
            (
                "one-shot NTT roots, on-the-fly FFT, 1 buffer",
                DeviceConfig {
                    ntt_roots: NttRoots::OneShot,
                    ..DeviceConfig::low_memory(params.clone())
                },
            ),
            (
                "low: all on the fly, 1 buffer",
                DeviceConfig::low_memory(params.clone()),
            ),
            (
                "on the fly, 2 buffers",
                DeviceConfig {
                    fft_roots: FftRoots::OnTheFly,
                    index_map: IndexMap::OnTheFly,
                    ntt_roots: NttRoots::OnTheFly,
                    ..DeviceConfig::fast(params.clone())
                },
            ),
        ];
        for (name, cfg) in configs {
            let mut enc = DeviceEncryptor::new(cfg.clone())?;
            let seeds = EncryptionSeeds::random(&mut rng);
            let mut sink = |p: Part<'_>| -> Result<(), SinkError> {
                if let Part::Limb {
                    poly,
                    prime,
                    coeffs,
                } = p
                {
                    let at = (poly * l + prime) * coeffs.len();
                    upload[at..at + coeffs.len()].copy_from_slice(coeffs);
                }
                Ok(())
            };
            let sym = best_us(reps, || {
                enc.encrypt_symmetric_seeded(&values, &dsk, &seeds, &mut sink)
                    .expect("encrypt")
            });
            let asym = best_us(reps, || {
                enc.encrypt_asymmetric(&values, &dpk, &seeds, &mut sink)
                    .expect("encrypt")
            });
            best_asym = best_asym.min(asym);
            let (ms, ma) = (
                working_memory(&cfg, EncryptionKind::Symmetric),
                working_memory(&cfg, EncryptionKind::Asymmetric),
            );
            println!(
                "| {name} | {sym:.0} | {asym:.0} | {} / {} | {} |",
                ms.ram(EncryptionKind::Symmetric),
                ma.ram(EncryptionKind::Asymmetric),
                ms.tables
            );
        }
        match seal_times(&params, reps) {
            Ok((asym, sym, encode)) => {
                println!("| SEAL 4.4 (seal-python; pk encryption at the key level, then mod switch) | {sym:.0} | {asym:.0} | – | – |");
                println!("SEAL encode alone: {encode:.0} µs");
                let r = best_asym / asym;
                println!("ours/SEAL (asymmetric, fastest configuration), N = {n}: {r:.2}");
                if n == 4096 {
                    ratio_4096 = Some(r);
                }
            }
            Err(e) => {
                println!("SEAL unavailable ({e}); install with `pip install seal-python numpy`")
            }
        }
        println!();
    }
    match ratio_4096 {
        Some(r) => println!("ckks_encrypt_ratio_vs_seal_4096={r:.3}"),
        None => println!("ckks_encrypt_ratio_vs_seal_4096=NA"),
    }
    Ok(())
}

fn rand_chacha_rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(0xC0FFEE)
}
