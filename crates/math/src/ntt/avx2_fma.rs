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
unsafe fn tw_pairs(roots: &[u64], k: usize) -> __m256d {
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
unsafe fn tw_quad(roots: &[u64], k: usize) -> __m256d {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        // SAFETY (caller): k + 4 ≤ roots.len().
        _mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_loadu_pd(roots.as_ptr().add(k) as *const f64))
    }
}

/// Forward transform; `roots[k]` = the bits of ψ^{bitrev(k)} as a double. Input u64 in [0, 4q), output u64 in
/// [0, q). Requires n = a.len() ≥ 16 (a power of two), roots.len() == n, q < 2^50.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn forward(a: &mut [u64], roots: &[u64], q: &Modulus) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let n = a.len();
        let c = consts(q);
        let p = a.as_mut_ptr();
        // The first stage (t = n/2, one block) converts the u64 input to doubles as it loads.
        let mut t = n / 2;
        vector_stage!(
            p,
            1,
            t,
            4,
            load_u(&c),
            |i| broadcast(roots[1 + i]),
            |x, y, w| ct(x, y, w, &c)
        );
        let mut m = 2;
        while t > 4 {
            t >>= 1;
            vector_stage!(p, m, t, 4, load, |i| broadcast(roots[m + i]), |x, y, w| ct(
                x, y, w, &c
            ));
            m <<= 1;
        }
        for i in (0..m).step_by(2) {
            let w = tw_pairs(roots, m + i);
            // SAFETY: 4i + 8 ≤ n.
            let (v0, v1) = (load(p.add(4 * i)), load(p.add(4 * i + 4)));
            let (x, y) = ct(
                _mm256_permute2f128_pd(v0, v1, 0x20),
                _mm256_permute2f128_pd(v0, v1, 0x31),
                w,
                &c,
            );
            store(p.add(4 * i), _mm256_permute2f128_pd(x, y, 0x20));
            store(p.add(4 * i + 4), _mm256_permute2f128_pd(x, y, 0x31));
        }
        m <<= 1;
        for i in (0..m).step_by(4) {
            let w = tw_quad(roots, m + i);
            // SAFETY: 2i + 8 ≤ n.
            let (v0, v1) = (load(p.add(2 * i)), load(p.add(2 * i + 4)));
            let (x, y) = ct(
                _mm256_unpacklo_pd(v0, v1),
                _mm256_unpackhi_pd(v0, v1),
                w,
                &c,
            );
            let (x, y) = (normalize(x, &c), normalize(y, &c));
            _mm256_storeu_si256(p.add(2 * i) as *mut __m256i, _mm256_unpacklo_epi64(x, y));
            _mm256_storeu_si256(
                p.add(2 * i + 4) as *mut __m256i,
                _mm256_unpackhi_epi64(x, y),
            );
        }
    }
}

/// Inverse transform with N^{-1} merged; `inv_roots[k]` = bits of ψ^{-bitrev(k)} as a double, `n_inv` and
/// `last` the merged constants of the last stage. Input u64 in [0, 2q), output u64 in [0, q).
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn inverse(a: &mut [u64], inv_roots: &[u64], n_inv: u64, last: u64, q: &Modulus) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let n = a.len();
        let c = consts(q);
        let p = a.as_mut_ptr();
        let mut h = n / 2;
        for i in (0..h).step_by(4) {
            let w = tw_quad(inv_roots, h + i);
            // SAFETY: 2i + 8 ≤ n.
            let (v0, v1) = (load_u(p.add(2 * i), &c), load_u(p.add(2 * i + 4), &c));
            let (x, y) = gs(
                _mm256_unpacklo_pd(v0, v1),
                _mm256_unpackhi_pd(v0, v1),
                w,
                &c,
            );
            store(p.add(2 * i), _mm256_unpacklo_pd(x, y));
            store(p.add(2 * i + 4), _mm256_unpackhi_pd(x, y));
        }
        h >>= 1;
        for i in (0..h).step_by(2) {
            let w = tw_pairs(inv_roots, h + i);
            // SAFETY: 4i + 8 ≤ n.
            let (v0, v1) = (load(p.add(4 * i)), load(p.add(4 * i + 4)));
            let (x, y) = gs(
                _mm256_permute2f128_pd(v0, v1, 0x20),
                _mm256_permute2f128_pd(v0, v1, 0x31),
                w,
                &c,
            );
            store(p.add(4 * i), _mm256_permute2f128_pd(x, y, 0x20));
            store(p.add(4 * i + 4), _mm256_permute2f128_pd(x, y, 0x31));
        }
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
        let (wn, wl) = (broadcast(n_inv), broadcast(last));
        let half = n / 2;
        let mut j = 0;
        while j < half {
            // SAFETY: half + j + 4 ≤ n.
            let (x, y) = (load(p.add(j)), load(p.add(half + j)));
            let s = mulmod(_mm256_add_pd(x, y), wn, &c);
            let d = mulmod(_mm256_sub_pd(x, y), wl, &c);
            _mm256_storeu_si256(p.add(j) as *mut __m256i, normalize(s, &c));
            _mm256_storeu_si256(p.add(half + j) as *mut __m256i, normalize(d, &c));
            j += 4;
        }
    }
}

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
