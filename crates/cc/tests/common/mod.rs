//! Shared harness: compile C with vsp-cc, assemble with vsp-cahp's runtime, run on its ISA simulator.

use vsp_cahp::{assemble_sources, AsmOptions, Image, MemConfig, Simulator, Source};
use vsp_cc::{clang_available, compile_c_source, CcOptions};

/// Fails the test (never skips it) when clang is missing: the tests that call this are
/// `#[ignore = "needs clang"]` and run with `cargo test -- --include-ignored` (what `.ci/run` does).
pub fn require_clang() {
    assert!(
        clang_available(&CcOptions::default()),
        "clang is not installed (apt-get install -y clang); this test needs it"
    );
}

/// Result of one run.
#[allow(dead_code)]
pub struct Run {
    pub result: u16,
    pub steps: u64,
    pub rom: usize,
    pub asm: String,
}

/// Compiles `src` with vsp-cc and assembles it with the runtime for the machine `mem`: (assembly,
/// image).
fn build(src: &str, mem: MemConfig) -> (String, Image) {
    let asm = compile_c_source(src, "test.c", &CcOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let opts = AsmOptions {
        rom_size: mem.rom_size,
        ram_size: mem.ram_size,
        runtime: true,
        ..AsmOptions::default()
    };
    let image = assemble_sources(
        &[Source {
            name: "test.s",
            text: &asm,
        }],
        &opts,
    )
    .unwrap_or_else(|e| panic!("assemble: {e}\n{asm}"));
    (asm, image)
}

/// Compiles `src`, runs it with `args` on the standard 512 B machine.
pub fn run_c(src: &str, args: &[&str]) -> Run {
    run_c_on(src, args, MemConfig::default())
}

/// Compiles `src`, runs it with `args` and returns a0, the instruction count and the ROM size.
pub fn run_c_on(src: &str, args: &[&str], mem: MemConfig) -> Run {
    let (asm, image) = build(src, mem);
    let mut sim = Simulator::from_image(&image, args, mem).unwrap_or_else(|e| panic!("load: {e}"));
    let stats = sim
        .run(2_000_000)
        .unwrap_or_else(|e| panic!("run: {e}\n{asm}"));
    assert!(stats.halted, "did not halt\n{asm}");
    Run {
        result: sim.result(),
        steps: stats.steps,
        rom: image.rom.len(),
        asm,
    }
}

/// Runs `main` of a program and checks the result.
#[allow(dead_code)]
pub fn check(src: &str, args: &[&str], expected: u16) -> Run {
    let r = run_c(src, args);
    assert_eq!(
        r.result, expected,
        "wrong result for args {args:?}\n{}",
        r.asm
    );
    r
}

/// The shared prelude (fixed-width typedefs, `num`).
pub const PRELUDE: &str = include_str!("../c/prelude.h");

/// Builds the program for the host with the same fixed-width types; returns the executable.
pub fn host_build(src: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let prog = dir.join("prog.c");
    let drv = dir.join("driver.c");
    let exe = dir.join("prog");
    std::fs::write(&prog, format!("{PRELUDE}\n{src}")).expect("write");
    std::fs::write(
        &drv,
        "#undef main\n#include <stdio.h>\nint vsp_main(int, char **);\nint main(int argc, char **argv) {\n    \
         argv[0] = \"\";\n    printf(\"%u\\n\", (unsigned)(unsigned short)vsp_main(argc, argv));\n    return 0;\n}\n",
    )
    .expect("write");
    let st = std::process::Command::new("clang")
        .args(["-O1", "-w", "-fwrapv", "-Dmain=vsp_main"])
        .arg(&prog)
        .arg(&drv)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("host clang");
    // No host C library headers is not a vsp-cc problem, but the test cannot compare: fail, never skip.
    assert!(
        st.success(),
        "the host build of the reference program failed (libc6-dev missing?)"
    );
    exe
}

/// Compiles `src` (with the prelude) for CAHPv3 and checks it against the host for each argument set.
#[allow(dead_code)]
pub fn differential(src: &str, arg_sets: &[&[&str]]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = host_build(src, dir.path());
    let full = format!("{PRELUDE}\n{src}");
    // The 1 KiB machine: these programs test many features at once.
    let mem = MemConfig::kib1();
    let (asm, image) = build(&full, mem);
    for args in arg_sets {
        let out = std::process::Command::new(&exe)
            .args(*args)
            .output()
            .expect("run host program");
        let want: u16 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("host result");
        let mut sim =
            Simulator::from_image(&image, args, mem).unwrap_or_else(|e| panic!("load: {e}"));
        let stats = sim
            .run(5_000_000)
            .unwrap_or_else(|e| panic!("run: {e}\n{asm}"));
        assert!(stats.halted, "did not halt\n{asm}");
        assert_eq!(
            sim.result(),
            want,
            "args {args:?}: CAHP {} vs host {want}\n{asm}",
            sim.result()
        );
    }
}

/// clang's optimisation levels, all of which must compile every program right.
#[allow(dead_code)]
pub const LEVELS: [&str; 6] = ["-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"];

/// A machine large enough for any level's code of the differential programs (-O0 and -O3 code is
/// several times the -Oz size); branches beyond reach take their long forms.
#[allow(dead_code)]
pub const LARGE: MemConfig = MemConfig {
    rom_size: 16384,
    ram_size: 4096,
};

/// Compiles `src` (with the prelude) at each of `levels` and checks every argument set against the
/// host build of the same source. Both sides use `-fwrapv`: signed overflow wraps on both, so the
/// 16-bit target and the 32-bit host agree wherever the source casts back to its fixed-width types.
/// Every level is tried and all mismatches are reported together; any failure fails the test.
#[allow(dead_code)]
pub fn differential_levels(src: &str, arg_sets: &[&[&str]], levels: &[&str], mem: MemConfig) {
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = host_build(src, dir.path());
    let mut want = Vec::new();
    for args in arg_sets {
        let out = std::process::Command::new(&exe)
            .args(*args)
            .output()
            .expect("run host program");
        assert!(out.status.success(), "host program failed for {args:?}");
        let w: u16 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("host result");
        want.push(w);
    }
    let full = format!("{PRELUDE}\n{src}");
    let mut failures = Vec::new();
    let mut runs = 0;
    for level in levels {
        let opts = CcOptions {
            opt: (*level).to_string(),
            clang_args: vec!["-fwrapv".into()],
            ..CcOptions::default()
        };
        let asm = match compile_c_source(&full, "test.c", &opts) {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{level}: compile: {e}"));
                continue;
            }
        };
        let image = match vsp_cc::assemble_image(&asm, "test.s", mem) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{level}: assemble: {e}"));
                continue;
            }
        };
        for (args, w) in arg_sets.iter().zip(&want) {
            let mut sim = match Simulator::from_image(&image, args, mem) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{level} {args:?}: load: {e}"));
                    continue;
                }
            };
            match sim.run(20_000_000) {
                Ok(st) if st.halted => {
                    runs += 1;
                    if sim.result() != *w {
                        failures.push(format!(
                            "{level} {args:?}: CAHP {} vs host {w} (ROM {} B)",
                            sim.result(),
                            image.rom.len()
                        ));
                    }
                }
                Ok(_) => failures.push(format!("{level} {args:?}: did not halt")),
                Err(e) => failures.push(format!("{level} {args:?}: run: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        runs,
        levels.len() * arg_sets.len(),
        "not every run was made"
    );
}
