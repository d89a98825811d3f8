//! Homomorphic operations on NTT-form ciphertexts (CKKS, Cheon–Kim–Kim–Song 2017; RNS form as in
//! SEAL's `evaluator.cpp`): add/sub/negate, multiply (tensor product), relinearize (key switching
//! with one special prime P: digit j = c2 mod q_j, accumulate with key j over q_0…q_{ℓ−1}, P, then
//! divide by P with rounding), rescale (divide by the last prime with rounding), and modulus drop.

use super::ciphertext::Ciphertext;
use super::context::ServerContext;
use super::keys::RelinKeys;
use crate::arith::inv_mod;
use crate::error::{CkksError, Result};

/// Stateless evaluator over a context.
pub struct Evaluator<'a> {
    ctx: &'a ServerContext,
}

/// Division by p = q(`p_idx`) with rounding, for one polynomial whose limb mod p is `last` (NTT
/// form; overwritten): for each prime i < `l` of the result, calls `f(i, t, p⁻¹ mod q_i)` with
/// t = NTT([last + ⌊p/2⌋]_p − ⌊p/2⌋ mod q_i), the rounding term; x_i / p ≈ (x_i − t) · p⁻¹.
/// `tmp` is N words of scratch.
fn rounding_terms(
    ctx: &ServerContext,
    p_idx: usize,
    l: usize,
    last: &mut [u64],
    tmp: &mut [u64],
    mut f: impl FnMut(usize, &[u64], u64),
) -> Result<()> {
    let (p, mp) = (ctx.q(p_idx), ctx.modulus(p_idx));
    let half = p >> 1;
    ctx.inverse(p_idx, last)?;
    for x in last.iter_mut() {
        *x = mp.add(*x, half);
    }
    for i in 0..l {
        let (q, mq) = (ctx.q(i), ctx.modulus(i));
        let half_q = half % q;
        for (d, &x) in tmp.iter_mut().zip(last.iter()) {
            *d = mq.sub(x % q, half_q);
        }
        ctx.forward(i, tmp)?;
        f(i, tmp, inv_mod(p % q, q));
    }
    Ok(())
}

fn same_scale(a: f64, b: f64) -> bool {
    (a - b).abs() <= a.abs().max(b.abs()) * 1e-10
}

impl<'a> Evaluator<'a> {
    /// An evaluator.
    pub fn new(ctx: &'a ServerContext) -> Self {
        Self { ctx }
    }

    fn check_pair(&self, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        if a.n != self.ctx.n() || b.n != a.n {
            return Err(CkksError::Mismatch("degree"));
        }
        if a.level != b.level {
            return Err(CkksError::Mismatch("operands are at different levels"));
        }
        if a.level == 0 || a.level > self.ctx.max_level() {
            return Err(CkksError::Mismatch("level outside the parameters"));
        }
        Ok(())
    }

    fn combine(&self, a: &Ciphertext, b: &Ciphertext, sub: bool) -> Result<Ciphertext> {
        self.check_pair(a, b)?;
        if !same_scale(a.scale, b.scale) {
            return Err(CkksError::Mismatch("operands have different scales"));
        }
        let size = a.size.max(b.size);
        let mut out = Ciphertext::zero(a.n, a.level, size, a.scale);
        for p in 0..size {
            for i in 0..a.level {
                let mq = self.ctx.modulus(i);
                let dst = out.limb_mut(p, i);
                if p < a.size {
                    dst.copy_from_slice(a.limb(p, i));
                }
                if p < b.size {
                    for (d, &y) in dst.iter_mut().zip(b.limb(p, i)) {
                        *d = if sub { mq.sub(*d, y) } else { mq.add(*d, y) };
                    }
                }
            }
        }
        Ok(out)
    }

    /// a + b.
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.combine(a, b, false)
    }
    /// a − b.
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.combine(a, b, true)
    }
    /// −a.
    pub fn negate(&self, a: &Ciphertext) -> Ciphertext {
        let mut out = a.clone();
        for p in 0..a.size {
            for i in 0..a.level {
                let mq = self.ctx.modulus(i);
                for x in out.limb_mut(p, i) {
                    *x = mq.neg(*x);
                }
            }
        }
        out
    }

    /// a · b (size-2 operands → size 3; scales multiply).
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b)?;
        if a.size != 2 || b.size != 2 {
            return Err(CkksError::NotPossible(
                "multiply needs size-2 operands (relinearize first)",
            ));
        }
        let mut out = Ciphertext::zero(a.n, a.level, 3, a.scale * b.scale);
        for i in 0..a.level {
            let mq = self.ctx.modulus(i);
            let (a0, a1, b0, b1) = (a.limb(0, i), a.limb(1, i), b.limb(0, i), b.limb(1, i));
            for k in 0..a.n {
                let d0 = mq.mul(a0[k], b0[k]);
                let d1 = mq.add(mq.mul(a0[k], b1[k]), mq.mul(a1[k], b0[k]));
                let d2 = mq.mul(a1[k], b1[k]);
                out.limb_mut(0, i)[k] = d0;
                out.limb_mut(1, i)[k] = d1;
                out.limb_mut(2, i)[k] = d2;
            }
        }
        Ok(out)
    }

    /// Relinearizes a size-3 ciphertext back to size 2 with SEAL-form keys.
    // Indices name the RNS positions of the paper's formulas; iterators would hide them.
    #[allow(clippy::needless_range_loop)]
    pub fn relinearize(&self, ct: &Ciphertext, rk: &RelinKeys) -> Result<Ciphertext> {
        if ct.size != 3 {
            return Err(CkksError::NotPossible(
                "relinearize needs a size-3 ciphertext",
            ));
        }
        let ctx = self.ctx;
        if ctx.params().special_prime().is_none() {
            return Err(CkksError::NotPossible(
                "relinearisation needs a special prime",
            ));
        }
        if rk.0.len() != ctx.max_level() {
            return Err(CkksError::Mismatch(
                "relinearisation keys do not match the parameters",
            ));
        }
        let n = ct.n;
        let l = ct.level;
        let sp_idx = ctx.key_level() - 1;
        // Target primes: q_0 … q_{ℓ−1} then P; accumulators acc[poly][target][k].
        let targets: Vec<usize> = (0..l).chain(core::iter::once(sp_idx)).collect();
        let mut acc = vec![vec![vec![0u64; n]; targets.len()]; 2];
        let mut digit = vec![0u64; n];
        let mut tmp = vec![0u64; n];
        for j in 0..l {
            digit.copy_from_slice(ct.limb(2, j));
            ctx.inverse(j, &mut digit)?;
            let key = &rk.0[j];
            for (t, &ti) in targets.iter().enumerate() {
                let q = ctx.q(ti);
                let mq = ctx.modulus(ti);
                if ti == j {
                    tmp.copy_from_slice(ct.limb(2, j));
                } else {
                    for (d, &x) in tmp.iter_mut().zip(&digit) {
                        *d = x % q;
                    }
                    ctx.forward(ti, &mut tmp)?;
                }
                for poly in 0..2 {
                    let k = key.limb(poly, ti);
                    for ((a, &x), &y) in acc[poly][t].iter_mut().zip(&tmp).zip(k) {
                        *a = mq.add(*a, mq.mul(x, y));
                    }
                }
            }
        }
        // Divide by P with rounding: (acc_i − [acc_P + ⌊P/2⌋]_P + ⌊P/2⌋) · P^{-1} mod q_i.
        let mut out = Ciphertext::zero(n, l, 2, ct.scale);
        for (poly, acc) in acc.iter_mut().enumerate() {
            let (low, last) = acc.split_at_mut(l);
            rounding_terms(ctx, sp_idx, l, &mut last[0], &mut tmp, |i, t, p_inv| {
                let mq = ctx.modulus(i);
                let src = ct.limb(poly, i);
                let dst = out.limb_mut(poly, i);
                for k in 0..n {
                    let v = mq.mul(mq.sub(low[i][k], t[k]), p_inv);
                    dst[k] = mq.add(src[k], v);
                }
            })?;
        }
        Ok(out)
    }

    /// Divides by the last prime of the ciphertext's level with rounding; scale /= q_last.
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        if ct.level < 2 {
            return Err(CkksError::NotPossible(
                "rescale needs at least two primes left",
            ));
        }
        let ctx = self.ctx;
        let n = ct.n;
        let l = ct.level - 1;
        let mut out = Ciphertext::zero(n, l, ct.size, ct.scale / ctx.q(l) as f64);
        let mut last = vec![0u64; n];
        let mut tmp = vec![0u64; n];
        for poly in 0..ct.size {
            last.copy_from_slice(ct.limb(poly, l));
            rounding_terms(ctx, l, l, &mut last, &mut tmp, |i, t, inv| {
                let mq = ctx.modulus(i);
                let src = ct.limb(poly, i);
                let dst = out.limb_mut(poly, i);
                for k in 0..n {
                    dst[k] = mq.mul(mq.sub(src[k], t[k]), inv);
                }
            })?;
        }
        Ok(out)
    }

    /// Drops the last prime without dividing (SEAL's `mod_switch_to_next` for CKKS); scale unchanged.
    pub fn mod_drop(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        if ct.level < 2 {
            return Err(CkksError::NotPossible("no prime left to drop"));
        }
        let l = ct.level - 1;
        let mut out = Ciphertext::zero(ct.n, l, ct.size, ct.scale);
        for p in 0..ct.size {
            for i in 0..l {
                out.limb_mut(p, i).copy_from_slice(ct.limb(p, i));
            }
        }
        Ok(out)
    }
}
