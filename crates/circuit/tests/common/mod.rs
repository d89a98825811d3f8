//! Helpers shared by the encrypted engine tests: one set of keys per test binary, the test data.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use vsp_circuit::client::{decrypt_value, encrypt_value};
use vsp_circuit::{Engine, PlainBackend, TfheBackend};
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

/// One cycle of a [`ram_blueprint`] circuit, encrypted (`e`) and plain (`p`), with the same `@addr`,
/// `@wren` and `@wdata`; returns `@rdata` of both.
pub fn ram_step(
    sk: &SecretKey,
    e: &mut Engine<TfheBackend>,
    p: &mut Engine<PlainBackend>,
    (addr, wren, wdata): (u64, u64, u64),
    (addr_width, data_width): (usize, usize),
) -> (u64, u64) {
    e.set_input("addr", encrypt_value(sk, addr, addr_width))
        .unwrap();
    e.set_input("wren", encrypt_value(sk, wren, 1)).unwrap();
    e.set_input("wdata", encrypt_value(sk, wdata, data_width))
        .unwrap();
    for (n, v) in [("addr", addr), ("wren", wren), ("wdata", wdata)] {
        p.set_input_value(n, v).unwrap();
    }
    e.step().unwrap();
    p.step().unwrap();
    (
        decrypt_value(sk, &e.output("rdata").unwrap()).unwrap(),
        p.output_value("rdata", 0).unwrap(),
    )
}
