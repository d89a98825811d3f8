//! SEAL-format readers refuse malformed or mismatched input with errors (never panics), and
//! round-trip what the writers produce.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use vsp_ckks::seal::{
    read_ciphertext, read_public_key, read_relin_keys, read_secret_key, write_ciphertext,
    write_public_key, write_relin_keys, write_secret_key, write_seeded_ciphertext,
};
use vsp_ckks::server::{Collector, KeyGenerator, ServerContext};
use vsp_ckks::{
    CkksError, CkksParams, DeviceConfig, DeviceEncryptor, EncryptionSeeds, Part, SinkError,
};

struct Fixture {
    ctx: ServerContext,
    ct: Vec<u8>,
    seeded: Vec<u8>,
    pk: Vec<u8>,
    sk: Vec<u8>,
    rk: Vec<u8>,
}

fn fixture() -> Fixture {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let params = CkksParams::seal_embedded(2048).unwrap();
    let ctx = ServerContext::new(params.clone()).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let pk = kg.public_key(&mut rng).unwrap();
    let rk = kg.relin_keys(&mut rng).unwrap();
    let mut enc = DeviceEncryptor::new(DeviceConfig::low_memory(params)).unwrap();
    let seeds = EncryptionSeeds::random(&mut rng);
    let dsk = kg.secret_key().to_device().unwrap();
    let mut col = Collector::new(&ctx);
    enc.encrypt_symmetric(&[1.0, 2.0, 3.0], &dsk, &seeds, &mut col)
        .unwrap();
    let ct = write_ciphertext(&ctx, &col.finish().unwrap()).unwrap();
    let mut c0 = vec![Vec::new(); 1];
    let mut seed = [0u8; 64];
    let mut sink = |p: Part<'_>| -> Result<(), SinkError> {
        match p {
            Part::Seed(s) => seed = *s,
            Part::Limb { prime, coeffs, .. } => {
                c0[prime] = coeffs.iter().map(|&x| x as u64).collect()
            }
        }
        Ok(())
    };
    enc.encrypt_symmetric_seeded(&[1.0, 2.0, 3.0], &dsk, &seeds, &mut sink)
        .unwrap();
    let seeded = write_seeded_ciphertext(&ctx, &c0, &seed, ctx.params().scale()).unwrap();
    Fixture {
        pk: write_public_key(&ctx, &pk).unwrap(),
        sk: write_secret_key(&ctx, kg.secret_key()).unwrap(),
        rk: write_relin_keys(&ctx, &rk).unwrap(),
        ct,
        seeded,
        ctx,
    }
}

fn is_format_err<T: std::fmt::Debug>(r: Result<T, CkksError>, what: &str) {
    match r {
        Err(CkksError::Format(_)) | Err(CkksError::Mismatch(_)) => {}
        other => panic!("{what}: expected a format error, got {other:?}"),
    }
}

#[test]
fn round_trips() {
    let f = fixture();
    let ct = read_ciphertext(&f.ctx, &f.ct).unwrap();
    assert_eq!(write_ciphertext(&f.ctx, &ct).unwrap(), f.ct);
    // The seeded form expands to exactly the full form.
    assert_eq!(read_ciphertext(&f.ctx, &f.seeded).unwrap(), ct);
    assert_eq!(
        write_public_key(&f.ctx, &read_public_key(&f.ctx, &f.pk).unwrap()).unwrap(),
        f.pk
    );
    assert_eq!(
        write_secret_key(&f.ctx, &read_secret_key(&f.ctx, &f.sk).unwrap()).unwrap(),
        f.sk
    );
    assert_eq!(
        write_relin_keys(&f.ctx, &read_relin_keys(&f.ctx, &f.rk).unwrap()).unwrap(),
        f.rk
    );
}

#[test]
fn rejects_malformed_input() {
    let f = fixture();
    let ctx = &f.ctx;
    // Every truncation.
    for cut in [0, 1, 15, 16, 40, 113, f.ct.len() / 2, f.ct.len() - 1] {
        is_format_err(read_ciphertext(ctx, &f.ct[..cut]), "truncated");
    }
    for cut in [f.seeded.len() - 1, f.seeded.len() - 64] {
        is_format_err(read_ciphertext(ctx, &f.seeded[..cut]), "truncated seeded");
    }
    let mut trailing = f.ct.clone();
    trailing.push(0);
    is_format_err(read_ciphertext(ctx, &trailing), "trailing byte");

    let patch = |at: usize, v: &[u8]| {
        let mut b = f.ct.clone();
        b[at..at + v.len()].copy_from_slice(v);
        b
    };
    is_format_err(read_ciphertext(ctx, &patch(0, &[0, 0])), "magic");
    is_format_err(read_ciphertext(ctx, &patch(3, &[3])), "major version");
    let e = read_ciphertext(ctx, &patch(5, &[2])).unwrap_err();
    assert!(e.to_string().contains("compressed"), "{e}");
    is_format_err(read_ciphertext(ctx, &patch(6, &[1])), "reserved");
    is_format_err(
        read_ciphertext(ctx, &patch(8, &u64::MAX.to_le_bytes())),
        "total size",
    );
    is_format_err(read_ciphertext(ctx, &patch(16, &[0xAB])), "parms_id");
    is_format_err(read_ciphertext(ctx, &patch(48, &[0])), "not NTT form");
    is_format_err(
        read_ciphertext(ctx, &patch(49, &u64::MAX.to_le_bytes())),
        "huge size",
    );
    is_format_err(
        read_ciphertext(ctx, &patch(49, &3u64.to_le_bytes())),
        "size vs data",
    );
    is_format_err(
        read_ciphertext(ctx, &patch(57, &4096u64.to_le_bytes())),
        "degree",
    );
    is_format_err(
        read_ciphertext(ctx, &patch(73, &f64::NAN.to_bits().to_le_bytes())),
        "scale",
    );
    is_format_err(
        read_ciphertext(ctx, &patch(81, &2u64.to_le_bytes())),
        "correction factor",
    );
    is_format_err(
        read_ciphertext(ctx, &patch(105, &u64::MAX.to_le_bytes())),
        "array count",
    );
    is_format_err(
        read_ciphertext(ctx, &patch(113, &u64::MAX.to_le_bytes())),
        "unreduced coefficient",
    );

    // Seeded with Blake2xb (SEAL's default PRNG) is refused with a clear message.
    let mut b = f.seeded.clone();
    let at = b.len() - 65;
    b[at] = 1;
    let e = read_ciphertext(ctx, &b).unwrap_err();
    assert!(e.to_string().contains("Blake2xb"), "{e}");
    b[at] = 7;
    is_format_err(read_ciphertext(ctx, &b), "prng type");

    // Objects of other kinds or parameters.
    is_format_err(read_public_key(ctx, &f.ct), "ciphertext as public key");
    is_format_err(read_secret_key(ctx, &f.pk), "public key as secret key");
    is_format_err(read_relin_keys(ctx, &f.pk), "public key as relin keys");
    let other = ServerContext::new(CkksParams::default()).unwrap();
    is_format_err(read_ciphertext(&other, &f.ct), "other parameters");
    is_format_err(read_public_key(&other, &f.pk), "other parameters (pk)");
    // A secret key that is not ternary.
    let mut sk = f.sk.clone();
    let last = sk.len() - 8;
    sk[last] ^= 1;
    is_format_err(read_secret_key(ctx, &sk), "non-ternary secret key");
}

/// Random corruption never panics: every reader returns Ok or a typed error.
#[test]
fn random_corruption_never_panics() {
    use rand::Rng;
    let f = fixture();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    for (i, original) in [&f.ct, &f.seeded, &f.pk, &f.sk, &f.rk]
        .into_iter()
        .enumerate()
    {
        for _ in 0..300 {
            let mut b = original.clone();
            // Mostly header/metadata bytes, where the parsing decisions are.
            for _ in 0..rng.gen_range(1..4) {
                let at = if rng.gen_bool(0.8) {
                    rng.gen_range(0..b.len().min(140))
                } else {
                    rng.gen_range(0..b.len())
                };
                b[at] = rng.gen();
            }
            if rng.gen_bool(0.2) {
                let cut = rng.gen_range(0..b.len());
                b.truncate(cut);
            }
            let _ = match i {
                0 | 1 => read_ciphertext(&f.ctx, &b).map(|_| ()),
                2 => read_public_key(&f.ctx, &b).map(|_| ()),
                3 => read_secret_key(&f.ctx, &b).map(|_| ()),
                _ => read_relin_keys(&f.ctx, &b).map(|_| ()),
            };
        }
    }
}
