//! AVX2+FMA kernels of the split-layout FFT in [`crate::fft`] (same algorithm, 4 doubles per vector).
//!
//! Stages with half-size h ≥ 4 vectorize over the butterfly index; the two smallest stages (h = 2, 1) are
//! done together inside each 4-element vector with lane permutations. Every function here is checked
//! against the portable path in `fft::tests`.

#![cfg(target_arch = "x86_64")]

use crate::fft::FftPlan;
use std::arch::x86_64::*;

/// Forward transform (twist + DIF), bit-reversed output. Needs m = re.len() ≥ 4 (N ≥ 8).
///
/// # Safety
/// The CPU must support AVX2 and FMA; `re`, `im` and the plan tables must all have length m.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn forward(p: &FftPlan, re: &mut [f64], im: &mut [f64]) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let m = re.len();
        debug_assert!(m >= 4 && im.len() == m);
        let (rp, ip) = (re.as_mut_ptr(), im.as_mut_ptr());
        let (tr, ti) = p.twist();
        let (twr, twi) = p.stage_tables();
        // SAFETY (whole function): every index below is < m, the length of re, im and the twist tables,
        // and the stage tables hold 2h ≤ m entries for each h < m.
        let mut h = m / 2;
        if h >= 4 {
            // First stage fused with the twist: one pass over the data instead of two.
            let mut j = 0;
            while j < h {
                let (r0, i0) = (rp.add(j), ip.add(j));
                let (r1, i1) = (rp.add(j + h), ip.add(j + h));
                let (a0, b0) = (_mm256_loadu_pd(r0), _mm256_loadu_pd(i0));
                let (c0, s0) = (
                    _mm256_loadu_pd(tr.as_ptr().add(j)),
                    _mm256_loadu_pd(ti.as_ptr().add(j)),
                );
                let ur = _mm256_fmsub_pd(a0, c0, _mm256_mul_pd(b0, s0));
                let ui = _mm256_fmadd_pd(a0, s0, _mm256_mul_pd(b0, c0));
                let (a1, b1) = (_mm256_loadu_pd(r1), _mm256_loadu_pd(i1));
                let (c1, s1) = (
                    _mm256_loadu_pd(tr.as_ptr().add(j + h)),
                    _mm256_loadu_pd(ti.as_ptr().add(j + h)),
                );
                let vr = _mm256_fmsub_pd(a1, c1, _mm256_mul_pd(b1, s1));
                let vi = _mm256_fmadd_pd(a1, s1, _mm256_mul_pd(b1, c1));
                let wr = _mm256_loadu_pd(twr.as_ptr().add(h + j));
                let wi = _mm256_loadu_pd(twi.as_ptr().add(h + j));
                _mm256_storeu_pd(r0, _mm256_add_pd(ur, vr));
                _mm256_storeu_pd(i0, _mm256_add_pd(ui, vi));
                let dr = _mm256_sub_pd(ur, vr);
                let di = _mm256_sub_pd(ui, vi);
                _mm256_storeu_pd(r1, _mm256_fmsub_pd(dr, wr, _mm256_mul_pd(di, wi)));
                _mm256_storeu_pd(i1, _mm256_fmadd_pd(dr, wi, _mm256_mul_pd(di, wr)));
                j += 4;
            }
            h /= 2;
        } else {
            let mut j = 0;
            while j < m {
                let a = _mm256_loadu_pd(rp.add(j));
                let b = _mm256_loadu_pd(ip.add(j));
                let c = _mm256_loadu_pd(tr.as_ptr().add(j));
                let s = _mm256_loadu_pd(ti.as_ptr().add(j));
                _mm256_storeu_pd(rp.add(j), _mm256_fmsub_pd(a, c, _mm256_mul_pd(b, s)));
                _mm256_storeu_pd(ip.add(j), _mm256_fmadd_pd(a, s, _mm256_mul_pd(b, c)));
                j += 4;
            }
        }
        while h >= 4 {
            let mut s = 0;
            while s < m {
                let mut j = 0;
                while j < h {
                    let (r0, i0) = (rp.add(s + j), ip.add(s + j));
                    let (r1, i1) = (rp.add(s + j + h), ip.add(s + j + h));
                    let (ur, ui) = (_mm256_loadu_pd(r0), _mm256_loadu_pd(i0));
                    let (vr, vi) = (_mm256_loadu_pd(r1), _mm256_loadu_pd(i1));
                    let wr = _mm256_loadu_pd(twr.as_ptr().add(h + j));
                    let wi = _mm256_loadu_pd(twi.as_ptr().add(h + j));
                    _mm256_storeu_pd(r0, _mm256_add_pd(ur, vr));
                    _mm256_storeu_pd(i0, _mm256_add_pd(ui, vi));
                    let dr = _mm256_sub_pd(ur, vr);
                    let di = _mm256_sub_pd(ui, vi);
                    _mm256_storeu_pd(r1, _mm256_fmsub_pd(dr, wr, _mm256_mul_pd(di, wi)));
                    _mm256_storeu_pd(i1, _mm256_fmadd_pd(dr, wi, _mm256_mul_pd(di, wr)));
                    j += 4;
                }
                s += 2 * h;
            }
            h /= 2;
        }
        // Stages h = 2 (twiddles 1, −i) and h = 1 (twiddle 1) inside each vector.
        let sign_hi = _mm256_set_pd(-1.0, -1.0, 1.0, 1.0);
        let sign_odd = _mm256_set_pd(-1.0, 1.0, -1.0, 1.0);
        let mut s = 0;
        while s < m {
            let r = _mm256_loadu_pd(rp.add(s));
            let i = _mm256_loadu_pd(ip.add(s));
            // [lo + hi | lo − hi]
            let rn = _mm256_fmadd_pd(r, sign_hi, _mm256_permute2f128_pd::<0x01>(r, r));
            let in_ = _mm256_fmadd_pd(i, sign_hi, _mm256_permute2f128_pd::<0x01>(i, i));
            // lane 3 times −i: (re, im) ← (im, −re)
            let rf = _mm256_blend_pd::<0b1000>(rn, in_);
            let ifn = _mm256_blend_pd::<0b1000>(in_, _mm256_sub_pd(_mm256_setzero_pd(), rn));
            // [x0 + x1, x0 − x1, x2 + x3, x2 − x3]
            let r2 = _mm256_fmadd_pd(rf, sign_odd, _mm256_permute_pd::<0b0101>(rf));
            let i2 = _mm256_fmadd_pd(ifn, sign_odd, _mm256_permute_pd::<0b0101>(ifn));
            _mm256_storeu_pd(rp.add(s), r2);
            _mm256_storeu_pd(ip.add(s), i2);
            s += 4;
        }
    }
}

/// Inverse transform (DIT + untwist and 1/(N/2) scaling), bit-reversed input.
///
/// # Safety
/// As [`forward`].
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn backward(p: &FftPlan, re: &mut [f64], im: &mut [f64]) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let m = re.len();
        debug_assert!(m >= 4 && im.len() == m);
        let (rp, ip) = (re.as_mut_ptr(), im.as_mut_ptr());
        // SAFETY (whole function): indices < m as in `forward`.
        let sign_hi = _mm256_set_pd(-1.0, -1.0, 1.0, 1.0);
        let sign_odd = _mm256_set_pd(-1.0, 1.0, -1.0, 1.0);
        let mut s = 0;
        while s < m {
            let r = _mm256_loadu_pd(rp.add(s));
            let i = _mm256_loadu_pd(ip.add(s));
            // h = 1: [x0 + x1, x0 − x1, x2 + x3, x2 − x3]
            let r1 = _mm256_fmadd_pd(r, sign_odd, _mm256_permute_pd::<0b0101>(r));
            let i1 = _mm256_fmadd_pd(i, sign_odd, _mm256_permute_pd::<0b0101>(i));
            // h = 2: lane 3 times conj(−i) = +i: (re, im) ← (−im, re)
            let rf = _mm256_blend_pd::<0b1000>(r1, _mm256_sub_pd(_mm256_setzero_pd(), i1));
            let ifn = _mm256_blend_pd::<0b1000>(i1, r1);
            let r2 = _mm256_fmadd_pd(rf, sign_hi, _mm256_permute2f128_pd::<0x01>(rf, rf));
            let i2 = _mm256_fmadd_pd(ifn, sign_hi, _mm256_permute2f128_pd::<0x01>(ifn, ifn));
            _mm256_storeu_pd(rp.add(s), r2);
            _mm256_storeu_pd(ip.add(s), i2);
            s += 4;
        }
        let (twr, twi) = p.stage_tables();
        let (ur_t, ui_t) = p.untwist();
        let mut h = 4;
        // Stages below the last; the last (h = m/2) is fused with the untwist when m ≥ 8.
        let last = if m >= 8 { m / 2 } else { m };
        while h < last {
            let mut s = 0;
            while s < m {
                let mut j = 0;
                while j < h {
                    let (r0, i0) = (rp.add(s + j), ip.add(s + j));
                    let (r1, i1) = (rp.add(s + j + h), ip.add(s + j + h));
                    let wr = _mm256_loadu_pd(twr.as_ptr().add(h + j));
                    let wi = _mm256_loadu_pd(twi.as_ptr().add(h + j));
                    let (xr, xi) = (_mm256_loadu_pd(r1), _mm256_loadu_pd(i1));
                    let vr = _mm256_fmadd_pd(xr, wr, _mm256_mul_pd(xi, wi));
                    let vi = _mm256_fmsub_pd(xi, wr, _mm256_mul_pd(xr, wi));
                    let (ur, ui) = (_mm256_loadu_pd(r0), _mm256_loadu_pd(i0));
                    _mm256_storeu_pd(r0, _mm256_add_pd(ur, vr));
                    _mm256_storeu_pd(i0, _mm256_add_pd(ui, vi));
                    _mm256_storeu_pd(r1, _mm256_sub_pd(ur, vr));
                    _mm256_storeu_pd(i1, _mm256_sub_pd(ui, vi));
                    j += 4;
                }
                s += 2 * h;
            }
            h *= 2;
        }
        if m >= 8 {
            // Last stage fused with the untwist: one pass over the data instead of two.
            let h = m / 2;
            let mut j = 0;
            while j < h {
                let (r0, i0) = (rp.add(j), ip.add(j));
                let (r1, i1) = (rp.add(j + h), ip.add(j + h));
                let wr = _mm256_loadu_pd(twr.as_ptr().add(h + j));
                let wi = _mm256_loadu_pd(twi.as_ptr().add(h + j));
                let (xr, xi) = (_mm256_loadu_pd(r1), _mm256_loadu_pd(i1));
                let vr = _mm256_fmadd_pd(xr, wr, _mm256_mul_pd(xi, wi));
                let vi = _mm256_fmsub_pd(xi, wr, _mm256_mul_pd(xr, wi));
                let (ur, ui) = (_mm256_loadu_pd(r0), _mm256_loadu_pd(i0));
                let (ar, ai) = (_mm256_add_pd(ur, vr), _mm256_add_pd(ui, vi));
                let (br, bi) = (_mm256_sub_pd(ur, vr), _mm256_sub_pd(ui, vi));
                let (c0, s0) = (
                    _mm256_loadu_pd(ur_t.as_ptr().add(j)),
                    _mm256_loadu_pd(ui_t.as_ptr().add(j)),
                );
                let (c1, s1) = (
                    _mm256_loadu_pd(ur_t.as_ptr().add(j + h)),
                    _mm256_loadu_pd(ui_t.as_ptr().add(j + h)),
                );
                _mm256_storeu_pd(r0, _mm256_fmsub_pd(ar, c0, _mm256_mul_pd(ai, s0)));
                _mm256_storeu_pd(i0, _mm256_fmadd_pd(ar, s0, _mm256_mul_pd(ai, c0)));
                _mm256_storeu_pd(r1, _mm256_fmsub_pd(br, c1, _mm256_mul_pd(bi, s1)));
                _mm256_storeu_pd(i1, _mm256_fmadd_pd(br, s1, _mm256_mul_pd(bi, c1)));
                j += 4;
            }
        } else {
            let mut j = 0;
            while j < m {
                let a = _mm256_loadu_pd(rp.add(j));
                let b = _mm256_loadu_pd(ip.add(j));
                let c = _mm256_loadu_pd(ur_t.as_ptr().add(j));
                let s = _mm256_loadu_pd(ui_t.as_ptr().add(j));
                _mm256_storeu_pd(rp.add(j), _mm256_fmsub_pd(a, c, _mm256_mul_pd(b, s)));
                _mm256_storeu_pd(ip.add(j), _mm256_fmadd_pd(a, s, _mm256_mul_pd(b, c)));
                j += 4;
            }
        }
    }
}

/// acc += a ⊙ b in the split layout; all three slices have the same even length n with n/2 % 4 == 0.
///
/// # Safety
/// The CPU must support AVX2 and FMA; the slices must have equal length n, n/2 a multiple of 4.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn mul_acc(acc: &mut [f64], a: &[f64], b: &[f64]) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let m = acc.len() / 2;
        let (cp, ap, bp) = (acc.as_mut_ptr(), a.as_ptr(), b.as_ptr());
        // SAFETY: j + 4 ≤ m and m + j + 4 ≤ 2m = len of each slice.
        let mut j = 0;
        while j < m {
            let (ar, ai) = (_mm256_loadu_pd(ap.add(j)), _mm256_loadu_pd(ap.add(m + j)));
            let (br, bi) = (_mm256_loadu_pd(bp.add(j)), _mm256_loadu_pd(bp.add(m + j)));
            let cr = _mm256_loadu_pd(cp.add(j));
            let ci = _mm256_loadu_pd(cp.add(m + j));
            let cr = _mm256_fnmadd_pd(ai, bi, _mm256_fmadd_pd(ar, br, cr));
            let ci = _mm256_fmadd_pd(ai, br, _mm256_fmadd_pd(ar, bi, ci));
            _mm256_storeu_pd(cp.add(j), cr);
            _mm256_storeu_pd(cp.add(m + j), ci);
            j += 4;
        }
    }
}

/// acc_a += x ⊙ a and acc_b += x ⊙ b in one pass over x (the external product's inner loop).
///
/// # Safety
/// As [`mul_acc`]; all five slices have the same length.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn mul_acc2(
    acc_a: &mut [f64],
    acc_b: &mut [f64],
    x: &[f64],
    a: &[f64],
    b: &[f64],
) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let m = x.len() / 2;
        debug_assert!(
            acc_a.len() == 2 * m && acc_b.len() == 2 * m && a.len() == 2 * m && b.len() == 2 * m
        );
        let (pa, pb, px, ra, rb) = (
            acc_a.as_mut_ptr(),
            acc_b.as_mut_ptr(),
            x.as_ptr(),
            a.as_ptr(),
            b.as_ptr(),
        );
        // SAFETY: j + 4 ≤ m and m + j + 4 ≤ 2m, the length of every slice.
        let mut j = 0;
        while j < m {
            let (xr, xi) = (_mm256_loadu_pd(px.add(j)), _mm256_loadu_pd(px.add(m + j)));
            for (acc, key) in [(pa, ra), (pb, rb)] {
                let (kr, ki) = (_mm256_loadu_pd(key.add(j)), _mm256_loadu_pd(key.add(m + j)));
                let cr = _mm256_loadu_pd(acc.add(j));
                let ci = _mm256_loadu_pd(acc.add(m + j));
                let cr = _mm256_fnmadd_pd(xi, ki, _mm256_fmadd_pd(xr, kr, cr));
                let ci = _mm256_fmadd_pd(xi, kr, _mm256_fmadd_pd(xr, ki, ci));
                _mm256_storeu_pd(acc.add(j), cr);
                _mm256_storeu_pd(acc.add(m + j), ci);
            }
            j += 4;
        }
    }
}

/// acc_a = Σ_r x_r ⊙ key_{r,a} and acc_b = Σ_r x_r ⊙ key_{r,b} (overwriting), for `rows` rows: x holds the
/// rows' transformed digits back to back (rows × n), key holds rows × 2n values in the
/// [`crate::fft::interleaved_index`] layout (w = 4). One pass
/// keeps the accumulators in registers, so only the key and the digits stream through memory.
///
/// Only the points j in `points` = [j0, j1) (multiples of 4, j1 ≤ n/2) are computed (and written, at
/// j and n/2 + j), each with the same sum whatever the range.
///
/// # Safety
/// The CPU must support AVX2 and FMA; acc_a.len() == acc_b.len() == n with n/2 a multiple of 4,
/// the rows are xs[0]'s then xs[1]'s (row r of a part at r·stride, stride ≥ n, each part's length
/// a multiple of stride), key.len() ≥ rows·2n;
/// `points` as above.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn mul_acc_rows(
    acc_a: &mut [f64],
    acc_b: &mut [f64],
    xs: [&[f64]; 2],
    stride: usize,
    key: &[f64],
    points: (usize, usize),
) {
    // SAFETY: the caller upholds the contract, which mul_acc_rows_parts shares; with one part (the
    // external product's case) the row loop is the plain one.
    unsafe {
        if xs[1].is_empty() {
            mul_acc_rows_parts::<1>(acc_a, acc_b, xs, stride, key, points)
        } else {
            mul_acc_rows_parts::<2>(acc_a, acc_b, xs, stride, key, points)
        }
    }
}

/// [`mul_acc_rows`] over the first `PARTS` of `xs`.
///
/// # Safety
/// As [`mul_acc_rows`]; xs[1] must be empty when PARTS = 1.
#[target_feature(enable = "avx2,fma")]
unsafe fn mul_acc_rows_parts<const PARTS: usize>(
    acc_a: &mut [f64],
    acc_b: &mut [f64],
    xs: [&[f64]; 2],
    stride: usize,
    key: &[f64],
    points: (usize, usize),
) {
    // SAFETY: the caller upholds this function's safety contract (its target features are
    // present, pointers and lengths in bounds); the block relies on nothing else.
    unsafe {
        let n = acc_a.len();
        let m = n / 2;
        let parts = [
            (xs[0].as_ptr(), xs[0].len() / stride),
            (xs[1].as_ptr(), xs[1].len() / stride),
        ];
        let rows = parts[0].1 + parts[1].1;
        debug_assert!(acc_b.len() == n && key.len() >= rows * 2 * n);
        let (pa, pb, pk) = (acc_a.as_mut_ptr(), acc_b.as_mut_ptr(), key.as_ptr());
        // SAFETY: j0 ≤ j, j + 4 ≤ j1 ≤ m and part p's offsets r·stride + m + j + 4 ≤ (its rows)·stride, its
        // length; the key (interleaved_index layout,
        // w = 4) is read strictly sequentially, 16 doubles per row per block, rows·2n in all, within the
        // lengths the caller guarantees.
        let (j0, j1) = points;
        debug_assert!(j0.is_multiple_of(4) && j1.is_multiple_of(4) && j0 <= j1 && j1 <= m);
        let mut k = pk.add((j0 / 4) * rows * 16);
        let mut j = j0;
        while j < j1 {
            let (mut ar, mut ai) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            let (mut br, mut bi) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            for &(px, prow) in &parts[..PARTS] {
                for r in 0..prow {
                    let xo = px.add(r * stride + j);
                    let (xr, xi) = (_mm256_loadu_pd(xo), _mm256_loadu_pd(xo.add(m)));
                    // Software prefetch of the streamed key (see fft::KEY_PREFETCH_DOUBLES).
                    let ahead = k.wrapping_add(crate::fft::KEY_PREFETCH_DOUBLES);
                    _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(8) as *const i8);
                    let (kar, kai) = (_mm256_loadu_pd(k), _mm256_loadu_pd(k.add(4)));
                    let (kbr, kbi) = (_mm256_loadu_pd(k.add(8)), _mm256_loadu_pd(k.add(12)));
                    k = k.add(16);
                    ar = _mm256_fnmadd_pd(xi, kai, _mm256_fmadd_pd(xr, kar, ar));
                    ai = _mm256_fmadd_pd(xi, kar, _mm256_fmadd_pd(xr, kai, ai));
                    br = _mm256_fnmadd_pd(xi, kbi, _mm256_fmadd_pd(xr, kbr, br));
                    bi = _mm256_fmadd_pd(xi, kbr, _mm256_fmadd_pd(xr, kbi, bi));
                }
            }
            _mm256_storeu_pd(pa.add(j), ar);
            _mm256_storeu_pd(pa.add(m + j), ai);
            _mm256_storeu_pd(pb.add(j), br);
            _mm256_storeu_pd(pb.add(m + j), bi);
            j += 4;
        }
    }
}
