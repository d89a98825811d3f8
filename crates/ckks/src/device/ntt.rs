//! The device's negacyclic NTT over 32-bit words (q < 2^30), in SEAL's order:
//! `A[j] = a(ψ^(2·bitrev(j)+1))` with ψ SEAL's minimal primitive 2N-th root, so that a
//! ciphertext computed here is in SEAL's NTT form without any permutation.
//!
//! Three ways to get the twiddles, as SEAL-Embedded's `SE_NTT_TYPE` (TCHES 2021(3) §4):
//! * on the fly — no table: each stage walks its groups in bit-reversed order so that the group
//!   roots form a geometric sequence (one product per group instead of an exponentiation);
//! * one-shot — the N roots of the current prime are computed into caller scratch (N words);
//! * loaded — the roots and their Shoup constants (2N words per prime and direction) were prepared
//!   at setup; butterflies are Harvey's lazy ones with values in [0, 4q).
//!
//! Every variant ends fully reduced, so all modes give bit-identical results.

use crate::arith::{bit_reverse, inv_mod, pow_mod};
use crate::error::Result;
use vsp_math::Modulus32;

/// Per-prime constants of the transform.
#[derive(Clone, Copy, Debug)]
pub struct NttPrime {
    /// The modulus.
    pub m: Modulus32,
    /// SEAL's minimal primitive 2N-th root ψ.
    pub psi: u32,
    /// ψ^{-1}.
    pub psi_inv: u32,
    /// N^{-1} mod q.
    pub n_inv: u32,
    /// log2 N.
    pub log_n: u32,
}

impl NttPrime {
    /// Constants for prime `q` (< 2^30, ≡ 1 mod 2N) and degree 2^log_n; `psi` is SEAL's root.
    /// Fails (vsp-math's error) for q outside [2, 2^31).
    pub fn new(q: u32, psi: u32, log_n: u32) -> Result<Self> {
        let m = Modulus32::new(q)?;
        let psi_inv = inv_mod(psi as u64, q as u64) as u32;
        let n_inv = inv_mod(1u64 << log_n, q as u64) as u32;
        Ok(Self {
            m,
            psi,
            psi_inv,
            n_inv,
            log_n,
        })
    }

    /// Fills `out[k] = ψ^{±bitrev(k)}` for k < N (SEAL's table layout).
    pub fn fill_roots(&self, inverse: bool, out: &mut [u32]) {
        let n = 1usize << self.log_n;
        let base = if inverse { self.psi_inv } else { self.psi };
        // Natural powers first, then permute in place through a bit-reversal swap.
        let mut cur = 1u32;
        for x in out.iter_mut().take(n) {
            *x = cur;
            cur = self.m.mul(cur, base);
        }
        for k in 0..n {
            let r = bit_reverse(k, self.log_n);
            if k < r {
                out.swap(k, r);
            }
        }
    }
}

/// Words of one prime's loaded tables: the forward roots (and their Shoup constants when `shoup`),
/// and the same again for the inverse direction when `with_inverse`.
pub fn loaded_words(log_n: u32, shoup: bool, with_inverse: bool) -> usize {
    let per_dir = if shoup { 2 } else { 1 };
    let dirs = if with_inverse { 2 } else { 1 };
    dirs * per_dir * (1usize << log_n)
}

/// Fills one prime's loaded tables (layout of [`LoadedTables`]) into `out`
/// (length [`loaded_words`]); what SEAL-Embedded's adapter writes into its root headers.
pub fn fill_loaded(p: &NttPrime, shoup: bool, with_inverse: bool, out: &mut [u32]) {
    let n = 1usize << p.log_n;
    let mut chunks = out.chunks_exact_mut(n);
    for inverse in [false, true] {
        if inverse && !with_inverse {
            break;
        }
        if let Some(roots) = chunks.next() {
            p.fill_roots(inverse, roots);
            if shoup {
                if let Some(sh) = chunks.next() {
                    for (s, &w) in sh.iter_mut().zip(roots.iter()) {
                        *s = p.m.shoup(w);
                    }
                }
            }
        }
    }
}

/// Whether `t` holds exactly the tables [`fill_loaded`] makes (entry by entry, no scratch): a
/// corrupted table in storage is refused at setup instead of producing garbage ciphertexts.
pub fn check_loaded(p: &NttPrime, shoup: bool, with_inverse: bool, t: &[u32]) -> bool {
    let n = 1usize << p.log_n;
    if t.len() != loaded_words(p.log_n, shoup, with_inverse) {
        return false;
    }
    let per_dir = if shoup { 2 } else { 1 };
    for (d, inverse) in [false, true].into_iter().enumerate() {
        if inverse && !with_inverse {
            break;
        }
        let base = d * per_dir * n;
        let w = if inverse { p.psi_inv } else { p.psi };
        let mut cur = 1u32;
        for k in 0..n {
            let at = base + bit_reverse(k, p.log_n);
            if t[at] != cur || (shoup && t[at + n] != p.m.shoup(cur)) {
                return false;
            }
            cur = p.m.mul(cur, w);
        }
    }
    true
}

/// One prime's loaded tables, borrowed: `fwd[k] = ψ^{bitrev(k)}`, `inv[k] = ψ^{−bitrev(k)}`, and
/// (lazy Shoup variant) their constants; missing parts are empty slices.
#[derive(Clone, Copy, Debug)]
pub struct LoadedTables<'a> {
    /// Forward roots.
    pub fwd: &'a [u32],
    /// Shoup constants of `fwd` (empty for the plain variant).
    pub fwd_shoup: &'a [u32],
    /// Inverse roots (empty without the inverse direction).
    pub inv: &'a [u32],
    /// Shoup constants of `inv`.
    pub inv_shoup: &'a [u32],
}

impl<'a> LoadedTables<'a> {
    /// Splits one prime's table (layout of [`fill_loaded`]); None if `t` is too short.
    pub fn split(t: &'a [u32], n: usize, shoup: bool, with_inverse: bool) -> Option<Self> {
        let mut parts = t.chunks_exact(n);
        let mut next = |want: bool| -> Option<&'a [u32]> {
            if want {
                parts.next()
            } else {
                Some(&[])
            }
        };
        let fwd = next(true)?;
        let fwd_shoup = next(shoup)?;
        let inv = next(with_inverse)?;
        let inv_shoup = next(with_inverse && shoup)?;
        Some(Self {
            fwd,
            fwd_shoup,
            inv,
            inv_shoup,
        })
    }
}

/// Forward NTT with roots computed on the fly.
pub fn forward_otf(a: &mut [u32], p: &NttPrime) {
    stages_otf(a, p, p.psi, false);
}

/// Inverse NTT (including the N^{-1} factor) with roots computed on the fly.
pub fn inverse_otf(a: &mut [u32], p: &NttPrime) {
    stages_otf(a, p, p.psi_inv, true);
    scale_n_inv(a, p);
}

fn stages_otf(a: &mut [u32], p: &NttPrime, psi: u32, inverse: bool) {
    let log_n = p.log_n;
    let n = 1usize << log_n;
    let m = &p.m;
    for step in 0..log_n {
        // Forward runs s = 0..log_n−1 (m = 2^s groups); inverse runs s = log_n−1..0.
        let s = if inverse { log_n - 1 - step } else { step };
        let groups = 1usize << s;
        let t = n >> (s + 1);
        // Root of group i is psi^{bitrev_logn(groups + i)} = b · (b²)^{bitrev_s(i)}.
        let b = pow_mod(psi as u64, 1u64 << (log_n - 1 - s), m.value() as u64) as u32;
        let b2 = m.mul(b, b);
        let mut w = b;
        for r in 0..groups {
            let i = bit_reverse(r, s);
            let j1 = 2 * i * t;
            let (lo, hi) = a[j1..j1 + 2 * t].split_at_mut(t);
            if inverse {
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = m.add(u, v);
                    *y = m.mul(m.sub(u, v), w);
                }
            } else {
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = *x;
                    let v = m.mul(*y, w);
                    *x = m.add(u, v);
                    *y = m.sub(u, v);
                }
            }
            w = m.mul(w, b2);
        }
    }
}

fn scale_n_inv(a: &mut [u32], p: &NttPrime) {
    let s = p.m.shoup(p.n_inv);
    for x in a.iter_mut() {
        let r = p.m.mul_shoup_lazy(*x, p.n_inv, s);
        *x = if r >= p.m.value() { r - p.m.value() } else { r };
    }
}

/// Forward NTT with a one-shot root table (`roots[k] = ψ^{bitrev(k)}`, Barrett products).
pub fn forward_table(a: &mut [u32], p: &NttPrime, roots: &[u32]) {
    let n = a.len();
    let m = &p.m;
    let mut groups = 1;
    let mut t = n >> 1;
    while groups < n {
        for i in 0..groups {
            let w = roots[groups + i];
            let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = *x;
                let v = m.mul(*y, w);
                *x = m.add(u, v);
                *y = m.sub(u, v);
            }
        }
        groups <<= 1;
        t >>= 1;
    }
}

/// Inverse NTT with a one-shot inverse-root table (`roots[k] = ψ^{−bitrev(k)}`).
pub fn inverse_table(a: &mut [u32], p: &NttPrime, roots: &[u32]) {
    let n = a.len();
    let m = &p.m;
    let mut t = 1;
    let mut h = n >> 1;
    while h >= 1 {
        for i in 0..h {
            let w = roots[h + i];
            let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let (u, v) = (*x, *y);
                *x = m.add(u, v);
                *y = m.mul(m.sub(u, v), w);
            }
        }
        t <<= 1;
        h >>= 1;
    }
    scale_n_inv(a, p);
}

/// Forward NTT with loaded lazy Shoup roots (Harvey butterflies, values kept below 4q).
pub fn forward_loaded(a: &mut [u32], p: &NttPrime, r: &LoadedTables<'_>) {
    let n = a.len();
    let q = p.m.value();
    let two_q = 2 * q;
    let mut groups = 1;
    let mut t = n >> 1;
    while groups < n {
        for i in 0..groups {
            let (w, ws) = (r.fwd[groups + i], r.fwd_shoup[groups + i]);
            let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let mut u = *x;
                if u >= two_q {
                    u -= two_q;
                }
                let v = p.m.mul_shoup_lazy(*y, w, ws);
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

/// Inverse NTT with loaded lazy Shoup roots (values kept below 2q, N^{-1} folded in at the end).
pub fn inverse_loaded(a: &mut [u32], p: &NttPrime, r: &LoadedTables<'_>) {
    if r.inv.is_empty() {
        // Tables built without the inverse direction: fall back to on-the-fly roots.
        inverse_otf(a, p);
        return;
    }
    let n = a.len();
    let two_q = 2 * p.m.value();
    let mut t = 1;
    let mut h = n >> 1;
    while h >= 1 {
        for i in 0..h {
            let (w, ws) = (r.inv[h + i], r.inv_shoup[h + i]);
            let (lo, hi) = a[2 * i * t..2 * i * t + 2 * t].split_at_mut(t);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let (u, v) = (*x, *y);
                let mut s = u + v;
                if s >= two_q {
                    s -= two_q;
                }
                *x = s;
                *y = p.m.mul_shoup_lazy(u + two_q - v, w, ws);
            }
        }
        t <<= 1;
        h >>= 1;
    }
    scale_n_inv(a, p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{minimal_primitive_root, mul_mod};
    extern crate std;
    use std::vec::Vec;

    fn naive_ntt(a: &[u32], p: &NttPrime) -> Vec<u32> {
        let n = a.len();
        let q = p.m.value() as u64;
        (0..n)
            .map(|j| {
                let x = pow_mod(p.psi as u64, 2 * bit_reverse(j, p.log_n) as u64 + 1, q);
                let mut acc = 0u64;
                for &c in a.iter().rev() {
                    acc = (mul_mod(acc, x, q) + c as u64) % q;
                }
                acc as u32
            })
            .collect()
    }

    #[test]
    fn all_modes_match_naive_and_invert() {
        let log_n = 6;
        let q = 1053818881u32;
        let psi = minimal_primitive_root(128, q as u64).unwrap() as u32;
        let p = NttPrime::new(q, psi, log_n).unwrap();
        let a: Vec<u32> = (0..64u64)
            .map(|i| ((i * 2654435761) % q as u64) as u32)
            .collect();
        let want = naive_ntt(&a, &p);
        let mut table = std::vec![0; loaded_words(log_n, true, true)];
        fill_loaded(&p, true, true, &mut table);
        assert!(check_loaded(&p, true, true, &table));
        let loaded = LoadedTables::split(&table, 64, true, true).unwrap();
        let mut plain = std::vec![0; loaded_words(log_n, false, true)];
        fill_loaded(&p, false, true, &mut plain);
        assert!(check_loaded(&p, false, true, &plain));
        assert!(!check_loaded(&p, true, true, &plain));
        let mut bad = table.clone();
        bad[70] ^= 1;
        assert!(!check_loaded(&p, true, true, &bad));
        let mut fwd_roots = std::vec![0; 64];
        let mut inv_roots = std::vec![0; 64];
        p.fill_roots(false, &mut fwd_roots);
        p.fill_roots(true, &mut inv_roots);

        let mut x = a.clone();
        forward_otf(&mut x, &p);
        assert_eq!(x, want);
        inverse_otf(&mut x, &p);
        assert_eq!(x, a);

        let mut y = a.clone();
        forward_table(&mut y, &p, &fwd_roots);
        assert_eq!(y, want);
        inverse_table(&mut y, &p, &inv_roots);
        assert_eq!(y, a);

        let mut z = a.clone();
        forward_loaded(&mut z, &p, &loaded);
        assert_eq!(z, want);
        inverse_loaded(&mut z, &p, &loaded);
        assert_eq!(z, a);

        // The plain loaded variant is the one-shot table kept per prime.
        let pl = LoadedTables::split(&plain, 64, false, true).unwrap();
        assert_eq!(pl.fwd, &fwd_roots[..]);
        assert_eq!(pl.inv, &inv_roots[..]);
    }
}
