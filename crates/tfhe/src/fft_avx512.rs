//! AVX-512F kernels of the split-layout FFT in [`crate::fft`] (same transform, 8 doubles per vector).
//!
//! Forward (decimation in frequency, bit-reversed output):
//! * the outer stages (half-size h ≥ 16) go in radix-4 passes, each doing stages h and h/2 in one pass over
//!   the data (half the loads and stores of two radix-2 passes, and one complex product fewer: the twiddle
//!   W_h[j + h/2] = −i·W_h[j] is a swap). The first pass is fused with the twist; when the number of outer
//!   stages is odd it is a radix-8 pass (stages m/2, m/4, m/8 on 8 vector pairs in registers; a radix-2
//!   one when there is a single outer stage). So N = 1024 takes two passes over the data, the radix-8
//!   one and the register tail (it took three, radix 2, 4 and the tail, before: measured on AMD Zen 4,
//!   `fft_speed loop`, −12% CPU time for a forward + inverse pair). When the number of outer stages
//!   is even and ≥ 4 the first pass is a radix-16 one (stages m/2 to m/16: the two radix-4 passes'
//!   arithmetic on 16 vector pairs, a few of them spilled), so N = 2048 takes two passes too (−18%
//!   for a forward + inverse pair on Zen 4, `fft_speed loop avx512 2048 fb`);
//! * the last six stages (h = 32, …, 1) run on 64-point blocks held in registers (8 re + 8 im vectors of
//!   the 32): h = 32, 16, 8 between vectors, h = 4, 2, 1 inside each vector with lane shuffles (for
//!   N/2 < 64, the last four stages on 16-point blocks).
//!
//! Backward (decimation in time, bit-reversed input) mirrors it: the register-block pass first, then
//! radix-4 passes (stages h and 2h), the last (radix 8 when three stages are left, as for N = 1024,
//! radix 16 when four are, as for N = 2048) fused with the untwist and 1/(N/2) scaling. That last
//! pass can also round its values and add them to torus words ([`backward_add`]: the blind
//! rotation's and the CMUX's accumulators), instead of storing them for a pass of its own.
//!
//! The stage order and twiddles are the portable ones, so the output order is identical; the results
//! differ from the portable kernel only by f64 rounding (the radix-4 −i factors are exact here where the
//! portable path multiplies by a tabulated cos/sin; the radix-8 passes use the tables; the radix-16
//! passes are the radix-4 arithmetic, so they give the radix-4 passes' values bit for bit). Needs
//! N/2 ≥ 16 (N ≥ 32); [`crate::fft::FftPlan`] falls back to AVX2 for smaller N. Every function here
//! is checked against the portable path in `fft::tests`.

#![cfg(target_arch = "x86_64")]

use crate::fft::FftPlan;
use std::arch::x86_64::*;

/// (ar + i·ai)·(br + i·bi).
#[inline]
#[target_feature(enable = "avx512f")]
fn cmul(ar: __m512d, ai: __m512d, br: __m512d, bi: __m512d) -> (__m512d, __m512d) {
    (
        _mm512_fmsub_pd(ar, br, _mm512_mul_pd(ai, bi)),
        _mm512_fmadd_pd(ar, bi, _mm512_mul_pd(ai, br)),
    )
}

/// (ar + i·ai)·conj(br + i·bi).
#[inline]
#[target_feature(enable = "avx512f")]
fn cmul_conj(ar: __m512d, ai: __m512d, br: __m512d, bi: __m512d) -> (__m512d, __m512d) {
    (
        _mm512_fmadd_pd(ar, br, _mm512_mul_pd(ai, bi)),
        _mm512_fmsub_pd(ai, br, _mm512_mul_pd(ar, bi)),
    )
}

/// Loads 8 doubles at `p + i`.
///
/// # Safety
/// `p + i .. p + i + 8` must be readable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn ld(p: *const f64, i: usize) -> __m512d {
    // SAFETY: the caller guarantees 8 readable doubles at p + i.
    unsafe { _mm512_loadu_pd(p.add(i)) }
}

/// Stores 8 doubles at `p + i`.
///
/// # Safety
/// `p + i .. p + i + 8` must be writable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn st(p: *mut f64, i: usize, v: __m512d) {
    // SAFETY: the caller guarantees 8 writable doubles at p + i.
    unsafe { _mm512_storeu_pd(p.add(i), v) }
}

/// A complex vector: 8 real parts and the 8 matching imaginary parts.
type C = (__m512d, __m512d);

/// Loads the complex vector at `i` of the split arrays (`rp`, `ip`).
///
/// # Safety
/// `rp + i .. rp + i + 8` and `ip + i .. ip + i + 8` must be readable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn ldc(rp: *const f64, ip: *const f64, i: usize) -> C {
    // SAFETY: the caller guarantees 8 readable doubles at both places.
    unsafe { (ld(rp, i), ld(ip, i)) }
}

/// Stores the complex vector `v` at `i` of the split arrays (`rp`, `ip`).
///
/// # Safety
/// `rp + i .. rp + i + 8` and `ip + i .. ip + i + 8` must be writable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn stc(rp: *mut f64, ip: *mut f64, i: usize, v: C) {
    // SAFETY: the caller guarantees 8 writable doubles at both places.
    unsafe {
        st(rp, i, v.0);
        st(ip, i, v.1);
    }
}

/// Forward stages h and h/2 on the points (a, b, c, d) = (j, j + h/2, j + h, j + 3h/2) of a block,
/// with w1 = W_h[j] and w2 = W_{h/2}[j]; the outputs replace the inputs. The twiddle W_h[j + h/2] =
/// −i·W_h[j] is a swap, folded into the second stage.
#[inline]
#[target_feature(enable = "avx512f")]
fn dif4(x: [C; 4], (w1r, w1i): C, (w2r, w2i): C) -> [C; 4] {
    let [(ar, ai), (br, bi), (cr, ci), (dr, di)] = x;
    // Stage h: (a, c) with W_h[j], (b, d) with −i·W_h[j].
    let (a1r, a1i) = (_mm512_add_pd(ar, cr), _mm512_add_pd(ai, ci));
    let (c1r, c1i) = cmul(_mm512_sub_pd(ar, cr), _mm512_sub_pd(ai, ci), w1r, w1i);
    let (b1r, b1i) = (_mm512_add_pd(br, dr), _mm512_add_pd(bi, di));
    // u = (b − d)·W_h[j]; d1 = −i·u = (u.im, −u.re).
    let (ur, ui) = cmul(_mm512_sub_pd(br, dr), _mm512_sub_pd(bi, di), w1r, w1i);
    // Stage h/2: (a1, b1) and (c1, d1) with W_{h/2}[j].
    [
        (_mm512_add_pd(a1r, b1r), _mm512_add_pd(a1i, b1i)),
        cmul(_mm512_sub_pd(a1r, b1r), _mm512_sub_pd(a1i, b1i), w2r, w2i),
        (_mm512_add_pd(c1r, ui), _mm512_sub_pd(c1i, ur)),
        cmul(_mm512_sub_pd(c1r, ui), _mm512_add_pd(c1i, ur), w2r, w2i),
    ]
}

/// Inverse stages h and 2h on the points (a, b, c, d) = (j, j + h, j + 2h, j + 3h) of a block, with
/// the conjugates of w1 = W_h[j] and w2 = W_{2h}[j]; the outputs replace the inputs. The twiddle
/// W_{2h}[j + h] = −i·W_{2h}[j] is a swap.
#[inline]
#[target_feature(enable = "avx512f")]
fn dit4(x: [C; 4], (w1r, w1i): C, (w2r, w2i): C) -> [C; 4] {
    let [(ar, ai), b, (cr, ci), d] = x;
    // Stage h: (a, b) and (c, d) with conj W_h[j].
    let (br, bi) = cmul_conj(b.0, b.1, w1r, w1i);
    let (dr, di) = cmul_conj(d.0, d.1, w1r, w1i);
    let (a1r, a1i) = (_mm512_add_pd(ar, br), _mm512_add_pd(ai, bi));
    let (b1r, b1i) = (_mm512_sub_pd(ar, br), _mm512_sub_pd(ai, bi));
    let (c1r, c1i) = (_mm512_add_pd(cr, dr), _mm512_add_pd(ci, di));
    let (d1r, d1i) = (_mm512_sub_pd(cr, dr), _mm512_sub_pd(ci, di));
    // Stage 2h: (a1, c1) with conj W_2h[j]; (b1, d1) with conj W_2h[j + h] = i·conj W_2h[j].
    let (tr, ti) = cmul_conj(c1r, c1i, w2r, w2i);
    let (ur, ui) = cmul_conj(d1r, d1i, w2r, w2i);
    [
        (_mm512_add_pd(a1r, tr), _mm512_add_pd(a1i, ti)),
        // b1 ± i·u, i·u = (−u.im, u.re).
        (_mm512_sub_pd(b1r, ui), _mm512_add_pd(b1i, ur)),
        (_mm512_sub_pd(a1r, tr), _mm512_sub_pd(a1i, ti)),
        (_mm512_add_pd(b1r, ui), _mm512_sub_pd(b1i, ur)),
    ]
}

/// Forward stage 4q of a block of 8q points x_t = j + t·q (t < 8) held in registers, on the pair
/// (x_t, x_{t+4}) = (a, b): (a + b, (a − b)·W_4q[j + t·q]). The block's other stages are [`dif8_rest`]
/// (the two together are one radix-8 DIF; the pairs go one at a time so that few values are live).
///
/// # Safety
/// j + 8 ≤ q, t < 4; the stage tables hold ≥ 8q doubles each.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn dif8_pair(
    a: C,
    b: C,
    w: (*const f64, *const f64),
    j: usize,
    q: usize,
    t: usize,
) -> (C, C) {
    // SAFETY: the table read at 4q + j + t·q + 8 ≤ 8q.
    let (wr, wi) = unsafe { ldc(w.0, w.1, 4 * q + j + t * q) };
    (
        (_mm512_add_pd(a.0, b.0), _mm512_add_pd(a.1, b.1)),
        cmul(_mm512_sub_pd(a.0, b.0), _mm512_sub_pd(a.1, b.1), wr, wi),
    )
}

/// Forward stages 2q and q of a block of 8q points after [`dif8_pair`]: [`dif4`] on each half
/// (`lo` = x_0..x_3, `hi` = x_4..x_7); the outputs in the places of x_0..x_7.
///
/// # Safety
/// j + 8 ≤ q; the stage tables hold ≥ 4q doubles each.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn dif8_rest(
    lo: [C; 4],
    hi: [C; 4],
    w: (*const f64, *const f64),
    j: usize,
    q: usize,
) -> [C; 8] {
    // SAFETY: table reads at 2q + j + 8 ≤ 4q.
    let (w1, w2) = unsafe { (ldc(w.0, w.1, 2 * q + j), ldc(w.0, w.1, q + j)) };
    let [a, b, c, d] = dif4(lo, w1, w2);
    let [e, f, g, h] = dif4(hi, w1, w2);
    [a, b, c, d, e, f, g, h]
}

/// Inverse stages q, 2q and 4q on the points x_t = j + t·q (t < 8) of a block of 8q (the mirror of
/// [`dif8_pair`] and [`dif8_rest`]): [`dit4`] on each half, then stage 4q pairs (x_t, x_{t+4}) with
/// conj W_4q[j + t·q].
///
/// # Safety
/// j + 8 ≤ q; the stage tables hold ≥ 8q doubles each.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn dit8(x: [C; 8], w: (*const f64, *const f64), j: usize, q: usize) -> [C; 8] {
    // SAFETY: table reads at ≤ 4q + j + 3q + 8 ≤ 8q.
    unsafe {
        let (w1, w2) = (ldc(w.0, w.1, q + j), ldc(w.0, w.1, 2 * q + j));
        let [a, b, c, d] = dit4([x[0], x[1], x[2], x[3]], w1, w2);
        let [e, f, g, h] = dit4([x[4], x[5], x[6], x[7]], w1, w2);
        let mut y = [a, b, c, d, e, f, g, h];
        for t in 0..4 {
            let (wr, wi) = ldc(w.0, w.1, 4 * q + j + t * q);
            let (vr, vi) = cmul_conj(y[t + 4].0, y[t + 4].1, wr, wi);
            let a = y[t];
            y[t] = (_mm512_add_pd(a.0, vr), _mm512_add_pd(a.1, vi));
            y[t + 4] = (_mm512_sub_pd(a.0, vr), _mm512_sub_pd(a.1, vi));
        }
        y
    }
}

/// Constants of the in-register stages h = 4, 2, 1 (shared by both directions).
struct Small {
    /// [1, 1, 1, 1, −1, −1, −1, −1]: lanes 0–3 get lo + hi, lanes 4–7 lo − hi (h = 4).
    sign4: __m512d,
    /// [1, 1, −1, −1, …] (h = 2).
    sign2: __m512d,
    /// [1, −1, …] (h = 1).
    sign1: __m512d,
    /// Twiddles of the h = 4 stage on lanes 4–7 (W_4[0..4]), 1 on lanes 0–3.
    w4r: __m512d,
    w4i: __m512d,
}

impl Small {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(twr: &[f64], twi: &[f64]) -> Small {
        Small {
            sign4: _mm512_set_pd(-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0),
            sign2: _mm512_set_pd(-1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0),
            sign1: _mm512_set_pd(-1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0),
            w4r: _mm512_set_pd(twr[7], twr[6], twr[5], twr[4], 1.0, 1.0, 1.0, 1.0),
            w4i: _mm512_set_pd(twi[7], twi[6], twi[5], twi[4], 0.0, 0.0, 0.0, 0.0),
        }
    }

    /// Forward stages h = 4, 2, 1 inside one vector of 8 points.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn dif8(&self, r: __m512d, i: __m512d) -> (__m512d, __m512d) {
        // h = 4: [lo + hi | lo − hi], then lanes 4–7 times W_4[j].
        let r4 = _mm512_fmadd_pd(r, self.sign4, _mm512_shuffle_f64x2::<0x4E>(r, r));
        let i4 = _mm512_fmadd_pd(i, self.sign4, _mm512_shuffle_f64x2::<0x4E>(i, i));
        let (r4, i4) = cmul(r4, i4, self.w4r, self.w4i);
        // h = 2 in each 256-bit half, then lanes 3 and 7 times −i: (re, im) ← (im, −re).
        let r2 = _mm512_fmadd_pd(r4, self.sign2, _mm512_shuffle_f64x2::<0xB1>(r4, r4));
        let i2 = _mm512_fmadd_pd(i4, self.sign2, _mm512_shuffle_f64x2::<0xB1>(i4, i4));
        let rf = _mm512_mask_mov_pd(r2, 0x88, i2);
        let if_ = _mm512_mask_sub_pd(i2, 0x88, _mm512_setzero_pd(), r2);
        // h = 1 (twiddle 1).
        let r1 = _mm512_fmadd_pd(rf, self.sign1, _mm512_permute_pd::<0x55>(rf));
        let i1 = _mm512_fmadd_pd(if_, self.sign1, _mm512_permute_pd::<0x55>(if_));
        (r1, i1)
    }

    /// Inverse stages h = 1, 2, 4 inside one vector of 8 points (conjugate twiddles).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn dit8(&self, r: __m512d, i: __m512d) -> (__m512d, __m512d) {
        let r1 = _mm512_fmadd_pd(r, self.sign1, _mm512_permute_pd::<0x55>(r));
        let i1 = _mm512_fmadd_pd(i, self.sign1, _mm512_permute_pd::<0x55>(i));
        // Lanes 3 and 7 times conj(−i) = i: (re, im) ← (−im, re).
        let rf = _mm512_mask_sub_pd(r1, 0x88, _mm512_setzero_pd(), i1);
        let if_ = _mm512_mask_mov_pd(i1, 0x88, r1);
        let r2 = _mm512_fmadd_pd(rf, self.sign2, _mm512_shuffle_f64x2::<0xB1>(rf, rf));
        let i2 = _mm512_fmadd_pd(if_, self.sign2, _mm512_shuffle_f64x2::<0xB1>(if_, if_));
        let (r2, i2) = cmul_conj(r2, i2, self.w4r, self.w4i);
        let r4 = _mm512_fmadd_pd(r2, self.sign4, _mm512_shuffle_f64x2::<0x4E>(r2, r2));
        let i4 = _mm512_fmadd_pd(i2, self.sign4, _mm512_shuffle_f64x2::<0x4E>(i2, i2));
        (r4, i4)
    }
}

/// A read-ahead stream prefetched into L2 a few lines per loop iteration of a transform, so that data the
/// caller needs next (a TRGSW's Fourier key, streamed from DRAM by `mul_acc_rows`) arrives while the
/// transform computes, rather than in one burst of prefetches (which was measured to be slower). The
/// blind rotation streams the next step's key over all of a step's transforms, forward and inverse
/// (`TrgswFft::rotate_step_fused`); measured on AMD Zen 4 (in-process A/B, load 7–9): −4% CPU time per
/// NAND against this step's key over the forward transforms only, no gain from two steps ahead, the
/// T0 or NTA hints worse (+18%, +20%), T2 the same as T1, and no prefetch at all +30%.
pub(crate) struct Ahead {
    next: *const f64,
    end: *const f64,
    per_step: usize,
}

impl Ahead {
    /// Nothing to prefetch.
    pub(crate) fn none() -> Ahead {
        Ahead {
            next: std::ptr::null(),
            end: std::ptr::null(),
            per_step: 0,
        }
    }

    /// Prefetch `data` over about `steps` calls of [`Ahead::step`].
    pub(crate) fn new(data: &[f64], steps: usize) -> Ahead {
        let lines = data.len().div_ceil(8);
        Ahead {
            next: data.as_ptr(),
            end: data.as_ptr().wrapping_add(data.len()),
            per_step: lines.div_ceil(steps.max(1)),
        }
    }

    /// Prefetches the next few 64-byte lines (pointer comparisons and prefetches only: nothing is read).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn step(&mut self) {
        for _ in 0..self.per_step {
            if self.next >= self.end {
                return;
            }
            _mm_prefetch::<_MM_HINT_T1>(self.next as *const i8);
            self.next = self.next.wrapping_add(8);
        }
    }
}

/// Forward transform (twist + DIF), bit-reversed output.
///
/// # Safety
/// The CPU must support AVX-512F; m = re.len() must be a power of two ≥ 16 and `im` and the plan's tables
/// must have length m (they do for a plan of degree 2m).
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn forward(p: &FftPlan, re: &mut [f64], im: &mut [f64], ahead: &mut Ahead) {
    let m = re.len();
    assert!(m >= 16 && m.is_power_of_two() && im.len() == m);
    let (rp, ip) = (re.as_mut_ptr(), im.as_mut_ptr());
    let (tr, ti) = p.twist();
    let (twr, twi) = p.stage_tables();
    let (tr, ti, wr, wi) = (tr.as_ptr(), ti.as_ptr(), twr.as_ptr(), twi.as_ptr());
    // SAFETY: all pointer accesses below: every vector access covers indices [k, k + 8) with k + 8 ≤ m,
    // the length of re, im and the twist tables; stage-table accesses are at h + j + 8 ≤ 2h ≤ m.
    unsafe {
        // Points per register block of the last stages (64 = 8 vector pairs fit the 32 registers).
        let tail: usize = if m >= 64 { 64 } else { 16 };
        // Number of stages before it (h = m/2, …, tail), two per radix-4 pass.
        let outer = m.trailing_zeros() - tail.trailing_zeros();
        let mut h = m / 2;
        if outer == 0 {
            let mut j = 0;
            while j < m {
                let (r, i) = cmul(ld(rp, j), ld(ip, j), ld(tr, j), ld(ti, j));
                st(rp, j, r);
                st(ip, j, i);
                j += 8;
            }
        } else if outer == 1 {
            // Radix-2 stage h = m/2 fused with the twist.
            let mut j = 0;
            while j < h {
                let (ur, ui) = cmul(ld(rp, j), ld(ip, j), ld(tr, j), ld(ti, j));
                let (vr, vi) = cmul(ld(rp, j + h), ld(ip, j + h), ld(tr, j + h), ld(ti, j + h));
                st(rp, j, _mm512_add_pd(ur, vr));
                st(ip, j, _mm512_add_pd(ui, vi));
                let (dr, di) = (_mm512_sub_pd(ur, vr), _mm512_sub_pd(ui, vi));
                let (r, i) = cmul(dr, di, ld(wr, h + j), ld(wi, h + j));
                st(rp, j + h, r);
                st(ip, j + h, i);
                ahead.step();
                j += 8;
            }
            h /= 2;
        } else if outer % 2 == 1 {
            radix8_dif_twist(rp, ip, m, (tr, ti), (wr, wi), ahead);
            h /= 8;
        } else if outer >= 4 {
            radix16_dif_twist(rp, ip, m, (tr, ti), (wr, wi), ahead);
            h /= 16;
        } else {
            radix4_dif::<true>(rp, ip, m, h, (tr, ti), (wr, wi), ahead);
            h /= 4;
        }
        forward_rest(p, rp, ip, m, h, ahead);
    }
}

/// The forward stages after the first pass: radix-4 passes from half-size `h` down to the register
/// tail, then the tail (see [`forward`]).
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles (m = N/2 of the plan, ≥ 16); `h` is the half-size of the next
/// stage of [`forward`]'s schedule (so h/tail is a power of 4).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn forward_rest(
    p: &FftPlan,
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    h: usize,
    ahead: &mut Ahead,
) {
    let (tr, ti) = p.twist();
    let (twr, twi) = p.stage_tables();
    let (tr, ti, wr, wi) = (tr.as_ptr(), ti.as_ptr(), twr.as_ptr(), twi.as_ptr());
    let tail: usize = if m >= 64 { 64 } else { 16 };
    let mut h = h;
    // SAFETY: as in `forward` (the caller's contract).
    unsafe {
        while h >= tail {
            radix4_dif::<false>(rp, ip, m, h, (tr, ti), (wr, wi), ahead);
            h /= 4;
        }
        if tail == 64 {
            tail_dif::<8>(rp, ip, m, twr, twi, ahead);
        } else {
            tail_dif::<2>(rp, ip, m, twr, twi, ahead);
        }
    }
}

/// Whether [`rot_dec_forward`] handles a plan of degree `n` with `levels` gadget levels: the first
/// forward pass must be the radix-8 one fused with the twist (an odd number ≥ 3 of stages above the
/// 64-point register tail, e.g. N = 1024), and at most 8 levels.
pub(crate) fn rot_dec_forward_fits(n: usize, levels: usize) -> bool {
    let m = n / 2;
    m >= 512
        && m.is_power_of_two()
        && (m.trailing_zeros() - 6) % 2 == 1
        && (1..=8).contains(&levels)
}

/// Words idx, …, idx + 7 (mod 2N) of (src, −src) for a block that straddles the wrap (at most two
/// blocks per polynomial), word by word. Kept out of line: inlined, its loop made
/// [`rot_minus8`] too big to inline, and the call then spilled every vector register of
/// [`rot_dec_forward`]'s loop (the SysV ABI preserves none).
#[cold]
#[inline(never)]
fn rot_straddle8(src: &[u32], idx: usize) -> [u32; 8] {
    let n = src.len();
    let wrap = 2 * n - 1;
    let mut w = [0u32; 8];
    for (t, x) in w.iter_mut().enumerate() {
        let id = (idx + t) & wrap;
        *x = if id < n {
            src[id]
        } else {
            src[id - n].wrapping_neg()
        };
    }
    w
}

/// Eight words of t = X^k·src − minus from coefficient `c` on (negacyclic, k in [0, 2N); no
/// subtraction where `minus` is None): X^k·src − src for a blind-rotation step, when1 − when0 (k = 0)
/// for a CMUX.
///
/// # Safety
/// AVX-512F (for the AVX2 instructions used here too); `c + 8 ≤ n = src.len()`, n a power of two ≥ 8;
/// k < 2n; `minus`, if any, n long.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn rot_minus8(src: &[u32], k: usize, minus: Option<&[u32]>, c: usize) -> __m256i {
    let n = src.len();
    let wrap = 2 * n - 1;
    // Coefficient c of X^k·src is src[idx] for idx = c − k mod 2N below N, −src[idx − N] above
    // (N a power of two: the mask is the reduction mod 2N).
    let idx = (c + 2 * n - k) & wrap;
    let (base, neg) = if idx < n {
        (idx, false)
    } else {
        (idx - n, true)
    };
    // SAFETY: base + 8 ≤ n in the first branch; c + 8 ≤ n = minus.len() by the caller's contract.
    unsafe {
        let rot = if base + 8 <= n {
            let v = _mm256_loadu_si256(src.as_ptr().add(base) as *const __m256i);
            if neg {
                _mm256_sub_epi32(_mm256_setzero_si256(), v)
            } else {
                v
            }
        } else {
            let w = rot_straddle8(src, idx);
            _mm256_loadu_si256(w.as_ptr() as *const __m256i)
        };
        match minus {
            Some(x) => {
                _mm256_sub_epi32(rot, _mm256_loadu_si256(x.as_ptr().add(c) as *const __m256i))
            }
            None => rot,
        }
    }
}

/// The digit extraction's per-word part (see `Gadget::decompose_poly_core`): p = x & 1 and
/// v = x + off − p·step, for eight words.
#[inline]
#[target_feature(enable = "avx512f")]
fn digit_prep(x: __m256i, off: __m256i, step: __m256i) -> (__m256i, __m256i) {
    let p = _mm256_and_si256(x, _mm256_set1_epi32(1));
    let ps = _mm256_and_si256(_mm256_sub_epi32(_mm256_setzero_si256(), p), step);
    (_mm256_sub_epi32(_mm256_add_epi32(x, off), ps), p)
}

/// One level's digits of eight prepared words, as f64: ((v >> shift) & mask) − Bg/2 + p.
#[inline]
#[target_feature(enable = "avx512f")]
fn digit_f64((v, p): (__m256i, __m256i), shift: __m128i, mask: __m256i, half: __m256i) -> __m512d {
    let d = _mm256_and_si256(_mm256_srl_epi32(v, shift), mask);
    _mm512_cvtepi32_pd(_mm256_add_epi32(_mm256_sub_epi32(d, half), p))
}

/// An external product's input transforms, fused: t = X^k·src − minus (a blind-rotation step:
/// X^k·acc − acc; a CMUX: when1 − when0 with k = 0; a plain product: src, k = 0 and no `minus`), its
/// balanced gadget decomposition (the zero-mean digits of
/// [`crate::torus::Gadget::decompose_poly_f64`]) and the forward transforms of the `levels` digit
/// polynomials, written to `out[i·stride .. i·stride + N]` (split layout; stride ≥ N). The digits
/// never go through memory: the first forward pass (radix-8, fused with the twist) reads the sixteen
/// coefficient vectors j + t·N/16 (t < 16) it needs straight from t, prepared once for every level.
/// The same arithmetic in the same order as the unfused path, so the output is bit-identical to it
/// (tested in `trgsw::tests`). `ahead` is stepped once per level and loop iteration, as
/// [`crate::fft::FftPlan::forward_in_place_ahead`] does.
///
/// # Safety
/// AVX-512F; [`rot_dec_forward_fits`]`(src.len(), g.levels)`; src.len() = the plan's N = minus.len()
/// where given; stride ≥ N; out.len() ≥ (levels − 1)·stride + N; k < 2N.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn rot_dec_forward(
    p: &FftPlan,
    g: crate::torus::Gadget,
    src: &[u32],
    k: usize,
    minus: Option<&[u32]>,
    out: &mut [f64],
    stride: usize,
    ahead: &mut Ahead,
) {
    let n = src.len();
    let (m, l) = (n / 2, g.levels as usize);
    assert!(
        n == p.n()
            && rot_dec_forward_fits(n, l)
            && minus.is_none_or(|x| x.len() == n)
            && stride >= n
            && out.len() >= (l - 1) * stride + n
            && k < 2 * n,
        "rot_dec_forward: bad shape"
    );
    let q = m / 8;
    let (off, step, mask, half) = g.digit_constants_u32();
    let (tr, ti) = p.twist();
    let (twr, twi) = p.stage_tables();
    let (tr, ti, w) = (tr.as_ptr(), ti.as_ptr(), (twr.as_ptr(), twi.as_ptr()));
    let op = out.as_mut_ptr();
    let offv = _mm256_set1_epi32(off as i32);
    let stepv = _mm256_set1_epi32(step as i32);
    let maskv = _mm256_set1_epi32(mask as i32);
    let halfv = _mm256_set1_epi32(half);
    // SAFETY: j + 8 ≤ q and the coefficients j + t·q (+ m) + 8 ≤ n; out holds (l − 1)·stride + n
    // doubles, so level i's re/im halves [i·stride, i·stride + m) and [i·stride + m, i·stride + n)
    // are in bounds; twist and stage tables hold m = 8q entries and are read at j + t·q + 8 ≤ m
    // (dif8's reads likewise).
    unsafe {
        let mut j = 0;
        while j < q {
            // The block's 16 coefficient vectors, prepared once for every level: j + t·q (to the
            // real parts) and m + j + t·q (the fold: to the imaginary parts), t < 8.
            let mut xs = [(_mm256_setzero_si256(), _mm256_setzero_si256()); 16];
            for (t, x) in xs.iter_mut().enumerate() {
                let c = j + (t % 8) * q + (t / 8) * m;
                *x = digit_prep(rot_minus8(src, k, minus, c), offv, stepv);
            }
            for i in 0..l {
                let shift = _mm_cvtsi32_si128((32 - (i as u32 + 1) * g.base_bits) as i32);
                let digits = Digits {
                    shift,
                    mask: maskv,
                    half: halfv,
                };
                let (rp, ip) = (op.add(i * stride), op.add(i * stride + m));
                dec_block_dif8(&xs, digits, (tr, ti), w, (rp, ip), j, q);
                ahead.step();
            }
            j += 8;
        }
        for i in 0..l {
            forward_rest(
                p,
                op.add(i * stride),
                op.add(i * stride + m),
                m,
                m / 16,
                ahead,
            );
        }
    }
}

/// One level's digit extraction ([`digit_f64`]) of prepared words.
#[derive(Clone, Copy)]
struct Digits {
    shift: __m128i,
    mask: __m256i,
    half: __m256i,
}

/// One level of one block of [`rot_dec_forward`]: the digits of the 16 prepared coefficient vectors
/// `xs` (j + t·q to the real parts, m + j + t·q to the imaginary parts), twisted, through
/// [`dif8_pair`] and [`dif8_rest`], stored at j + t·q of (rp, ip), as `radix8_dif_twist` does it. Kept out of line: inlined
/// into the level loop, the 16 twist and 12 twiddle vectors (the same for every level) were hoisted
/// out of it and spilled, 28 stores per block (measured 5% slower per bootstrap on Zen 4).
///
/// # Safety
/// AVX-512F; j + 8 ≤ q; `t` and the stage tables `w` hold 8q doubles each, as do rp and ip.
#[inline(never)]
#[target_feature(enable = "avx512f")]
unsafe fn dec_block_dif8(
    xs: &[(__m256i, __m256i); 16],
    d: Digits,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    (rp, ip): (*mut f64, *mut f64),
    j: usize,
    q: usize,
) {
    // SAFETY: the caller's contract: every access at j + t·q + 8 ≤ 8q.
    unsafe {
        let zero = (_mm512_setzero_pd(), _mm512_setzero_pd());
        let (mut lo, mut hi) = ([zero; 4], [zero; 4]);
        for k in 0..4 {
            let (c, c4) = (j + k * q, j + (k + 4) * q);
            let a = cmul(
                digit_f64(xs[k], d.shift, d.mask, d.half),
                digit_f64(xs[8 + k], d.shift, d.mask, d.half),
                ld(t.0, c),
                ld(t.1, c),
            );
            let b = cmul(
                digit_f64(xs[k + 4], d.shift, d.mask, d.half),
                digit_f64(xs[12 + k], d.shift, d.mask, d.half),
                ld(t.0, c4),
                ld(t.1, c4),
            );
            (lo[k], hi[k]) = dif8_pair(a, b, w, j, q, k);
        }
        let y = dif8_rest(lo, hi, w, j, q);
        for (k, v) in y.into_iter().enumerate() {
            stc(rp, ip, j + k * q, v);
        }
    }
}

/// Whether [`rot_dec_forward_u64`] handles a plan of degree `n` with the gadget `g`: an even number
/// ≥ 2 of stages above the 64-point register tail (e.g. N = 512 or 2048), at most 8 levels, and
/// digits of fewer than 32 bits (as the portable decomposition takes them).
pub(crate) fn rot_dec_forward_u64_fits(n: usize, g: crate::torus::Gadget) -> bool {
    let m = n / 2;
    m >= 256
        && m.is_power_of_two()
        && (m.trailing_zeros() - 6).is_multiple_of(2)
        && (1..=8).contains(&g.levels)
        && (1..32).contains(&g.base_bits)
}

/// [`rot_straddle8`] for 64-bit words.
#[cold]
#[inline(never)]
fn rot_straddle8_u64(src: &[u64], idx: usize) -> [u64; 8] {
    let n = src.len();
    let wrap = 2 * n - 1;
    let mut w = [0u64; 8];
    for (t, x) in w.iter_mut().enumerate() {
        let id = (idx + t) & wrap;
        *x = if id < n {
            src[id]
        } else {
            src[id - n].wrapping_neg()
        };
    }
    w
}

/// [`rot_minus8`] for 64-bit words (minus = src): eight words of X^k·src − src from coefficient `c` on.
///
/// # Safety
/// AVX-512F; `c + 8 ≤ n = src.len()`, n a power of two ≥ 8; k < 2n.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn rot_minus_one8_u64(src: &[u64], k: usize, c: usize) -> __m512i {
    let n = src.len();
    let wrap = 2 * n - 1;
    let idx = (c + 2 * n - k) & wrap;
    let (base, neg) = if idx < n {
        (idx, false)
    } else {
        (idx - n, true)
    };
    // SAFETY: base + 8 ≤ n in the first branch; c + 8 ≤ n by the caller's contract.
    unsafe {
        let rot = if base + 8 <= n {
            let v = _mm512_loadu_si512(src.as_ptr().add(base) as *const __m512i);
            if neg {
                _mm512_sub_epi64(_mm512_setzero_si512(), v)
            } else {
                v
            }
        } else {
            let w = rot_straddle8_u64(src, idx);
            _mm512_loadu_si512(w.as_ptr() as *const __m512i)
        };
        _mm512_sub_epi64(
            rot,
            _mm512_loadu_si512(src.as_ptr().add(c) as *const __m512i),
        )
    }
}

/// The bit pattern of 1.5·2^52 ([`ROUND_MAGIC`]): this plus an integer i, |i| < 2^51, is the bit
/// pattern of the f64 1.5·2^52 + i.
const MAGIC_BITS: i64 = 0x4338_0000_0000_0000;

/// [`digit_prep`] for eight 64-bit words: v = x + off − p·step, p = x & 1, and the digits' offset
/// p − Bg/2 + [`MAGIC_BITS`] (as eight i64; `bias` = [`MAGIC_BITS`] − Bg/2).
#[inline]
#[target_feature(enable = "avx512f")]
fn digit_prep_u64(x: __m512i, off: __m512i, step: __m512i, bias: __m512i) -> (__m512i, __m512i) {
    let one = _mm512_set1_epi64(1);
    let odd = _mm512_test_epi64_mask(x, one);
    let xo = _mm512_add_epi64(x, off);
    (
        _mm512_mask_sub_epi64(xo, odd, xo, step),
        _mm512_mask_add_epi64(bias, odd, bias, one),
    )
}

/// One level's digits of eight prepared 64-bit words, as f64: ((v >> shift) & mask) − Bg/2 + p
/// (as `Gadget::decompose_poly_core` computes it; exact, |digit| ≤ Bg/2 < 2^31), converted by the
/// magic number: the integer added to the bit pattern of 1.5·2^52, then 1.5·2^52 subtracted — four
/// instructions, where narrowing to i32 and `vcvtdq2pd` took six (`vpmovqd` is two µops on Zen 4).
#[inline]
#[target_feature(enable = "avx512f")]
fn digit_f64_u64((v, pm): (__m512i, __m512i), shift: __m128i, mask: __m512i) -> __m512d {
    let d = _mm512_add_epi64(_mm512_and_si512(_mm512_srl_epi64(v, shift), mask), pm);
    _mm512_sub_pd(_mm512_castsi512_pd(d), _mm512_set1_pd(ROUND_MAGIC))
}

/// [`digit_f64_u64`] for the top level (shift = 64 − base bits): v >> shift has only base-bits
/// bits, so the mask is the identity and is left out (`_mask` unused); the same values.
#[inline]
#[target_feature(enable = "avx512f")]
fn digit_f64_u64_top((v, pm): (__m512i, __m512i), shift: __m128i, _mask: __m512i) -> __m512d {
    let d = _mm512_add_epi64(_mm512_srl_epi64(v, shift), pm);
    _mm512_sub_pd(_mm512_castsi512_pd(d), _mm512_set1_pd(ROUND_MAGIC))
}

/// [`rot_dec_forward`] on the 64-bit torus (the level-2 blind rotation's step): the rotation
/// t = X^k·src − src, its zero-mean gadget digits and the forward transforms of the `levels` digit
/// polynomials into `out[i·stride .. i·stride + N]`, the digits never going through memory: the
/// first forward pass (radix-4, fused with the twist) reads its eight coefficient vectors (j,
/// j + N/8, j + N/4, j + 3N/8 and the same + N/2) straight from the rotation, for every level at
/// once; then radix-4 passes and the register tail. (A radix-16 first pass here, as [`forward`]
/// has for N = 2048, was measured slower on Zen 4: the 16 vector pairs and the digit constants do
/// not fit the registers, and the block's values went through the stack.) The same arithmetic in
/// the same order as rotating, decomposing and transforming, so the output is bit-identical to
/// that (tested in `trgsw::tests::level2_step_matches_unfused`). `ahead` is stepped once per level
/// and loop iteration, as the unfused transforms step it.
///
/// # Safety
/// AVX-512F; [`rot_dec_forward_u64_fits`]`(src.len(), g)`; src.len() = the plan's N; stride ≥
/// N; out.len() ≥ (levels − 1)·stride + N; k < 2N.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn rot_dec_forward_u64(
    p: &FftPlan,
    g: crate::torus::Gadget,
    src: &[u64],
    k: usize,
    out: &mut [f64],
    stride: usize,
    ahead: &mut Ahead,
) {
    let n = src.len();
    let (m, l) = (n / 2, g.levels as usize);
    assert!(
        n == p.n()
            && rot_dec_forward_u64_fits(n, g)
            && stride >= n
            && out.len() >= (l - 1) * stride + n
            && k < 2 * n,
        "rot_dec_forward_u64: bad shape"
    );
    let (h, q) = (m / 2, m / 4);
    let (off, step, mask, half) = g.digit_constants_u64();
    let (tr, ti) = p.twist();
    let (twr, twi) = p.stage_tables();
    let (tr, ti, wr, wi) = (tr.as_ptr(), ti.as_ptr(), twr.as_ptr(), twi.as_ptr());
    let op = out.as_mut_ptr();
    let offv = _mm512_set1_epi64(off as i64);
    let stepv = _mm512_set1_epi64(step as i64);
    let maskv = _mm512_set1_epi64(mask as i64);
    let biasv = _mm512_set1_epi64(MAGIC_BITS - half as i64);
    // SAFETY: j + 8 ≤ q, so the coefficients j + {0, q, h, h + q} (+ m) + 8 ≤ n; out holds
    // (l − 1)·stride + n doubles, so level i's re/im halves [i·stride, i·stride + m) and
    // [i·stride + m, i·stride + n) are in bounds and the stores at j + {0, q, h, h + q} < m are
    // too; twist and stage tables hold m entries and are read at j + h + q + 8 ≤ m and
    // h + j + 8 ≤ m.
    unsafe {
        let mut j = 0;
        while j < q {
            let (ia, ib, ic, id) = (j, j + q, j + h, j + h + q);
            // re[x] = coefficient x, im[x] = coefficient x + m (the fold). (No closures here: they
            // would not inherit this function's target features, and calls spill every register.)
            let pa = digit_prep_u64(rot_minus_one8_u64(src, k, ia), offv, stepv, biasv);
            let pb = digit_prep_u64(rot_minus_one8_u64(src, k, ib), offv, stepv, biasv);
            let pc = digit_prep_u64(rot_minus_one8_u64(src, k, ic), offv, stepv, biasv);
            let pd = digit_prep_u64(rot_minus_one8_u64(src, k, id), offv, stepv, biasv);
            let qa = digit_prep_u64(rot_minus_one8_u64(src, k, ia + m), offv, stepv, biasv);
            let qb = digit_prep_u64(rot_minus_one8_u64(src, k, ib + m), offv, stepv, biasv);
            let qc = digit_prep_u64(rot_minus_one8_u64(src, k, ic + m), offv, stepv, biasv);
            let qd = digit_prep_u64(rot_minus_one8_u64(src, k, id + m), offv, stepv, biasv);
            for i in 0..l {
                let shift = _mm_cvtsi64_si128((64 - (i as u32 + 1) * g.base_bits) as i64);
                let (rp, ip) = (op.add(i * stride), op.add(i * stride + m));
                // The twist, then the radix-4 pass of half-size h, as `radix4_dif::<true>` does
                // it; the top level's digits without the mask (`digit_f64_u64_top`).
                macro_rules! level {
                    ($digit:ident) => {{
                        let (ar, ai) = cmul(
                            $digit(pa, shift, maskv),
                            $digit(qa, shift, maskv),
                            ld(tr, ia),
                            ld(ti, ia),
                        );
                        let (br, bi) = cmul(
                            $digit(pb, shift, maskv),
                            $digit(qb, shift, maskv),
                            ld(tr, ib),
                            ld(ti, ib),
                        );
                        let (cr, ci) = cmul(
                            $digit(pc, shift, maskv),
                            $digit(qc, shift, maskv),
                            ld(tr, ic),
                            ld(ti, ic),
                        );
                        let (dr, di) = cmul(
                            $digit(pd, shift, maskv),
                            $digit(qd, shift, maskv),
                            ld(tr, id),
                            ld(ti, id),
                        );
                        let y = dif4(
                            [(ar, ai), (br, bi), (cr, ci), (dr, di)],
                            ldc(wr, wi, h + j),
                            ldc(wr, wi, q + j),
                        );
                        for (v, x) in y.into_iter().zip([ia, ib, ic, id]) {
                            stc(rp, ip, x, v);
                        }
                    }};
                }
                if i == 0 {
                    level!(digit_f64_u64_top)
                } else {
                    level!(digit_f64_u64)
                }
                ahead.step();
            }
            j += 8;
        }
        for i in 0..l {
            forward_rest(
                p,
                op.add(i * stride),
                op.add(i * stride + m),
                m,
                m / 8,
                ahead,
            );
        }
    }
}

/// The last stages of the forward transform on blocks of 8·V points held in registers (V = 2: h = 8, 4,
/// 2, 1; V = 8: h = 32, 16, 8, 4, 2, 1): stages with h ≥ 8 pair whole vectors, the rest run inside each
/// vector ([`Small::dif8`]).
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles, m a multiple of 8·V; the stage tables hold ≥ 8·V entries.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn tail_dif<const V: usize>(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    twr: &[f64],
    twi: &[f64],
    ahead: &mut Ahead,
) {
    let small = Small::new(twr, twi);
    let (wr, wi) = (twr.as_ptr(), twi.as_ptr());
    // SAFETY: blocks [s, s + 8V) with s + 8V ≤ m; stage-table reads at 8hv + 8k + 8 ≤ 16hv ≤ 8V.
    unsafe {
        let mut s = 0;
        while s < m {
            let mut r = [_mm512_setzero_pd(); V];
            let mut i = [_mm512_setzero_pd(); V];
            for k in 0..V {
                r[k] = ld(rp, s + 8 * k);
                i[k] = ld(ip, s + 8 * k);
            }
            let mut hv = V / 2;
            while hv >= 1 {
                let mut base = 0;
                while base < V {
                    for k in 0..hv {
                        let (a, b) = (base + k, base + k + hv);
                        let (dr, di) = (_mm512_sub_pd(r[a], r[b]), _mm512_sub_pd(i[a], i[b]));
                        r[a] = _mm512_add_pd(r[a], r[b]);
                        i[a] = _mm512_add_pd(i[a], i[b]);
                        let t = 8 * hv + 8 * k;
                        (r[b], i[b]) = cmul(dr, di, ld(wr, t), ld(wi, t));
                    }
                    base += 2 * hv;
                }
                hv /= 2;
            }
            for k in 0..V {
                let (a, b) = small.dif8(r[k], i[k]);
                st(rp, s + 8 * k, a);
                st(ip, s + 8 * k, b);
            }
            ahead.step();
            s += 8 * V;
        }
    }
}

/// The first stages of the inverse transform on blocks of 8·V points (mirror of [`tail_dif`]).
///
/// # Safety
/// As [`tail_dif`].
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn head_dit<const V: usize>(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    twr: &[f64],
    twi: &[f64],
    ahead: &mut Ahead,
) {
    let small = Small::new(twr, twi);
    let (wr, wi) = (twr.as_ptr(), twi.as_ptr());
    // SAFETY: as in tail_dif.
    unsafe {
        let mut s = 0;
        while s < m {
            let mut r = [_mm512_setzero_pd(); V];
            let mut i = [_mm512_setzero_pd(); V];
            for k in 0..V {
                (r[k], i[k]) = small.dit8(ld(rp, s + 8 * k), ld(ip, s + 8 * k));
            }
            let mut hv = 1;
            while hv < V {
                let mut base = 0;
                while base < V {
                    for k in 0..hv {
                        let (a, b) = (base + k, base + k + hv);
                        let t = 8 * hv + 8 * k;
                        let (vr, vi) = cmul_conj(r[b], i[b], ld(wr, t), ld(wi, t));
                        r[b] = _mm512_sub_pd(r[a], vr);
                        i[b] = _mm512_sub_pd(i[a], vi);
                        r[a] = _mm512_add_pd(r[a], vr);
                        i[a] = _mm512_add_pd(i[a], vi);
                    }
                    base += 2 * hv;
                }
                hv *= 2;
            }
            for k in 0..V {
                st(rp, s + 8 * k, r[k]);
                st(ip, s + 8 * k, i[k]);
            }
            ahead.step();
            s += 8 * V;
        }
    }
}

/// Forward stages h and h/2 (h ≥ 16) in one pass; with `TWIST` (only when h = m/2) the inputs are first
/// multiplied by the twist table `t`.
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles, `t` to m doubles each, `w` to the stage tables (≥ 2h entries).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn radix4_dif<const TWIST: bool>(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    h: usize,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    ahead: &mut Ahead,
) {
    let q = h / 2;
    // SAFETY: indices s + j + 3q + 8 ≤ s + 2h ≤ m; stage tables at h + j + 8 ≤ 2h and q + j + 8 ≤ h.
    unsafe {
        let mut s = 0;
        while s < m {
            let mut j = 0;
            while j < q {
                let idx = [s + j, s + j + q, s + j + h, s + j + h + q];
                let mut x = [(_mm512_setzero_pd(), _mm512_setzero_pd()); 4];
                for (v, &i) in x.iter_mut().zip(&idx) {
                    *v = ldc(rp, ip, i);
                    if TWIST {
                        *v = cmul(v.0, v.1, ld(t.0, i), ld(t.1, i));
                    }
                }
                let y = dif4(x, ldc(w.0, w.1, h + j), ldc(w.0, w.1, q + j));
                for (v, i) in y.into_iter().zip(idx) {
                    stc(rp, ip, i, v);
                }
                ahead.step();
                j += 8;
            }
            s += 2 * h;
        }
    }
}

/// First level of a radix-16 forward block ([`dif16_hi`] is the second): the points x_t = j + t·q
/// (t < 16) of a block of 16q, stages 8q and 4q on (x_u, x_{u+4}, x_{u+8}, x_{u+12}) ([`dif4`] with
/// W_8q[j + u·q] and W_4q[j + u·q]), as the radix-4 pass of half-size 8q does them.
///
/// # Safety
/// AVX-512F; u < 4, j + 8 ≤ q; the stage tables `w` hold ≥ 16q doubles each.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn dif16_lo(x: &mut [C; 16], u: usize, w: (*const f64, *const f64), j: usize, q: usize) {
    // SAFETY: table reads at 8q + j + u·q + 8 ≤ 12q and 4q + j + u·q + 8 ≤ 8q (the caller's contract).
    let (w1, w2) = unsafe {
        (
            ldc(w.0, w.1, 8 * q + j + u * q),
            ldc(w.0, w.1, 4 * q + j + u * q),
        )
    };
    let y = dif4([x[u], x[u + 4], x[u + 8], x[u + 12]], w1, w2);
    (x[u], x[u + 4], x[u + 8], x[u + 12]) = (y[0], y[1], y[2], y[3]);
}

/// Second level of a radix-16 forward block (after [`dif16_lo`] for u = 0..4): stages 2q and q on
/// (x_4v, …, x_{4v+3}) ([`dif4`] with W_2q[j] and W_q[j]), as the radix-4 pass of half-size 2q
/// does them. The two levels are the arithmetic of two radix-4 passes in the same order, so the
/// values are bit for bit those passes' values.
///
/// # Safety
/// AVX-512F; j + 8 ≤ q; the stage tables `w` hold ≥ 4q doubles each.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn dif16_hi(x: &mut [C; 16], w: (*const f64, *const f64), j: usize, q: usize) {
    // SAFETY: table reads at 2q + j + 8 ≤ 3q and q + j + 8 ≤ 2q (the caller's contract).
    let (w1, w2) = unsafe { (ldc(w.0, w.1, 2 * q + j), ldc(w.0, w.1, q + j)) };
    for v in 0..4 {
        let y = dif4([x[4 * v], x[4 * v + 1], x[4 * v + 2], x[4 * v + 3]], w1, w2);
        x[4 * v..4 * v + 4].copy_from_slice(&y);
    }
}

/// Forward stages m/2, m/4, m/8 and m/16 in one pass (blocks of 16 vectors m/16 apart through
/// [`dif16_lo`] and [`dif16_hi`]), fused with the twist: the two radix-4 passes of half-size m/2
/// and m/8 with one load and one store of each point instead of two (N = 2048: the pass before the
/// register tail). The 16 complex vectors take all 32 registers, so a few live values spill: still
/// half the loads and stores of two passes.
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles (m a multiple of 128), `t` to m doubles each, `w` to the
/// stage tables (m entries).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn radix16_dif_twist(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    ahead: &mut Ahead,
) {
    let q = m / 16;
    // SAFETY: points j + k·q + 8 ≤ 16q = m; the stage tables hold m = 16q entries.
    unsafe {
        let mut j = 0;
        while j < q {
            let mut x = [(_mm512_setzero_pd(), _mm512_setzero_pd()); 16];
            for u in 0..4 {
                for r in 0..4 {
                    let i = j + (u + 4 * r) * q;
                    x[u + 4 * r] = cmul(ld(rp, i), ld(ip, i), ld(t.0, i), ld(t.1, i));
                }
                dif16_lo(&mut x, u, w, j, q);
            }
            dif16_hi(&mut x, w, j, q);
            for (k, v) in x.into_iter().enumerate() {
                stc(rp, ip, j + k * q, v);
            }
            // As many steps as the two radix-4 passes over the same points take
            // (`FftPlan::ahead_steps` counts the stages, not the passes).
            for _ in 0..8 {
                ahead.step();
            }
            j += 8;
        }
    }
}

/// Inverse stages m/16, m/8, m/4 and m/2 in one pass (the mirror of [`radix16_dif_twist`]: the two
/// radix-4 passes of half-size m/16 and m/4, the same arithmetic in the same order), fused with the
/// untwist; the values go to `out`.
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles (m a multiple of 128), `t` to m doubles each, `w` to the
/// stage tables (m entries); `out` takes points i + 8 ≤ m.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn radix16_dit_untwist<S: Sink>(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    out: &mut S,
    ahead: &mut Ahead,
) {
    let q = m / 16;
    // SAFETY: points j + k·q + 8 ≤ 16q = m; stage-table reads at q + j + 8 ≤ 2q, 2q + j + 8 ≤ 3q,
    // 4q + j + u·q + 8 ≤ 8q and 8q + j + u·q + 8 ≤ 12q (u < 4), all < m = 16q.
    unsafe {
        let mut j = 0;
        while j < q {
            let mut x = [(_mm512_setzero_pd(), _mm512_setzero_pd()); 16];
            let (w1, w2) = (ldc(w.0, w.1, q + j), ldc(w.0, w.1, 2 * q + j));
            for v in 0..4 {
                let mut y = [(_mm512_setzero_pd(), _mm512_setzero_pd()); 4];
                for (r, yr) in y.iter_mut().enumerate() {
                    *yr = ldc(rp, ip, j + (4 * v + r) * q);
                }
                x[4 * v..4 * v + 4].copy_from_slice(&dit4(y, w1, w2));
            }
            for u in 0..4 {
                let y = dit4(
                    [x[u], x[u + 4], x[u + 8], x[u + 12]],
                    ldc(w.0, w.1, 4 * q + j + u * q),
                    ldc(w.0, w.1, 8 * q + j + u * q),
                );
                for (r, v) in y.into_iter().enumerate() {
                    let i = j + (u + 4 * r) * q;
                    out.put(i, cmul(v.0, v.1, ld(t.0, i), ld(t.1, i)));
                }
            }
            // As many steps as the two radix-4 passes over the same points take
            // (`FftPlan::ahead_steps` counts the stages, not the passes).
            for _ in 0..8 {
                ahead.step();
            }
            j += 8;
        }
    }
}

/// Inverse transform (DIT + untwist and 1/(N/2) scaling), bit-reversed input.
///
/// # Safety
/// As [`forward`].
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn backward(p: &FftPlan, re: &mut [f64], im: &mut [f64], ahead: &mut Ahead) {
    let (rp, ip) = (re.as_mut_ptr(), im.as_mut_ptr());
    // SAFETY: the caller's contract; InPlace writes where the last pass read.
    unsafe { backward_to(p, re, im, &mut InPlace { rp, ip }, ahead) }
}

/// out[i] += x_i rounded to an integer mod 2^32 (W = u32) or 2^64 (W = u64) for the N coefficients x
/// of the inverse transform of (re, im) (x_i for i < m in the real parts, x_{m + i} in the imaginary
/// parts): [`backward`] then [`add_rounded_u32`] or [`add_rounded_u64`], the same values bit for bit,
/// with the add done by the last pass as it untwists (no pass over the result of its own). (re, im)
/// are left holding the values before that pass.
///
/// # Safety
/// As [`forward`]; out.len() = 2·re.len().
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn backward_add<W>(
    p: &FftPlan,
    re: &mut [f64],
    im: &mut [f64],
    out: &mut [W],
    ahead: &mut Ahead,
) where
    AddRounded<W>: Sink,
{
    assert_eq!(out.len(), 2 * re.len());
    let mut sink = AddRounded {
        out: out.as_mut_ptr(),
        m: re.len(),
    };
    // SAFETY: the caller's contract; out holds 2m words.
    unsafe { backward_to(p, re, im, &mut sink, ahead) }
}

/// Where the last inverse pass puts its untwisted values.
pub(crate) trait Sink {
    /// Takes the values of points i .. i + 8.
    ///
    /// # Safety
    /// AVX-512F; i + 8 ≤ m, the transform's number of points.
    unsafe fn put(&mut self, i: usize, v: C);
}

/// Back into the transform's arrays.
struct InPlace {
    rp: *mut f64,
    ip: *mut f64,
}

impl Sink for InPlace {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn put(&mut self, i: usize, v: C) {
        // SAFETY: rp and ip point to m doubles each, i + 8 ≤ m.
        unsafe { stc(self.rp, self.ip, i, v) }
    }
}

/// Rounded and added to 2m torus words (real parts to words i, imaginary parts to words m + i).
pub(crate) struct AddRounded<W> {
    out: *mut W,
    m: usize,
}

impl Sink for AddRounded<u32> {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn put(&mut self, i: usize, v: C) {
        // SAFETY: out holds 2m words, i + 8 ≤ m.
        unsafe {
            add_round8_u32(self.out.add(i), v.0);
            add_round8_u32(self.out.add(self.m + i), v.1);
        }
    }
}

impl Sink for AddRounded<u64> {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn put(&mut self, i: usize, v: C) {
        // SAFETY: out holds 2m words, i + 8 ≤ m.
        unsafe {
            add_round8_u64(self.out.add(i), v.0);
            add_round8_u64(self.out.add(self.m + i), v.1);
        }
    }
}

/// The inverse transform, its last pass (fused with the untwist) handing its values to `out`: the
/// register-block pass first, then radix-4 passes, and last a radix-16 pass (four stages left, e.g.
/// N = 2048), a radix-8 one (three, e.g. N = 1024), a radix-4 one (two) or a radix-2 one (one).
///
/// # Safety
/// As [`forward`]; `out` takes points i + 8 ≤ m.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn backward_to<S: Sink>(
    p: &FftPlan,
    re: &mut [f64],
    im: &mut [f64],
    out: &mut S,
    ahead: &mut Ahead,
) {
    let m = re.len();
    assert!(m >= 16 && m.is_power_of_two() && im.len() == m);
    let (rp, ip) = (re.as_mut_ptr(), im.as_mut_ptr());
    let (ut_r, ut_i) = p.untwist();
    let (twr, twi) = p.stage_tables();
    let (ut, w) = ((ut_r.as_ptr(), ut_i.as_ptr()), (twr.as_ptr(), twi.as_ptr()));
    // SAFETY: all pointer accesses below: as in `forward`, every access is within [0, m) for the data and
    // untwist tables and within [h, 2h) ⊂ [0, m) for the stage tables; `out` takes points i + 8 ≤ m.
    unsafe {
        let tail: usize = if m >= 64 { 64 } else { 16 };
        if tail == 64 {
            head_dit::<8>(rp, ip, m, twr, twi, ahead);
        } else {
            head_dit::<2>(rp, ip, m, twr, twi, ahead);
        }
        // Stages with h ≥ tail, two per radix-4 pass, the last three in one radix-8 pass or the last
        // four in one radix-16 pass.
        let mut h = tail;
        let mut left = m.trailing_zeros() - tail.trailing_zeros();
        while left > 4 {
            radix4_dit::<false, S>(rp, ip, m, h, ut, w, out, ahead);
            h *= 4;
            left -= 2;
        }
        match left {
            4 => radix16_dit_untwist(rp, ip, m, ut, w, out, ahead),
            3 => radix8_dit_untwist(rp, ip, m, ut, w, out, ahead),
            2 => radix4_dit::<true, S>(rp, ip, m, h, ut, w, out, ahead),
            1 => {
                // Radix-2 stage h = m/2 fused with the untwist.
                debug_assert_eq!(h, m / 2);
                let mut j = 0;
                while j < h {
                    let (vr, vi) =
                        cmul_conj(ld(rp, j + h), ld(ip, j + h), ld(w.0, h + j), ld(w.1, h + j));
                    let (xr, xi) = (ld(rp, j), ld(ip, j));
                    let (ar, ai) = (_mm512_add_pd(xr, vr), _mm512_add_pd(xi, vi));
                    let (br, bi) = (_mm512_sub_pd(xr, vr), _mm512_sub_pd(xi, vi));
                    out.put(j, cmul(ar, ai, ld(ut.0, j), ld(ut.1, j)));
                    out.put(j + h, cmul(br, bi, ld(ut.0, j + h), ld(ut.1, j + h)));
                    ahead.step();
                    j += 8;
                }
            }
            _ => {
                let mut j = 0;
                while j < m {
                    out.put(j, cmul(ld(rp, j), ld(ip, j), ld(ut.0, j), ld(ut.1, j)));
                    j += 8;
                }
            }
        }
    }
}

/// Inverse stages m/8, m/4 and m/2 in one pass ([`dit8`] on blocks of 8 vectors m/8 apart), fused
/// with the untwist; the values go to `out`.
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles (m a multiple of 64), `t` to m doubles each, `w` to the stage
/// tables (m entries); `out` takes points i + 8 ≤ m.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn radix8_dit_untwist<S: Sink>(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    out: &mut S,
    ahead: &mut Ahead,
) {
    let q = m / 8;
    // SAFETY: points j + k·q + 8 ≤ 8q = m; the stage tables hold m = 8q entries.
    unsafe {
        let mut j = 0;
        while j < q {
            let mut x = [(_mm512_setzero_pd(), _mm512_setzero_pd()); 8];
            for (k, v) in x.iter_mut().enumerate() {
                *v = ldc(rp, ip, j + k * q);
            }
            let y = dit8(x, w, j, q);
            for (k, v) in y.into_iter().enumerate() {
                let i = j + k * q;
                out.put(i, cmul(v.0, v.1, ld(t.0, i), ld(t.1, i)));
            }
            ahead.step();
            j += 8;
        }
    }
}

/// Forward stages m/2, m/4 and m/8 in one pass ([`dif8_pair`], [`dif8_rest`] on blocks of 8 vectors m/8
/// apart), fused with the twist.
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles (m a multiple of 64), `t` to m doubles each, `w` to the stage
/// tables (m entries).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn radix8_dif_twist(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    ahead: &mut Ahead,
) {
    let q = m / 8;
    // SAFETY: points j + k·q + 8 ≤ 8q = m; the stage tables hold m = 8q entries.
    unsafe {
        let mut j = 0;
        while j < q {
            let zero = (_mm512_setzero_pd(), _mm512_setzero_pd());
            let (mut lo, mut hi) = ([zero; 4], [zero; 4]);
            for k in 0..4 {
                let (i, i4) = (j + k * q, j + (k + 4) * q);
                let a = cmul(ld(rp, i), ld(ip, i), ld(t.0, i), ld(t.1, i));
                let b = cmul(ld(rp, i4), ld(ip, i4), ld(t.0, i4), ld(t.1, i4));
                (lo[k], hi[k]) = dif8_pair(a, b, w, j, q, k);
            }
            let y = dif8_rest(lo, hi, w, j, q);
            for (k, v) in y.into_iter().enumerate() {
                stc(rp, ip, j + k * q, v);
            }
            ahead.step();
            j += 8;
        }
    }
}

/// Inverse stages h and 2h (h ≥ 16) in one pass; with `UNTWIST` (only when h = m/4) the outputs are then
/// multiplied by the untwist table `t` and handed to `out` (without, `out` is not used).
///
/// # Safety
/// AVX-512F; `rp`/`ip` point to m doubles, `t` to m doubles each, `w` to the stage tables (≥ 4h entries).
#[inline]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn radix4_dit<const UNTWIST: bool, S: Sink>(
    rp: *mut f64,
    ip: *mut f64,
    m: usize,
    h: usize,
    t: (*const f64, *const f64),
    w: (*const f64, *const f64),
    out: &mut S,
    ahead: &mut Ahead,
) {
    // SAFETY: indices s + j + 3h + 8 ≤ s + 4h ≤ m; stage tables at 2h + j + 8 ≤ 3h < 4h ≤ m.
    unsafe {
        let mut s = 0;
        while s < m {
            let mut j = 0;
            while j < h {
                let idx = [s + j, s + j + h, s + j + 2 * h, s + j + 3 * h];
                let mut x = [(_mm512_setzero_pd(), _mm512_setzero_pd()); 4];
                for (v, &i) in x.iter_mut().zip(&idx) {
                    *v = ldc(rp, ip, i);
                }
                let y = dit4(x, ldc(w.0, w.1, h + j), ldc(w.0, w.1, 2 * h + j));
                for (v, i) in y.into_iter().zip(idx) {
                    if UNTWIST {
                        out.put(i, cmul(v.0, v.1, ld(t.0, i), ld(t.1, i)));
                    } else {
                        stc(rp, ip, i, v);
                    }
                }
                ahead.step();
                j += 8;
            }
            s += 4 * h;
        }
    }
}

/// 1.5·2^52: x + this keeps round(x) mod 2^32 in the low mantissa bits (|x| < 2^51).
const ROUND_MAGIC: f64 = 6755399441055744.0;

/// p[0..8] += x rounded to integers mod 2^32 (as [`add_rounded_u32`]; vpmovqd keeps the low 32 bits
/// of each 64-bit lane).
///
/// # Safety
/// AVX-512F; p .. p + 8 readable and writable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn add_round8_u32(p: *mut u32, x: __m512d) {
    let v = _mm512_castpd_si512(_mm512_add_pd(x, _mm512_set1_pd(ROUND_MAGIC)));
    // SAFETY: the caller guarantees 8 words at p.
    unsafe {
        let o = _mm256_loadu_si256(p as *const __m256i);
        let r = _mm256_add_epi32(o, _mm512_cvtepi64_epi32(v));
        _mm256_storeu_si256(p as *mut __m256i, r);
    }
}

/// p[0..8] += x rounded to integers mod 2^64 (as [`add_rounded_u64`]).
///
/// # Safety
/// AVX-512F; p .. p + 8 readable and writable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn add_round8_u64(p: *mut u64, x: __m512d) {
    // SAFETY: the caller guarantees 8 words at p; round_f64x8 needs AVX-512F only.
    unsafe {
        let r = crate::torus::round_f64x8(x);
        let o = _mm512_loadu_si512(p as *const __m512i);
        _mm512_storeu_si512(p as *mut __m512i, _mm512_add_epi64(o, r));
    }
}

/// out[i] += x[i] rounded to an integer mod 2^32, for i < min(out.len(), x.len()): the rounding of
/// `Torus::add_f64_slice` for u32 (add 1.5·2^52, keep the low mantissa bits; |x| < 2^51), 8 words a
/// step (vpmovqd keeps the low 32 bits of each 64-bit lane).
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn add_rounded_u32(out: &mut [u32], x: &[f64]) {
    let n = out.len().min(x.len());
    let (op, xp) = (out.as_mut_ptr(), x.as_ptr());
    let mut i = 0;
    // SAFETY: i + 8 ≤ n, the length of both slices' used parts.
    unsafe {
        while i + 8 <= n {
            add_round8_u32(op.add(i), ld(xp, i));
            i += 8;
        }
    }
    for (o, &v) in out[i..n].iter_mut().zip(&x[i..n]) {
        *o = o.wrapping_add((v + ROUND_MAGIC).to_bits() as u32);
    }
}

/// out[i] += x[i] rounded to an integer mod 2^64, for i < min(out.len(), x.len()): the rounding of
/// `Torus::from_f64_mod` for u64 (sign, exponent and mantissa, shifted: exact mod 2^64 at any
/// magnitude, half away from zero below the binary point), 8 words a step, with variable shifts
/// (which give 0 for counts ≥ 64, as the scalar code's range checks do), then a wrapping add.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn add_rounded_u64(out: &mut [u64], x: &[f64]) {
    use crate::torus::Torus;
    let n = out.len().min(x.len());
    let (op, xp) = (out.as_mut_ptr(), x.as_ptr());
    let mut i = 0;
    // SAFETY: i + 8 ≤ n ≤ both lengths, so every load and store is in bounds.
    unsafe {
        while i + 8 <= n {
            add_round8_u64(op.add(i), ld(xp, i));
            i += 8;
        }
    }
    for (o, &v) in out[i..n].iter_mut().zip(&x[i..n]) {
        *o = o.wrapping_add(u64::from_f64_mod(v));
    }
}

/// acc += a ⊙ b in the split layout.
///
/// # Safety
/// The CPU must support AVX-512F; the three slices must have equal length n with n/2 a multiple of 8.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn mul_acc(acc: &mut [f64], a: &[f64], b: &[f64]) {
    let m = acc.len() / 2;
    debug_assert!(m.is_multiple_of(8) && a.len() == 2 * m && b.len() == 2 * m);
    let (cp, ap, bp) = (acc.as_mut_ptr(), a.as_ptr(), b.as_ptr());
    // SAFETY: j + 8 ≤ m and m + j + 8 ≤ 2m, the length of each slice.
    unsafe {
        let mut j = 0;
        while j < m {
            let (ar, ai, br, bi) = (ld(ap, j), ld(ap, m + j), ld(bp, j), ld(bp, m + j));
            let cr = _mm512_fnmadd_pd(ai, bi, _mm512_fmadd_pd(ar, br, ld(cp, j)));
            let ci = _mm512_fmadd_pd(ai, br, _mm512_fmadd_pd(ar, bi, ld(cp, m + j)));
            st(cp, j, cr);
            st(cp, m + j, ci);
            j += 8;
        }
    }
}

/// acc_a += x ⊙ a and acc_b += x ⊙ b in one pass over x.
///
/// # Safety
/// As [`mul_acc`]; all five slices have the same length.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn mul_acc2(
    acc_a: &mut [f64],
    acc_b: &mut [f64],
    x: &[f64],
    a: &[f64],
    b: &[f64],
) {
    let m = x.len() / 2;
    debug_assert!(
        m.is_multiple_of(8)
            && acc_a.len() == 2 * m
            && acc_b.len() == 2 * m
            && a.len() == 2 * m
            && b.len() == 2 * m
    );
    let (pa, pb, px, ra, rb) = (
        acc_a.as_mut_ptr(),
        acc_b.as_mut_ptr(),
        x.as_ptr(),
        a.as_ptr(),
        b.as_ptr(),
    );
    // SAFETY: j + 8 ≤ m and m + j + 8 ≤ 2m, the length of every slice.
    unsafe {
        let mut j = 0;
        while j < m {
            let (xr, xi) = (ld(px, j), ld(px, m + j));
            for (acc, key) in [(pa, ra), (pb, rb)] {
                let (kr, ki) = (ld(key, j), ld(key, m + j));
                let cr = _mm512_fnmadd_pd(xi, ki, _mm512_fmadd_pd(xr, kr, ld(acc, j)));
                let ci = _mm512_fmadd_pd(xi, kr, _mm512_fmadd_pd(xr, ki, ld(acc, m + j)));
                st(acc, j, cr);
                st(acc, m + j, ci);
            }
            j += 8;
        }
    }
}

/// acc_a = Σ_r x_r ⊙ key_{r,a} and acc_b = Σ_r x_r ⊙ key_{r,b} (overwriting), key in the
/// [`crate::fft::interleaved_index`] layout (w = 4): per block of 4 points and row, (a.re, a.im) and
/// (b.re, b.im) are each one contiguous 8-double vector [re0..re3 | im0..im3]. With x broadcast as
/// [xr | xr] and [xi | xi], two accumulators per polynomial collect [xr·kr | xr·ki] and [xi·kr | xi·ki];
/// one half-swap per block (not per row) combines them into [xr·kr − xi·ki | xr·ki + xi·kr].
/// The key is prefetched [`crate::fft::KEY_PREFETCH_DOUBLES`] ahead (prefetches never fault, and the
/// address is formed with `wrapping_add`, so running past the end is harmless).
///
/// Only the points j in `points` = [j0, j1) (multiples of 4, j1 ≤ n/2) are computed (and written, at
/// j and n/2 + j): each point's sum is the same whatever the range, so ranges split over threads give
/// the whole call's result bit for bit.
///
/// # Safety
/// The CPU must support AVX-512F; acc_a.len() == acc_b.len() == n with n/2 a multiple of 4,
/// the rows are xs[0]'s then xs[1]'s (row r of a part at r·stride, stride ≥ n, each part's length
/// a multiple of stride), key.len() ≥ rows·2n;
/// `points` as above.
#[target_feature(enable = "avx512f")]
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
#[target_feature(enable = "avx512f")]
unsafe fn mul_acc_rows_parts<const PARTS: usize>(
    acc_a: &mut [f64],
    acc_b: &mut [f64],
    xs: [&[f64]; 2],
    stride: usize,
    key: &[f64],
    points: (usize, usize),
) {
    let n = acc_a.len();
    let m = n / 2;
    let parts = [
        (xs[0].as_ptr(), xs[0].len() / stride),
        (xs[1].as_ptr(), xs[1].len() / stride),
    ];
    let rows = parts[0].1 + parts[1].1;
    debug_assert!(m.is_multiple_of(4) && acc_b.len() == n);
    debug_assert!(key.len() >= rows * 2 * n);
    let (pa, pb, pk) = (acc_a.as_mut_ptr(), acc_b.as_mut_ptr(), key.as_ptr());
    let sign = _mm512_set_pd(1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0);
    // SAFETY: j0 ≤ j, j + 4 ≤ j1 ≤ m, so part p's reads end at r·stride + m + j + 4 ≤ (rows)·stride, its
    // length; the key is read from block
    // j0/4 (offset (j0/4)·rows·16) sequentially, 16 doubles
    // per row per block, rows·2n in all; acc writes at j and m + j, 4 doubles each, within n.
    unsafe {
        let (j0, j1) = points;
        debug_assert!(j0.is_multiple_of(4) && j1.is_multiple_of(4) && j0 <= j1 && j1 <= m);
        let mut k = pk.add((j0 / 4) * rows * 16);
        let mut j = j0;
        while j < j1 {
            let (mut a1, mut a2) = (_mm512_setzero_pd(), _mm512_setzero_pd());
            let (mut b1, mut b2) = (_mm512_setzero_pd(), _mm512_setzero_pd());
            for &(px, prow) in &parts[..PARTS] {
                for r in 0..prow {
                    let xo = px.add(r * stride + j);
                    let xr = _mm512_broadcast_f64x4(_mm256_loadu_pd(xo));
                    let xi = _mm512_broadcast_f64x4(_mm256_loadu_pd(xo.add(m)));
                    // Software prefetch ahead of the hardware prefetcher: the key (52 MB per gate) is
                    // streamed from DRAM once per blind rotation.
                    let ahead = k.wrapping_add(crate::fft::KEY_PREFETCH_DOUBLES);
                    _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(8) as *const i8);
                    let (ka, kb) = (_mm512_loadu_pd(k), _mm512_loadu_pd(k.add(8)));
                    k = k.add(16);
                    a1 = _mm512_fmadd_pd(xr, ka, a1);
                    a2 = _mm512_fmadd_pd(xi, ka, a2);
                    b1 = _mm512_fmadd_pd(xr, kb, b1);
                    b2 = _mm512_fmadd_pd(xi, kb, b2);
                }
            }
            // [xi·ki | xi·kr]·[−1 | 1] + [xr·kr | xr·ki].
            let a = _mm512_fmadd_pd(_mm512_shuffle_f64x2::<0x4E>(a2, a2), sign, a1);
            let b = _mm512_fmadd_pd(_mm512_shuffle_f64x2::<0x4E>(b2, b2), sign, b1);
            _mm256_storeu_pd(pa.add(j), _mm512_castpd512_pd256(a));
            _mm256_storeu_pd(pa.add(m + j), _mm512_extractf64x4_pd::<1>(a));
            _mm256_storeu_pd(pb.add(j), _mm512_castpd512_pd256(b));
            _mm256_storeu_pd(pb.add(m + j), _mm512_extractf64x4_pd::<1>(b));
            j += 4;
        }
    }
}

/// [`mul_acc_rows`] (one part of rows at `stride`) for G accumulator pairs at once, all against
/// the same key: `accs[g]` = (acc_a, acc_b) of rows `xs[g]`. Each key vector is loaded once and
/// used for all G, so a batch of blind rotations reads a step's key (128 KiB at level 2) once per
/// G samples instead of once per sample; every accumulator gets the same fused multiply-adds in the
/// same order as [`mul_acc_rows`] gives it alone, so the results are the same bit for bit.
///
/// # Safety
/// The CPU must support AVX-512F; every acc_a and acc_b has length n with n/2 a multiple of 4; every
/// `xs[g]` holds `rows` rows at `stride` ≥ n (length ≥ (rows − 1)·stride + n); key.len() ≥ rows·2n.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn mul_acc_rows_group<const G: usize>(
    accs: [(*mut f64, *mut f64); G],
    xs: [*const f64; G],
    n: usize,
    rows: usize,
    stride: usize,
    key: &[f64],
) {
    let m = n / 2;
    debug_assert!(m.is_multiple_of(4) && stride >= n && key.len() >= rows * 2 * n);
    let sign = _mm512_set_pd(1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0);
    // SAFETY: j + 4 ≤ m, so the reads of xs[g] end at (rows − 1)·stride + m + j + 4 ≤ its length;
    // the key is read sequentially, 16 doubles per row per block of 4 points, rows·2n in all; acc
    // writes at j and m + j, 4 doubles each, within n (the caller's contract).
    unsafe {
        let mut k = key.as_ptr();
        let mut j = 0;
        while j < m {
            let mut a1 = [_mm512_setzero_pd(); G];
            let mut a2 = [_mm512_setzero_pd(); G];
            let mut b1 = [_mm512_setzero_pd(); G];
            let mut b2 = [_mm512_setzero_pd(); G];
            for r in 0..rows {
                let ahead = k.wrapping_add(crate::fft::KEY_PREFETCH_DOUBLES);
                _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(8) as *const i8);
                let (ka, kb) = (_mm512_loadu_pd(k), _mm512_loadu_pd(k.add(8)));
                k = k.add(16);
                for g in 0..G {
                    let xo = xs[g].add(r * stride + j);
                    let xr = _mm512_broadcast_f64x4(_mm256_loadu_pd(xo));
                    let xi = _mm512_broadcast_f64x4(_mm256_loadu_pd(xo.add(m)));
                    a1[g] = _mm512_fmadd_pd(xr, ka, a1[g]);
                    a2[g] = _mm512_fmadd_pd(xi, ka, a2[g]);
                    b1[g] = _mm512_fmadd_pd(xr, kb, b1[g]);
                    b2[g] = _mm512_fmadd_pd(xi, kb, b2[g]);
                }
            }
            for g in 0..G {
                let (pa, pb) = accs[g];
                let a = _mm512_fmadd_pd(_mm512_shuffle_f64x2::<0x4E>(a2[g], a2[g]), sign, a1[g]);
                let b = _mm512_fmadd_pd(_mm512_shuffle_f64x2::<0x4E>(b2[g], b2[g]), sign, b1[g]);
                _mm256_storeu_pd(pa.add(j), _mm512_castpd512_pd256(a));
                _mm256_storeu_pd(pa.add(m + j), _mm512_extractf64x4_pd::<1>(a));
                _mm256_storeu_pd(pb.add(j), _mm512_castpd512_pd256(b));
                _mm256_storeu_pd(pb.add(m + j), _mm512_extractf64x4_pd::<1>(b));
            }
            j += 4;
        }
    }
}
