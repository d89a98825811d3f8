//! The CAHPv3 assembler and linker: assembly text in, [`Image`] out.
//!
//! Syntax and semantics are documented in `docs/isa.md`. In short: GNU-style lines
//! (`label: mnemonic op, op  # comment`), all machine mnemonics of [`crate::isa::OPCODES`],
//! pseudo-instructions (`li/la mv j call ret hlt nop not neg bgt bge bgtu bgeu`), sections
//! `.text` (ROM from 0) and `.data`/`.rodata`/`.bss` (RAM from address 2, §1.6), `hi()`/`lo()`
//! relocations (§1.4). Generic mnemonics are compressed to their 16-bit forms where legal
//! (§1.4 "Compression"); when an operand depends on a label, sizes are found by iterative
//! relaxation (sizes only grow, so it terminates). Several sources are linked into one image
//! in one symbol namespace; the runtime (`crate::runtime`) is linked on request, only the modules
//! that are referenced.
//!
//! Every error names `file:line:column` and says what is wrong.

mod expr;
mod layout;
mod lex;
mod parse;
mod select;

use std::fmt;

use thiserror::Error;

use crate::image::Image;

pub use expr::{hi6, lo10};

/// A position in a source file (1-based line and column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pos {
    pub file: usize,
    pub line: u32,
    pub col: u32,
}

/// One assembly source file.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// Name used in error messages.
    pub name: &'a str,
    /// The text.
    pub text: &'a str,
}

/// Assembler options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsmOptions {
    /// ROM size the program must fit in (bytes).
    pub rom_size: usize,
    /// RAM size the static data must fit in (bytes; the top 2 hold the initial SP).
    pub ram_size: usize,
    /// Link crt0 first (entry at address 0, calls `main`, halts) and the helper modules the
    /// program references (`__mulhi3`, `__divhi3`, …).
    pub runtime: bool,
    /// Choose 16-bit forms for generic mnemonics where legal (default on; `.option nocompress`
    /// turns it off for the rest of a file).
    pub compress: bool,
}

impl Default for AsmOptions {
    fn default() -> Self {
        AsmOptions {
            rom_size: 512,
            ram_size: 512,
            runtime: false,
            compress: true,
        }
    }
}

/// What went wrong, without the position.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum AsmErrorKind {
    /// Malformed text.
    #[error("syntax error: {0}")]
    Syntax(String),
    /// Not an instruction or pseudo-instruction.
    #[error("unknown mnemonic `{0}`")]
    UnknownMnemonic(String),
    /// Not a supported directive.
    #[error("unknown directive `{0}`")]
    UnknownDirective(String),
    /// A register operand that is not x0–x15 or an ABI name.
    #[error("bad register `{0}`: expected x0..x15 or ra, sp, fp, s0..s4, a0..a5, t0, t1")]
    BadRegister(String),
    /// Wrong number of operands.
    #[error("`{mnemonic}` takes {expected} operand(s) ({usage}), found {found}")]
    OperandCount {
        /// The mnemonic.
        mnemonic: String,
        /// Operands expected.
        expected: usize,
        /// Operands found.
        found: usize,
        /// Usage string.
        usage: &'static str,
    },
    /// An operand of the wrong kind.
    #[error("operand {index} of `{mnemonic}` must be {expected}")]
    OperandKind {
        /// The mnemonic.
        mnemonic: String,
        /// 1-based operand number.
        index: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// An immediate that does not fit.
    #[error("immediate {value} out of range for `{mnemonic}` (allowed {min}..={max}{extra})")]
    ImmOutOfRange {
        /// The mnemonic.
        mnemonic: String,
        /// The value.
        value: i64,
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
        /// Extra constraint such as ", even".
        extra: &'static str,
    },
    /// A branch or jump whose target is too far.
    #[error("{what} target out of range for `{mnemonic}`: offset {offset} bytes (allowed {min}..={max})")]
    BranchOutOfRange {
        /// "branch" or "jump".
        what: &'static str,
        /// The mnemonic.
        mnemonic: String,
        /// Target minus the instruction's address.
        offset: i64,
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// A symbol that is used but never defined.
    #[error("undefined symbol `{0}`")]
    UndefinedSymbol(String),
    /// A symbol defined twice.
    #[error("duplicate symbol `{name}` (first defined at {previous})")]
    DuplicateSymbol {
        /// The symbol.
        name: String,
        /// Where it was first defined (`file:line:col`).
        previous: String,
    },
    /// Something placed in a section that cannot hold it.
    #[error("{0}")]
    Section(String),
    /// ROM or RAM overflow.
    #[error("{what} overflow: {used} bytes used, {limit} available")]
    TooLarge {
        /// "ROM" or "RAM".
        what: &'static str,
        /// Bytes used.
        used: usize,
        /// Bytes available.
        limit: usize,
    },
    /// Relaxation did not settle (should not happen; sizes only grow).
    #[error("instruction sizes did not converge")]
    NoConvergence,
}

/// An assembler error with its location.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct AsmError {
    /// Source name.
    pub file: String,
    /// 1-based line (0 when the error concerns the whole program).
    pub line: u32,
    /// 1-based column (0 when not applicable).
    pub col: u32,
    /// What is wrong.
    pub kind: AsmErrorKind,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: {}", self.file, self.kind)
        } else {
            write!(
                f,
                "{}:{}:{}: error: {}",
                self.file, self.line, self.col, self.kind
            )
        }
    }
}

/// Assembles one source (no runtime, 512-byte ROM and RAM limits).
pub fn assemble(source: &str, name: &str) -> Result<Image, AsmError> {
    assemble_sources(&[Source { name, text: source }], &AsmOptions::default())
}

/// Assembles one source and links the runtime: crt0 at address 0 calls `main` and halts;
/// referenced helpers (`__mulhi3`, `__divhi3`, `__modhi3`, `__udivhi3`, `__umodhi3`) are added.
pub fn assemble_with_runtime(source: &str, name: &str) -> Result<Image, AsmError> {
    let opts = AsmOptions {
        runtime: true,
        ..AsmOptions::default()
    };
    assemble_sources(&[Source { name, text: source }], &opts)
}

/// Assembles and links several sources (in order; `.text` of the first starts at 0, or crt0 does
/// when `opts.runtime`).
pub fn assemble_sources(sources: &[Source<'_>], opts: &AsmOptions) -> Result<Image, AsmError> {
    let mut prog = parse::Program::new(opts.compress);
    if opts.runtime {
        prog.parse_file(crate::runtime::CRT0.name, crate::runtime::CRT0.source)?;
    }
    prog.main_file = prog.files.len();
    for s in sources {
        prog.parse_file(s.name, s.text)?;
    }
    if opts.runtime {
        // Archive semantics: add each helper module that defines a still-undefined symbol,
        // until nothing changes (helpers may use each other).
        loop {
            let missing = prog.undefined();
            let module = crate::runtime::HELPERS.iter().find(|m| {
                !prog.has_file(m.name) && m.defines.iter().any(|d| missing.iter().any(|u| u == d))
            });
            match module {
                Some(m) => prog.parse_file(m.name, m.source)?,
                None => break,
            }
        }
    }
    layout::link(&prog, opts)
}
