//! Instruction selection of the individual IR operations (arithmetic, compares, casts, memory).

use crate::error::{unsupported, Result};
use crate::ir::{BinOp, CastOp, Const, Operand, Pred, Type, Value};
use crate::isel::{as_i16, bits, byte_width, pieces, pred_ext, simm10, Addr, Ctx, Ext, Val};
use crate::mir::{Alu, Callee, Cond, MInst, Reg, Width, A0, ARG_REGS};

/// Runtime helper for a 16-bit (or narrower) operation.
fn helper16(k: BinOp) -> &'static str {
    match k {
        BinOp::Mul => "__mulhi3",
        BinOp::SDiv => "__divhi3",
        BinOp::SRem => "__modhi3",
        BinOp::UDiv => "__udivhi3",
        _ => "__umodhi3",
    }
}

/// Runtime helper for a 32-bit operation.
pub(crate) fn helper32(k: BinOp) -> Option<&'static str> {
    Some(match k {
        BinOp::Mul => "__mulsi3",
        BinOp::SDiv => "__divsi3",
        BinOp::SRem => "__modsi3",
        BinOp::UDiv => "__udivsi3",
        BinOp::URem => "__umodsi3",
        BinOp::Shl => "__ashlsi3",
        BinOp::LShr => "__lshrsi3",
        BinOp::AShr => "__ashrsi3",
        _ => return None,
    })
}

/// Number of words of an integer wider than 32 bits (only moved through memory).
fn wide_words(m: &crate::ir::Module, ty: &Type) -> Option<usize> {
    match m.resolve(ty) {
        Type::Int(b) if *b > 32 && b % 16 == 0 => Some((*b / 16) as usize),
        _ => None,
    }
}

pub(crate) fn const_of(o: &Operand) -> Option<i128> {
    match &o.val {
        Value::Const(Const::Int(v)) => Some(*v),
        Value::Const(Const::Null | Const::Zero) => Some(0),
        _ => None,
    }
}

impl<'m> Ctx<'m> {
    /// Passes the 16-bit pieces `args` of a call: the first `in_regs` in a0.., the rest in the
    /// outgoing stack area (piece k at sp + 2k), which grows to hold them.
    pub(crate) fn pass_args(&mut self, args: &[Reg], in_regs: usize) {
        let stack = &args[in_regs..];
        for (k, r) in stack.iter().enumerate() {
            self.emit(MInst::Store {
                w: Width::Word,
                rs: *r,
                base: crate::mir::SP,
                off: crate::mir::Off::imm(2 * k as i32),
            });
        }
        self.f.out_args = self.f.out_args.max(2 * stack.len() as u32);
        for (i, a) in args[..in_regs].iter().enumerate() {
            self.emit(MInst::Mov {
                rd: ARG_REGS[i],
                rs: *a,
            });
        }
    }

    /// Calls helper `name` with 16-bit pieces `args` (the first six in a0..a5, the rest in the
    /// outgoing stack area, as for any call); returns the result registers.
    pub fn call_helper(&mut self, name: &str, args: &[Reg], nret: usize) -> Vec<Reg> {
        self.called.insert(name.to_string());
        self.f.has_calls = true;
        let in_regs = args.len().min(ARG_REGS.len());
        self.pass_args(args, in_regs);
        self.emit(MInst::Call {
            callee: Callee::Sym(name.to_string()),
            uses: ARG_REGS[..in_regs].to_vec(),
        });
        (0..nret)
            .map(|i| {
                let rd = self.vreg();
                self.emit(MInst::Mov {
                    rd,
                    rs: A0 + i as Reg,
                });
                rd
            })
            .collect()
    }

    /// `a pred b` as a branch condition on registers.
    pub fn cmp(&mut self, p: Pred, a: &Operand, b: &Operand) -> Result<(Cond, Reg, Reg)> {
        let n = pieces(self.m, &a.ty, self.line)?;
        if n > 2 {
            let z = self.li(0);
            if matches!(p, Pred::Eq | Pred::Ne) {
                // Branch on the OR of the word differences directly.
                let x = self.words(a, n)?;
                let y = self.words(b, n)?;
                let d = self.diff_words(&x, &y);
                return Ok((if p == Pred::Eq { Cond::Eq } else { Cond::Ne }, d, z));
            }
            let r = self.cmp_wide(p, a, b, n)?;
            return Ok((Cond::Ne, r, z));
        }
        if n == 2 {
            let r = self.cmp32(p, a, b)?;
            let z = self.li(0);
            return Ok((Cond::Ne, r, z));
        }
        let e = match (p, bits(self.m, &a.ty)) {
            (Pred::Eq | Pred::Ne, 8) => {
                // Equality needs both sides extended the same way; prefer what is already known.
                let known = |cx: &mut Self, o: &Operand| match &o.val {
                    Value::Local(n) => match cx.vals.get(n) {
                        Some(Val::R(r)) => cx.ext.get(r).copied(),
                        _ => None,
                    },
                    _ => None,
                };
                if known(self, a) == Some(Ext::Sign) && known(self, b) != Some(Ext::Zero) {
                    Ext::Sign
                } else {
                    Ext::Zero
                }
            }
            _ => pred_ext(p),
        };
        let ra = self.norm(a, e)?;
        let rb = self.norm(b, e)?;
        Ok(match p {
            Pred::Eq => (Cond::Eq, ra, rb),
            Pred::Ne => (Cond::Ne, ra, rb),
            Pred::Slt => (Cond::Lt, ra, rb),
            Pred::Sle => (Cond::Le, ra, rb),
            Pred::Sgt => (Cond::Lt, rb, ra),
            Pred::Sge => (Cond::Le, rb, ra),
            Pred::Ult => (Cond::Ltu, ra, rb),
            Pred::Ule => (Cond::Leu, ra, rb),
            Pred::Ugt => (Cond::Ltu, rb, ra),
            Pred::Uge => (Cond::Leu, rb, ra),
        })
    }

    pub(crate) fn setcc(&mut self, cond: Cond, a: Reg, b: Reg) -> Reg {
        let rd = self.vreg();
        self.emit(MInst::SetCc { cond, rd, a, b });
        rd
    }

    /// An icmp whose value is needed in a register.
    pub fn icmp_value(&mut self, p: Pred, a: &Operand, b: &Operand) -> Result<Val> {
        let (c, x, y) = self.cmp(p, a, b)?;
        Ok(Val::R(self.setcc(c, x, y)))
    }

    /// `select c, a, b`.
    pub fn select(&mut self, c: &Operand, a: &Operand, b: &Operand) -> Result<Val> {
        let (cond, x, y) = self.cond_of(c)?;
        let n = pieces(self.m, &a.ty, self.line)?;
        if n > 2 {
            let t = self.words(a, n)?;
            let f = self.words(b, n)?;
            return Ok(Val::W(self.select_words((cond, x, y), &t, &f)));
        }
        if n == 2 {
            let (al, ah) = self.pair(a)?;
            let (bl, bh) = self.pair(b)?;
            let lo = self.select_reg((cond, x, y), al, bl);
            let hi = self.select_reg((cond, x, y), ah, bh);
            return Ok(Val::P(lo, hi));
        }
        let t = self.reg(a)?;
        let f = self.reg(b)?;
        let rd = self.select_reg((cond, x, y), t, f);
        if let (Some(e1), Some(e2)) = (self.ext.get(&t).copied(), self.ext.get(&f).copied()) {
            if e1 == e2 {
                self.ext.insert(rd, e1);
            }
        }
        Ok(Val::R(rd))
    }

    /// Integer binary operation.
    pub fn binop(&mut self, k: BinOp, a: &Operand, b: &Operand) -> Result<Val> {
        let n = pieces(self.m, &a.ty, self.line)?;
        if n > 2 {
            return self.binop_wide(k, a, b, n);
        }
        if n == 2 {
            return self.binop32(k, a, b);
        }
        let w = bits(self.m, &a.ty);
        let cb = const_of(b).map(as_i16);
        let ca = const_of(a).map(as_i16);
        // Commutative operations with a constant on the left.
        if ca.is_some()
            && cb.is_none()
            && matches!(
                k,
                BinOp::Add | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Mul
            )
        {
            return self.binop(k, b, a);
        }
        let alu = |k: BinOp| match k {
            BinOp::Add => Some(Alu::Add),
            BinOp::Sub => Some(Alu::Sub),
            BinOp::And => Some(Alu::And),
            BinOp::Or => Some(Alu::Or),
            BinOp::Xor => Some(Alu::Xor),
            BinOp::Shl => Some(Alu::Lsl),
            BinOp::LShr => Some(Alu::Lsr),
            BinOp::AShr => Some(Alu::Asr),
            _ => None,
        };
        let r = match (k, cb) {
            (BinOp::Add | BinOp::And | BinOp::Or | BinOp::Xor, Some(c)) if simm10(c) => {
                let x = self.reg(a)?;
                if c == 0 && k != BinOp::And {
                    return Ok(Val::R(x));
                }
                self.alui(alu(k).unwrap_or(Alu::Add), x, c as i32)
            }
            (BinOp::Sub, Some(c)) if simm10(-c) => {
                let x = self.reg(a)?;
                self.alui(Alu::Add, x, -c as i32)
            }
            (BinOp::Shl | BinOp::LShr | BinOp::AShr, Some(c)) => {
                let e = if k == BinOp::AShr {
                    Ext::Sign
                } else {
                    Ext::Zero
                };
                let x = if k == BinOp::Shl {
                    self.reg(a)?
                } else {
                    self.norm(a, e)?
                };
                let c = (c & 0xFFFF) as i32;
                if c == 0 {
                    return Ok(Val::R(x));
                }
                if c >= 16 {
                    if k == BinOp::AShr {
                        self.alui(Alu::Asr, x, 15)
                    } else {
                        self.li(0)
                    }
                } else {
                    self.alui(alu(k).unwrap_or(Alu::Lsl), x, c)
                }
            }
            (BinOp::Mul, Some(c)) if c & 0xFFFF == 0 => self.li(0),
            (BinOp::Mul, Some(c)) if (c as u16).count_ones() <= 2 => {
                let x = self.reg(a)?;
                self.mul_const(x, c as u16)
            }
            (BinOp::UDiv, Some(c)) if c > 0 && (c as u16).is_power_of_two() => {
                let x = self.norm(a, Ext::Zero)?;
                let s = (c as u16).trailing_zeros() as i32;
                if s == 0 {
                    return Ok(Val::R(x));
                }
                self.alui(Alu::Lsr, x, s)
            }
            (BinOp::URem, Some(c)) if c > 0 && (c as u16).is_power_of_two() && simm10(c - 1) => {
                let x = self.norm(a, Ext::Zero)?;
                self.alui(Alu::And, x, (c - 1) as i32)
            }
            (BinOp::Mul | BinOp::UDiv | BinOp::SDiv | BinOp::URem | BinOp::SRem, _) => {
                let e = if matches!(k, BinOp::SDiv | BinOp::SRem) {
                    Ext::Sign
                } else {
                    Ext::Zero
                };
                let (x, y) = if w < 16 && k != BinOp::Mul {
                    (self.norm(a, e)?, self.norm(b, e)?)
                } else {
                    (self.reg(a)?, self.reg(b)?)
                };
                self.call_helper(helper16(k), &[x, y], 1)[0]
            }
            (BinOp::LShr | BinOp::AShr, None) => {
                let e = if k == BinOp::AShr {
                    Ext::Sign
                } else {
                    Ext::Zero
                };
                let x = self.norm(a, e)?;
                let y = self.reg(b)?;
                self.alu(alu(k).unwrap_or(Alu::Lsr), x, y)
            }
            _ => {
                let x = self.reg(a)?;
                let y = self.reg(b)?;
                if w == 1 && matches!(k, BinOp::Add | BinOp::Sub) {
                    self.alu(Alu::Xor, x, y)
                } else {
                    self.alu(alu(k).unwrap_or(Alu::Add), x, y)
                }
            }
        };
        if w == 1 && matches!(k, BinOp::Shl) {
            return Ok(Val::R(self.alui(Alu::And, r, 1)));
        }
        if w == 8 && k == BinOp::And {
            if let Some(c) = cb {
                if (0..=0x7F).contains(&c) {
                    self.ext.insert(r, Ext::Zero);
                }
            }
        }
        Ok(Val::R(r))
    }

    /// Casts.
    pub fn cast(&mut self, k: CastOp, v: &Operand, to: &Type) -> Result<Val> {
        let from_p = pieces(self.m, &v.ty, self.line)?;
        let to_p = pieces(self.m, to, self.line)?;
        if from_p > 2 || to_p > 2 {
            return self.cast_wide(k, v, to);
        }
        let fb = bits(self.m, &v.ty);
        let tb = bits(self.m, to);
        match k {
            CastOp::Same => {
                let val = self.val(v)?;
                Ok(match (from_p, to_p, val) {
                    (2, 1, Val::P(lo, _)) => Val::R(lo),
                    (1, 2, Val::R(r)) => Val::P(r, self.li(0)),
                    (_, _, val) => val,
                })
            }
            CastOp::Trunc => {
                let r = self.reg(v)?;
                Ok(Val::R(if tb == 1 {
                    self.alui(Alu::And, r, 1)
                } else if tb < 16 && tb != 8 {
                    self.alui(Alu::And, r, (1 << tb) - 1)
                } else {
                    r
                }))
            }
            CastOp::ZExt | CastOp::SExt => {
                let e = if k == CastOp::ZExt {
                    Ext::Zero
                } else {
                    Ext::Sign
                };
                let r = if fb == 1 {
                    let r = self.reg(v)?;
                    if e == Ext::Sign {
                        let z = self.li(0);
                        self.alu(Alu::Sub, z, r)
                    } else {
                        r
                    }
                } else if from_p == 2 {
                    let (lo, hi) = self.pair_ext(v, e)?;
                    return Ok(Val::P(lo, hi));
                } else {
                    self.norm(v, e)?
                };
                if to_p == 2 {
                    let hi = if e == Ext::Sign {
                        self.alui(Alu::Asr, r, 15)
                    } else {
                        self.li(0)
                    };
                    Ok(Val::P(r, hi))
                } else {
                    if tb == 8 {
                        self.ext.insert(r, e);
                    }
                    Ok(Val::R(r))
                }
            }
        }
    }

    /// `load ty, p, align` (`signed`: sign-extend a byte).
    pub fn load(&mut self, ty: &Type, p: &Operand, align: u64, signed: bool) -> Result<Val> {
        let a = self.addr(p)?;
        if let Some(n) = wide_words(self.m, ty) {
            let regs = (0..n)
                .map(|k| self.load_word(&a, 2 * k as i32, align))
                .collect();
            return Ok(Val::W(regs));
        }
        let n = pieces(self.m, ty, self.line)?;
        let b = bits(self.m, ty);
        let w = if b <= 8 && !matches!(self.m.resolve(ty), Type::Ptr) {
            byte_width(signed)
        } else {
            Width::Word
        };
        // A 3-byte integer (an `i24`): its third byte alone, never the byte after it.
        let odd_tail = n == 2 && self.m.size_of(ty) == Some(3);
        let mut regs = Vec::new();
        for k in 0..n {
            let rd = if odd_tail && k == 1 {
                self.load_at(Width::ByteU, &a, 2)
            } else if w == Width::Word {
                self.load_word(&a, 2 * k as i32, align)
            } else {
                self.load_at(w, &a, 2 * k as i32)
            };
            regs.push(rd);
        }
        if w != Width::Word {
            if let Some(r) = regs.first() {
                self.ext
                    .insert(*r, if signed { Ext::Sign } else { Ext::Zero });
            }
        }
        Ok(match regs[..] {
            [lo, hi] => Val::P(lo, hi),
            [r] => Val::R(r),
            _ => return unsupported(self.line, format!("load of type {ty:?}")),
        })
    }

    /// `store v, p, align`.
    pub fn store(&mut self, v: &Operand, p: &Operand, align: u64) -> Result<()> {
        let a = self.addr(p)?;
        let b = bits(self.m, &v.ty);
        let byte = b <= 8 && !matches!(self.m.resolve(&v.ty), Type::Ptr);
        let regs = match (wide_words(self.m, &v.ty), self.val(v)?) {
            (Some(_), Val::W(regs)) => regs,
            (Some(n), _)
                if matches!(
                    v.val,
                    Value::Const(Const::Zero | Const::Int(0) | Const::Undef)
                ) =>
            {
                let z = self.li(0);
                vec![z; n]
            }
            (Some(_), _) => return unsupported(self.line, "store of a 64-bit value"),
            _ => match pieces(self.m, &v.ty, self.line)? {
                2 => {
                    let (lo, hi) = self.pair(v)?;
                    vec![lo, hi]
                }
                1 => vec![self.reg(v)?],
                _ => return unsupported(self.line, format!("store of type {:?}", v.ty)),
            },
        };
        let odd_tail = regs.len() == 2 && self.m.size_of(&v.ty) == Some(3);
        for (k, rs) in regs.into_iter().enumerate() {
            if byte || (odd_tail && k == 1) {
                self.store_at(Width::ByteU, rs, &a, 2 * k as i32);
            } else {
                self.store_word(rs, &a, 2 * k as i32, align);
            }
        }
        Ok(())
    }

    /// Whether a 16-bit access at `a + extra` is provably even: the IR's alignment `align` says
    /// so, or the address itself does ([`Ctx::addr_even`]). CAHPv3's word loads and stores ignore
    /// address bit 0 (docs/isa.md), so a word access at an odd address would silently touch the
    /// wrong bytes: anything not proven even goes bytewise.
    fn word_aligned(&self, a: &Addr, extra: i32, align: u64) -> bool {
        align >= 2 || self.addr_even(a, extra)
    }

    /// The 16-bit word at `a + extra`: one `lw` when the address is provably even, else two byte
    /// loads and `hi << 8 | lo` (little-endian).
    fn load_word(&mut self, a: &Addr, extra: i32, align: u64) -> Reg {
        if self.word_aligned(a, extra, align) {
            return self.load_at(Width::Word, a, extra);
        }
        let lo = self.load_at(Width::ByteU, a, extra);
        let hi = self.load_at(Width::ByteU, a, extra + 1);
        let hi = self.alui(Alu::Lsl, hi, 8);
        self.alu(Alu::Or, hi, lo)
    }

    /// Stores the 16-bit `rs` at `a + extra`: one `sw` when the address is provably even, else the
    /// low byte and then `rs >> 8`.
    fn store_word(&mut self, rs: Reg, a: &Addr, extra: i32, align: u64) {
        if self.word_aligned(a, extra, align) {
            return self.store_at(Width::Word, rs, a, extra);
        }
        self.store_at(Width::ByteU, rs, a, extra);
        let hi = self.alui(Alu::Lsr, rs, 8);
        self.store_at(Width::ByteU, hi, a, extra + 1);
    }

    /// One load of width `w` from `a + extra` into a new register.
    fn load_at(&mut self, w: Width, a: &Addr, extra: i32) -> Reg {
        let (base, off) = self.mem(a, extra);
        let rd = self.vreg();
        self.emit(MInst::Load { w, rd, base, off });
        rd
    }

    /// One store of width `w` of `rs` at `a + extra`.
    fn store_at(&mut self, w: Width, rs: Reg, a: &Addr, extra: i32) {
        let (base, off) = self.mem(a, extra);
        self.emit(MInst::Store { w, rs, base, off });
    }

    /// `getelementptr ty, base, idx…` as a symbolic address.
    pub fn gep(&mut self, ty: &Type, base: &Operand, idx: &[Operand]) -> Result<Addr> {
        let mut a = self.addr(base)?;
        let mut cur = ty.clone();
        for (k, i) in idx.iter().enumerate() {
            let elem = if k == 0 {
                cur.clone()
            } else {
                match self.m.resolve(&cur).clone() {
                    Type::Array(_, e) => *e,
                    Type::Struct(fs, _) => {
                        let Some(fi) = const_of(i) else {
                            return unsupported(self.line, "variable struct field index");
                        };
                        let fi = usize::try_from(fi).unwrap_or(usize::MAX);
                        let off = self.m.field_offset(&cur, fi);
                        let (Some(off), Some(ft)) = (off, fs.get(fi)) else {
                            return unsupported(self.line, "bad struct field index");
                        };
                        a.imm += off as i32;
                        cur = ft.clone();
                        continue;
                    }
                    t => return unsupported(self.line, format!("getelementptr into {t:?}")),
                }
            };
            let Some(size) = self.m.size_of(&elem) else {
                return unsupported(self.line, format!("size of {elem:?}"));
            };
            match const_of(i) {
                Some(c) => {
                    a.imm = a
                        .imm
                        .wrapping_add((as_i16(c) as i32).wrapping_mul(size as i32))
                }
                None => {
                    let x = self.reg(i)?;
                    let scaled = match size {
                        0 => None,
                        1 => Some(x),
                        s if s <= 0xFFFF && (s as u16).count_ones() <= 2 => {
                            Some(self.mul_const(x, s as u16))
                        }
                        s => {
                            let c = self.li(i128::from(s));
                            Some(self.call_helper("__mulhi3", &[x, c], 1)[0])
                        }
                    };
                    if let Some(s) = scaled {
                        a.reg = Some(match a.reg {
                            Some(r) => self.alu(Alu::Add, r, s),
                            None => s,
                        });
                    }
                }
            }
            cur = elem;
        }
        a.imm = a.imm as i16 as i32;
        Ok(a)
    }

    /// Copies `len` bytes from `src` to `dst` inline (word moves when both are 2-aligned).
    pub fn copy_inline(&mut self, dst: &Addr, src: &Addr, len: u32, aligned: bool) {
        let step = if aligned { 2 } else { 1 };
        let mut k = 0;
        while k < len {
            let w = if step == 2 && k + 1 < len {
                Width::Word
            } else {
                Width::ByteU
            };
            let rd = self.load_at(w, src, k as i32);
            self.store_at(w, rd, dst, k as i32);
            k += if w == Width::Word { 2 } else { 1 };
        }
    }

    /// Address of a frame object as an [`Addr`].
    pub fn frame_addr(&self, fi: usize) -> Addr {
        Addr {
            fi: Some(fi),
            ..Addr::default()
        }
    }
}
