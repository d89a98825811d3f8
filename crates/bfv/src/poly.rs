//! Limb-wise operations on limb-major RNS polynomials: NTTs, pointwise arithmetic, Galois
//! automorphisms. Each takes the limbs' moduli or NTT tables and an executor for optional threading.

use crate::arith::{Modulus, NttTable};
use crate::exec::Exec;
use std::cell::RefCell;

/// Words a thread's scratch pool keeps between products (64 MiB).
const POOL_WORDS: usize = 8 << 20;

thread_local! {
    /// Large temporaries of the ciphertext product, kept per thread so that repeated products reuse
    /// mapped memory instead of faulting fresh pages in (as SEAL's memory pool does).
    static POOL: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
}

/// A zeroed buffer of `len` words, reusing this thread's pool when it can.
pub fn take(len: usize) -> Vec<u64> {
    let mut v = take_empty(len);
    v.resize(len, 0);
    v
}

/// An empty buffer with room for `len` words (to be filled by `extend`, without zeroing first).
pub fn take_empty(len: usize) -> Vec<u64> {
    let mut v = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
    v.clear();
    v.reserve(len);
    v
}

/// Returns a buffer from [`take`] to this thread's pool (dropped when the pool is full).
pub fn give(v: Vec<u64>) {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let held: usize = p.iter().map(Vec::capacity).sum();
        if held + v.capacity() <= POOL_WORDS {
            p.push(v);
        }
    });
}

/// Forward NTT of every limb.
pub fn forward(tables: &[NttTable], data: &mut [u64], n: usize, exec: &Exec) {
    exec.per_limb(data, n, |i, l| tables[i].forward(l));
}

/// Inverse NTT of every limb.
pub fn inverse(tables: &[NttTable], data: &mut [u64], n: usize, exec: &Exec) {
    exec.per_limb(data, n, |i, l| tables[i].inverse(l));
}

/// a += b.
pub fn add_assign(m: &[Modulus], a: &mut [u64], b: &[u64], n: usize) {
    for (i, (la, lb)) in a.chunks_mut(n).zip(b.chunks(n)).enumerate() {
        let q = &m[i];
        la.iter_mut().zip(lb).for_each(|(x, y)| *x = q.add(*x, *y));
    }
}

/// a −= b.
pub fn sub_assign(m: &[Modulus], a: &mut [u64], b: &[u64], n: usize) {
    for (i, (la, lb)) in a.chunks_mut(n).zip(b.chunks(n)).enumerate() {
        let q = &m[i];
        la.iter_mut().zip(lb).for_each(|(x, y)| *x = q.sub(*x, *y));
    }
}

/// a = −a.
pub fn neg_assign(m: &[Modulus], a: &mut [u64], n: usize) {
    for (i, la) in a.chunks_mut(n).enumerate() {
        let q = &m[i];
        la.iter_mut().for_each(|x| *x = q.neg(*x));
    }
}

/// Pointwise a·b (NTT domain).
pub fn mul(m: &[Modulus], a: &[u64], b: &[u64], n: usize) -> Vec<u64> {
    let mut out = a.to_vec();
    mul_assign(m, &mut out, b, n);
    out
}

/// Pointwise a ·= b (NTT domain).
pub fn mul_assign(m: &[Modulus], a: &mut [u64], b: &[u64], n: usize) {
    for (i, (la, lb)) in a.chunks_mut(n).zip(b.chunks(n)).enumerate() {
        let q = &m[i];
        la.iter_mut().zip(lb).for_each(|(x, y)| *x = q.mul(*x, *y));
    }
}

/// Pointwise acc += a·b (NTT domain).
pub fn mul_add_assign(m: &[Modulus], acc: &mut [u64], a: &[u64], b: &[u64], n: usize) {
    for (i, ((lc, la), lb)) in acc
        .chunks_mut(n)
        .zip(a.chunks(n))
        .zip(b.chunks(n))
        .enumerate()
    {
        let q = &m[i];
        for ((c, x), y) in lc.iter_mut().zip(la).zip(lb) {
            *c = q.reduce_u128(*x as u128 * *y as u128 + *c as u128);
        }
    }
}

/// The operands of a ciphertext product as [`tensor`] takes them: `a`'s two polynomials, then
/// `b`'s (none for the square of `a`).
pub fn operands<'a>(a: [&'a [u64]; 2], b: Option<[&'a [u64]; 2]>) -> Vec<&'a [u64]> {
    let mut c = a.to_vec();
    c.extend(b.into_iter().flatten());
    c
}

/// The ciphertext tensor product in the NTT domain: for `c = [a0, a1, b0, b1]` it returns
/// `[a0·b0, a0·b1 + a1·b0, a1·b1]`; for `c = [a0, a1]` (squaring) `[a0², 2·a0·a1, a1²]`. The cross
/// term is reduced once from its 128-bit sum (three reductions for four products); with two threads
/// the cross term runs beside the two squares.
pub fn tensor(m: &[Modulus], c: &[Vec<u64>], n: usize, exec: &Exec) -> [Vec<u64>; 3] {
    let (a0, a1) = (&c[0], &c[1]);
    let (b0, b1) = if c.len() == 4 {
        (&c[2], &c[3])
    } else {
        (a0, a1)
    };
    // Buffers come from the calling thread's pool (the workers of `exec` only fill them).
    let len = a0.len();
    let mut out = [take_empty(len), take_empty(len), take_empty(len)];
    exec.per_item(&mut out, |idx, o| match idx {
        0 | 2 => {
            let (x, y) = if idx == 0 { (a0, b0) } else { (a1, b1) };
            for (i, q) in m.iter().enumerate() {
                let r = i * n..(i + 1) * n;
                o.extend(x[r.clone()].iter().zip(&y[r]).map(|(x, y)| q.mul(*x, *y)));
            }
        }
        _ => {
            for (i, q) in m.iter().enumerate() {
                let r = i * n..(i + 1) * n;
                o.extend(
                    a0[r.clone()]
                        .iter()
                        .zip(&b1[r.clone()])
                        .zip(a1[r.clone()].iter().zip(&b0[r]))
                        // Each product < 2^124: the sum of two fits a u128.
                        .map(|((x0, y1), (x1, y0))| {
                            q.reduce_u128(*x0 as u128 * *y1 as u128 + *x1 as u128 * *y0 as u128)
                        }),
                );
            }
        }
    });
    out
}

/// Small signed coefficients (secret, errors) lifted to every limb.
pub fn from_signed(m: &[Modulus], v: &[i64]) -> Vec<u64> {
    let n = v.len();
    let mut out = vec![0u64; n * m.len()];
    for (i, q) in m.iter().enumerate() {
        for (o, &x) in out[i * n..(i + 1) * n].iter_mut().zip(v) {
            *o = q.reduce_i64(x);
        }
    }
    out
}

/// Galois automorphism x ↦ x^g (g odd) in coefficient form.
pub fn automorphism(m: &[Modulus], a: &[u64], n: usize, g: usize) -> Vec<u64> {
    let mut out = vec![0u64; a.len()];
    let two_n = 2 * n;
    for (i, (lo, la)) in out.chunks_mut(n).zip(a.chunks(n)).enumerate() {
        let q = &m[i];
        for (j, &x) in la.iter().enumerate() {
            let e = (j * g) % two_n;
            if e < n {
                lo[e] = x;
            } else {
                lo[e - n] = q.neg(x);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_buffers_come_back_zeroed_and_sized() {
        let mut a = take(100);
        a.iter_mut().for_each(|x| *x = 7);
        give(a);
        let b = take(300);
        assert_eq!(b.len(), 300);
        assert!(b.iter().all(|&x| x == 0));
        give(b);
        assert_eq!(take(10), vec![0u64; 10]);
        let e = take_empty(50);
        assert!(e.is_empty() && e.capacity() >= 50);
    }
}
