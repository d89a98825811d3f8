//! Mutation tests (issues 13 and 14): every vsp-bfv object kind, edited at random inside its
//! re-sealed envelope so the edits reach the body readers, gives `Ok` or `Err`, never a panic or a
//! runaway allocation. Run longer with `PROPTEST_CASES=N cargo test --release -p vsp-bfv --test mutation`.

#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use vsp_bfv::serialize::FORMAT;
use vsp_bfv::*;
use vsp_codec::FileCodec;

struct Files {
    params: Arc<BfvParameters>,
    /// (kind, valid file) for every object kind.
    files: Vec<(u16, Vec<u8>)>,
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
            (<BfvParameters as FileCodec>::KIND, p.to_bytes()),
            (<SecretKey as FileCodec>::KIND, sk.to_bytes()),
            (<PublicKey as FileCodec>::KIND, pk.to_bytes()),
            (
                <RelinKey as FileCodec>::KIND,
                RelinKey::new(&sk, &mut r).to_bytes(),
            ),
            (
                <GaloisKeys as FileCodec>::KIND,
                GaloisKeys::new(&sk, &[1], false, &mut r).to_bytes(&p),
            ),
            (
                <Ciphertext as FileCodec>::KIND,
                sk.encrypt(&pt, &mut r).unwrap().to_bytes(),
            ),
            (
                <Ciphertext as FileCodec>::KIND,
                pk.encrypt(&pt, &mut r).unwrap().to_bytes(),
            ),
            (<Plaintext as FileCodec>::KIND, pt.to_bytes()),
        ];
        Files { params: p, files }
    })
}

/// Reads `bytes` as the type of `kind`.
fn read(kind: u16, bytes: &[u8]) {
    let p = &files().params;
    match kind {
        k if k == <BfvParameters as FileCodec>::KIND => mutate::reread::<BfvParameters>(bytes, &()),
        k if k == <SecretKey as FileCodec>::KIND => mutate::reread::<SecretKey>(bytes, p),
        k if k == <PublicKey as FileCodec>::KIND => mutate::reread::<PublicKey>(bytes, p),
        k if k == <RelinKey as FileCodec>::KIND => mutate::reread::<RelinKey>(bytes, p),
        k if k == <GaloisKeys as FileCodec>::KIND => mutate::reread::<GaloisKeys>(bytes, p),
        k if k == <Ciphertext as FileCodec>::KIND => mutate::reread::<Ciphertext>(bytes, p),
        k if k == <Plaintext as FileCodec>::KIND => mutate::reread::<Plaintext>(bytes, p),
        k => panic!("no kind {k}"),
    }
}

mutate::file_properties!(files().files, FORMAT, read, 300);
