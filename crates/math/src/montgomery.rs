//! Montgomery multiplication (Montgomery 1985) for odd moduli q < 2^62, R = 2^64.
//!
//! Values live in Montgomery form ã = a·R mod q; a product costs two 64×64 multiplications plus
//! one high product and needs no precomputed per-constant data, which pays off for long chains of
//! multiplications by *varying* operands (exponentiation, products of many residues). For products
//! by a fixed constant, Shoup's method in [`crate::Modulus`] is cheaper and is what the NTT uses.

use crate::error::{MathError, Result};
use crate::modulus::Modulus;

/// Montgomery arithmetic modulo an odd q < 2^62 with R = 2^64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Montgomery {
    modulus: Modulus,
    /// −q^{-1} mod 2^64.
    q_neg_inv: u64,
    /// R^2 mod q, to enter Montgomery form with one product.
    r2: u64,
}

impl Montgomery {
    /// Montgomery constants for an odd modulus.
    pub fn new(modulus: Modulus) -> Result<Self> {
        let q = modulus.value();
        if q.is_multiple_of(2) {
            return Err(MathError::ModulusOutOfRange {
                value: q,
                reason: "Montgomery form needs an odd modulus",
            });
        }
        // Newton iteration for q^{-1} mod 2^64: each step doubles the number of correct bits.
        let mut inv = q; // correct to 3 bits for odd q
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(inv)));
        }
        let r2 = modulus
            .reduce_u128(((1u128 << 64) % q as u128 * ((1u128 << 64) % q as u128)) % q as u128);
        Ok(Self {
            modulus,
            q_neg_inv: inv.wrapping_neg(),
            r2,
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// REDC: t·R^{-1} mod q for t < q·2^64.
    #[inline(always)]
    pub fn redc(&self, t: u128) -> u64 {
        let q = self.modulus.value();
        let m = (t as u64).wrapping_mul(self.q_neg_inv);
        let u = ((t + m as u128 * q as u128) >> 64) as u64;
        self.modulus.reduce_once(u)
    }

    /// a·R mod q (a < 2^64).
    #[inline]
    pub fn to_montgomery(&self, a: u64) -> u64 {
        self.redc(self.modulus.reduce(a) as u128 * self.r2 as u128)
    }

    /// a·R^{-1} mod q, leaving Montgomery form.
    #[inline]
    pub fn from_montgomery(&self, a: u64) -> u64 {
        self.redc(a as u128)
    }

    /// Product of two values in Montgomery form (inputs in [0, q)).
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.redc(a as u128 * b as u128)
    }

    /// a^e for a in Montgomery form; result in Montgomery form.
    pub fn pow(&self, a: u64, e: u64) -> u64 {
        crate::modulus::square_and_multiply(self.to_montgomery(1), a, e, |x, y| self.mul(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn matches_barrett() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
        for q in [3u64, 65537, (1 << 62) - 57, 1_125_899_906_826_241] {
            let m = Modulus::new(q).unwrap();
            let mont = Montgomery::new(m).unwrap();
            for _ in 0..1000 {
                let (a, b) = (rng.gen::<u64>() % q, rng.gen::<u64>() % q);
                let (am, bm) = (mont.to_montgomery(a), mont.to_montgomery(b));
                assert_eq!(mont.from_montgomery(am), a);
                assert_eq!(mont.from_montgomery(mont.mul(am, bm)), m.mul(a, b));
                let e = rng.gen::<u64>() % 1000;
                assert_eq!(mont.from_montgomery(mont.pow(am, e)), m.pow(a, e));
            }
        }
        assert!(Montgomery::new(Modulus::new(1 << 20).unwrap()).is_err());
    }
}
