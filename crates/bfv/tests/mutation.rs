//! Mutation tests (issues 13 and 14): every vsp-bfv object kind, edited at random inside its
//! re-sealed envelope so the edits reach the body readers, gives `Ok` or `Err`, never a panic or a
//! runaway allocation. Run longer with `PROPTEST_CASES=N cargo test --release -p vsp-bfv --test mutation`.

#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use vsp_bfv::serialize::{Kind, FORMAT};
use vsp_bfv::*;

struct Files {
    params: Arc<BfvParameters>,
    /// (kind, valid file) for every object kind.
    files: Vec<(Kind, Vec<u8>)>,
}

fn files() -> &'static Files {
    static F: OnceLock<Files> = OnceLock::new();
    F.get_or_init(|| {
        let p = BfvParameters::builder()
            .degree(256)
            .plaintext_modulus(65537)
            .moduli_sizes(&[50, 45])
            .insecure()
            .build()
            .unwrap();
        let mut r = ChaCha20Rng::seed_from_u64(14);
        let sk = SecretKey::random(&p, &mut r);
        let pk = PublicKey::new(&sk, &mut r);
        let pt = Encoder::new(&p).encode_batch(&[1, 2, 3]).unwrap();
        let files = vec![
            (Kind::Parameters, p.to_bytes()),
            (Kind::SecretKey, sk.to_bytes()),
            (Kind::PublicKey, pk.to_bytes()),
            (Kind::RelinKey, RelinKey::new(&sk, &mut r).to_bytes()),
            (
                Kind::GaloisKeys,
                GaloisKeys::new(&sk, &[1], false, &mut r).to_bytes(&p),
            ),
            (
                Kind::Ciphertext,
                sk.encrypt(&pt, &mut r).unwrap().to_bytes(),
            ),
            (
                Kind::Ciphertext,
                pk.encrypt(&pt, &mut r).unwrap().to_bytes(),
            ),
            (Kind::Plaintext, pt.to_bytes()),
        ];
        Files { params: p, files }
    })
}

/// Reads `bytes` as `kind`; an accepted object must serialize back to a file that reads again.
fn read(kind: Kind, bytes: &[u8]) {
    let p = &files().params;
    match kind {
        Kind::Parameters => {
            if let Ok(q) = BfvParameters::from_bytes(bytes) {
                BfvParameters::from_bytes(&q.to_bytes()).unwrap();
            }
        }
        Kind::SecretKey => {
            if let Ok(k) = SecretKey::from_bytes(p, bytes) {
                SecretKey::from_bytes(p, &k.to_bytes()).unwrap();
            }
        }
        Kind::PublicKey => {
            if let Ok(k) = PublicKey::from_bytes(p, bytes) {
                PublicKey::from_bytes(p, &k.to_bytes()).unwrap();
            }
        }
        Kind::RelinKey => {
            if let Ok(k) = RelinKey::from_bytes(p, bytes) {
                RelinKey::from_bytes(p, &k.to_bytes()).unwrap();
            }
        }
        Kind::GaloisKeys => {
            if let Ok(k) = GaloisKeys::from_bytes(p, bytes) {
                GaloisKeys::from_bytes(p, &k.to_bytes(p)).unwrap();
            }
        }
        Kind::Ciphertext => {
            if let Ok(c) = Ciphertext::from_bytes(p, bytes) {
                Ciphertext::from_bytes(p, &c.to_bytes()).unwrap();
            }
        }
        Kind::Plaintext => {
            if let Ok(t) = Plaintext::from_bytes(p, bytes) {
                Plaintext::from_bytes(p, &t.to_bytes()).unwrap();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(300), ..ProptestConfig::default() })]

    #[test]
    fn mutated_files_never_panic(k in 0..8usize, ops in mutate::ops()) {
        let (kind, file) = &files().files[k];
        read(*kind, &mutate::apply(file, &ops, false));
    }

    #[test]
    fn mutated_bodies_never_panic(k in 0..8usize, ops in mutate::ops()) {
        let (kind, file) = &files().files[k];
        read(*kind, &mutate::mutate_body(&FORMAT, *kind as u16, file, &ops));
    }
}
