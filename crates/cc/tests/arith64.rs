//! 64-bit arithmetic that fits: vsp-cahp's assembly helpers for 64-bit `/`, `%`, `*` and the
//! variable shifts keep programs that use them inside the 1 KiB ROM at every optimisation level
//! (and a single 64-bit division inside the 512-byte ROM at -Os/-Oz), with the host's results.

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
    // Room to spare: the helpers (562 bytes for all of them) leave the program's own code at least
    // 50 bytes at the largest level and a quarter of the ROM at -Oz.
    for level in LEVELS {
        let rom = rom_bytes(ARITH64, level, MemConfig::kib1()).unwrap();
        assert!(rom <= 974, "{level}: {rom} bytes");
        if level == "-Oz" {
            assert!(rom <= 768, "{level}: {rom} bytes");
        }
    }
}

#[test]
#[ignore = "needs clang"]
fn one_signed_64_bit_division_fits_512_bytes_at_os_and_oz() {
    require_clang();
    let args: &[&[&str]] = &[&["-7", "12345", "-77"], &["32767", "65535", "3"]];
    differential_levels(DIV64, args, &["-Os", "-Oz"], MemConfig::default());
    differential_levels(DIV64, args, &LEVELS, MemConfig::kib1());
}
