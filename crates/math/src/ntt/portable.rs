//! Portable Harvey NTT kernels: the reference every SIMD path is tested against.
//!
//! Forward: Cooley–Tukey, natural order in, bit-reversed order out, with the negacyclic twist ψ^i
//! merged into the twiddles (Longa–Naehrig 2016, Alg. 1; Harvey 2014 lazy butterflies: values stay in
//! [0, 4q) between stages and each twiddle product costs one Shoup multiplication). Inverse:
//! Gentleman–Sande, bit-reversed in, natural out, values in [0, 2q), with N^{-1} merged into the last
//! stage (Longa–Naehrig Alg. 2).

use crate::modulus::{Modulus, ShoupConst};

/// One Cooley–Tukey stage block: (x, y) ← (x + w·y, x − w·y), inputs and outputs in [0, 4q).
#[inline(always)]
fn ct_block(x: &mut [u64], y: &mut [u64], w: ShoupConst, q: &Modulus) {
    let two_q = 2 * q.value();
    for (xj, yj) in x.iter_mut().zip(y.iter_mut()) {
        let mut u = *xj;
        if u >= two_q {
            u = u.wrapping_sub(two_q);
        }
        let v = q.mul_shoup_lazy(*yj, w);
        *xj = u.wrapping_add(v);
        *yj = u.wrapping_sub(v).wrapping_add(two_q);
    }
}

/// One Gentleman–Sande stage block: (x, y) ← (x + y, w·(x − y)), inputs and outputs in [0, 2q).
#[inline(always)]
fn gs_block(x: &mut [u64], y: &mut [u64], w: ShoupConst, q: &Modulus) {
    let two_q = 2 * q.value();
    for (xj, yj) in x.iter_mut().zip(y.iter_mut()) {
        let (u, v) = (*xj, *yj);
        let mut s = u.wrapping_add(v);
        if s >= two_q {
            s = s.wrapping_sub(two_q);
        }
        *xj = s;
        *yj = q.mul_shoup_lazy(u.wrapping_sub(v).wrapping_add(two_q), w);
    }
}

/// Maps [0, 4q) to [0, q).
#[inline(always)]
pub(crate) fn reduce_from_4q(a: &mut [u64], q: &Modulus) {
    let two_q = 2 * q.value();
    for x in a.iter_mut() {
        let mut v = *x;
        if v >= two_q {
            v = v.wrapping_sub(two_q);
        }
        *x = q.reduce_once(v);
    }
}

/// Forward negacyclic NTT, output in [0, 4q) (bit-reversed order). `roots[k] = ψ^{bitrev(k)}`.
pub(crate) fn forward_lazy(a: &mut [u64], roots: &[ShoupConst], q: &Modulus) {
    let n = a.len();
    let mut t = n;
    let mut m = 1;
    while m < n {
        t >>= 1;
        for (i, block) in a.chunks_exact_mut(2 * t).enumerate() {
            let (x, y) = block.split_at_mut(t);
            ct_block(x, y, roots[m + i], q);
        }
        m <<= 1;
    }
}

/// Inverse negacyclic NTT from [0, 2q) to [0, 2q), natural order out.
/// `inv_roots[k] = ψ^{-bitrev(k)}`; `n_inv` = N^{-1}, `last` = N^{-1}·ψ^{-bitrev(1)}.
pub(crate) fn inverse_lazy(
    a: &mut [u64],
    inv_roots: &[ShoupConst],
    n_inv: ShoupConst,
    last: ShoupConst,
    q: &Modulus,
) {
    let n = a.len();
    let mut t = 1;
    let mut m = n;
    while m > 2 {
        let h = m >> 1;
        for (i, block) in a.chunks_exact_mut(2 * t).enumerate() {
            let (x, y) = block.split_at_mut(t);
            gs_block(x, y, inv_roots[h + i], q);
        }
        t <<= 1;
        m = h;
    }
    last_gs_stage(a, n_inv, last, q);
}

/// The last Gentleman–Sande stage with N^{-1} merged in: outputs in [0, 2q).
#[inline(always)]
pub(crate) fn last_gs_stage(a: &mut [u64], n_inv: ShoupConst, last: ShoupConst, q: &Modulus) {
    let two_q = 2 * q.value();
    let half = a.len() / 2;
    let (x, y) = a.split_at_mut(half);
    for (xj, yj) in x.iter_mut().zip(y.iter_mut()) {
        let (u, v) = (*xj, *yj);
        *xj = q.mul_shoup_lazy(u.wrapping_add(v), n_inv);
        *yj = q.mul_shoup_lazy(u.wrapping_sub(v).wrapping_add(two_q), last);
    }
}

/// One stage of `blocks` (a power of two) butterfly blocks of half-width t, with twiddles computed
/// as they go: blocks are visited in bit-reversed order, so block `bitrev(k)` uses
/// root^{N/(2·blocks)}·(root^{N/blocks})^k, one multiplication each.
fn stage_on_the_fly(
    a: &mut [u64],
    root: u64,
    blocks: usize,
    t: usize,
    q: &Modulus,
    butterfly: fn(&mut [u64], &mut [u64], ShoupConst, &Modulus),
) {
    let n = a.len();
    let stage = blocks.trailing_zeros();
    let step = q.pow(root, (n / blocks) as u64);
    let mut w = q.pow(root, (n / (2 * blocks)) as u64);
    for k in 0..blocks {
        let i = if stage == 0 {
            0
        } else {
            k.reverse_bits() >> (usize::BITS - stage)
        };
        let block = &mut a[2 * t * i..2 * t * (i + 1)];
        let (x, y) = block.split_at_mut(t);
        butterfly(x, y, q.shoup(w), q);
        w = q.mul(w, step);
    }
}

/// Forward NTT computing the twiddles as it goes (no table; seed 003's on-the-fly mode).
///
/// Blocks of a stage are visited in bit-reversed order so that their twiddles form a geometric
/// sequence: block `bitrev_s(k)` of stage s uses ψ^{N/(2m)}·(ψ^{N/m})^k, one multiplication each.
pub(crate) fn forward_on_the_fly(a: &mut [u64], psi: u64, q: &Modulus) {
    let n = a.len();
    let log_n = n.trailing_zeros();
    let mut t = n;
    let mut m = 1usize;
    let mut stage = 0u32;
    while m < n {
        t >>= 1;
        stage_on_the_fly(a, psi, m, t, q, ct_block);
        m <<= 1;
        stage += 1;
    }
    debug_assert_eq!(stage, log_n);
    reduce_from_4q(a, q);
}

/// Inverse NTT computing the twiddles as it goes (see [`forward_on_the_fly`]).
pub(crate) fn inverse_on_the_fly(a: &mut [u64], psi_inv: u64, n_inv: u64, q: &Modulus) {
    let n = a.len();
    let mut t = 1usize;
    let mut m = n;
    while m > 2 {
        let h = m >> 1;
        stage_on_the_fly(a, psi_inv, h, t, q, gs_block);
        t <<= 1;
        m = h;
    }
    let last = q.mul(q.pow(psi_inv, (n / 2) as u64), n_inv);
    last_gs_stage(a, q.shoup(n_inv), q.shoup(last), q);
    for x in a.iter_mut() {
        *x = q.reduce_once(*x);
    }
}
