//! AVX2 Harvey NTT kernels for any q < 2^62 (four 64-bit lanes).
//!
//! AVX2 has no 64×64-bit multiplier, so each Shoup product is assembled from 32×32→64-bit
//! `vpmuludq` products: the exact high word of a·⌊w·2^64/q⌋ (four products) and the low words of
//! a·w and q̂·q (three each). Ranges and stage order are exactly those of the portable kernels
//! (Harvey [0, 4q) forward, [0, 2q) inverse), and so are the results, bit for bit. Unsigned 64-bit
//! comparisons are done as signed ones after flipping the top bit, because 4q may exceed 2^63.
//! The two stages with t < 4 interleave two vectors with 128-bit permutes and unpacks.

use core::arch::x86_64::*;

use crate::modulus::{Modulus, ShoupConst};

/// Vector constants of one modulus.
#[derive(Clone, Copy)]
struct Consts {
    q: __m256i,
    q_hi: __m256i,
    two_q: __m256i,
    /// (2q − 1) with the top bit flipped, for unsigned "≥ 2q" tests.
    two_q_m1_flipped: __m256i,
    /// (q − 1) with the top bit flipped.
    q_m1_flipped: __m256i,
    sign: __m256i,
    lo32: __m256i,
}

#[inline(always)]
unsafe fn consts(q: &Modulus) -> Consts {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let v = q.value();
        let sign = _mm256_set1_epi64x(i64::MIN);
        Consts {
            q: _mm256_set1_epi64x(v as i64),
            q_hi: _mm256_set1_epi64x((v >> 32) as i64),
            two_q: _mm256_set1_epi64x((2 * v) as i64),
            two_q_m1_flipped: _mm256_xor_si256(_mm256_set1_epi64x((2 * v - 1) as i64), sign),
            q_m1_flipped: _mm256_xor_si256(_mm256_set1_epi64x((v - 1) as i64), sign),
            sign,
            lo32: _mm256_set1_epi64x(0xffff_ffff),
        }
    }
}

/// A broadcast or gathered Shoup twiddle: value, quotient and their high halves.
#[derive(Clone, Copy)]
struct Twiddle {
    w: __m256i,
    w_hi: __m256i,
    wq: __m256i,
    wq_hi: __m256i,
}

#[inline(always)]
unsafe fn twiddle_from(w: __m256i, wq: __m256i) -> Twiddle {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        Twiddle {
            w,
            w_hi: _mm256_srli_epi64(w, 32),
            wq,
            wq_hi: _mm256_srli_epi64(wq, 32),
        }
    }
}

#[inline(always)]
unsafe fn broadcast(t: ShoupConst) -> Twiddle {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        twiddle_from(
            _mm256_set1_epi64x(t.value as i64),
            _mm256_set1_epi64x(t.quotient as i64),
        )
    }
}

/// a·w mod q in [0, 2q) for any 64-bit lanes a (Shoup).
#[inline(always)]
unsafe fn mul_shoup_lazy(a: __m256i, t: Twiddle, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        // A 32-bit lane swap (not a shift) feeds the high halves to `vpmuludq`, which reads only the
        // low half of each lane; it also keeps LLVM from turning the sequence into scalar `mulq`s.
        let a_hi = _mm256_shuffle_epi32::<0b10_11_00_01>(a);
        // q̂ = ⌊a·wq / 2^64⌋, exactly.
        let ll = _mm256_mul_epu32(a, t.wq);
        let lh = _mm256_mul_epu32(a, t.wq_hi);
        let hl = _mm256_mul_epu32(a_hi, t.wq);
        let hh = _mm256_mul_epu32(a_hi, t.wq_hi);
        let mid = _mm256_add_epi64(
            _mm256_add_epi64(_mm256_srli_epi64(ll, 32), _mm256_and_si256(lh, c.lo32)),
            _mm256_and_si256(hl, c.lo32),
        );
        let qhat = _mm256_add_epi64(
            _mm256_add_epi64(hh, _mm256_srli_epi64(lh, 32)),
            _mm256_add_epi64(_mm256_srli_epi64(hl, 32), _mm256_srli_epi64(mid, 32)),
        );
        // a·w − q̂·q mod 2^64.
        let aw = _mm256_add_epi64(
            _mm256_mul_epu32(a, t.w),
            _mm256_slli_epi64(
                _mm256_add_epi64(_mm256_mul_epu32(a_hi, t.w), _mm256_mul_epu32(a, t.w_hi)),
                32,
            ),
        );
        let qhat_hi = _mm256_shuffle_epi32::<0b10_11_00_01>(qhat);
        let qq = _mm256_add_epi64(
            _mm256_mul_epu32(qhat, c.q),
            _mm256_slli_epi64(
                _mm256_add_epi64(
                    _mm256_mul_epu32(qhat_hi, c.q),
                    _mm256_mul_epu32(qhat, c.q_hi),
                ),
                32,
            ),
        );
        _mm256_sub_epi64(aw, qq)
    }
}

/// x − 2q where x ≥ 2q, else x.
#[inline(always)]
unsafe fn reduce_2q(x: __m256i, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let ge = _mm256_cmpgt_epi64(_mm256_xor_si256(x, c.sign), c.two_q_m1_flipped);
        _mm256_sub_epi64(x, _mm256_and_si256(ge, c.two_q))
    }
}

/// x − q where x ≥ q, else x.
#[inline(always)]
unsafe fn reduce_q(x: __m256i, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let ge = _mm256_cmpgt_epi64(_mm256_xor_si256(x, c.sign), c.q_m1_flipped);
        _mm256_sub_epi64(x, _mm256_and_si256(ge, c.q))
    }
}

/// Cooley–Tukey butterfly on [0, 4q) lanes.
#[inline(always)]
unsafe fn ct(x: __m256i, y: __m256i, t: Twiddle, c: &Consts) -> (__m256i, __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let u = reduce_2q(x, c);
        let v = mul_shoup_lazy(y, t, c);
        (
            _mm256_add_epi64(u, v),
            _mm256_add_epi64(_mm256_sub_epi64(u, v), c.two_q),
        )
    }
}

/// Gentleman–Sande butterfly on [0, 2q) lanes.
#[inline(always)]
unsafe fn gs(x: __m256i, y: __m256i, t: Twiddle, c: &Consts) -> (__m256i, __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let s = reduce_2q(_mm256_add_epi64(x, y), c);
        let d = _mm256_add_epi64(_mm256_sub_epi64(x, y), c.two_q);
        (s, mul_shoup_lazy(d, t, c))
    }
}

#[inline(always)]
unsafe fn load(p: *const u64) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_loadu_si256(p as *const __m256i) }
}

#[inline(always)]
unsafe fn store(p: *mut u64, v: __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_storeu_si256(p as *mut __m256i, v) }
}

/// Gathers twiddles k, k, k+1, k+1 (stage t = 2) from the table.
#[inline(always)]
unsafe fn twiddle_pairs(roots: &[ShoupConst], k: usize) -> Twiddle {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let (a, b) = (roots[k], roots[k + 1]);
        twiddle_from(
            _mm256_setr_epi64x(
                a.value as i64,
                a.value as i64,
                b.value as i64,
                b.value as i64,
            ),
            _mm256_setr_epi64x(
                a.quotient as i64,
                a.quotient as i64,
                b.quotient as i64,
                b.quotient as i64,
            ),
        )
    }
}

/// Gathers twiddles k, k+2, k+1, k+3 (stage t = 1, matching the unpack lane order).
#[inline(always)]
unsafe fn twiddle_quad(roots: &[ShoupConst], k: usize) -> Twiddle {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let (a, b, c, d) = (roots[k], roots[k + 1], roots[k + 2], roots[k + 3]);
        twiddle_from(
            _mm256_setr_epi64x(
                a.value as i64,
                c.value as i64,
                b.value as i64,
                d.value as i64,
            ),
            _mm256_setr_epi64x(
                a.quotient as i64,
                c.quotient as i64,
                b.quotient as i64,
                d.quotient as i64,
            ),
        )
    }
}

/// Forward transform, output fully reduced. Requires n = a.len() ≥ 16, a power of two, and
/// `roots.len() == n`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn forward(a: &mut [u64], roots: &[ShoupConst], q: &Modulus) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let n = a.len();
        let c = consts(q);
        let p = a.as_mut_ptr();
        let mut t = n;
        let mut m = 1;
        while t > 4 {
            t >>= 1;
            vector_stage!(p, m, t, 4, load, |i| broadcast(roots[m + i]), |x, y, w| ct(
                x, y, w, &c
            ));
            m <<= 1;
        }
        // t = 2: blocks of 4 words; two blocks per pair of vectors.
        for i in (0..m).step_by(2) {
            let w = twiddle_pairs(roots, m + i);
            // SAFETY: 4i + 8 ≤ 2m·2 = n words.
            let (v0, v1) = (load(p.add(4 * i)), load(p.add(4 * i + 4)));
            let x = _mm256_permute2x128_si256(v0, v1, 0x20);
            let y = _mm256_permute2x128_si256(v0, v1, 0x31);
            let (x, y) = ct(x, y, w, &c);
            store(p.add(4 * i), _mm256_permute2x128_si256(x, y, 0x20));
            store(p.add(4 * i + 4), _mm256_permute2x128_si256(x, y, 0x31));
        }
        m <<= 1;
        // t = 1: pairs; four blocks per pair of vectors; the final reduction to [0, q) is merged in.
        for i in (0..m).step_by(4) {
            let w = twiddle_quad(roots, m + i);
            // SAFETY: 2i + 8 ≤ 2m = n words.
            let (v0, v1) = (load(p.add(2 * i)), load(p.add(2 * i + 4)));
            let x = _mm256_unpacklo_epi64(v0, v1);
            let y = _mm256_unpackhi_epi64(v0, v1);
            let (x, y) = ct(x, y, w, &c);
            let (x, y) = (
                reduce_q(reduce_2q(x, &c), &c),
                reduce_q(reduce_2q(y, &c), &c),
            );
            store(p.add(2 * i), _mm256_unpacklo_epi64(x, y));
            store(p.add(2 * i + 4), _mm256_unpackhi_epi64(x, y));
        }
    }
}

/// Inverse transform including N^{-1}, output fully reduced. Same requirements as [`forward`].
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn inverse(
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
        let p = a.as_mut_ptr();
        // t = 1 (h = n/2 blocks).
        let mut h = n / 2;
        for i in (0..h).step_by(4) {
            let w = twiddle_quad(inv_roots, h + i);
            // SAFETY: 2i + 8 ≤ n.
            let (v0, v1) = (load(p.add(2 * i)), load(p.add(2 * i + 4)));
            let (x, y) = gs(
                _mm256_unpacklo_epi64(v0, v1),
                _mm256_unpackhi_epi64(v0, v1),
                w,
                &c,
            );
            store(p.add(2 * i), _mm256_unpacklo_epi64(x, y));
            store(p.add(2 * i + 4), _mm256_unpackhi_epi64(x, y));
        }
        // t = 2.
        h >>= 1;
        for i in (0..h).step_by(2) {
            let w = twiddle_pairs(inv_roots, h + i);
            // SAFETY: 4i + 8 ≤ n.
            let (v0, v1) = (load(p.add(4 * i)), load(p.add(4 * i + 4)));
            let x = _mm256_permute2x128_si256(v0, v1, 0x20);
            let y = _mm256_permute2x128_si256(v0, v1, 0x31);
            let (x, y) = gs(x, y, w, &c);
            store(p.add(4 * i), _mm256_permute2x128_si256(x, y, 0x20));
            store(p.add(4 * i + 4), _mm256_permute2x128_si256(x, y, 0x31));
        }
        // t ≥ 4 until the last stage.
        let mut t = 4;
        h >>= 1;
        while h > 1 {
            vector_stage!(
                p,
                h,
                t,
                4,
                load,
                |i| broadcast(inv_roots[h + i]),
                |x, y, w| gs(x, y, w, &c)
            );
            t <<= 1;
            h >>= 1;
        }
        // Last stage with N^{-1} merged, then the final reduction to [0, q).
        let (wn, wl) = (broadcast(n_inv), broadcast(last));
        let half = n / 2;
        let mut j = 0;
        while j < half {
            // SAFETY: half + j + 4 ≤ n.
            let (x, y) = (load(p.add(j)), load(p.add(half + j)));
            let s = mul_shoup_lazy(_mm256_add_epi64(x, y), wn, &c);
            let d = mul_shoup_lazy(_mm256_add_epi64(_mm256_sub_epi64(x, y), c.two_q), wl, &c);
            store(p.add(j), reduce_q(s, &c));
            store(p.add(half + j), reduce_q(d, &c));
            j += 4;
        }
    }
}

/// Whether this CPU runs the AVX2 kernels (without `std`, only if compiled in with `-C target-feature`).
pub(crate) fn is_supported() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "avx2")
    }
}
