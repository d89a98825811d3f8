//! Interoperability with Microsoft SEAL 4.4 through seal-python (installed in CI by
//! `pip install seal-python numpy`): SEAL makes the keys; we encrypt with SEAL's public key and secret
//! key (streamed seeded form), evaluate with SEAL's relinearisation keys, and SEAL decrypts and
//! evaluates our ciphertexts; we decrypt SEAL's. Re-serializing SEAL's objects gives SEAL's bytes.
//!
//! `#[ignore = "needs seal-python"]`: run with `cargo test -- --include-ignored` (what `.ci/run`
//! does); fails loudly, never skips, when python3 or seal-python is missing.

use std::path::Path;
use std::process::Command;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
mod common;
#[path = "../../circuit/tests/tool/mod.rs"]
mod tool;

use common::CallerMemory;
use vsp_ckks::seal::{
    read_ciphertext, read_public_key, read_relin_keys, read_secret_key, write_ciphertext,
    write_public_key, write_relin_keys, write_secret_key, SealSeededWriter,
};
use vsp_ckks::server::{Collector, Decryptor, Evaluator, ServerContext};
use vsp_ckks::{
    CkksParams, DeviceConfig, DeviceEncryptor, EncryptionSeeds, IndexMap, MemoryMode, NttRoots,
    SecretKeyForm,
};

const N: usize = 4096;

fn real_values(k: usize) -> Vec<f64> {
    (0..k)
        .map(|j| ((j * 37) % 101) as f64 / 10.0 - 5.0)
        .collect()
}

fn python(script: &Path, cmd: &str, dir: &Path) -> Result<String, String> {
    let out = Command::new("python3")
        .arg(script)
        .arg(cmd)
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

fn require_seal() {
    tool::require(
        "python3",
        &["-c", "import seal, numpy"],
        "pip install seal-python numpy: the SEAL interop test needs seal-python",
    );
}

#[test]
#[ignore = "needs seal-python"]
fn seal_reads_ours_and_we_read_seal() {
    require_seal();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal_interop.py");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    python(&script, "gen", d).unwrap_or_else(|e| panic!("SEAL key generation failed:\n{e}"));

    let ctx = ServerContext::new(CkksParams::default()).unwrap();
    let read = |name: &str| std::fs::read(d.join(name)).unwrap();
    let (pk_bytes, sk_bytes, rk_bytes) = (
        read("seal_pk.bin"),
        read("seal_sk.bin"),
        read("seal_rk.bin"),
    );
    let pk = read_public_key(&ctx, &pk_bytes).unwrap();
    let sk = read_secret_key(&ctx, &sk_bytes).unwrap();
    let rk = read_relin_keys(&ctx, &rk_bytes).unwrap();
    // Our writers reproduce SEAL's bytes exactly.
    assert!(write_public_key(&ctx, &pk).unwrap() == pk_bytes);
    assert!(write_secret_key(&ctx, &sk).unwrap() == sk_bytes);
    assert!(write_relin_keys(&ctx, &rk).unwrap() == rk_bytes);

    // We decrypt SEAL's ciphertexts (complex values: checks the slot order and conjugation).
    let dec = Decryptor::new(&ctx, &sk);
    for name in ["seal_ct.bin", "seal_ct_sym.bin"] {
        let bytes = read(name);
        let ct = read_ciphertext(&ctx, &bytes).unwrap();
        assert!(
            write_ciphertext(&ctx, &ct).unwrap() == bytes,
            "{name} re-serializes differently"
        );
        let got = dec.decrypt(&ct).unwrap();
        for (j, z) in got.iter().enumerate() {
            let (re, im) = (
                ((j * 37) % 101) as f64 / 10.0 - 5.0,
                ((j * 53) % 97) as f64 / 10.0 - 4.0,
            );
            assert!(
                (z.re - re).abs() < 1e-3 && (z.im - im).abs() < 1e-3,
                "{name} slot {j}: {z:?}"
            );
        }
    }

    // Our device encrypts with SEAL's keys.
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let values = real_values(N / 2);
    let params = CkksParams::default();
    let mut enc = DeviceEncryptor::new(DeviceConfig::low_memory(params.clone())).unwrap();
    let dpk = pk.to_device(&ctx).unwrap();
    let mut col = Collector::new(&ctx);
    enc.encrypt_asymmetric(&values, &dpk, &EncryptionSeeds::random(&mut rng), &mut col)
        .unwrap();
    let asym = col.finish().unwrap();
    std::fs::write(
        d.join("ours_asym.bin"),
        write_ciphertext(&ctx, &asym).unwrap(),
    )
    .unwrap();

    let dsk = sk.to_device().unwrap();
    let mut seeded = Vec::new();
    let mut w = SealSeededWriter::new(&params, |b: &[u8]| {
        seeded.extend_from_slice(b);
        Ok(())
    })
    .unwrap();
    let total = w.total_bytes();
    let seeds = EncryptionSeeds::random(&mut rng);
    enc.encrypt_symmetric_seeded(&values, &dsk, &seeds, &mut w)
        .unwrap();
    let _ = w.finish().unwrap();
    assert_eq!(seeded.len() as u64, total);
    assert_eq!(
        seeded.len(),
        113 + 8 * 3 * 4096 + 81,
        "seeded: preamble, c0 only, 81-byte seed info"
    );
    std::fs::write(d.join("ours_seeded.bin"), &seeded).unwrap();
    let seeded_ct = read_ciphertext(&ctx, &seeded).unwrap();
    let mut col = Collector::new(&ctx);
    enc.encrypt_symmetric(&values, &dsk, &seeds, &mut col)
        .unwrap();
    let full = col.finish().unwrap();
    assert_eq!(
        full, seeded_ct,
        "our expansion of the seed must equal the full form"
    );
    std::fs::write(
        d.join("ours_sym_full.bin"),
        write_ciphertext(&ctx, &full).unwrap(),
    )
    .unwrap();

    // The allocation-free encryptor with the other memory options: SEAL reads these too.
    for (name, memory, ntt_roots) in [
        (
            "ours_buffer_seeded.bin",
            MemoryMode::Low,
            NttRoots::LoadedPlain,
        ),
        ("ours_buffer_asym.bin", MemoryMode::Fast, NttRoots::Loaded),
    ] {
        let cfg = DeviceConfig {
            index_map: IndexMap::Loaded,
            ntt_roots,
            memory,
            secret_key: SecretKeyForm::NotPersistent,
            ..DeviceConfig::low_memory(params.clone())
        };
        let mut mem = CallerMemory::new(&cfg);
        let mut benc = mem.encryptor(cfg);
        let seeds = EncryptionSeeds::random(&mut rng);
        let bytes = if memory == MemoryMode::Low {
            let mut out = Vec::new();
            let mut w = SealSeededWriter::new(&params, |b: &[u8]| {
                out.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            benc.encrypt_symmetric_stored(&values, &dsk, &seeds, true, &mut w)
                .unwrap();
            let _ = w.finish().unwrap();
            out
        } else {
            let mut col = Collector::new(&ctx);
            benc.encrypt_asymmetric(&values, &dpk.view(), &seeds, &mut col)
                .unwrap();
            write_ciphertext(&ctx, &col.finish().unwrap()).unwrap()
        };
        std::fs::write(d.join(name), bytes).unwrap();
    }

    // Our evaluator with SEAL's relinearisation keys.
    let ev = Evaluator::new(&ctx);
    let prod = ev
        .rescale(
            &ev.relinearize(&ev.multiply(&asym, &seeded_ct).unwrap(), &rk)
                .unwrap(),
        )
        .unwrap();
    std::fs::write(
        d.join("ours_prod.bin"),
        write_ciphertext(&ctx, &prod).unwrap(),
    )
    .unwrap();

    let report = python(&script, "check", d)
        .unwrap_or_else(|e| panic!("SEAL rejected our ciphertexts:\n{e}"));
    println!("{report}");
}
