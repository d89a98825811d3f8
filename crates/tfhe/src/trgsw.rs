//! TRGSW samples in the Fourier domain, the external product ⊡ and CMUX (CGGI16 §3, Thm. 3.14).
//!
//! A TRGSW of an integer polynomial μ with gadget (ℓ, Bg) is 2ℓ TRLWE rows: row i (i < ℓ) has phase
//! −μ·s·Bg^-(i+1) + e ("mask rows") and row ℓ+i has phase μ·Bg^-(i+1) + e ("body rows"). The external
//! product decomposes a TRLWE (a, b) into balanced digits and returns Σ dec(a)_i·row_i + Σ dec(b)_i·row_{ℓ+i},
//! whose phase is μ·φ(c) plus noise. Rows are stored as Fourier polynomials so each product costs 2ℓ
//! forward and 2 inverse transforms.

use crate::fft::{interleaved_index, Ahead, FftPlan};
use crate::torus::{Gadget, Torus};
use crate::trlwe::Trlwe;
use crate::Error;
use std::marker::PhantomData;

/// A TRGSW sample in Fourier form: 2ℓ rows × (a, b) × N f64, row-interleaved in the order the external
/// product reads them ([`crate::fft::interleaved_index`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TrgswFft<T> {
    pub(crate) n: usize,
    pub(crate) gadget: Gadget,
    pub(crate) data: Vec<f64>,
    pub(crate) _t: PhantomData<T>,
}

/// Level-1 TRGSW (CMUX selector).
pub type TrgswLvl1 = TrgswFft<u32>;

/// Reusable buffers for external products of degree N with ℓ levels (one per thread/call).
#[derive(Debug)]
pub struct ExtScratch {
    levels: usize,
    /// Row stride of `dec`: N + [`crate::fft::ROW_PAD`].
    stride: usize,
    /// 2ℓ transformed digit polynomials, row r at r·stride.
    dec: Vec<f64>,
    acc_a: Vec<f64>,
    acc_b: Vec<f64>,
}

impl ExtScratch {
    /// Buffers for degree `n` and `gadget`.
    pub fn new(n: usize, gadget: Gadget) -> Self {
        let l = gadget.levels as usize;
        let stride = n + crate::fft::ROW_PAD;
        ExtScratch {
            levels: l,
            stride,
            dec: vec![0.0; 2 * stride * l],
            acc_a: vec![0.0; n],
            acc_b: vec![0.0; n],
        }
    }
}

impl<T: Torus> TrgswFft<T> {
    /// Builds the Fourier form from 2ℓ coefficient-domain rows.
    pub(crate) fn from_rows(plan: &FftPlan, gadget: Gadget, rows: &[Trlwe<T>]) -> Self {
        let n = plan.n();
        let (m, nr) = (n / 2, rows.len());
        let w = m.min(4);
        let mut data = vec![0.0; nr * 2 * n];
        let mut f = vec![0.0; n];
        for (r, row) in rows.iter().enumerate() {
            for (poly, coeffs) in [&row.a, &row.b].into_iter().enumerate() {
                plan.forward_torus(&mut f, coeffs);
                for j in 0..m {
                    let i = interleaved_index(n, nr, r, poly, j);
                    data[i] = f[j];
                    data[i + w] = f[m + j];
                }
            }
        }
        TrgswFft {
            n,
            gadget,
            data,
            _t: PhantomData,
        }
    }

    /// Ring degree.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The Fourier data (2ℓ rows × (a, b) × N values, in the interleaved order the external product
    /// reads), to send a sample to another process.
    pub fn fourier_data(&self) -> &[f64] {
        &self.data
    }

    /// A sample from the data [`Self::fourier_data`] gave, for degree `n` and `gadget`: the length
    /// must be 2ℓ·2·N and every value finite.
    pub fn from_fourier_data(n: usize, gadget: Gadget, data: Vec<f64>) -> Result<Self, Error> {
        let want = (2 * gadget.levels as usize)
            .checked_mul(2 * n)
            .ok_or_else(|| Error::Dimension("TRGSW size overflows".into()))?;
        if !n.is_power_of_two() || n < 8 || gadget.levels == 0 || data.len() != want {
            return Err(Error::Dimension(format!(
                "a TRGSW of degree {n} with {} levels has {want} Fourier values, got {}",
                gadget.levels,
                data.len()
            )));
        }
        if data.iter().any(|x| !x.is_finite()) {
            return Err(Error::Format(
                "a TRGSW with a non-finite Fourier value".into(),
            ));
        }
        Ok(TrgswFft {
            n,
            gadget,
            data,
            _t: PhantomData,
        })
    }

    /// The gadget of the rows.
    pub fn gadget(&self) -> Gadget {
        self.gadget
    }

    /// TRGSW(1 − μ) from TRGSW(μ): the trivial gadget matrix minus this sample, computed in the Fourier
    /// domain (the transform of a constant c is c at every point).
    pub fn complement(&self) -> Self {
        let n = self.n;
        let l = self.gadget.levels as usize;
        let mut data: Vec<f64> = self.data.iter().map(|x| -x).collect();
        for i in 0..l {
            let g = self.gadget.g::<T>(i).to_signed_f64();
            // Row i: + g on the mask polynomial; row ℓ+i: + g on the body polynomial (real parts only).
            for j in 0..n / 2 {
                data[interleaved_index(n, 2 * l, i, 0, j)] += g;
                data[interleaved_index(n, 2 * l, l + i, 1, j)] += g;
            }
        }
        TrgswFft {
            n,
            gadget: self.gadget,
            data,
            _t: PhantomData,
        }
    }

    /// out = self ⊡ c (out is overwritten). Degrees must match (checked by callers).
    pub(crate) fn external_product_into(
        &self,
        plan: &FftPlan,
        c: &Trlwe<T>,
        out: &mut Trlwe<T>,
        s: &mut ExtScratch,
    ) {
        self.external_mac(plan, c, s);
        plan.backward_torus(&mut out.a, &mut s.acc_a);
        plan.backward_torus(&mut out.b, &mut s.acc_b);
    }

    /// out += self ⊡ c: [`TrgswFft::external_product_into`] and an add, the same words bit for bit,
    /// with the product rounded and added by the inverse transforms' last pass where the kernel has
    /// that ([`FftPlan::backward_add`]). Degrees must match (checked by callers).
    pub(crate) fn external_product_add_into(
        &self,
        plan: &FftPlan,
        c: &Trlwe<T>,
        out: &mut Trlwe<T>,
        s: &mut ExtScratch,
    ) {
        self.external_mac(plan, c, s);
        let mut ahead = Ahead::new(&[], 1);
        backward_add_words(plan, &mut out.a, &mut s.acc_a, &mut ahead);
        backward_add_words(plan, &mut out.b, &mut s.acc_b, &mut ahead);
    }

    /// out += self ⊡ (when1 − when0) (the CMUX's product), the same words bit for bit as forming the
    /// difference and running [`TrgswFft::external_product_add_into`], but with the difference, its
    /// decomposition and the first forward pass fused where the kernel has that
    /// ([`FftPlan::rot_dec_forward`]). Degrees must match (checked by callers).
    pub(crate) fn diff_product_add_into(
        &self,
        plan: &FftPlan,
        when1: &Trlwe<T>,
        when0: &Trlwe<T>,
        out: &mut Trlwe<T>,
        s: &mut ExtScratch,
    ) {
        if !self.input_transforms_fused(plan, when1, Some(when0), s) {
            let mut diff = when1.clone();
            diff.combine(when0, T::sub);
            self.input_transforms(plan, &diff, s);
        }
        plan.mul_acc_rows_strided(&mut s.acc_a, &mut s.acc_b, &s.dec, s.stride, &self.data);
        let mut ahead = Ahead::new(&[], 1);
        backward_add_words(plan, &mut out.a, &mut s.acc_a, &mut ahead);
        backward_add_words(plan, &mut out.b, &mut s.acc_b, &mut ahead);
    }

    /// The Fourier-domain part of self ⊡ c: the digits of c transformed (fused where the kernel has
    /// that, [`TrgswFft::input_transforms_fused`]) and multiplied into `s.acc_a`, `s.acc_b`.
    fn external_mac(&self, plan: &FftPlan, c: &Trlwe<T>, s: &mut ExtScratch) {
        if !self.input_transforms_fused(plan, c, None, s) {
            self.input_transforms(plan, c, s);
        }
        plan.mul_acc_rows_strided(&mut s.acc_a, &mut s.acc_b, &s.dec, s.stride, &self.data);
    }

    /// The forward transforms of the digits of c − minus (c where `minus` is None) into `s.dec`, the
    /// difference, decomposition and first forward pass in one kernel ([`FftPlan::rot_dec_forward`]
    /// with k = 0: the digits never go through memory), prefetching this TRGSW's key for the MAC
    /// meanwhile. Returns false, doing nothing, where the kernel has no such fused pass; the caller
    /// then runs [`TrgswFft::input_transforms`] (the same values bit for bit: `tests::
    /// fused_input_transforms_match_unfused`).
    fn input_transforms_fused(
        &self,
        plan: &FftPlan,
        c: &Trlwe<T>,
        minus: Option<&Trlwe<T>>,
        s: &mut ExtScratch,
    ) -> bool {
        let (Some(a), Some(b)) = (T::as_u32_slice(&c.a), T::as_u32_slice(&c.b)) else {
            return false;
        };
        let (minus_a, minus_b) = match minus {
            None => (None, None),
            Some(x) => match (T::as_u32_slice(&x.a), T::as_u32_slice(&x.b)) {
                (Some(xa), Some(xb)) => (Some(xa), Some(xb)),
                _ => return false,
            },
        };
        let l = self.gadget.levels as usize;
        let mut ahead = Ahead::new(&self.data, 2 * l * plan.ahead_steps());
        let stride = s.stride;
        let (dec_a, dec_b) = s.dec.split_at_mut(l * stride);
        // Both calls see the same shape: the second runs exactly where the first did.
        plan.rot_dec_forward(self.gadget, a, 0, minus_a, dec_a, stride, &mut ahead)
            && plan.rot_dec_forward(self.gadget, b, 0, minus_b, dec_b, stride, &mut ahead)
    }

    /// The forward transforms of the digits of c into `s.dec`, step by step: decomposition, then
    /// one transform per digit polynomial.
    fn input_transforms(&self, plan: &FftPlan, c: &Trlwe<T>, s: &mut ExtScratch) {
        let n = self.n;
        let l = self.gadget.levels as usize;
        let half = n / 2;
        // Digits of a then of b, row r of the TRGSW pairs with digit polynomial r. Each transform
        // prefetches its share of the key, which mul_acc_rows then reads (from L2 instead of DRAM).
        let mut shares = self.data.chunks(self.data.len().div_ceil(2 * l).max(1));
        let stride = s.stride;
        for (part, poly) in [&c.a, &c.b].into_iter().enumerate() {
            let dec = &mut s.dec[part * l * stride..(part + 1) * l * stride];
            self.gadget.decompose_poly_f64_strided(poly, dec, stride);
            for buf in dec.chunks_exact_mut(stride) {
                let (re, im) = buf[..n].split_at_mut(half);
                plan.forward_in_place_ahead(re, im, shares.next().unwrap_or(&[]));
            }
        }
    }

    /// One blind-rotation step, acc ← acc + self ⊡ (X^k·acc − acc) (a CMUX between acc and X^k·acc on
    /// the bit this sample encrypts), with the rotation, decomposition and first transform pass fused
    /// where the FFT kernel has that ([`FftPlan::rot_dec_forward`]) and the product added to acc as it
    /// is rounded. Returns false, leaving acc alone, where it has no fused kernel; the caller then runs
    /// the step through [`TrgswFft::external_product_into`] (the same result, bit for bit).
    ///
    /// `next` is the Fourier data the caller reads after this step (the next bootstrapping-key TRGSW,
    /// or empty): the transforms prefetch it into L2 over the step, so that it has a whole step to
    /// arrive from DRAM.
    pub(crate) fn rotate_step_fused(
        &self,
        plan: &FftPlan,
        acc: &mut Trlwe<T>,
        k: usize,
        s: &mut ExtScratch,
        next: &[f64],
    ) -> bool {
        let l = self.gadget.levels as usize;
        if T::BITS == 64 {
            self.rotate_step_level2(plan, acc, k, s, next);
            return true;
        }
        let (Some(a), Some(b)) = (T::as_u32_slice(&acc.a), T::as_u32_slice(&acc.b)) else {
            return false;
        };
        // The transforms prefetch the next step's key, spread over the step's 2ℓ + 2 transforms.
        let mut ahead = Ahead::new(next, (2 * l + 2) * plan.ahead_steps());
        let stride = s.stride;
        let (dec_a, dec_b) = s.dec.split_at_mut(l * stride);
        if !plan.rot_dec_forward(self.gadget, a, k, Some(a), dec_a, stride, &mut ahead)
            || !plan.rot_dec_forward(self.gadget, b, k, Some(b), dec_b, stride, &mut ahead)
        {
            return false;
        }
        plan.mul_acc_rows_strided(&mut s.acc_a, &mut s.acc_b, &s.dec, stride, &self.data);
        backward_add_words(plan, &mut acc.a, &mut s.acc_a, &mut ahead);
        backward_add_words(plan, &mut acc.b, &mut s.acc_b, &mut ahead);
        true
    }

    /// [`TrgswFft::rotate_step_fused`] on the 64-bit torus (level 2, every kernel): with AVX-512 and
    /// N = 2048 the rotation X^k·acc − acc, its decomposition and the first forward pass run in one
    /// kernel ([`FftPlan::rot_dec_forward_u64`]: the digits never go through memory); otherwise
    /// X^k·acc − acc is formed and decomposed a chunk of coefficients at a time (no rotated copy of
    /// acc). The transforms step one prefetch stream over the next key, and the product is rounded
    /// and added to acc in one pass. The same operations on the same values as rotating, running
    /// [`TrgswFft::external_product_into`] and adding, so the same result bit for bit
    /// (`tests::level2_step_matches_unfused`).
    fn rotate_step_level2(
        &self,
        plan: &FftPlan,
        acc: &mut Trlwe<T>,
        k: usize,
        s: &mut ExtScratch,
        next: &[f64],
    ) {
        let l = self.gadget.levels as usize;
        let mut ahead = Ahead::new(next, (2 * l + 2) * plan.ahead_steps());
        self.level2_forward(plan, acc, k, s, &mut ahead);
        plan.mul_acc_rows_strided(&mut s.acc_a, &mut s.acc_b, &s.dec, s.stride, &self.data);
        backward_add_words(plan, &mut acc.a, &mut s.acc_a, &mut ahead);
        backward_add_words(plan, &mut acc.b, &mut s.acc_b, &mut ahead);
    }

    /// The first half of [`TrgswFft::rotate_step_fused`]'s level-2 step: the transformed digits of
    /// X^k·acc − acc into `s.dec` (fused where the plan has [`FftPlan::rot_dec_forward_u64`]).
    fn level2_forward(
        &self,
        plan: &FftPlan,
        acc: &Trlwe<T>,
        k: usize,
        s: &mut ExtScratch,
        ahead: &mut Ahead,
    ) {
        let n = self.n;
        let l = self.gadget.levels as usize;
        let stride = s.stride;
        for (part, poly) in [&acc.a, &acc.b].into_iter().enumerate() {
            let dec = &mut s.dec[part * l * stride..(part + 1) * l * stride];
            let any: &dyn std::any::Any = poly;
            let fused = any.downcast_ref::<Vec<u64>>().is_some_and(|words| {
                plan.rot_dec_forward_u64(self.gadget, words, k % (2 * n), dec, stride, ahead)
            });
            if fused {
                continue;
            }
            rot_decompose(self.gadget, poly, k, dec, stride);
            for buf in dec.chunks_exact_mut(stride) {
                let (re, im) = buf[..n].split_at_mut(n / 2);
                plan.forward_in_place_stepping(re, im, ahead);
            }
        }
    }

    /// [`TrgswFft::rotate_steps_level2`] on either torus: on the 32-bit one (level 1, the gate
    /// batches) with the fused rotation, decomposition and first forward pass of
    /// [`FftPlan::rot_dec_forward`] for every step, then one grouped MAC, then the inverse
    /// transforms, each accumulator stepped as [`TrgswFft::rotate_step_fused`] steps it, bit for
    /// bit. Returns false, leaving every accumulator alone, where the plan has no fused forward
    /// kernel for this degree and gadget (the caller then steps them one at a time).
    ///
    /// # Panics
    /// If `scratch` is shorter than `steps`.
    pub(crate) fn rotate_steps_grouped(
        &self,
        plan: &FftPlan,
        steps: &mut [(&mut Trlwe<T>, usize, &[f64])],
        scratch: &mut [ExtScratch],
    ) -> bool {
        if T::BITS == 64 {
            self.rotate_steps_level2(plan, steps, scratch);
            return true;
        }
        assert!(scratch.len() >= steps.len(), "one scratch per step");
        let l = self.gadget.levels as usize;
        let mut aheads: Vec<Ahead> = Vec::with_capacity(steps.len());
        for ((acc, k, next), s) in steps.iter().zip(scratch.iter_mut()) {
            let (Some(a), Some(b)) = (T::as_u32_slice(&acc.a), T::as_u32_slice(&acc.b)) else {
                return false;
            };
            let mut ahead = Ahead::new(next, (2 * l + 2) * plan.ahead_steps());
            let stride = s.stride;
            let (dec_a, dec_b) = s.dec.split_at_mut(l * stride);
            // Only the scratch is written before the MAC, so a plan without the fused kernel
            // (the same answer for every step) leaves the accumulators alone.
            if !plan.rot_dec_forward(self.gadget, a, *k, Some(a), dec_a, stride, &mut ahead)
                || !plan.rot_dec_forward(self.gadget, b, *k, Some(b), dec_b, stride, &mut ahead)
            {
                return false;
            }
            aheads.push(ahead);
        }
        self.mac_and_inverse(plan, steps, scratch, &mut aheads);
        true
    }

    /// Blind-rotation steps of several 64-bit-torus accumulators on this key (a batch's samples
    /// whose step is not skipped): `steps[i]` = (acc, k, next) is stepped as
    /// [`TrgswFft::rotate_step_fused`]`(plan, acc, k, scratch, next)` steps it, bit for bit, but all
    /// the forward transforms run first and one MAC then reads the key once per
    /// [`crate::fft::MAC_GROUP`] samples ([`FftPlan::mul_acc_rows_strided_group`]) before the
    /// inverse transforms. `scratch` needs one [`ExtScratch`] (of this key's degree and gadget) per
    /// step.
    ///
    /// # Panics
    /// If `T` is not the 64-bit torus or `scratch` is shorter than `steps`.
    pub(crate) fn rotate_steps_level2(
        &self,
        plan: &FftPlan,
        steps: &mut [(&mut Trlwe<T>, usize, &[f64])],
        scratch: &mut [ExtScratch],
    ) {
        assert!(
            T::BITS == 64 && scratch.len() >= steps.len(),
            "rotate_steps_level2: 64-bit torus and one scratch per step"
        );
        let l = self.gadget.levels as usize;
        let mut aheads: Vec<Ahead> = Vec::with_capacity(steps.len());
        for ((acc, k, next), s) in steps.iter().zip(scratch.iter_mut()) {
            let mut ahead = Ahead::new(next, (2 * l + 2) * plan.ahead_steps());
            self.level2_forward(plan, acc, *k, s, &mut ahead);
            aheads.push(ahead);
        }
        self.mac_and_inverse(plan, steps, scratch, &mut aheads);
    }

    /// The second half of grouped steps: one MAC of every step's transformed digits with this key
    /// (the key read once per [`crate::fft::MAC_GROUP`] samples), then each accumulator's inverse
    /// transforms added into it.
    fn mac_and_inverse(
        &self,
        plan: &FftPlan,
        steps: &mut [(&mut Trlwe<T>, usize, &[f64])],
        scratch: &mut [ExtScratch],
        aheads: &mut [Ahead],
    ) {
        let stride = scratch[0].stride;
        let mut outs: Vec<(&mut [f64], &mut [f64], &[f64])> = scratch[..steps.len()]
            .iter_mut()
            .map(|s| (&mut s.acc_a[..], &mut s.acc_b[..], &s.dec[..]))
            .collect();
        plan.mul_acc_rows_strided_group(&mut outs, stride, &self.data);
        for (((acc, _, _), s), ahead) in steps
            .iter_mut()
            .zip(scratch.iter_mut())
            .zip(aheads.iter_mut())
        {
            backward_add_words(plan, &mut acc.a, &mut s.acc_a, ahead);
            backward_add_words(plan, &mut acc.b, &mut s.acc_b, ahead);
        }
    }

    /// The external product self ⊡ c (allocates its scratch).
    pub fn external_product(&self, c: &Trlwe<T>) -> Result<Trlwe<T>, Error> {
        if c.degree() != self.n {
            return Err(Error::Dimension(format!(
                "TRGSW degree {} vs TRLWE {}",
                self.n,
                c.degree()
            )));
        }
        let plan = crate::fft::plan(self.n);
        let mut out = Trlwe::zero(self.n);
        let mut s = ExtScratch::new(self.n, self.gadget);
        self.external_product_into(&plan, c, &mut out, &mut s);
        Ok(out)
    }

    /// [`TrgswFft::external_product`] with caller-provided scratch (hot loops, demultiplexer trees).
    pub fn external_product_with(
        &self,
        c: &Trlwe<T>,
        s: &mut ExtScratch,
    ) -> Result<Trlwe<T>, Error> {
        if c.degree() != self.n
            || s.acc_a.len() != self.n
            || s.levels != self.gadget.levels as usize
        {
            return Err(Error::Dimension(
                "external product operand, selector and scratch must share N and ℓ".into(),
            ));
        }
        let plan = crate::fft::plan(self.n);
        let mut out = Trlwe::zero(self.n);
        self.external_product_into(&plan, c, &mut out, s);
        Ok(out)
    }

    /// CMUX(self, when1, when0) = when0 + self ⊡ (when1 − when0): when1 if the TRGSW encrypts 1,
    /// when0 if it encrypts 0.
    pub fn cmux(&self, when1: &Trlwe<T>, when0: &Trlwe<T>) -> Result<Trlwe<T>, Error> {
        let mut s = ExtScratch::new(self.n, self.gadget);
        self.cmux_with(when1, when0, &mut s)
    }

    /// [`TrgswFft::cmux`] with caller-provided scratch (hot loops, CMUX trees).
    pub fn cmux_with(
        &self,
        when1: &Trlwe<T>,
        when0: &Trlwe<T>,
        s: &mut ExtScratch,
    ) -> Result<Trlwe<T>, Error> {
        when1.check(when0)?;
        if when0.degree() != self.n
            || s.acc_a.len() != self.n
            || s.levels != self.gadget.levels as usize
        {
            return Err(Error::Dimension(
                "CMUX operands, selector and scratch must share N and ℓ".into(),
            ));
        }
        let plan = crate::fft::plan(self.n);
        let mut out = when0.clone();
        self.diff_product_add_into(&plan, when1, when0, &mut out, s);
        Ok(out)
    }

    /// Encrypts the integer μ (a constant polynomial) under `key` (with Fourier form `key_fft`).
    pub(crate) fn encrypt_const<R1: rand_core::RngCore, R2: rand_core::RngCore>(
        plan: &FftPlan,
        key: (&[i32], &[f64]),
        gadget: Gadget,
        mu: i64,
        sigma: f64,
        rngs: (&mut R1, &mut R2),
    ) -> Self {
        let (mask_rng, noise_rng) = rngs;
        let rows: Vec<Trlwe<T>> = (0..2 * gadget.levels as usize)
            .map(|r| {
                let m = crate::keygen::gadget_row_message::<T>(gadget, r, mu, key.0);
                crate::trlwe::encrypt(plan, key.1, &m, sigma, mask_rng, noise_rng)
            })
            .collect();
        Self::from_rows(plan, gadget, &rows)
    }
}

/// Coefficients per chunk of [`rot_decompose`] (2 KiB of u64 words: stays in L1 between the
/// rotation and the decomposition).
const ROT_CHUNK: usize = 256;

/// poly += the inverse transform of `prod` (destroyed), rounded: [`FftPlan::backward_add`] on 32- and
/// 64-bit words (the last inverse pass adds where the kernel has that), else the inverse transform
/// and [`Torus::add_f64_slice`] (the same rounding); `ahead` is stepped meanwhile.
// A Vec, not a slice: the 64-bit words are found by downcasting it (a slice is not `Any`).
#[allow(clippy::ptr_arg)]
pub(crate) fn backward_add_words<T: Torus>(
    plan: &FftPlan,
    poly: &mut Vec<T>,
    prod: &mut [f64],
    ahead: &mut Ahead,
) {
    if let Some(words) = T::as_u32_slice_mut(poly) {
        plan.backward_add(words, prod, ahead);
        return;
    }
    let any: &mut dyn std::any::Any = poly;
    if let Some(words) = any.downcast_mut::<Vec<u64>>() {
        plan.backward_add(words, prod, ahead);
        return;
    }
    plan.backward_in_place_ahead(prod, ahead);
    T::add_f64_slice(poly, prod);
}

/// The gadget digits of X^k·p − p (negacyclic, k < 2N) into `out` (level i at i·stride, stride ≥ N),
/// ROT_CHUNK coefficients at a time: each chunk is rotated into a small buffer and decomposed by
/// [`Gadget::decompose_poly_f64_strided`], so the digits are exactly those of
/// `mul_monomial_minus_one` followed by that decomposition.
fn rot_decompose<T: Torus>(g: Gadget, p: &[T], k: usize, out: &mut [f64], stride: usize) {
    let n = p.len();
    let k = k % (2 * n);
    // X^k = −X^(k−N) for k ≥ N; coefficients j < kk wrap around (one more sign change).
    let (kk, neg) = if k >= n { (k - n, true) } else { (k, false) };
    let mut tmp = [T::zero(); ROT_CHUNK];
    for j0 in (0..n).step_by(ROT_CHUNK) {
        let c = ROT_CHUNK.min(n - j0);
        let split = kk.clamp(j0, j0 + c);
        let (wrap, rest) = tmp[..c].split_at_mut(split - j0);
        let sign = |v: T, negate: bool| if negate { v.neg() } else { v };
        // Coefficients j0..split (< kk) come from p[j + N − kk], the others from p[j − kk].
        if !wrap.is_empty() {
            let src = &p[j0 + n - kk..split + n - kk];
            for ((t, &v), &x) in wrap.iter_mut().zip(src).zip(&p[j0..split]) {
                *t = sign(v, !neg).sub(x);
            }
        }
        if !rest.is_empty() {
            let src = &p[split - kk..j0 + c - kk];
            for ((t, &v), &x) in rest.iter_mut().zip(src).zip(&p[split..j0 + c]) {
                *t = sign(v, neg).sub(x);
            }
        }
        g.decompose_poly_f64_strided(&tmp[..c], &mut out[j0..], stride);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fft::{FftPlan, Kernel};
    use crate::trlwe::mul_monomial_minus_one;

    /// Pseudo-random words (xorshift) for the kernels' tests.
    pub(crate) fn words(n: usize, seed: u32) -> Vec<u32> {
        let mut x = seed.wrapping_mul(0x9e37_79b9) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x
            })
            .collect()
    }

    /// g ⊡ c by the unfused path: decompose, transform each digit polynomial, MAC, inverse.
    fn product_unfused(g: &TrgswFft<u32>, plan: &FftPlan, c: &Trlwe<u32>) -> Trlwe<u32> {
        let n = c.a.len();
        let mut s = ExtScratch::new(n, g.gadget);
        g.input_transforms(plan, c, &mut s);
        plan.mul_acc_rows_strided(&mut s.acc_a, &mut s.acc_b, &s.dec, s.stride, &g.data);
        let mut prod = Trlwe::zero(n);
        plan.backward_torus(&mut prod.a, &mut s.acc_a);
        plan.backward_torus(&mut prod.b, &mut s.acc_b);
        prod
    }

    /// The step by the unfused path: rotate, external product (decompose, transform, MAC, inverse), add.
    fn step_reference(g: &TrgswFft<u32>, plan: &FftPlan, acc: &Trlwe<u32>, k: usize) -> Trlwe<u32> {
        let n = acc.a.len();
        let mut tmp = Trlwe::zero(n);
        mul_monomial_minus_one(&mut tmp.a, &acc.a, k);
        mul_monomial_minus_one(&mut tmp.b, &acc.b, k);
        let mut out = acc.clone();
        out.add_assign_unchecked(&product_unfused(g, plan, &tmp));
        out
    }

    /// The CMUX's and the external product's fused input transforms (difference, decomposition and
    /// first forward pass in one kernel) give the unfused path's transformed digits bit for bit, and
    /// so the same CMUX and external product, for the RAM's gadgets and a BK-like one, with every
    /// kernel (only AVX-512 has the fused pass; the others must decline and leave the scratch
    /// alone); the results are within rounding of the portable kernel's.
    #[test]
    fn fused_input_transforms_match_unfused() {
        let n = 1024;
        let portable = FftPlan::with_kernel(n, Kernel::Portable);
        for (gi, gadget) in [(4, 3), (7, 2), (2, 8)]
            .map(|(levels, base_bits)| Gadget { levels, base_bits })
            .into_iter()
            .enumerate()
        {
            let gi = gi as u32;
            let rows: Vec<Trlwe<u32>> = (0..2 * gadget.levels)
                .map(|r| Trlwe {
                    a: words(n, 10 * r + 3),
                    b: words(n, 10 * r + 4),
                })
                .collect();
            let (when1, when0) = (
                Trlwe {
                    a: words(n, 50 + gi),
                    b: words(n, 60 + gi),
                },
                Trlwe {
                    a: words(n, 70 + gi),
                    b: words(n, 80 + gi),
                },
            );
            let mut diff = when1.clone();
            diff.sub_assign(&when0).unwrap();
            let gp = TrgswFft::<u32>::from_rows(&portable, gadget, &rows);
            let mut want_port = when0.clone();
            want_port.add_assign_unchecked(&product_unfused(&gp, &portable, &diff));
            for kernel in Kernel::available() {
                let plan = FftPlan::with_kernel(n, kernel);
                let g = TrgswFft::<u32>::from_rows(&plan, gadget, &rows);
                let mut want = ExtScratch::new(n, gadget);
                g.input_transforms(&plan, &diff, &mut want);
                for minus in [Some(&when0), None] {
                    let c = if minus.is_some() { &when1 } else { &diff };
                    let mut got = ExtScratch::new(n, gadget);
                    got.dec.fill(0.25);
                    let fused = g.input_transforms_fused(&plan, c, minus, &mut got);
                    assert_eq!(
                        fused,
                        kernel == Kernel::Avx512,
                        "{kernel:?}: fused availability"
                    );
                    if !fused {
                        assert!(
                            got.dec.iter().all(|&x| x == 0.25),
                            "declined: dec untouched"
                        );
                        continue;
                    }
                    for (r, (x, y)) in got
                        .dec
                        .chunks(got.stride)
                        .zip(want.dec.chunks(want.stride))
                        .enumerate()
                    {
                        let bits =
                            |v: &[f64]| v[..n].iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(x), bits(y), "{gadget:?}, row {r}: fused vs unfused");
                    }
                }
                let mut prod = Trlwe::zero(n);
                g.external_product_into(&plan, &diff, &mut prod, &mut ExtScratch::new(n, gadget));
                assert_eq!(
                    prod,
                    product_unfused(&g, &plan, &diff),
                    "{kernel:?}: product"
                );
                if plan.kernel() != crate::fft::plan(n).kernel() {
                    continue;
                }
                // cmux_with runs on the shared plan (this kernel): when0 + g ⊡ (when1 − when0).
                let mut unfused = when0.clone();
                unfused.add_assign_unchecked(&product_unfused(&g, &plan, &diff));
                let got = g
                    .cmux_with(&when1, &when0, &mut ExtScratch::new(n, gadget))
                    .unwrap();
                assert_ne!(got, when0, "the CMUX changed its input");
                assert_eq!(got, unfused, "{gadget:?}: CMUX fused vs unfused");
                for (x, y) in got
                    .a
                    .iter()
                    .chain(&got.b)
                    .zip(want_port.a.iter().chain(&want_port.b))
                {
                    let d = x.wrapping_sub(*y) as i32;
                    assert!(
                        d.abs() <= 2,
                        "{gadget:?}: {d} units from the portable kernel"
                    );
                }
            }
        }
    }

    /// The fused blind-rotation step (rotation, decomposition and first transform pass in one kernel,
    /// the product added as it is rounded) gives the unfused path's result bit for bit, for rotations
    /// with and without a wrap (k < N, k ≥ N, blocks straddling the wrap) and both BK-like gadgets;
    /// and it is within rounding of the portable kernel's. Where the CPU has no AVX-512 it must decline.
    #[test]
    fn fused_rotate_step_matches_unfused_and_portable() {
        let n = 1024;
        let plan = crate::fft::plan(n);
        let portable = FftPlan::with_kernel(n, Kernel::Portable);
        for (gi, gadget) in [
            Gadget {
                levels: 2,
                base_bits: 8,
            },
            Gadget {
                levels: 3,
                base_bits: 6,
            },
        ]
        .into_iter()
        .enumerate()
        {
            let rows: Vec<Trlwe<u32>> = (0..2 * gadget.levels)
                .map(|r| Trlwe {
                    a: words(n, 10 * r + 1),
                    b: words(n, 10 * r + 2),
                })
                .collect();
            let g = TrgswFft::<u32>::from_rows(&plan, gadget, &rows);
            let gp = TrgswFft::<u32>::from_rows(&portable, gadget, &rows);
            let acc0 = Trlwe {
                a: words(n, 77 + gi as u32),
                b: words(n, 78 + gi as u32),
            };
            for k in [
                1, 3, 8, 13, 255, 511, 512, 1000, 1023, 1024, 1029, 1536, 2040, 2047,
            ] {
                let want = step_reference(&g, &plan, &acc0, k);
                let mut got = acc0.clone();
                let mut s = ExtScratch::new(n, gadget);
                let fused = g.rotate_step_fused(&plan, &mut got, k, &mut s, &g.data);
                assert_eq!(
                    fused,
                    plan.kernel() == Kernel::Avx512,
                    "fused path availability"
                );
                if !fused {
                    assert_eq!(got, acc0, "a declined step leaves acc alone");
                    continue;
                }
                assert_ne!(got, acc0, "k = {k}: the step changed acc");
                assert_eq!(got, want, "k = {k}, gadget {gadget:?}: fused vs unfused");
                let port = step_reference(&gp, &portable, &acc0, k);
                for (x, y) in got.a.iter().chain(&got.b).zip(port.a.iter().chain(&port.b)) {
                    let d = x.wrapping_sub(*y) as i32;
                    assert!(d.abs() <= 2, "k = {k}: {d} units from the portable kernel");
                }
            }
        }
    }

    /// The level-2 step (64-bit torus, N = 2048: chunked rotation and decomposition, one prefetch
    /// stream, rounding fused with the add) gives the unfused path's result bit for bit (rotate,
    /// external product, add), with every kernel, for rotations with and without a wrap (k < N,
    /// k ≥ N, chunks straddling the wrap point), for the default BK2 gadget and a three-level one.
    #[test]
    fn level2_step_matches_unfused() {
        for n in [512, 1024, 2048, 8192] {
            level2_step_case(n);
        }
    }

    /// Grouped level-2 steps ([`TrgswFft::rotate_steps_level2`]: all forward transforms, one MAC
    /// reading the key once per group, the inverse transforms) give each accumulator what its own
    /// [`TrgswFft::rotate_step_fused`] gives it, bit for bit, for groups of 1 to 6 (past
    /// `MAC_GROUP`, so a full group and a remainder) with different rotations, on every kernel,
    /// at N = 2048 (the fused AVX-512 step) and N = 1024 (the chunked one).
    #[test]
    fn level2_grouped_steps_match_single() {
        let wide = |len: usize, seed: u32| -> Vec<u64> {
            let (hi, lo) = (words(len, seed), words(len, seed ^ 0x5555));
            hi.iter()
                .zip(&lo)
                .map(|(&h, &l)| ((h as u64) << 32) | l as u64)
                .collect()
        };
        let gadget = Gadget {
            levels: 2,
            base_bits: 15,
        };
        for n in [1024, 2048] {
            for kernel in Kernel::available() {
                let plan = FftPlan::with_kernel(n, kernel);
                let rows: Vec<Trlwe<u64>> = (0..2 * gadget.levels)
                    .map(|r| Trlwe {
                        a: wide(n, 10 * r + 3),
                        b: wide(n, 10 * r + 4),
                    })
                    .collect();
                let g = TrgswFft::<u64>::from_rows(&plan, gadget, &rows);
                let accs: Vec<Trlwe<u64>> = (0..6u32)
                    .map(|i| Trlwe {
                        a: wide(n, 200 + 2 * i),
                        b: wide(n, 201 + 2 * i),
                    })
                    .collect();
                let ks = [3usize, n - 1, n, n + 5, 2 * n - 8, 17];
                let want: Vec<Trlwe<u64>> = accs
                    .iter()
                    .zip(ks)
                    .map(|(acc, k)| {
                        let mut acc = acc.clone();
                        let mut s = ExtScratch::new(n, gadget);
                        assert!(g.rotate_step_fused(&plan, &mut acc, k, &mut s, &[]));
                        acc
                    })
                    .collect();
                for size in 1..=accs.len() {
                    let mut got = accs[..size].to_vec();
                    let mut scratch: Vec<ExtScratch> =
                        (0..size).map(|_| ExtScratch::new(n, gadget)).collect();
                    let mut steps: Vec<(&mut Trlwe<u64>, usize, &[f64])> = got
                        .iter_mut()
                        .zip(ks)
                        .map(|(acc, k)| (acc, k, &g.data[..]))
                        .collect();
                    g.rotate_steps_level2(&plan, &mut steps, &mut scratch);
                    assert_eq!(got, want[..size], "n = {n}, {kernel:?}, group of {size}");
                }
            }
        }
    }

    /// [`level2_step_matches_unfused`] at degree n (2048, 8192 and 512 take the fused AVX-512 kernel
    /// with a radix-16, a radix-16 then radix-4, and a radix-4 first pass; 1024 the chunked path).
    fn level2_step_case(n: usize) {
        let wide = |len: usize, seed: u32| -> Vec<u64> {
            let (hi, lo) = (words(len, seed), words(len, seed ^ 0x5555));
            hi.iter()
                .zip(&lo)
                .map(|(&h, &l)| ((h as u64) << 32) | l as u64)
                .collect()
        };
        for kernel in Kernel::available() {
            let plan = FftPlan::with_kernel(n, kernel);
            for (gi, gadget) in [
                Gadget {
                    levels: 2,
                    base_bits: 15,
                },
                Gadget {
                    levels: 3,
                    base_bits: 10,
                },
            ]
            .into_iter()
            .enumerate()
            {
                let rows: Vec<Trlwe<u64>> = (0..2 * gadget.levels)
                    .map(|r| Trlwe {
                        a: wide(n, 10 * r + 1),
                        b: wide(n, 10 * r + 2),
                    })
                    .collect();
                let g = TrgswFft::<u64>::from_rows(&plan, gadget, &rows);
                let acc0 = Trlwe {
                    a: wide(n, 77 + gi as u32),
                    b: wide(n, 78 + gi as u32),
                };
                for k in [
                    1, 5, 255, 256, 257, 1000, 2047, 2048, 2049, 2300, 3071, 4095,
                ]
                .map(|k| k * n / 2048 + k % 3)
                {
                    let mut tmp = Trlwe::zero(n);
                    mul_monomial_minus_one(&mut tmp.a, &acc0.a, k);
                    mul_monomial_minus_one(&mut tmp.b, &acc0.b, k);
                    let mut prod = Trlwe::zero(n);
                    g.external_product_into(
                        &plan,
                        &tmp,
                        &mut prod,
                        &mut ExtScratch::new(n, gadget),
                    );
                    let mut want = acc0.clone();
                    want.add_assign_unchecked(&prod);
                    let mut got = acc0.clone();
                    let mut s = ExtScratch::new(n, gadget);
                    assert!(g.rotate_step_fused(&plan, &mut got, k, &mut s, &g.data));
                    assert_ne!(got, acc0, "{kernel:?}, k = {k}: the step changed acc");
                    assert_eq!(got, want, "{kernel:?}, k = {k}, gadget {gadget:?}");
                }
            }
        }
    }
}
