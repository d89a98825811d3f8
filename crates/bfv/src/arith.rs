//! Facade over the arithmetic this crate needs from the core: word-size prime moduli with Barrett and
//! Shoup products, NTT-friendly prime generation and the negacyclic NTT (Harvey butterflies with Shoup
//! roots, in the bit-reversed order of Longa–Naehrig / SEAL).
//!
//! Everything else in vsp-bfv reaches modular arithmetic only through this module, so the backing
//! implementation can move to `vsp-math` without touching the scheme.

use crate::error::{Error, Result};

/// A prime modulus q < 2^62 with its Barrett constant ⌊2^128 / q⌋.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulus {
    q: u64,
    ratio_hi: u64,
    ratio_lo: u64,
}

impl Modulus {
    /// Builds the modulus; q must be in [2, 2^62).
    pub fn new(q: u64) -> Result<Self> {
        if !(2..(1u64 << 62)).contains(&q) {
            return Err(Error::InvalidParameters(format!("modulus {q} outside [2, 2^62)")));
        }
        // ⌊2^128/q⌋ = ⌊(2^128-1)/q⌋ unless q divides 2^128 (a power of two).
        let r = if q.is_power_of_two() {
            (1u128 << 64) / (q as u128) << 64
        } else {
            u128::MAX / q as u128
        };
        Ok(Self { q, ratio_hi: (r >> 64) as u64, ratio_lo: r as u64 })
    }

    /// The modulus value.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.q
    }

    /// x mod q for any 128-bit x (Barrett, one correction).
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let x0 = x as u64;
        let x1 = (x >> 64) as u64;
        let a = x0 as u128 * self.ratio_lo as u128;
        let b = x0 as u128 * self.ratio_hi as u128;
        let c = x1 as u128 * self.ratio_lo as u128;
        let mid = (a >> 64) + (b as u64 as u128) + (c as u64 as u128);
        let qhat = x1
            .wrapping_mul(self.ratio_hi)
            .wrapping_add((b >> 64) as u64)
            .wrapping_add((c >> 64) as u64)
            .wrapping_add((mid >> 64) as u64);
        let mut r = x0.wrapping_sub(qhat.wrapping_mul(self.q));
        while r >= self.q {
            r -= self.q;
        }
        r
    }

    /// x mod q for a 64-bit x.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        if x < self.q {
            x
        } else {
            self.reduce_u128(x as u128)
        }
    }

    /// Reduces a signed value into [0, q).
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        if x < 0 {
            self.neg(r)
        } else {
            r
        }
    }

    /// (a + b) mod q for a, b < q.
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.q {
            s - self.q
        } else {
            s
        }
    }

    /// (a − b) mod q for a, b < q.
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.q - b
        }
    }

    /// −a mod q for a < q.
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 {
            0
        } else {
            self.q - a
        }
    }

    /// a·b mod q.
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// Shoup constant ⌊w·2^64/q⌋ of a fixed multiplicand w < q.
    #[inline(always)]
    pub fn shoup(&self, w: u64) -> u64 {
        (((w as u128) << 64) / self.q as u128) as u64
    }

    /// a·w mod q with the Shoup constant of w; a may be any u64 < 2^64 when q < 2^62 (result < q).
    #[inline(always)]
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let hi = ((a as u128 * w_shoup as u128) >> 64) as u64;
        let r = a.wrapping_mul(w).wrapping_sub(hi.wrapping_mul(self.q));
        if r >= self.q {
            r - self.q
        } else {
            r
        }
    }

    /// a^e mod q.
    pub fn pow(&self, mut a: u64, mut e: u64) -> u64 {
        let mut r = 1 % self.q;
        a = self.reduce(a);
        while e > 0 {
            if e & 1 == 1 {
                r = self.mul(r, a);
            }
            a = self.mul(a, a);
            e >>= 1;
        }
        r
    }

    /// a^{-1} mod q (q prime), None when a ≡ 0.
    pub fn inv(&self, a: u64) -> Option<u64> {
        let a = self.reduce(a);
        (a != 0).then(|| self.pow(a, self.q - 2))
    }
}

/// Deterministic Miller–Rabin for 64-bit integers.
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n % p == 0 {
            return n == p;
        }
    }
    let m = match Modulus::new(n) {
        Ok(m) => m,
        Err(_) => return false,
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'witness: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        let mut x = m.pow(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = m.mul(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// `count` distinct primes of exactly `bits` bits, ≡ 1 mod 2n, largest first, skipping `exclude`.
pub fn ntt_primes(bits: u32, n: usize, count: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    if !(10..=61).contains(&bits) {
        return Err(Error::InvalidParameters(format!("prime size {bits} bits outside [10, 61]")));
    }
    let step = 2 * n as u64;
    let top = 1u64 << bits;
    let mut c = top - (top % step) + 1;
    if c >= top {
        c -= step;
    }
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        if c < (1u64 << (bits - 1)) {
            return Err(Error::Math(format!("not enough {bits}-bit primes ≡ 1 mod {step}")));
        }
        if is_prime(c) && !exclude.contains(&c) && !out.contains(&c) {
            out.push(c);
        }
        c -= step;
    }
    Ok(out)
}

/// Precomputed tables of the negacyclic NTT modulo one prime q ≡ 1 mod 2n.
#[derive(Clone, Debug)]
pub struct NttTable {
    m: Modulus,
    n: usize,
    roots: Vec<u64>,
    roots_shoup: Vec<u64>,
    inv_roots: Vec<u64>,
    inv_roots_shoup: Vec<u64>,
    n_inv: u64,
    n_inv_shoup: u64,
}

fn bitrev(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

impl NttTable {
    /// Tables for degree n (a power of two ≥ 2) modulo q.
    pub fn new(m: Modulus, n: usize) -> Result<Self> {
        let q = m.value();
        if n < 2 || !n.is_power_of_two() || (q - 1) % (2 * n as u64) != 0 {
            return Err(Error::InvalidParameters(format!("{q} is not ≡ 1 mod 2·{n}")));
        }
        // Smallest primitive 2n-th root: deterministic tables.
        let mut psi = 0;
        for g in 2..q {
            let c = m.pow(g, (q - 1) / (2 * n as u64));
            if m.pow(c, n as u64) == q - 1 {
                psi = c;
                break;
            }
        }
        if psi == 0 {
            return Err(Error::Math(format!("no primitive 2·{n}-th root modulo {q}")));
        }
        let psi_inv = m.inv(psi).ok_or_else(|| Error::Math("root not invertible".into()))?;
        let bits = n.trailing_zeros();
        let mut pw = vec![0u64; n];
        let mut ipw = vec![0u64; n];
        let (mut a, mut b) = (1u64, 1u64);
        for i in 0..n {
            pw[i] = a;
            ipw[i] = b;
            a = m.mul(a, psi);
            b = m.mul(b, psi_inv);
        }
        let roots: Vec<u64> = (0..n).map(|i| pw[bitrev(i, bits)]).collect();
        let inv_roots: Vec<u64> = (0..n).map(|i| ipw[bitrev(i, bits)]).collect();
        let roots_shoup = roots.iter().map(|&w| m.shoup(w)).collect();
        let inv_roots_shoup = inv_roots.iter().map(|&w| m.shoup(w)).collect();
        let n_inv = m.inv(n as u64).ok_or_else(|| Error::Math("n not invertible".into()))?;
        Ok(Self {
            m,
            n,
            roots,
            roots_shoup,
            inv_roots,
            inv_roots_shoup,
            n_inv,
            n_inv_shoup: m.shoup(n_inv),
        })
    }

    /// In-place forward negacyclic NTT of n coefficients in [0, q).
    pub fn forward(&self, a: &mut [u64]) {
        let q = self.m.value();
        let two_q = 2 * q;
        let n = self.n;
        let mut t = n;
        let mut m = 1;
        // Harvey: values stay in [0, 4q) between layers.
        while m < n {
            t >>= 1;
            for i in 0..m {
                let w = self.roots[m + i];
                let ws = self.roots_shoup[m + i];
                let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let mut u = *x;
                    if u >= two_q {
                        u -= two_q;
                    }
                    let h = ((*y as u128 * ws as u128) >> 64) as u64;
                    let v = y.wrapping_mul(w).wrapping_sub(h.wrapping_mul(q));
                    *x = u + v;
                    *y = u + two_q - v;
                }
            }
            m <<= 1;
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

    /// In-place inverse negacyclic NTT (includes the 1/n factor), output in [0, q).
    pub fn inverse(&self, a: &mut [u64]) {
        let q = self.m.value();
        let two_q = 2 * q;
        let n = self.n;
        let mut t = 1;
        let mut m = n;
        // Values stay in [0, 2q) between layers.
        while m > 1 {
            let h = m >> 1;
            for i in 0..h {
                let w = self.inv_roots[h + i];
                let ws = self.inv_roots_shoup[h + i];
                let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = *x;
                    let v = *y;
                    let mut s = u + v;
                    if s >= two_q {
                        s -= two_q;
                    }
                    *x = s;
                    let d = u + two_q - v;
                    let hh = ((d as u128 * ws as u128) >> 64) as u64;
                    *y = d.wrapping_mul(w).wrapping_sub(hh.wrapping_mul(q));
                }
            }
            t <<= 1;
            m = h;
        }
        for x in a.iter_mut() {
            *x = self.m.mul_shoup(*x, self.n_inv, self.n_inv_shoup);
        }
    }

    /// The modulus of this table.
    pub fn modulus(&self) -> &Modulus {
        &self.m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schoolbook(a: &[u64], b: &[u64], m: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for i in 0..n {
            for j in 0..n {
                let p = m.mul(a[i], b[j]);
                let k = i + j;
                if k < n {
                    c[k] = m.add(c[k], p);
                } else {
                    c[k - n] = m.sub(c[k - n], p);
                }
            }
        }
        c
    }

    #[test]
    fn ntt_multiplies_negacyclically() {
        for bits in [20u32, 50, 61] {
            let n = 64;
            let q = ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(q).unwrap();
            let t = NttTable::new(m, n).unwrap();
            let a: Vec<u64> = (0..n as u64).map(|i| m.reduce(i * 7919 + 3 + (q - 1) * (i % 3))).collect();
            let b: Vec<u64> = (0..n as u64).map(|i| m.reduce(q - 1 - i * 31)).collect();
            let want = schoolbook(&a, &b, &m);
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
            for x in [0u128, 1, u128::MAX, (q as u128) * (q as u128) - 1, 0x1234_5678_9abc_def0_1122_3344_5566_7788] {
                assert_eq!(m.reduce_u128(x) as u128, x % q as u128);
            }
        }
    }
}
