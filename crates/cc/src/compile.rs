//! The driver: C → (clang) → LLVM IR text → machine IR → assembly text, plus the runtime written in C
//! for helpers the vsp-cahp runtime does not provide.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{CcError, Result};
use crate::ir::{parse_module, Module};
use crate::mir::{Callee, MFunc, MInst};

/// Helpers that vsp-cahp's runtime links on demand (`vsp_cahp::runtime::HELPERS`).
pub const CAHP_HELPERS: [&str; 5] = ["__mulhi3", "__divhi3", "__modhi3", "__udivhi3", "__umodhi3"];

/// This crate's C runtime (32-bit arithmetic, memcpy/memset/memmove), compiled on demand.
pub const RUNTIME_C: &str = include_str!("runtime.c");

/// Functions [`RUNTIME_C`] defines.
pub const RUNTIME_FUNCS: [&str; 12] = [
    "__mulsi3",
    "__udivmodsi4",
    "__udivsi3",
    "__umodsi3",
    "__divsi3",
    "__modsi3",
    "__ashlsi3",
    "__lshrsi3",
    "__ashrsi3",
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
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| CcError::ClangMissing(format!("{}: {e}", opts.clang.display())))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        stdin
            .write_all(source.as_bytes())
            .map_err(|e| CcError::Io {
                path: name.to_string(),
                source: e,
            })?;
    }
    let out = child.wait_with_output().map_err(|e| CcError::Io {
        path: name.to_string(),
        source: e,
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).replace("<stdin>", name);
        return Err(CcError::ClangFailed {
            path: name.to_string(),
            stderr,
        });
    }
    String::from_utf8(out.stdout).map_err(|_| CcError::ClangFailed {
        path: name.to_string(),
        stderr: "clang wrote non-UTF-8 IR".into(),
    })
}

/// Compiles a C file to CAHPv3 assembly text (to be assembled with vsp-cahp's runtime).
pub fn compile_c(path: &Path, opts: &CcOptions) -> Result<String> {
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
    let ir = c_to_ir(&src, &path.display().to_string(), opts, &["-iquote", &dir])?;
    compile_ir_with(&ir, opts)
}

/// Assembles compiled output with vsp-cahp's runtime (crt0 and the helpers it references) into a
/// program image for a machine with the given ROM/RAM sizes.
pub fn assemble_image(asm: &str, name: &str, mem: vsp_cahp::MemConfig) -> Result<vsp_cahp::Image> {
    let opts = vsp_cahp::AsmOptions {
        rom_size: mem.rom_size,
        ram_size: mem.ram_size,
        runtime: true,
        ..Default::default()
    };
    vsp_cahp::assemble_sources(&[vsp_cahp::Source { name, text: asm }], &opts)
        .map_err(|e| CcError::Assemble(e.to_string()))
}

/// Compiles a C file all the way to a program image for the standard 512 B ROM / 512 B RAM machine;
/// returns the assembly text too (what `vsp cc prog.c -o prog.img` does).
pub fn compile_c_to_image(path: &Path, opts: &CcOptions) -> Result<(String, vsp_cahp::Image)> {
    let asm = compile_c(path, opts)?;
    let image = assemble_image(
        &asm,
        &path.display().to_string(),
        vsp_cahp::MemConfig::default(),
    )?;
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
    let (mut asm, called) = compile_module(&m, &BTreeSet::new())?;
    let user: BTreeSet<&str> = m
        .functions
        .iter()
        .filter(|f| !f.blocks.is_empty())
        .map(|f| f.name.as_str())
        .collect();
    let mut needed: BTreeSet<String> = called
        .into_iter()
        .filter(|c| !user.contains(c.as_str()))
        .collect();
    if needed.iter().any(|n| RUNTIME_FUNCS.contains(&n.as_str())) {
        let rt_ir = c_to_ir(
            RUNTIME_C,
            "<vsp-cc runtime>",
            opts,
            &["-ffreestanding", "-fno-builtin"],
        )?;
        let rt = parse_module(&rt_ir)?;
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
            let (text, more) = compile_module(&rt, &want)?;
            asm.push_str(&text);
            have.extend(want);
            needed.extend(more);
        }
    }
    Ok(asm)
}

/// Compiles LLVM IR text to assembly text (32-bit helpers need clang; see [`compile_ir_with`]).
pub fn compile_ir(ir: &str) -> Result<String> {
    compile_ir_with(ir, &CcOptions::default())
}

/// Compiles the functions of `m` (all of them, or only those in `only`) and its globals.
/// Returns the text and the functions it calls.
pub fn compile_module(m: &Module, only: &BTreeSet<String>) -> Result<(String, BTreeSet<String>)> {
    let mut out = String::new();
    let mut externals = BTreeSet::new();
    let defined: BTreeSet<&str> = m
        .functions
        .iter()
        .filter(|f| !f.blocks.is_empty())
        .map(|f| f.name.as_str())
        .collect();
    let globals: BTreeSet<&str> = m
        .globals
        .iter()
        .filter(|g| g.init.is_some())
        .map(|g| g.name.as_str())
        .collect();
    if only.is_empty() && !defined.contains("main") {
        return Err(CcError::Program("the program has no main function".into()));
    }
    let mut refs: BTreeMap<String, usize> = BTreeMap::new();
    let calls_main = m
        .functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.insts)
        .any(|i| {
            matches!(&i.op, crate::ir::Op::Call { callee, .. }
            if callee.val == crate::ir::Value::Const(crate::ir::Const::Addr("main".into(), 0)))
        });
    for func in m.functions.iter().filter(|f| !f.blocks.is_empty()) {
        if !only.is_empty() && !only.contains(&func.name) {
            continue;
        }
        let (mut mf, called) = crate::isel_fn::select_function(m, func)?;
        // `main` may skip saving callee-saved registers because crt0 halts after it, unless the
        // program calls `main` itself.
        if calls_main {
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
        if !defined.contains(s.as_str())
            && !globals.contains(s.as_str())
            && !CAHP_HELPERS.contains(&s.as_str())
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
