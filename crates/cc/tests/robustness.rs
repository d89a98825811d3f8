//! The IR reader and back end never panic on damaged input: every line of a real clang output is
//! deleted or cut in half in turn, and each variant must compile or fail with an error.
//! (No clang needed: the IR is checked in, generated from `c/prelude.h` + `c/memory.c`.)

const IR: &str = include_str!("ir/memory.ll");

fn compile(text: &str) {
    // The C runtime is not needed by this program, so clang is never invoked.
    let _ = vsp_cc::compile_ir_with(
        text,
        &vsp_cc::CcOptions {
            clang: "/nonexistent".into(),
            ..Default::default()
        },
    );
}

#[test]
fn the_intact_module_compiles() {
    let asm = vsp_cc::compile_ir_with(
        IR,
        &vsp_cc::CcOptions {
            clang: "/nonexistent".into(),
            ..Default::default()
        },
    )
    .expect("compiles");
    assert!(asm.contains("main:") && asm.contains("call "), "{asm}");
}

#[test]
fn damaged_modules_never_panic() {
    let lines: Vec<&str> = IR.lines().collect();
    // Every other line keeps the test short; the two damages per line cover both parsers.
    for i in (0..lines.len()).step_by(2) {
        let mut v = lines.clone();
        v.remove(i);
        compile(&v.join("\n"));
        let mut v = lines.clone();
        let cut = &lines[i][..lines[i].len() / 2];
        v[i] = cut;
        compile(&v.join("\n"));
    }
}
