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

/// Two C files (each with its own `static helper` and string literals), a header found through
/// `-I`, and a macro from `-D`: one program.
#[test]
#[ignore = "needs clang"]
fn several_files_are_linked_with_their_own_statics_and_clang_flags() {
    require_clang();
    let dir = tempfile::tempdir().expect("temp dir");
    let inc = dir.path().join("inc");
    std::fs::create_dir(&inc).expect("mkdir");
    std::fs::write(inc.join("k.h"), "#define BASE 40\n").expect("write");
    let a = dir.path().join("a.c");
    let b = dir.path().join("b.c");
    std::fs::write(
        &a,
        "#include \"k.h\"\nstatic int helper(int x) { return x + BASE; }\nint twice(int);\n\
         const char *bname(void);\nstatic const char *aname(void) { return \"a\"; }\n\
         int main(int argc, char **argv) {\n    return helper(twice(argc)) + SCALE + (*bname() - 'b') + (*aname() - 'a');\n}\n",
    )
    .expect("write");
    std::fs::write(
        &b,
        "static int helper(int x) { return x * 2; }\nint twice(int x) { return helper(x); }\n\
         const char *bname(void) { return \"b\"; }\n",
    )
    .expect("write");
    let opts = vsp_cc::CcOptions {
        clang_args: vec!["-DSCALE=2".into(), "-I".into(), inc.display().to_string()],
        ..vsp_cc::CcOptions::default()
    };
    for level in ["-O0", "-O2", "-Oz"] {
        let opts = vsp_cc::CcOptions {
            opt: level.into(),
            ..opts.clone()
        };
        let (_, image) = vsp_cc::compile_c_files_to_image(
            &[a.clone(), b.clone()],
            &opts,
            vsp_cahp::MemConfig::default(),
        )
        .unwrap_or_else(|e| panic!("{level}: {e}"));
        let mut sim =
            vsp_cahp::Simulator::from_image(&image, &["x", "y"], vsp_cahp::MemConfig::default())
                .expect("loads");
        assert!(sim.run(100_000).expect("runs").halted);
        // argc = 3: twice → 6, helper → 46, + SCALE.
        assert_eq!(sim.result(), 48, "{level}");
    }
    // The same non-static symbol in two files is an error that names both.
    std::fs::write(
        &b,
        "int main(void) { return 1; }\nint twice(int x) { return x; }\n",
    )
    .expect("write");
    let e = vsp_cc::compile_c_files(&[a, b], &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'main' is defined in both"), "{e}");
}
