//! The driver: C → (clang) → LLVM IR text → machine IR → assembly text, plus the runtime written in C
//! for helpers the vsp-cahp runtime does not provide.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{CcError, Result};
use crate::ir::{parse_module, Module};
use crate::mir::{Callee, MFunc, MInst};

/// Whether vsp-cahp's runtime defines `symbol`: a helper it links on demand
/// (`vsp_cahp::runtime::HELPERS`: the 16-bit multiply and division and all the 64-bit arithmetic,
/// hand-written in assembly to fit the 512-byte ROM).
pub fn cahp_helper(symbol: &str) -> bool {
    vsp_cahp::runtime::HELPERS
        .iter()
        .any(|m| m.defines.contains(&symbol))
}

/// This crate's C runtime (32-bit arithmetic, 16-bit bit counts, memcpy/memset/memmove), compiled
/// on demand (always at `-Oz`, whatever the program's own flags).
pub const RUNTIME_C: &str = include_str!("runtime.c");

/// Functions [`RUNTIME_C`] defines.
pub const RUNTIME_FUNCS: [&str; 15] = [
    "__mulsi3",
    "__udivmodsi4",
    "__udivsi3",
    "__umodsi3",
    "__divsi3",
    "__modsi3",
    "__ashlsi3",
    "__lshrsi3",
    "__ashrsi3",
    "__popcounthi2",
    "__clzhi2",
    "__ctzhi2",
    "memcpy",
    "memmove",
    "memset",
];

/// Options of the C compiler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CcOptions {
    /// The clang binary.
    pub clang: PathBuf,
    /// Optimisation flag passed to clang (`-Oz` by default: code size is what the 512-byte ROM needs).
    pub opt: String,
    /// Extra clang arguments (`-DNAME=1`, `-I dir`, …).
    pub clang_args: Vec<String>,
}

impl Default for CcOptions {
    fn default() -> Self {
        CcOptions {
            clang: PathBuf::from("clang"),
            opt: "-Oz".into(),
            clang_args: Vec::new(),
        }
    }
}

/// Whether the configured clang can be run.
pub fn clang_available(opts: &CcOptions) -> bool {
    Command::new(&opts.clang)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs clang on C `source` (named `name` in diagnostics) and returns the LLVM IR text.
pub fn c_to_ir(source: &str, name: &str, opts: &CcOptions, extra: &[&str]) -> Result<String> {
    let mut cmd = Command::new(&opts.clang);
    // msp430 gives exactly llvm-cahp's C type sizes: 16-bit int and pointers, 32-bit long.
    cmd.args([
        "--target=msp430",
        "-S",
        "-emit-llvm",
        "-fno-discard-value-names",
    ])
    .arg(&opts.opt)
    .args(["-D__cahp__=1", "-D__cahpv3__=1", "-D__VSP__=1"])
    .args(&opts.clang_args)
    .args(extra)
    .args(["-x", "c", "-o", "-", "-"])
    // The source reaches clang's stdin from an unlinked temporary file, not a pipe: a clang that
    // dies before reading it (killed, or a wrapper that exits early) must not take this process
    // with it through SIGPIPE (the `vsp` binary restores SIGPIPE's default for its own stdout).
    .stdin(source_file(source, name)?)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .map_err(|e| CcError::ClangMissing(format!("{}: {e}", opts.clang.display())))?;
    let out = child.wait_with_output().map_err(|e| CcError::Io {
        path: name.to_string(),
        source: e,
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).replace("<stdin>", name);
        return Err(CcError::ClangFailed {
            path: name.to_string(),
            stderr: clang_failure(&stderr, out.status),
        });
    }
    String::from_utf8(out.stdout).map_err(|_| CcError::ClangFailed {
        path: name.to_string(),
        stderr: "clang wrote non-UTF-8 IR".into(),
    })
}

/// `source` in an anonymous temporary file (already unlinked) positioned at its start, for a child's
/// stdin.
fn source_file(source: &str, name: &str) -> Result<Stdio> {
    use std::io::{Seek as _, Write as _};
    let io = |source| CcError::Io {
        path: name.to_string(),
        source,
    };
    let mut file = tempfile::tempfile().map_err(io)?;
    file.write_all(source.as_bytes()).map_err(io)?;
    file.rewind().map_err(io)?;
    Ok(Stdio::from(file))
}

/// What clang's failure comes to, on one line: its first error (`file:line:col: error: …`) and how
/// many more it reported, or the signal that killed it.
fn clang_failure(stderr: &str, status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(sig) = status.signal() {
        // Linux's numbers (the only platform vsp builds on).
        let name = match sig {
            9 => " (SIGKILL: out of memory, or killed)",
            11 => " (SIGSEGV: clang crashed)",
            6 => " (SIGABRT: clang crashed)",
            15 => " (SIGTERM)",
            2 => " (SIGINT)",
            _ => "",
        };
        return format!("clang was killed by signal {sig}{name}");
    }
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("error: ") && !l.starts_with(' '))
        .collect();
    let first = match errors.first() {
        Some(l) => l.trim(),
        None => stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or(""),
    };
    if first.is_empty() {
        return format!("clang exited with {status} and no message");
    }
    let mut line = vsp_codec::text::cut(first, 300);
    if errors.len() > 1 {
        line.push_str(&format!(" (and {} more errors)", errors.len() - 1));
    }
    line
}

/// Compiles a C file to CAHPv3 assembly text (to be assembled with vsp-cahp's runtime).
pub fn compile_c(path: &Path, opts: &CcOptions) -> Result<String> {
    compile_c_files(&[path.to_path_buf()], opts)
}

/// Assembles compiled output with vsp-cahp's runtime (crt0 and the helpers it references) into a
/// program image for a machine with the given ROM/RAM sizes.
///
/// A program whose code (with the runtime) is larger than the ROM is reported as such
/// ([`CcError::DoesNotFit`]; [`CcError::with_opt_hint`] adds what the build options suggest), never as the branch out of range that the assembler meets first. A
/// branch, jump or call of the compiled code whose target is out of reach in a program that does
/// fit is rewritten in its long form until everything is in range: a conditional branch becomes
/// `b<not cond>` over a `j`, a `j` beyond ±1 KiB becomes `li r, target; jr r` through a register
/// that the compiler noted as free at the target (`# r`), and a call becomes `li t0, f; jalr t0`.
pub fn assemble_image(asm: &str, name: &str, mem: vsp_cahp::MemConfig) -> Result<vsp_cahp::Image> {
    let opts = vsp_cahp::AsmOptions {
        rom_size: mem.rom_size,
        ram_size: mem.ram_size,
        runtime: true,
        ..Default::default()
    };
    let mut text = asm.to_string();
    // Each round rewrites one line into its long form (a branch may take two rounds: the jump of
    // its first long form may be out of reach too); the bound is a guard, never reached.
    for round in 0..=2 * asm.lines().count() {
        let err = match vsp_cahp::assemble_sources(&[vsp_cahp::Source { name, text: &text }], &opts)
        {
            Ok(image) => return Ok(image),
            Err(e) => e,
        };
        let branch = matches!(err.kind, vsp_cahp::AsmErrorKind::BranchOutOfRange { .. });
        let rom_full = matches!(
            err.kind,
            vsp_cahp::AsmErrorKind::TooLarge { what: "ROM", .. }
        );
        if branch || rom_full {
            if let Some(used) = code_size(&text, name, mem) {
                if used > mem.rom_size {
                    return Err(CcError::DoesNotFit {
                        used,
                        limit: mem.rom_size,
                        try_oz: false,
                    });
                }
            }
        }
        if branch && err.file == name {
            if let Some(t) = long_form(&text, err.line as usize, round) {
                text = t;
                continue;
            }
        }
        return Err(CcError::Assemble(err.to_string()));
    }
    Err(CcError::Assemble(format!(
        "{name}: branches did not come into range"
    )))
}

/// Branch and jump mnemonics whose last operand is a code address.
const BRANCHES: [&str; 10] = [
    "beq", "bne", "blt", "bltu", "ble", "bleu", "j", "js", "call", "jsal",
];

/// Splits an instruction line into its mnemonic, operands and comment (`# t0`: a register free
/// at the target of a jump).
fn split_inst(line: &str) -> Option<(&str, Vec<&str>, Option<&str>)> {
    let (code, comment) = match line.split_once('#') {
        Some((c, k)) => (c, Some(k.trim())),
        None => (line, None),
    };
    let t = code.trim();
    let (m, rest) = t.split_once(char::is_whitespace)?;
    let ops: Vec<&str> = rest.split(',').map(str::trim).collect();
    Some((m, ops, comment))
}

/// The ROM bytes of the program with the runtime, whatever the branch distances: every branch and
/// call target is replaced by the branch's own address (instruction sizes do not depend on
/// targets) and the runtime symbols they name are kept referenced from data so that the same
/// runtime helpers are linked. `None` when even that does not assemble.
fn code_size(text: &str, name: &str, mem: vsp_cahp::MemConfig) -> Option<usize> {
    let mut out = String::with_capacity(text.len());
    let mut targets: BTreeSet<String> = BTreeSet::new();
    for line in text.lines() {
        match split_inst(line) {
            Some((m, ops, _)) if BRANCHES.contains(&m) && !ops.is_empty() => {
                let k = ops.len() - 1;
                let target = ops[k];
                if !target.starts_with('.') || target.starts_with(".L") {
                    targets.insert(target.to_string());
                }
                let mut ops = ops.clone();
                ops[k] = ".";
                let _ = writeln!(out, "    {m} {}", ops.join(", "));
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    // Only the runtime's symbols (those the text does not define) need a reference: each one
    // moves the static data up by two bytes, which an absolute `sym+imm(reg)` address must reach.
    let defined: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_suffix(':'))
        .collect();
    out.push_str("\n    .data\n");
    for t in targets.iter().filter(|t| !defined.contains(t.as_str())) {
        let _ = writeln!(out, "    .half {t}");
    }
    let opts = vsp_cahp::AsmOptions {
        rom_size: 65536,
        ram_size: 65536.max(mem.ram_size),
        runtime: true,
        ..Default::default()
    };
    vsp_cahp::assemble_sources(&[vsp_cahp::Source { name, text: &out }], &opts)
        .ok()
        .map(|img| img.rom.len())
}

/// `text` with the branch, jump or call at 1-based `line` in its long form, if it has one
/// (`k` makes the labels it adds unique).
fn long_form(text: &str, line: usize, k: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let l = *lines.get(line.checked_sub(1)?)?;
    let (m, ops, free) = split_inst(l)?;
    let long = match (m, ops.as_slice()) {
        ("beq" | "bne" | "blt" | "bltu" | "ble" | "bleu", [a, b, t]) => {
            // The negated condition skips the jump: `!(a < b)` is `b <= a`, and so on.
            let (n, x, y) = match m {
                "beq" => ("bne", a, b),
                "bne" => ("beq", a, b),
                "blt" => ("ble", b, a),
                "ble" => ("blt", b, a),
                "bltu" => ("bleu", b, a),
                _ => ("bltu", b, a),
            };
            // The jump keeps the free-register note: it may need its own long form.
            let note = free.map(|r| format!(" # {r}")).unwrap_or_default();
            format!("    {n} {x}, {y}, .Lvsp_far{k}\n    j {t}{note}\n.Lvsp_far{k}:")
        }
        // Beyond the ±1 KiB of `js`: through a register that is free at the target.
        ("j" | "js", [t]) => {
            let r = free.filter(|r| !r.is_empty())?;
            format!("    li {r}, {t}\n    jr {r}")
        }
        // t0 is free at a call: caller-saved, and not an argument register.
        ("call" | "jsal", [t]) => format!("    li t0, {t}\n    jalr t0"),
        _ => return None,
    };
    let mut out = String::with_capacity(text.len() + 16);
    for (k, l) in lines.iter().enumerate() {
        if k + 1 == line {
            out.push_str(&long);
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    Some(out)
}

/// Compiles a C file all the way to a program image for the standard 512 B ROM / 512 B RAM machine;
/// returns the assembly text too (what `vsp cc prog.c -o prog.img` does).
pub fn compile_c_to_image(path: &Path, opts: &CcOptions) -> Result<(String, vsp_cahp::Image)> {
    compile_c_files_to_image(&[path.to_path_buf()], opts, vsp_cahp::MemConfig::default())
}

/// Compiles several C files (one program) to a program image for a machine with the given ROM/RAM
/// sizes; returns the assembly text too (what `vsp cc a.c b.c -o prog.img` does).
pub fn compile_c_files_to_image(
    paths: &[PathBuf],
    opts: &CcOptions,
    mem: vsp_cahp::MemConfig,
) -> Result<(String, vsp_cahp::Image)> {
    let Some(first) = paths.first() else {
        return Err(CcError::Program("no C files to compile".into()));
    };
    let asm = compile_c_files(paths, opts)?;
    let image = assemble_image(&asm, &first.display().to_string(), mem)
        .map_err(|e| e.with_opt_hint(opts))?;
    Ok((asm, image))
}

/// Compiles C source text to CAHPv3 assembly text.
pub fn compile_c_source(source: &str, name: &str, opts: &CcOptions) -> Result<String> {
    let ir = c_to_ir(source, name, opts, &[])?;
    compile_ir_with(&ir, opts)
}

/// Compiles LLVM IR text to assembly; the C runtime (if needed) is built with `opts.clang`.
pub fn compile_ir_with(ir: &str, opts: &CcOptions) -> Result<String> {
    let m = parse_module(ir)?;
    compile_modules(vec![("<ir>".to_string(), m)], opts)
}

/// Compiles several C files, each its own translation unit (C `static` names stay private to
/// their file), into one assembly text with the runtime it needs.
pub fn compile_c_files(paths: &[PathBuf], opts: &CcOptions) -> Result<String> {
    let mut mods = Vec::with_capacity(paths.len());
    for path in paths {
        let src = std::fs::read_to_string(path).map_err(|e| CcError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        // clang reads the source from stdin: `#include "x.h"` must still find files next to it.
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = dir.display().to_string();
        let name = path.display().to_string();
        let ir = c_to_ir(&src, &name, opts, &["-iquote", &dir])?;
        mods.push((name, parse_module(&ir)?));
    }
    compile_modules(mods, opts)
}

/// Links modules (named for messages): local symbols are made unique per module, `main` must be
/// defined once, and the runtime functions referenced are compiled and appended.
pub fn compile_modules(mut mods: Vec<(String, Module)>, opts: &CcOptions) -> Result<String> {
    if mods.len() > 1 {
        for (k, (_, m)) in mods.iter_mut().enumerate() {
            let mut map = HashMap::new();
            for f in m.functions.iter().filter(|f| f.local) {
                map.insert(f.name.clone(), format!("{}.m{k}", f.name));
            }
            for g in m.globals.iter().filter(|g| g.local) {
                map.insert(g.name.clone(), format!("{}.m{k}", g.name));
            }
            m.rename_symbols(&map);
        }
    }
    // Every symbol defined by some module, and who defines it.
    let mut defined: BTreeMap<String, &str> = BTreeMap::new();
    for (name, m) in &mods {
        let fs = m
            .functions
            .iter()
            .filter(|f| !f.blocks.is_empty())
            .map(|f| &f.name);
        let gs = m
            .globals
            .iter()
            .filter(|g| g.init.is_some())
            .map(|g| &g.name);
        for s in fs.chain(gs) {
            if let Some(first) = defined.insert(s.clone(), name) {
                return Err(CcError::Program(format!(
                    "'{s}' is defined in both {first} and {name}"
                )));
            }
        }
    }
    let Some(main_mod) = mods.iter().position(|(_, m)| {
        m.functions
            .iter()
            .any(|f| f.name == "main" && !f.blocks.is_empty())
    }) else {
        return Err(CcError::Program("the program has no main function".into()));
    };
    let calls_main = mods.iter().any(|(_, m)| module_calls_main(m));
    let all: BTreeSet<String> = defined.keys().cloned().collect();
    let link = Link {
        defined: &all,
        calls_main,
        data_end: static_data_end(mods.iter().map(|(_, m)| m)),
    };
    // The module with main first (and main first in it): crt0's call then always reaches it.
    let mut order: Vec<usize> = vec![main_mod];
    order.extend((0..mods.len()).filter(|k| *k != main_mod));
    let mut asm = String::new();
    let mut called = BTreeSet::new();
    for k in order {
        let (text, c) = compile_module_in(&mods[k].1, &BTreeSet::new(), &link)?;
        asm.push_str(&text);
        called.extend(c);
    }
    let mut needed: BTreeSet<String> = called.into_iter().filter(|c| !all.contains(c)).collect();
    if needed.iter().any(|n| RUNTIME_FUNCS.contains(&n.as_str())) {
        // The runtime does not depend on the program's flags: always -Oz, no user -D/-I.
        let rt_opts = CcOptions {
            clang: opts.clang.clone(),
            opt: "-Oz".into(),
            clang_args: Vec::new(),
        };
        let rt_ir = c_to_ir(
            RUNTIME_C,
            "<vsp-cc runtime>",
            &rt_opts,
            &["-ffreestanding", "-fno-builtin"],
        )?;
        let rt = parse_module(&rt_ir)?;
        let rt_defined: BTreeSet<String> = rt
            .functions
            .iter()
            .filter(|f| !f.blocks.is_empty())
            .map(|f| f.name.clone())
            .collect();
        let rt_link = Link {
            defined: &rt_defined,
            calls_main: false,
            data_end: link.data_end,
        };
        // Pull runtime functions until nothing new is referenced (they call each other).
        let mut have: BTreeSet<String> = BTreeSet::new();
        loop {
            let want: BTreeSet<String> = needed
                .iter()
                .filter(|n| RUNTIME_FUNCS.contains(&n.as_str()) && !have.contains(*n))
                .cloned()
                .collect();
            if want.is_empty() {
                break;
            }
            let (text, more) = compile_module_in(&rt, &want, &rt_link)?;
            asm.push_str(&text);
            have.extend(want);
            needed.extend(more);
        }
    }
    // A program that links the 64-bit division module multiplies through its loop
    // (`__divdi3_mul`) instead of linking `__muldi3`'s own module as well: 159 bytes less for
    // the price of a multiply that always takes the 64 rounds (docs/isa.md).
    if needed.contains("__muldi3") && DIV64_HELPERS.iter().any(|d| needed.contains(*d)) {
        asm = asm
            .lines()
            .map(|l| {
                if l.trim() == "call __muldi3" {
                    "    call __divdi3_mul"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        asm.push('\n');
    }
    Ok(asm)
}

/// The entry points of vsp-cahp's 64-bit division module (`divdi3.s`).
const DIV64_HELPERS: [&str; 4] = ["__udivdi3", "__umoddi3", "__divdi3", "__moddi3"];

/// Compiles LLVM IR text to assembly text (32-bit helpers need clang; see [`compile_ir_with`]).
pub fn compile_ir(ir: &str) -> Result<String> {
    compile_ir_with(ir, &CcOptions::default())
}

/// What the other modules of a link provide.
struct Link<'a> {
    /// Symbols defined by any module of the program.
    defined: &'a BTreeSet<String>,
    /// Some module calls `main`.
    calls_main: bool,
    /// A bound on every static data address of the program (see [`static_data_end`]).
    data_end: u64,
}

/// A bound on the RAM addresses of the static data of `mods`: the sections start at 2, each
/// 2-aligned, every object at most one byte of padding, plus room for the runtime's own data.
/// Instruction selection reaches a global by `sym+imm(reg)` (a 10-bit immediate) only while this
/// bound says it can; beyond, the address is built with `li` (1 KiB RAM, large static data).
fn static_data_end<'m>(mods: impl IntoIterator<Item = &'m Module>) -> u64 {
    const RUNTIME_DATA: u64 = 64;
    let objects: u64 = mods
        .into_iter()
        .flat_map(|m| {
            m.globals
                .iter()
                .filter(|g| g.init.is_some())
                .map(move |g| (m, g))
        })
        .map(|(m, g)| {
            m.size_of(&g.ty)
                .unwrap_or(u64::from(u16::MAX))
                .saturating_add(1)
        })
        .fold(0u64, u64::saturating_add);
    objects.saturating_add(2 + 6 + RUNTIME_DATA)
}

fn module_calls_main(m: &Module) -> bool {
    m.functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.insts)
        .any(|i| {
            matches!(&i.op, crate::ir::Op::Call { callee, .. }
            if callee.val == crate::ir::Value::Const(crate::ir::Const::Addr("main".into(), 0)))
        })
}

/// Compiles the functions of `m` (all of them, or only those in `only`) and its globals.
/// Returns the text and the functions it calls.
pub fn compile_module(m: &Module, only: &BTreeSet<String>) -> Result<(String, BTreeSet<String>)> {
    if only.is_empty()
        && !m
            .functions
            .iter()
            .any(|f| f.name == "main" && !f.blocks.is_empty())
    {
        return Err(CcError::Program("the program has no main function".into()));
    }
    let defined: BTreeSet<String> = m
        .functions
        .iter()
        .filter(|f| !f.blocks.is_empty())
        .map(|f| f.name.clone())
        .chain(
            m.globals
                .iter()
                .filter(|g| g.init.is_some())
                .map(|g| g.name.clone()),
        )
        .collect();
    let link = Link {
        defined: &defined,
        calls_main: module_calls_main(m),
        data_end: static_data_end([m]),
    };
    compile_module_in(m, only, &link)
}

fn compile_module_in(
    m: &Module,
    only: &BTreeSet<String>,
    link: &Link,
) -> Result<(String, BTreeSet<String>)> {
    let mut out = String::new();
    let mut externals = BTreeSet::new();
    let mut refs: BTreeMap<String, usize> = BTreeMap::new();
    // `main` first: crt0 calls it from address 0.
    let mut funcs: Vec<&crate::ir::Function> = m
        .functions
        .iter()
        .filter(|f| !f.blocks.is_empty())
        .collect();
    funcs.sort_by_key(|f| f.name != "main");
    for func in funcs {
        if !only.is_empty() && !only.contains(&func.name) {
            continue;
        }
        let (mut mf, called) = crate::isel_fn::select_function(m, func, link.data_end)?;
        // `main` may skip saving callee-saved registers because crt0 halts after it, unless the
        // program calls `main` itself.
        if link.calls_main {
            mf.no_callee_saves = false;
        }
        externals.extend(called);
        collect_syms(&mf, func.line, &mut refs);
        crate::opt::dce(&mut mf);
        let mut mf = allocate_with_hoisting(mf)?;
        crate::emit::layout(&mut mf);
        let saved = crate::regalloc::used_callee_saved(&mf);
        crate::emit::emit_function(&mf, &saved, &mut out)?;
    }
    for (s, line) in &refs {
        if !link.defined.contains(s.as_str())
            && !cahp_helper(s)
            && !RUNTIME_FUNCS.contains(&s.as_str())
        {
            return Err(CcError::Program(format!(
                "undefined symbol '{s}' (used by the function at IR line {line}); vsp cc links no C library \
                 beyond memcpy/memset/memmove and the arithmetic helpers"
            )));
        }
    }
    if only.is_empty() {
        for g in &m.globals {
            crate::data::emit_global(m, g, &mut out)?;
        }
    }
    let _ = writeln!(out);
    Ok((out, externals))
}

/// Register allocation, hoisting as many loop constants into registers as fit without new spills
/// or (outside `main`) new callee-saved registers to save.
fn allocate_with_hoisting(mf: MFunc) -> Result<MFunc> {
    let spills = |f: &MFunc, base: usize| f.frame.len() - base;
    let base_objs = mf.frame.len();
    let mut plain = mf.clone();
    crate::regalloc::allocate(&mut plain)?;
    let plain_spills = spills(&plain, base_objs);
    let plain_saved = crate::regalloc::used_callee_saved(&plain).len();
    let mut cands = crate::opt::loop_constants(&mf);
    cands.truncate(8);
    for k in (1..=cands.len()).rev() {
        let mut t = mf.clone();
        crate::opt::hoist_constants(&mut t, &cands[..k]);
        crate::regalloc::allocate(&mut t)?;
        let saved_ok =
            t.no_callee_saves || crate::regalloc::used_callee_saved(&t).len() <= plain_saved;
        if spills(&t, base_objs) <= plain_spills && saved_ok {
            return Ok(t);
        }
    }
    Ok(plain)
}

fn collect_syms(f: &MFunc, line: usize, refs: &mut BTreeMap<String, usize>) {
    for b in &f.blocks {
        for i in &b.insts {
            let s = match i {
                MInst::Li { v, .. } | MInst::AluI { imm: v, .. } => v.sym.clone(),
                MInst::Load { off, .. } | MInst::Store { off, .. } => off.sym.clone(),
                MInst::Call {
                    callee: Callee::Sym(s),
                    ..
                } => Some(s.clone()),
                _ => None,
            };
            if let Some(s) = s {
                refs.entry(s).or_insert(line);
            }
        }
    }
}
