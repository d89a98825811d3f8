//! Exhaustive encode/decode checks over the whole instruction space: every 16-bit and every
//! 24-bit word either is refused or re-encodes to itself, every valid instruction of every opcode
//! decodes back to itself, and the number of legal words per opcode is exactly the product of its
//! field ranges (so no two opcodes overlap and none is missing).

use std::collections::HashMap;

use vsp_cahp::isa::{imm_range, Format, Inst, Op, Reg, OPCODES};

fn regs() -> impl Iterator<Item = Reg> + Clone {
    (0..16).filter_map(Reg::new)
}

/// Every valid instruction of `op`.
fn all_of(op: Op) -> Vec<Inst> {
    let imms: Vec<i32> = match imm_range(op) {
        Some((lo, hi, step)) => (lo..=hi).filter(|v| v % step == 0).collect(),
        None => vec![0],
    };
    let z = || std::iter::once(Reg::default());
    let (rd, rs1, rs2): (Vec<Reg>, Vec<Reg>, Vec<Reg>) = match op.format() {
        Format::Load | Format::I | Format::Shift | Format::R2 => {
            (regs().collect(), regs().collect(), z().collect())
        }
        Format::Store | Format::Branch => (z().collect(), regs().collect(), regs().collect()),
        Format::Li | Format::Imm6 | Format::Lui | Format::Shift2 => {
            (regs().collect(), z().collect(), z().collect())
        }
        Format::R => (regs().collect(), regs().collect(), regs().collect()),
        Format::Sp if op == Op::Lwsp => (regs().collect(), z().collect(), z().collect()),
        Format::Sp => (z().collect(), z().collect(), regs().collect()),
        Format::JReg => (z().collect(), regs().collect(), z().collect()),
        Format::JImm | Format::None => (z().collect(), z().collect(), z().collect()),
    };
    let mut out = Vec::new();
    for &a in &rd {
        for &b in &rs1 {
            for &c in &rs2 {
                for &i in &imms {
                    out.push(Inst {
                        op,
                        rd: a,
                        rs1: b,
                        rs2: c,
                        imm: i,
                    });
                }
            }
        }
    }
    out
}

#[test]
fn every_valid_instruction_round_trips() {
    for row in OPCODES {
        let all = all_of(row.op);
        assert!(!all.is_empty());
        for inst in all {
            let bytes = inst.to_bytes().unwrap_or_else(|e| panic!("{inst:?}: {e}"));
            assert_eq!(bytes.len(), usize::from(row.len));
            assert_eq!(
                Inst::decode(&bytes).unwrap(),
                inst,
                "{inst:?} -> {bytes:02x?}"
            );
        }
    }
}

#[test]
fn every_word_decodes_canonically_and_counts_match() {
    let mut counts: HashMap<Op, usize> = HashMap::new();
    // 16-bit space: bit 0 clear.
    for w in (0u32..0x1_0000).step_by(2) {
        if let Ok(i) = Inst::decode_word(w) {
            assert_eq!(i.encode().unwrap(), w, "{w:04x}");
            assert_eq!(i.size(), 2);
            *counts.entry(i.op).or_default() += 1;
        }
    }
    // 24-bit space: bit 0 set.
    for w in (1u32..0x100_0000).step_by(2) {
        if let Ok(i) = Inst::decode_word(w) {
            assert_eq!(i.encode().unwrap(), w, "{w:06x}");
            assert_eq!(i.size(), 3);
            *counts.entry(i.op).or_default() += 1;
        }
    }
    for row in OPCODES {
        assert_eq!(
            counts.get(&row.op).copied().unwrap_or(0),
            all_of(row.op).len(),
            "{}",
            row.mnemonic
        );
    }
}

#[test]
fn out_of_range_and_unused_fields_are_refused() {
    let b = Inst::bare;
    assert!(b(Op::Addi).with_imm(512).encode().is_err());
    assert!(b(Op::Addi).with_imm(-513).encode().is_err());
    assert!(b(Op::Lwsp).with_imm(3).encode().is_err());
    assert!(b(Op::Lwsp).with_imm(128).encode().is_err());
    assert!(b(Op::Lsli).with_imm(16).encode().is_err());
    assert!(b(Op::Lui).with_imm(64).encode().is_err());
    assert!(b(Op::Js).with_imm(1024).encode().is_err());
    assert!(b(Op::Nop).with_rd(Reg::SP).encode().is_err());
    assert!(b(Op::Mov).with_imm(1).encode().is_err());
    assert!(Inst::decode(&[0x01]).is_err());
    assert!(Inst::decode(&[]).is_err());
    // 24-bit add with bits 23:20 set is reserved.
    assert!(Inst::decode(&[0x01, 0x00, 0x10]).is_err());
}
