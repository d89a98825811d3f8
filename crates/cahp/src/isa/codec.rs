//! Instructions in canonical form and their 16/24-bit encodings (`shared/reference/vsp.md`
//! §1.2–1.3): immediates split across bits 7:6 and 23:16 (10-bit) or 7:6 and 15:12 (6-bit),
//! stores and branches with the data/second register in 11:8.

use thiserror::Error;

use super::{Format, Format as F, Op, Reg, OPCODES};

/// A decoded instruction in canonical form. Which fields are meaningful depends on
/// [`Format`]; unused fields are zero. `imm` holds the immediate as the instruction means it
/// (sign-extended, or the byte offset for `lwsp`, or the raw 6-bit value for `lui`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// Destination register.
    pub rd: Reg,
    /// First source / base / jump register.
    pub rs1: Reg,
    /// Second source / store data register.
    pub rs2: Reg,
    /// Immediate or offset.
    pub imm: i32,
}

/// Why an instruction cannot be encoded or decoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum IsaError {
    /// An immediate does not fit its field.
    #[error("immediate {value} out of range for {mnemonic} (allowed {min}..={max}{extra})")]
    ImmOutOfRange {
        /// The instruction.
        mnemonic: &'static str,
        /// The value given.
        value: i32,
        /// Smallest allowed.
        min: i32,
        /// Largest allowed.
        max: i32,
        /// Extra constraint (e.g. ", even").
        extra: &'static str,
    },
    /// A field the format does not use is non-zero.
    #[error("{mnemonic} does not use field {field}; it must be zero")]
    UnusedField {
        /// The instruction.
        mnemonic: &'static str,
        /// The field name.
        field: &'static str,
    },
    /// The bytes are not a CAHPv3 instruction.
    #[error("illegal instruction {0}")]
    Illegal(String),
    /// Not enough bytes to hold the instruction.
    #[error("truncated instruction: need {need} bytes, have {have}")]
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}

/// Allowed immediate range `(min, max, step)` of an instruction; `None` if it has no immediate.
pub fn imm_range(op: Op) -> Option<(i32, i32, i32)> {
    Some(match op.format() {
        F::Load | F::Store | F::Li | F::I | F::Branch => (-512, 511, 1),
        F::Shift | F::Shift2 => (0, 15, 1),
        F::Sp => (0, 126, 2),
        F::Imm6 => (-32, 31, 1),
        F::Lui => (0, 63, 1),
        F::JImm => (-1024, 1023, 1),
        F::R | F::R2 | F::JReg | F::None => return None,
    })
}

/// Which register fields (rd, rs1, rs2) a format uses.
pub fn uses_regs(format: Format) -> (bool, bool, bool) {
    match format {
        F::Load | F::I | F::Shift => (true, true, false),
        F::Store | F::Branch => (false, true, true),
        F::Li | F::Imm6 | F::Lui | F::Shift2 => (true, false, false),
        F::R => (true, true, true),
        F::Sp => (false, false, false), // refined per op in `check`
        F::R2 => (true, true, false),
        F::JReg => (false, true, false),
        F::JImm | F::None => (false, false, false),
    }
}

fn reg_fields(op: Op) -> (bool, bool, bool) {
    match op {
        Op::Lwsp => (true, false, false),
        Op::Swsp => (false, false, true),
        _ => uses_regs(op.format()),
    }
}

impl Inst {
    /// An instruction from its parts, checked with [`Inst::check`].
    pub fn new(op: Op, rd: Reg, rs1: Reg, rs2: Reg, imm: i32) -> Result<Inst, IsaError> {
        let i = Inst {
            op,
            rd,
            rs1,
            rs2,
            imm,
        };
        i.check()?;
        Ok(i)
    }

    /// Length in bytes.
    pub fn size(&self) -> u8 {
        self.op.size()
    }

    /// Checks immediate ranges and that unused fields are zero.
    pub fn check(&self) -> Result<(), IsaError> {
        let mnemonic = self.op.mnemonic();
        let (rd, rs1, rs2) = reg_fields(self.op);
        for (used, reg, field) in [
            (rd, self.rd, "rd"),
            (rs1, self.rs1, "rs1"),
            (rs2, self.rs2, "rs2"),
        ] {
            if !used && reg.0 != 0 {
                return Err(IsaError::UnusedField { mnemonic, field });
            }
        }
        match imm_range(self.op) {
            None if self.imm != 0 => Err(IsaError::UnusedField {
                mnemonic,
                field: "imm",
            }),
            None => Ok(()),
            Some((min, max, step)) => {
                if self.imm < min || self.imm > max || self.imm % step != 0 {
                    let extra = if step == 2 { ", even" } else { "" };
                    Err(IsaError::ImmOutOfRange {
                        mnemonic,
                        value: self.imm,
                        min,
                        max,
                        extra,
                    })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Encodes into a little-endian word (the low `len()` bytes are the instruction).
    pub fn encode(&self) -> Result<u32, IsaError> {
        self.check()?;
        let info = self.op.info();
        let imm = self.imm as u32;
        let rd = u32::from(self.rd.0);
        let rs1 = u32::from(self.rs1.0);
        let rs2 = u32::from(self.rs2.0);
        let imm10 = ((imm >> 8) & 3) << 6 | (imm & 0xFF) << 16;
        let imm6 = ((imm >> 4) & 3) << 6 | (imm & 0xF) << 12;
        let w = u32::from(info.opcode)
            | match info.format {
                F::Load | F::I => rd << 8 | rs1 << 12 | imm10,
                F::Store | F::Branch => rs2 << 8 | rs1 << 12 | imm10,
                F::Li => rd << 8 | imm10,
                F::R => rd << 8 | rs1 << 12 | rs2 << 16,
                F::Shift => rd << 8 | rs1 << 12 | imm << 16,
                F::Sp => {
                    let r = if self.op == Op::Lwsp { rd } else { rs2 };
                    r << 8 | ((imm >> 1) & 0xF) << 12 | ((imm >> 5) & 3) << 6
                }
                F::Imm6 | F::Lui => rd << 8 | imm6,
                F::R2 => rd << 8 | rs1 << 12,
                F::Shift2 => rd << 8 | imm << 12,
                F::JReg => rs1 << 8,
                F::JImm => (imm & 0x7FF) << 5,
                F::None => 0,
            };
        Ok(w)
    }

    /// Encodes into bytes (2 or 3, memory order).
    pub fn to_bytes(&self) -> Result<Vec<u8>, IsaError> {
        let w = self.encode()?;
        Ok(w.to_le_bytes()[..usize::from(self.size())].to_vec())
    }

    /// Decodes the instruction at the start of `bytes` (at least 2 bytes, 3 if it is a 24-bit one).
    pub fn decode(bytes: &[u8]) -> Result<Inst, IsaError> {
        let b0 = *bytes
            .first()
            .ok_or(IsaError::Truncated { need: 2, have: 0 })?;
        let need = if b0 & 1 == 1 { 3 } else { 2 };
        if bytes.len() < need {
            return Err(IsaError::Truncated {
                need,
                have: bytes.len(),
            });
        }
        let mut w = u32::from(b0) | u32::from(bytes[1]) << 8;
        if need == 3 {
            w |= u32::from(bytes[2]) << 16;
        }
        Inst::decode_word(w)
    }

    /// Decodes an instruction from a little-endian word; bit 0 gives the length and bits above
    /// it are ignored (a 16-bit instruction ignores bits 31:16, a 24-bit one bits 31:24).
    pub fn decode_word(word: u32) -> Result<Inst, IsaError> {
        let len = if word & 1 == 1 { 3 } else { 2 };
        let w = if len == 3 {
            word & 0xFF_FFFF
        } else {
            word & 0xFFFF
        };
        let illegal = || {
            IsaError::Illegal(if len == 3 {
                format!("0x{w:06x} (24-bit)")
            } else {
                format!("0x{w:04x} (16-bit)")
            })
        };
        let b0 = (w & 0xFF) as u8;
        let info = if w == 0 {
            Op::Nop.info()
        } else {
            OPCODES
                .iter()
                .find(|r| r.len == len && r.op != Op::Nop && b0 & r.mask == r.opcode)
                .ok_or_else(illegal)?
        };
        let f4 = |s: u32| Reg(((w >> s) & 0xF) as u8);
        let sext = |v: u32, bits: u32| ((v << (32 - bits)) as i32) >> (32 - bits);
        let imm10 = sext(((w >> 6) & 3) << 8 | (w >> 16) & 0xFF, 10);
        let imm6 = ((w >> 6) & 3) << 4 | (w >> 12) & 0xF;
        let z = Reg(0);
        let (rd, rs1, rs2, imm) = match info.format {
            F::Load | F::I => (f4(8), f4(12), z, imm10),
            F::Store | F::Branch => (z, f4(12), f4(8), imm10),
            F::Li => (f4(8), z, z, imm10),
            F::R => (f4(8), f4(12), f4(16), 0),
            F::Shift => (f4(8), f4(12), z, ((w >> 16) & 0xF) as i32),
            F::Sp => {
                let off = (((w >> 12) & 0xF) << 1 | ((w >> 6) & 3) << 5) as i32;
                if info.op == Op::Lwsp {
                    (f4(8), z, z, off)
                } else {
                    (z, z, f4(8), off)
                }
            }
            F::Imm6 => (f4(8), z, z, sext(imm6, 6)),
            F::Lui => (f4(8), z, z, imm6 as i32),
            F::R2 => (f4(8), f4(12), z, 0),
            F::Shift2 => (f4(8), z, z, ((w >> 12) & 0xF) as i32),
            F::JReg => (z, f4(8), z, 0),
            F::JImm => (z, z, z, sext(w >> 5, 11)),
            F::None => (z, z, z, 0),
        };
        let inst = Inst {
            op: info.op,
            rd,
            rs1,
            rs2,
            imm,
        };
        // Strictness: re-encoding must reproduce the word exactly, which rejects set reserved bits
        // (bits 23:20 of R/shift forms, 15:12 of `li`, 7:5 and 15:12 of jr/jalr, 7:6 of shifts).
        if inst.encode().ok() != Some(w) {
            return Err(illegal());
        }
        Ok(inst)
    }
}

/// Builders for every format, used by the assembler and tests. They do not range-check; call
/// [`Inst::check`] or [`Inst::encode`].
impl Inst {
    /// Instruction with all operand fields zero.
    pub fn bare(op: Op) -> Inst {
        Inst {
            op,
            rd: Reg(0),
            rs1: Reg(0),
            rs2: Reg(0),
            imm: 0,
        }
    }

    vsp_codec::setters! {
        /// Sets `rd`.
        with_rd(r: Reg) => rd = r;
        /// Sets `rs1`.
        with_rs1(r: Reg) => rs1 = r;
        /// Sets `rs2`.
        with_rs2(r: Reg) => rs2 = r;
        /// Sets `imm`.
        with_imm(imm: i32) => imm = imm;
    }

    /// Whether this is the halt idiom `js 0` (halfword 0x000E, §1.7).
    pub fn is_halt(&self) -> bool {
        self.op == Op::Js && self.imm == 0
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::OPCODES;

    #[test]
    fn table_is_in_op_order() {
        for (i, r) in OPCODES.iter().enumerate() {
            assert_eq!(r.op as usize, i, "{}", r.mnemonic);
        }
    }

    #[test]
    fn reference_examples() {
        // cahp-sim test.sh examples (§1.3).
        let lw = Inst::bare(Op::Lw)
            .with_rd(Reg(0))
            .with_rs1(Reg(1))
            .with_imm(-500);
        assert_eq!(lw.to_bytes().unwrap(), [0x95, 0x10, 0x0C]);
        let li = Inst::bare(Op::Li).with_imm(-500);
        assert_eq!(li.to_bytes().unwrap(), [0xB5, 0x00, 0x0C]);
        let add = Inst::bare(Op::Add).with_rs1(Reg(1)).with_rs2(Reg(2));
        assert_eq!(add.to_bytes().unwrap(), [0x01, 0x10, 0x02]);
        let sw = Inst::bare(Op::Sw)
            .with_rs2(Reg(0))
            .with_rs1(Reg(1))
            .with_imm(-500);
        assert_eq!(sw.to_bytes().unwrap(), [0x9D, 0x10, 0x0C]);
        assert_eq!(Inst::bare(Op::Js).encode().unwrap(), 0x000E);
        assert_eq!(Inst::decode(&[0x95, 0x10, 0x0C]).unwrap(), lw);
    }
}
