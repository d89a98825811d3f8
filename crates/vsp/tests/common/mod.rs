//! Running the `vsp` binary from the tests, and the setup several of them share. (Each test file
//! uses some of it.)

#![allow(dead_code)]

#[path = "../../../circuit/tests/tool/mod.rs"]
pub mod tool;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn vsp(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vsp"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the vsp binary runs")
}

/// Runs `vsp args` in `dir`, asserts success and returns stdout.
pub fn ok(args: &[&str], dir: &Path) -> String {
    let out = vsp(args, dir);
    assert!(
        out.status.success(),
        "vsp {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `vsp args` in `dir`, asserts a failure with a one-line `error: …` and returns stderr.
pub fn fails(args: &[&str], dir: &Path) -> String {
    let out = vsp(args, dir);
    assert!(
        !out.status.success(),
        "vsp {args:?} should fail; stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.lines().any(|l| l.starts_with("error: ")),
        "an error line expected, got {err:?}"
    );
    err
}

/// The assembly programs of vsp-cahp (`fib.s`, `hamming.s`, `bf.s`).
pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cahp/asm/programs")
}

/// A scratch folder for a test that needs clang (it fails, never skips, without it).
pub fn clang_scratch() -> tempfile::TempDir {
    require_clang();
    tempfile::tempdir().unwrap()
}

/// Fails (never skips) without clang: the tests that call this are `#[ignore = "needs clang"]`.
pub fn require_clang() {
    tool::require("clang", &["--version"], "apt-get install -y clang");
}

/// Alice's files in `d` for fib(5): the image `fib.img`, the keys `sk.key` and `ek.key`, and the
/// encrypted request `req.enc`.
pub fn fib_request(d: &Path) {
    let fib = programs_dir().join("fib.s");
    ok(&["-q", "asm", fib.to_str().unwrap(), "-o", "fib.img"], d);
    ok(&["-q", "genkey", "-o", "sk.key"], d);
    ok(&["-q", "genbkey", "-k", "sk.key", "-o", "ek.key"], d);
    ok(
        &["-q", "enc", "-k", "sk.key", "fib.img", "5", "-o", "req.enc"],
        d,
    );
}

/// `vsp -q run -e ek.key -i input -o output` and `rest`: the server's run of an encrypted request
/// with the evaluation key `ek.key` of the test's folder.
pub fn run_request<'a>(input: &'a str, output: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let head = ["-q", "run", "-e", "ek.key", "-i", input, "-o", output];
    [&head[..], rest].concat()
}

/// `vsp -q resume snapshot -e ek.key -o output` and `rest`: the server's resumption of an
/// encrypted run with the evaluation key `ek.key` of the test's folder.
pub fn resume_request<'a>(snapshot: &'a str, output: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let head = ["-q", "resume", snapshot, "-e", "ek.key", "-o", output];
    [&head[..], rest].concat()
}

/// `vsp -q enc -k sk.key -o output` and `rest` (the image, its inputs, options): the client's
/// encryption of a request with the secret key `sk.key` of the test's folder.
pub fn enc_request<'a>(output: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let head = ["-q", "enc", "-k", "sk.key", "-o", output];
    [&head[..], rest].concat()
}

/// All that the child (spawned with a piped stderr) writes to stderr, read to its end.
pub fn stderr_text(child: &mut std::process::Child) -> String {
    use std::io::Read;
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr is piped")
        .read_to_string(&mut err)
        .unwrap();
    err
}

/// The JSON `vsp circuit dec` prints for the encrypted circuit result `file` of the netlist `net`,
/// decrypted with the secret key `sk.key` of the test's folder.
pub fn circuit_decrypted(net: &str, file: &str, d: &Path) -> serde_json::Value {
    let dec = [
        "circuit",
        "dec",
        "--netlist",
        net,
        "-k",
        "sk.key",
        "-i",
        file,
    ];
    serde_json::from_str(&ok(&dec, d)).unwrap()
}
