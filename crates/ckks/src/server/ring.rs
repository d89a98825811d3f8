//! RNS polynomial arithmetic of the server, in 64-bit words (primes < 2^61, so the special prime of
//! N = 8192/16384 fits): the negacyclic NTT in SEAL's order with Harvey's lazy butterflies and Shoup
//! constants (Harvey, J. Symb. Comp. 2014), and the per-prime helpers the evaluator needs.

use crate::arith::{bit_reverse, inv_mod, minimal_primitive_root, mul_mod};
use crate::error::{CkksError, Result};

/// One prime's NTT tables (SEAL layout: `roots[k] = ψ^{bitrev(k)}`).
#[derive(Clone, Debug)]
pub struct Ntt64 {
    /// The prime.
    pub q: u64,
    n: usize,
    roots: Vec<u64>,
    roots_shoup: Vec<u64>,
    inv_roots: Vec<u64>,
    inv_roots_shoup: Vec<u64>,
    n_inv: u64,
    n_inv_shoup: u64,
}

#[inline(always)]
fn shoup(w: u64, q: u64) -> u64 {
    (((w as u128) << 64) / q as u128) as u64
}

#[inline(always)]
fn mul_shoup_lazy(x: u64, w: u64, ws: u64, q: u64) -> u64 {
    let qhat = ((x as u128 * ws as u128) >> 64) as u64;
    x.wrapping_mul(w).wrapping_sub(qhat.wrapping_mul(q))
}

impl Ntt64 {
    /// Tables for prime q (≡ 1 mod 2N, < 2^61) and degree n.
    pub fn new(q: u64, n: usize) -> Result<Self> {
        let log_n = n.trailing_zeros();
        let psi = minimal_primitive_root(2 * n as u64, q).ok_or(CkksError::BadModulus(q))?;
        let psi_inv = inv_mod(psi, q);
        let mut roots = vec![0u64; n];
        let mut inv_roots = vec![0u64; n];
        let (mut a, mut b) = (1u64, 1u64);
        for k in 0..n {
            let r = bit_reverse(k, log_n);
            roots[r] = a;
            inv_roots[r] = b;
            a = mul_mod(a, psi, q);
            b = mul_mod(b, psi_inv, q);
        }
        let roots_shoup = roots.iter().map(|&w| shoup(w, q)).collect();
        let inv_roots_shoup = inv_roots.iter().map(|&w| shoup(w, q)).collect();
        let n_inv = inv_mod(n as u64, q);
        Ok(Self { q, n, roots, roots_shoup, inv_roots, inv_roots_shoup, n_inv, n_inv_shoup: shoup(n_inv, q) })
    }

    /// In-place forward NTT of a reduced polynomial (output reduced, SEAL order).
    pub fn forward(&self, a: &mut [u64]) {
        let q = self.q;
        let two_q = 2 * q;
        let mut groups = 1;
        let mut t = self.n >> 1;
        while groups < self.n {
            for i in 0..groups {
                let (w, ws) = (self.roots[groups + i], self.roots_shoup[groups + i]);
                let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let mut u = *x;
                    if u >= two_q {
                        u -= two_q;
                    }
                    let v = mul_shoup_lazy(*y, w, ws, q);
                    *x = u + v;
                    *y = u + two_q - v;
                }
            }
            groups <<= 1;
            t >>= 1;
        }
        for x in a.iter_mut() {
            let mut v = *x;
            if v >= two_q {
                v -= two_q;
            }
            if v >= q {
                v -= q;
            }
            *x = v;
        }
    }

    /// In-place inverse NTT (including N^{-1}); output reduced.
    pub fn inverse(&self, a: &mut [u64]) {
        let q = self.q;
        let two_q = 2 * q;
        let mut t = 1;
        let mut h = self.n >> 1;
        while h >= 1 {
            for i in 0..h {
                let (w, ws) = (self.inv_roots[h + i], self.inv_roots_shoup[h + i]);
                let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*x, *y);
                    let mut s = u + v;
                    if s >= two_q {
                        s -= two_q;
                    }
                    *x = s;
                    *y = mul_shoup_lazy(u + two_q - v, w, ws, q);
                }
            }
            t <<= 1;
            h >>= 1;
        }
        for x in a.iter_mut() {
            let r = mul_shoup_lazy(*x, self.n_inv, self.n_inv_shoup, q);
            *x = if r >= q { r - q } else { r };
        }
    }
}

/// a + b mod q.
#[inline(always)]
pub fn add_mod(a: u64, b: u64, q: u64) -> u64 {
    let s = a + b;
    if s >= q {
        s - q
    } else {
        s
    }
}

/// a − b mod q.
#[inline(always)]
pub fn sub_mod(a: u64, b: u64, q: u64) -> u64 {
    if a >= b {
        a - b
    } else {
        a + q - b
    }
}

/// A signed integer reduced mod q.
#[inline(always)]
pub fn from_i64(x: i64, q: u64) -> u64 {
    let r = x.unsigned_abs() % q;
    if x < 0 && r != 0 {
        q - r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ntt::{forward_otf, NttPrime};

    #[test]
    fn matches_the_device_ntt_and_inverts() {
        let n = 256;
        let q = 1054015489u64;
        let t = Ntt64::new(q, n).unwrap();
        let a: Vec<u64> = (0..n as u64).map(|i| (i * i * 7919 + 3) % q).collect();
        let mut x = a.clone();
        t.forward(&mut x);
        let psi = minimal_primitive_root(2 * n as u64, q).unwrap() as u32;
        let mut y: Vec<u32> = a.iter().map(|&v| v as u32).collect();
        forward_otf(&mut y, &NttPrime::new(q as u32, psi, 8));
        assert!(x.iter().zip(&y).all(|(&u, &v)| u == v as u64));
        t.inverse(&mut x);
        assert_eq!(x, a);
        // A 48-bit prime works too.
        let big = Ntt64::new(281474976546817, n).unwrap();
        let mut z: Vec<u64> = (0..n as u64).map(|i| i * 1_000_000_007).collect();
        let orig = z.clone();
        big.forward(&mut z);
        big.inverse(&mut z);
        assert_eq!(z, orig);
    }
}
