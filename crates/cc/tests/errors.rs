//! Clear errors: a missing clang, constructs the back end does not lower, undefined symbols.

mod common;
use common::require_clang;
use vsp_cc::{compile_c_source, compile_ir, CcError, CcOptions};

#[test]
fn missing_clang_says_how_to_install_it() {
    let opts = CcOptions {
        clang: "/nonexistent/clang-for-vsp-cc".into(),
        ..CcOptions::default()
    };
    let e = compile_c_source("int main(){return 0;}", "x.c", &opts).unwrap_err();
    assert!(matches!(e, CcError::ClangMissing(_)), "{e:?}");
    assert!(e.to_string().contains("apt-get install -y clang"), "{e}");
}

#[test]
fn floating_point_is_refused_with_its_line() {
    let ir = "define i16 @main(i16 %0, i8** %1) {\n  %3 = sitofp i16 %0 to float\n  %4 = fptosi float %3 to i16\n  ret i16 %4\n}\n";
    let e = compile_ir(ir).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("floating point"), "{e}");
}

#[test]
fn a_dead_64_bit_extension_is_not_refused() {
    // clang -O0 leaves `zext i1 … to i64` behind even in programs without long long.
    let ir = "define i16 @main(i16 %0, i8** %1) {\n  %3 = icmp eq i16 %0, 1\n  %4 = zext i1 %3 to i64\n  ret i16 %0\n}\n";
    let opts = CcOptions {
        clang: "/nonexistent".into(),
        ..CcOptions::default()
    };
    vsp_cc::compile_ir_with(ir, &opts).expect("compiles");
}

#[test]
fn undefined_functions_and_missing_main_are_reported() {
    let ir = "declare i16 @puts(i8*)\ndefine i16 @main(i16 %0, i8** %1) {\n  %3 = call i16 @puts(i8* null)\n  ret i16 %3\n}\n";
    let e = compile_ir(ir).unwrap_err().to_string();
    assert!(e.contains("undefined symbol 'puts'"), "{e}");
    let e = compile_ir("define i16 @f() {\n  ret i16 1\n}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no main"), "{e}");
}

#[test]
fn malformed_ir_names_the_line() {
    let e = compile_ir("define i16 @main() {\n  %1 = frobnicate i16 1\n  ret i16 %1\n}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("frobnicate"), "{e}");
    assert!(compile_ir("define i16 @main() {\n  ret i16 1\n").is_err());
}

#[test]
#[ignore = "needs clang"]
fn clang_diagnostics_are_passed_on() {
    require_clang();
    let e = compile_c_source(
        "int main(void) { return undeclared; }",
        "bad.c",
        &CcOptions::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, CcError::ClangFailed { .. })
            && text.contains("bad.c")
            && text.contains("undeclared"),
        "{text}"
    );
    let e = compile_c_source(
        "float f; int main(void) { return (int)(f * 2.0f); }",
        "fp.c",
        &CcOptions::default(),
    );
    assert!(e.unwrap_err().to_string().contains("floating point"));
}
