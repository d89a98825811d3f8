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

/// Input words are the working lanes.
#[inline(always)]
unsafe fn load_u(p: *const u64, _: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { load(p) }
}

/// Output words are the working lanes.
#[inline(always)]
unsafe fn store_u(p: *mut u64, v: __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { store(p, v) }
}

/// [0, 4q) → [0, q).
#[inline(always)]
unsafe fn finish(x: __m256i, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { reduce_q(reduce_2q(x, c), c) }
}

/// (low 128-bit halves, high halves) of two vectors: the regrouping of the stage t = 2.
#[inline(always)]
unsafe fn halves(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        (
            _mm256_permute2x128_si256(a, b, 0x20),
            _mm256_permute2x128_si256(a, b, 0x31),
        )
    }
}

/// (even lanes, odd lanes) of two vectors, interleaved: the regrouping of the stage t = 1.
#[inline(always)]
unsafe fn unpack(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)) }
}

/// The last inverse stage on [0, 2q) lanes with N^{-1} (`wn`) and N^{-1}·ψ^{-bitrev(1)} (`wl`)
/// merged, reduced to [0, q).
#[inline(always)]
unsafe fn last_butterfly(
    x: __m256i,
    y: __m256i,
    wn: Twiddle,
    wl: Twiddle,
    c: &Consts,
) -> (__m256i, __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let s = mul_shoup_lazy(_mm256_add_epi64(x, y), wn, c);
        let d = mul_shoup_lazy(_mm256_add_epi64(_mm256_sub_epi64(x, y), c.two_q), wl, c);
        (reduce_q(s, c), reduce_q(d, c))
    }
}

avx2_kernels!("avx2", ShoupConst);

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
