//! End to end: server keys → device encryption (every mode) → server reception, decryption, and
//! homomorphic operations.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use vsp_ckks::server::{Collector, Decryptor, Evaluator, KeyGenerator, ServerContext};
use vsp_ckks::{
    CkksParams, DeviceConfig, DeviceEncryptor, EncryptionSeeds, FftRoots, IndexMap, MemoryMode,
    NttRoots, Part, SinkError,
};

fn max_err(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn random_values(rng: &mut ChaCha20Rng, count: usize) -> Vec<f64> {
    (0..count).map(|_| rng.gen_range(-10.0..10.0)).collect()
}

#[test]
fn symmetric_and_asymmetric_roundtrip_at_each_n() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for n in [1024, 2048, 4096, 8192, 16384] {
        let params = CkksParams::seal_embedded(n).unwrap();
        let ctx = ServerContext::new(params.clone()).unwrap();
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let sk = kg.secret_key();
        let dsk = sk.to_device().unwrap();
        let dpk = kg.public_key(&mut rng).unwrap().to_device(&ctx).unwrap();
        let values = random_values(&mut rng, n / 2);
        let dec = Decryptor::new(&ctx, sk);
        // Bound: fresh noise ≲ 2^10 in coefficient norm ⇒ slot error ≲ 2^10·√N / Δ; Δ ≥ 2^20.
        let tol = 64.0 * (n as f64).sqrt() * 21.0 / params.scale();
        for cfg in [
            DeviceConfig::low_memory(params.clone()),
            DeviceConfig::fast(params.clone()),
        ] {
            let mut enc = DeviceEncryptor::new(cfg).unwrap();
            let mut col = Collector::new(&ctx);
            enc.encrypt_symmetric_rng(&values, &dsk, &mut rng, &mut col)
                .unwrap();
            let got = dec.decrypt_real(&col.finish().unwrap()).unwrap();
            assert!(
                max_err(&got, &values) < tol,
                "sym n={n}: {} ≥ {tol}",
                max_err(&got, &values)
            );

            let seeds = EncryptionSeeds::random(&mut rng);
            let mut col = Collector::new(&ctx);
            enc.encrypt_asymmetric(&values, &dpk, &seeds, &mut col)
                .unwrap();
            let got = dec.decrypt_real(&col.finish().unwrap()).unwrap();
            assert!(
                max_err(&got, &values) < 4.0 * tol,
                "asym n={n}: {}",
                max_err(&got, &values)
            );
        }
    }
}

/// Records the stream as (poly, prime, words) plus the seed.
fn record(
    enc: &mut DeviceEncryptor,
    values: &[f64],
    f: impl Fn(&mut DeviceEncryptor, &[f64], &mut dyn FnMut(Part<'_>) -> Result<(), SinkError>),
) -> Vec<u32> {
    let mut out = Vec::new();
    let mut sink = |p: Part<'_>| {
        match p {
            Part::Seed(s) => out.extend(s.iter().map(|&b| b as u32)),
            Part::Limb {
                poly,
                prime,
                coeffs,
            } => {
                out.push(poly as u32);
                out.push(prime as u32);
                out.extend_from_slice(coeffs);
            }
        }
        Ok(())
    };
    f(enc, values, &mut sink);
    out
}

#[test]
fn every_memory_mode_gives_bit_identical_ciphertexts() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let params = CkksParams::default();
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let dsk = kg.secret_key().to_device().unwrap();
    let dpk = kg.public_key(&mut rng).unwrap().to_device(&ctx).unwrap();
    let values = random_values(&mut rng, 2048);
    let seeds = EncryptionSeeds::random(&mut rng);
    let (mut sym_ref, mut asym_ref, mut full_ref) = (None, None, None);
    for fft_roots in [FftRoots::OnTheFly, FftRoots::Loaded] {
        for index_map in [IndexMap::OnTheFly, IndexMap::Persistent] {
            for ntt_roots in [NttRoots::OnTheFly, NttRoots::OneShot, NttRoots::Loaded] {
                for memory in [MemoryMode::Low, MemoryMode::Fast] {
                    let cfg = DeviceConfig {
                        params: params.clone(),
                        fft_roots,
                        index_map,
                        ntt_roots,
                        memory,
                    };
                    let mut enc = DeviceEncryptor::new(cfg.clone()).unwrap();
                    let sym = record(&mut enc, &values, |e, v, s| {
                        e.encrypt_symmetric_seeded(v, &dsk, &seeds, s).unwrap()
                    });
                    let full = record(&mut enc, &values, |e, v, s| {
                        e.encrypt_symmetric(v, &dsk, &seeds, s).unwrap()
                    });
                    let asym = record(&mut enc, &values, |e, v, s| {
                        e.encrypt_asymmetric(v, &dpk, &seeds, s).unwrap()
                    });
                    for (r, x) in [
                        (&mut sym_ref, sym),
                        (&mut full_ref, full),
                        (&mut asym_ref, asym),
                    ] {
                        match r {
                            None => *r = Some(x),
                            Some(want) => assert!(*want == x, "{cfg:?} differs"),
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn seeded_and_full_symmetric_agree() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let params = CkksParams::seal_embedded(2048).unwrap();
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let dsk = kg.secret_key().to_device().unwrap();
    let values = random_values(&mut rng, 1024);
    let seeds = EncryptionSeeds::random(&mut rng);
    let mut enc = DeviceEncryptor::new(DeviceConfig::fast(params)).unwrap();
    let mut a = Collector::new(&ctx);
    enc.encrypt_symmetric_seeded(&values, &dsk, &seeds, &mut a)
        .unwrap();
    let mut b = Collector::new(&ctx);
    enc.encrypt_symmetric(&values, &dsk, &seeds, &mut b)
        .unwrap();
    assert_eq!(a.finish().unwrap(), b.finish().unwrap());
}

#[test]
fn add_multiply_relinearize_rescale() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    // N = 8192: six 30-bit primes, scale 2^25 — room for two multiplications.
    let params = CkksParams::seal_embedded(8192).unwrap();
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let rk = kg.relin_keys(&mut rng).unwrap();
    let dpk = kg.public_key(&mut rng).unwrap().to_device(&ctx).unwrap();
    let dec = Decryptor::new(&ctx, kg.secret_key());
    let ev = Evaluator::new(&ctx);
    let mut enc = DeviceEncryptor::new(DeviceConfig::fast(params)).unwrap();
    let x = random_values(&mut rng, 4096);
    let y = random_values(&mut rng, 4096);
    let mut encrypt = |v: &[f64], rng: &mut ChaCha20Rng| {
        let mut c = Collector::new(&ctx);
        enc.encrypt_asymmetric(v, &dpk, &EncryptionSeeds::random(rng), &mut c)
            .unwrap();
        c.finish().unwrap()
    };
    let cx = encrypt(&x, &mut rng);
    let cy = encrypt(&y, &mut rng);

    let sum = dec.decrypt_real(&ev.add(&cx, &cy).unwrap()).unwrap();
    let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    assert!(max_err(&sum, &want) < 1e-2);
    let diff = dec.decrypt_real(&ev.sub(&cx, &cy).unwrap()).unwrap();
    let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
    assert!(max_err(&diff, &want) < 1e-2);

    let prod3 = ev.multiply(&cx, &cy).unwrap();
    let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    assert!(max_err(&dec.decrypt_real(&prod3).unwrap(), &want) < 0.5);
    let prod = ev.relinearize(&prod3, &rk).unwrap();
    assert_eq!(prod.size(), 2);
    assert!(max_err(&dec.decrypt_real(&prod).unwrap(), &want) < 0.5);
    let res = ev.rescale(&prod).unwrap();
    assert_eq!(res.level(), 5);
    assert!((res.scale() - 2f64.powi(50) / ctx.q(5) as f64).abs() < 1e-6);
    let got = dec.decrypt_real(&res).unwrap();
    assert!(max_err(&got, &want) < 0.5, "{}", max_err(&got, &want));

    // x·y·x at the next level: rescale x down to the same level first.
    let cx1 = ev.mod_drop(&cx).unwrap();
    let mut cx1s = cx1.clone();
    cx1s.set_scale(res.scale());
    assert!(
        ev.add(&res, &cx1).is_err(),
        "different scales must be refused"
    );
    let p2 = ev
        .rescale(
            &ev.relinearize(&ev.multiply(&res, &cx1s).unwrap(), &rk)
                .unwrap(),
        )
        .unwrap();
    let want2: Vec<f64> = want
        .iter()
        .zip(&x)
        .map(|(a, b)| a * b * 2f64.powi(25) / res.scale())
        .collect();
    let got2 = dec.decrypt_real(&p2).unwrap();
    assert!(max_err(&got2, &want2) < 20.0, "{}", max_err(&got2, &want2));

    assert!(
        ev.multiply(&cx, &res).is_err(),
        "different levels must be refused"
    );
    assert!(ev.relinearize(&cx, &rk).is_err());
}

#[test]
fn complex_values_roundtrip() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let params = CkksParams::seal_embedded(2048).unwrap();
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let dsk = kg.secret_key().to_device().unwrap();
    let values: Vec<vsp_ckks::Complex> = (0..1024)
        .map(|_| vsp_ckks::Complex::new(rng.gen_range(-3.0..3.0), rng.gen_range(-3.0..3.0)))
        .collect();
    let mut enc = DeviceEncryptor::new(DeviceConfig::low_memory(params)).unwrap();
    let mut col = Collector::new(&ctx);
    enc.encrypt_symmetric_rng(&values, &dsk, &mut rng, &mut col)
        .unwrap();
    let got = Decryptor::new(&ctx, kg.secret_key())
        .decrypt(&col.finish().unwrap())
        .unwrap();
    for (g, v) in got.iter().zip(&values) {
        assert!(
            (g.re - v.re).abs() < 1e-4 && (g.im - v.im).abs() < 1e-4,
            "{g:?} vs {v:?}"
        );
    }
    // Too many values are refused before anything is sent.
    let mut sent = false;
    let mut sink = |_: Part<'_>| -> Result<(), SinkError> {
        sent = true;
        Ok(())
    };
    let too_many = vec![0.0f64; 1025];
    assert!(enc
        .encrypt_symmetric_rng(&too_many, &dsk, &mut rng, &mut sink)
        .is_err());
    assert!(!sent);
}
