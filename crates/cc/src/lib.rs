//! vsp-cc — C for the CAHPv3 processor.
//!
//! The Virtual Secure Platform paper (seed 000) lets users write C for its encrypted processor through
//! llvm-cahp. This crate reaches the same place with Debian's stock `clang`: clang compiles C to LLVM IR
//! for a 16-bit data layout (`--target=msp430 -Oz`: 16-bit int and pointers, 32-bit long, exactly the
//! type sizes of llvm-cahp's CAHP target), and this crate lowers that IR to CAHPv3 assembly text for the
//! vsp-cahp assembler: instruction selection, linear-scan register allocation over the 16 registers with
//! the llvm-cahp ABI, frame layout, and peephole passes that favour the 16-bit instruction forms.

pub mod error;
pub mod ir;

pub use error::{CcError, Result};
