//! Random programs: Csmith generates well-defined C for a 16-bit target, vsp-cc compiles each at
//! -O0, -O1, -O2, -O3, -Os and -Oz, the vsp-cahp ISA simulator runs it on the 1 KiB machine, and
//! the result is compared with an exact oracle: the same program compiled by clang for msp430 at
//! -O0 (16-bit `int`, as on CAHPv3), its data layout's pointer size and triple rewritten to the
//! host's, run by `lli -force-interpreter` (docs/fuzzing.md, "Random C programs").
//!
//! `tests/csmith/csmith.h` replaces Csmith's runtime header: no C library, `transparent_crc` folds
//! every global into 16 bits and `main` returns that fold. A program or level that does not fit the
//! 1 KiB ROM/RAM, overflows its stack or runs too long is skipped and counted; a compile error, a
//! simulator error or a wrong result fails the test.
//!
//! CI runs a fixed seed list (`SEEDS`); a longer campaign by hand:
//! `VSP_CSMITH_SEEDS=1000..1500 cargo test --release -p vsp-cc --test csmith -- --ignored --nocapture`
//! (`VSP_CSMITH_JOBS` sets the worker threads, `VSP_CSMITH_KEEP=dir` keeps the failing programs).

mod common;
#[path = "../../circuit/tests/tool/mod.rs"]
mod tool;
use common::{differential_levels, require_clang, LARGE, LEVELS};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use vsp_cahp::{MemConfig, Reg, Simulator};
use vsp_cc::{compile_c_source, CcError, CcOptions};

/// The CI campaign: every seed runs at every level (see the test's summary for what ran).
const SEEDS: std::ops::Range<u64> = 1..41;

/// Instructions a run may take on the simulator before it counts as too long.
const MAX_STEPS: u64 = 2_000_000;

/// Wall-clock limit of one oracle run (the IR interpreter is slow; a looping program is skipped).
const ORACLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Csmith's options common to every program: no floats, no unions, no `argc`, one-dimensional
/// arrays. The 16-bit sizes come from `platform.info` in csmith's working directory.
const CSMITH_ARGS: &[&str] = &[
    "--no-float",
    "--no-unions",
    "--no-argc",
    "--max-array-dim",
    "1",
    "--max-pointer-depth",
    "2",
    "--quiet",
    "--concise",
];

/// Three sizes of program, chosen by `seed % 3`: small ones that often fit 1 KiB even at -O0,
/// medium ones with packed structs (`#pragma pack(1)`: unaligned fields), and larger ones with
/// `long long`.
const PROFILES: [&[&str]; 3] = [
    &[
        "--no-packed-struct",
        "--no-longlong",
        "--max-funcs",
        "1",
        "--max-block-depth",
        "2",
        "--max-block-size",
        "2",
        "--max-expr-complexity",
        "2",
        "--max-array-len-per-dim",
        "2",
        "--max-struct-fields",
        "2",
    ],
    &[
        "--no-longlong",
        "--max-funcs",
        "2",
        "--max-block-depth",
        "2",
        "--max-block-size",
        "3",
        "--max-expr-complexity",
        "4",
        "--max-array-len-per-dim",
        "3",
        "--max-struct-fields",
        "3",
    ],
    &[
        "--no-packed-struct",
        "--max-funcs",
        "3",
        "--max-block-depth",
        "3",
        "--max-block-size",
        "3",
        "--max-expr-complexity",
        "5",
        "--max-array-len-per-dim",
        "4",
        "--max-struct-fields",
        "4",
    ],
];

/// The `main` appended to every program: it runs Csmith's main (renamed by `csmith.h`) and returns
/// the 16-bit fold of the globals; the oracle prints it.
const MAIN: &str = "
#undef main
#undef printf
#ifdef VSP_ORACLE
int printf(const char *, ...);
int main(void) {
    /* lli's printf reads an i16 vararg as a wider integer: print the digits as a string. */
    char buf[8];
    int i = 7;
    unsigned v;
    csmith_main();
    v = vsp_result;
    buf[i] = 0;
    do { buf[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    printf(\"%s\\n\", buf + i);
    return 0;
}
#else
int main(void) { csmith_main(); return vsp_result; }
#endif
";

fn header_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/csmith")
}

/// Csmith's headers (Debian's `libcsmith-dev`), for `safe_math.h`.
const CSMITH_INCLUDE: &str = "/usr/include/csmith";

fn require_tools() {
    require_clang();
    // Csmith writes the host's platform.info into its working directory when there is none.
    let dir = tempfile::tempdir().expect("temp dir");
    for (tool, arg, pkg) in [
        ("csmith", "--version", "csmith"),
        ("lli", "--version", "llvm"),
    ] {
        let ok = Command::new(tool)
            .current_dir(dir.path())
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "{tool} is not installed (apt-get install -y {pkg}); this test needs it"
        );
    }
    assert!(
        Path::new(CSMITH_INCLUDE).join("safe_math.h").exists(),
        "{CSMITH_INCLUDE}/safe_math.h is missing (apt-get install -y libcsmith-dev); this test needs it"
    );
}

/// The program Csmith generates for `seed`, with the test's `main`.
fn generate(seed: u64) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("platform.info"),
        "integer size = 2\npointer size = 2\n",
    )
    .expect("write platform.info");
    tool::run(
        Command::new("csmith")
            .current_dir(dir.path())
            .args(["--seed", &seed.to_string()])
            .args(CSMITH_ARGS)
            .args(PROFILES[(seed % 3) as usize])
            .args(["-o", "prog.c"]),
    );
    let src = std::fs::read_to_string(dir.path().join("prog.c")).expect("read csmith output");
    format!("{src}\n{MAIN}")
}

fn include_args() -> Vec<String> {
    vec![
        "-w".into(),
        "-I".into(),
        header_dir().display().to_string(),
        "-I".into(),
        CSMITH_INCLUDE.into(),
    ]
}

/// Runs `cmd`, killing it after `limit`; `None` when it timed out.
fn output_within(mut cmd: Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The exact oracle: clang's msp430 IR at `opt`, pointers widened to the host's, interpreted.
/// `Err` when the interpreter ran out of time or crashed (the seed is skipped and listed).
fn oracle(src: &str, opt: &str, dir: &Path) -> Result<u16, &'static str> {
    let c = dir.join("oracle.c");
    let ll = dir.join("oracle.ll");
    std::fs::write(&c, src).expect("write");
    tool::run(
        Command::new("clang")
            .args(["--target=msp430", "-S", "-emit-llvm", opt, "-DVSP_ORACLE"])
            .args(include_args())
            .arg(&c)
            .arg("-o")
            .arg(&ll),
    );
    let ir = std::fs::read_to_string(&ll).expect("read IR");
    let host: String = ir
        .lines()
        .map(|l| {
            if l.starts_with("target datalayout") {
                // Struct layouts and integer alignments stay msp430's; only pointers widen.
                l.replace("p:16:16", "p:64:64")
            } else if l.starts_with("target triple") {
                "target triple = \"x86_64-pc-linux-gnu\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let host_ll = dir.join("host.ll");
    std::fs::write(&host_ll, host).expect("write");
    let mut cmd = Command::new("lli");
    cmd.arg("-force-interpreter").arg(&host_ll);
    let out = output_within(cmd, ORACLE_TIMEOUT).ok_or("timeout")?;
    if !out.status.success() {
        return Err("crash");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.trim().parse().expect("oracle output"))
}

/// What one program at one level did.
enum Outcome {
    /// Ran and matched the oracle.
    Pass,
    /// Skipped, with the reason (counted).
    Skip(&'static str),
    /// A finding.
    Fail(String),
}

/// Compiles `src` at `level` and runs it on the 1 KiB machine.
fn run_level(src: &str, level: &str, want: u16) -> Outcome {
    let mem = MemConfig::kib1();
    let opts = CcOptions {
        opt: level.to_string(),
        clang_args: include_args(),
        ..CcOptions::default()
    };
    let asm = match compile_c_source(src, "csmith.c", &opts) {
        Ok(a) => a,
        Err(e) => return Outcome::Fail(format!("compile: {e}")),
    };
    let image = match vsp_cc::assemble_image(&asm, "csmith.s", mem) {
        Ok(i) => i,
        Err(CcError::DoesNotFit { .. }) => return Outcome::Skip("ROM"),
        Err(CcError::Assemble(m)) if m.contains("RAM overflow") => return Outcome::Skip("RAM"),
        Err(e) => return Outcome::Fail(format!("assemble: {e}")),
    };
    let mut sim = match Simulator::from_image(&image, &[], mem) {
        Ok(s) => s,
        // No room left for the argument block: as good as a RAM overflow.
        Err(vsp_cahp::SimError::Load(_)) => return Outcome::Skip("RAM"),
        Err(e) => return Outcome::Fail(format!("load: {e}")),
    };
    // The stack must stay above the static data: below it, it would overwrite globals.
    let data_end = image.ram.len();
    let mut steps = 0;
    while !sim.halted() {
        if steps == MAX_STEPS {
            return Outcome::Skip("steps");
        }
        if let Err(e) = sim.step() {
            return Outcome::Fail(format!("run: {e} after {steps} instructions"));
        }
        steps += 1;
        let sp = usize::from(sim.reg(Reg::SP));
        if steps > 1 && sp < data_end {
            return Outcome::Skip("stack");
        }
    }
    if std::env::var_os("VSP_CSMITH_VERBOSE").is_some() {
        eprintln!(
            "{level}: result {} ROM {} B RAM {data_end} B {steps} instructions",
            sim.result(),
            image.rom.len()
        );
    }
    if sim.result() == want {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "CAHP {} vs oracle {want} (ROM {} B, {steps} instructions)",
            sim.result(),
            image.rom.len()
        ))
    }
}

/// Totals of a campaign.
#[derive(Default)]
struct Tally {
    programs: usize,
    /// Seeds the oracle could not run: timed out, or lli crashed.
    oracle_skips: Vec<(u64, &'static str)>,
    passed: BTreeMap<String, usize>,
    skipped: BTreeMap<(String, &'static str), usize>,
    failures: Vec<String>,
}

/// Runs one seed at every level.
fn one_seed(seed: u64, tally: &Mutex<Tally>) {
    let src = generate(seed);
    let dir = tempfile::tempdir().expect("temp dir");
    // The oracle at -O0 and at -O2 must agree: a program whose result depends on the level has
    // undefined behaviour, or meets a limit of the oracle (pointers are wider under lli than in
    // the msp430 layout clang sized the IR's copies for); it is skipped and listed.
    let oracles = oracle(&src, "-O0", dir.path()).and_then(|w0| {
        let w2 = oracle(&src, "-O2", dir.path())?;
        if w0 == w2 {
            Ok(w0)
        } else {
            Err("-O0/-O2 disagree")
        }
    });
    let want = match oracles {
        Ok(w) => w,
        Err(why) => {
            let mut t = tally.lock().unwrap();
            t.programs += 1;
            t.oracle_skips.push((seed, why));
            return;
        }
    };
    let outcomes: Vec<(&str, Outcome)> = LEVELS
        .iter()
        .map(|l| (*l, run_level(&src, l, want)))
        .collect();
    let mut fails = Vec::new();
    for (level, o) in &outcomes {
        if let Outcome::Fail(m) = o {
            fails.push(format!("seed {seed} {level}: {m}"));
        }
    }
    if !fails.is_empty() {
        if let Ok(keep) = std::env::var("VSP_CSMITH_KEEP") {
            let path = Path::new(&keep).join(format!("csmith_{seed}.c"));
            std::fs::create_dir_all(&keep).expect("create VSP_CSMITH_KEEP");
            std::fs::write(&path, &src).expect("keep program");
        }
    }
    let mut t = tally.lock().unwrap();
    t.programs += 1;
    for (level, o) in outcomes {
        match o {
            Outcome::Pass => *t.passed.entry(level.to_string()).or_default() += 1,
            Outcome::Skip(why) => *t.skipped.entry((level.to_string(), why)).or_default() += 1,
            Outcome::Fail(_) => {}
        }
    }
    t.failures.extend(fails);
}

/// `VSP_CSMITH_SEEDS=a..b` (or a single seed), else the CI list.
fn seeds() -> std::ops::Range<u64> {
    let Ok(s) = std::env::var("VSP_CSMITH_SEEDS") else {
        return SEEDS;
    };
    let parse = |x: &str| -> u64 {
        x.trim()
            .parse()
            .unwrap_or_else(|_| panic!("VSP_CSMITH_SEEDS: {s:?} is not `a..b` or a seed"))
    };
    match s.split_once("..") {
        Some((a, b)) => parse(a)..parse(b),
        None => parse(&s)..parse(&s) + 1,
    }
}

#[test]
#[ignore = "needs clang, csmith, lli"]
fn csmith_programs_match_the_oracle_at_every_level() {
    require_tools();
    let seeds = seeds();
    let jobs = std::env::var("VSP_CSMITH_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let start = Instant::now();
    let tally = Mutex::new(Tally::default());
    let next = AtomicUsize::new(0);
    let list: Vec<u64> = seeds.clone().collect();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&seed) = list.get(i) else { break };
                one_seed(seed, &tally);
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let ran: usize = t.passed.values().sum();
    eprintln!(
        "csmith seeds {seeds:?}: {} programs, {} runs matched, {} findings, {:.0?}; oracle skips: {:?}",
        t.programs,
        ran,
        t.failures.len(),
        start.elapsed(),
        t.oracle_skips
    );
    for level in LEVELS {
        let skips: Vec<String> = t
            .skipped
            .iter()
            .filter(|((l, _), _)| l == level)
            .map(|((_, why), n)| format!("{n} {why}"))
            .collect();
        eprintln!(
            "  {level}: {} matched, skipped: {}",
            t.passed.get(level).copied().unwrap_or(0),
            if skips.is_empty() {
                "none".to_string()
            } else {
                skips.join(", ")
            }
        );
    }
    assert!(
        t.failures.is_empty(),
        "{} mismatches or errors:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
    // A campaign where (almost) everything is skipped tests nothing: at least a third of the runs
    // must have been compared.
    let total = t.programs * LEVELS.len();
    assert!(
        3 * ran >= total,
        "only {ran} of {total} runs were compared (see the skip counts above)"
    );
}

/// What the campaign found, minimised to small programs (`tests/c/csmith/`), checked at every
/// level against the host build like the other differential tests.
macro_rules! found {
    ($name:ident, $file:literal) => {
        #[test]
        #[ignore = "needs clang"]
        fn $name() {
            require_clang();
            differential_levels(
                include_str!($file),
                &[&["1234"], &["-77"], &["0"], &["32767"]],
                &LEVELS,
                LARGE,
            );
        }
    };
}

found!(addresses_of_globals_compared, "c/csmith/addr_compare.c");
found!(packed_bit_fields, "c/csmith/packed_bitfields.c");
