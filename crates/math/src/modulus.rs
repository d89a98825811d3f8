//! Word-size modular arithmetic: [`Modulus`] for primes (or any odd/even modulus) below 2^62 and
//! [`Modulus32`] for moduli below 2^31.
//!
//! Reduction of 128-bit products is Barrett's (the ratio ⌊2^128/q⌋ precomputed as two words, as in
//! SEAL and seed 001's "Barrett reduction"); multiplication by a constant known in advance is Shoup's
//! (one high product and two low products, Harvey 2014 §2). The `_lazy` variants skip the final
//! conditional subtraction and leave results in [0, 2q), which the NTT butterflies exploit. The 62-bit
//! cap keeps 4q below 2^64 so that Harvey's [0, 4q) ranges never overflow.

use crate::error::{MathError, Result};

/// Largest supported modulus bit size (4q must fit in a u64 for lazy butterflies).
pub const MAX_MODULUS_BITS: u32 = 62;

/// A modulus q with 2 ≤ q < 2^62 and its precomputed Barrett constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus {
    value: u64,
    bits: u32,
    /// ⌊2^128 / q⌋ split into (low, high) words.
    ratio: [u64; 2],
    /// ⌊2^64 / q⌋ for reducing a single word.
    ratio64: u64,
}

/// A constant w together with its Shoup quotient ⌊w·2^64/q⌋ (the AVX-512 IFMA tables use
/// ⌊w·2^52/q⌋ instead). `repr(C)`: SIMD kernels load (value, quotient) pairs as vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct ShoupConst {
    /// The constant, in [0, q).
    pub value: u64,
    /// ⌊value · 2^64 / q⌋.
    pub quotient: u64,
}

impl Modulus {
    /// Creates a modulus; q must satisfy 2 ≤ q < 2^62.
    pub fn new(value: u64) -> Result<Self> {
        if value < 2 {
            return Err(MathError::ModulusOutOfRange {
                value,
                reason: "must be at least 2",
            });
        }
        if value >> MAX_MODULUS_BITS != 0 {
            return Err(MathError::ModulusOutOfRange {
                value,
                reason: "must be below 2^62",
            });
        }
        let ratio128 =
            u128::MAX / value as u128 + u128::from(u128::MAX % value as u128 == value as u128 - 1);
        let ratio64 = (u64::MAX / value) + u64::from(u64::MAX % value == value - 1);
        Ok(Self {
            value,
            bits: 64 - value.leading_zeros(),
            ratio: [ratio128 as u64, (ratio128 >> 64) as u64],
            ratio64,
        })
    }

    /// The modulus q.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.value
    }

    /// Number of significant bits of q.
    #[inline(always)]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The Barrett ratio ⌊2^128/q⌋ as (low, high) words.
    #[inline(always)]
    pub fn barrett_ratio(&self) -> [u64; 2] {
        self.ratio
    }

    /// Whether q is prime (deterministic Miller–Rabin).
    pub fn is_prime(&self) -> bool {
        crate::prime::is_prime(self.value)
    }

    /// a mod q for any 64-bit a (Barrett with ⌊2^64/q⌋).
    #[inline(always)]
    pub fn reduce(&self, a: u64) -> u64 {
        let qhat = ((a as u128 * self.ratio64 as u128) >> 64) as u64;
        let r = a.wrapping_sub(qhat.wrapping_mul(self.value));
        self.reduce_once(r)
    }

    /// a mod q for a 128-bit a (Barrett with ⌊2^128/q⌋).
    #[inline(always)]
    pub fn reduce_u128(&self, a: u128) -> u64 {
        let r = self.reduce_u128_lazy(a);
        self.reduce_once(r)
    }

    /// 128-bit Barrett reduction that leaves the result in [0, 2q).
    #[inline(always)]
    pub fn reduce_u128_lazy(&self, a: u128) -> u64 {
        let (x0, x1) = (a as u64, (a >> 64) as u64);
        let [r0, r1] = self.ratio;
        // ⌊a·ratio / 2^128⌋ computed exactly from the four partial products; since
        // ratio > 2^128/q − 1 the quotient estimate is short by at most 1, hence [0, 2q).
        let lo_lo = (x0 as u128 * r0 as u128) >> 64;
        let lo_hi = x0 as u128 * r1 as u128;
        let hi_lo = x1 as u128 * r0 as u128;
        let mid = lo_lo + (lo_hi as u64 as u128) + (hi_lo as u64 as u128);
        let qhat = (x1.wrapping_mul(r1))
            .wrapping_add((lo_hi >> 64) as u64)
            .wrapping_add((hi_lo >> 64) as u64)
            .wrapping_add((mid >> 64) as u64);
        x0.wrapping_sub(qhat.wrapping_mul(self.value))
    }

    /// Subtracts q once if a ≥ q (maps [0, 2q) to [0, q)).
    #[inline(always)]
    pub fn reduce_once(&self, a: u64) -> u64 {
        let (r, borrow) = a.overflowing_sub(self.value);
        if borrow {
            a
        } else {
            r
        }
    }

    /// Reduces a signed integer to [0, q).
    #[inline]
    pub fn reduce_i64(&self, a: i64) -> u64 {
        self.with_sign(a < 0, self.reduce(a.unsigned_abs()))
    }

    /// Reduces a signed 128-bit integer to [0, q).
    #[inline]
    pub fn reduce_i128(&self, a: i128) -> u64 {
        self.with_sign(a < 0, self.reduce_u128(a.unsigned_abs()))
    }

    /// −r if `negative`, else r (r ∈ [0, q)).
    #[inline(always)]
    fn with_sign(&self, negative: bool, r: u64) -> u64 {
        if negative {
            self.neg(r)
        } else {
            r
        }
    }

    /// The centered representative of a ∈ [0, q) in (−q/2, q/2].
    #[inline]
    pub fn center(&self, a: u64) -> i64 {
        if a > self.value / 2 {
            a as i64 - self.value as i64
        } else {
            a as i64
        }
    }

    /// (a + b) mod q for a, b ∈ [0, q).
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        self.reduce_once(a + b)
    }

    /// (a − b) mod q for a, b ∈ [0, q).
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        let (r, borrow) = a.overflowing_sub(b);
        if borrow {
            r.wrapping_add(self.value)
        } else {
            r
        }
    }

    /// −a mod q for a ∈ [0, q).
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 {
            0
        } else {
            self.value - a
        }
    }

    /// a·b mod q for a, b < 2^64 with a·b < 2^128 (Barrett).
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// a·b + c mod q.
    #[inline(always)]
    pub fn mul_add(&self, a: u64, b: u64, c: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128 + c as u128)
    }

    /// Precomputes the Shoup quotient of w ∈ [0, q) (w ≥ q is reduced first).
    #[inline]
    pub fn shoup(&self, w: u64) -> ShoupConst {
        let value = self.reduce(w);
        let quotient = (((value as u128) << 64) / self.value as u128) as u64;
        ShoupConst { value, quotient }
    }

    /// a·w mod q in [0, 2q) for any 64-bit a (Shoup; Harvey 2014, Alg. 2 without the last step).
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, a: u64, w: ShoupConst) -> u64 {
        let qhat = ((a as u128 * w.quotient as u128) >> 64) as u64;
        a.wrapping_mul(w.value)
            .wrapping_sub(qhat.wrapping_mul(self.value))
    }

    /// a·w mod q in [0, q) for any 64-bit a (Shoup).
    #[inline(always)]
    pub fn mul_shoup(&self, a: u64, w: ShoupConst) -> u64 {
        self.reduce_once(self.mul_shoup_lazy(a, w))
    }

    /// a^e mod q by square-and-multiply.
    pub fn pow(&self, a: u64, e: u64) -> u64 {
        square_and_multiply(self.reduce(1), self.reduce(a), e, |x, y| self.mul(x, y))
    }

    /// a^{-1} mod q by the extended Euclidean algorithm (works for any q coprime to a).
    pub fn inv(&self, a: u64) -> Result<u64> {
        let a = self.reduce(a);
        let (g, x) = ext_gcd_inverse(a, self.value);
        if g != 1 {
            return Err(MathError::NotInvertible {
                value: a,
                modulus: self.value,
            });
        }
        Ok(x)
    }

    /// a^{-1} mod q by Fermat's little theorem, a^{q−2}; q must be prime.
    pub fn inv_fermat(&self, a: u64) -> Result<u64> {
        let a = self.reduce(a);
        if a == 0 {
            return Err(MathError::NotInvertible {
                value: a,
                modulus: self.value,
            });
        }
        if !self.is_prime() {
            return Err(MathError::NotPrime(self.value));
        }
        Ok(self.pow(a, self.value - 2))
    }
}

/// Returns (gcd(a, m), a^{-1} mod m when the gcd is 1).
fn ext_gcd_inverse(a: u64, m: u64) -> (u64, u64) {
    let (mut r0, mut r1) = (m as i128, a as i128);
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    let inv = t0.rem_euclid(m as i128) as u64;
    (r0 as u64, inv)
}

/// base^e by square-and-multiply under the ring product `mul`, from the ring's `one` (the powers of
/// [`Modulus`], [`Modulus32`] and [`crate::Montgomery`], each in its own representation, and
/// Miller–Rabin's).
#[inline]
pub(crate) fn square_and_multiply<T: Copy>(
    one: T,
    mut base: T,
    mut e: u64,
    mul: impl Fn(T, T) -> T,
) -> T {
    let mut acc = one;
    while e > 0 {
        if e & 1 == 1 {
            acc = mul(acc, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    acc
}

/// A modulus q with 2 ≤ q < 2^31 for 32-bit words (SEAL-Embedded's word size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus32 {
    value: u32,
    /// ⌊2^64 / q⌋, the Barrett ratio for 64-bit products.
    ratio: u64,
}

impl Modulus32 {
    /// Creates a 32-bit modulus; q must satisfy 2 ≤ q < 2^31.
    pub fn new(value: u32) -> Result<Self> {
        if value < 2 || value >> 31 != 0 {
            return Err(MathError::ModulusOutOfRange {
                value: value as u64,
                reason: "32-bit modulus must be in [2, 2^31)",
            });
        }
        Ok(Self {
            value,
            ratio: u64::MAX / value as u64,
        })
    }

    /// The modulus q.
    #[inline(always)]
    pub fn value(&self) -> u32 {
        self.value
    }

    /// a mod q for a 64-bit a (Barrett, as SEAL-Embedded's `modulo.h`). The ratio R = ⌊(2^64−1)/q⌋
    /// is at least 2^64/q − 1, so the estimate q̂ = ⌊a·R/2^64⌋ exceeds a/q − 2 and a − q̂·q < 2q: one
    /// subtraction finishes, and as 2q < 2^32 it works in 32-bit words.
    #[inline(always)]
    pub fn reduce_u64(&self, a: u64) -> u32 {
        let qhat = ((a as u128 * self.ratio as u128) >> 64) as u64;
        let r = a.wrapping_sub(qhat.wrapping_mul(self.value as u64)) as u32;
        if r >= self.value {
            r - self.value
        } else {
            r
        }
    }

    /// A signed integer reduced into [0, q).
    #[inline(always)]
    pub fn reduce_i64(&self, a: i64) -> u32 {
        let r = self.reduce_u64(a.unsigned_abs());
        if a < 0 && r != 0 {
            self.value - r
        } else {
            r
        }
    }

    /// Shoup constant ⌊w·2^32/q⌋ of a reduced w, for [`Modulus32::mul_shoup_lazy`].
    #[inline(always)]
    pub fn shoup(&self, w: u32) -> u32 {
        (((w as u64) << 32) / self.value as u64) as u32
    }

    /// x·w mod q lazily in [0, 2q), for any x < 2^32, given `w_shoup` = [`Modulus32::shoup`]`(w)`
    /// (Harvey's butterflies in 32-bit words; the result fits a word for q < 2^31).
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, x: u32, w: u32, w_shoup: u32) -> u32 {
        let qhat = ((x as u64 * w_shoup as u64) >> 32) as u32;
        x.wrapping_mul(w)
            .wrapping_sub(qhat.wrapping_mul(self.value))
    }

    /// a·b mod q.
    #[inline(always)]
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        self.reduce_u64(a as u64 * b as u64)
    }

    /// (a + b) mod q for a, b ∈ [0, q).
    #[inline(always)]
    pub fn add(&self, a: u32, b: u32) -> u32 {
        let s = a + b;
        if s >= self.value {
            s - self.value
        } else {
            s
        }
    }

    /// (a − b) mod q for a, b ∈ [0, q).
    #[inline(always)]
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        if a >= b {
            a - b
        } else {
            a + self.value - b
        }
    }

    /// a^e mod q.
    pub fn pow(&self, a: u32, e: u64) -> u32 {
        square_and_multiply(self.reduce_u64(1), self.reduce_u64(a as u64), e, |x, y| {
            self.mul(x, y)
        })
    }

    /// a^{-1} mod q by extended Euclid.
    pub fn inv(&self, a: u32) -> Result<u32> {
        let a = self.reduce_u64(a as u64);
        let (g, x) = ext_gcd_inverse(a as u64, self.value as u64);
        if g != 1 {
            return Err(MathError::NotInvertible {
                value: a as u64,
                modulus: self.value as u64,
            });
        }
        Ok(x as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const QS: [u64; 6] = [
        2,
        3,
        65537,
        0x3fff_ffff_ffff_ffff,
        1_125_899_906_826_241,
        0x2000_0000_0000_0001,
    ];

    #[test]
    fn rejects_bad_moduli() {
        assert!(Modulus::new(0).is_err());
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 62).is_err());
        assert!(Modulus32::new(1 << 31).is_err());
        assert!(Modulus32::new(1).is_err());
    }

    #[test]
    fn barrett_and_shoup_match_u128_remainder() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for &q in &QS {
            let m = Modulus::new(q).unwrap();
            for _ in 0..2000 {
                let a: u64 = rng.gen::<u64>() % q;
                let b: u64 = rng.gen::<u64>() % q;
                let wide: u128 = rng.gen();
                let full: u64 = rng.gen();
                assert_eq!(m.mul(a, b) as u128, (a as u128 * b as u128) % q as u128);
                assert_eq!(m.reduce_u128(wide) as u128, wide % q as u128);
                assert_eq!(m.reduce(full), full % q);
                let w = m.shoup(b);
                assert_eq!(
                    m.mul_shoup(full, w) as u128,
                    (full as u128 * b as u128) % q as u128
                );
                assert!(m.mul_shoup_lazy(full, w) < 2 * q);
                assert_eq!(m.add(a, b) as u128, (a as u128 + b as u128) % q as u128);
                assert_eq!((m.sub(a, b) + b) % q, a);
                assert_eq!(m.add(m.neg(a), a), 0);
                let s: i64 = rng.gen();
                assert_eq!(m.reduce_i64(s) as i128, (s as i128).rem_euclid(q as i128));
                let c = m.center(a);
                assert_eq!(m.reduce_i64(c), a);
                assert!(c.unsigned_abs() <= q / 2);
            }
        }
    }

    #[test]
    fn inverses_and_powers() {
        let m = Modulus::new(1_125_899_906_826_241).unwrap();
        for a in [1u64, 2, 3, 12345, m.value() - 1] {
            let i = m.inv(a).unwrap();
            assert_eq!(m.mul(a, i), 1);
            assert_eq!(m.inv_fermat(a).unwrap(), i);
        }
        assert_eq!(m.pow(3, m.value() - 1), 1);
        assert!(m.inv(0).is_err());
        let composite = Modulus::new(15).unwrap();
        assert_eq!(composite.inv(2).unwrap(), 8);
        assert!(composite.inv(5).is_err());
        assert!(composite.inv_fermat(2).is_err());
    }

    #[test]
    fn modulus32_matches_reference() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        for q in [2u32, 134_012_929, (1 << 31) - 1] {
            let m = Modulus32::new(q).unwrap();
            for _ in 0..2000 {
                let a = rng.gen::<u32>() % q;
                let b = rng.gen::<u32>() % q;
                let x: u64 = rng.gen();
                assert_eq!(m.mul(a, b) as u64, a as u64 * b as u64 % q as u64);
                assert_eq!(m.reduce_u64(x) as u64, x % q as u64);
                assert_eq!(m.add(a, b) as u64, (a as u64 + b as u64) % q as u64);
                assert_eq!(m.add(m.sub(a, b), b), a);
                let xs = x as i64;
                assert_eq!(m.reduce_i64(xs) as i128, (xs as i128).rem_euclid(q as i128));
                let y = x as u32;
                let lazy = m.mul_shoup_lazy(y, a, m.shoup(a));
                assert!(lazy < 2 * q);
                assert_eq!(lazy as u64 % q as u64, y as u64 * a as u64 % q as u64);
            }
            for x in [0, u64::MAX, u64::MAX - 1, q as u64 * q as u64 - 1] {
                assert_eq!(m.reduce_u64(x) as u64, x % q as u64);
            }
            assert_eq!(
                m.reduce_i64(i64::MIN) as i128,
                (i64::MIN as i128).rem_euclid(q as i128)
            );
            if q > 2 {
                assert_eq!(m.mul(m.inv(3).unwrap(), 3), 1);
                assert_eq!(m.pow(5, q as u64 - 1), 1);
            }
        }
    }
}
