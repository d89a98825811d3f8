//! What `vsp emu` and `vsp cc` say when a program goes wrong or does not fit (issue 24, item 5): a
//! stack overflow named with the stack size and how to get more (also on stdout with `--json`), an
//! illegal instruction said once, `--max-cycles` named when the run stops there (with no ISA
//! disagreement: the two simulators merely stopped at different points), `--emit-asm` written
//! for a program that does not fit, and `-Oz` suggested only to programs built at another level.

mod common;
use common::{clang_scratch, fails, ok, vsp};
use std::path::Path;

/// `main` calls itself forever: every call takes 16 more bytes of stack.
const RECURSE: &str = "main:\n    addi sp, sp, -16\n    sw ra, 14(sp)\n    call main\n    \
                       lw ra, 14(sp)\n    addi sp, sp, 16\n    ret\n";

fn write(d: &Path, name: &str, text: &str) {
    std::fs::write(d.join(name), text).unwrap();
}

#[test]
fn a_stack_overflow_is_named_with_the_stack_size_and_how_to_get_more() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "rec.s", RECURSE);
    ok(&["-q", "asm", "--runtime", "rec.s", "-o", "rec.img"], d);
    for core in ["pearl", "ruby"] {
        let err = fails(&["emu", "--core", core, "rec.img"], d);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: stack overflow at pc 0x"), "{err}");
        assert!(
            err.contains("the 502 bytes between the static data and the arguments"),
            "{err}"
        );
        assert!(
            err.contains("--memory-size rom=512,ram=1024 gives the stack 512 bytes more"),
            "{err}"
        );
        assert!(!err.contains("illegal instruction"), "{err}");
        // --json: the result on stdout, the error in it and on stderr, a failing exit.
        let out = vsp(&["emu", "--json", "--core", core, "rec.img"], d);
        assert!(!out.status.success());
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["finished"], false);
        assert_eq!(json["agrees_with_isa"], serde_json::Value::Null);
        assert!(
            json["isa_error"]
                .as_str()
                .unwrap()
                .starts_with("stack overflow"),
            "{json}"
        );
    }
    // On the 1 KiB machine there is no larger RAM to suggest.
    asm_1k("rec.s", "rec1k.img", d);
    let err = fails(&["emu", "--memory-size", "1024", "rec1k.img"], d);
    assert!(err.contains("the 1014 bytes"), "{err}");
    // A larger RAM is offered for the stack, the ROM kept.
    assert!(err.contains("--memory-size rom=1024,ram=2048"), "{err}");
    assert!(err.contains("make the program use less stack"), "{err}");
    // The trace ends with the same diagnosis.
    let out = vsp(&["emu", "--trace", "rec.img"], d);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("stopped: stack overflow")),
        "{stdout}"
    );
}

#[test]
fn an_illegal_instruction_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ill.s", "    .text\n    .byte 0x00, 0xd5\n");
    ok(&["-q", "asm", "ill.s", "-o", "ill.img"], d);
    let err = fails(&["emu", "ill.img"], d);
    assert_eq!(
        err.trim(),
        "error: at pc 0x0000: illegal instruction 0xd500 (16-bit)"
    );
}

#[test]
fn stopping_at_max_cycles_is_named_and_is_no_disagreement() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // fib(5) halts after a few dozen cycles.
    write(d, "fib.s", vsp_cahp::programs::FIB.source);
    ok(&["-q", "asm", "fib.s", "-o", "fib.img"], d);
    for core in ["pearl", "ruby"] {
        let out = vsp(
            &["emu", "--core", core, "--max-cycles", "5", "fib.img", "5"],
            d,
        );
        assert!(!out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stdout.contains("finished:   no"), "{stdout}");
        assert!(stdout.contains("stopped at --max-cycles 5"), "{stdout}");
        assert!(!stdout.contains("DISAGREES"), "{stdout}");
        assert!(
            !stdout.contains("--cycles"),
            "no advice for `vsp run`: {stdout}"
        );
        assert!(stdout.contains("ISA check:  not made"), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(
                "error: the program did not halt within --max-cycles 5 cycles; \
                                the ISA simulator halts it after"
            ),
            "{stderr}"
        );
        assert!(stderr.contains("raise --max-cycles"), "{stderr}");
        let out = vsp(
            &[
                "emu",
                "--json",
                "--core",
                core,
                "--max-cycles",
                "5",
                "fib.img",
                "5",
            ],
            d,
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["finished"], false);
        assert_eq!(json["agrees_with_isa"], serde_json::Value::Null);
        assert_eq!(json["isa_halted"], true);
    }
}

/// A C program whose code needs more than 512 bytes at every level (vsp-cc's interpreter).
fn big_c(d: &Path) -> String {
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cc/tests/c");
    let prelude = std::fs::read_to_string(c.join("prelude.h")).unwrap();
    let body = std::fs::read_to_string(c.join("diff/interp.c")).unwrap();
    write(d, "interp.c", &format!("{prelude}\n{body}"));
    "interp.c".into()
}

#[test]
#[ignore = "needs clang"]
fn emit_asm_is_written_when_the_program_does_not_fit() {
    let dir = clang_scratch();
    let d = dir.path();
    let src = big_c(d);
    let err = fails(
        &["-q", "cc", &src, "--emit-asm", "interp.s", "-o", "p.img"],
        d,
    );
    assert!(err.contains("does not fit"), "{err}");
    assert!(!d.join("p.img").exists());
    let asm = std::fs::read_to_string(d.join("interp.s")).expect("the assembly is written");
    assert!(asm.contains("main:"), "{asm}");
    // It is the program: assembled for the 1 KiB machine it is the image `vsp cc` builds there.
    asm_1k("interp.s", "a.img", d);
    ok(
        &["-q", "cc", &src, "--memory-size", "1024", "-o", "c.img"],
        d,
    );
    assert_eq!(
        std::fs::read(d.join("a.img")).unwrap(),
        std::fs::read(d.join("c.img")).unwrap()
    );
}

#[test]
#[ignore = "needs clang"]
fn the_does_not_fit_message_suggests_oz_only_to_other_levels() {
    let dir = clang_scratch();
    let d = dir.path();
    let src = big_c(d);
    let oz = fails(&["-q", "cc", &src, "-o", "p.img"], d);
    assert!(oz.contains("does not fit"), "{oz}");
    assert!(!oz.contains("-Oz"), "already at -Oz: {oz}");
    assert!(oz.contains("use --memory-size "), "{oz}");
    let o2 = fails(&["-q", "cc", &src, "-O", "2", "-o", "p.img"], d);
    assert!(o2.contains("try -Oz"), "{o2}");
}

/// `vsp asm --runtime` of `src` for the 1 KiB machine, written to `img`.
fn asm_1k(src: &str, img: &str, d: &Path) {
    ok(
        &[
            "-q",
            "asm",
            "--runtime",
            "--memory-size",
            "1024",
            src,
            "-o",
            img,
        ],
        d,
    );
}
