//! Instruction selection: one LLVM IR function → machine IR over virtual registers.
//!
//! Values of type i1/i8/i16/ptr live in one register, i32 in a (lo, hi) pair. An `i8` register may hold
//! garbage in its upper byte unless its extension is known ([`Ext`]); consumers that care extend it.
//! Compares feeding a single branch or select are fused into the CAHPv3 compare-and-branch; pointer
//! values used only as addresses stay symbolic (`sym + reg + frame + imm`) and fold into `lw/sw`
//! offsets. Phis become parallel copies on the incoming edges (critical edges are split).

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::error::{unsupported, Result};
use crate::ir::{Const, Function, Module, Op, Operand, Pred, Type, Value};
use crate::mir::{Alu, Cond, FrameObj, MBlock, MFunc, MInst, Off, Reg, Width, FIRST_VREG, SP};

/// Known extension of the upper byte of a register holding an i8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ext {
    Sign,
    Zero,
}

/// A symbolic address: `reg + sym + frame object + imm`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Addr {
    pub reg: Option<Reg>,
    pub sym: Option<String>,
    pub fi: Option<usize>,
    pub imm: i32,
}

/// An IR value after selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val {
    /// One 16-bit register.
    R(Reg),
    /// An i32 as (lo, hi).
    P(Reg, Reg),
    /// An address not (yet) in a register.
    A(Addr),
    /// A wider integer (i48, i64, …) as 16-bit words, low first.
    W(Vec<Reg>),
}

/// Per-function selection state.
pub(crate) struct Ctx<'m> {
    pub m: &'m Module,
    pub f: MFunc,
    pub cur: usize,
    pub line: usize,
    pub vals: HashMap<String, Val>,
    pub ext: HashMap<Reg, Ext>,
    /// Registers holding an address known to be even (materialized from one; see `addr_even`).
    pub even: HashSet<Reg>,
    /// A bound on the program's static data addresses (0: unknown, every global in reach).
    pub data_end: u64,
    /// The module's globals and their placement alignment (looked up on every memory access).
    pub global_align: HashMap<&'m str, u64>,
    pub block_ids: HashMap<String, usize>,
    /// icmp results consumed by exactly one branch/select: lowered at the consumer.
    pub fused: HashMap<String, (Pred, Operand, Operand)>,
    /// Pointer values used only as load/store addresses or GEP bases.
    pub addr_only: HashSet<String>,
    /// i8 loads whose users want a sign-extended value.
    pub signed_loads: HashSet<String>,
    /// Runtime helpers and other functions called.
    pub called: BTreeSet<String>,
    /// Offset (in words) of the first variadic argument in the incoming stack area.
    pub va_words: u32,
    /// Phi copies to place on edges: (pred block, succ block, dst, incoming value, type).
    pub phi_copies: Vec<(usize, usize, Val, Value, Type)>,
    /// Block-local value numbering of constants and extensions: (block, key) → register.
    pub cse: HashMap<(usize, CseKey), Reg>,
    /// Registers made by [`Ctx::li`] (defined once) and their constant.
    pub consts: HashMap<Reg, i32>,
}

/// Keys of [`Ctx::cse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum CseKey {
    Const(i32),
    Ext(Reg, bool),
}

/// Number of 16-bit pieces of a scalar type, or an error naming it.
pub(crate) fn pieces(m: &Module, ty: &Type, line: usize) -> Result<usize> {
    match m.resolve(ty) {
        Type::Int(1..=16) | Type::Ptr => Ok(1),
        Type::Int(17..=32) => Ok(2),
        // 64-bit (long long) and the other multiples of 16 up to it: one register per word.
        Type::Int(b) if *b <= 64 && b % 16 == 0 => Ok((*b / 16) as usize),
        Type::Int(b) if *b <= 64 => unsupported(
            line,
            format!("{b}-bit integers (only 8, 16, 32, 48 and 64 bits are lowered beyond 16)"),
        ),
        Type::Int(b) => unsupported(line, format!("{b}-bit integers (wider than long long)")),
        Type::Void => Ok(0),
        Type::Other(w) => unsupported(line, format!("type '{w}' (no floating point or vectors)")),
        t => unsupported(
            line,
            format!("aggregate value of type {t:?} held in registers"),
        ),
    }
}

/// Integer width of a type (pointers are 16).
pub(crate) fn bits(m: &Module, ty: &Type) -> u32 {
    match m.resolve(ty) {
        Type::Int(b) => *b,
        _ => 16,
    }
}

impl<'m> Ctx<'m> {
    pub fn emit(&mut self, i: MInst) {
        if let Some(b) = self.f.blocks.get_mut(self.cur) {
            b.insts.push(i);
        }
    }

    pub fn vreg(&mut self) -> Reg {
        self.f.vreg()
    }

    pub fn li(&mut self, v: i128) -> Reg {
        let v = v as i16 as i32;
        let key = (self.cur, CseKey::Const(v));
        if let Some(r) = self.cse.get(&key) {
            return *r;
        }
        let rd = self.vreg();
        self.emit(MInst::Li { rd, v: Off::imm(v) });
        self.cse.insert(key, rd);
        self.consts.insert(rd, v);
        rd
    }

    pub fn alu(&mut self, op: Alu, rs1: Reg, rs2: Reg) -> Reg {
        let rd = self.vreg();
        self.emit(MInst::Alu { op, rd, rs1, rs2 });
        rd
    }

    /// A fresh register holding `t` where `a cond b`, else `f`.
    pub fn select_reg(&mut self, (cond, a, b): (Cond, Reg, Reg), t: Reg, f: Reg) -> Reg {
        let rd = self.vreg();
        self.emit(MInst::Select {
            cond,
            rd,
            a,
            b,
            t,
            f,
        });
        rd
    }

    /// Branches to block `target` where `a cond b`.
    pub fn branch(&mut self, (cond, a, b): (Cond, Reg, Reg), target: usize) {
        self.emit(MInst::Br { cond, a, b, target });
    }

    pub fn alui(&mut self, op: Alu, rs1: Reg, imm: i32) -> Reg {
        let rd = self.vreg();
        self.emit(MInst::AluI {
            op,
            rd,
            rs1,
            imm: Off::imm(imm),
        });
        rd
    }

    /// The selected form of an operand.
    pub fn val(&mut self, op: &Operand) -> Result<Val> {
        match &op.val {
            Value::Local(n) => match self.vals.get(n) {
                Some(v) => Ok(v.clone()),
                None => unsupported(self.line, format!("use of %{n} before its definition")),
            },
            Value::Const(k) => self.const_val(k, &op.ty),
        }
    }

    fn const_val(&mut self, k: &Const, ty: &Type) -> Result<Val> {
        let n = pieces(self.m, ty, self.line)?;
        if n > 2 {
            let v = match k {
                Const::Int(v) => *v,
                Const::Null | Const::Undef | Const::Zero => 0,
                other => return unsupported(self.line, format!("constant operand {other:?}")),
            };
            let words = (0..n).map(|k| self.li((v >> (16 * k)) & 0xFFFF)).collect();
            return Ok(Val::W(words));
        }
        let two = n == 2;
        let v = match k {
            Const::Int(v) => *v,
            Const::Null | Const::Undef | Const::Zero => 0,
            Const::Addr(s, o) => {
                return Ok(Val::A(Addr {
                    sym: Some(s.clone()),
                    imm: *o as i32,
                    ..Addr::default()
                }));
            }
            other => return unsupported(self.line, format!("constant operand {other:?}")),
        };
        if two {
            let lo = self.li(v & 0xFFFF);
            let hi = self.li((v >> 16) & 0xFFFF);
            Ok(Val::P(lo, hi))
        } else {
            let r = self.li(v);
            Ok(Val::R(r))
        }
    }

    /// An address in a register.
    pub fn materialize(&mut self, a: &Addr) -> Reg {
        let a = &self.in_reach(a, 0);
        let mut base = a.reg;
        if let (Some(r), Some(_)) = (base, a.fi) {
            base = Some(self.alu(Alu::Add, r, SP));
        }
        let off = Off {
            imm: a.imm,
            sym: a.sym.clone(),
            fi: a.fi,
        };
        let rd = self.vreg();
        if self.addr_even(a, 0) {
            self.even.insert(rd);
        }
        match (base, a.fi.is_some()) {
            (Some(r), _) if off == Off::default() => return r,
            (Some(r), _) => self.emit(MInst::AluI {
                op: Alu::Add,
                rd,
                rs1: r,
                imm: off,
            }),
            (None, true) => self.emit(MInst::AluI {
                op: Alu::Add,
                rd,
                rs1: SP,
                imm: off,
            }),
            (None, false) => self.emit(MInst::Li { rd, v: off }),
        }
        rd
    }

    /// Whether `a + extra` is provably even: an even constant plus parts that are each even (a
    /// register that holds a materialized even address, a frame object or a global aligned to 2).
    pub fn addr_even(&self, a: &Addr, extra: i32) -> bool {
        let reg_even = a.reg.is_none_or(|r| self.even.contains(&r));
        let frame_even =
            a.fi.is_none_or(|fi| self.f.frame.get(fi).is_some_and(|o| o.align >= 2));
        let sym_even = a
            .sym
            .as_ref()
            .is_none_or(|s| self.global_align.get(s.as_str()).is_some_and(|&al| al >= 2));
        (a.imm + extra) % 2 == 0 && reg_even && frame_even && sym_even
    }

    /// A 16-bit operand in a register.
    pub fn reg(&mut self, op: &Operand) -> Result<Reg> {
        match self.val(op)? {
            Val::R(r) => Ok(r),
            Val::P(lo, _) => Ok(lo),
            Val::A(a) => Ok(self.materialize(&a)),
            // The low word (what a truncation to 16 bits keeps).
            Val::W(v) => match v.first() {
                Some(r) => Ok(*r),
                None => unsupported(self.line, "an integer of no words"),
            },
        }
    }

    /// A 32-bit operand as (lo, hi).
    pub fn pair(&mut self, op: &Operand) -> Result<(Reg, Reg)> {
        match self.val(op)? {
            Val::P(lo, hi) => Ok((lo, hi)),
            Val::R(r) => Ok((r, self.li(0))),
            Val::A(a) => {
                let r = self.materialize(&a);
                Ok((r, self.li(0)))
            }
            Val::W(v) => match v[..] {
                [lo, hi, ..] => Ok((lo, hi)),
                _ => unsupported(self.line, "an integer of too few words"),
            },
        }
    }

    /// An operand as `n` 16-bit words, low first (narrower values are zero-extended).
    pub fn words(&mut self, op: &Operand, n: usize) -> Result<Vec<Reg>> {
        let mut v = match self.val(op)? {
            Val::W(v) => v,
            Val::P(lo, hi) => vec![lo, hi],
            Val::R(r) => vec![r],
            Val::A(a) => vec![self.materialize(&a)],
        };
        if v.len() < n {
            let z = self.li(0);
            v.resize(n, z);
        }
        v.truncate(n);
        Ok(v)
    }

    /// An operand as an address.
    pub fn addr(&mut self, op: &Operand) -> Result<Addr> {
        Ok(match self.val(op)? {
            Val::A(a) => a,
            Val::R(r) | Val::P(r, _) => Addr {
                reg: Some(r),
                ..Addr::default()
            },
            Val::W(v) => match v.first() {
                Some(r) => Addr {
                    reg: Some(*r),
                    ..Addr::default()
                },
                None => return unsupported(self.line, "an integer of no words used as a pointer"),
            },
        })
    }

    /// Whether `sym + imm` fits a 10-bit immediate: always for symbols that are not globals (and
    /// when the data's extent is unknown), for globals while the static data bound allows it.
    fn sym_in_reach(&self, sym: &str, imm: i32) -> bool {
        if self.data_end == 0 || !self.global_align.contains_key(sym) {
            return true;
        }
        imm >= -512 && self.data_end.saturating_add(imm.max(0) as u64) <= 511
    }

    /// `a` with a global out of 10-bit reach folded into its register part (`li` of the symbol's
    /// address, added to the register): `sym+imm(reg)` cannot address static data past byte 511.
    fn in_reach(&mut self, a: &Addr, extra: i32) -> Addr {
        let (Some(sym), Some(r)) = (&a.sym, a.reg) else {
            return a.clone();
        };
        if self.sym_in_reach(sym, a.imm + extra) {
            return a.clone();
        }
        let t = self.vreg();
        self.emit(MInst::Li {
            rd: t,
            v: Off {
                imm: a.imm,
                sym: Some(sym.clone()),
                fi: None,
            },
        });
        let b = self.alu(Alu::Add, r, t);
        if self.addr_even(a, 0) {
            self.even.insert(b);
        }
        Addr {
            reg: Some(b),
            sym: None,
            fi: a.fi,
            imm: 0,
        }
    }

    /// Base register and offset for a memory access at `a + extra`.
    pub fn mem(&mut self, a: &Addr, extra: i32) -> (Reg, Off) {
        let a = &self.in_reach(a, extra);
        let imm = a.imm + extra;
        match (a.reg, a.fi) {
            (Some(r), None) => (
                r,
                Off {
                    imm,
                    sym: a.sym.clone(),
                    fi: None,
                },
            ),
            (None, Some(fi)) => (
                SP,
                Off {
                    imm,
                    sym: a.sym.clone(),
                    fi: Some(fi),
                },
            ),
            (Some(r), Some(fi)) => {
                let b = self.alu(Alu::Add, r, SP);
                (
                    b,
                    Off {
                        imm,
                        sym: a.sym.clone(),
                        fi: Some(fi),
                    },
                )
            }
            (None, None) => {
                let rd = self.vreg();
                self.emit(MInst::Li {
                    rd,
                    v: Off {
                        imm,
                        sym: a.sym.clone(),
                        fi: None,
                    },
                });
                (rd, Off::imm(0))
            }
        }
    }

    /// `r` with its upper byte extended from bit 7 as asked (i8 values).
    pub fn ext8(&mut self, r: Reg, e: Ext) -> Reg {
        if self.ext.get(&r) == Some(&e) {
            return r;
        }
        let key = (self.cur, CseKey::Ext(r, e == Ext::Sign));
        if let Some(x) = self.cse.get(&key) {
            return *x;
        }
        let rd = match e {
            Ext::Zero => self.alui(Alu::And, r, 0xFF),
            Ext::Sign => {
                let t = self.alui(Alu::Lsl, r, 8);
                self.alui(Alu::Asr, t, 8)
            }
        };
        self.ext.insert(rd, e);
        self.cse.insert(key, rd);
        rd
    }

    /// A 16-bit operand normalised for a comparison/division of width `bits`.
    pub fn norm(&mut self, op: &Operand, e: Ext) -> Result<Reg> {
        let b = bits(self.m, &op.ty);
        if let (8, Value::Const(Const::Int(v))) = (b, &op.val) {
            let v = if e == Ext::Sign {
                i128::from(*v as i8)
            } else {
                i128::from(*v as u8)
            };
            let r = self.li(v);
            // A shared constant register keeps the extension it was first made with.
            if self.ext.get(&r).is_some_and(|x| *x != e) {
                let rd = self.vreg();
                self.emit(MInst::Li {
                    rd,
                    v: Off::imm(v as i16 as i32),
                });
                self.ext.insert(rd, e);
                return Ok(rd);
            }
            self.ext.insert(r, e);
            return Ok(r);
        }
        let r = self.reg(op)?;
        Ok(match b {
            8 => self.ext8(r, e),
            b if b < 16 && b != 1 => {
                let k = (16 - b) as i32;
                let t = self.alui(Alu::Lsl, r, k);
                self.alui(if e == Ext::Sign { Alu::Asr } else { Alu::Lsr }, t, k)
            }
            _ => r,
        })
    }

    /// A new frame object.
    pub fn frame_obj(&mut self, size: u32, align: u32) -> usize {
        self.f.frame.push(FrameObj {
            size,
            align,
            incoming: None,
        });
        self.f.frame.len() - 1
    }

    /// Creates the context for `func`.
    pub fn new(m: &'m Module, func: &Function) -> Self {
        let mut block_ids = HashMap::new();
        for (i, b) in func.blocks.iter().enumerate() {
            block_ids.insert(b.name.clone(), i);
        }
        let f = MFunc {
            name: func.name.clone(),
            blocks: vec![MBlock::default(); func.blocks.len()],
            next_vreg: FIRST_VREG,
            no_callee_saves: func.name == "main",
            global: !func.local,
            ..MFunc::default()
        };
        Ctx {
            m,
            f,
            cur: 0,
            line: func.line,
            vals: HashMap::new(),
            ext: HashMap::new(),
            even: HashSet::new(),
            data_end: 0,
            global_align: m
                .globals
                .iter()
                .map(|g| (g.name.as_str(), m.global_align(g)))
                .collect(),
            block_ids,
            fused: HashMap::new(),
            addr_only: HashSet::new(),
            signed_loads: HashSet::new(),
            called: BTreeSet::new(),
            va_words: 0,
            phi_copies: Vec::new(),
            cse: HashMap::new(),
            consts: HashMap::new(),
        }
    }

    /// Block index of a label.
    pub fn block(&self, name: &str) -> Result<usize> {
        match self.block_ids.get(name) {
            Some(b) => Ok(*b),
            None => unsupported(self.line, format!("branch to unknown label %{name}")),
        }
    }

    /// Lowers a condition operand to (cond, a, b) for a branch or select.
    pub fn cond_of(&mut self, c: &Operand) -> Result<(Cond, Reg, Reg)> {
        if let Value::Local(n) = &c.val {
            if let Some((p, a, b)) = self.fused.get(n).cloned() {
                return self.cmp(p, &a, &b);
            }
        }
        let r = self.reg(c)?;
        let z = self.li(0);
        Ok((Cond::Ne, r, z))
    }

    /// A value of `n` registers as a [`Val`].
    pub fn val_of(regs: Vec<Reg>) -> Val {
        match regs.len() {
            1 => Val::R(regs[0]),
            2 => Val::P(regs[0], regs[1]),
            _ => Val::W(regs),
        }
    }
}

/// Analyses uses: fusable compares, address-only pointers, signed byte loads.
pub(crate) fn analyse(cx: &mut Ctx, func: &Function) {
    let mut uses: HashMap<&str, Vec<(&Op, usize)>> = HashMap::new();
    let mut defs: HashMap<&str, &Op> = HashMap::new();
    let local = |o: &'_ Operand| -> Option<String> {
        match &o.val {
            Value::Local(n) => Some(n.clone()),
            _ => None,
        }
    };
    let mut all_ops: Vec<(&Op, usize)> = Vec::new();
    for b in &func.blocks {
        for i in &b.insts {
            if let Some(r) = &i.result {
                defs.insert(r.as_str(), &i.op);
            }
            all_ops.push((&i.op, i.line));
        }
    }
    let _ = local;
    for (op, line) in &all_ops {
        for name in op_locals(op) {
            if let Some((k, _)) = defs.get_key_value(name.as_str()) {
                uses.entry(k).or_default().push((op, *line));
            }
        }
    }
    for (name, def) in &defs {
        let us = uses.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let is = |o: &Operand| matches!(&o.val, Value::Local(n) if n == name);
        match def {
            Op::Icmp(p, a, b) if us.len() == 1 => {
                let ok = match us[0].0 {
                    Op::CondBr(c, _, _) => is(c),
                    Op::Select(c, x, y) => is(c) && !is(x) && !is(y),
                    _ => false,
                };
                if ok {
                    cx.fused
                        .insert(name.to_string(), (*p, a.clone(), b.clone()));
                }
            }
            Op::Gep(..) | Op::Alloca(..) | Op::Cast(..) => {
                let only_addr = us.iter().all(|(u, _)| match u {
                    Op::Load(_, p, _) => is(p),
                    Op::Store(v, p, _) => is(p) && !is(v),
                    Op::Gep(_, base, idx) => is(base) && !idx.iter().any(is),
                    _ => false,
                });
                if only_addr {
                    cx.addr_only.insert(name.to_string());
                }
            }
            Op::Load(Type::Int(8), _, _) => {
                let signed = us.iter().any(|(u, _)| match u {
                    Op::Cast(crate::ir::CastOp::SExt, ..) => true,
                    Op::Call { callee, .. } => matches!(&callee.val, Value::Const(Const::Addr(n, _))
                        if n.starts_with("llvm.smax") || n.starts_with("llvm.smin") || n.starts_with("llvm.abs")),
                    Op::Icmp(p, ..) => matches!(p, Pred::Sgt | Pred::Sge | Pred::Slt | Pred::Sle),
                    Op::Bin(k, a, _) => {
                        matches!(k, crate::ir::BinOp::AShr | crate::ir::BinOp::SDiv | crate::ir::BinOp::SRem)
                            && is(a)
                    }
                    _ => false,
                });
                if signed {
                    cx.signed_loads.insert(name.to_string());
                }
            }
            _ => {}
        }
    }
}

/// Local names an operation reads.
pub(crate) fn op_locals(op: &Op) -> Vec<String> {
    let mut v = Vec::new();
    let mut add = |o: &Operand| {
        if let Value::Local(n) = &o.val {
            v.push(n.clone());
        }
    };
    match op {
        Op::Bin(_, a, b) | Op::Icmp(_, a, b) | Op::Store(a, b, _) => {
            add(a);
            add(b);
        }
        Op::Select(c, a, b) => {
            add(c);
            add(a);
            add(b);
        }
        Op::Phi(_, inc) => {
            for (val, _) in inc {
                if let Value::Local(n) = val {
                    v.push(n.clone());
                }
            }
        }
        Op::Load(_, p, _)
        | Op::Cast(_, p, _)
        | Op::VaArg(p, _)
        | Op::CondBr(p, _, _)
        | Op::Switch(p, _, _) => add(p),
        Op::Gep(_, base, idx) => {
            add(base);
            idx.iter().for_each(&mut add);
        }
        Op::Call { callee, args, .. } => {
            add(callee);
            args.iter().for_each(|a| add(&a.op));
        }
        Op::Ret(Some(o)) => add(o),
        Op::Alloca(..) | Op::Br(_) | Op::Ret(None) | Op::Unreachable => {}
    }
    v
}

/// Whether a constant fits a signed 10-bit immediate.
pub(crate) fn simm10(v: i128) -> bool {
    (-512..=511).contains(&v)
}

/// Interprets an i16-or-narrower constant as a signed 16-bit value.
pub(crate) fn as_i16(v: i128) -> i128 {
    i128::from(v as i16)
}

/// Width-specific signedness for a predicate.
pub(crate) fn pred_ext(p: Pred) -> Ext {
    match p {
        Pred::Sgt | Pred::Sge | Pred::Slt | Pred::Sle => Ext::Sign,
        _ => Ext::Zero,
    }
}

/// Load width for a byte load.
pub(crate) fn byte_width(signed: bool) -> Width {
    if signed {
        Width::ByteS
    } else {
        Width::ByteU
    }
}
