//! Exact arithmetic in Z[x]/(x^n + 1) with big-integer coefficients: the negacyclic product is
//! computed exactly through enough 60-bit NTT primes to hold every coefficient of the integer result,
//! then CRT-reconstructed and reduced or scaled as the textbook scheme requires.

use crate::arith::ntt_primes;
use crate::error::Result;
use crate::rns::RnsBasis;
use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

/// A polynomial with integer coefficients.
pub type BigPoly = Vec<BigInt>;

fn max_abs(a: &[BigInt]) -> u64 {
    a.iter().map(|x| x.bits()).max().unwrap_or(0)
}

/// Exact a·b in Z[x]/(x^n + 1).
pub fn mul_exact(a: &[BigInt], b: &[BigInt]) -> Result<BigPoly> {
    let n = a.len();
    let bits = max_abs(a) + max_abs(b) + n.trailing_zeros() as u64 + 2;
    let count = (bits as usize).div_ceil(59).max(1);
    let basis = RnsBasis::new(n, &ntt_primes(60, n, count, &[])?)?;
    let q: BigInt = BigInt::from_biguint(Sign::Plus, basis.product().clone());
    let lift = |p: &[BigInt]| -> Vec<u64> {
        let mut out = vec![0u64; n * basis.len()];
        for (i, m) in basis.moduli().iter().enumerate() {
            let mb = BigInt::from(m.value());
            for (j, x) in p.iter().enumerate() {
                out[i * n + j] = x.mod_floor(&mb).to_u64().unwrap_or(0);
            }
        }
        out
    };
    let mut fa = lift(a);
    let fb = lift(b);
    let mut fbm = fb;
    for (i, table) in basis.ntt().iter().enumerate() {
        table.forward(&mut fa[i * n..(i + 1) * n]);
        table.forward(&mut fbm[i * n..(i + 1) * n]);
        let m = basis.moduli()[i];
        for j in i * n..(i + 1) * n {
            fa[j] = m.mul(fa[j], fbm[j]);
        }
        table.inverse(&mut fa[i * n..(i + 1) * n]);
    }
    let half = &q >> 1u32;
    Ok((0..n)
        .map(|j| {
            let v = BigInt::from_biguint(Sign::Plus, basis.reconstruct(&fa, j));
            if v > half {
                v - &q
            } else {
                v
            }
        })
        .collect())
}

/// Coefficient-wise reduction into [0, m).
pub fn reduce(a: &mut [BigInt], m: &BigInt) {
    a.iter_mut().for_each(|x| *x = x.mod_floor(m));
}

/// Coefficient-wise centered representative in (−m/2, m/2].
pub fn center(a: &[BigInt], m: &BigInt) -> BigPoly {
    let half = m >> 1u32;
    a.iter()
        .map(|x| {
            let r = x.mod_floor(m);
            if r > half {
                r - m
            } else {
                r
            }
        })
        .collect()
}

/// round(num·x/den) for every coefficient (ties away from zero).
pub fn scale_round(a: &[BigInt], num: &BigInt, den: &BigInt) -> BigPoly {
    a.iter()
        .map(|x| {
            let v = x * num;
            let twice = (&v << 1u32) + if v.is_negative() { -den } else { den.clone() };
            let d = den << 1u32;
            // Truncating division of (2v ± den) by 2·den rounds half away from zero.
            &twice / &d
        })
        .collect()
}

/// a + b.
pub fn add(a: &[BigInt], b: &[BigInt]) -> BigPoly {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// Signed small coefficients as a big polynomial.
pub fn from_i64(v: &[i64]) -> BigPoly {
    v.iter().map(|&x| BigInt::from(x)).collect()
}

/// The zero polynomial of degree n.
pub fn zero(n: usize) -> BigPoly {
    vec![BigInt::zero(); n]
}
