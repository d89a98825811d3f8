//! `tfhe` suite: vsp-tfhe (`Params::default_128`) against TFHE-rs (`tfhe` crate, boolean API,
//! `DEFAULT_PARAMETERS`) in one process, one thread (RAYON_NUM_THREADS=1 unless set): key generation,
//! NAND, XOR, MUX, key sizes, plus our CMUX and circuit bootstrapping. Ours and theirs are timed in
//! alternating rounds so that load on a shared machine hits both alike.
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

    let (a, b, c) = (
        sk.encrypt_bit(true),
        sk.encrypt_bit(false),
        sk.encrypt_bit(true),
    );
    let (ta, tbb, tc) = (cks.encrypt(true), cks.encrypt(false), cks.encrypt(true));
    // Correctness guard: a benchmark of wrong results is worthless.
    anyhow::ensure!(sk.decrypt_bit(&ek.nand(&a, &b)?)?, "vsp-tfhe NAND wrong");
    anyhow::ensure!(cks.decrypt(&sks.nand(&ta, &tbb)), "TFHE-rs NAND wrong");

    let mut rows: Vec<(&str, Vec<f64>, Vec<f64>)> = vec![
        ("NAND", vec![], vec![]),
        ("XOR", vec![], vec![]),
        ("MUX", vec![], vec![]),
    ];
    for _ in 0..rounds {
        rows[0].1.push(sample(5, || {
            black_box(ek.nand(&a, &b).ok());
        }));
        rows[0].2.push(sample(5, || {
            black_box(sks.nand(&ta, &tbb));
        }));
        rows[1].1.push(sample(5, || {
            black_box(ek.xor(&a, &b).ok());
        }));
        rows[1].2.push(sample(5, || {
            black_box(sks.xor(&ta, &tbb));
        }));
        rows[2].1.push(sample(3, || {
            black_box(ek.mux(&c, &a, &b).ok());
        }));
        rows[2].2.push(sample(3, || {
            black_box(sks.mux(&tc, &ta, &tbb));
        }));
    }

    // Our leveled operations.
    let (g, _) = ck.circuit_bootstrap(&a)?;
    let d1 = sk.encrypt_trlwe_bits(&[true])?;
    let d0 = sk.encrypt_trlwe_bits(&[false])?;
    let mut scratch = vsp_tfhe::ExtScratch::new(p.n1, g.gadget());
    let cmux_us = median(
        (0..rounds)
            .map(|_| {
                sample(200, || {
                    black_box(g.cmux_with(&d1, &d0, &mut scratch).ok());
                }) * 1e3
            })
            .collect(),
    );
    let cb_ms = median(
        (0..rounds.min(5))
            .map(|_| {
                sample(1, || {
                    black_box(ck.circuit_bootstrap(&a).ok());
                })
            })
            .collect(),
    );

    // Key sizes. TFHE-rs: Fourier BK n·(k+1)ℓ·(k+1)·N/2·16 B + KS (k·N)·t·(n+1)·4 B (their layout).
    let (n, k, big_n, l, t) = (805usize, 3usize, 512usize, 2usize, 5usize);
    let theirs_key = n * (k + 1) * l * (k + 1) * big_n / 2 * 16 + k * big_n * t * (n + 1) * 4;
    let mb = |x: usize| x as f64 / 1e6;

    println!("# vsp-tfhe vs TFHE-rs 1.x (boolean, DEFAULT_PARAMETERS), 1 thread, {rounds} rounds");
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
        "| evaluation key in memory | {:.1} MB | {:.1} MB | {:.2} |",
        mb(ek.size_bytes()),
        mb(theirs_key),
        ek.size_bytes() as f64 / theirs_key as f64
    );
    println!(
        "| evaluation key file (compressed) | {:.1} MB | – | |",
        mb(cek.to_bytes().len())
    );
    println!("| CMUX (N=1024, ℓ=4, Bg=2^3) | {cmux_us:.1} µs | – | |");
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
