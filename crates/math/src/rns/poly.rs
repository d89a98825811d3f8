//! Polynomials of `Z_Q[X]/(X^N + 1)` in RNS form: one limb of N words per modulus, limb-major, in
//! coefficient or NTT (evaluation, SEAL bit-reversed) representation.
//!
//! A polynomial holds an `Arc` of its [`RnsContext`] (degree, basis, NTT tables), so operands from
//! different rings are detected and refused with an error. Coefficients are zeroized on drop
//! because secret keys and error polynomials are `RnsPoly`s; `Debug` prints only the shape.

use alloc::sync::Arc;
use alloc::vec::Vec;

use num_bigint::BigInt;
use rand_core::RngCore;
use zeroize::Zeroize;

use crate::error::{MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::prime::check_degree;
use crate::rns::basis::RnsBasis;
use crate::sampler::fill_uniform;

/// The ring `Z_Q[X]/(X^N + 1)` in RNS form: degree, basis and one NTT table per modulus.
#[derive(Clone, Debug, PartialEq)]
pub struct RnsContext {
    n: usize,
    basis: RnsBasis,
    tables: Vec<NttTable>,
}

impl RnsContext {
    /// A context for degree `n` and NTT-friendly primes `moduli` (each ≡ 1 mod 2n, pairwise distinct).
    pub fn new(n: usize, moduli: &[u64]) -> Result<Arc<Self>> {
        check_degree(n)?;
        let basis = RnsBasis::new(moduli)?;
        let tables = basis
            .moduli()
            .iter()
            .map(|&q| NttTable::new(n, q))
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Self { n, basis, tables }))
    }

    /// A context from prepared NTT tables (e.g. with custom roots or a forced backend).
    pub fn from_tables(tables: Vec<NttTable>) -> Result<Arc<Self>> {
        let n = tables
            .first()
            .map(NttTable::n)
            .ok_or(MathError::EmptyBasis)?;
        if tables.iter().any(|t| t.n() != n) {
            return Err(MathError::Incompatible("NTT tables of different degrees"));
        }
        let basis = RnsBasis::from_moduli(tables.iter().map(|t| *t.modulus()).collect())?;
        Ok(Arc::new(Self { n, basis, tables }))
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The RNS basis.
    pub fn basis(&self) -> &RnsBasis {
        &self.basis
    }

    /// The moduli q_i.
    pub fn moduli(&self) -> &[Modulus] {
        self.basis.moduli()
    }

    /// The NTT table of each modulus.
    pub fn ntt_tables(&self) -> &[NttTable] {
        &self.tables
    }
}

/// Whether a polynomial holds coefficients or NTT evaluations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Representation {
    /// Coefficients a_0 … a_{N−1} in natural order.
    Coefficient,
    /// Forward NTT of each limb (SEAL's bit-reversed evaluation order).
    Ntt,
}

/// A polynomial in RNS form; all values are kept fully reduced in [0, q_i).
#[derive(Clone, PartialEq)]
pub struct RnsPoly {
    ctx: Arc<RnsContext>,
    repr: Representation,
    data: Vec<u64>,
}

impl core::fmt::Debug for RnsPoly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "RnsPoly {{ n: {}, limbs: {}, repr: {:?}, data: <redacted> }}",
            self.ctx.n,
            self.ctx.basis.len(),
            self.repr
        )
    }
}

impl Drop for RnsPoly {
    fn drop(&mut self) {
        self.data.zeroize();
    }
}

impl RnsPoly {
    /// The zero polynomial.
    pub fn zero(ctx: &Arc<RnsContext>, repr: Representation) -> Self {
        Self {
            ctx: ctx.clone(),
            repr,
            data: alloc::vec![0; ctx.n * ctx.basis.len()],
        }
    }

    /// Wraps limb-major data (k·N words); every value must be below its limb's modulus.
    pub fn from_limbs(ctx: &Arc<RnsContext>, repr: Representation, data: Vec<u64>) -> Result<Self> {
        let expected = ctx.n * ctx.basis.len();
        if data.len() != expected {
            return Err(MathError::LengthMismatch {
                what: "RNS polynomial data",
                expected,
                got: data.len(),
            });
        }
        for (limb, q) in data.chunks_exact(ctx.n).zip(ctx.moduli()) {
            if limb.iter().any(|&v| v >= q.value()) {
                return Err(MathError::Incompatible(
                    "RNS limb value not reduced modulo its prime",
                ));
            }
        }
        Ok(Self {
            ctx: ctx.clone(),
            repr,
            data,
        })
    }

    /// The zero polynomial in coefficient form, to be filled from `len` coefficients (which must
    /// be N).
    fn zero_coefficients(ctx: &Arc<RnsContext>, len: usize) -> Result<Self> {
        if len != ctx.n {
            return Err(MathError::LengthMismatch {
                what: "coefficients",
                expected: ctx.n,
                got: len,
            });
        }
        Ok(Self::zero(ctx, Representation::Coefficient))
    }

    /// A polynomial with small signed coefficients (a secret, an error), in coefficient form.
    pub fn from_signed(ctx: &Arc<RnsContext>, coeffs: &[i64]) -> Result<Self> {
        let mut p = Self::zero_coefficients(ctx, coeffs.len())?;
        for (limb, q) in p.data.chunks_exact_mut(ctx.n).zip(ctx.basis.moduli()) {
            for (o, &c) in limb.iter_mut().zip(coeffs) {
                *o = q.reduce_i64(c);
            }
        }
        Ok(p)
    }

    /// A polynomial from big signed coefficients (reduced mod Q), in coefficient form.
    pub fn from_bigint(ctx: &Arc<RnsContext>, coeffs: &[BigInt]) -> Result<Self> {
        let mut p = Self::zero_coefficients(ctx, coeffs.len())?;
        let n = ctx.n;
        for (c, x) in coeffs.iter().enumerate() {
            for (i, r) in ctx.basis.decompose_signed(x).into_iter().enumerate() {
                p.data[i * n + c] = r;
            }
        }
        Ok(p)
    }

    /// A uniformly random polynomial (uniform in either representation; masks are sampled directly
    /// in NTT form).
    pub fn uniform<R: RngCore + ?Sized>(
        ctx: &Arc<RnsContext>,
        repr: Representation,
        rng: &mut R,
    ) -> Self {
        let mut p = Self::zero(ctx, repr);
        for (limb, q) in p.data.chunks_exact_mut(ctx.n).zip(ctx.basis.moduli()) {
            fill_uniform(rng, q, limb);
        }
        p
    }

    /// The ring this polynomial lives in.
    pub fn context(&self) -> &Arc<RnsContext> {
        &self.ctx
    }

    /// Coefficient or NTT representation.
    pub fn representation(&self) -> Representation {
        self.repr
    }

    /// Limb i (N words), or `None` if i ≥ k.
    pub fn limb(&self, i: usize) -> Option<&[u64]> {
        self.data.chunks_exact(self.ctx.n).nth(i)
    }

    /// Mutable limb i; the caller must keep values below q_i.
    pub fn limb_mut(&mut self, i: usize) -> Option<&mut [u64]> {
        let n = self.ctx.n;
        self.data.chunks_exact_mut(n).nth(i)
    }

    /// All limbs, limb-major (k·N words).
    pub fn as_slice(&self) -> &[u64] {
        &self.data
    }

    /// All limbs, mutable; the caller must keep values reduced.
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.data
    }

    /// Converts to NTT representation in place (no-op if already there).
    pub fn to_ntt(&mut self) -> Result<()> {
        self.transform(Representation::Ntt, NttTable::forward)
    }

    /// Converts to coefficient representation in place (no-op if already there).
    pub fn to_coeff(&mut self) -> Result<()> {
        self.transform(Representation::Coefficient, NttTable::inverse)
    }

    /// Applies `f` (the forward or inverse transform) to every limb unless the polynomial is
    /// already in `target` representation.
    fn transform(
        &mut self,
        target: Representation,
        f: fn(&NttTable, &mut [u64]) -> Result<()>,
    ) -> Result<()> {
        if self.repr == target {
            return Ok(());
        }
        for (limb, t) in self.data.chunks_exact_mut(self.ctx.n).zip(&self.ctx.tables) {
            f(t, limb)?;
        }
        self.repr = target;
        Ok(())
    }

    fn check_compatible(&self, other: &RnsPoly) -> Result<()> {
        if !Arc::ptr_eq(&self.ctx, &other.ctx) && *self.ctx != *other.ctx {
            return Err(MathError::Incompatible("polynomials from different rings"));
        }
        if self.repr != other.repr {
            return Err(MathError::Incompatible(
                "polynomials in different representations",
            ));
        }
        Ok(())
    }

    fn zip_apply(&mut self, other: &RnsPoly, f: impl Fn(&Modulus, u64, u64) -> u64) -> Result<()> {
        self.check_compatible(other)?;
        let n = self.ctx.n;
        let ctx = self.ctx.clone();
        for ((a, b), q) in self
            .data
            .chunks_exact_mut(n)
            .zip(other.data.chunks_exact(n))
            .zip(ctx.moduli())
        {
            for (x, &y) in a.iter_mut().zip(b) {
                *x = f(q, *x, y);
            }
        }
        Ok(())
    }

    /// self += other.
    pub fn add_assign(&mut self, other: &RnsPoly) -> Result<()> {
        self.zip_apply(other, |q, a, b| q.add(a, b))
    }

    /// self −= other.
    pub fn sub_assign(&mut self, other: &RnsPoly) -> Result<()> {
        self.zip_apply(other, |q, a, b| q.sub(a, b))
    }

    /// self ·= other, point-wise; both must be in NTT representation.
    pub fn mul_assign(&mut self, other: &RnsPoly) -> Result<()> {
        if self.repr != Representation::Ntt {
            return Err(MathError::Incompatible(
                "polynomial products need NTT representation",
            ));
        }
        self.zip_apply(other, |q, a, b| q.mul(a, b))
    }

    /// self += a·b (point-wise, NTT representation), the inner step of key switching.
    pub fn mul_add_assign(&mut self, a: &RnsPoly, b: &RnsPoly) -> Result<()> {
        self.check_compatible(a)?;
        a.check_compatible(b)?;
        if self.repr != Representation::Ntt {
            return Err(MathError::Incompatible(
                "polynomial products need NTT representation",
            ));
        }
        let n = self.ctx.n;
        let ctx = self.ctx.clone();
        for (((d, x), y), q) in self
            .data
            .chunks_exact_mut(n)
            .zip(a.data.chunks_exact(n))
            .zip(b.data.chunks_exact(n))
            .zip(ctx.moduli())
        {
            for ((o, &u), &v) in d.iter_mut().zip(x).zip(y) {
                *o = q.mul_add(u, v, *o);
            }
        }
        Ok(())
    }

    /// self = −self.
    pub fn neg_assign(&mut self) {
        let n = self.ctx.n;
        let ctx = self.ctx.clone();
        for (limb, q) in self.data.chunks_exact_mut(n).zip(ctx.moduli()) {
            limb.iter_mut().for_each(|x| *x = q.neg(*x));
        }
    }

    /// self ·= c for an integer scalar c (reduced mod each q_i).
    pub fn mul_scalar_assign(&mut self, c: u64) {
        let n = self.ctx.n;
        let ctx = self.ctx.clone();
        for (limb, q) in self.data.chunks_exact_mut(n).zip(ctx.moduli()) {
            let s = q.shoup(c);
            limb.iter_mut().for_each(|x| *x = q.mul_shoup(*x, s));
        }
    }

    /// self ·= c_i on limb i (a scalar given by its residues, e.g. Δ = ⌊Q/t⌋ in RNS form).
    pub fn mul_rns_scalar_assign(&mut self, residues: &[u64]) -> Result<()> {
        if residues.len() != self.ctx.basis.len() {
            return Err(MathError::LengthMismatch {
                what: "scalar residues",
                expected: self.ctx.basis.len(),
                got: residues.len(),
            });
        }
        let n = self.ctx.n;
        let ctx = self.ctx.clone();
        for ((limb, q), &c) in self
            .data
            .chunks_exact_mut(n)
            .zip(ctx.moduli())
            .zip(residues)
        {
            let s = q.shoup(c);
            limb.iter_mut().for_each(|x| *x = q.mul_shoup(*x, s));
        }
        Ok(())
    }

    /// The sum self + other.
    pub fn add(&self, other: &RnsPoly) -> Result<RnsPoly> {
        let mut r = self.clone();
        r.add_assign(other)?;
        Ok(r)
    }

    /// The difference self − other.
    pub fn sub(&self, other: &RnsPoly) -> Result<RnsPoly> {
        let mut r = self.clone();
        r.sub_assign(other)?;
        Ok(r)
    }

    /// The negation −self.
    pub fn neg(&self) -> RnsPoly {
        let mut r = self.clone();
        r.neg_assign();
        r
    }

    /// The product self·other; both in NTT representation.
    pub fn mul(&self, other: &RnsPoly) -> Result<RnsPoly> {
        let mut r = self.clone();
        r.mul_assign(other)?;
        Ok(r)
    }

    /// The coefficients as centered big integers in (−Q/2, Q/2] (coefficient representation only).
    pub fn to_bigint_centered(&self) -> Result<Vec<BigInt>> {
        if self.repr != Representation::Coefficient {
            return Err(MathError::Incompatible(
                "CRT reconstruction needs coefficient representation",
            ));
        }
        let n = self.ctx.n;
        let k = self.ctx.basis.len();
        let mut residues = alloc::vec![0u64; k];
        (0..n)
            .map(|c| {
                for (i, r) in residues.iter_mut().enumerate() {
                    *r = self.data[i * n + c];
                }
                self.ctx.basis.reconstruct_centered(&residues)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
