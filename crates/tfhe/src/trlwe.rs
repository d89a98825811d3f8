//! TRLWE samples (CGGI16 §2.1, k = 1): c = (a, b) ∈ `T_N[X]^2` with phase b − a·s in `T[X]/(X^N+1)`.
//!
//! Level 1 (u32, N) is what CMUX memory cells hold; level 2 (u64) only lives inside circuit
//! bootstrapping. Also: multiplication by monomials X^k and sample extraction (CGGI16 Def. 3.6).

use crate::tlwe::{encode_bit, Tlwe};
use crate::torus::Torus;
use crate::Error;
use serde::{Deserialize, Serialize};

/// Checks that a TRLWE has the key's degree `expected`.
pub(crate) fn check_trlwe_degree(degree: usize, expected: usize) -> Result<(), Error> {
    if degree != expected {
        return Err(Error::Dimension(format!(
            "TRLWE degree {degree}, expected {expected}"
        )));
    }
    Ok(())
}

/// A TRLWE sample (mask polynomial a, body polynomial b).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trlwe<T> {
    pub(crate) a: Vec<T>,
    pub(crate) b: Vec<T>,
}

/// Level-1 TRLWE (CMUX memory cell, ROM block).
pub type TrlweLvl1 = Trlwe<u32>;

/// Coefficient i of X^k·p for p of degree < N, k in [0, 2N).
#[inline(always)]
fn rot_coeff<T: Torus>(p: &[T], k: usize, i: usize) -> T {
    let n = p.len();
    // (X^k p)_i = ±p_{(i - k) mod N}, negated when the wrap crosses X^N = -1 an odd number of times.
    let k = k % (2 * n);
    let (k, neg) = if k >= n { (k - n, true) } else { (k, false) };
    let (v, wrapped) = if i >= k {
        (p[i - k], false)
    } else {
        (p[i + n - k], true)
    };
    if wrapped ^ neg {
        v.neg()
    } else {
        v
    }
}

/// out = X^k · p (negacyclic), k in [0, 2N).
pub(crate) fn mul_monomial<T: Torus>(out: &mut [T], p: &[T], k: usize) {
    let n = p.len();
    let k = k % (2 * n);
    let (kk, neg) = if k >= n { (k - n, true) } else { (k, false) };
    // Wrapped part: indices 0..kk come from p[n-kk..] negated (then possibly negated again).
    for i in 0..kk {
        let v = p[i + n - kk];
        out[i] = if neg { v } else { v.neg() };
    }
    for i in kk..n {
        let v = p[i - kk];
        out[i] = if neg { v.neg() } else { v };
    }
}

/// out = X^k · p − p.
pub(crate) fn mul_monomial_minus_one<T: Torus>(out: &mut [T], p: &[T], k: usize) {
    mul_monomial(out, p, k);
    out.iter_mut().zip(p).for_each(|(o, &v)| *o = o.sub(v));
}

/// The torus polynomial of degree n whose coefficient i encodes `bits[i]` (±1/8); remaining
/// coefficients are false.
pub(crate) fn encode_bits<T: Torus>(n: usize, bits: &[bool]) -> Result<Vec<T>, Error> {
    if bits.len() > n {
        return Err(Error::Dimension(format!(
            "{} bits do not fit degree {n}",
            bits.len()
        )));
    }
    let mut m = vec![encode_bit::<T>(false); n];
    m.iter_mut()
        .zip(bits)
        .for_each(|(x, &b)| *x = encode_bit(b));
    Ok(m)
}

impl<T: Torus> Trlwe<T> {
    /// The noiseless sample (0, m).
    pub fn trivial(m: Vec<T>) -> Self {
        Trlwe {
            a: vec![T::zero(); m.len()],
            b: m,
        }
    }
    /// A trivial sample whose coefficient i encodes `bits[i]` (±1/8); remaining coefficients are false.
    pub fn trivial_bits(n: usize, bits: &[bool]) -> Result<Self, Error> {
        Ok(Self::trivial(encode_bits(n, bits)?))
    }
    /// The zero sample of degree n.
    pub fn zero(n: usize) -> Self {
        Trlwe {
            a: vec![T::zero(); n],
            b: vec![T::zero(); n],
        }
    }
    /// Rebuilds a sample from its polynomials (equal power-of-two lengths).
    pub fn from_polys(a: Vec<T>, b: Vec<T>) -> Result<Self, Error> {
        if a.len() != b.len() || !a.len().is_power_of_two() {
            return Err(Error::Dimension(
                "TRLWE polynomials must have equal power-of-two degree".into(),
            ));
        }
        Ok(Trlwe { a, b })
    }
    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.b.len()
    }
    /// Mask polynomial.
    pub fn a(&self) -> &[T] {
        &self.a
    }
    /// Body polynomial.
    pub fn b(&self) -> &[T] {
        &self.b
    }
    pub(crate) fn check(&self, o: &Self) -> Result<(), Error> {
        if self.degree() != o.degree() {
            return Err(Error::Dimension(format!(
                "TRLWE degrees {} and {}",
                self.degree(),
                o.degree()
            )));
        }
        Ok(())
    }
    /// self += o.
    pub fn add_assign(&mut self, o: &Self) -> Result<(), Error> {
        self.check(o)?;
        self.add_assign_unchecked(o);
        Ok(())
    }
    pub(crate) fn add_assign_unchecked(&mut self, o: &Self) {
        self.combine(o, T::add);
    }
    /// self -= o.
    pub fn sub_assign(&mut self, o: &Self) -> Result<(), Error> {
        self.check(o)?;
        self.combine(o, T::sub);
        Ok(())
    }
    /// Coefficient-wise self ← f(self, o) on both polynomials (lengths already checked).
    pub(crate) fn combine(&mut self, o: &Self, f: fn(T, T) -> T) {
        for (x, &y) in self.a.iter_mut().zip(&o.a) {
            *x = f(*x, y);
        }
        for (x, &y) in self.b.iter_mut().zip(&o.b) {
            *x = f(*x, y);
        }
    }
    /// Adds a constant to coefficient `i` of the phase.
    pub fn add_const(&mut self, i: usize, m: T) -> Result<(), Error> {
        let n = self.degree();
        let c = self
            .b
            .get_mut(i)
            .ok_or_else(|| Error::Dimension(format!("coefficient {i} >= {n}")))?;
        *c = c.add(m);
        Ok(())
    }
    /// X^k · self for any integer k (rotation of the encrypted polynomial, negacyclic).
    pub fn mul_monomial(&self, k: i64) -> Self {
        let n = self.degree();
        let k = k.rem_euclid(2 * n as i64) as usize;
        let mut out = Trlwe::zero(n);
        mul_monomial(&mut out.a, &self.a, k);
        mul_monomial(&mut out.b, &self.b, k);
        out
    }
    /// Sample extraction of coefficient `i`: a TLWE of dimension N under the same key whose phase is
    /// coefficient i of this sample's phase.
    pub fn sample_extract(&self, i: usize) -> Result<Tlwe<T>, Error> {
        let n = self.degree();
        if i >= n {
            return Err(Error::Dimension(format!("coefficient {i} >= {n}")));
        }
        let mut data = Vec::with_capacity(n + 1);
        // (a·s)_i = Σ_{j≤i} a_{i−j} s_j − Σ_{j>i} a_{N+i−j} s_j.
        for j in 0..n {
            data.push(if j <= i {
                self.a[i - j]
            } else {
                self.a[n + i - j].neg()
            });
        }
        data.push(self.b[i]);
        Ok(Tlwe { data })
    }
    /// Coefficient i of X^k·p for tests and callers that need one rotated coefficient.
    #[doc(hidden)]
    pub fn rotated_body_coeff(&self, k: usize, i: usize) -> T {
        rot_coeff(&self.b, k, i)
    }
}

/// Encrypts the polynomial m: a uniform from `mask_rng`, b = a·s + m + e (a·s computed exactly).
pub(crate) fn encrypt<T: Torus, R1: rand_core::RngCore, R2: rand_core::RngCore>(
    plan: &crate::fft::FftPlan,
    key_fft: &[f64],
    m: &[T],
    sigma: f64,
    mask_rng: &mut R1,
    noise_rng: &mut R2,
) -> Trlwe<T> {
    let a: Vec<T> = (0..m.len()).map(|_| T::uniform(mask_rng)).collect();
    let mut b = plan.exact_mul_small(&a, key_fft);
    for (x, &mi) in b.iter_mut().zip(m) {
        *x = x
            .add(mi)
            .add(T::from_phase(crate::rng::normal(noise_rng, sigma)));
    }
    Trlwe { a, b }
}

/// The phase polynomial b − a·s (exact).
pub(crate) fn phase<T: Torus>(plan: &crate::fft::FftPlan, key_fft: &[f64], c: &Trlwe<T>) -> Vec<T> {
    let as_ = plan.exact_mul_small(&c.a, key_fft);
    c.b.iter().zip(&as_).map(|(&b, &x)| b.sub(x)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monomial_matches_rot_coeff_and_composes() {
        let n = 16;
        let p: Vec<u32> = (1..=n as u32).collect();
        let mut out = vec![0u32; n];
        for k in 0..2 * n {
            mul_monomial(&mut out, &p, k);
            for (i, &o) in out.iter().enumerate() {
                assert_eq!(o, rot_coeff(&p, k, i), "k={k} i={i}");
            }
        }
        // X^N = -1
        mul_monomial(&mut out, &p, n);
        assert!(out.iter().zip(&p).all(|(&o, &v)| o == v.wrapping_neg()));
        // X^1 · X^(2N-1) = 1
        let t = Trlwe::trivial(p.clone()).mul_monomial(1).mul_monomial(-1);
        assert_eq!(t.b, p);
    }
}
