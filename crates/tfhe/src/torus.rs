//! Discretized torus T = R/Z as machine words (CGGI16 §2): `u32` for levels 0 and 1, `u64` for level 2.
//!
//! A torus element x ∈ [0,1) is stored as round(x·2^BITS); addition is wrapping addition, and only
//! multiplication by integers is defined. This module also holds the signed ("balanced") gadget
//! decomposition used by the external product and by key switching.

use zeroize::Zeroize;

/// A discretized torus word. Implemented for `u32` and `u64` only.
pub trait Torus:
    Copy + Default + Send + Sync + Eq + core::fmt::Debug + Zeroize + 'static + private::Sealed
{
    /// Bits of the word (32 or 64).
    const BITS: u32;
    /// Zero-extends to u64 (two's complement bits kept).
    fn to_u64(self) -> u64;
    /// Truncates a u64 to this word (reduction mod 2^BITS).
    fn from_u64(x: u64) -> Self;
    /// The word as a signed integer in [-2^(BITS-1), 2^(BITS-1)), as f64 (lossy for u64).
    fn to_signed_f64(self) -> f64;
    /// Rounds an integer-valued f64 of any magnitude to the nearest integer mod 2^BITS.
    fn from_f64_mod(x: f64) -> Self;

    /// A uniform word (one u32 draw for u32, one u64 draw for u64: masks must be reproducible from seeds).
    fn uniform<R: rand_core::RngCore>(r: &mut R) -> Self;

    /// `from_f64_mod` over a slice (vectorizable specializations).
    #[inline(always)]
    fn from_f64_slice(out: &mut [Self], x: &[f64]) {
        out.iter_mut()
            .zip(x)
            .for_each(|(o, &v)| *o = Self::from_f64_mod(v));
    }

    /// out += [`Torus::from_f64_slice`] of x (the same rounding, without a temporary).
    #[inline(always)]
    fn add_f64_slice(out: &mut [Self], x: &[f64]) {
        out.iter_mut()
            .zip(x)
            .for_each(|(o, &v)| *o = o.add(Self::from_f64_mod(v)));
    }

    /// The words as u32 when this is the 32-bit torus (for kernels written for it), else `None`.
    #[inline(always)]
    fn as_u32_slice(_s: &[Self]) -> Option<&[u32]> {
        None
    }

    /// [`Torus::as_u32_slice`], mutable.
    #[inline(always)]
    fn as_u32_slice_mut(_s: &mut [Self]) -> Option<&mut [u32]> {
        None
    }

    #[inline(always)]
    fn zero() -> Self {
        Self::default()
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::from_u64(self.to_u64().wrapping_add(o.to_u64()))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::from_u64(self.to_u64().wrapping_sub(o.to_u64()))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        Self::from_u64(self.to_u64().wrapping_neg())
    }
    /// Multiplication by a (small) signed integer.
    #[inline(always)]
    fn mul_i64(self, d: i64) -> Self {
        Self::from_u64(self.to_u64().wrapping_mul(d as u64))
    }
    /// The torus value as a real in [-1/2, 1/2).
    #[inline(always)]
    fn to_phase(self) -> f64 {
        self.to_signed_f64() / 2f64.powi(Self::BITS as i32)
    }
    /// Nearest word to the real `x` (taken mod 1).
    #[inline(always)]
    fn from_phase(x: f64) -> Self {
        let f = x - x.round();
        Self::from_f64_mod((f * 2f64.powi(Self::BITS as i32)).round())
    }
    /// 2^-k as a torus word (k in 1..=BITS), 0 for k > BITS.
    #[inline(always)]
    fn pow2_neg(k: u32) -> Self {
        if k == 0 || k > Self::BITS {
            Self::zero()
        } else {
            Self::from_u64(1u64 << (Self::BITS - k))
        }
    }
}

mod private {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

impl Torus for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn uniform<R: rand_core::RngCore>(r: &mut R) -> Self {
        r.next_u32()
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x as u32
    }
    #[inline(always)]
    fn to_signed_f64(self) -> f64 {
        self as i32 as f64
    }
    #[inline(always)]
    fn from_f64_mod(x: f64) -> Self {
        // |x| < 2^63 for every product this crate computes at level 1 (≤ 2^47, see fft.rs),
        // so the saturating cast is exact and truncation reduces mod 2^32.
        x.round() as i64 as u32
    }
    #[inline(always)]
    fn mul_i64(self, d: i64) -> Self {
        self.wrapping_mul(d as u32)
    }
    #[inline(always)]
    fn from_f64_slice(out: &mut [Self], x: &[f64]) {
        // Adding 1.5·2^52 rounds to the nearest integer and leaves it, two's complement, in the low
        // mantissa bits; valid for |v| < 2^51, which level-1 products satisfy (≤ 2^47, see fft.rs).
        const MAGIC: f64 = 6755399441055744.0;
        for (o, &v) in out.iter_mut().zip(x) {
            *o = (v + MAGIC).to_bits() as u32;
        }
    }
    #[inline(always)]
    fn add_f64_slice(out: &mut [Self], x: &[f64]) {
        // The same rounding as from_f64_slice.
        const MAGIC: f64 = 6755399441055744.0;
        for (o, &v) in out.iter_mut().zip(x) {
            *o = o.wrapping_add((v + MAGIC).to_bits() as u32);
        }
    }
    #[inline(always)]
    fn as_u32_slice(s: &[Self]) -> Option<&[u32]> {
        Some(s)
    }
    #[inline(always)]
    fn as_u32_slice_mut(s: &mut [Self]) -> Option<&mut [u32]> {
        Some(s)
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
}

impl Torus for u64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn uniform<R: rand_core::RngCore>(r: &mut R) -> Self {
        r.next_u64()
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x
    }
    #[inline(always)]
    fn to_signed_f64(self) -> f64 {
        self as i64 as f64
    }
    #[inline(always)]
    fn from_f64_mod(x: f64) -> Self {
        // Level-2 products reach ~2^85 (see fft.rs): read sign, exponent and mantissa and shift, which
        // is exact mod 2^64 at any magnitude (rounding half away from zero below the binary point).
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64;
        let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        let shift = exp - 1075;
        let mag = if shift >= 64 || exp == 0 || shift <= -64 {
            0
        } else if shift >= 0 {
            mant << shift
        } else {
            let s = (-shift) as u32;
            (mant + (1u64 << (s - 1))) >> s
        };
        if bits >> 63 == 1 {
            mag.wrapping_neg()
        } else {
            mag
        }
    }
    #[inline(always)]
    fn from_f64_slice(out: &mut [Self], x: &[f64]) {
        #[cfg(target_arch = "x86_64")]
        if crate::fft::Kernel::detect().has_avx512() {
            // SAFETY: Kernel::Avx512 is only detected when the CPU supports AVX-512F.
            unsafe { u64_from_f64_avx512(out, x) };
            return;
        }
        out.iter_mut()
            .zip(x)
            .for_each(|(o, &v)| *o = Self::from_f64_mod(v));
    }
}

/// Eight f64 rounded to integers mod 2^64 as [`Torus::from_f64_mod`] does for u64 (sign, exponent
/// and mantissa, shifted: exact mod 2^64 at any magnitude, half away from zero below the binary
/// point), with variable shifts (which give 0 for counts ≥ 64, as the scalar code's range checks
/// do). Shared by the slice conversion below and `fft_avx512::add_rounded_u64`.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) unsafe fn round_f64x8(x: std::arch::x86_64::__m512d) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let mant_mask = _mm512_set1_epi64((1i64 << 52) - 1);
    let hidden = _mm512_set1_epi64(1i64 << 52);
    let exp_mask = _mm512_set1_epi64(0x7ff);
    let bias = _mm512_set1_epi64(1075);
    let one = _mm512_set1_epi64(1);
    let zero = _mm512_setzero_si512();
    let bits = _mm512_castpd_si512(x);
    let exp = _mm512_and_si512(_mm512_srli_epi64::<52>(bits), exp_mask);
    let mant = _mm512_or_si512(_mm512_and_si512(bits, mant_mask), hidden);
    let shift = _mm512_sub_epi64(exp, bias);
    let neg = _mm512_cmplt_epi64_mask(bits, zero);
    // Every lane an integer (|x| ≥ 2^52, shift ≥ 0): ±(mant << shift), the general path's values
    // (its blend picks `left` in every lane, and exp ≠ 0). The level-2 inverse transforms' values
    // are of order 2^80 (64-bit key words times digits), so this is their path; half the
    // instructions.
    if _mm512_cmpge_epi64_mask(shift, zero) == 0xff {
        let mag = _mm512_sllv_epi64(mant, shift);
        return _mm512_mask_sub_epi64(mag, neg, zero, mag);
    }
    // shift ≥ 0: mant << shift (0 from 64 on); shift < 0: (mant + 2^(s−1)) >> s with s = −shift
    // (0 from s = 64 on; exp = 0 gives s = 1075).
    let left = _mm512_sllv_epi64(mant, shift);
    let s = _mm512_sub_epi64(zero, shift);
    let half = _mm512_sllv_epi64(one, _mm512_sub_epi64(s, one));
    let right = _mm512_srlv_epi64(_mm512_add_epi64(mant, half), s);
    let nonneg = _mm512_cmpge_epi64_mask(shift, zero);
    let mag = _mm512_mask_blend_epi64(nonneg, right, left);
    // exp = 0 (zero or subnormal) is 0, as in the scalar code.
    let mag = _mm512_maskz_mov_epi64(_mm512_cmpneq_epi64_mask(exp, zero), mag);
    _mm512_mask_sub_epi64(mag, neg, zero, mag)
}

/// [`Torus::from_f64_mod`] for u64 over a slice with AVX-512F, 8 lanes (the level-2 inverse
/// transform's rounding, scalar bit manipulation per coefficient otherwise): the same sign, exponent
/// and mantissa steps, with variable shifts (which give 0 for counts ≥ 64, as the scalar code's
/// range checks do). Equal to the scalar code on every input (tested below).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn u64_from_f64_avx512(out: &mut [u64], x: &[f64]) {
    use std::arch::x86_64::*;
    let n = out.len().min(x.len());
    let (po, px) = (out.as_mut_ptr(), x.as_ptr());
    let mut i = 0;
    // SAFETY: i + 8 ≤ n ≤ both lengths, so every load and store is in bounds.
    unsafe {
        while i + 8 <= n {
            let bits = _mm512_loadu_pd(px.add(i));
            let r = crate::torus::round_f64x8(bits);
            _mm512_storeu_si512(po.add(i) as *mut __m512i, r);
            i += 8;
        }
    }
    for (o, &v) in out[i..n].iter_mut().zip(&x[i..n]) {
        *o = u64::from_f64_mod(v);
    }
}

/// A gadget (decomposition) base: `levels` digits of `base_bits` bits each, most significant first.
/// Digits are balanced, in [-Bg/2, Bg/2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Gadget {
    /// Number of digits ℓ.
    pub levels: u32,
    /// log2 of the base Bg.
    pub base_bits: u32,
}

impl Gadget {
    /// The gadget value g_i = Bg^-(i+1) as a torus word (i = 0 is the most significant level).
    #[inline(always)]
    pub fn g<T: Torus>(&self, i: usize) -> T {
        T::pow2_neg((i as u32 + 1) * self.base_bits)
    }

    /// Bits covered by the decomposition.
    pub fn precision_bits(&self) -> u32 {
        self.levels * self.base_bits
    }

    /// The constant added before digit extraction: rounding to `levels·base_bits` bits plus Bg/2 at every
    /// digit position, so that each balanced digit is an independent bit field minus Bg/2 (no carries).
    #[inline(always)]
    fn offset<T: Torus>(&self) -> u64 {
        let total = self.levels * self.base_bits;
        let mut off = 1u64 << (T::BITS - total - 1);
        for i in 1..=self.levels {
            off = off.wrapping_add(1u64 << (T::BITS - i * self.base_bits + self.base_bits - 1));
        }
        off
    }

    /// Balanced decomposition of a polynomial into `levels` digit polynomials as f64:
    /// `out[i·N + j]` is digit i (weight Bg^-(i+1)) of coefficient j. The same rounded value as
    /// [`Gadget::decompose`], with zero-mean digits in [−Bg/2, Bg/2] chosen without a carry chain (see
    /// `decompose_poly_core`).
    #[inline]
    pub fn decompose_poly_f64<T: Torus>(&self, poly: &[T], out: &mut [f64]) {
        self.decompose_poly_f64_strided(poly, out, poly.len())
    }

    /// [`Gadget::decompose_poly_f64`] with digit polynomial i at `out[i·stride ..]` (stride ≥ N).
    #[inline]
    pub(crate) fn decompose_poly_f64_strided<T: Torus>(
        &self,
        poly: &[T],
        out: &mut [f64],
        stride: usize,
    ) {
        #[cfg(target_arch = "x86_64")]
        if crate::fft::Kernel::detect().has_avx512() {
            // SAFETY: Kernel::Avx512 is only detected when the CPU supports AVX-512F.
            unsafe { self.decompose_poly_avx512(poly, out, stride) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if crate::fft::Kernel::detect().has_avx2() {
            // SAFETY: Avx2Fma and Avx512 are only detected when the CPU supports AVX2.
            unsafe { self.decompose_poly_avx2(poly, out, stride) };
            return;
        }
        self.decompose_poly_core(poly, out, stride)
    }

    /// The same loops compiled with AVX-512F (16 u32 or 8 u64 lanes per instruction).
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn decompose_poly_avx512<T: Torus>(&self, poly: &[T], out: &mut [f64], stride: usize) {
        self.decompose_poly_core(poly, out, stride)
    }

    /// The same loops compiled with AVX2 (8 u32 or 4 u64 lanes per instruction).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decompose_poly_avx2<T: Torus>(&self, poly: &[T], out: &mut [f64], stride: usize) {
        self.decompose_poly_core(poly, out, stride)
    }

    /// The u32 digit-extraction constants of [`Gadget::decompose_poly_f64`] (offset, range step, digit
    /// mask, Bg/2), for kernels that fuse it (`fft_avx512::rot_dec_forward`).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn digit_constants_u32(&self) -> (u32, u32, u32, i32) {
        let step = (1..=self.levels).fold(0u64, |a, i| {
            a.wrapping_add(1u64 << (32 - i * self.base_bits))
        });
        (
            self.offset::<u32>() as u32,
            step as u32,
            ((1u64 << self.base_bits) - 1) as u32,
            1i32 << (self.base_bits - 1),
        )
    }

    /// [`Gadget::digit_constants_u32`] for the 64-bit torus (offset, range step, digit mask, Bg/2),
    /// for the level-2 kernel that fuses the decomposition (`fft_avx512::rot_dec_forward_u64`).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn digit_constants_u64(&self) -> (u64, u64, u64, i32) {
        let step = (1..=self.levels).fold(0u64, |a, i| {
            a.wrapping_add(1u64 << (64 - i * self.base_bits))
        });
        (
            self.offset::<u64>(),
            step,
            (1u64 << self.base_bits) - 1,
            1i32 << (self.base_bits - 1),
        )
    }

    /// Portable body of [`Gadget::decompose_poly_f64`]. Digits are masked to `base_bits` < 32 bits before
    /// the i32 → f64 conversion, which (unlike u64 → f64) has a vector instruction.
    ///
    /// Zero-mean digits without a carry chain: a word whose lowest bit is 0 gets digits in
    /// [−Bg/2, Bg/2) (offset Bg/2 per digit), one whose lowest bit is 1 digits in (−Bg/2, Bg/2] (offset
    /// Bg/2 − 1); both recompose to the same rounded word. The lowest bit lies far below the gadget's
    /// precision, so the two ranges are equally likely whatever the digits are, and the digits' mean is 0
    /// — not −½, which would multiply a TRGSW's noise the same way for every input and add up coherently
    /// over a RAM cell's many writes with one selector.
    #[inline(always)]
    fn decompose_poly_core<T: Torus>(&self, poly: &[T], out: &mut [f64], stride: usize) {
        let n = poly.len();
        let off = self.offset::<T>();
        // Σ_i 2^shift_i: the offset difference between the two digit ranges.
        let step = (1..=self.levels).fold(0u64, |a, i| {
            a.wrapping_add(1u64 << (T::BITS - i * self.base_bits))
        });
        let mask = (1u64 << self.base_bits) - 1;
        let half = 1i32 << (self.base_bits - 1);
        for i in 0..self.levels as usize {
            let shift = T::BITS - (i as u32 + 1) * self.base_bits;
            let dst = &mut out[i * stride..i * stride + n];
            if T::BITS == 32 {
                // Level-1 words: stay in u32 lanes (twice as many per vector).
                let (off, step, mask) = (off as u32, step as u32, mask as u32);
                for (o, &x) in dst.iter_mut().zip(poly) {
                    let x = x.to_u64() as u32;
                    let p = x & 1;
                    let v = x.wrapping_add(off).wrapping_sub(p.wrapping_mul(step));
                    *o = (((v >> shift) & mask) as i32 - half + p as i32) as f64;
                }
            } else {
                for (o, &x) in dst.iter_mut().zip(poly) {
                    let x = x.to_u64();
                    let p = x & 1;
                    let v = x.wrapping_add(off).wrapping_sub(p.wrapping_mul(step));
                    *o = (((v >> shift) & mask) as u32 as i32 - half + p as i32) as f64;
                }
            }
        }
    }

    /// Balanced decomposition of one torus word into `out[0..levels]` (`out[0]` multiplies `Bg^-1`), digits
    /// in [−Bg/2, Bg/2]. The word is first rounded to `levels·base_bits` bits; the top carry wraps
    /// (mod 1).
    ///
    /// Zero-mean digits: a digit of exactly Bg/2 becomes −Bg/2 (with a carry) when the next digit's top
    /// bit is set, so ±Bg/2 are equally likely (TFHE-rs's signed decomposition). Digits in [−Bg/2, Bg/2)
    /// would have mean −½, and key switching's digits multiply the same key noise every time: that bias
    /// gives every private key switch's output, hence every circuit-bootstrapped TRGSW, a common noise
    /// polynomial, and a RAM cell that takes external products with such TRGSWs cycle after cycle
    /// accumulates it coherently (measured: a drift of 9e-4 per write with the RAM gadget).
    #[inline(always)]
    pub fn decompose<T: Torus>(&self, x: T, out: &mut [i64]) {
        let total = self.levels * self.base_bits;
        let shift = T::BITS - total;
        let mask = (1u64 << self.base_bits) - 1;
        let rounded = if shift == 0 {
            x.to_u64()
        } else {
            x.to_u64().wrapping_add(1u64 << (shift - 1))
        };
        let mut tmp = if shift >= 64 { 0 } else { rounded >> shift };
        if T::BITS < 64 {
            tmp &= (1u64 << total) - 1;
        }
        // The top digit's carry wraps, so either sign of a tie is right there: break it with the
        // rounded word's lowest bit (independent of the top digit) to keep that digit zero-mean too.
        let top_tie = (tmp & 1) << (self.base_bits - 1);
        for i in (0..self.levels as usize).rev() {
            let res = tmp & mask;
            tmp >>= self.base_bits;
            let next = if i == 0 { top_tie } else { tmp };
            // 1 when res > Bg/2, or res = Bg/2 and the next digit's top bit is set.
            let carry = ((res.wrapping_sub(1) | next) & res) >> (self.base_bits - 1);
            tmp = tmp.wrapping_add(carry);
            out[i] = res as i64 - ((carry as i64) << self.base_bits);
        }
    }
}

/// Round a torus word to the nearest multiple of 1/(2N) — TFHE's modulus switch to Z_{2N}
/// (log2_2n = log2(2N)). Returns a value in [0, 2N).
#[inline(always)]
pub fn mod_switch<T: Torus>(x: T, log2_2n: u32) -> usize {
    let shift = T::BITS - log2_2n;
    let v = x.to_u64().wrapping_add(1u64 << (shift - 1)) >> shift;
    (v & ((1u64 << log2_2n) - 1)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX-512 u64 rounding equals the scalar one on random products of every magnitude, on
    /// halves (rounding away from zero), signed zeros, subnormals and values past 2^64 and 2^-64.
    #[test]
    fn u64_from_f64_kernel_matches_scalar() {
        let mut x: Vec<f64> = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            1e-300,
            -1e-310,
            5e-324,
            0.49999999999999994,
            2f64.powi(63),
            -(2f64.powi(63)),
            2f64.powi(64),
            2f64.powi(64) + 2f64.powi(12),
            2f64.powi(90) + 2f64.powi(40),
            -(2f64.powi(117)),
            2f64.powi(-64),
            2f64.powi(-63),
            (1u64 << 53) as f64 - 0.5,
            12345.5,
            -12345.5,
            2f64.powi(52) + 1.0,
            2f64.powi(1000),
        ];
        let mut r: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..4000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let mag = (r % 100) as i32 - 10; // 2^-10 … 2^89
            let v = (r >> 11) as f64 / 2f64.powi(53) * 2f64.powi(mag);
            x.push(if r & 1 == 0 { v } else { -v });
        }
        // Whole groups of 8 integers (|v| ≥ 2^52: the AVX-512 kernel's fast path), with the
        // boundaries, then groups with one small value among large ones (the general path).
        while !x.len().is_multiple_of(8) {
            x.push(0.75);
        }
        x.extend([
            2f64.powi(52),
            -(2f64.powi(52)),
            2f64.powi(52) + 1.0,
            2f64.powi(63),
            2f64.powi(64),
            -(2f64.powi(116)) - 2f64.powi(64),
            2f64.powi(117),
            f64::MAX,
        ]);
        for i in 0..1600 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let mag = 52 + (r % 70) as i32; // 2^52 … 2^121
            let v = ((r >> 11) | 1 << 52) as f64 * 2f64.powi(mag - 52);
            let v = if i % 97 == 5 { 2.5 } else { v };
            x.push(if r & 1 == 0 { v } else { -v });
        }
        let want: Vec<u64> = x.iter().map(|&v| u64::from_f64_mod(v)).collect();
        let mut got = vec![0u64; x.len()];
        u64::from_f64_slice(&mut got, &x);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "value {i}: {:e}", x[i]);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::fft::Kernel::available().contains(&crate::fft::Kernel::Avx512) {
            let mut got = vec![0u64; x.len()];
            // SAFETY: Kernel::Avx512 is available, so the CPU has AVX-512F.
            unsafe { u64_from_f64_avx512(&mut got, &x) };
            assert_eq!(got, want, "AVX-512 kernel");
        }
    }
    use rand::{Rng, SeedableRng};

    fn recompose<T: Torus>(g: &Gadget, d: &[i64]) -> T {
        let mut acc = T::zero();
        for (i, &di) in d.iter().enumerate() {
            acc = acc.add(g.g::<T>(i).mul_i64(di));
        }
        acc
    }

    /// Gadgets of the given (levels, base bits).
    fn gadgets(shapes: &[(u32, u32)]) -> Vec<Gadget> {
        shapes
            .iter()
            .map(|&(levels, base_bits)| Gadget { levels, base_bits })
            .collect()
    }

    #[test]
    fn decomposition_is_balanced_and_close() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for g in gadgets(&[(3, 6), (2, 10), (8, 3), (5, 3)]) {
            let mut d = vec![0i64; g.levels as usize];
            for _ in 0..10_000 {
                let x: u32 = rng.gen();
                g.decompose(x, &mut d);
                let half = 1i64 << (g.base_bits - 1);
                assert!(d.iter().all(|&v| (-half..=half).contains(&v)), "{d:?}");
                let err = x.wrapping_sub(recompose::<u32>(&g, &d)) as i32 as i64;
                assert!(err.abs() <= 1 << (32 - g.precision_bits() - 1), "err {err}");
                let y: u64 = rng.gen();
                g.decompose(y, &mut d);
                let err = y.wrapping_sub(recompose::<u64>(&g, &d)) as i64 as i128;
                assert!(err.abs() <= 1i128 << (64 - g.precision_bits() - 1));
            }
        }
    }

    /// The dispatched decomposition and every vector version this CPU supports equal the portable loop
    /// bit for bit.
    /// Key switching's digits are zero-mean (±Bg/2 equally likely), as a fixed key's noise times digits
    /// of mean −½ would bias every output the same way.
    #[test]
    fn scalar_digits_have_zero_mean() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for g in gadgets(&[(8, 3), (7, 2), (5, 3)]) {
            let l = g.levels as usize;
            let (mut sum, mut sq) = (vec![0f64; l], vec![0f64; l]);
            let mut d = vec![0i64; l];
            let n = 200_000;
            for _ in 0..n {
                g.decompose(rng.gen::<u32>(), &mut d);
                for (i, &v) in d.iter().enumerate() {
                    sum[i] += v as f64;
                    sq[i] += (v * v) as f64;
                }
            }
            let b = (1u64 << g.base_bits) as f64;
            for i in 0..l {
                let mean = sum[i] / n as f64;
                assert!(mean.abs() < 0.02, "{g:?} digit {i}: mean {mean}");
                // At most the variance the noise formulas use, (Bg² + 2)/12 (the top digit's ties are
                // a little rarer: its carry-in is correlated with its own top bit).
                let r = (sq[i] / n as f64 - mean * mean) / ((b * b + 2.0) / 12.0);
                assert!(
                    (0.8..1.03).contains(&r),
                    "{g:?} digit {i}: variance ratio {r}"
                );
            }
        }
    }

    /// The external product's digits are zero-mean too, for level-1 and level-2 words.
    #[test]
    fn poly_digits_have_zero_mean() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(10);
        let n = 1 << 16;
        let p: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let q: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        for (levels, base_bits, wide) in [
            (2u32, 8u32, false),
            (4, 3, false),
            (7, 2, false),
            (3, 10, true),
        ] {
            let g = Gadget { levels, base_bits };
            let mut out = vec![0.0; n * levels as usize];
            if wide {
                g.decompose_poly_f64(&q, &mut out);
            } else {
                g.decompose_poly_f64(&p, &mut out);
            }
            let half = (1u32 << (base_bits - 1)) as f64;
            for (i, d) in out.chunks(n).enumerate() {
                assert!(d.iter().all(|v| v.abs() <= half), "{g:?}");
                let mean = d.iter().sum::<f64>() / n as f64;
                let var = d.iter().map(|v| v * v).sum::<f64>() / n as f64;
                let b = half * 2.0;
                assert!(
                    mean.abs() < 0.02 * half.max(1.0),
                    "{g:?} digit {i}: mean {mean}"
                );
                let r = var / ((b * b + 2.0) / 12.0);
                assert!(
                    (0.97..1.03).contains(&r),
                    "{g:?} digit {i}: variance ratio {r}"
                );
            }
        }
    }

    #[test]
    fn poly_decomposition_kernel_matches_portable() {
        #[cfg(target_arch = "x86_64")]
        let kernels = crate::fft::Kernel::available();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        for (levels, base_bits) in [(2u32, 8u32), (3, 6), (4, 9)] {
            let g = Gadget { levels, base_bits };
            let n = 1024;
            let p: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
            let q: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            let (mut a, mut b) = (
                vec![0.0; n * levels as usize],
                vec![1.0; n * levels as usize],
            );
            g.decompose_poly_f64(&p, &mut a);
            g.decompose_poly_core(&p, &mut b, p.len());
            assert_eq!(a, b, "u32 {levels}x{base_bits}");
            g.decompose_poly_f64(&q, &mut a);
            g.decompose_poly_core(&q, &mut b, q.len());
            assert_eq!(a, b, "u64 {levels}x{base_bits}");
            g.decompose_poly_core(&p, &mut a, p.len());
            #[cfg(target_arch = "x86_64")]
            for k in &kernels {
                let (mut c, mut d) = (vec![2.0; a.len()], vec![3.0; a.len()]);
                match k {
                    // SAFETY: the kernel is in Kernel::available(), so the CPU has AVX2.
                    crate::fft::Kernel::Avx2Fma => unsafe {
                        g.decompose_poly_avx2(&p, &mut c, n);
                        g.decompose_poly_avx2(&q, &mut d, n);
                    },
                    // SAFETY: the kernel is in Kernel::available(), so the CPU has AVX-512F.
                    crate::fft::Kernel::Avx512 => unsafe {
                        g.decompose_poly_avx512(&p, &mut c, n);
                        g.decompose_poly_avx512(&q, &mut d, n);
                    },
                    crate::fft::Kernel::Portable => continue,
                }
                assert_eq!(a, c, "u32 {levels}x{base_bits} {k:?}");
                assert_eq!(b, d, "u64 {levels}x{base_bits} {k:?}");
            }
            // Digit rows at a padded stride (the external product's scratch): the same rows, and
            // the padding untouched.
            let stride = n + 5;
            let mut padded = vec![7.5; stride * levels as usize];
            g.decompose_poly_f64_strided(&p, &mut padded, stride);
            for (i, row) in padded.chunks(stride).enumerate() {
                assert_eq!(row[..n], a[i * n..(i + 1) * n], "strided level {i}");
                assert!(row[n..].iter().all(|&x| x == 7.5), "padding written");
            }
        }
    }

    #[test]
    fn poly_decomposition_matches_scalar() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        for g in gadgets(&[(3, 6), (4, 4)]) {
            let p: Vec<u32> = (0..64).map(|_| rng.gen()).collect();
            let mut out = vec![0.0; 64 * g.levels as usize];
            g.decompose_poly_f64(&p, &mut out);
            let mut d = vec![0i64; g.levels as usize];
            for (j, &x) in p.iter().enumerate() {
                g.decompose(x, &mut d);
                let re = recompose::<u32>(&g, &d);
                let got: Vec<i64> = (0..g.levels as usize)
                    .map(|i| out[i * 64 + j] as i64)
                    .collect();
                assert_eq!(recompose::<u32>(&g, &got), re);
            }
            let q: Vec<u64> = (0..64).map(|_| rng.gen()).collect();
            g.decompose_poly_f64(&q, &mut out);
            for (j, &x) in q.iter().enumerate() {
                g.decompose(x, &mut d);
                let got: Vec<i64> = (0..g.levels as usize)
                    .map(|i| out[i * 64 + j] as i64)
                    .collect();
                assert_eq!(recompose::<u64>(&g, &got), recompose::<u64>(&g, &d));
            }
        }
    }

    #[test]
    fn mod_switch_rounds() {
        assert_eq!(mod_switch(0u32, 11), 0);
        assert_eq!(mod_switch(1u32 << 31, 11), 1024);
        assert_eq!(mod_switch(u32::MAX, 11), 0);
        assert_eq!(mod_switch((1u32 << 21) - 1, 11), 1);
        assert_eq!(mod_switch(1u64 << 63, 12), 2048);
    }

    #[test]
    fn phase_roundtrip() {
        assert_eq!(u32::from_phase(0.125), 1 << 29);
        assert_eq!(u32::from_phase(-0.125), 7 << 29);
        assert!((u64::from_phase(0.3).to_phase() - 0.3).abs() < 1e-15);
        assert_eq!(u64::from_f64_mod(3.0 * 2f64.powi(64) + 81920.0), 81920);
        assert_eq!(
            u64::from_f64_mod(-(3.0 * 2f64.powi(64) + 81920.0)),
            81920u64.wrapping_neg()
        );
        for v in [
            0.0,
            1.0,
            -1.0,
            2.4,
            -2.6,
            123456789.5,
            -9.0e15,
            2f64.powi(61) * 3.0,
        ] {
            assert_eq!(u64::from_f64_mod(v), v.round() as i64 as u64, "{v}");
        }
    }
}
