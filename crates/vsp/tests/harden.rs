//! Hardening of issue 25: inputs that are not regular files, endless files, tampered keys, two
//! writers of one output, slow refusals, error hygiene, strict inputs JSON and help text. Every
//! error is one line on stderr and arrives within seconds (a FIFO used to block forever).

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::ok;

/// Runs `vsp args` in `dir`, killing it after `secs` seconds (a test of "never hangs" must not
/// hang itself); panics on a timeout.
fn vsp_within(args: &[&str], dir: &Path, secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vsp"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the vsp binary runs");
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("vsp {args:?} still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs `vsp args` (at most 60 s), asserts a failure whose whole stderr is one `error: …` line
/// and returns that line.
fn one_line_error(args: &[&str], dir: &Path) -> String {
    let out = vsp_within(args, dir, 60);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "vsp {args:?} should fail: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "vsp {args:?}: one line expected, got {err:?}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(
        !lines[0].chars().any(|c| c.is_control()),
        "control characters in {err:?}"
    );
    lines[0].to_string()
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

#[test]
fn fifos_devices_and_directories_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["F", "P.s", "P.c"] {
        mkfifo(&d.join(f));
    }
    std::fs::create_dir(d.join("D")).unwrap();
    std::fs::write(d.join("x.s"), "li a0, 1\n").unwrap();
    for (args, what) in [
        (&["emu", "F", "5"][..], "it is a FIFO"),
        (&["emu", "P.s", "5"], "it is a FIFO"),
        (&["emu", "P.c", "5"], "it is a FIFO"),
        (&["asm", "F", "-o", "x.img"], "it is a FIFO"),
        (&["dec", "-k", "F", "-i", "F"], "it is a FIFO"),
        (&["circuit", "stats", "--blueprint", "F"], "it is a FIFO"),
        (&["cc", "F", "-o", "x.img"], "it is a FIFO"),
        (&["dec", "-k", "/dev/zero", "-i", "x"], "it is a device"),
        (&["emu", "/dev/zero"], "it is a device"),
        (&["asm", "D", "-o", "y.img"], "it is a directory"),
        (&["genbkey", "-k", "F", "-o", "e.key"], "it is a FIFO"),
        (&["enc", "-k", "/dev/urandom", "x.s", "-o", "r.enc"], "it is a device"),
        (&["run", "-e", "F", "-i", "F", "-o", "o.enc", "-c", "1"], "it is a FIFO"),
        (&["resume", "F", "-e", "F", "-o", "o.enc", "-c", "1"], "it is a FIFO"),
    ] {
        let err = one_line_error(args, d);
        assert!(err.contains(what), "vsp {args:?}: {err}");
    }
    // The warning about a world-readable key is for key files, not for devices refused as keys.
    let err = one_line_error(&["dec", "-k", "/dev/null", "-i", "x"], d);
    assert!(err.contains("/dev/null: it is a device"), "{err}");
    let _ = ok(&["asm", "x.s", "-o", "x.img"], d);
}

#[test]
fn circuit_inputs_from_a_fifo_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("F"));
    std::fs::write(d.join("n.json"), COUNTER_JSON).unwrap();
    let err = one_line_error(
        &["circuit", "run", "--netlist", "n.json", "--inputs", "F", "--cycles", "1"],
        d,
    );
    assert!(err.contains("F: it is a FIFO, not a regular file"), "{err}");
}

#[test]
fn an_os_error_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let err = one_line_error(&["emu", "nonexist.img"], dir.path());
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// A 1-bit pass-through with a 2-bit output: `y = {a, a}`.
const COUNTER_JSON: &str = r#"{"modules": {"top": {"attributes": {"top": "1"},
 "ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [2, 2]}},
 "cells": {}, "netnames": {}}}}"#;
