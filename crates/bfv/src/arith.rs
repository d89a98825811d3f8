//! Facade over the arithmetic core `vsp-math`: word-size prime moduli with Barrett and Shoup
//! products, NTT-friendly primes and the negacyclic NTT (Harvey butterflies, run-time AVX2). The rest
//! of vsp-bfv reaches modular arithmetic only through this module; it adapts vsp-math's API to the
//! shapes the scheme code uses (plain `u64` Shoup quotients, `Option` inverses, infallible
//! transforms on buffers whose length is fixed at construction).

use crate::error::{Error, Result};
use vsp_math::ShoupConst;

/// A prime modulus q < 2^62 (vsp-math's [`vsp_math::Modulus`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulus(vsp_math::Modulus);

impl Modulus {
    /// Builds the modulus; q must be in [2, 2^62).
    pub fn new(q: u64) -> Result<Self> {
        Ok(Self(vsp_math::Modulus::new(q)?))
    }
    /// The modulus value.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.0.value()
    }
    /// x mod q for any 128-bit x.
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        self.0.reduce_u128(x)
    }
    /// x mod q.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        self.0.reduce(x)
    }
    /// Signed x reduced into [0, q).
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        self.0.reduce_i64(x)
    }
    /// (a + b) mod q for a, b < q.
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        self.0.add(a, b)
    }
    /// (a − b) mod q for a, b < q.
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        self.0.sub(a, b)
    }
    /// −a mod q for a < q.
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        self.0.neg(a)
    }
    /// a·b mod q.
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.0.mul(a, b)
    }
    /// Shoup quotient ⌊w·2^64/q⌋ of a fixed multiplicand w < q.
    #[inline(always)]
    pub fn shoup(&self, w: u64) -> u64 {
        self.0.shoup(w).quotient
    }
    /// a·w mod q in [0, q) for any 64-bit a, with w's Shoup quotient.
    #[inline(always)]
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        self.0.mul_shoup(
            a,
            ShoupConst {
                value: w,
                quotient: w_shoup,
            },
        )
    }
    /// a^e mod q.
    pub fn pow(&self, a: u64, e: u64) -> u64 {
        self.0.pow(a, e)
    }
    /// a^{-1} mod q, None when a is not invertible.
    pub fn inv(&self, a: u64) -> Option<u64> {
        self.0.inv(a).ok()
    }
}

/// Deterministic Miller–Rabin (vsp-math).
pub fn is_prime(n: u64) -> bool {
    vsp_math::is_prime(n)
}

/// `count` distinct primes of exactly `bits` bits, ≡ 1 mod 2n, largest first, skipping `exclude`.
pub fn ntt_primes(bits: u32, n: usize, count: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    let all = vsp_math::generate_ntt_primes(bits, n, count + exclude.len())?;
    let out: Vec<u64> = all
        .into_iter()
        .filter(|p| !exclude.contains(p))
        .take(count)
        .collect();
    if out.len() < count {
        return Err(Error::NotEnoughPrimes {
            bits,
            modulus: 2 * n,
        });
    }
    Ok(out)
}

/// Negacyclic NTT modulo one prime q ≡ 1 mod 2n (vsp-math's table, output in bit-reversed order).
#[derive(Clone, Debug)]
pub struct NttTable {
    inner: vsp_math::NttTable,
    n: usize,
}

impl NttTable {
    /// Tables for degree n modulo q.
    pub fn new(m: Modulus, n: usize) -> Result<Self> {
        Ok(Self {
            inner: vsp_math::NttTable::new(n, m.0)?,
            n,
        })
    }
    /// In-place forward transform of exactly n coefficients in [0, 4q); output in [0, q).
    #[inline]
    pub fn forward(&self, a: &mut [u64]) {
        // Every buffer in this crate is built with length n, the only error vsp-math reports.
        debug_assert_eq!(a.len(), self.n);
        let _ = self.inner.forward(a);
    }
    /// In-place inverse transform (with the 1/n factor), output in [0, q).
    #[inline]
    pub fn inverse(&self, a: &mut [u64]) {
        debug_assert_eq!(a.len(), self.n);
        let _ = self.inner.inverse(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntt_multiplies_negacyclically() {
        for bits in [20u32, 50, 61] {
            let n = 64;
            let q = ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(q).unwrap();
            let t = NttTable::new(m, n).unwrap();
            let a: Vec<u64> = (0..n as u64)
                .map(|i| m.reduce(i * 7919 + 3 + (q - 1) * (i % 3)))
                .collect();
            let b: Vec<u64> = (0..n as u64).map(|i| m.reduce(q - 1 - i * 31)).collect();
            let want = vsp_math::ntt::negacyclic_schoolbook(&a, &b, &m.0);
            let (mut fa, mut fb) = (a.clone(), b.clone());
            t.forward(&mut fa);
            t.forward(&mut fb);
            let mut c: Vec<u64> = fa.iter().zip(&fb).map(|(x, y)| m.mul(*x, *y)).collect();
            t.inverse(&mut c);
            assert_eq!(c, want);
            t.inverse(&mut fa);
            assert_eq!(fa, a);
        }
    }

    #[test]
    fn barrett_matches_u128_remainder() {
        for q in [3u64, 65537, (1 << 61) - 1, 0x3fff_ffff_fff0_0001] {
            let m = Modulus::new(q).unwrap();
            for x in [
                0u128,
                1,
                u128::MAX,
                (q as u128) * (q as u128) - 1,
                0x1234_5678_9abc_def0_1122_3344_5566_7788,
            ] {
                assert_eq!(m.reduce_u128(x) as u128, x % q as u128);
            }
        }
    }
}
