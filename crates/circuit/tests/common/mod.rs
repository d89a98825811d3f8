//! Helpers shared by the encrypted engine tests: one set of keys per test binary, the test data.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use vsp_tfhe::{CircuitKey, EvalKey, Params, SecretKey};

/// `crates/circuit/testdata`.
pub fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Default-parameter keys, generated once per test binary.
pub fn keys() -> &'static (SecretKey, Arc<EvalKey>, Arc<CircuitKey>) {
    static K: OnceLock<(SecretKey, Arc<EvalKey>, Arc<CircuitKey>)> = OnceLock::new();
    K.get_or_init(|| {
        let sk = SecretKey::generate(&Params::default_128()).unwrap();
        let ek = Arc::new(EvalKey::generate(&sk).unwrap());
        let ck = Arc::new(CircuitKey::generate(&sk).unwrap());
        (sk, ek, ck)
    })
}
