//! Keys shared by the tests of one test binary (key generation is the expensive part).
#![allow(dead_code)]

use std::sync::OnceLock;
use vsp_tfhe::{EvalKey, Params, SecretKey};

pub fn keys() -> &'static (SecretKey, EvalKey) {
    static K: OnceLock<(SecretKey, EvalKey)> = OnceLock::new();
    K.get_or_init(|| {
        let sk = SecretKey::generate(&Params::default_128()).expect("keygen");
        let ek = EvalKey::generate(&sk).expect("eval key");
        (sk, ek)
    })
}
