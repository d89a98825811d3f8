//! Instruction selection: a mnemonic with operands becomes a chain of candidate encodings
//! ("forms"), shortest first. The layout pass picks the first form that fits the operand value;
//! for values that depend on labels only forms that accept a superset of the previous form's values
//! are offered, so growing sizes is always enough to converge (§1.4 compression rules).

use super::expr::{hi6, lo10, Expr};
use super::parse::Operand;
use super::AsmErrorKind;
use crate::isa::{Inst, Op, Reg};

#[derive(Clone, Debug)]
pub(crate) enum Form {
    /// One instruction whose `imm` is the operand value.
    One { inst: Inst, const_only: bool },
    /// Instructions that do not depend on a value.
    Fixed(Vec<Inst>),
    /// `lui rd, hi(v)` then `addi2 rd, lo(v)` (`short`, lo must fit 6 bits) or `addi rd, rd, lo(v)`.
    LuiAddi {
        rd: Reg,
        short: bool,
        const_only: bool,
    },
    /// `lui rd, hi(v)` alone (lo(v) = 0).
    LuiOnly { rd: Reg },
    /// `call` beyond the ±1 KiB of `jsal` (a ROM over 2 KiB): `lui t0, hi(t); addi t0, t0, lo(t);
    /// jalr t0` with the absolute target `t` (the operand is pc-relative, so `emit` adds the pc).
    FarCall,
}

/// The register a far `call` goes through: t0, caller-saved and no argument register.
const FAR_CALL_REG: Reg = Reg(14);

impl Form {
    pub fn const_only(&self) -> bool {
        match self {
            Form::One { const_only, .. } | Form::LuiAddi { const_only, .. } => *const_only,
            Form::LuiOnly { .. } => true,
            Form::Fixed(_) | Form::FarCall => false,
        }
    }

    pub fn size(&self) -> usize {
        match self {
            Form::One { inst, .. } => usize::from(inst.size()),
            Form::Fixed(v) => v.iter().map(|i| usize::from(i.size())).sum(),
            Form::LuiAddi { short, .. } => {
                if *short {
                    4
                } else {
                    5
                }
            }
            Form::LuiOnly { .. } => 2,
            Form::FarCall => 7,
        }
    }

    pub fn fits(&self, v: i64) -> bool {
        match self {
            Form::One { inst, .. } => {
                i32::try_from(v).is_ok_and(|v| inst.with_imm(v).check().is_ok())
            }
            Form::Fixed(_) | Form::FarCall => true,
            Form::LuiAddi { short, .. } => !*short || (-32..=31).contains(&lo10(v)),
            Form::LuiOnly { .. } => lo10(v) == 0,
        }
    }

    /// The instructions for value `v` (which `fits`) of the instruction at `pc`.
    pub fn emit(&self, v: i64, pc: i64) -> Vec<Inst> {
        match self {
            Form::FarCall => {
                let t = v + pc;
                let rd = FAR_CALL_REG;
                vec![
                    Inst::bare(Op::Lui).with_rd(rd).with_imm(hi6(t) as i32),
                    Inst::bare(Op::Addi)
                        .with_rd(rd)
                        .with_rs1(rd)
                        .with_imm(lo10(t) as i32),
                    Inst::bare(Op::Jalr).with_rs1(rd),
                ]
            }
            Form::One { inst, .. } => vec![inst.with_imm(v as i32)],
            Form::Fixed(v) => v.clone(),
            Form::LuiAddi { rd, short, .. } => {
                let lui = Inst::bare(Op::Lui).with_rd(*rd).with_imm(hi6(v) as i32);
                let lo = lo10(v) as i32;
                let add = if *short {
                    Inst::bare(Op::Addi2).with_rd(*rd).with_imm(lo)
                } else {
                    Inst::bare(Op::Addi).with_rd(*rd).with_rs1(*rd).with_imm(lo)
                };
                vec![lui, add]
            }
            Form::LuiOnly { rd } => vec![Inst::bare(Op::Lui).with_rd(*rd).with_imm(hi6(v) as i32)],
        }
    }
}

/// A selected instruction statement.
#[derive(Clone, Debug)]
pub(crate) struct InstItem {
    pub mnemonic: String,
    pub forms: Vec<Form>,
    pub expr: Option<Expr>,
    pub expr_col: u32,
    /// The value is `expr - address of this instruction` (branches, js, jsal).
    pub pcrel: bool,
    /// `li`: any 16-bit value, given signed or unsigned.
    pub wrap16: bool,
}

type LResult<T> = Result<T, (u32, AsmErrorKind)>;

fn one(inst: Inst) -> Form {
    Form::One {
        inst,
        const_only: false,
    }
}

struct Ops<'a> {
    m: &'a str,
    ops: &'a [(Operand, u32)],
    col: u32,
}

impl Ops<'_> {
    fn count(&self, n: usize, usage: &'static str) -> LResult<()> {
        if self.ops.len() == n {
            Ok(())
        } else {
            let col = self.ops.get(n).map(|o| o.1).unwrap_or(self.col);
            Err((
                col,
                AsmErrorKind::OperandCount {
                    mnemonic: self.m.to_string(),
                    expected: n,
                    found: self.ops.len(),
                    usage,
                },
            ))
        }
    }
    fn kind_err(&self, i: usize, expected: &'static str) -> (u32, AsmErrorKind) {
        (
            self.ops[i].1,
            AsmErrorKind::OperandKind {
                mnemonic: self.m.to_string(),
                index: i + 1,
                expected,
            },
        )
    }
    fn reg(&self, i: usize) -> LResult<Reg> {
        match &self.ops[i].0 {
            Operand::Reg(r) => Ok(*r),
            // A bare name where a register belongs is a misspelt register.
            Operand::Expr(Expr::Sym(name, c)) => Err((*c, AsmErrorKind::BadRegister(name.clone()))),
            _ => Err(self.kind_err(i, "a register")),
        }
    }
    fn is_reg(&self, i: usize) -> bool {
        matches!(self.ops[i].0, Operand::Reg(_))
    }
    fn expr(&self, i: usize) -> LResult<(Expr, u32)> {
        match &self.ops[i].0 {
            Operand::Expr(e) => Ok((e.clone(), self.ops[i].1)),
            _ => Err(self.kind_err(i, "an immediate or label")),
        }
    }
    fn mem(&self, i: usize) -> LResult<(Expr, Reg, u32)> {
        match &self.ops[i].0 {
            Operand::Mem(e, r) => Ok((e.clone(), *r, self.ops[i].1)),
            _ => Err(self.kind_err(i, "a memory operand `offset(reg)`")),
        }
    }
}

/// (3-register op, 16-bit 2-operand op, immediate op, 16-bit immediate op, commutative)
type AluOps = (Op, Op, Option<Op>, Option<Op>, bool);

fn alu_op(m: &str) -> Option<AluOps> {
    // (3-register op, 16-bit 2-operand op, immediate op, 16-bit immediate op, commutative)
    Some(match m {
        "add" => (Op::Add, Op::Add2, Some(Op::Addi), Some(Op::Addi2), true),
        "sub" => (Op::Sub, Op::Sub2, Some(Op::Addi), Some(Op::Addi2), false),
        "and" => (Op::And, Op::And2, Some(Op::Andi), Some(Op::Andi2), true),
        "xor" => (Op::Xor, Op::Xor2, Some(Op::Xori), None, true),
        "or" => (Op::Or, Op::Or2, Some(Op::Ori), None, true),
        "lsl" => (Op::Lsl, Op::Lsl2, Some(Op::Lsli), Some(Op::Lsli2), false),
        "lsr" => (Op::Lsr, Op::Lsr2, Some(Op::Lsri), Some(Op::Lsri2), false),
        "asr" => (Op::Asr, Op::Asr2, Some(Op::Asri), Some(Op::Asri2), false),
        _ => return None,
    })
}

fn imm_op(m: &str) -> Option<(Op, Option<Op>)> {
    Some(match m {
        "addi" => (Op::Addi, Some(Op::Addi2)),
        "andi" => (Op::Andi, Some(Op::Andi2)),
        "xori" => (Op::Xori, None),
        "ori" => (Op::Ori, None),
        "lsli" => (Op::Lsli, Some(Op::Lsli2)),
        "lsri" => (Op::Lsri, Some(Op::Lsri2)),
        "asri" => (Op::Asri, Some(Op::Asri2)),
        _ => return None,
    })
}

fn branch_op(m: &str) -> Option<(Op, bool)> {
    // (machine op, operands swapped)
    Some(match m {
        "beq" => (Op::Beq, false),
        "bne" => (Op::Bne, false),
        "blt" => (Op::Blt, false),
        "bltu" => (Op::Bltu, false),
        "ble" => (Op::Ble, false),
        "bleu" => (Op::Bleu, false),
        "bgt" => (Op::Blt, true),
        "bge" => (Op::Ble, true),
        "bgtu" => (Op::Bltu, true),
        "bgeu" => (Op::Bleu, true),
        _ => return None,
    })
}

/// `rd = rs (op) imm` with optional 16-bit form when rd == rs.
fn imm_forms(op: Op, short: Option<Op>, rd: Reg, rs: Reg, compress: bool) -> Vec<Form> {
    let mut f = Vec::new();
    if let (Some(s), true, true) = (short, rd == rs, compress) {
        f.push(one(Inst::bare(s).with_rd(rd)));
    }
    f.push(one(Inst::bare(op).with_rd(rd).with_rs1(rs)));
    f
}

/// Selects the forms for one statement.
pub(crate) fn select(
    word: &str,
    ops: &[(Operand, u32)],
    compress: bool,
    col: u32,
) -> LResult<InstItem> {
    let lower = word.to_ascii_lowercase();
    let m = lower.as_str();
    let o = Ops { m: word, ops, col };
    let mut item = InstItem {
        mnemonic: word.to_string(),
        forms: Vec::new(),
        expr: None,
        expr_col: col,
        pcrel: false,
        wrap16: false,
    };
    let fixed = |v: Vec<Inst>| vec![Form::Fixed(v)];
    let b = Inst::bare;
    if let Some((r3, r2, ri, ri2, commutative)) = alu_op(m) {
        o.count(3, "rd, rs1, rs2 or rd, rs1, imm")?;
        let (rd, rs1) = (o.reg(0)?, o.reg(1)?);
        if o.is_reg(2) {
            let rs2 = o.reg(2)?;
            item.forms = fixed(vec![if compress && rd == rs1 {
                b(r2).with_rd(rd).with_rs1(rs2)
            } else if compress && commutative && rd == rs2 {
                b(r2).with_rd(rd).with_rs1(rs1)
            } else {
                b(r3).with_rd(rd).with_rs1(rs1).with_rs2(rs2)
            }]);
        } else {
            let (e, c) = o.expr(2)?;
            let ri = ri.ok_or_else(|| o.kind_err(2, "a register"))?;
            item.forms = imm_forms(ri, ri2, rd, rs1, compress);
            item.expr = Some(if m == "sub" {
                Expr::Neg(Box::new(e))
            } else {
                e
            });
            item.expr_col = c;
        }
        return Ok(item);
    }
    if let Some((op, short)) = imm_op(m) {
        o.count(3, "rd, rs1, imm")?;
        let (rd, rs1) = (o.reg(0)?, o.reg(1)?);
        let (e, c) = o.expr(2)?;
        item.forms = imm_forms(op, short, rd, rs1, compress);
        (item.expr, item.expr_col) = (Some(e), c);
        return Ok(item);
    }
    if let Some((op, swap)) = branch_op(m) {
        o.count(3, "rs1, rs2, target")?;
        let (mut r1, mut r2) = (o.reg(0)?, o.reg(1)?);
        if swap {
            std::mem::swap(&mut r1, &mut r2);
        }
        let (e, c) = o.expr(2)?;
        item.forms = vec![one(b(op).with_rs1(r1).with_rs2(r2))];
        (item.expr, item.expr_col, item.pcrel) = (Some(e), c, true);
        return Ok(item);
    }
    match m {
        "lw" | "lb" | "lbu" | "sw" | "sb" => {
            o.count(2, "reg, offset(base)")?;
            let r = o.reg(0)?;
            let (e, base, c) = o.mem(1)?;
            let op =
                Op::from_mnemonic(m).ok_or((col, AsmErrorKind::UnknownMnemonic(word.into())))?;
            let store = matches!(op, Op::Sw | Op::Sb);
            let long = if store {
                b(op).with_rs2(r).with_rs1(base)
            } else {
                b(op).with_rd(r).with_rs1(base)
            };
            if compress && base == Reg::SP && op == Op::Lw {
                item.forms.push(one(b(Op::Lwsp).with_rd(r)));
            }
            if compress && base == Reg::SP && op == Op::Sw {
                item.forms.push(one(b(Op::Swsp).with_rs2(r)));
            }
            item.forms.push(one(long));
            (item.expr, item.expr_col) = (Some(e), c);
        }
        "lwsp" | "swsp" => {
            o.count(2, "reg, offset(sp)")?;
            let r = o.reg(0)?;
            let (e, base, c) = o.mem(1)?;
            if base != Reg::SP {
                return Err((
                    c,
                    AsmErrorKind::OperandKind {
                        mnemonic: word.into(),
                        index: 2,
                        expected: "a memory operand based on sp",
                    },
                ));
            }
            let inst = if m == "lwsp" {
                b(Op::Lwsp).with_rd(r)
            } else {
                b(Op::Swsp).with_rs2(r)
            };
            item.forms = vec![one(inst)];
            (item.expr, item.expr_col) = (Some(e), c);
        }
        "li" | "la" => {
            o.count(2, "rd, value")?;
            let rd = o.reg(0)?;
            let (e, c) = o.expr(1)?;
            let symbolic = e.is_symbolic();
            let mut f = Vec::new();
            if compress {
                f.push(one(b(Op::Lsi).with_rd(rd)));
            }
            f.push(one(b(Op::Li).with_rd(rd)));
            if compress && !symbolic {
                f.push(Form::LuiOnly { rd });
                f.push(Form::LuiAddi {
                    rd,
                    short: true,
                    const_only: true,
                });
            }
            f.push(Form::LuiAddi {
                rd,
                short: false,
                const_only: false,
            });
            item.forms = f;
            (item.expr, item.expr_col, item.wrap16) = (Some(e), c, true);
        }
        "lsi" | "lui" | "addi2" | "andi2" | "lsli2" | "lsri2" | "asri2" => {
            o.count(2, "rd, imm")?;
            let rd = o.reg(0)?;
            let (e, c) = o.expr(1)?;
            let op =
                Op::from_mnemonic(m).ok_or((col, AsmErrorKind::UnknownMnemonic(word.into())))?;
            item.forms = vec![one(b(op).with_rd(rd))];
            (item.expr, item.expr_col) = (Some(e), c);
        }
        "mov" | "mv" | "add2" | "sub2" | "and2" | "xor2" | "or2" | "lsl2" | "lsr2" | "asr2" => {
            o.count(2, "rd, rs")?;
            let (rd, rs) = (o.reg(0)?, o.reg(1)?);
            let op = Op::from_mnemonic(if m == "mv" { "mov" } else { m })
                .ok_or((col, AsmErrorKind::UnknownMnemonic(word.into())))?;
            item.forms = fixed(vec![b(op).with_rd(rd).with_rs1(rs)]);
        }
        "not" | "neg" => {
            o.count(2, "rd, rs")?;
            let (rd, rs) = (o.reg(0)?, o.reg(1)?);
            let mut v = vec![b(Op::Xori).with_rd(rd).with_rs1(rs).with_imm(-1)];
            if m == "neg" {
                v.push(b(Op::Addi2).with_rd(rd).with_imm(1));
            }
            item.forms = fixed(v);
        }
        "js" | "j" | "jsal" | "call" => {
            o.count(1, "target")?;
            let (e, c) = o.expr(0)?;
            let op = if m == "js" || m == "j" {
                Op::Js
            } else {
                Op::Jsal
            };
            item.forms = vec![one(b(op))];
            if m == "call" {
                // Beyond ±1 KiB (only in a ROM over 2 KiB) through t0: a call clobbers it anyway.
                item.forms.push(Form::FarCall);
            }
            (item.expr, item.expr_col, item.pcrel) = (Some(e), c, true);
        }
        "jr" | "jalr" => {
            o.count(1, "rs")?;
            let rs = o.reg(0)?;
            item.forms = fixed(vec![
                b(if m == "jr" { Op::Jr } else { Op::Jalr }).with_rs1(rs)
            ]);
        }
        "ret" => {
            o.count(0, "no operands")?;
            item.forms = fixed(vec![b(Op::Jr).with_rs1(Reg::RA)]);
        }
        "hlt" => {
            o.count(0, "no operands")?;
            item.forms = fixed(vec![b(Op::Js)]);
        }
        "nop" => {
            o.count(0, "no operands")?;
            item.forms = fixed(vec![b(Op::Nop)]);
        }
        _ => return Err((col, AsmErrorKind::UnknownMnemonic(word.to_string()))),
    }
    Ok(item)
}
