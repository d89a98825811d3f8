//! External tools in the tests that need one (clang, csmith, iverilog, yosys, chromium, python3 with
//! seal-python): the one copy of "is it installed" and "run it, it must succeed", included by path
//! (like `../mutate`) by the tests of vsp-circuit, vsp-cahp, vsp-cc, vsp-bfv, vsp-ckks, vsp-server
//! and the vsp binary.

#![allow(dead_code)]

use std::process::Command;

/// Fails the test (never skips it) when `program args` does not run successfully: the tests that
/// call this are `#[ignore = "needs TOOL"]` and run with `cargo test -- --include-ignored`.
/// `install` says how to get it.
pub fn require(program: &str, args: &[&str], install: &str) {
    let ok = Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{program} is not installed ({install}); this test needs it"
    );
}

/// Runs `cmd`, which must start and succeed (else the test fails with its stderr); its stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
