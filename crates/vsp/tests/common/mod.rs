//! Running the `vsp` binary from the tests.

use std::path::Path;
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
