//! Mutation tests (issues 13 and 14): vsp-tfhe files of every kind, edited at random as a whole and
//! inside their re-sealed envelope (so the edits reach the body readers), give `Ok` or `Err`, never
//! a panic or a runaway allocation. The insecure CGGI16 set keeps the evaluation key small; the
//! circuit key (hundreds of MB) is read by the same code path as the evaluation key's bodies.
//! Run longer with `PROPTEST_CASES=N cargo test --release -p vsp-tfhe --test mutation`.

#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;

use std::sync::OnceLock;

use proptest::prelude::*;
use vsp_codec::FileCodec;
use vsp_tfhe::serialize::FORMAT;
use vsp_tfhe::{CompressedEvalKey, Params, SecretKey, Tlwe, Trlwe};

struct Files {
    params: Params,
    small: Vec<(u16, Vec<u8>)>,
    eval_key: Vec<u8>,
}

fn files() -> &'static Files {
    static F: OnceLock<Files> = OnceLock::new();
    F.get_or_init(|| {
        let p = Params::by_name("cggi16", true).unwrap();
        let sk = SecretKey::generate(&p).unwrap();
        let small = vec![
            (<SecretKey as FileCodec>::KIND, sk.to_bytes().to_vec()),
            (
                <Tlwe<u32> as FileCodec>::KIND,
                sk.encrypt_bit(true).to_bytes(&p),
            ),
            (
                <Trlwe<u32> as FileCodec>::KIND,
                sk.encrypt_trlwe_bits(&[true, false]).unwrap().to_bytes(&p),
            ),
        ];
        let eval_key = CompressedEvalKey::generate(&sk).to_bytes();
        Files {
            params: p,
            small,
            eval_key,
        }
    })
}

/// Reads `bytes` as the type of `kind`.
fn read(kind: u16, bytes: &[u8]) {
    let p = &files().params;
    match kind {
        k if k == <SecretKey as FileCodec>::KIND => mutate::reread::<SecretKey>(bytes, &()),
        k if k == <Tlwe<u32> as FileCodec>::KIND => mutate::reread::<Tlwe<u32>>(bytes, p),
        k if k == <Trlwe<u32> as FileCodec>::KIND => mutate::reread::<Trlwe<u32>>(bytes, p),
        _ => mutate::reread::<CompressedEvalKey>(bytes, &()),
    }
}

mutate::file_properties!(files().small, FORMAT, read, 300);

/// The evaluation key is megabytes and each case hashes it several times (≈ 0.2–1.2 s), so this runs a
/// fixed 15 cases, also in CI's long campaign: a `proptest!` block's config is overridden by
/// `PROPTEST_CASES` (proptest applies the environment to it), which made the campaign run this one
/// 30,000 times; a runner built here keeps its count.
#[test]
fn mutated_evaluation_key_bodies_never_panic() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 15,
        ..ProptestConfig::default()
    });
    runner
        .run(&mutate::ops(), |ops| {
            let file = &files().eval_key;
            let kind = <CompressedEvalKey as FileCodec>::KIND;
            read(kind, &mutate::mutate_body(&FORMAT, kind, file, &ops));
            Ok(())
        })
        .unwrap();
}
