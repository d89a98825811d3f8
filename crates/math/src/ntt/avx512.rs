//! AVX-512 Harvey NTT kernels (eight 64-bit lanes), two flavours sharing one stage structure:
//!
//! * [`Wide`] (AVX-512F + DQ), any q < 2^62: the exact high word of a·⌊w·2^64/q⌋ from four
//!   `vpmuludq`, the low words of a·w and q̂·q from `vpmullq`.
//! * [`Ifma`] (AVX-512 IFMA52), q < 2^50 (so that 4q < 2^52): Shoup with ⌊w·2^52/q⌋ and
//!   `vpmadd52{hi,lo}uq`, as Intel HEXL does — three multiply instructions per butterfly.
//!
//! Both keep the portable kernels' ranges and stage order, so results agree bit for bit. The three
//! stages with t < 8 regroup two vectors with `vpermt2q`; twiddles for those stages are loaded as
//! (value, quotient) pairs from the `repr(C)` [`ShoupConst`] table and de-interleaved the same way.
//! These kernels are only run where the CPU has the instructions; tests skip them otherwise.

use core::arch::x86_64::*;

use crate::modulus::{Modulus, ShoupConst};

#[derive(Clone, Copy)]
pub(crate) struct Consts {
    q: __m512i,
    two_q: __m512i,
    lo32: __m512i,
    mask52: __m512i,
}

#[inline(always)]
unsafe fn consts(q: &Modulus) -> Consts {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        Consts {
            q: _mm512_set1_epi64(q.value() as i64),
            two_q: _mm512_set1_epi64((2 * q.value()) as i64),
            lo32: _mm512_set1_epi64(0xffff_ffff),
            mask52: _mm512_set1_epi64((1i64 << 52) - 1),
        }
    }
}

/// One Shoup multiplication flavour.
pub(crate) trait ShoupMul {
    /// a·w mod q in [0, 2q) given w and its quotient wq (64- or 52-bit, per flavour).
    unsafe fn mul_lazy(a: __m512i, w: __m512i, wq: __m512i, c: &Consts) -> __m512i;
}

/// AVX-512F/DQ flavour for q < 2^62.
pub(crate) struct Wide;

impl ShoupMul for Wide {
    #[inline(always)]
    unsafe fn mul_lazy(a: __m512i, w: __m512i, wq: __m512i, c: &Consts) -> __m512i {
        // SAFETY: the caller upholds this function's safety contract (its target features are
        // present, pointers and lengths in bounds); the block relies on nothing else.
        unsafe {
            let a_hi = _mm512_srli_epi64(a, 32);
            let wq_hi = _mm512_srli_epi64(wq, 32);
            let ll = _mm512_mul_epu32(a, wq);
            let lh = _mm512_mul_epu32(a, wq_hi);
            let hl = _mm512_mul_epu32(a_hi, wq);
            let hh = _mm512_mul_epu32(a_hi, wq_hi);
            let mid = _mm512_add_epi64(
                _mm512_add_epi64(_mm512_srli_epi64(ll, 32), _mm512_and_si512(lh, c.lo32)),
                _mm512_and_si512(hl, c.lo32),
            );
            let qhat = _mm512_add_epi64(
                _mm512_add_epi64(hh, _mm512_srli_epi64(lh, 32)),
                _mm512_add_epi64(_mm512_srli_epi64(hl, 32), _mm512_srli_epi64(mid, 32)),
            );
            _mm512_sub_epi64(_mm512_mullo_epi64(a, w), _mm512_mullo_epi64(qhat, c.q))
        }
    }
}

/// AVX-512 IFMA52 flavour for q < 2^50; quotients are ⌊w·2^52/q⌋ and lanes stay below 2^52.
pub(crate) struct Ifma;

impl ShoupMul for Ifma {
    #[inline(always)]
    unsafe fn mul_lazy(a: __m512i, w: __m512i, wq: __m512i, c: &Consts) -> __m512i {
        // SAFETY: the caller upholds this function's safety contract (its target features are
        // present, pointers and lengths in bounds); the block relies on nothing else.
        unsafe {
            let zero = _mm512_setzero_si512();
            let qhat = _mm512_madd52hi_epu64(zero, a, wq);
            let aw = _mm512_madd52lo_epu64(zero, a, w);
            let qq = _mm512_madd52lo_epu64(zero, qhat, c.q);
            _mm512_and_si512(_mm512_sub_epi64(aw, qq), c.mask52)
        }
    }
}

#[inline(always)]
unsafe fn reduce_2q(x: __m512i, c: &Consts) -> __m512i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm512_mask_sub_epi64(x, _mm512_cmpge_epu64_mask(x, c.two_q), x, c.two_q) }
}

#[inline(always)]
unsafe fn reduce_q(x: __m512i, c: &Consts) -> __m512i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm512_mask_sub_epi64(x, _mm512_cmpge_epu64_mask(x, c.q), x, c.q) }
}

#[inline(always)]
unsafe fn ct<M: ShoupMul>(
    x: __m512i,
    y: __m512i,
    w: __m512i,
    wq: __m512i,
    c: &Consts,
) -> (__m512i, __m512i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let u = reduce_2q(x, c);
        let v = M::mul_lazy(y, w, wq, c);
        (
            _mm512_add_epi64(u, v),
            _mm512_add_epi64(_mm512_sub_epi64(u, v), c.two_q),
        )
    }
}

#[inline(always)]
unsafe fn gs<M: ShoupMul>(
    x: __m512i,
    y: __m512i,
    w: __m512i,
    wq: __m512i,
    c: &Consts,
) -> (__m512i, __m512i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let s = reduce_2q(_mm512_add_epi64(x, y), c);
        let d = _mm512_add_epi64(_mm512_sub_epi64(x, y), c.two_q);
        (s, M::mul_lazy(d, w, wq, c))
    }
}

/// Lane permutations of a stage with t ∈ {4, 2, 1}: where X and Y lanes come from in (v0, v1),
/// which (value, quotient) words of the twiddle pairs each lane uses, and how (X, Y) go back.
struct SmallStage {
    x: [i64; 8],
    y: [i64; 8],
    w: [i64; 8],
    wq: [i64; 8],
    out0: [i64; 8],
    out1: [i64; 8],
    /// Twiddle blocks per 16 words.
    blocks: usize,
}

const STAGE_T4: SmallStage = SmallStage {
    x: [0, 1, 2, 3, 8, 9, 10, 11],
    y: [4, 5, 6, 7, 12, 13, 14, 15],
    w: [0, 0, 0, 0, 2, 2, 2, 2],
    wq: [1, 1, 1, 1, 3, 3, 3, 3],
    out0: [0, 1, 2, 3, 8, 9, 10, 11],
    out1: [4, 5, 6, 7, 12, 13, 14, 15],
    blocks: 2,
};
const STAGE_T2: SmallStage = SmallStage {
    x: [0, 1, 4, 5, 8, 9, 12, 13],
    y: [2, 3, 6, 7, 10, 11, 14, 15],
    w: [0, 0, 2, 2, 4, 4, 6, 6],
    wq: [1, 1, 3, 3, 5, 5, 7, 7],
    out0: [0, 1, 8, 9, 2, 3, 10, 11],
    out1: [4, 5, 12, 13, 6, 7, 14, 15],
    blocks: 4,
};
const STAGE_T1: SmallStage = SmallStage {
    x: [0, 2, 4, 6, 8, 10, 12, 14],
    y: [1, 3, 5, 7, 9, 11, 13, 15],
    w: [0, 2, 4, 6, 8, 10, 12, 14],
    wq: [1, 3, 5, 7, 9, 11, 13, 15],
    out0: [0, 8, 1, 9, 2, 10, 3, 11],
    out1: [4, 12, 5, 13, 6, 14, 7, 15],
    blocks: 8,
};

#[inline(always)]
unsafe fn load(p: *const u64) -> __m512i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm512_loadu_si512(p as *const _) }
}

#[inline(always)]
unsafe fn store(p: *mut u64, v: __m512i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm512_storeu_si512(p as *mut _, v) }
}

/// A twiddle and its quotient, broadcast to every lane.
#[inline(always)]
unsafe fn broadcast(r: ShoupConst) -> (__m512i, __m512i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        (
            _mm512_set1_epi64(r.value as i64),
            _mm512_set1_epi64(r.quotient as i64),
        )
    }
}

#[inline(always)]
unsafe fn idx(v: &[i64; 8]) -> __m512i {
    // SAFETY: `v` is 64 readable bytes; the caller guarantees AVX-512F.
    unsafe { _mm512_loadu_si512(v.as_ptr() as *const _) }
}

/// Loads the (value, quotient) pairs of `blocks` consecutive twiddles from `k` without reading
/// past them, and de-interleaves them per the stage's lane pattern.
#[inline(always)]
unsafe fn small_twiddles(roots: &[ShoupConst], k: usize, s: &SmallStage) -> (__m512i, __m512i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let base = roots.as_ptr().add(k) as *const i64;
        let words = 2 * s.blocks; // 4, 8 or 16 words
        let lo_mask: __mmask8 = if words >= 8 { 0xff } else { (1u8 << words) - 1 };
        let r0 = _mm512_maskz_loadu_epi64(lo_mask, base);
        let r1 = if words > 8 {
            _mm512_loadu_si512(base.add(8) as *const _)
        } else {
            _mm512_setzero_si512()
        };
        (
            _mm512_permutex2var_epi64(r0, idx(&s.w), r1),
            _mm512_permutex2var_epi64(r0, idx(&s.wq), r1),
        )
    }
}

#[inline(always)]
unsafe fn small_stage<M: ShoupMul>(
    a: &mut [u64],
    roots: &[ShoupConst],
    first_block: usize,
    s: &SmallStage,
    forward: bool,
    final_reduce: bool,
    c: &Consts,
) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let p = a.as_mut_ptr();
        let (ix, iy, io0, io1) = (idx(&s.x), idx(&s.y), idx(&s.out0), idx(&s.out1));
        let mut i = 0;
        while i < a.len() {
            // SAFETY (caller): a.len() is a multiple of 16, so words i .. i+16 exist; twiddles
            // first_block + (i/16)·blocks + blocks ≤ roots.len() by the stage's block count.
            let v0 = _mm512_loadu_si512(p.add(i) as *const _);
            let v1 = _mm512_loadu_si512(p.add(i + 8) as *const _);
            let x = _mm512_permutex2var_epi64(v0, ix, v1);
            let y = _mm512_permutex2var_epi64(v0, iy, v1);
            let (w, wq) = small_twiddles(roots, first_block + (i / 16) * s.blocks, s);
            let (mut x, mut y) = if forward {
                ct::<M>(x, y, w, wq, c)
            } else {
                gs::<M>(x, y, w, wq, c)
            };
            if final_reduce {
                x = reduce_q(reduce_2q(x, c), c);
                y = reduce_q(reduce_2q(y, c), c);
            }
            _mm512_storeu_si512(p.add(i) as *mut _, _mm512_permutex2var_epi64(x, io0, y));
            _mm512_storeu_si512(p.add(i + 8) as *mut _, _mm512_permutex2var_epi64(x, io1, y));
            i += 16;
        }
    }
}

#[inline(always)]
unsafe fn forward_impl<M: ShoupMul>(a: &mut [u64], roots: &[ShoupConst], q: &Modulus) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let n = a.len();
        let c = consts(q);
        let p = a.as_mut_ptr();
        let mut t = n;
        let mut m = 1;
        while t > 8 {
            t >>= 1;
            vector_stage!(
                p,
                m,
                t,
                8,
                load,
                |i| broadcast(roots[m + i]),
                |x, y, w| ct::<M>(x, y, w.0, w.1, &c)
            );
            m <<= 1;
        }
        small_stage::<M>(a, roots, m, &STAGE_T4, true, false, &c);
        small_stage::<M>(a, roots, 2 * m, &STAGE_T2, true, false, &c);
        small_stage::<M>(a, roots, 4 * m, &STAGE_T1, true, true, &c);
    }
}

#[inline(always)]
unsafe fn inverse_impl<M: ShoupMul>(
    a: &mut [u64],
    inv_roots: &[ShoupConst],
    n_inv: ShoupConst,
    last: ShoupConst,
    q: &Modulus,
) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let n = a.len();
        let c = consts(q);
        small_stage::<M>(a, inv_roots, n / 2, &STAGE_T1, false, false, &c);
        small_stage::<M>(a, inv_roots, n / 4, &STAGE_T2, false, false, &c);
        small_stage::<M>(a, inv_roots, n / 8, &STAGE_T4, false, false, &c);
        let p = a.as_mut_ptr();
        let mut t = 8;
        let mut h = n / 16;
        while h > 1 {
            vector_stage!(
                p,
                h,
                t,
                8,
                load,
                |i| broadcast(inv_roots[h + i]),
                |x, y, w| { gs::<M>(x, y, w.0, w.1, &c) }
            );
            t <<= 1;
            h >>= 1;
        }
        let ((wn, wnq), (wl, wlq)) = (broadcast(n_inv), broadcast(last));
        let half = n / 2;
        let mut j = 0;
        while j < half {
            // SAFETY: half + j + 8 ≤ n.
            let (x, y) = (load(p.add(j)), load(p.add(half + j)));
            let s = M::mul_lazy(_mm512_add_epi64(x, y), wn, wnq, &c);
            let d = M::mul_lazy(
                _mm512_add_epi64(_mm512_sub_epi64(x, y), c.two_q),
                wl,
                wlq,
                &c,
            );
            store(p.add(j), reduce_q(s, &c));
            store(p.add(half + j), reduce_q(d, &c));
            j += 8;
        }
    }
}

/// The entry points of one flavour: `$forward` and `$inverse` with `$features` enabled, over
/// `forward_impl` / `inverse_impl` with multiplication `$mul`. Both require n = a.len() ≥ 32, a
/// power of two, and n-entry twiddle tables with the flavour's Shoup quotients.
macro_rules! entry_points {
    ($features:literal, $mul:ty, $forward:ident, $inverse:ident) => {
        /// Forward transform (see `entry_points!`).
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $forward(a: &mut [u64], roots: &[ShoupConst], q: &Modulus) {
            // SAFETY: the caller upholds this function's safety contract (its target features
            // are present, pointers and lengths in bounds); the block relies on nothing else.
            unsafe { forward_impl::<$mul>(a, roots, q) }
        }

        /// Inverse transform (see `entry_points!`).
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $inverse(
            a: &mut [u64],
            inv: &[ShoupConst],
            n_inv: ShoupConst,
            last: ShoupConst,
            q: &Modulus,
        ) {
            // SAFETY: the caller upholds this function's safety contract (its target features
            // are present, pointers and lengths in bounds); the block relies on nothing else.
            unsafe { inverse_impl::<$mul>(a, inv, n_inv, last, q) }
        }
    };
}

// AVX-512F/DQ, any q < 2^62.
entry_points!("avx512f,avx512dq", Wide, forward_wide, inverse_wide);
// IFMA52: q < 2^50 and 52-bit Shoup quotients throughout.
entry_points!("avx512f,avx512ifma", Ifma, forward_ifma, inverse_ifma);

/// Whether the CPU has AVX-512F and DQ.
pub(crate) fn wide_supported() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(target_feature = "avx512f", target_feature = "avx512dq"))
    }
}

/// Whether the CPU has AVX-512F and IFMA52.
pub(crate) fn ifma_supported() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(
            target_feature = "avx512f",
            target_feature = "avx512ifma"
        ))
    }
}
