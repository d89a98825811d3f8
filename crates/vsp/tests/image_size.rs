//! An image records the memory size it was built for (issue 24, item 4): `vsp emu` and `vsp enc`
//! take it from there, an explicit other `--memory-size` is refused, images written before the
//! size was recorded still load (and take the option as before), and negative program arguments
//! need no `--`.

mod common;
use common::{fails, ok};
use std::path::Path;

/// `main` returns the first byte of argv[1] plus argc.
const FIRST_BYTE: &str =
    "main:\n    lw t0, 2(a1)\n    lbu t0, 0(t0)\n    add a0, a0, t0\n    ret\n";

#[test]
fn images_from_before_the_size_was_recorded_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let far = Path::new(env!("CARGO_MANIFEST_DIR")).join("../platform/tests/data/far-code.s");
    ok(
        &[
            "-q",
            "asm",
            far.to_str().unwrap(),
            "--memory-size",
            "1024",
            "-o",
            "new.img",
        ],
        d,
    );
    // The same image as an older build wrote it: no size in the file.
    let mut image = vsp_cahp::Image::read(&d.join("new.img")).unwrap();
    assert_eq!(image.memory, Some(vsp_cahp::MemConfig::kib1()));
    image.memory = None;
    image.write_atomic(&d.join("old.img")).unwrap();
    let err = fails(&["emu", "old.img"], d);
    assert!(
        err.contains(
            "does not fit in the 512-byte ROM and RAM; use --memory-size rom=1024,ram=512"
        ),
        "{err}"
    );
    for img in ["old.img", "new.img"] {
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["emu", "--json", "--memory-size", "1024", img], d)).unwrap();
        assert_eq!(
            (&json["result"], &json["memory_size"]),
            (&586.into(), &1024.into())
        );
    }
}

#[test]
fn negative_arguments_need_no_double_dash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.s"), FIRST_BYTE).unwrap();
    ok(&["-q", "asm", "--runtime", "p.s", "-o", "p.img"], d);
    // argc = 3 ("", "-5", "7"); '-' is 45.
    for args in [&["p.img", "-5", "7"][..], &["p.img", "--", "-5", "7"]] {
        let mut a = vec!["emu", "--json"];
        a.extend_from_slice(args);
        let json: serde_json::Value = serde_json::from_str(&ok(&a, d)).unwrap();
        assert_eq!(json["result"], 48, "{args:?}");
    }
    // Other arguments starting with `-` are still options unless after `--`.
    let err = fails(&["emu", "p.img", "-x"], d);
    assert!(err.contains("-x"), "{err}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["emu", "--json", "p.img", "--", "-x"], d)).unwrap();
    assert_eq!(json["result"], 47);
}
