//! End to end: server keys → device encryption (every mode) → server reception, decryption, and
//! homomorphic operations.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::cell::Cell;
mod common;

use common::{configs, CallerMemory, INDEX_MAPS, SECRET_KEYS};
use vsp_ckks::server::{Collector, Decryptor, Evaluator, KeyGenerator, ServerContext};
use vsp_ckks::{
    fill_tables, BufferEncryptor, CkksError, CkksParams, DeviceConfig, DeviceEncryptor,
    DeviceMemory, EncryptionSeeds, FftRoots, IndexMap, NttRoots, Part, SecretKeyForm,
    SecretKeyStore, SinkError, StoreError,
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
    for cfg in configs(
        &params,
        &[FftRoots::OnTheFly, FftRoots::Loaded],
        &INDEX_MAPS,
        &[SecretKeyForm::Persistent],
    ) {
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

/// A secret-key store (think flash) that counts the bytes read from it.
struct CountingStore {
    n: usize,
    packed: Vec<u8>,
    read: Cell<usize>,
}

impl SecretKeyStore for CountingStore {
    fn degree(&self) -> usize {
        self.n
    }
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), StoreError> {
        self.read.set(self.read.get() + out.len());
        out.copy_from_slice(
            self.packed
                .get(offset..offset + out.len())
                .ok_or(StoreError)?,
        );
        Ok(())
    }
}

fn pack(s: &[i8]) -> Vec<u8> {
    let mut p = vec![0u8; s.len() / 4];
    for (i, &c) in s.iter().enumerate() {
        let code = match c {
            1 => 1u8,
            -1 => 2,
            _ => 0,
        };
        p[i / 4] |= code << (2 * (i % 4));
    }
    p
}

#[test]
fn secret_key_forms_read_storage_as_promised_and_agree() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let params = CkksParams::default();
    let (n, l) = (params.n(), params.data_primes().len());
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let dsk = kg.secret_key().to_device().unwrap();
    let ternary: Vec<i8> = (0..n).map(|i| dsk.get(i)).collect();
    let values = random_values(&mut rng, 100);
    let seeds = EncryptionSeeds::random(&mut rng);
    let dec = Decryptor::new(&ctx, kg.secret_key());

    let mut reference = DeviceEncryptor::new(DeviceConfig::low_memory(params.clone())).unwrap();
    let want = record(&mut reference, &values, |e, v, s| {
        e.encrypt_symmetric(v, &dsk, &seeds, s).unwrap()
    });
    // (form, bytes read by the first encryption, by the second one).
    for (form, first, second) in [
        (SecretKeyForm::NotPersistent, l * n / 4, l * n / 4),
        (SecretKeyForm::PersistentAcrossPrimes, n / 4, n / 4),
        (SecretKeyForm::Persistent, n / 4, 0),
    ] {
        let store = CountingStore {
            n,
            packed: pack(&ternary),
            read: Cell::new(0),
        };
        let cfg = DeviceConfig {
            secret_key: form,
            ..DeviceConfig::low_memory(params.clone())
        };
        let mut enc = DeviceEncryptor::new(cfg).unwrap();
        for expected in [first, second] {
            store.read.set(0);
            let got = record(&mut enc, &values, |e, v, s| {
                e.encrypt_symmetric_stored(v, &store, &seeds, false, s)
                    .unwrap()
            });
            assert!(
                got == want,
                "{form:?}: ciphertext differs from the RAM key's"
            );
            assert_eq!(
                store.read.get(),
                expected,
                "{form:?}: bytes read from storage"
            );
        }
        // Decrypts (seeded form through the collector).
        let mut col = Collector::new(&ctx);
        enc.encrypt_symmetric_stored(&values, &store, &seeds, true, &mut col)
            .unwrap();
        let slots = dec.decrypt_real(&col.finish().unwrap()).unwrap();
        assert!(max_err(&slots[..values.len()], &values) < 1e-2, "{form:?}");
        // A forgotten persistent key is read again.
        enc.forget_secret_key();
        store.read.set(0);
        record(&mut enc, &values, |e, v, s| {
            e.encrypt_symmetric_stored(v, &store, &seeds, false, s)
                .unwrap()
        });
        assert!(store.read.get() > 0, "{form:?}");
    }
    // A store with a corrupted key (code 11) or failing reads is refused with a typed error.
    let mut bad = pack(&ternary);
    bad[n / 8] |= 0b11;
    for form in SECRET_KEYS {
        let cfg = DeviceConfig {
            secret_key: form,
            ..DeviceConfig::low_memory(params.clone())
        };
        let mut enc = DeviceEncryptor::new(cfg).unwrap();
        let store = CountingStore {
            n,
            packed: bad.clone(),
            read: Cell::new(0),
        };
        let r =
            enc.encrypt_symmetric_stored(&values, &store, &seeds, true, &mut |_: Part<'_>| Ok(()));
        assert!(matches!(r, Err(CkksError::Format(_))), "{form:?}: {r:?}");
        let short = CountingStore {
            n,
            packed: vec![0; 10],
            read: Cell::new(0),
        };
        let r =
            enc.encrypt_symmetric_stored(&values, &short, &seeds, true, &mut |_: Part<'_>| Ok(()));
        assert_eq!(r, Err(CkksError::KeyStoreFailed), "{form:?}");
    }
}

#[test]
fn buffer_encryptor_matches_the_owned_one_in_every_mode() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let params = CkksParams::seal_embedded(2048).unwrap();
    let n = params.n();
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let dsk = kg.secret_key().to_device().unwrap();
    let dpk = kg.public_key(&mut rng).unwrap().to_device(&ctx).unwrap();
    let values = random_values(&mut rng, n / 2);
    let seeds = EncryptionSeeds::random(&mut rng);
    // The flash image of the index map, shared by every owned encryptor that loads it.
    let mut flash = vec![0u16; n / 2];
    vsp_ckks::encoding::fill_index_map(n, &mut flash).unwrap();
    let flash: &'static [u16] = Box::leak(flash.into_boxed_slice());
    for cfg in configs(
        &params,
        &[FftRoots::Loaded],
        &INDEX_MAPS,
        &[SecretKeyForm::PersistentAcrossPrimes],
    ) {
        let mut owned = if cfg.index_map == IndexMap::Loaded {
            DeviceEncryptor::with_flash_index_map(cfg.clone(), flash).unwrap()
        } else {
            DeviceEncryptor::new(cfg.clone()).unwrap()
        };
        let mut mem = CallerMemory::new(&cfg);
        let mut buffered = mem.encryptor(cfg.clone());
        for mode in 0..3 {
            let mut x = Vec::new();
            let mut y = Vec::new();
            let mut sx = |p: Part<'_>| -> Result<(), SinkError> {
                if let Part::Limb { coeffs, .. } = p {
                    x.extend_from_slice(coeffs)
                }
                Ok(())
            };
            let mut sy = |p: Part<'_>| -> Result<(), SinkError> {
                if let Part::Limb { coeffs, .. } = p {
                    y.extend_from_slice(coeffs)
                }
                Ok(())
            };
            match mode {
                0 => {
                    owned
                        .encrypt_symmetric_seeded(&values, &dsk, &seeds, &mut sx)
                        .unwrap();
                    buffered
                        .encrypt_symmetric_seeded(&values, &dsk.packed(), &seeds, &mut sy)
                        .unwrap();
                }
                1 => {
                    owned
                        .encrypt_symmetric_stored(&values, &dsk, &seeds, false, &mut sx)
                        .unwrap();
                    buffered
                        .encrypt_symmetric_stored(&values, &dsk, &seeds, false, &mut sy)
                        .unwrap();
                }
                _ => {
                    owned
                        .encrypt_asymmetric(&values, &dpk, &seeds, &mut sx)
                        .unwrap();
                    buffered
                        .encrypt_asymmetric(&values, &dpk.view(), &seeds, &mut sy)
                        .unwrap();
                }
            }
            assert!(!x.is_empty() && x == y, "{cfg:?} mode {mode}");
        }
        drop(buffered);
        // Dropping wiped every working buffer.
        assert!(mem.wiped() && mem.b.iter().all(|&v| v == 0));
    }
}

#[test]
fn buffer_encryptor_refuses_bad_memory_and_tables() {
    let params = CkksParams::seal_embedded(1024).unwrap();
    let cfg = DeviceConfig {
        index_map: IndexMap::Loaded,
        ntt_roots: NttRoots::LoadedPlain,
        ..DeviceConfig::low_memory(params)
    };
    let s = cfg.buffer_sizes();
    let mut index = vec![0u16; s.index_map];
    let mut ntt = vec![0u32; s.ntt_tables];
    fill_tables(&cfg, &mut [], &mut index, &mut ntt).unwrap();
    let (mut msg, mut a, mut key) = (vec![0.0; s.msg], vec![0u32; s.a], vec![0u8; s.key]);
    let mut try_new = |index: &[u16], ntt: &[u32], a_len: usize| {
        BufferEncryptor::new(
            cfg.clone(),
            DeviceMemory {
                msg: &mut msg,
                a: &mut a[..a_len],
                b: &mut [],
                roots: &mut [],
                key: &mut key,
                fft_roots: &[],
                index_map: index,
                ntt_tables: ntt,
            },
        )
        .map(|_| ())
    };
    assert_eq!(try_new(&index, &ntt, s.a), Ok(()));
    assert!(matches!(
        try_new(&index, &ntt, s.a - 1),
        Err(CkksError::LengthMismatch { .. })
    ));
    let mut bad_ntt = ntt.clone();
    bad_ntt[5] ^= 4;
    assert!(matches!(
        try_new(&index, &bad_ntt, s.a),
        Err(CkksError::Format(_))
    ));
    let mut bad_index = index.clone();
    bad_index.swap(1, 2);
    assert!(matches!(
        try_new(&bad_index, &ntt, s.a),
        Err(CkksError::Format(_))
    ));
}
