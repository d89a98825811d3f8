//! AVX2 + FMA NTT kernels in double precision for q < 2^50: the fast path of machines without
//! AVX-512 IFMA.
//!
//! AVX2 has no 64-bit integer multiplier, but it has fused multiply-add on doubles. For integers
//! |a| < 2^52 and 0 ≤ w < q < 2^50 the product a·w = hi + lo exactly, with hi = fl(a·w) and
//! lo = fma(a, w, −hi) (Dekker/Ogita–Rump–Oishi error-free product). With qt = round(hi·(1/q)),
//! r = fma(−qt, q, hi) + lo equals a·w − qt·q exactly and |r| ≤ 2q: a Barrett reduction in
//! floating point (the technique of Harvey's and van der Hoeven's FFT work and of NFLlib-style
//! double-precision NTTs). Lanes hold *signed* integers as doubles; the "x" half of each
//! butterfly is centered with one more rounding, so every value stays below 2.5q < 2^52 in
//! magnitude. Data are converted in place (u64 bits ↔ f64 bits) in the first and last stages, so
//! the public interface and the results are the same as the other backends, bit for bit.

use core::arch::x86_64::*;

use crate::modulus::Modulus;

/// Largest modulus size this backend accepts.
pub(crate) const MAX_BITS: u32 = 50;

#[derive(Clone, Copy)]
struct Consts {
    q: __m256d,
    qinv: __m256d,
    magic: __m256d,
    magic_bits: __m256i,
    zero: __m256d,
}

#[inline(always)]
unsafe fn consts(q: &Modulus) -> Consts {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let magic = 4_503_599_627_370_496.0f64; // 2^52
        Consts {
            q: _mm256_set1_pd(q.value() as f64),
            qinv: _mm256_set1_pd(1.0 / q.value() as f64),
            magic: _mm256_set1_pd(magic),
            magic_bits: _mm256_set1_epi64x(magic.to_bits() as i64),
            zero: _mm256_setzero_pd(),
        }
    }
}

/// u64 lanes below 2^52 → the same integers as doubles.
#[inline(always)]
unsafe fn to_f64(v: __m256i, c: &Consts) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(v, c.magic_bits)),
            c.magic,
        )
    }
}

/// Integer-valued doubles in [0, 2^52) → u64 lanes.
#[inline(always)]
unsafe fn to_u64(v: __m256d, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_xor_si256(_mm256_castpd_si256(_mm256_add_pd(v, c.magic)), c.magic_bits) }
}

#[inline(always)]
unsafe fn round(x: __m256d) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x) }
}

/// a·w − round(a·w/q)·q exactly, |result| ≤ 2q, for |a| < 2^52 and 0 ≤ w < q.
#[inline(always)]
unsafe fn mulmod(a: __m256d, w: __m256d, c: &Consts) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let hi = _mm256_mul_pd(a, w);
        let lo = _mm256_fmsub_pd(a, w, hi);
        let qt = round(_mm256_mul_pd(hi, c.qinv));
        _mm256_add_pd(_mm256_fnmadd_pd(qt, c.q, hi), lo)
    }
}

/// x − round(x/q)·q: the centered representative, |result| ≤ q/2 + 1.
#[inline(always)]
unsafe fn center(x: __m256d, c: &Consts) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_fnmadd_pd(round(_mm256_mul_pd(x, c.qinv)), c.q, x) }
}

/// Centered, then shifted to [0, q) and converted back to u64 lanes.
#[inline(always)]
unsafe fn normalize(x: __m256d, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let v = center(x, c);
        let neg = _mm256_cmp_pd::<_CMP_LT_OQ>(v, c.zero);
        to_u64(_mm256_add_pd(v, _mm256_and_pd(neg, c.q)), c)
    }
}

#[inline(always)]
unsafe fn ct(x: __m256d, y: __m256d, w: __m256d, c: &Consts) -> (__m256d, __m256d) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let u = center(x, c);
        let v = mulmod(y, w, c);
        (_mm256_add_pd(u, v), _mm256_sub_pd(u, v))
    }
}

#[inline(always)]
unsafe fn gs(x: __m256d, y: __m256d, w: __m256d, c: &Consts) -> (__m256d, __m256d) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        (
            center(_mm256_add_pd(x, y), c),
            mulmod(_mm256_sub_pd(x, y), w, c),
        )
    }
}

#[inline(always)]
unsafe fn load(p: *const u64) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_loadu_pd(p as *const f64) }
}

#[inline(always)]
unsafe fn store(p: *mut u64, v: __m256d) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_storeu_pd(p as *mut f64, v) }
}

#[inline(always)]
unsafe fn load_u(p: *const u64, c: &Consts) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { to_f64(_mm256_loadu_si256(p as *const __m256i), c) }
}

/// A twiddle (the bits of a double) in every lane.
#[inline(always)]
unsafe fn broadcast(bits: u64) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_set1_pd(f64::from_bits(bits)) }
}

/// Twiddles k, k, k+1, k+1 (stage t = 2).
#[inline(always)]
unsafe fn twiddle_pairs(roots: &[u64], k: usize) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        // SAFETY (caller): k + 2 ≤ roots.len().
        let pair = _mm_loadu_pd(roots.as_ptr().add(k) as *const f64);
        _mm256_permute4x64_pd::<0b01_01_00_00>(_mm256_castpd128_pd256(pair))
    }
}

/// Twiddles k, k+2, k+1, k+3 (stage t = 1, unpack lane order).
#[inline(always)]
unsafe fn twiddle_quad(roots: &[u64], k: usize) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        // SAFETY (caller): k + 4 ≤ roots.len().
        _mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_loadu_pd(roots.as_ptr().add(k) as *const f64))
    }
}

/// Output words: u64 lanes.
#[inline(always)]
unsafe fn store_u(p: *mut u64, v: __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { _mm256_storeu_si256(p as *mut __m256i, v) }
}

/// Signed working lanes → u64 words in [0, q).
#[inline(always)]
unsafe fn finish(x: __m256d, c: &Consts) -> __m256i {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { normalize(x, c) }
}

/// (low 128-bit halves, high halves) of two vectors: the regrouping of the stage t = 2.
#[inline(always)]
unsafe fn halves(a: __m256d, b: __m256d) -> (__m256d, __m256d) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        (
            _mm256_permute2f128_pd(a, b, 0x20),
            _mm256_permute2f128_pd(a, b, 0x31),
        )
    }
}

/// (even lanes, odd lanes) of two vectors, interleaved: the regrouping of the stage t = 1.
#[inline(always)]
unsafe fn unpack(a: __m256d, b: __m256d) -> (__m256d, __m256d) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe { (_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b)) }
}

/// The last inverse stage with N^{-1} (`wn`) and N^{-1}·ψ^{-bitrev(1)} (`wl`) merged, as u64 words
/// in [0, q).
#[inline(always)]
unsafe fn last_butterfly(
    x: __m256d,
    y: __m256d,
    wn: __m256d,
    wl: __m256d,
    c: &Consts,
) -> (__m256i, __m256i) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let s = mulmod(_mm256_add_pd(x, y), wn, c);
        let d = mulmod(_mm256_sub_pd(x, y), wl, c);
        (normalize(s, c), normalize(d, c))
    }
}

// `roots[k]` holds the bits of ψ^{bitrev(k)} as a double (ψ^{-bitrev(k)} for the inverse), and
// q < 2^50.
avx2_kernels!("avx2,fma", u64);

/// Whether this CPU has AVX2 and FMA.
pub(crate) fn is_supported() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(target_feature = "avx2", target_feature = "fma"))
    }
}
