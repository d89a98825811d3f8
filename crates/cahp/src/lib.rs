//! vsp-cahp: the CAHPv3 processor toolchain of the Virtual Secure Platform (seed 000, "CAHPv3").
//!
//! The ISA as data, an assembler/linker producing program images, a disassembler, the argument
//! loader and the instruction-set simulator that serves as the golden model for the Pearl and Ruby
//! cores, plus the runtime (crt0, 16-bit mul/div) and the paper's benchmark programs. Facts follow
//! `shared/reference/vsp.md` §1 and §5; the assembler syntax is in `docs/isa.md`, the image file
//! format in `docs/image-format.md`.

//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`isa`] | the instruction set as data: registers, opcode table, encoder and decoder |
//! | [`asm`] | assembler and linker: assembly text to an [`Image`] (syntax in `docs/isa.md`) |
//! | [`disasm`] | disassembler and listings |
//! | [`image`] | program images and their file format, in the [`vsp_codec`] envelope |
//! | [`loader`] | the argv/argc/initial-SP loader (§1.7) |
//! | [`sim`] | the instruction-set simulator (golden model) |
//! | [`cores`] | the Pearl and Ruby core netlists and blueprints (hw/), as data |
//! | [`runtime`] | crt0 and the 16-bit multiply/divide helpers, in assembly |
//! | [`programs`] | the paper's benchmark programs (fib, hamming, brainf*ck) in assembly |

#![forbid(unsafe_code)]

/// Assembler and linker: assembly text to [`Image`] (syntax in `docs/isa.md`).
pub mod asm;
/// The Pearl and Ruby core netlists and blueprints (hw/), as data.
pub mod cores;
/// Disassembler and listings.
pub mod disasm;
/// Program images and their file format (`docs/image-format.md`).
pub mod image;
/// The instruction set as data: registers, opcode table, encoder and decoder.
pub mod isa;
/// The argv/argc/initial-SP loader (§1.7).
pub mod loader;
/// The paper's benchmark programs (fib, hamming, brainf*ck) in assembly.
pub mod programs;
/// crt0 and the 16-bit multiply/divide helpers, in assembly.
pub mod runtime;
/// The instruction-set simulator (golden model).
pub mod sim;

pub use asm::{
    assemble, assemble_sources, assemble_with_runtime, AsmError, AsmErrorKind, AsmOptions, Source,
};
pub use disasm::{disassemble, listing};
pub use image::{Image, ImageError, Section, Symbol};
pub use isa::{Inst, IsaError, Op, Reg};
pub use loader::{load_args, LoadError};
pub use sim::{MemConfig, MemWrite, RegWrite, Retired, RunStats, SimError, Simulator, StackGuard};
