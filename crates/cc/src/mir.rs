//! Machine IR: CAHPv3 instructions over virtual registers, before and after register allocation.
//!
//! Registers `0..16` are the physical `x0..x15`; larger numbers are virtual. Pseudo-instructions
//! (`SetCc`, `Select`, `Call`, `Ret`, frame-relative offsets) are expanded at emission.

/// A register: physical below 16, virtual from 16 on.
pub type Reg = u32;

/// First virtual register number.
pub const FIRST_VREG: Reg = 16;
/// Return address (`x0`, written by `jsal`/`jalr`).
pub const RA: Reg = 0;
/// Stack pointer.
pub const SP: Reg = 1;
/// First argument / return register `a0` (`x8`).
pub const A0: Reg = 8;
/// Registers that carry arguments (`a0..a5`).
pub const ARG_REGS: [Reg; 6] = [8, 9, 10, 11, 12, 13];
/// Registers a call may clobber (`a0..a5`, `t0`, `t1`, and `ra` through the link).
pub const CALLER_SAVED: [Reg; 9] = [8, 9, 10, 11, 12, 13, 14, 15, RA];
/// Callee-saved registers available to the allocator (`s0..s4`, `fp`).
pub const CALLEE_SAVED: [Reg; 6] = [3, 4, 5, 6, 7, 2];

/// ABI name of a physical register.
pub fn reg_name(r: Reg) -> &'static str {
    const N: [&str; 16] = [
        "ra", "sp", "fp", "s0", "s1", "s2", "s3", "s4", "a0", "a1", "a2", "a3", "a4", "a5", "t0",
        "t1",
    ];
    N.get(r as usize).copied().unwrap_or("?")
}

/// ALU operations (the R and I classes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Alu {
    Add,
    Sub,
    And,
    Xor,
    Or,
    Lsl,
    Lsr,
    Asr,
}

impl Alu {
    /// Mnemonic stem.
    pub fn name(self) -> &'static str {
        match self {
            Alu::Add => "add",
            Alu::Sub => "sub",
            Alu::And => "and",
            Alu::Xor => "xor",
            Alu::Or => "or",
            Alu::Lsl => "lsl",
            Alu::Lsr => "lsr",
            Alu::Asr => "asr",
        }
    }
    /// Whether operands commute.
    pub fn commutes(self) -> bool {
        matches!(self, Alu::Add | Alu::And | Alu::Xor | Alu::Or)
    }
}

/// Branch conditions of CAHPv3 (`rs1 cond rs2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Cond {
    Eq,
    Ne,
    Lt,
    Ltu,
    Le,
    Leu,
}

impl Cond {
    /// Mnemonic of the branch.
    pub fn branch(self) -> &'static str {
        match self {
            Cond::Eq => "beq",
            Cond::Ne => "bne",
            Cond::Lt => "blt",
            Cond::Ltu => "bltu",
            Cond::Le => "ble",
            Cond::Leu => "bleu",
        }
    }
    /// The negation, as a condition on (possibly swapped) operands: `!(a c b) == (x c' y)`.
    pub fn negate(self, a: Reg, b: Reg) -> (Cond, Reg, Reg) {
        match self {
            Cond::Eq => (Cond::Ne, a, b),
            Cond::Ne => (Cond::Eq, a, b),
            Cond::Lt => (Cond::Le, b, a),
            Cond::Le => (Cond::Lt, b, a),
            Cond::Ltu => (Cond::Leu, b, a),
            Cond::Leu => (Cond::Ltu, b, a),
        }
    }
}

/// An immediate or memory offset: constant + optional symbol + optional frame object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Off {
    /// Constant part.
    pub imm: i32,
    /// A symbol whose address is added.
    pub sym: Option<String>,
    /// A frame object whose sp-relative offset is added (resolved by the frame layout).
    pub fi: Option<usize>,
}

impl Off {
    /// A plain constant.
    pub fn imm(imm: i32) -> Self {
        Off {
            imm,
            sym: None,
            fi: None,
        }
    }
}

/// Memory access widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// 16-bit word.
    Word,
    /// Byte, sign-extended on load.
    ByteS,
    /// Byte, zero-extended on load.
    ByteU,
}

/// Call targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callee {
    /// A function symbol (`jsal`).
    Sym(String),
    /// A register holding the address (`jalr`).
    Reg(Reg),
}

/// A machine instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MInst {
    /// `rd ← value` (a 16-bit constant, symbol address or frame address).
    Li { rd: Reg, v: Off },
    /// `rd ← rs`.
    Mov { rd: Reg, rs: Reg },
    /// `rd ← rs1 op rs2`.
    Alu {
        op: Alu,
        rd: Reg,
        rs1: Reg,
        rs2: Reg,
    },
    /// `rd ← rs1 op imm` (shift amounts 0..15; others simm10).
    AluI {
        op: Alu,
        rd: Reg,
        rs1: Reg,
        imm: Off,
    },
    /// `rd ← mem[base + off]`.
    Load {
        w: Width,
        rd: Reg,
        base: Reg,
        off: Off,
    },
    /// `mem[base + off] ← rs`.
    Store {
        w: Width,
        rs: Reg,
        base: Reg,
        off: Off,
    },
    /// `rd ← (a cond b) ? 1 : 0` (rd is written before a and b are read).
    SetCc { cond: Cond, rd: Reg, a: Reg, b: Reg },
    /// `rd ← (a cond b) ? t : f` (rd may share t's register only).
    Select {
        cond: Cond,
        rd: Reg,
        a: Reg,
        b: Reg,
        t: Reg,
        f: Reg,
    },
    /// A call; `uses` are the argument registers, every caller-saved register is clobbered.
    Call { callee: Callee, uses: Vec<Reg> },
    /// `if (a cond b) goto target`.
    Br {
        cond: Cond,
        a: Reg,
        b: Reg,
        target: usize,
    },
    /// `goto target`.
    Jmp { target: usize },
    /// Return (the epilogue is inserted at emission); `uses` are the result registers.
    Ret { uses: Vec<Reg> },
}

impl MInst {
    /// Registers read, each with "late" = read after the instruction's result is written.
    pub fn uses(&self) -> Vec<(Reg, bool)> {
        match self {
            MInst::Li { .. } | MInst::Jmp { .. } => vec![],
            MInst::Mov { rs, .. } => vec![(*rs, false)],
            MInst::Alu { rs1, rs2, .. } => vec![(*rs1, false), (*rs2, false)],
            MInst::AluI { rs1, .. } => vec![(*rs1, false)],
            MInst::Load { base, .. } => vec![(*base, false)],
            MInst::Store { rs, base, .. } => vec![(*rs, false), (*base, false)],
            MInst::SetCc { a, b, .. } => vec![(*a, false), (*b, false)],
            MInst::Select { a, b, t, f, .. } => {
                // The expansion writes rd (from t) before the branch reads a and b, unless rd and
                // t share a register; an operand that is t itself is never clobbered early.
                vec![(*a, a != t), (*b, b != t), (*t, false), (*f, true)]
            }
            MInst::Call { callee, uses } => {
                let mut v: Vec<(Reg, bool)> = uses.iter().map(|r| (*r, false)).collect();
                if let Callee::Reg(r) = callee {
                    v.push((*r, false));
                }
                v
            }
            MInst::Br { a, b, .. } => vec![(*a, false), (*b, false)],
            MInst::Ret { uses } => uses.iter().map(|r| (*r, false)).collect(),
        }
    }

    /// Registers written, each with "early" = written before the operands are read.
    pub fn defs(&self) -> Vec<(Reg, bool)> {
        match self {
            MInst::Li { rd, .. }
            | MInst::Mov { rd, .. }
            | MInst::Alu { rd, .. }
            | MInst::AluI { rd, .. }
            | MInst::Load { rd, .. }
            | MInst::Select { rd, .. } => vec![(*rd, false)],
            MInst::SetCc { rd, .. } => vec![(*rd, true)],
            MInst::Call { .. } => CALLER_SAVED.iter().map(|r| (*r, false)).collect(),
            _ => vec![],
        }
    }

    /// Applies `f` to every register operand.
    pub fn map_regs(&mut self, mut f: impl FnMut(Reg) -> Reg) {
        match self {
            MInst::Li { rd, .. } => *rd = f(*rd),
            MInst::Mov { rd, rs } => {
                *rd = f(*rd);
                *rs = f(*rs);
            }
            MInst::Alu { rd, rs1, rs2, .. } => {
                *rd = f(*rd);
                *rs1 = f(*rs1);
                *rs2 = f(*rs2);
            }
            MInst::AluI { rd, rs1, .. } => {
                *rd = f(*rd);
                *rs1 = f(*rs1);
            }
            MInst::Load { rd, base, .. } => {
                *rd = f(*rd);
                *base = f(*base);
            }
            MInst::Store { rs, base, .. } => {
                *rs = f(*rs);
                *base = f(*base);
            }
            MInst::SetCc { rd, a, b, .. } => {
                *rd = f(*rd);
                *a = f(*a);
                *b = f(*b);
            }
            MInst::Select {
                rd, a, b, t, f: fr, ..
            } => {
                *rd = f(*rd);
                *a = f(*a);
                *b = f(*b);
                *t = f(*t);
                *fr = f(*fr);
            }
            MInst::Call { callee, uses } => {
                if let Callee::Reg(r) = callee {
                    *r = f(*r);
                }
                for u in uses {
                    *u = f(*u);
                }
            }
            MInst::Br { a, b, .. } => {
                *a = f(*a);
                *b = f(*b);
            }
            MInst::Ret { uses } => {
                for u in uses {
                    *u = f(*u);
                }
            }
            MInst::Jmp { .. } => {}
        }
    }

    /// Branch targets of a terminator.
    pub fn targets(&self) -> Option<usize> {
        match self {
            MInst::Br { target, .. } | MInst::Jmp { target } => Some(*target),
            _ => None,
        }
    }
}

/// A frame object (stack slot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameObj {
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// `Some(k)`: the k-th incoming stack word (lives in the caller's frame).
    pub incoming: Option<u32>,
}

/// A machine basic block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MBlock {
    /// Instructions; terminators (`Br`*, then `Jmp`/`Ret`) at the end.
    pub insts: Vec<MInst>,
}

impl MBlock {
    /// Successor blocks.
    pub fn succs(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.insts.iter().filter_map(MInst::targets).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// A function in machine IR.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MFunc {
    /// Symbol name.
    pub name: String,
    /// Blocks in layout order; block 0 is the entry.
    pub blocks: Vec<MBlock>,
    /// Stack objects.
    pub frame: Vec<FrameObj>,
    /// Bytes of outgoing stack arguments needed by the largest call.
    pub out_args: u32,
    /// Next virtual register number.
    pub next_vreg: Reg,
    /// Whether the function calls anything (then `ra` is saved).
    pub has_calls: bool,
    /// Skip saving callee-saved registers (true for `main`, whose caller halts right after).
    pub no_callee_saves: bool,
    /// Global symbol.
    pub global: bool,
    /// Blocks from this index on were created to split critical edges (copies, then a jump).
    pub edge_from: usize,
}

impl MFunc {
    /// A fresh virtual register.
    pub fn vreg(&mut self) -> Reg {
        let r = self.next_vreg;
        self.next_vreg += 1;
        r
    }
}
