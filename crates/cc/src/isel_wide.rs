//! Instruction selection of 32-bit operations on register pairs (carries through set-on-compare,
//! compares assembled from the halves, constant shifts, runtime helpers) and of funnel shifts and
//! constant multiplies.

use crate::error::{unsupported, Result};
use crate::ir::{BinOp, Operand, Pred};
use crate::isel::{bits, pieces, Ctx, Ext, Val};
use crate::isel_ops::{const_of, helper32};
use crate::mir::{Alu, Cond, Reg};

impl<'m> Ctx<'m> {
    /// A register-pair operand as (lo, hi); an integer of 17 to 31 bits (an `i24` that clang makes
    /// of a packed group of bit-fields) has its high word extended from its top bit, since
    /// arithmetic leaves the bits above it undefined and compares, right shifts, divisions and
    /// extensions read them.
    pub(crate) fn pair_ext(&mut self, op: &Operand, e: Ext) -> Result<(Reg, Reg)> {
        let (lo, hi) = self.pair(op)?;
        let b = bits(self.m, &op.ty);
        if !(17..32).contains(&b) {
            return Ok((lo, hi));
        }
        let k = (32 - b) as i32;
        let t = self.alui(Alu::Lsl, hi, k);
        let op = if e == Ext::Sign { Alu::Asr } else { Alu::Lsr };
        Ok((lo, self.alui(op, t, k)))
    }

    /// A 32-bit compare as an i1 register.
    pub(crate) fn cmp32(&mut self, p: Pred, a: &Operand, b: &Operand) -> Result<Reg> {
        let e = if matches!(p, Pred::Slt | Pred::Sle | Pred::Sgt | Pred::Sge) {
            Ext::Sign
        } else {
            Ext::Zero
        };
        let (al, ah) = self.pair_ext(a, e)?;
        let (bl, bh) = self.pair_ext(b, e)?;
        if matches!(p, Pred::Eq | Pred::Ne) {
            let x = self.alu(Alu::Xor, al, bl);
            let y = self.alu(Alu::Xor, ah, bh);
            let z = self.alu(Alu::Or, x, y);
            let zero = self.li(0);
            return Ok(self.setcc(if p == Pred::Eq { Cond::Eq } else { Cond::Ne }, z, zero));
        }
        // Normalise to "x < y" or "x <= y".
        let (x, y, strict_hi, lo_cond) = match p {
            Pred::Slt => ((al, ah), (bl, bh), Cond::Lt, Cond::Ltu),
            Pred::Sle => ((al, ah), (bl, bh), Cond::Lt, Cond::Leu),
            Pred::Sgt => ((bl, bh), (al, ah), Cond::Lt, Cond::Ltu),
            Pred::Sge => ((bl, bh), (al, ah), Cond::Lt, Cond::Leu),
            Pred::Ult => ((al, ah), (bl, bh), Cond::Ltu, Cond::Ltu),
            Pred::Ule => ((al, ah), (bl, bh), Cond::Ltu, Cond::Leu),
            Pred::Ugt => ((bl, bh), (al, ah), Cond::Ltu, Cond::Ltu),
            _ => ((bl, bh), (al, ah), Cond::Ltu, Cond::Leu),
        };
        let hi_lt = self.setcc(strict_hi, x.1, y.1);
        let hi_eq = self.setcc(Cond::Eq, x.1, y.1);
        let lo = self.setcc(lo_cond, x.0, y.0);
        let t = self.alu(Alu::And, hi_eq, lo);
        Ok(self.alu(Alu::Or, hi_lt, t))
    }

    pub(crate) fn binop32(&mut self, k: BinOp, a: &Operand, b: &Operand) -> Result<Val> {
        // The operands whose bits above a narrow type's top matter (see `pair_ext`).
        let (ea, eb) = match k {
            BinOp::AShr => (Some(Ext::Sign), None),
            BinOp::LShr => (Some(Ext::Zero), None),
            BinOp::SDiv | BinOp::SRem => (Some(Ext::Sign), Some(Ext::Sign)),
            BinOp::UDiv | BinOp::URem => (Some(Ext::Zero), Some(Ext::Zero)),
            _ => (None, None),
        };
        // Constant shifts are cheap inline; everything else non-bitwise goes to the runtime.
        if let (BinOp::Shl | BinOp::LShr | BinOp::AShr, Some(c)) = (k, const_of(b)) {
            let (lo, hi) = match ea {
                Some(e) => self.pair_ext(a, e)?,
                None => self.pair(a)?,
            };
            let c = (c & 31) as i32;
            return Ok(self.shift32(k, lo, hi, c));
        }
        if let Some(h) = helper32(k) {
            let (al, ah) = match ea {
                Some(e) => self.pair_ext(a, e)?,
                None => self.pair(a)?,
            };
            let (bl, bh) = match eb {
                Some(e) => self.pair_ext(b, e)?,
                None => self.pair(b)?,
            };
            let r = self.call_helper(h, &[al, ah, bl, bh], 2);
            return Ok(Val::P(r[0], r[1]));
        }
        let (al, ah) = self.pair(a)?;
        let (bl, bh) = self.pair(b)?;
        Ok(match k {
            BinOp::Add => {
                let lo = self.alu(Alu::Add, al, bl);
                let carry = self.setcc(Cond::Ltu, lo, al);
                let h = self.alu(Alu::Add, ah, bh);
                let hi = self.alu(Alu::Add, h, carry);
                Val::P(lo, hi)
            }
            BinOp::Sub => {
                let lo = self.alu(Alu::Sub, al, bl);
                let borrow = self.setcc(Cond::Ltu, al, bl);
                let h = self.alu(Alu::Sub, ah, bh);
                let hi = self.alu(Alu::Sub, h, borrow);
                Val::P(lo, hi)
            }
            _ => {
                let op = match k {
                    BinOp::And => Alu::And,
                    BinOp::Or => Alu::Or,
                    _ => Alu::Xor,
                };
                Val::P(self.alu(op, al, bl), self.alu(op, ah, bh))
            }
        })
    }

    pub fn shift32(&mut self, k: BinOp, lo: Reg, hi: Reg, c: i32) -> Val {
        if c == 0 {
            return Val::P(lo, hi);
        }
        match k {
            BinOp::Shl if c >= 16 => {
                let h = if c == 16 {
                    lo
                } else {
                    self.alui(Alu::Lsl, lo, c - 16)
                };
                Val::P(self.li(0), h)
            }
            BinOp::Shl => {
                let l = self.alui(Alu::Lsl, lo, c);
                let h1 = self.alui(Alu::Lsl, hi, c);
                let h2 = self.alui(Alu::Lsr, lo, 16 - c);
                Val::P(l, self.alu(Alu::Or, h1, h2))
            }
            _ => {
                let op = if k == BinOp::AShr { Alu::Asr } else { Alu::Lsr };
                if c >= 16 {
                    let l = if c == 16 {
                        hi
                    } else {
                        self.alui(op, hi, c - 16)
                    };
                    let h = if op == Alu::Asr {
                        self.alui(Alu::Asr, hi, 15)
                    } else {
                        self.li(0)
                    };
                    Val::P(l, h)
                } else {
                    let l1 = self.alui(Alu::Lsr, lo, c);
                    let l2 = self.alui(Alu::Lsl, hi, 16 - c);
                    let l = self.alu(Alu::Or, l1, l2);
                    Val::P(l, self.alui(op, hi, c))
                }
            }
        }
    }

    /// Funnel shifts `fshl(a, b, c)` = high half of `(a:b) << c`, `fshr` = low half of `(a:b) >> c`.
    pub fn funnel(&mut self, left: bool, a: &Operand, b: &Operand, c: &Operand) -> Result<Val> {
        let w = bits(self.m, &a.ty) as i128;
        let n = pieces(self.m, &a.ty, self.line)?;
        if n >= 2 && const_of(c).is_none() {
            return self.funnel_variable(left, a, b, c, n);
        }
        if n > 2 {
            // Wider than 32 bits (long long), constant amount: word shifts.
            let Some(k) = const_of(c) else {
                return unsupported(self.line, format!("{w}-bit funnel shift"));
            };
            let k = k.rem_euclid(w) as u32;
            let x = self.words(a, n)?;
            let y = self.words(b, n)?;
            if k == 0 {
                return Ok(Val::W(if left { x } else { y }));
            }
            let (hi, lo) = if left {
                (
                    self.shift_words(BinOp::Shl, &x, k),
                    self.shift_words(BinOp::LShr, &y, w as u32 - k),
                )
            } else {
                (
                    self.shift_words(BinOp::Shl, &x, w as u32 - k),
                    self.shift_words(BinOp::LShr, &y, k),
                )
            };
            let out = hi
                .iter()
                .zip(&lo)
                .map(|(p, q)| self.alu(Alu::Or, *p, *q))
                .collect();
            return Ok(Val::W(out));
        }
        if pieces(self.m, &a.ty, self.line)? == 2 {
            let Some(k) = const_of(c) else {
                return unsupported(self.line, "32-bit funnel shift by a variable amount");
            };
            let k = (k.rem_euclid(32)) as i32;
            let (al, ah) = self.pair(a)?;
            let (bl, bh) = self.pair(b)?;
            if k == 0 {
                return Ok(if left { Val::P(al, ah) } else { Val::P(bl, bh) });
            }
            let (x, y) = if left {
                (
                    self.shift32(BinOp::Shl, al, ah, k),
                    self.shift32(BinOp::LShr, bl, bh, 32 - k),
                )
            } else {
                (
                    self.shift32(BinOp::Shl, al, ah, 32 - k),
                    self.shift32(BinOp::LShr, bl, bh, k),
                )
            };
            let (Val::P(xl, xh), Val::P(yl, yh)) = (x, y) else {
                return unsupported(self.line, "funnel shift");
            };
            return Ok(Val::P(self.alu(Alu::Or, xl, yl), self.alu(Alu::Or, xh, yh)));
        }
        if w != 16 {
            return unsupported(self.line, format!("funnel shift on i{w}"));
        }
        let x = self.reg(a)?;
        let y = self.reg(b)?;
        match const_of(c) {
            Some(k) => {
                let k = (k.rem_euclid(16)) as i32;
                if k == 0 {
                    return Ok(Val::R(if left { x } else { y }));
                }
                let (sl, sr) = if left { (k, 16 - k) } else { (16 - k, k) };
                let hi = self.alui(Alu::Lsl, x, sl);
                let lo = self.alui(Alu::Lsr, y, sr);
                Ok(Val::R(self.alu(Alu::Or, hi, lo)))
            }
            None => {
                // (x << k) | ((y >> 1) >> (15 - k)) for fshl; mirrored for fshr: correct for k = 0.
                let k = self.reg(c)?;
                let k = self.alui(Alu::And, k, 15);
                let fifteen = self.li(15);
                let inv = self.alu(Alu::Sub, fifteen, k);
                if left {
                    let hi = self.alu(Alu::Lsl, x, k);
                    let y1 = self.alui(Alu::Lsr, y, 1);
                    let lo = self.alu(Alu::Lsr, y1, inv);
                    Ok(Val::R(self.alu(Alu::Or, hi, lo)))
                } else {
                    let lo = self.alu(Alu::Lsr, y, k);
                    let x1 = self.alui(Alu::Lsl, x, 1);
                    let hi = self.alu(Alu::Lsl, x1, inv);
                    Ok(Val::R(self.alu(Alu::Or, hi, lo)))
                }
            }
        }
    }

    /// Funnel shifts of 32- and 64-bit values by a variable amount k = c mod width (rotates):
    /// `fshl` = `a << k | (b >> 1) >> (width-1-k)`, `fshr` = `b >> k | (a << 1) << (width-1-k)`,
    /// the variable shifts through the runtime helpers; right for k = 0 too.
    fn funnel_variable(
        &mut self,
        left: bool,
        a: &Operand,
        b: &Operand,
        c: &Operand,
        n: usize,
    ) -> Result<Val> {
        let w = bits(self.m, &a.ty);
        if w != 32 && w != 64 {
            return unsupported(
                self.line,
                format!("{w}-bit funnel shift by a variable amount"),
            );
        }
        let x = self.words(a, n)?;
        let y = self.words(b, n)?;
        let c = self.reg(c)?;
        let k = self.alui(Alu::And, c, w as i32 - 1);
        let top = self.li(i128::from(w) - 1);
        let inv = self.alu(Alu::Sub, top, k);
        let (near, near_op, far, far_op) = if left {
            (x, BinOp::Shl, y, BinOp::LShr)
        } else {
            (y, BinOp::LShr, x, BinOp::Shl)
        };
        let p = self.shift_var(near_op, &near, k, n);
        let f1 = self.shift_words(far_op, &far, 1);
        let q = self.shift_var(far_op, &f1, inv, n);
        let out = p
            .iter()
            .zip(&q)
            .map(|(u, v)| self.alu(Alu::Or, *u, *v))
            .collect();
        Ok(Ctx::val_of(out))
    }

    /// A variable shift (`shl`/`lshr`) of 32- or 64-bit words through the runtime helper.
    fn shift_var(&mut self, k: BinOp, x: &[Reg], amount: Reg, n: usize) -> Vec<Reg> {
        let mut args = x.to_vec();
        args.push(amount);
        let h = match (n, k) {
            (2, BinOp::Shl) => "__ashlsi3",
            (2, _) => "__lshrsi3",
            (_, BinOp::Shl) => "__ashldi3",
            _ => "__lshrdi3",
        };
        if n == 2 {
            // The 32-bit helpers take a 32-bit amount.
            let z = self.li(0);
            args.push(z);
        }
        self.call_helper(h, &args, n)
    }

    /// `x * c` for a constant with at most two set bits, by shifts and one add.
    pub(crate) fn mul_const(&mut self, x: Reg, c: u16) -> Reg {
        let lo = c.trailing_zeros() as i32;
        let first = if lo == 0 {
            x
        } else {
            self.alui(Alu::Lsl, x, lo)
        };
        let rest = c & !(1 << lo);
        if rest == 0 {
            return first;
        }
        let hi = rest.trailing_zeros() as i32;
        let second = self.alui(Alu::Lsl, x, hi);
        self.alu(Alu::Add, first, second)
    }
}
