//! `tfhe` suite: vsp-tfhe (`Params::default_128`) against TFHE-rs (`tfhe` crate, boolean API,
//! `DEFAULT_PARAMETERS`) in one process, one thread (RAYON_NUM_THREADS=1 unless set): key generation,
//! NAND, XOR, MUX, key sizes (measured: in-memory key vectors, and serialized sizes), plus our CMUX
//! and circuit bootstrapping. Ours and theirs are timed in alternating rounds so that load on a
//! shared machine hits both alike; the rounds cycle through all input bits, and every timed result
//! (gates of both libraries, CMUX outputs, circuit-bootstrapped selectors) is decrypted and checked.
//! Ends with `nand_ratio_vs_tfhe_rs=<ours/theirs>`.

use std::hint::black_box;
use std::time::Instant;

use ::tfhe::boolean::prelude as tb;
use anyhow::Context;
use tb::BinaryBooleanGates;
use vsp_tfhe::{noise, CompressedCircuitKey, CompressedEvalKey, Params, SecretKey};

/// Median of `rounds` timings (ms) of `f`, each the mean of `reps` calls.
fn sample(reps: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() * 1e3 / reps as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the suite. Optional argument: number of alternating rounds (default 7).
pub fn run(args: &[String]) -> anyhow::Result<()> {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // Single-threaded comparison: both libraries use rayon's global pool, created lazily.
        std::env::set_var("RAYON_NUM_THREADS", "1");
    }
    let rounds: usize = match args.first() {
        Some(s) => s.parse().context("rounds must be a number")?,
        None => 7,
    };
    let p = Params::default_128();

    // Key generation.
    let t = Instant::now();
    let sk = SecretKey::generate(&p)?;
    let cek = CompressedEvalKey::generate(&sk);
    let ek = cek.decompress()?;
    let ours_keygen = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let (cks, sks) = tb::gen_keys();
    let theirs_keygen = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let cck = CompressedCircuitKey::generate(&sk);
    let ck = cck.decompress()?;
    let cb_keygen = t.elapsed().as_secs_f64() * 1e3;

    // Inputs: both bits under both libraries; round r feeds bits (r, r >> 1, r >> 2) so that the
    // timed gates see every input combination, and every timed result is decrypted afterwards.
    let ours_in = [sk.encrypt_bit(false), sk.encrypt_bit(true)];
    let theirs_in = [cks.encrypt(false), cks.encrypt(true)];
    let bits = |r: usize| (r & 1 == 1, r & 2 == 2, r & 4 == 4);
    let idx = usize::from;

    // Results of every timed call, with the expected plaintext: (operation, expected, ciphertext).
    let mut ours_out: Vec<(&str, bool, Result<vsp_tfhe::Bit, vsp_tfhe::Error>)> = Vec::new();
    let mut theirs_out: Vec<(&str, bool, tb::Ciphertext)> = Vec::new();
    ours_out.reserve(13 * rounds);
    theirs_out.reserve(13 * rounds);

    let mut rows: Vec<(&str, Vec<f64>, Vec<f64>)> = vec![
        ("NAND", vec![], vec![]),
        ("XOR", vec![], vec![]),
        ("MUX", vec![], vec![]),
    ];
    for r in 0..rounds {
        let (x, y, z) = bits(r);
        let (oa, ob, oc) = (&ours_in[idx(x)], &ours_in[idx(y)], &ours_in[idx(z)]);
        let (ta, tbb, tc) = (&theirs_in[idx(x)], &theirs_in[idx(y)], &theirs_in[idx(z)]);
        rows[0].1.push(sample(5, || {
            ours_out.push(("NAND", !(x && y), black_box(ek.nand(oa, ob))));
        }));
        rows[0].2.push(sample(5, || {
            theirs_out.push(("NAND", !(x && y), black_box(sks.nand(ta, tbb))));
        }));
        rows[1].1.push(sample(5, || {
            ours_out.push(("XOR", x ^ y, black_box(ek.xor(oa, ob))));
        }));
        rows[1].2.push(sample(5, || {
            theirs_out.push(("XOR", x ^ y, black_box(sks.xor(ta, tbb))));
        }));
        let mux = if z { x } else { y };
        rows[2].1.push(sample(3, || {
            ours_out.push(("MUX", mux, black_box(ek.mux(oc, oa, ob))));
        }));
        rows[2].2.push(sample(3, || {
            theirs_out.push(("MUX", mux, black_box(sks.mux(tc, ta, tbb))));
        }));
    }
    // A benchmark of wrong results is worthless: decrypt every timed output.
    for (op, want, ct) in &ours_out {
        let got = match ct {
            Ok(ct) => sk.decrypt_bit(ct)?,
            Err(e) => anyhow::bail!("vsp-tfhe {op} failed: {e}"),
        };
        anyhow::ensure!(
            got == *want,
            "vsp-tfhe {op} decrypts to {got}, expected {want}"
        );
    }
    for (op, want, ct) in &theirs_out {
        let got = cks.decrypt(ct);
        anyhow::ensure!(
            got == *want,
            "TFHE-rs {op} decrypts to {got}, expected {want}"
        );
    }
    let gates_checked = (ours_out.len(), theirs_out.len());

    // Our leveled operations: CMUX driven by circuit-bootstrapped selectors of both bits, between
    // two different bit patterns; every output decrypted.
    let n1 = p.n1;
    let pattern1: Vec<bool> = (0..n1).map(|i| i % 3 == 0).collect();
    let pattern0: Vec<bool> = (0..n1).map(|i| i % 5 == 1).collect();
    let d1 = sk.encrypt_trlwe_bits(&pattern1)?;
    let d0 = sk.encrypt_trlwe_bits(&pattern0)?;
    let selectors = [
        ck.circuit_bootstrap_one(&ours_in[0])?,
        ck.circuit_bootstrap_one(&ours_in[1])?,
    ];
    let mut scratch = vsp_tfhe::ExtScratch::new(p.n1, selectors[0].gadget());
    let mut cmux_out = Vec::with_capacity(200 * rounds);
    let cmux_us = median(
        (0..rounds)
            .map(|r| {
                let bit = r & 1 == 1;
                let g = &selectors[idx(bit)];
                sample(200, || {
                    cmux_out.push((bit, black_box(g.cmux_with(&d1, &d0, &mut scratch))));
                }) * 1e3
            })
            .collect(),
    );
    for (bit, out) in &cmux_out {
        let got = sk.decrypt_trlwe_bits(out.as_ref().map_err(|e| anyhow::anyhow!("CMUX: {e}"))?)?;
        let want = if *bit { &pattern1 } else { &pattern0 };
        anyhow::ensure!(&got == want, "CMUX with selector {bit} decrypts wrongly");
    }
    let mut cb_out = Vec::with_capacity(rounds.min(5));
    let cb_ms = median(
        (0..rounds.min(5))
            .map(|r| {
                let bit = r & 1 == 1;
                let input = &ours_in[idx(bit)];
                sample(1, || {
                    cb_out.push((bit, black_box(ck.circuit_bootstrap(input))));
                })
            })
            .collect(),
    );
    // Circuit bootstrapping of m gives (TRGSW(m), TRGSW(1 − m)): each must select accordingly.
    for (bit, out) in &cb_out {
        let (g, inv) = out
            .as_ref()
            .map_err(|e| anyhow::anyhow!("circuit bootstrap: {e}"))?;
        for (sel, m) in [(g, *bit), (inv, !*bit)] {
            let got = sk.decrypt_trlwe_bits(&sel.cmux(&d1, &d0)?)?;
            let want = if m { &pattern1 } else { &pattern0 };
            anyhow::ensure!(&got == want, "circuit bootstrap of {bit} selects wrongly");
        }
    }
    let leveled_checked = (cmux_out.len(), cb_out.len());

    // Key sizes, measured. In memory: our key vectors (`EvalKey::size_bytes`, the Fourier
    // bootstrapping key's f64s + the key-switching key's u32s) against TFHE-rs's own accessors
    // (`size_of_val` of their Fourier bootstrapping key's c64s and key-switching key's u32s).
    // Serialized: bincode of TFHE-rs's `ServerKey` and `CompressedServerKey` (serde); ours: the
    // key file of the compressed key.
    let theirs_mem = sks.bootstrapping_key_size_bytes() + sks.key_switching_key_size_bytes();
    let theirs_ser = bincode::serialize(&sks)?.len();
    let theirs_csk = ::tfhe::boolean::server_key::CompressedServerKey::new(&cks);
    let theirs_cser = bincode::serialize(&theirs_csk)?.len();
    let ours_mem = ek.size_bytes();
    let ours_file = cek.to_bytes().len();
    let mb = |x: usize| x as f64 / 1e6;

    println!("# vsp-tfhe vs TFHE-rs 1.x (boolean, DEFAULT_PARAMETERS), 1 thread, {rounds} rounds");
    println!(
        "checked: {} + {} timed gate results (vsp-tfhe + TFHE-rs), {} CMUX outputs, {} circuit \
         bootstraps, all decrypted correctly",
        gates_checked.0, gates_checked.1, leveled_checked.0, leveled_checked.1
    );
    println!("| operation | vsp-tfhe | TFHE-rs | ratio |");
    println!("|---|---|---|---|");
    let mut nand_ratio = 0.0;
    for (name, ours, theirs) in rows {
        let (o, th) = (median(ours), median(theirs));
        if name == "NAND" {
            nand_ratio = o / th;
        }
        println!("| {name} | {o:.2} ms | {th:.2} ms | {:.2} |", o / th);
    }
    println!(
        "| key generation (client + server) | {ours_keygen:.0} ms | {theirs_keygen:.0} ms | {:.2} |",
        ours_keygen / theirs_keygen
    );
    println!(
        "| evaluation key in memory (measured key vectors) | {:.1} MB | {:.1} MB | {:.2} |",
        mb(ours_mem),
        mb(theirs_mem),
        ours_mem as f64 / theirs_mem as f64
    );
    println!(
        "| evaluation key serialized (ours: –; TFHE-rs: bincode of `ServerKey`) | – | {:.1} MB | |",
        mb(theirs_ser)
    );
    println!(
        "| compressed evaluation key serialized (ours: key file; TFHE-rs: bincode of `CompressedServerKey`) | {:.1} MB | {:.1} MB | {:.2} |",
        mb(ours_file),
        mb(theirs_cser),
        ours_file as f64 / theirs_cser as f64
    );
    let gadget = selectors[0].gadget();
    println!(
        "| CMUX (N={}, ℓ={}, Bg=2^{}) | {cmux_us:.1} µs | – | |",
        p.n1, gadget.levels, gadget.base_bits
    );
    println!("| circuit bootstrapping (+ inverse) | {cb_ms:.1} ms | – | |");
    println!("| circuit key keygen | {cb_keygen:.0} ms | – | |");
    println!(
        "| circuit key in memory / file | {:.1} MB / {:.1} MB | – | |",
        mb(ck.size_bytes()),
        mb(cck.to_bytes().len())
    );
    let r = noise::predict(&p);
    println!(
        "noise: log2 p_fail gate {:.1} (TFHE-rs DEFAULT: -64.3), circuit bootstrap {:.1}",
        r.log2_gate_failure, r.log2_cb_failure
    );
    println!("nand_ratio_vs_tfhe_rs={nand_ratio:.3}");
    Ok(())
}
