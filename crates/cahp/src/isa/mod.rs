//! The CAHPv3 instruction set as data: registers, the opcode table, and the encoder/decoder.
//!
//! Follows the reconstruction of CAHPv3 in `shared/reference/vsp.md` §1.2–1.3 (from cahp-sim,
//! llvm-cahp and the cahp-ruby decoder, which agree). Instructions are 16 or 24 bits, little-endian,
//! byte 0 is the opcode byte and bit 0 of it selects the length. Every instruction has one canonical
//! [`Inst`] value: fields that a format does not use are zero, so `decode(encode(i)) == i` for every
//! valid `i`, and `encode(decode(b)) == b` for every accepted encoding `b`. The decoder is strict:
//! reserved bits that the reference toolchain always writes as zero must be zero.

mod codec;
mod reg;

pub use codec::{imm_range, uses_regs, Inst, IsaError};
pub use reg::{Reg, ABI_NAMES};

/// Every CAHPv3 machine instruction (not pseudo-instructions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Op {
    // 24-bit
    Lw,
    Lb,
    Lbu,
    Sw,
    Sb,
    Li,
    Add,
    Sub,
    And,
    Xor,
    Or,
    Lsl,
    Lsr,
    Asr,
    Addi,
    Andi,
    Xori,
    Ori,
    Lsli,
    Lsri,
    Asri,
    Beq,
    Bne,
    Blt,
    Bltu,
    Ble,
    Bleu,
    // 16-bit
    Lwsp,
    Swsp,
    Lsi,
    Lui,
    Mov,
    Add2,
    Sub2,
    And2,
    Xor2,
    Or2,
    Lsl2,
    Lsr2,
    Asr2,
    Lsli2,
    Lsri2,
    Asri2,
    Addi2,
    Andi2,
    Jalr,
    Jr,
    Js,
    Jsal,
    Nop,
}

/// Operand layout of an instruction (which [`Inst`] fields it uses and how they are encoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `lw rd, simm10(rs1)`: rd 11:8, rs1 15:12.
    Load,
    /// `sw rs2, simm10(rs1)`: data register rs2 in 11:8, base rs1 in 15:12.
    Store,
    /// `li rd, simm10`: rd 11:8, bits 15:12 zero.
    Li,
    /// `add rd, rs1, rs2`: rd 11:8, rs1 15:12, rs2 19:16, bits 23:20 zero.
    R,
    /// `addi rd, rs1, simm10`.
    I,
    /// `lsli rd, rs1, uimm4`: uimm4 in 19:16, bits 23:20 zero.
    Shift,
    /// `beq rs1, rs2, simm10`: rs1 15:12, rs2 11:8, offset from the branch's own address.
    Branch,
    /// `lwsp rd, uimm7(sp)` / `swsp rs2, uimm7(sp)`: even offset 0..=126.
    Sp,
    /// `lsi/addi2/andi2 rd, simm6`.
    Imm6,
    /// `lui rd, uimm6`: rd ← imm << 10.
    Lui,
    /// `mov/add2/… rd, rs1`: rd 11:8, rs1 15:12.
    R2,
    /// `lsli2 rd, uimm4`: uimm4 in 15:12.
    Shift2,
    /// `jr/jalr rs1`: rs1 in 11:8.
    JReg,
    /// `js/jsal simm11`: offset in 15:5, from the jump's own address.
    JImm,
    /// `nop` (all zero).
    None,
}

/// One row of the opcode table.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The instruction.
    pub op: Op,
    /// Assembler mnemonic.
    pub mnemonic: &'static str,
    /// Operand layout.
    pub format: Format,
    /// Length in bytes (2 or 3).
    pub len: u8,
    /// Fixed bits of the opcode byte (after masking with `mask`).
    pub opcode: u8,
    /// Which bits of the opcode byte are fixed.
    pub mask: u8,
}

const fn row(
    op: Op,
    mnemonic: &'static str,
    format: Format,
    len: u8,
    opcode: u8,
    mask: u8,
) -> OpInfo {
    OpInfo {
        op,
        mnemonic,
        format,
        len,
        opcode,
        mask,
    }
}

use Format as F;

/// The complete CAHPv3 opcode table (§1.3). Opcode values are the low byte of the instruction.
pub const OPCODES: [OpInfo; 50] = [
    row(Op::Lw, "lw", F::Load, 3, 0b010101, 0x3F),
    row(Op::Lb, "lb", F::Load, 3, 0b100101, 0x3F),
    row(Op::Lbu, "lbu", F::Load, 3, 0b000101, 0x3F),
    row(Op::Sw, "sw", F::Store, 3, 0b011101, 0x3F),
    row(Op::Sb, "sb", F::Store, 3, 0b001101, 0x3F),
    row(Op::Li, "li", F::Li, 3, 0b110101, 0x3F),
    row(Op::Add, "add", F::R, 3, 0b0000_0001, 0xFF),
    row(Op::Sub, "sub", F::R, 3, 0b0000_1001, 0xFF),
    row(Op::And, "and", F::R, 3, 0b0001_0001, 0xFF),
    row(Op::Xor, "xor", F::R, 3, 0b0001_1001, 0xFF),
    row(Op::Or, "or", F::R, 3, 0b0010_0001, 0xFF),
    row(Op::Lsl, "lsl", F::R, 3, 0b0010_1001, 0xFF),
    row(Op::Lsr, "lsr", F::R, 3, 0b0011_0001, 0xFF),
    row(Op::Asr, "asr", F::R, 3, 0b0011_1001, 0xFF),
    row(Op::Addi, "addi", F::I, 3, 0b000011, 0x3F),
    row(Op::Andi, "andi", F::I, 3, 0b010011, 0x3F),
    row(Op::Xori, "xori", F::I, 3, 0b011011, 0x3F),
    row(Op::Ori, "ori", F::I, 3, 0b100011, 0x3F),
    row(Op::Lsli, "lsli", F::Shift, 3, 0b0010_1011, 0xFF),
    row(Op::Lsri, "lsri", F::Shift, 3, 0b0011_0011, 0xFF),
    row(Op::Asri, "asri", F::Shift, 3, 0b0011_1011, 0xFF),
    row(Op::Beq, "beq", F::Branch, 3, 0b001111, 0x3F),
    row(Op::Bne, "bne", F::Branch, 3, 0b101111, 0x3F),
    row(Op::Blt, "blt", F::Branch, 3, 0b110111, 0x3F),
    row(Op::Bltu, "bltu", F::Branch, 3, 0b010111, 0x3F),
    row(Op::Ble, "ble", F::Branch, 3, 0b111111, 0x3F),
    row(Op::Bleu, "bleu", F::Branch, 3, 0b011111, 0x3F),
    row(Op::Lwsp, "lwsp", F::Sp, 2, 0b010100, 0x3F),
    row(Op::Swsp, "swsp", F::Sp, 2, 0b011100, 0x3F),
    row(Op::Lsi, "lsi", F::Imm6, 2, 0b110100, 0x3F),
    row(Op::Lui, "lui", F::Lui, 2, 0b000100, 0x3F),
    row(Op::Mov, "mov", F::R2, 2, 0b1100_0000, 0xFF),
    row(Op::Add2, "add2", F::R2, 2, 0b1000_0000, 0xFF),
    row(Op::Sub2, "sub2", F::R2, 2, 0b1000_1000, 0xFF),
    row(Op::And2, "and2", F::R2, 2, 0b1001_0000, 0xFF),
    row(Op::Xor2, "xor2", F::R2, 2, 0b1001_1000, 0xFF),
    row(Op::Or2, "or2", F::R2, 2, 0b1010_0000, 0xFF),
    row(Op::Lsl2, "lsl2", F::R2, 2, 0b1010_1000, 0xFF),
    row(Op::Lsr2, "lsr2", F::R2, 2, 0b1011_0000, 0xFF),
    row(Op::Asr2, "asr2", F::R2, 2, 0b1011_1000, 0xFF),
    row(Op::Lsli2, "lsli2", F::Shift2, 2, 0b0010_1010, 0xFF),
    row(Op::Lsri2, "lsri2", F::Shift2, 2, 0b0011_0010, 0xFF),
    row(Op::Asri2, "asri2", F::Shift2, 2, 0b0011_1010, 0xFF),
    row(Op::Addi2, "addi2", F::Imm6, 2, 0b000010, 0x3F),
    row(Op::Andi2, "andi2", F::Imm6, 2, 0b010010, 0x3F),
    // 16-bit J class: bits 7:5 of jr/jalr are zero (checked as reserved bits); js/jsal use them.
    row(Op::Jalr, "jalr", F::JReg, 2, 0b10110, 0x1F),
    row(Op::Jr, "jr", F::JReg, 2, 0b00110, 0x1F),
    row(Op::Js, "js", F::JImm, 2, 0b01110, 0x1F),
    row(Op::Jsal, "jsal", F::JImm, 2, 0b11110, 0x1F),
    row(Op::Nop, "nop", F::None, 2, 0, 0xFF),
];

impl Op {
    /// This instruction's row of [`OPCODES`].
    pub fn info(self) -> &'static OpInfo {
        // The table is in declaration order of `Op`, which a unit test checks.
        &OPCODES[self as usize]
    }

    /// Assembler mnemonic.
    pub fn mnemonic(self) -> &'static str {
        self.info().mnemonic
    }

    /// Length in bytes.
    pub fn size(self) -> u8 {
        self.info().len
    }

    /// Operand layout.
    pub fn format(self) -> Format {
        self.info().format
    }

    /// Looks a machine mnemonic up (case-insensitive).
    pub fn from_mnemonic(m: &str) -> Option<Op> {
        let lower = m.to_ascii_lowercase();
        OPCODES.iter().find(|r| r.mnemonic == lower).map(|r| r.op)
    }
}
