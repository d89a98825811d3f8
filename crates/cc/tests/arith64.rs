//! 64-bit arithmetic that fits: vsp-cahp's assembly helpers for 64-bit `/`, `%`, `*` and the
//! variable shifts keep programs that use them inside the 1 KiB ROM at every optimisation level
//! (and signed 64-bit division with modulo inside the 512-byte ROM at -Os/-Oz), with the host's
//! results; a program that divides and multiplies links one module for both.

mod common;
use common::{differential_levels, require_clang, LEVELS, PRELUDE};
use vsp_cahp::MemConfig;
use vsp_cc::{assemble_image, compile_c_source, CcOptions};

const ARITH64: &str = include_str!("c/diff/arith64.c");
const DIV64: &str = include_str!("c/diff/div64.c");

/// ROM bytes of `src` (with the prelude) at `level` for `mem`, or the error.
fn rom_bytes(src: &str, level: &str, mem: MemConfig) -> Result<usize, String> {
    let opts = CcOptions {
        opt: level.to_string(),
        clang_args: vec!["-fwrapv".into()],
        ..CcOptions::default()
    };
    let asm =
        compile_c_source(&format!("{PRELUDE}\n{src}"), "t.c", &opts).map_err(|e| e.to_string())?;
    assemble_image(&asm, "t.s", mem)
        .map(|img| img.rom.len())
        .map_err(|e| e.to_string())
}

#[test]
#[ignore = "needs clang"]
fn signed_64_bit_division_modulo_multiply_and_shifts_fit_1_kib_at_every_level() {
    require_clang();
    differential_levels(
        ARITH64,
        &[
            &["123", "-4567", "-89", "13"],
            &["-32768", "1", "7", "63"],
            &["32767", "-1", "-32768", "0"],
            &["-5", "300", "1", "40"],
            &["0", "99", "-3", "17"],
        ],
        &LEVELS,
        MemConfig::kib1(),
    );
    // Room to spare: with the helpers (431 bytes: division with the multiply, and both shift
    // modules) the program takes at most 856 bytes at any level (measured), leaving 168.
    for level in LEVELS {
        let rom = rom_bytes(ARITH64, level, MemConfig::kib1()).unwrap();
        assert!(rom <= 880, "{level}: {rom} bytes");
    }
}

/// The functions of the image of `src` at -Oz for the 1 KiB machine.
fn symbols(src: &str) -> Vec<String> {
    let asm = compile_c_source(&format!("{PRELUDE}\n{src}"), "t.c", &CcOptions::default()).unwrap();
    let img = assemble_image(&asm, "t.s", MemConfig::kib1()).unwrap();
    img.symbols.into_iter().map(|s| s.name).collect()
}

#[test]
#[ignore = "needs clang"]
fn a_program_that_divides_multiplies_through_the_division_loop() {
    require_clang();
    let has = |syms: &[String], s: &str| syms.iter().any(|x| x == s);
    // Division and multiply: one module (the division's), its multiply entry.
    let both = symbols(ARITH64);
    assert!(
        has(&both, "__divdi3_mul") && has(&both, "__divdi3"),
        "{both:?}"
    );
    assert!(!has(&both, "__muldi3"), "{both:?}");
    // Multiply alone: the small multiply module, no division.
    let mul = symbols(
        "int main(int c, char **v) { i64 a = num(v[1]); return (u16)(a * a * 12345678901LL >> 20); }",
    );
    assert!(has(&mul, "__muldi3"), "{mul:?}");
    assert!(
        !has(&mul, "__divdi3") && !has(&mul, "__divdi3_mul"),
        "{mul:?}"
    );
    differential_levels(
        "int main(int c, char **v) { i64 a = num(v[1]); return (u16)(a * a * 12345678901LL >> 20); }",
        &[&["-1234"], &["32767"]],
        &["-O0", "-Oz"],
        MemConfig::default(),
    );
}

#[test]
#[ignore = "needs clang"]
fn signed_64_bit_division_and_modulo_fit_512_bytes_at_os_and_oz() {
    require_clang();
    let args: &[&[&str]] = &[&["-7", "12345", "-77"], &["32767", "65535", "3"]];
    differential_levels(DIV64, args, &["-Os", "-Oz"], MemConfig::default());
    differential_levels(DIV64, args, &LEVELS, MemConfig::kib1());
}
