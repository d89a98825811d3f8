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

pub mod compile; // driver: clang, IR → assembly, the C runtime
pub mod data; // globals as data directives
pub mod emit; // layout, frames, pseudo-instruction expansion, assembly text
pub mod error; // CcError
pub mod ir; // LLVM IR text reader
mod isel; // instruction selection: values, addresses, analysis
mod isel_fn; // instruction selection: functions, calls, phis
mod isel_intr; // instruction selection: intrinsics
mod isel_multi; // instruction selection: 48- and 64-bit integers (long long)
mod isel_ops; // instruction selection: arithmetic, compares, memory
mod isel_wide; // instruction selection: 32-bit pairs, funnel shifts
pub mod mir; // machine IR
mod opt; // dead-code elimination
pub mod regalloc; // liveness and linear-scan allocation

pub use compile::{
    assemble_image, clang_available, compile_c, compile_c_files, compile_c_files_to_image,
    compile_c_source, compile_c_to_image, compile_ir, compile_ir_with, CcOptions,
};
pub use error::{CcError, Result};
