//! Secret keys and safe writes: keys are 0600 from creation on, exposed keys are warned about, `-o`
//! never replaces anything but a regular file and never the command's own input, and no temporary
//! file is left behind.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{fails, ok, vsp};

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn fib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cahp/asm/programs/fib.s")
}

/// Every entry of `d` (names), sorted.
fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn secret_keys_are_created_0600_and_stay_0600() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["-q", "genkey", "-o", "a.key"], d);
    assert_eq!(mode(&d.join("a.key")), 0o600);
    // Again over the existing 0600 key, and over a key someone made world-readable.
    ok(&["-q", "genkey", "-o", "a.key"], d);
    assert_eq!(mode(&d.join("a.key")), 0o600);
    fs::set_permissions(d.join("a.key"), fs::Permissions::from_mode(0o666)).unwrap();
    ok(&["-q", "genkey", "-o", "a.key"], d);
    assert_eq!(mode(&d.join("a.key")), 0o600);
    assert_eq!(entries(d), ["a.key"], "no temporary file is left");
    // Files that are not secret get the usual 0666 less the umask (0644 under umask 022).
    ok(&["-q", "asm", fib().to_str().unwrap(), "-o", "fib.img"], d);
    assert_eq!(mode(&d.join("fib.img")), 0o666 & !umask());
}

#[test]
fn an_exposed_secret_key_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["-q", "genkey", "-o", "a.key"], d);
    // `dec` loads the key first, then fails on the missing input: enough to see the warning.
    let err = fails(&["dec", "-k", "a.key", "-i", "missing.enc"], d);
    assert!(!err.contains("warning"), "{err}");
    for m in [0o640, 0o604, 0o666] {
        fs::set_permissions(d.join("a.key"), fs::Permissions::from_mode(m)).unwrap();
        let err = fails(&["dec", "-k", "a.key", "-i", "missing.enc"], d);
        assert!(
            err.contains("warning: secret key a.key is accessible by others")
                && err.contains("chmod 600"),
            "mode {m:o}: {err}"
        );
    }
}

#[test]
fn output_must_be_absent_or_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("target"), b"precious").unwrap();
    std::os::unix::fs::symlink(d.join("target"), d.join("link")).unwrap();
    let err = fails(&["genkey", "-o", "link"], d);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(fs::read(d.join("target")).unwrap(), b"precious");
    assert!(fs::symlink_metadata(d.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());

    let fifo = std::ffi::CString::new(d.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let err = fails(&["genkey", "-o", "fifo"], d);
    assert!(err.contains("FIFO"), "{err}");

    fs::create_dir(d.join("sub")).unwrap();
    let err = fails(&["genkey", "-o", "sub"], d);
    assert!(err.contains("directory"), "{err}");

    let err = fails(&["genkey", "-o", "/dev/null"], d);
    assert!(err.contains("device"), "{err}");

    let src = fib();
    let err = fails(&["asm", src.to_str().unwrap(), "-o", "link"], d);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(entries(d), ["fifo", "link", "sub", "target"]);
}

#[test]
fn output_never_overwrites_the_commands_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["-q", "genkey", "-o", "a.key"], d);
    let key = fs::read(d.join("a.key")).unwrap();
    let src = fib();
    let src = src.to_str().unwrap();

    let err = fails(&["enc", "-k", "a.key", src, "5", "-o", "a.key"], d);
    assert!(err.contains("over the secret key"), "{err}");
    let err = fails(&["enc", "-k", "a.key", src, "5", "-o", "./a.key"], d);
    assert!(err.contains("over the secret key"), "{err}");
    fs::hard_link(d.join("a.key"), d.join("alias.key")).unwrap();
    let err = fails(&["genbkey", "-k", "a.key", "-o", "alias.key"], d);
    assert!(err.contains("over the secret key"), "{err}");
    assert_eq!(fs::read(d.join("a.key")).unwrap(), key);

    // The check comes before anything is read, so placeholder files do.
    fs::write(d.join("run.snap"), b"snapshot").unwrap();
    fs::write(d.join("eval.key"), b"eval").unwrap();
    fs::write(d.join("req.enc"), b"request").unwrap();
    let err = fails(
        &[
            "resume", "run.snap", "--cycles", "1", "-e", "eval.key", "-o", "run.snap",
        ],
        d,
    );
    assert!(err.contains("over the snapshot"), "{err}");
    assert_eq!(fs::read(d.join("run.snap")).unwrap(), b"snapshot");
    // `vsp run` writing its snapshot over its request, or its result and snapshot to one file.
    for (out, snapshot, says) in [
        ("out.enc", "req.enc", "over the request"),
        ("s", "s", "over the snapshot"),
    ] {
        let err = fails(
            &[
                "run",
                "-e",
                "eval.key",
                "-i",
                "req.enc",
                "-o",
                out,
                "--cycles",
                "1",
                "--snapshot",
                snapshot,
            ],
            d,
        );
        assert!(err.contains(says), "{err}");
    }

    fs::copy(src, d.join("p.s")).unwrap();
    let err = fails(&["asm", "p.s", "-o", "p.s"], d);
    assert!(err.contains("over the source"), "{err}");
    assert_eq!(fs::read(d.join("p.s")).unwrap(), fs::read(src).unwrap());
}

#[test]
fn stale_temporary_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A pid above any pid_max: the run that wrote it is gone.
    fs::write(d.join(".a.key.vsp-tmp-4294967295-0-0"), b"half a key").unwrap();
    let out = vsp(&["genkey", "-o", "a.key"], d);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".a.key.vsp-tmp-4294967295-0-0") && err.contains("interrupted"),
        "{err}"
    );
}

/// This process's umask (Linux reports it in /proc/self/status; the test runs there).
fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .expect("/proc/self/status has a Umask line");
    u32::from_str_radix(line.trim(), 8).unwrap()
}
