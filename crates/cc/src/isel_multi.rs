//! Instruction selection of integers wider than 32 bits — `long long` (i64) and the i48 that clang
//! sometimes forms from struct copies — as one register per 16-bit word, low word first: add and
//! sub through carry chains, bitwise operations word by word, constant shifts as word moves plus
//! funnel pairs, compares assembled from the words, selects word by word, and vsp-cahp's
//! assembly runtime helpers (`__muldi3`, `__divdi3`, … and the variable shifts; see
//! [`crate::compile::cahp_helper`]) for the rest.

use crate::error::{unsupported, Result};
use crate::ir::{BinOp, CastOp, Operand, Pred, Type};
use crate::isel::{bits, pieces, Ctx, Ext, Val};
use crate::isel_ops::const_of;
use crate::mir::{Alu, Cond, Reg};

/// Runtime helper of a 64-bit operation (the operands are passed as words; shifts take the amount
/// as one 16-bit word).
pub(crate) fn helper64(k: BinOp) -> Option<&'static str> {
    Some(match k {
        BinOp::Mul => "__muldi3",
        BinOp::SDiv => "__divdi3",
        BinOp::SRem => "__moddi3",
        BinOp::UDiv => "__udivdi3",
        BinOp::URem => "__umoddi3",
        BinOp::Shl => "__ashldi3",
        BinOp::LShr => "__lshrdi3",
        BinOp::AShr => "__ashrdi3",
        _ => return None,
    })
}

impl<'m> Ctx<'m> {
    /// `a + b` over words (carries through set-on-compare).
    pub(crate) fn add_words(&mut self, a: &[Reg], b: &[Reg]) -> Vec<Reg> {
        let n = a.len().min(b.len());
        let mut out = Vec::with_capacity(n);
        let mut carry: Option<Reg> = None;
        for k in 0..n {
            let last = k + 1 == n;
            let s = self.alu(Alu::Add, a[k], b[k]);
            match carry {
                None => {
                    out.push(s);
                    if !last {
                        carry = Some(self.setcc(Cond::Ltu, s, a[k]));
                    }
                }
                Some(c) => {
                    let t = self.alu(Alu::Add, s, c);
                    out.push(t);
                    if !last {
                        // At most one of the two carries is set.
                        let c1 = self.setcc(Cond::Ltu, s, a[k]);
                        let c2 = self.setcc(Cond::Ltu, t, s);
                        carry = Some(self.alu(Alu::Or, c1, c2));
                    }
                }
            }
        }
        out
    }

    /// `a - b` over words (borrows through set-on-compare).
    pub(crate) fn sub_words(&mut self, a: &[Reg], b: &[Reg]) -> Vec<Reg> {
        let n = a.len().min(b.len());
        let mut out = Vec::with_capacity(n);
        let mut borrow: Option<Reg> = None;
        for k in 0..n {
            let last = k + 1 == n;
            let d = self.alu(Alu::Sub, a[k], b[k]);
            match borrow {
                None => {
                    out.push(d);
                    if !last {
                        borrow = Some(self.setcc(Cond::Ltu, a[k], b[k]));
                    }
                }
                Some(c) => {
                    let t = self.alu(Alu::Sub, d, c);
                    out.push(t);
                    if !last {
                        let b1 = self.setcc(Cond::Ltu, a[k], b[k]);
                        let b2 = self.setcc(Cond::Ltu, d, c);
                        borrow = Some(self.alu(Alu::Or, b1, b2));
                    }
                }
            }
        }
        out
    }

    /// A compare of two `n`-word operands as an i1 register.
    pub(crate) fn cmp_wide(&mut self, p: Pred, a: &Operand, b: &Operand, n: usize) -> Result<Reg> {
        let x = self.words(a, n)?;
        let y = self.words(b, n)?;
        Ok(self.cmp_words(p, &x, &y))
    }

    /// A register that is zero exactly when the words of `x` and `y` are equal.
    pub(crate) fn diff_words(&mut self, x: &[Reg], y: &[Reg]) -> Reg {
        let n = x.len().min(y.len());
        let mut acc: Option<Reg> = None;
        for k in 0..n {
            // Words equal to a constant 0 on one side need no xor.
            let d = match (self.consts.get(&x[k]), self.consts.get(&y[k])) {
                (Some(0), Some(0)) => continue,
                (_, Some(0)) => x[k],
                (Some(0), _) => y[k],
                _ => self.alu(Alu::Xor, x[k], y[k]),
            };
            acc = Some(match acc {
                None => d,
                Some(a) => self.alu(Alu::Or, a, d),
            });
        }
        acc.unwrap_or_else(|| self.li(0))
    }

    /// `x pred y` over words as an i1 register.
    pub(crate) fn cmp_words(&mut self, p: Pred, x: &[Reg], y: &[Reg]) -> Reg {
        let n = x.len().min(y.len());
        if n == 0 {
            return self.li(0);
        }
        if matches!(p, Pred::Eq | Pred::Ne) {
            let d = self.diff_words(x, y);
            let zero = self.li(0);
            let c = if p == Pred::Eq { Cond::Eq } else { Cond::Ne };
            return self.setcc(c, d, zero);
        }
        // Normalise to "l < r" or "l <= r".
        let (l, r, signed, strict) = match p {
            Pred::Slt => (x, y, true, true),
            Pred::Sle => (x, y, true, false),
            Pred::Sgt => (y, x, true, true),
            Pred::Sge => (y, x, true, false),
            Pred::Ult => (x, y, false, true),
            Pred::Ule => (x, y, false, false),
            Pred::Ugt => (y, x, false, true),
            _ => (y, x, false, false),
        };
        // From the low word up: res = (l_k < r_k) | (l_k == r_k & res).
        let mut res = self.setcc(if strict { Cond::Ltu } else { Cond::Leu }, l[0], r[0]);
        for k in 1..n {
            let c = if signed && k + 1 == n {
                Cond::Lt
            } else {
                Cond::Ltu
            };
            let lt = self.setcc(c, l[k], r[k]);
            let eq = self.setcc(Cond::Eq, l[k], r[k]);
            let t = self.alu(Alu::And, eq, res);
            res = self.alu(Alu::Or, lt, t);
        }
        res
    }

    /// A shift of words by a constant `c` (0 ≤ c < 16·len).
    pub(crate) fn shift_words(&mut self, k: BinOp, w: &[Reg], c: u32) -> Vec<Reg> {
        let n = w.len();
        let q = (c / 16) as usize;
        let r = (c % 16) as i32;
        let mut out = Vec::with_capacity(n);
        match k {
            BinOp::Shl => {
                for i in 0..n {
                    let v = if i < q {
                        self.li(0)
                    } else if r == 0 {
                        w[i - q]
                    } else {
                        let lo = self.alui(Alu::Lsl, w[i - q], r);
                        if i > q {
                            let from_below = self.alui(Alu::Lsr, w[i - q - 1], 16 - r);
                            self.alu(Alu::Or, lo, from_below)
                        } else {
                            lo
                        }
                    };
                    out.push(v);
                }
            }
            _ => {
                let arith = k == BinOp::AShr;
                let mut fill: Option<Reg> = None;
                for i in 0..n {
                    let j = i + q;
                    let v = if j >= n {
                        match fill {
                            Some(f) => f,
                            None => {
                                let f = if arith {
                                    self.alui(Alu::Asr, w[n - 1], 15)
                                } else {
                                    self.li(0)
                                };
                                fill = Some(f);
                                f
                            }
                        }
                    } else if r == 0 {
                        w[j]
                    } else if j + 1 == n {
                        self.alui(if arith { Alu::Asr } else { Alu::Lsr }, w[j], r)
                    } else {
                        let lo = self.alui(Alu::Lsr, w[j], r);
                        let from_above = self.alui(Alu::Lsl, w[j + 1], 16 - r);
                        self.alu(Alu::Or, lo, from_above)
                    };
                    out.push(v);
                }
            }
        }
        out
    }

    /// Integer binary operation on `n`-word operands (n ≥ 3).
    pub(crate) fn binop_wide(
        &mut self,
        k: BinOp,
        a: &Operand,
        b: &Operand,
        n: usize,
    ) -> Result<Val> {
        let width = bits(self.m, &a.ty);
        if let (BinOp::Shl | BinOp::LShr | BinOp::AShr, Some(c)) = (k, const_of(b)) {
            let x = self.words(a, n)?;
            // Shift amounts of the width or more are poison: any result will do.
            let c = (c.rem_euclid(i128::from(width))) as u32;
            return Ok(Val::W(self.shift_words(k, &x, c)));
        }
        if let Some(h) = helper64(k) {
            if width != 64 {
                return unsupported(
                    self.line,
                    format!("{k:?} on {width}-bit integers (only 64-bit ones have helpers)"),
                );
            }
            let mut args = self.words(a, n)?;
            if matches!(k, BinOp::Shl | BinOp::LShr | BinOp::AShr) {
                args.push(self.reg(b)?);
            } else {
                args.extend(self.words(b, n)?);
            }
            let r = self.call_helper(h, &args, n);
            return Ok(Val::W(r));
        }
        let x = self.words(a, n)?;
        let y = self.words(b, n)?;
        Ok(Val::W(match k {
            BinOp::Add => self.add_words(&x, &y),
            BinOp::Sub => self.sub_words(&x, &y),
            _ => x
                .iter()
                .zip(&y)
                .map(|(p, q)| self.bitwise_word(k, *p, *q))
                .collect(),
        }))
    }

    /// One word of `and`/`or`/`xor`, folding the constant words 0 and 0xFFFF (the upper words of
    /// a small 64-bit constant mask are zeros) and using the immediate forms where they fit.
    fn bitwise_word(&mut self, k: BinOp, x: Reg, y: Reg) -> Reg {
        let (x, y) = match (self.consts.get(&x), self.consts.get(&y)) {
            (Some(_), None) => (y, x),
            _ => (x, y),
        };
        let op = match k {
            BinOp::And => Alu::And,
            BinOp::Or => Alu::Or,
            _ => Alu::Xor,
        };
        match (k, self.consts.get(&y).copied()) {
            (BinOp::And, Some(0)) => self.li(0),
            (BinOp::And, Some(-1)) | (BinOp::Or | BinOp::Xor, Some(0)) => x,
            (BinOp::Or, Some(-1)) => self.li(-1),
            (_, Some(c)) if (-512..=511).contains(&c) => self.alui(op, x, c),
            _ => self.alu(op, x, y),
        }
    }

    /// Casts where either side is wider than 32 bits.
    pub(crate) fn cast_wide(&mut self, k: CastOp, v: &Operand, to: &Type) -> Result<Val> {
        let from_p = pieces(self.m, &v.ty, self.line)?;
        let to_p = pieces(self.m, to, self.line)?;
        let fb = bits(self.m, &v.ty);
        let tb = bits(self.m, to);
        match k {
            CastOp::Same => {
                let mut w = self.words(v, from_p.max(1))?;
                if w.len() < to_p {
                    let z = self.li(0);
                    w.resize(to_p, z);
                }
                w.truncate(to_p.max(1));
                Ok(Ctx::val_of(w))
            }
            CastOp::Trunc => {
                let mut w = self.words(v, from_p)?;
                w.truncate(to_p.max(1));
                let top = w.len() - 1;
                let rem = tb % 16;
                if tb == 1 {
                    w[top] = self.alui(Alu::And, w[top], 1);
                } else if rem != 0 && tb != 8 {
                    let m = self.li((1i128 << rem) - 1);
                    w[top] = self.alu(Alu::And, w[top], m);
                }
                Ok(Ctx::val_of(w))
            }
            CastOp::ZExt | CastOp::SExt => {
                let sign = k == CastOp::SExt;
                let (mut w, fill) = if fb == 1 {
                    let r = self.reg(v)?;
                    let r = if sign {
                        let z = self.li(0);
                        self.alu(Alu::Sub, z, r)
                    } else {
                        r
                    };
                    let fill = if sign { r } else { self.li(0) };
                    (vec![r], fill)
                } else if from_p == 1 {
                    let r = self.norm(v, if sign { Ext::Sign } else { Ext::Zero })?;
                    let fill = if sign {
                        self.alui(Alu::Asr, r, 15)
                    } else {
                        self.li(0)
                    };
                    (vec![r], fill)
                } else {
                    let mut w = self.words(v, from_p)?;
                    if from_p == 2 {
                        let (lo, hi) =
                            self.pair_ext(v, if sign { Ext::Sign } else { Ext::Zero })?;
                        w = vec![lo, hi];
                    }
                    let top = w[w.len() - 1];
                    let fill = if sign {
                        self.alui(Alu::Asr, top, 15)
                    } else {
                        self.li(0)
                    };
                    (w, fill)
                };
                w.resize(to_p, fill);
                Ok(Ctx::val_of(w))
            }
        }
    }

    /// A 16-bit word with its bytes swapped, or (`bits`) all its bits reversed.
    pub(crate) fn reverse16(&mut self, x: Reg, bits: bool) -> Reg {
        let mut x = x;
        if bits {
            for (s, m) in [(1, 0x5555), (2, 0x3333), (4, 0x0F0F)] {
                let mask = self.li(m);
                let hi = self.alui(Alu::Lsr, x, s);
                let hi = self.alu(Alu::And, hi, mask);
                let lo = self.alu(Alu::And, x, mask);
                let lo = self.alui(Alu::Lsl, lo, s);
                x = self.alu(Alu::Or, hi, lo);
            }
        }
        let hi = self.alui(Alu::Lsr, x, 8);
        let lo = self.alui(Alu::Lsl, x, 8);
        self.alu(Alu::Or, hi, lo)
    }

    /// `select` of `n`-word values.
    pub(crate) fn select_words(
        &mut self,
        cond: (Cond, Reg, Reg),
        t: &[Reg],
        f: &[Reg],
    ) -> Vec<Reg> {
        t.iter()
            .zip(f)
            .map(|(tv, fv)| self.select_reg(cond, *tv, *fv))
            .collect()
    }
}
