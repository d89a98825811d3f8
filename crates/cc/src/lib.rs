//! vsp-cc — C for the CAHPv3 processor.
//!
//! The Virtual Secure Platform paper (seed 000) lets users write C for its encrypted processor through
//! llvm-cahp. This crate reaches the same place with Debian's stock `clang`: clang compiles C to LLVM IR
//! for a 16-bit data layout (`--target=msp430 -Oz`: 16-bit int and pointers, 32-bit long, exactly the
//! type sizes of llvm-cahp's CAHP target), and this crate lowers that IR to CAHPv3 assembly text for the
//! vsp-cahp assembler: instruction selection, linear-scan register allocation over the 16 registers with
//! the llvm-cahp ABI (`shared/reference/vsp.md` §1.8), frame layout, and peephole passes that favour the
//! 16-bit instruction forms.
//!
//! Supported: integer C with char/short/int (16-bit), long (32-bit, register pairs; `*` `/` `%` and
//! variable shifts through runtime helpers), long long (64-bit, four registers: add, sub, compares,
//! constant shifts and conversions inline; `*` `/` `%` and variable shifts through runtime
//! helpers), pointers, structs and arrays (by value too: `byval`, `sret`), globals and constant
//! data, switch, recursion, function pointers, variadic functions, `memcpy`/`memset`/`memmove`,
//! every optimisation level (blocks are selected in reverse postorder and registers allocated from
//! liveness, so any block order clang prints is fine), and programs of several C files. Refused
//! with the IR line: floating point, integers wider than 64 bits, variable-length arrays, inline
//! assembly. A program larger than the ROM is reported as such ([`CcError::DoesNotFit`]).
//! Calling convention (llvm-cahp, `vsp.md` §1.8): 16-bit pieces of the arguments in a0..a5 (an
//! i32 takes two, an i64 four), the rest and all variadic arguments on the stack; results in
//! a0 (a1..a3 = higher words); s0..s4 and fp are callee-saved; 16-bit mul/div come from
//! vsp-cahp's runtime, the rest from [`compile::RUNTIME_C`].
//!
//! ```no_run
//! let asm = vsp_cc::compile_c(std::path::Path::new("prog.c"), &vsp_cc::CcOptions::default())?;
//! let image = vsp_cahp::assemble_with_runtime(&asm, "prog.s").expect("assembles");
//! # Ok::<(), vsp_cc::CcError>(())
//! ```

//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`compile`] | the driver: clang, IR → assembly, the C runtime |
//! | [`ir`] | the LLVM IR text reader |
//! | `isel`, `isel_fn`, `isel_ops`, `isel_wide`, `isel_multi`, `isel_intr` | instruction selection (private): values and addresses, functions and calls, arithmetic, 32-bit pairs, 48/64-bit integers, intrinsics |
//! | [`mir`] | the machine IR |
//! | [`regalloc`] | liveness and linear-scan register allocation |
//! | `opt` | dead-code elimination (private) |
//! | [`data`] | globals as data directives |
//! | [`emit`] | layout, frames, pseudo-instruction expansion, assembly text |
//! | [`error`] | [`CcError`] |

#![forbid(unsafe_code)]

/// Driver: clang, IR → assembly, the C runtime.
pub mod compile;
/// Globals as data directives.
pub mod data;
/// Layout, frames, pseudo-instruction expansion, assembly text.
pub mod emit;
/// CcError.
pub mod error;
/// LLVM IR text reader.
pub mod ir;
/// Instruction selection: values, addresses, analysis.
mod isel;
/// Instruction selection: functions, calls, phis.
mod isel_fn;
/// Instruction selection: intrinsics.
mod isel_intr;
/// Instruction selection: 48- and 64-bit integers (long long).
mod isel_multi;
/// Instruction selection: arithmetic, compares, memory.
mod isel_ops;
/// Instruction selection: 32-bit pairs, funnel shifts.
mod isel_wide;
/// Machine IR.
pub mod mir;
/// Dead-code elimination.
mod opt;
/// Liveness and linear-scan allocation.
pub mod regalloc;

pub use compile::{
    assemble_image, clang_available, compile_c, compile_c_files, compile_c_files_to_image,
    compile_c_source, compile_c_to_image, compile_ir, compile_ir_with, CcOptions,
};
pub use error::{CcError, Result};
