//! Assembler error messages: each kind of mistake is reported at `file:line:column` with a message
//! that says what is wrong.

use vsp_cahp::{assemble, AsmErrorKind};

fn err(src: &str) -> String {
    match assemble(src, "t.s") {
        Ok(_) => panic!("assembled without error:\n{src}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_mnemonic() {
    assert_eq!(
        err("nop\n    ad a0, a1, a2\n"),
        "t.s:2:5: error: unknown mnemonic `ad`"
    );
}

#[test]
fn bad_register() {
    let want = "t.s:1:5: error: bad register `x16`: expected x0..x15 or ra, sp, fp, s0..s4, a0..a5, t0, t1";
    assert_eq!(err("add x16, a1, a2"), want);
    assert_eq!(err("lw a0, 4(q7)"), "t.s:1:10: error: bad register `q7`: expected x0..x15 or ra, sp, fp, s0..s4, a0..a5, t0, t1");
    assert_eq!(
        err("mov a0, a6"),
        "t.s:1:9: error: bad register `a6`: expected x0..x15 or ra, sp, fp, s0..s4, a0..a5, t0, t1"
    );
    assert_eq!(
        err("add a0, 3, a1"),
        "t.s:1:9: error: operand 2 of `add` must be a register"
    );
}

#[test]
fn immediate_out_of_range() {
    assert_eq!(
        err("addi a0, a1, 600"),
        "t.s:1:14: error: immediate 600 out of range for `addi` (allowed -512..=511)"
    );
    assert_eq!(
        err("lsli a0, a1, 16"),
        "t.s:1:14: error: immediate 16 out of range for `lsli` (allowed 0..=15)"
    );
    assert_eq!(
        err("lwsp a0, 3(sp)"),
        "t.s:1:10: error: immediate 3 out of range for `lwsp` (allowed 0..=126, even)"
    );
    assert_eq!(
        err("li a0, 70000"),
        "t.s:1:8: error: immediate 70000 out of range for `li` (allowed -32768..=65535)"
    );
    assert_eq!(
        err("lui a0, 64"),
        "t.s:1:9: error: immediate 64 out of range for `lui` (allowed 0..=63)"
    );
    assert_eq!(
        err(".data\n.byte 256"),
        "t.s:2:7: error: immediate 256 out of range for `.byte` (allowed -128..=255)"
    );
}

#[test]
fn undefined_and_duplicate_labels() {
    assert_eq!(
        err("start:\n  j nowhere\n"),
        "t.s:2:5: error: undefined symbol `nowhere`"
    );
    assert_eq!(
        err("  li a0, 1 + missing"),
        "t.s:1:14: error: undefined symbol `missing`"
    );
    assert_eq!(
        err("loop: nop\nloop: hlt\n"),
        "t.s:2:1: error: duplicate symbol `loop` (first defined at t.s:1:1)"
    );
    assert_eq!(
        err(".equ k, 1\n.data\nk: .byte 0"),
        "t.s:3:1: error: duplicate symbol `k` (first defined at t.s:1:6)"
    );
}

#[test]
fn branch_out_of_range() {
    let src = "start: beq a0, a1, far\n .space 600\nfar: hlt\n";
    assert_eq!(err(src), "t.s:1:20: error: branch target out of range for `beq`: offset 603 bytes (allowed -512..=511)");
    let src = "back: hlt\n .space 1100\n j back\n";
    assert_eq!(err(src), "t.s:3:4: error: jump target out of range for `j`: offset -1102 bytes (allowed -1024..=1023)");
}

#[test]
fn other_mistakes() {
    assert_eq!(
        err("addi a0, a1"),
        "t.s:1:1: error: `addi` takes 3 operand(s) (rd, rs1, imm), found 2"
    );
    assert_eq!(
        err("ret a0"),
        "t.s:1:5: error: `ret` takes 0 operand(s) (no operands), found 1"
    );
    assert_eq!(err(".dat"), "t.s:1:1: error: unknown directive `.dat`");
    assert_eq!(
        err(".data\nadd a0, a0, a0"),
        "t.s:2:1: error: instructions belong in .text, not .data"
    );
    assert_eq!(
        err(".bss\n.byte 1"),
        "t.s:2:7: error: .bss holds only zeros (.space/.zero/.align/labels)"
    );
    assert_eq!(
        err("li a0, 'ab'"),
        "t.s:1:8: error: syntax error: character literal must hold exactly one byte"
    );
    assert_eq!(
        err(".ascii \"abc"),
        "t.s:1:8: error: syntax error: unterminated string literal"
    );
    assert_eq!(
        err("li a0, 1 +"),
        "t.s:1:11: error: syntax error: expected an expression, found end of line"
    );
    assert_eq!(
        err("a0: nop"),
        "t.s:1:1: error: syntax error: `a0` is a register name and cannot be a symbol"
    );
    assert_eq!(
        err(" .space 600"),
        "t.s: error: ROM overflow: 600 bytes used, 512 available"
    );
    let e = vsp_cahp::assemble("lw a0, 4(sp", "t.s").unwrap_err();
    assert!(matches!(e.kind, AsmErrorKind::Syntax(_)), "{e}");
    assert_eq!((e.line, e.file.as_str()), (1, "t.s"));
}

/// Issue 13: a file of `.space 65536` lines used more than 4 GB because every line was allocated
/// before the total was checked. Now the line that no longer fits the 16-bit address space is
/// refused before it is allocated (the machine's smaller sizes are checked after layout).
#[test]
fn space_beyond_the_address_space_is_refused_before_allocating() {
    let src = ".data\n".to_string() + &".space 65536\n".repeat(100_000);
    assert_eq!(
        err(&src),
        "t.s:3:8: error: RAM overflow: 131072 bytes used, 65536 available"
    );
    assert_eq!(
        err(".text\n.space 65000\n.byte 1\n.space 536\n"),
        "t.s:4:8: error: ROM overflow: 65537 bytes used, 65536 available"
    );
    // Within the address space but beyond the machine: the whole-program error as before.
    assert_eq!(
        err(".data\n.space 600\n"),
        "t.s: error: RAM overflow: 602 bytes used, 510 available"
    );
}

/// Issue 25: arities said `1..=18446744073709551615 argument(s)`; a 16-bit `.word` was reported as
/// `.half`; shift counts wrapped (`1 << 64` assembled to 1) and so did 64-bit overflow.
#[test]
fn arity_data_and_shift_messages() {
    assert_eq!(
        err(".globl"),
        "t.s:1:1: error: syntax error: `.globl` takes at least one argument, found 0"
    );
    assert_eq!(
        err(".text 3"),
        "t.s:1:1: error: syntax error: `.text` takes no arguments, found 1"
    );
    assert_eq!(
        err(".equ x"),
        "t.s:1:1: error: syntax error: `.equ` takes 2 arguments, found 1"
    );
    assert_eq!(
        err(".word 0x10000"),
        "t.s:1:7: error: immediate 65536 out of range for `.word` (allowed -32768..=65535)"
    );
    assert_eq!(
        err(".byte 256"),
        "t.s:1:7: error: immediate 256 out of range for `.byte` (allowed -128..=255)"
    );
    for (src, msg) in [
        ("li a0, 1 << 64", "shift count 64 is out of range (0 to 63)"),
        ("li a0, 1 << -1", "shift count -1 is out of range (0 to 63)"),
        ("li a0, 8 >> 70", "shift count 70 is out of range (0 to 63)"),
        ("li a0, 1 << 63", "expression overflows 64-bit arithmetic"),
        (
            "li a0, 65536 * 65536 * 65536 * 65536",
            "expression overflows 64-bit arithmetic",
        ),
        (
            "li a0, -(65536 * 65536 * 65536 * 16384) * 2 - 1",
            "expression overflows 64-bit arithmetic",
        ),
    ] {
        assert_eq!(
            err(src),
            format!("t.s:1:8: error: syntax error: {msg}"),
            "{src}"
        );
    }
    // In range: still fine.
    assemble("li a0, 1 << 15 >> 15\n.half -1 << 4, 3 << 2\nhlt\n", "t.s").unwrap();
}
