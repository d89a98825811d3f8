//! Serialization round-trips and rejection of corrupt, truncated and foreign inputs.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use vsp_bfv::*;

mod common;

fn params() -> std::sync::Arc<BfvParameters> {
    common::small_params(&[50, 45, 40])
}

#[test]
fn round_trips() {
    let p = params();
    let mut r = ChaCha20Rng::seed_from_u64(5);
    let sk = SecretKey::random(&p, &mut r);
    let pk = PublicKey::new(&sk, &mut r);
    let rk = RelinKey::new(&sk, &mut r);
    let gk = GaloisKeys::new(&sk, &[1, -2], true, &mut r);
    let enc = Encoder::new(&p);
    let pt = enc.encode_batch(&[1, 2, 3, 65536]).unwrap();

    let p2 = BfvParameters::from_bytes(&p.to_bytes()).unwrap();
    assert_eq!(p2.id(), p.id());
    assert_eq!(p2.moduli(), p.moduli());
    assert_eq!(Plaintext::from_bytes(&p, &pt.to_bytes()).unwrap(), pt);

    let sk2 = SecretKey::from_bytes(&p, &sk.to_bytes()).unwrap();
    let pk2 = PublicKey::from_bytes(&p, &pk.to_bytes()).unwrap();
    let rk2 = RelinKey::from_bytes(&p, &rk.to_bytes()).unwrap();
    let gk2 = GaloisKeys::from_bytes(&p, &gk.to_bytes(&p)).unwrap();
    assert_eq!(gk2.elements(), gk.elements());

    // Seeded (symmetric) ciphertexts serialize at about half the size of public-key ones.
    let seeded = sk.encrypt(&pt, &mut r).unwrap();
    let full = pk2.encrypt(&pt, &mut r).unwrap();
    let (bs, bf) = (seeded.to_bytes(), full.to_bytes());
    assert!(
        bs.len() * 10 < bf.len() * 6,
        "seeded {} vs {}",
        bs.len(),
        bf.len()
    );
    let seeded2 = Ciphertext::from_bytes(&p, &bs).unwrap();
    assert!(seeded2.is_seeded());
    assert_eq!(seeded2, seeded);
    let full2 = Ciphertext::from_bytes(&p, &bf).unwrap();
    assert_eq!(full2, full);

    // The restored keys work together.
    let ev = Evaluator::new(&p);
    let prod = ev.multiply_relin(&seeded2, &full2, &rk2).unwrap();
    let rot = ev.rotate_columns(&prod, 1, &gk2).unwrap();
    let got = enc.decode_batch(&sk2.decrypt(&rot).unwrap()).unwrap();
    assert_eq!(&got[..3], &[4, 9, 1]);
    let three = ev.multiply(&seeded2, &full2).unwrap();
    assert_eq!(
        Ciphertext::from_bytes(&p, &three.to_bytes()).unwrap(),
        three
    );
}

#[test]
fn corrupt_truncated_and_foreign_inputs_are_errors() {
    let p = params();
    let other = BfvParameters::builder()
        .degree(256)
        .plaintext_modulus(257)
        .moduli_sizes(&[50, 45, 40])
        .insecure()
        .build()
        .unwrap();
    let mut r = ChaCha20Rng::seed_from_u64(6);
    let sk = SecretKey::random(&p, &mut r);
    let ct = sk
        .encrypt(&Encoder::new(&p).encode_coefficients(&[7]).unwrap(), &mut r)
        .unwrap();
    let bytes = ct.to_bytes();
    for cut in [0, 10, 47, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(
                Ciphertext::from_bytes(&p, &bytes[..cut]),
                Err(Error::Codec(_))
            ),
            "cut {cut}"
        );
    }
    let mut flipped = bytes.clone();
    flipped[60] ^= 1;
    assert!(matches!(
        Ciphertext::from_bytes(&p, &flipped),
        Err(Error::Codec(vsp_codec::Error::Checksum { .. }))
    ));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Ciphertext::from_bytes(&p, &longer).is_err());
    assert!(matches!(
        Ciphertext::from_bytes(&other, &bytes),
        Err(Error::ParameterMismatch(_))
    ));
    assert!(matches!(
        SecretKey::from_bytes(&p, &bytes),
        Err(Error::Codec(vsp_codec::Error::Kind { .. }))
    ));
    // A version-1 object (the layout before the shared envelope) gets a clear version error.
    let mut badver = bytes.clone();
    badver[4..6].copy_from_slice(&1u16.to_le_bytes());
    assert_eq!(
        Ciphertext::from_bytes(&p, &badver).unwrap_err().to_string(),
        "unsupported vsp-bfv format version 1: this build reads version 2 (regenerate the file with this build)"
    );
    assert!(BfvParameters::from_bytes(b"VBFV").is_err());
}
