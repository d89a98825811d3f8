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

/// A blueprint with one RAM (`kind` = `ram` for CMUX, `mux-ram` for gates) wired to `@addr`,
/// `@wren`, `@wdata` and `@rdata`.
pub fn ram_blueprint(kind: &str, addr_width: usize, data_width: usize) -> String {
    format!(
        r#"
[[builtin]]
type = "{kind}"
name = "ram"
in_addr_width = {addr_width}
in_wdata_width = {data_width}
out_rdata_width = {data_width}
[connect]
"ram/addr" = "@addr"
"ram/wren" = "@wren"
"ram/wdata" = "@wdata"
"@rdata" = "ram/rdata"
"#
    )
}
