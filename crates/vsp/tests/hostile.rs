//! Hostile and wrong input to the `vsp` command (issue 13): each is a clear one-line error, never a
//! panic. (Blueprint ranges: vsp-circuit's tests/errors.rs; `.space`: vsp-cahp's tests/asm_errors.rs;
//! the result shape and the cycle counter: unit tests of src/encrypted.rs.)

mod common;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::{fails, ok, programs_dir};

#[test]
fn a_huge_thread_count_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for t in ["100000", "0", "lots"] {
        let err = fails(
            &[
                "run",
                "-e",
                "e.key",
                "-i",
                "r.enc",
                "-o",
                "o.enc",
                "--cycles",
                "1",
                "--threads",
                t,
            ],
            d,
        );
        assert!(err.contains("from 1 to 1024"), "{t}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let err = fails(
        &[
            "circuit",
            "run",
            "--blueprint",
            "b.toml",
            "--cycles",
            "1",
            "--threads",
            "100000",
        ],
        d,
    );
    assert!(err.contains("from 1 to 1024"), "{err}");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // A program that never halts: the trace is megabytes, far more than a pipe buffers.
    let bf = programs_dir().join("bf.s");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vsp"))
        .args(["emu", "--trace", "--max-cycles", "200000"])
        .arg(&bf)
        .arg("+[]")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read a little (like `head -1`), then close the pipe.
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let err = common::stderr_text(&mut child);
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        status.signal() == Some(libc::SIGPIPE) || status.code() == Some(0),
        "{status:?}: {err}"
    );
}

/// Rewrites a vsp secret-key envelope with another parameter-set label (the parameter id is the
/// 16-byte key id and the label) and a correct checksum, through the shared codec.
fn relabel(bytes: &[u8], label: &str) -> Vec<u8> {
    const VSPF: vsp_codec::Format = vsp_codec::Format {
        name: "vsp",
        magic: b"VSPF",
        version: 2,
        kinds: &[(1, "secret key")],
    };
    let o = vsp_codec::open(&VSPF, bytes, 1).unwrap();
    let mut param = o.param[..16].to_vec();
    param.extend_from_slice(label.as_bytes());
    vsp_codec::seal(&VSPF, 1, &param, o.body)
}

#[test]
fn a_key_whose_label_is_not_its_parameter_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(
        &[
            "-q",
            "genkey",
            "--params",
            "cggi16",
            "--insecure",
            "-o",
            "weak.key",
        ],
        d,
    );
    let weak = std::fs::read(d.join("weak.key")).unwrap();
    std::fs::write(d.join("fake.key"), relabel(&weak, "default")).unwrap();
    let src = programs_dir().join("fib.s");
    let err = fails(
        &[
            "enc",
            "-k",
            "fake.key",
            src.to_str().unwrap(),
            "5",
            "-o",
            "r.enc",
        ],
        d,
    );
    assert!(
        err.contains(
            "the file says parameter set \"default\" but the secret key inside uses Cggi16"
        ),
        "{err}"
    );
    assert!(!d.join("r.enc").exists());
    // The unchanged file, relabelled to its own name, still loads (the check is not the checksum).
    std::fs::write(d.join("same.key"), relabel(&weak, "cggi16")).unwrap();
    ok(
        &[
            "-q",
            "enc",
            "-k",
            "same.key",
            src.to_str().unwrap(),
            "5",
            "-o",
            "r.enc",
        ],
        d,
    );
}
