//! C programs covering the lowering (every integer width, control flow, memory, calls) compiled by
//! vsp-cc, run on the vsp-cahp ISA simulator and compared with the same program compiled for the
//! host with fixed-width types (`tests/c/prelude.h`).

mod common;
use common::{differential, require_clang};

const ARGS: &[&[&str]] = &[
    &["1234", "-77"],
    &["-30000", "123"],
    &["7", "7"],
    &["0", "1"],
    &["-5", "3"],
];

macro_rules! prog {
    ($name:ident, $file:literal) => {
        #[test]
        #[ignore = "needs clang"]
        fn $name() {
            require_clang();
            differential(include_str!($file), ARGS);
        }
    };
}

prog!(arith16, "c/arith16.c");
prog!(arith8, "c/arith8.c");
prog!(arith32a, "c/arith32a.c");
prog!(arith32b, "c/arith32b.c");
prog!(control, "c/control.c");
prog!(memory, "c/memory.c");
prog!(calls, "c/calls.c");
prog!(misc, "c/misc.c");

#[test]
#[ignore = "needs clang"]
fn files_include_headers_next_to_them_and_main_may_recurse() {
    require_clang();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("k.h"), "#define K 7\n").expect("write");
    let c = dir.path().join("p.c");
    let src = "#include \"k.h\"\nint main(int argc, char **argv) {\n    if (argc > 5)\n        return main(argc - 1, argv) * 2;\n    return K + argc;\n}\n";
    std::fs::write(&c, src).expect("write");
    let (_, image) =
        vsp_cc::compile_c_to_image(&c, &vsp_cc::CcOptions::default()).expect("compiles");
    let mut sim = vsp_cahp::Simulator::from_image(
        &image,
        &["a", "b", "c", "d", "e", "f"],
        vsp_cahp::MemConfig::default(),
    )
    .expect("loads");
    assert!(sim.run(100_000).expect("runs").halted);
    // argc = 7: ((7 + 5) * 2) * 2.
    assert_eq!(sim.result(), 48);
}
