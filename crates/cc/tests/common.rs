//! Shared harness: compile C with vsp-cc, assemble with vsp-cahp's runtime, run on its ISA simulator.

use vsp_cahp::{assemble_with_runtime, MemConfig, Simulator};
use vsp_cc::{clang_available, compile_c_source, CcOptions};

/// Whether clang is installed; prints why a test is skipped otherwise.
pub fn have_clang() -> bool {
    let ok = clang_available(&CcOptions::default());
    if !ok {
        eprintln!("skipping: clang is not installed (apt-get install -y clang)");
    }
    ok
}

/// Result of one run.
#[allow(dead_code)]
pub struct Run {
    pub result: u16,
    pub steps: u64,
    pub rom: usize,
    pub asm: String,
}

/// Compiles `src`, runs it with `args` and returns a0, the instruction count and the ROM size.
pub fn run_c(src: &str, args: &[&str]) -> Run {
    let asm = compile_c_source(src, "test.c", &CcOptions::default()).unwrap_or_else(|e| panic!("compile: {e}"));
    let image = assemble_with_runtime(&asm, "test.s").unwrap_or_else(|e| panic!("assemble: {e}\n{asm}"));
    let mut sim = Simulator::from_image(&image, args, MemConfig::default()).unwrap_or_else(|e| panic!("load: {e}"));
    let stats = sim.run(2_000_000).unwrap_or_else(|e| panic!("run: {e}\n{asm}"));
    assert!(stats.halted, "did not halt\n{asm}");
    Run { result: sim.result(), steps: stats.steps, rom: image.rom.len(), asm }
}

/// Runs `main` of a program and checks the result.
#[allow(dead_code)]
pub fn check(src: &str, args: &[&str], expected: u16) -> Run {
    let r = run_c(src, args);
    assert_eq!(r.result, expected, "wrong result for args {args:?}\n{}", r.asm);
    r
}
