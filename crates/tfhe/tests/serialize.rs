//! File format round trips and rejection of corrupt, truncated, mismatched input.

use vsp_tfhe::{CompressedEvalKey, Params, SecretKey, Tlwe, Trlwe};

#[test]
fn ciphertexts_round_trip_and_reject_bad_input() {
    let p = Params::default_128();
    let sk = SecretKey::generate(&p).unwrap();
    let c = sk.encrypt_bit(true);
    let bytes = c.to_bytes(&p);
    let back = Tlwe::<u32>::from_bytes(&bytes, &p).unwrap();
    assert_eq!(back, c);
    assert!(sk.decrypt_bit(&back).unwrap());
    // Every single-byte corruption and every truncation is refused.
    for i in (0..bytes.len())
        .step_by(97)
        .chain([0, 9, 11, 13, 17, 25, bytes.len() - 1])
    {
        let mut bad = bytes.clone();
        bad[i] ^= 0x40;
        assert!(
            Tlwe::<u32>::from_bytes(&bad, &p).is_err(),
            "corruption at {i} accepted"
        );
    }
    for len in [0, 10, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            Tlwe::<u32>::from_bytes(&bytes[..len], &p).is_err(),
            "truncation to {len} accepted"
        );
    }
    // Wrong parameters and wrong kind.
    let other = Params::vsp2021();
    assert!(Tlwe::<u32>::from_bytes(&bytes, &other).is_err());
    assert!(Trlwe::<u32>::from_bytes(&bytes, &p).is_err());
    let t = sk.encrypt_trlwe_bits(&[true, false, true]).unwrap();
    let tb = t.to_bytes(&p);
    assert_eq!(Trlwe::<u32>::from_bytes(&tb, &p).unwrap(), t);
    // serde for engine snapshots.
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<Tlwe<u32>>(&json).unwrap(), c);
}

#[test]
fn keys_round_trip_through_files() {
    let p = Params::default_128();
    let dir = tempfile::tempdir().unwrap();
    let sk = SecretKey::generate(&p).unwrap();
    sk.save(&dir.path().join("sk")).unwrap();
    let sk2 = SecretKey::load(&dir.path().join("sk")).unwrap();
    let c = sk.encrypt_bit(false);
    assert!(!sk2.decrypt_bit(&c).unwrap());
    assert!(format!("{sk:?}").contains("redacted"));

    let cek = CompressedEvalKey::generate(&sk);
    let path = dir.path().join("ek");
    cek.save(&path).unwrap();
    let back = CompressedEvalKey::load(&path).unwrap();
    assert_eq!(back, cek);
    let ek = back.decompress().unwrap();
    let r = ek
        .nand(&sk.encrypt_bit(true), &sk.encrypt_bit(true))
        .unwrap();
    assert!(!sk.decrypt_bit(&r).unwrap());
    // A secret key file is not an evaluation key file.
    assert!(CompressedEvalKey::load(&dir.path().join("sk")).is_err());
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    assert!(CompressedEvalKey::from_bytes(&bytes).is_err());
    assert!(CompressedEvalKey::from_bytes(&bytes[..n - 100]).is_err());
}

#[test]
fn insecure_set_needs_opt_in() {
    assert!(Params::by_name("cggi16", false).is_err());
    assert_eq!(Params::by_name("cggi16", true).unwrap().n0, 500);
    assert_eq!(
        Params::by_name("default", false).unwrap(),
        Params::default_128()
    );
    assert!(Params::by_name("nope", true).is_err());
}

/// Issue 14: a file in the old (version 1) layout is refused with a version error, and a changed
/// parameter fingerprint is refused even when the checksum is right.
#[test]
fn old_versions_and_foreign_fingerprints_are_refused() {
    use sha3::{Digest, Sha3_256};
    let p = Params::default_128();
    let sk = SecretKey::generate(&p).unwrap();
    let bytes = sk.encrypt_bit(true).to_bytes(&p);
    assert_eq!(
        &bytes[8..10],
        &vsp_tfhe::serialize::FORMAT_VERSION.to_le_bytes()
    );
    let mut old = bytes.clone();
    old[8..10].copy_from_slice(&1u16.to_le_bytes());
    let e = Tlwe::<u32>::from_bytes(&old, &p).unwrap_err().to_string();
    assert_eq!(
        e,
        "unsupported vsp-tfhe format version 1: this build reads version 2 (regenerate the file with this build)"
    );
    // Parameter id: magic 8 + version 2 + kind 2 + length 1, then the id (2) and the fingerprint (8).
    let mut fp = bytes;
    fp[15 + 2] ^= 1;
    let n = fp.len() - 32;
    let sum = Sha3_256::digest(&fp[..n]);
    fp[n..].copy_from_slice(&sum);
    let e = Tlwe::<u32>::from_bytes(&fp, &p).unwrap_err().to_string();
    assert!(e.contains("parameter fingerprint mismatch"), "{e}");
}
