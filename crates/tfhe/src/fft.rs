//! Negacyclic polynomial products in `R[X]/(X^N+1)` with an N/2-point complex f64 FFT.
//!
//! Folding and twisting (Klemsa, ePrint 2021/480, as in TFHE's spqlios): the real polynomial a of degree
//! < N becomes z_j = (a_j + i·a_{j+N/2})·ζ^j with ζ = exp(iπ/N); an N/2-point DFT of z evaluates a at the
//! N/2 roots ζ^(1-4k) of X^N+1, one of each conjugate pair, so pointwise products give negacyclic products.
//! The forward transform is a radix-2 decimation-in-frequency FFT that leaves its output in bit-reversed
//! order; the inverse is the matching decimation-in-time FFT that takes bit-reversed input, so no
//! permutation is ever done (only pointwise products happen in the Fourier domain).
//!
//! Layout of a Fourier polynomial: `N` f64, the N/2 real parts then the N/2 imaginary parts.
//!
//! Kernels (chosen at run time by [`Kernel::detect`]): a portable path written over split re/im slices so
//! that LLVM vectorizes it, hand-written AVX2+FMA kernels (`fft_avx2`, 4 lanes, radix-2) and AVX-512F
//! kernels (`fft_avx512`, 8 lanes, radix-4 passes and a 64-point in-register tail). All compute the same
//! stages in the same order, so their outputs agree up to f64 rounding (checked in the tests below).
//! The AVX-512 kernel also has the external product's input fused ([`FftPlan`]'s `rot_dec_forward`:
//! X^k·acc − acc for a blind-rotation step, when1 − when0 for a CMUX, its gadget digits and the first
//! forward pass in one loop, bit-identical to doing them one after the other; `trgsw::tests`).
//!
//! # Precision (why f64 suffices)
//! The error of an FFT convolution is about ε·log2(N/2)·‖a‖₂·‖b‖₂ with ε = 2^-53.
//! * Level 1 (u32 torus, N = 1024): digits |d| ≤ 2^9 and torus words |b| ≤ 2^31 give ‖a‖‖b‖ ≤ N·2^40, so the
//!   worst-case error is ≤ 2^-53·9·2^50 ≈ 1.1 units of 2^-32, far below the 2^-25 noise (σ² ratio < 2^-12).
//! * Level 2 (u64 torus, N = 2048): with digits ≤ 2^9 the worst case is 2^-53·10·2^11·2^9·2^63 ≈ 2^33.4
//!   units of 2^-64 = 2^-30.6 on the torus per product (`tests::u64_error_bound`); the error grows with
//!   the digits: with the default BK2 gadget 2^15 × 2 (digits ≤ 2^14) it adds 2.5e-14 over a whole
//!   level-2 rotation (`noise::level2_fft_var`, measured by `tests/noise.rs`). Level-2 results only
//!   need 2^-(privKS precision) ≈ 2^-24 (the private key switch adds 8e-11), so this is ample.
//! * Exact products of a torus polynomial with a small-integer key (key generation, decryption) split the
//!   torus words into 16-bit limbs: ‖a‖‖s‖ ≤ N·2^16 ≤ 2^27, error ≤ 2^-22 ≪ 1/2, so rounding is exact.

use crate::torus::Torus;
use std::collections::HashMap;
use std::f64::consts::PI;
use std::sync::{Arc, Mutex, OnceLock};

/// Which compiled version of the loops to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust, any CPU.
    Portable,
    /// The same loops compiled with AVX2 and FMA enabled.
    Avx2Fma,
    /// AVX-512F kernels (8 lanes, radix-4 passes; `fft_avx512`) for the transforms and the
    /// Fourier-domain products, and AVX-512 gadget decomposition and key switching. Detected only where
    /// AVX2+FMA are present too: plans of degree N < 32 use the AVX2 kernels instead.
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU supports (cached). The environment variable `VSP_TFHE_KERNEL`
    /// (`portable`, `avx2` or `avx512`) can select a slower one for measurements; a kernel the CPU lacks
    /// is never chosen.
    pub fn detect() -> Kernel {
        static K: OnceLock<Kernel> = OnceLock::new();
        *K.get_or_init(|| {
            let best = Kernel::available().pop().unwrap_or(Kernel::Portable);
            let wanted = match std::env::var("VSP_TFHE_KERNEL").as_deref() {
                Ok("portable") => Kernel::Portable,
                Ok("avx2") => Kernel::Avx2Fma,
                _ => best,
            };
            if Kernel::available().contains(&wanted) {
                wanted
            } else {
                best
            }
        })
    }

    /// Every kernel this CPU can run, slowest first (tests and benchmarks compare them).
    pub fn available() -> Vec<Kernel> {
        #[allow(unused_mut)]
        let mut k = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                k.push(Kernel::Avx2Fma);
                if std::is_x86_feature_detected!("avx512f") {
                    k.push(Kernel::Avx512);
                }
            }
        }
        k
    }

    /// The kernel of the Fourier-domain MAC ([`FftPlan::mul_acc_rows`]) for shared plans ([`plan`]),
    /// chosen by measurement where the CPU's flags cannot tell (cached). The AVX-512 and the AVX2 MAC
    /// do the same FMAs on the same layout; which is faster depends on the core, not on the flags: on
    /// a double-pumped AVX-512 core (AMD Zen 4 runs a 512-bit operation as two 256-bit halves) the
    /// 512-bit MAC saves instructions but adds a broadcast per row and a cross-lane shuffle per block.
    /// So where [`Kernel::detect`] gives AVX-512 and `VSP_TFHE_KERNEL` is unset, a one-time
    /// calibration (`calibrate_mac`, ~100 µs) times both on an N = 1024, 4-row product (the gate
    /// bootstrap's shape) and takes AVX2 only if it is at least 5% faster; otherwise this is
    /// [`Kernel::detect`]'s kernel (`VSP_TFHE_KERNEL` set: that kernel everywhere). The choice never
    /// changes a decryption: the kernels agree up to f64 rounding (`tests::mixed_mac_plan_is_exact`).
    pub fn detect_mac() -> Kernel {
        static K: OnceLock<Kernel> = OnceLock::new();
        *K.get_or_init(|| {
            let k = Kernel::detect();
            if k == Kernel::Avx512 && std::env::var_os("VSP_TFHE_KERNEL").is_none() {
                calibrate_mac()
            } else {
                k
            }
        })
    }

    /// Whether AVX2 may be used (true for the AVX2 and the AVX-512 kernels): the other vectorized loops
    /// of the crate (gadget decomposition, key switching) key off this.
    #[inline]
    pub fn has_avx2(self) -> bool {
        matches!(self, Kernel::Avx2Fma | Kernel::Avx512)
    }

    /// Whether AVX-512F may be used.
    #[inline]
    pub fn has_avx512(self) -> bool {
        self == Kernel::Avx512
    }
}

/// How far ahead (in f64) the vector `mul_acc_rows` kernels prefetch the Fourier key they stream: 6 KiB.
/// The blind rotation reads its whole bootstrapping key (52 MB) once per gate, from DRAM; the hardware
/// prefetcher alone left that loop latency-bound. Measured on the AVX-512 EPYC (`examples/fft_speed`,
/// "streamed" column, N = 1024): ~4.0 µs per call without, ~2.7 µs with 4–6 KiB (2 KiB: ~3.0 µs).
pub(crate) const KEY_PREFETCH_DOUBLES: usize = 768;

/// A read-ahead stream that the AVX-512 transforms prefetch into L2 a few lines per loop iteration
/// ([`FftPlan::forward_in_place_ahead`]); elsewhere nothing is prefetched.
#[cfg(target_arch = "x86_64")]
pub(crate) use crate::fft_avx512::Ahead;

/// Nothing to prefetch on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) struct Ahead;

#[cfg(not(target_arch = "x86_64"))]
impl Ahead {
    pub(crate) fn new(_data: &[f64], _steps: usize) -> Ahead {
        Ahead
    }
}

/// Index of the real part of point j of polynomial `poly` (0 = a, 1 = b) of row r in a row-interleaved
/// key of `rows` rows of degree n (the [`crate::TrgswFft`] layout); the imaginary part follows at
/// `+ w` with w = min(4, n/2). Points are grouped in blocks of w and, per block, every row's
/// (a.re, a.im, b.re, b.im) sits next to the others', so [`FftPlan::mul_acc_rows`] reads the whole key
/// as one sequential stream (one hardware-prefetch stream instead of 8·ℓ).
#[inline(always)]
pub fn interleaved_index(n: usize, rows: usize, r: usize, poly: usize, j: usize) -> usize {
    let w = (n / 2).min(4);
    ((j / w) * rows + r) * 4 * w + poly * 2 * w + j % w
}

/// Torus words that [`FftPlan::backward_add`] rounds and adds into (u32 and u64).
pub(crate) trait RoundedAddWord: Sized {
    /// out += x rounded ([`FftPlan::add_rounded_u32`] or [`FftPlan::add_rounded_u64`]).
    fn add_rounded(plan: &FftPlan, out: &mut [Self], x: &[f64]);

    /// `fft_avx512::backward_add` on these words.
    ///
    /// # Safety
    /// As `fft_avx512::backward_add`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn backward_add_avx512(
        plan: &FftPlan,
        re: &mut [f64],
        im: &mut [f64],
        out: &mut [Self],
        ahead: &mut Ahead,
    );
}

impl RoundedAddWord for u32 {
    fn add_rounded(plan: &FftPlan, out: &mut [u32], x: &[f64]) {
        plan.add_rounded_u32(out, x)
    }
    #[cfg(target_arch = "x86_64")]
    unsafe fn backward_add_avx512(
        plan: &FftPlan,
        re: &mut [f64],
        im: &mut [f64],
        out: &mut [u32],
        ahead: &mut Ahead,
    ) {
        // SAFETY: the caller's contract.
        unsafe { crate::fft_avx512::backward_add(plan, re, im, out, ahead) }
    }
}

impl RoundedAddWord for u64 {
    fn add_rounded(plan: &FftPlan, out: &mut [u64], x: &[f64]) {
        plan.add_rounded_u64(out, x)
    }
    #[cfg(target_arch = "x86_64")]
    unsafe fn backward_add_avx512(
        plan: &FftPlan,
        re: &mut [f64],
        im: &mut [f64],
        out: &mut [u64],
        ahead: &mut Ahead,
    ) {
        // SAFETY: the caller's contract.
        unsafe { crate::fft_avx512::backward_add(plan, re, im, out, ahead) }
    }
}

/// Precomputed tables for one ring degree N.
#[derive(Debug)]
pub struct FftPlan {
    n: usize,
    kernel: Kernel,
    /// Kernel of the Fourier-domain MAC: `kernel`, or AVX2 with AVX-512 transforms.
    mac: Kernel,
    twist_re: Vec<f64>,
    twist_im: Vec<f64>,
    /// Untwist factors already divided by N/2 (the inverse DFT's scale).
    untwist_re: Vec<f64>,
    untwist_im: Vec<f64>,
    /// tw[m + j] = exp(-2πi·j/(2m)) for every stage half-size m (power of two, 1 ≤ m < N/2).
    tw_re: Vec<f64>,
    tw_im: Vec<f64>,
}

/// Doubles of padding after each row of transformed digits in the external product's scratch
/// (128 bytes): rows exactly N apart (a multiple of 4 KiB for N ≥ 512) put one point's values of all
/// 2ℓ rows, and their imaginary halves 4 KiB further, in one L1 cache set, which the MAC that reads
/// them together thrashes ([`FftPlan::mul_acc_rows_strided`]).
pub(crate) const ROW_PAD: usize = 16;

/// Most accumulator pairs [`FftPlan::mul_acc_rows_strided_group`] runs against one read of the key
/// (4 × 4 accumulators and the two key vectors stay in registers).
pub(crate) const MAC_GROUP: usize = 4;

/// Times the AVX2 and the AVX-512 MAC on the gate bootstrap's shape (N = 1024, 4 rows at the
/// scratch's padded stride, the key in cache): the best of 8 alternating rounds of 4 calls each (~1 µs
/// a call), so that a preemption cannot decide. AVX2 only if at least 5% faster (see
/// [`Kernel::detect_mac`]). Needs both kernels (the caller checks [`Kernel::detect`] is AVX-512).
fn calibrate_mac() -> Kernel {
    let (n, rows) = (1024, 4);
    let stride = n + ROW_PAD;
    let plans = [
        FftPlan::with_kernel(n, Kernel::Avx2Fma),
        FftPlan::with_kernel(n, Kernel::Avx512),
    ];
    if plans[0].kernel() != Kernel::Avx2Fma || plans[1].kernel() != Kernel::Avx512 {
        return plans[1].kernel();
    }
    let x: Vec<f64> = (0..rows * stride)
        .map(|i| ((i * 31) % 97) as f64 - 48.0)
        .collect();
    let key: Vec<f64> = (0..rows * 2 * n)
        .map(|i| ((i * 131) % 1009) as f64 - 504.0)
        .collect();
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    let mut best = [f64::INFINITY; 2];
    for _ in 0..8 {
        for (p, t) in plans.iter().zip(best.iter_mut()) {
            let start = std::time::Instant::now();
            for _ in 0..4 {
                p.mul_acc_rows_strided(&mut a, &mut b, &x, stride, &key);
                std::hint::black_box((&a, &b));
            }
            *t = t.min(start.elapsed().as_secs_f64());
        }
    }
    if best[0] < 0.95 * best[1] {
        Kernel::Avx2Fma
    } else {
        Kernel::Avx512
    }
}

/// Largest degree whose plans take the calibrated MAC ([`Kernel::detect_mac`]). Up to it (the
/// 32-bit torus's level 1, N = 1024 in every parameter set) the external products round to exact
/// integers with either MAC, so two processes that calibrate differently still compute the same
/// bits. Above it (level 2, N = 2048 on the 64-bit torus) the products are not exact in f64, and the
/// AVX-512 MAC adds its terms in another order than the AVX2 one, so those plans keep the flags'
/// kernel: an MPI rank, a resumed run and the run it continues must circuit-bootstrap bit for bit
/// alike (`tests::level2_plans_keep_the_flags_mac`).
pub const CALIBRATED_MAC_MAX_N: usize = 1024;

/// Shared plan for degree `n` (a power of two ≥ 4), created on first use: [`Kernel::detect`]'s
/// transforms; [`Kernel::detect_mac`]'s MAC up to degree [`CALIBRATED_MAC_MAX_N`], the transforms'
/// kernel above.
pub fn plan(n: usize) -> Arc<FftPlan> {
    static PLANS: OnceLock<Mutex<HashMap<usize, Arc<FftPlan>>>> = OnceLock::new();
    let kernel = Kernel::detect();
    let mac = if n <= CALIBRATED_MAC_MAX_N {
        Kernel::detect_mac()
    } else {
        kernel
    };
    let map = PLANS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = match map.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    g.entry(n)
        .or_insert_with(|| Arc::new(FftPlan::with_kernels(n, kernel, mac)))
        .clone()
}

impl FftPlan {
    /// Builds a plan for degree `n` with an explicit kernel (tests compare kernels).
    ///
    /// # Panics
    /// If `n` is not a power of two ≥ 4 (parameters are validated before plans are built).
    pub fn with_kernel(n: usize, kernel: Kernel) -> FftPlan {
        FftPlan::with_kernels(n, kernel, kernel)
    }

    /// A plan with `kernel`'s transforms and `mac`'s Fourier-domain MAC ([`FftPlan::mul_acc_rows`]).
    /// The only mix taken is AVX-512 transforms with the AVX2 MAC (the layouts are the same); any
    /// other `mac` gives the transforms' kernel.
    ///
    /// # Panics
    /// As [`FftPlan::with_kernel`].
    pub fn with_kernels(n: usize, kernel: Kernel, mac: Kernel) -> FftPlan {
        assert!(
            n.is_power_of_two() && n >= 4,
            "FFT degree must be a power of two >= 4"
        );
        // The AVX2 kernels work on 4-lane blocks of the N/2 points, the AVX-512 ones on 16-point blocks.
        // A kernel this CPU lacks is never used (the unsafe dispatch below relies on it).
        let available = Kernel::available();
        let kernel = match kernel {
            _ if n < 8 => Kernel::Portable,
            k if !available.contains(&k) => *available.last().unwrap_or(&Kernel::Portable),
            Kernel::Avx512 if n < 32 => Kernel::Avx2Fma,
            k => k,
        };
        let m = n / 2;
        let mut twist_re = vec![0.0; m];
        let mut twist_im = vec![0.0; m];
        let mut untwist_re = vec![0.0; m];
        let mut untwist_im = vec![0.0; m];
        for j in 0..m {
            let ang = PI * j as f64 / n as f64;
            twist_re[j] = ang.cos();
            twist_im[j] = ang.sin();
            untwist_re[j] = ang.cos() / m as f64;
            untwist_im[j] = -ang.sin() / m as f64;
        }
        let mut tw_re = vec![0.0; m.max(2)];
        let mut tw_im = vec![0.0; m.max(2)];
        let mut h = 1;
        while h < m {
            for j in 0..h {
                let ang = -PI * j as f64 / h as f64;
                tw_re[h + j] = ang.cos();
                tw_im[h + j] = ang.sin();
            }
            h *= 2;
        }
        let mac = match mac {
            Kernel::Avx2Fma if kernel == Kernel::Avx512 => Kernel::Avx2Fma,
            _ => kernel,
        };
        FftPlan {
            n,
            kernel,
            mac,
            twist_re,
            twist_im,
            untwist_re,
            untwist_im,
            tw_re,
            tw_im,
        }
    }

    pub(crate) fn twist(&self) -> (&[f64], &[f64]) {
        (&self.twist_re, &self.twist_im)
    }
    pub(crate) fn untwist(&self) -> (&[f64], &[f64]) {
        (&self.untwist_re, &self.untwist_im)
    }
    pub(crate) fn stage_tables(&self) -> (&[f64], &[f64]) {
        (&self.tw_re, &self.tw_im)
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Kernel of the Fourier-domain MAC ([`FftPlan::mul_acc_rows`]).
    pub fn mac_kernel(&self) -> Kernel {
        self.mac
    }

    /// Forward transform of a torus polynomial (words read as signed integers).
    pub fn forward_torus<T: Torus>(&self, out: &mut [f64], a: &[T]) {
        let m = self.n / 2;
        let (re, im) = out.split_at_mut(m);
        for j in 0..m {
            re[j] = a[j].to_signed_f64();
            im[j] = a[j + m].to_signed_f64();
        }
        self.forward_in_place(re, im);
    }

    /// Forward transform of a polynomial with small signed integer coefficients.
    pub fn forward_i64(&self, out: &mut [f64], a: &[i64]) {
        let m = self.n / 2;
        let (re, im) = out.split_at_mut(m);
        for j in 0..m {
            re[j] = a[j] as f64;
            im[j] = a[j + m] as f64;
        }
        self.forward_in_place(re, im);
    }

    /// Forward transform of a polynomial already loaded as f64 (re = first half, im = second half).
    ///
    /// # Panics
    /// If `re` or `im` is not N/2 long.
    pub fn forward_in_place(&self, re: &mut [f64], im: &mut [f64]) {
        assert!(re.len() == self.n / 2 && im.len() == self.n / 2);
        match self.kernel {
            Kernel::Portable => forward_core(self, re, im),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx2Fma is only selected after is_x86_feature_detected!("avx2"/"fma").
            Kernel::Avx2Fma => unsafe { crate::fft_avx2::forward(self, re, im) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f"), and
            // never for N < 32 (with_kernel), so m = N/2 is a power of two ≥ 16; re, im have length m.
            Kernel::Avx512 => unsafe {
                crate::fft_avx512::forward(self, re, im, &mut crate::fft_avx512::Ahead::none())
            },
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2Fma | Kernel::Avx512 => forward_core(self, re, im),
        }
    }

    /// [`FftPlan::forward_in_place`] that meanwhile prefetches `ahead` into L2, a few cache lines per loop
    /// iteration (AVX-512 kernel only; the others just transform): the external product hands each of its
    /// transforms a share of the TRGSW key that `mul_acc_rows` streams next. Measured (in-process A/B of
    /// CPU time per NAND, 5 runs of 15 alternating pairs): −3% on average (−6.8% … +1.5%); prefetching
    /// the whole key in one burst instead was 19% slower, at twice the rate or with the T0 hint no gain.
    pub(crate) fn forward_in_place_ahead(&self, re: &mut [f64], im: &mut [f64], ahead: &[f64]) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                assert!(re.len() == self.n / 2 && im.len() == self.n / 2);
                // ~m/8 loop iterations per transform (radix passes and register tail together).
                let mut a = crate::fft_avx512::Ahead::new(ahead, self.n / 16);
                // SAFETY: as in forward_in_place (lengths asserted above).
                unsafe { crate::fft_avx512::forward(self, re, im, &mut a) }
            }
            _ => self.forward_in_place(re, im),
        }
    }

    /// An external product's input transforms in one fused pass where this plan's kernel has it
    /// (AVX-512, N = 1024-like shapes, u32 torus: `fft_avx512::rot_dec_forward`): the forward
    /// transforms of the `g` digit polynomials of X^k·src − minus (X^k·src where `minus` is None:
    /// X^k·acc − acc for a blind-rotation step, when1 − when0 with k = 0 for a CMUX) into `out`
    /// (level i at i·stride, stride ≥ N), stepping the prefetch stream `ahead` meanwhile. Returns
    /// false, doing nothing, where there is no fused kernel for this shape; the caller then rotates,
    /// subtracts, decomposes and transforms step by step (the same values, bit for bit).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rot_dec_forward(
        &self,
        g: crate::torus::Gadget,
        src: &[u32],
        k: usize,
        minus: Option<&[u32]>,
        out: &mut [f64],
        stride: usize,
        ahead: &mut Ahead,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Avx512
            && src.len() == self.n
            && minus.is_none_or(|x| x.len() == self.n)
            && k < 2 * self.n
            && stride >= self.n
            && g.levels >= 1
            && out.len() >= (g.levels as usize - 1) * stride + self.n
            && crate::fft_avx512::rot_dec_forward_fits(self.n, g.levels as usize)
        {
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f"); the
            // shape conditions of rot_dec_forward are checked just above.
            unsafe {
                crate::fft_avx512::rot_dec_forward(self, g, src, k, minus, out, stride, ahead)
            };
            return true;
        }
        let _ = (g, src, k, minus, out, stride, ahead);
        false
    }

    /// [`FftPlan::rot_dec_forward`] on the 64-bit torus (the level-2 step; AVX-512, N = 2048-like
    /// shapes: `fft_avx512::rot_dec_forward_u64`). Returns false, doing nothing, where there is no
    /// fused kernel for this shape; the caller then rotates, decomposes and transforms step by step
    /// (the same values, bit for bit).
    pub(crate) fn rot_dec_forward_u64(
        &self,
        g: crate::torus::Gadget,
        src: &[u64],
        k: usize,
        out: &mut [f64],
        stride: usize,
        ahead: &mut Ahead,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Avx512
            && src.len() == self.n
            && k < 2 * self.n
            && stride >= self.n
            && g.levels >= 1
            && out.len() >= (g.levels as usize - 1) * stride + self.n
            && crate::fft_avx512::rot_dec_forward_u64_fits(self.n, g)
        {
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f"); the
            // shape conditions of rot_dec_forward_u64 are checked just above.
            unsafe { crate::fft_avx512::rot_dec_forward_u64(self, g, src, k, out, stride, ahead) };
            return true;
        }
        let _ = (g, src, k, out, stride, ahead);
        false
    }

    /// Inverse transform; the result (integer-valued f64, re = low half) stays in `f`.
    ///
    /// # Panics
    /// If `f` is not N long.
    pub fn backward_in_place(&self, f: &mut [f64]) {
        assert_eq!(f.len(), self.n);
        let (re, im) = f.split_at_mut(self.n / 2);
        match self.kernel {
            Kernel::Portable => backward_core(self, re, im),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx2Fma is only selected after is_x86_feature_detected!("avx2"/"fma").
            Kernel::Avx2Fma => unsafe { crate::fft_avx2::backward(self, re, im) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in forward_in_place.
            Kernel::Avx512 => unsafe {
                crate::fft_avx512::backward(self, re, im, &mut crate::fft_avx512::Ahead::none())
            },
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2Fma | Kernel::Avx512 => backward_core(self, re, im),
        }
    }

    /// [`FftPlan::forward_in_place`] that meanwhile steps the prefetch stream `ahead` (AVX-512 kernel
    /// only; the others just transform): a blind-rotation step shares one stream, the next step's
    /// key, over all its transforms ([`crate::TrgswFft`]'s level-2 step).
    pub(crate) fn forward_in_place_stepping(
        &self,
        re: &mut [f64],
        im: &mut [f64],
        ahead: &mut Ahead,
    ) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                assert!(re.len() == self.n / 2 && im.len() == self.n / 2);
                // SAFETY: as in forward_in_place (lengths asserted above).
                unsafe { crate::fft_avx512::forward(self, re, im, ahead) }
            }
            _ => {
                let _ = ahead;
                self.forward_in_place(re, im)
            }
        }
    }

    /// [`FftPlan::backward_in_place`] that meanwhile prefetches some of `ahead` into L2 (AVX-512 kernel
    /// only; see [`FftPlan::forward_in_place_ahead`]).
    pub(crate) fn backward_in_place_ahead(&self, f: &mut [f64], ahead: &mut Ahead) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                assert_eq!(f.len(), self.n);
                let (re, im) = f.split_at_mut(self.n / 2);
                // SAFETY: as in backward_in_place (length asserted above).
                unsafe { crate::fft_avx512::backward(self, re, im, ahead) }
            }
            _ => {
                let _ = ahead;
                self.backward_in_place(f)
            }
        }
    }

    /// About how many [`Ahead`] steps one transform of this plan takes (AVX-512: one per loop
    /// iteration of each pass: N/128 for the register-block pass and a radix-8 one, N/64 for a radix-4
    /// one, N/32 for a radix-2 one, and a radix-16 pass as the two radix-4 ones it replaces (eight
    /// steps an iteration); 2·N/128 for N = 1024).
    pub(crate) fn ahead_steps(&self) -> usize {
        let blocks = self.n / 128;
        let outer = (self.n / 2).trailing_zeros().saturating_sub(6) as usize;
        let passes = match outer {
            1 => 4,
            o if o % 2 == 1 => 1 + (o - 3),
            o => o,
        };
        (blocks * (1 + passes)).max(1)
    }

    /// out += the inverse transform of `f` rounded to integers mod 2^32 or 2^64 (by the word type):
    /// [`FftPlan::backward_in_place`] then [`FftPlan::add_rounded_u32`] or
    /// [`FftPlan::add_rounded_u64`], the same values bit for bit, stepping the prefetch stream
    /// `ahead` meanwhile; the AVX-512 kernel adds in its last pass (`fft_avx512::backward_add`).
    /// `f` is destroyed.
    ///
    /// # Panics
    /// If `f` or `out` is not N long.
    pub(crate) fn backward_add<W: RoundedAddWord>(
        &self,
        out: &mut [W],
        f: &mut [f64],
        ahead: &mut Ahead,
    ) {
        assert!(f.len() == self.n && out.len() == self.n);
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                let (re, im) = f.split_at_mut(self.n / 2);
                // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f"),
                // never for N < 32; the lengths are asserted above.
                unsafe { W::backward_add_avx512(self, re, im, out, ahead) }
            }
            _ => {
                self.backward_in_place_ahead(f, ahead);
                W::add_rounded(self, out, f);
            }
        }
    }

    /// Inverse transform of `f` (destroyed), rounded to the torus and written to `out`.
    pub fn backward_torus<T: Torus>(&self, out: &mut [T], f: &mut [f64]) {
        self.backward_in_place(f);
        T::from_f64_slice(out, f);
    }

    /// out += x rounded to integers mod 2^32 (the values an inverse transform leaves), as
    /// `u32::add_f64_slice` does, vectorized with AVX-512 where the plan's kernel is AVX-512 (the
    /// blind rotation adds each step's product to its accumulator this way).
    pub(crate) fn add_rounded_u32(&self, out: &mut [u32], x: &[f64]) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f").
            Kernel::Avx512 => unsafe { crate::fft_avx512::add_rounded_u32(out, x) },
            _ => u32::add_f64_slice(out, x),
        }
    }

    /// out += x rounded to integers mod 2^64 (the values a level-2 inverse transform leaves), as
    /// `u64::from_f64_slice` and a wrapping add do, in one pass; vectorized with AVX-512 where the
    /// plan's kernel is AVX-512 (`fft_avx512::add_rounded_u64`, equal to the scalar rounding on every
    /// input: `tests::add_rounded_u64_matches_scalar`).
    pub(crate) fn add_rounded_u64(&self, out: &mut [u64], x: &[f64]) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f").
            Kernel::Avx512 => unsafe { crate::fft_avx512::add_rounded_u64(out, x) },
            _ => u64::add_f64_slice(out, x),
        }
    }

    /// Inverse transform of `f` (destroyed), rounded and added to `out`.
    pub fn backward_add_torus<T: Torus>(&self, out: &mut [T], f: &mut [f64]) {
        self.backward_in_place(f);
        for (o, &v) in out.iter_mut().zip(f.iter()) {
            *o = o.add(T::from_f64_mod(v));
        }
    }

    /// acc += a ⊙ b (pointwise complex products in the split layout).
    ///
    /// # Panics
    /// If a slice is not N long.
    #[inline]
    pub fn mul_acc(&self, acc: &mut [f64], a: &[f64], b: &[f64]) {
        assert!(acc.len() == self.n && a.len() == self.n && b.len() == self.n);
        match self.kernel {
            Kernel::Portable => mul_acc_core(acc, a, b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx2Fma is only selected after is_x86_feature_detected!("avx2"/"fma").
            Kernel::Avx2Fma => unsafe { crate::fft_avx2::mul_acc(acc, a, b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f") and
            // only for N ≥ 32, so N/2 is a multiple of 8.
            Kernel::Avx512 => unsafe { crate::fft_avx512::mul_acc(acc, a, b) },
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2Fma | Kernel::Avx512 => mul_acc_core(acc, a, b),
        }
    }

    /// acc_a += x ⊙ a and acc_b += x ⊙ b (one pass over x).
    ///
    /// # Panics
    /// If a slice is not N long.
    #[inline]
    pub fn mul_acc2(&self, acc_a: &mut [f64], acc_b: &mut [f64], x: &[f64], a: &[f64], b: &[f64]) {
        let n = self.n;
        assert!(
            acc_a.len() == n && acc_b.len() == n && x.len() == n && a.len() == n && b.len() == n
        );
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx2Fma is only selected after is_x86_feature_detected!("avx2"/"fma").
            Kernel::Avx2Fma => unsafe { crate::fft_avx2::mul_acc2(acc_a, acc_b, x, a, b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in mul_acc.
            Kernel::Avx512 => unsafe { crate::fft_avx512::mul_acc2(acc_a, acc_b, x, a, b) },
            _ => {
                mul_acc_core(acc_a, x, a);
                mul_acc_core(acc_b, x, b);
            }
        }
    }

    /// acc_a = Σ_r x_r ⊙ key_{r,a}, acc_b = Σ_r x_r ⊙ key_{r,b} (overwritten): the whole Fourier-domain
    /// sum of an external product in one pass. `x` is `rows` transformed polynomials back to back, `key`
    /// is `rows` rows of (a, b) Fourier polynomials in the [`interleaved_index`] layout.
    ///
    /// # Panics
    /// If `x` or `key` is shorter than `rows` rows, or acc_a and acc_b differ in length.
    pub fn mul_acc_rows(
        &self,
        acc_a: &mut [f64],
        acc_b: &mut [f64],
        x: &[f64],
        key: &[f64],
        rows: usize,
    ) {
        let n = acc_a.len();
        self.mul_acc_rows_strided(acc_a, acc_b, &x[..rows * n], n, key);
    }

    /// [`FftPlan::mul_acc_rows`] with row r of `x` at `r·stride` (stride ≥ N; `x.len()` a multiple of
    /// it, rows = x.len() / stride). The external product's scratch pads its rows (stride N +
    /// [`ROW_PAD`]), so that the rows' values for one point do not all fall in one L1 cache set: with
    /// stride N = 1024 they are 8 KiB apart and, with their imaginary halves 4 KiB further, the 2ℓ
    /// rows of the MAC's loop alone fill an 8-way set of a 32 KiB L1. Measured on AMD Zen 4 (EPYC,
    /// family 25; in-process A/B, `perf` profile): the AVX-512 MAC spent half its samples on the x
    /// loads; padded, a blind-rotation step with the key in cache went from 9.2 to 8.3 µs and a NAND
    /// took 8% less CPU time.
    pub(crate) fn mul_acc_rows_strided(
        &self,
        acc_a: &mut [f64],
        acc_b: &mut [f64],
        x: &[f64],
        stride: usize,
        key: &[f64],
    ) {
        let m = acc_a.len() / 2;
        self.mul_acc_rows_impl(acc_a, acc_b, [x, &[]], stride, key, (0, m));
    }

    /// [`FftPlan::mul_acc_rows_strided`] for several accumulator pairs against one key: each
    /// `outs[i]` = (acc_a, acc_b, x) gets exactly what `mul_acc_rows_strided(acc_a, acc_b, x,
    /// stride, key)` gives it (bit for bit). With the AVX-512 MAC the key is read once per group of
    /// up to [`MAC_GROUP`] pairs (`fft_avx512::mul_acc_rows_group`) instead of once per pair: a
    /// batch of level-2 blind rotations, whose step key (128 KiB) comes from L2 for every sample
    /// after the first, reads it a quarter as often.
    ///
    /// # Panics
    /// As [`FftPlan::mul_acc_rows_strided`] for any pair, or if the pairs' degrees or row counts
    /// differ.
    pub(crate) fn mul_acc_rows_strided_group(
        &self,
        outs: &mut [(&mut [f64], &mut [f64], &[f64])],
        stride: usize,
        key: &[f64],
    ) {
        let Some(first) = outs.first() else { return };
        let (n, xlen) = (first.0.len(), first.2.len());
        assert!(
            n > 0 && stride >= n && xlen.is_multiple_of(stride),
            "rows of {n} values at stride {stride}"
        );
        let rows = xlen / stride;
        assert!(
            outs.iter()
                .all(|(a, b, x)| a.len() == n && b.len() == n && x.len() == xlen)
                && key.len() >= rows * 2 * n,
            "MAC group: every pair must have degree {n} and {rows} rows"
        );
        match self.mac_kernel() {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 if n == self.n => {
                for group in outs.chunks_mut(MAC_GROUP) {
                    let accs: Vec<(*mut f64, *mut f64)> = group
                        .iter_mut()
                        .map(|(a, b, _)| (a.as_mut_ptr(), b.as_mut_ptr()))
                        .collect();
                    let xs: Vec<*const f64> = group.iter().map(|(_, _, x)| x.as_ptr()).collect();
                    // SAFETY: Kernel::Avx512 is only selected after
                    // is_x86_feature_detected!("avx512f") and only for N ≥ 32, so n/2 is a multiple
                    // of 4; every pair has length n and `rows` rows at stride ≥ n, and the key
                    // rows·2n doubles (asserted above); the pairs are distinct `&mut` slices.
                    unsafe {
                        match group.len() {
                            4 => crate::fft_avx512::mul_acc_rows_group::<4>(
                                [accs[0], accs[1], accs[2], accs[3]],
                                [xs[0], xs[1], xs[2], xs[3]],
                                n,
                                rows,
                                stride,
                                key,
                            ),
                            3 => crate::fft_avx512::mul_acc_rows_group::<3>(
                                [accs[0], accs[1], accs[2]],
                                [xs[0], xs[1], xs[2]],
                                n,
                                rows,
                                stride,
                                key,
                            ),
                            2 => crate::fft_avx512::mul_acc_rows_group::<2>(
                                [accs[0], accs[1]],
                                [xs[0], xs[1]],
                                n,
                                rows,
                                stride,
                                key,
                            ),
                            _ => crate::fft_avx512::mul_acc_rows_group::<1>(
                                [accs[0]],
                                [xs[0]],
                                n,
                                rows,
                                stride,
                                key,
                            ),
                        }
                    }
                }
            }
            _ => {
                for (a, b, x) in outs.iter_mut() {
                    self.mul_acc_rows_strided(a, b, x, stride, key);
                }
            }
        }
    }

    /// [`FftPlan::mul_acc_rows`] with the transformed rows in two slices (`xs[0]`'s rows, then
    /// `xs[1]`'s: each a whole number of n-value rows, e.g. the mask's and the body's digits made by
    /// two threads), for the points j in `points` = [j0, j1) only (written at j and n/2 + j; the rest
    /// of acc_a and acc_b is left alone). Every point's sum is computed as in the whole call (rows in
    /// the same order), so threads that split the points between them get its result bit for bit.
    ///
    /// # Panics
    /// As [`FftPlan::mul_acc_rows`], or if a part is not a whole number of rows, or j0 or j1 is not a
    /// multiple of min(4, n/2), or j0 > j1, or j1 > n/2.
    pub fn mul_acc_rows_points(
        &self,
        acc_a: &mut [f64],
        acc_b: &mut [f64],
        xs: [&[f64]; 2],
        key: &[f64],
        points: (usize, usize),
    ) {
        let n = acc_a.len();
        self.mul_acc_rows_impl(acc_a, acc_b, xs, n, key, points);
    }

    /// The MAC behind [`FftPlan::mul_acc_rows_points`] and [`FftPlan::mul_acc_rows_strided`]: rows at
    /// `stride` (≥ n) in each part, each part's length a multiple of it.
    fn mul_acc_rows_impl(
        &self,
        acc_a: &mut [f64],
        acc_b: &mut [f64],
        xs: [&[f64]; 2],
        stride: usize,
        key: &[f64],
        points: (usize, usize),
    ) {
        let n = acc_a.len();
        assert!(
            n > 0 && stride >= n && xs.iter().all(|x| x.len().is_multiple_of(stride)),
            "rows of {n} values at stride {stride}"
        );
        let rows = (xs[0].len() + xs[1].len()) / stride;
        assert!(acc_b.len() == n && key.len() >= rows * 2 * n);
        let (j0, j1) = points;
        let blk = (n / 2).clamp(1, 4);
        assert!(
            j0.is_multiple_of(blk) && j1.is_multiple_of(blk) && j0 <= j1 && j1 <= n / 2,
            "point range {points:?} for degree {n}"
        );
        match self.mac_kernel() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx2Fma is only selected after is_x86_feature_detected!("avx2"/"fma"),
            // and it is never chosen for N < 8, so n/2 is a multiple of 4; lengths, stride and the
            // point range checked above.
            Kernel::Avx2Fma if n == self.n => unsafe {
                crate::fft_avx2::mul_acc_rows(acc_a, acc_b, xs, stride, key, points)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Kernel::Avx512 is only selected after is_x86_feature_detected!("avx512f") and
            // only for N ≥ 32, so n/2 is a multiple of 4; lengths, stride and the point range checked
            // above.
            Kernel::Avx512 if n == self.n => unsafe {
                crate::fft_avx512::mul_acc_rows(acc_a, acc_b, xs, stride, key, points)
            },
            _ => {
                let m = n / 2;
                let w = m.min(4);
                for j in j0..j1 {
                    let (mut ar, mut ai, mut br, mut bi) = (0.0, 0.0, 0.0, 0.0);
                    for r in 0..rows {
                        let r0 = xs[0].len() / stride;
                        let (x, rx) = if r < r0 { (xs[0], r) } else { (xs[1], r - r0) };
                        let (xr, xi) = (x[rx * stride + j], x[rx * stride + m + j]);
                        let ia = interleaved_index(n, rows, r, 0, j);
                        let ib = interleaved_index(n, rows, r, 1, j);
                        let (kar, kai, kbr, kbi) = (key[ia], key[ia + w], key[ib], key[ib + w]);
                        ar += xr * kar - xi * kai;
                        ai += xr * kai + xi * kar;
                        br += xr * kbr - xi * kbi;
                        bi += xr * kbi + xi * kbr;
                    }
                    acc_a[j] = ar;
                    acc_a[m + j] = ai;
                    acc_b[j] = br;
                    acc_b[m + j] = bi;
                }
            }
        }
    }

    /// Exact negacyclic product of a torus polynomial with a small-integer polynomial given in Fourier
    /// form (`s_fft`, |s_i| ≤ 1 expected; exact while ‖s‖₁ ≤ 2^10), via 16-bit limbs. Returns a·s.
    pub fn exact_mul_small<T: Torus>(&self, a: &[T], s_fft: &[f64]) -> Vec<T> {
        let n = self.n;
        let mut out = vec![T::zero(); n];
        let mut buf = vec![0.0f64; n];
        let mut acc = vec![0.0f64; n];
        let limbs = T::BITS / 16;
        for l in 0..limbs {
            let m = n / 2;
            {
                let (re, im) = buf.split_at_mut(m);
                for j in 0..m {
                    re[j] = ((a[j].to_u64() >> (16 * l)) & 0xffff) as f64;
                    im[j] = ((a[j + m].to_u64() >> (16 * l)) & 0xffff) as f64;
                }
                self.forward_in_place(re, im);
            }
            acc.iter_mut().for_each(|x| *x = 0.0);
            self.mul_acc(&mut acc, &buf, s_fft);
            self.backward_in_place(&mut acc);
            for (o, &v) in out.iter_mut().zip(acc.iter()) {
                let limb = (v.round() as i64 as u64).wrapping_shl(16 * l);
                *o = o.add(T::from_u64(limb));
            }
        }
        out
    }
}

#[inline(always)]
fn forward_core(p: &FftPlan, re: &mut [f64], im: &mut [f64]) {
    let m = re.len();
    // Twist.
    for j in 0..m {
        let (c, s) = (p.twist_re[j], p.twist_im[j]);
        let (a, b) = (re[j], im[j]);
        re[j] = a * c - b * s;
        im[j] = a * s + b * c;
    }
    // Radix-2 DIF, natural order in, bit-reversed out.
    let mut h = m / 2;
    while h >= 1 {
        let twr = &p.tw_re[h..2 * h];
        let twi = &p.tw_im[h..2 * h];
        for (rb, ib) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
            let (r0, r1) = rb.split_at_mut(h);
            let (i0, i1) = ib.split_at_mut(h);
            for j in 0..h {
                let (ur, ui, vr, vi) = (r0[j], i0[j], r1[j], i1[j]);
                r0[j] = ur + vr;
                i0[j] = ui + vi;
                let (dr, di) = (ur - vr, ui - vi);
                r1[j] = dr * twr[j] - di * twi[j];
                i1[j] = dr * twi[j] + di * twr[j];
            }
        }
        h /= 2;
    }
}

#[inline(always)]
fn backward_core(p: &FftPlan, re: &mut [f64], im: &mut [f64]) {
    let m = re.len();
    // Radix-2 DIT with conjugate twiddles, bit-reversed in, natural order out.
    let mut h = 1;
    while h < m {
        let twr = &p.tw_re[h..2 * h];
        let twi = &p.tw_im[h..2 * h];
        for (rb, ib) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
            let (r0, r1) = rb.split_at_mut(h);
            let (i0, i1) = ib.split_at_mut(h);
            for j in 0..h {
                let (vr0, vi0) = (r1[j], i1[j]);
                let vr = vr0 * twr[j] + vi0 * twi[j];
                let vi = vi0 * twr[j] - vr0 * twi[j];
                let (ur, ui) = (r0[j], i0[j]);
                r0[j] = ur + vr;
                i0[j] = ui + vi;
                r1[j] = ur - vr;
                i1[j] = ui - vi;
            }
        }
        h *= 2;
    }
    // Untwist and scale by 1/(N/2).
    for j in 0..m {
        let (c, s) = (p.untwist_re[j], p.untwist_im[j]);
        let (a, b) = (re[j], im[j]);
        re[j] = a * c - b * s;
        im[j] = a * s + b * c;
    }
}

#[inline(always)]
fn mul_acc_core(acc: &mut [f64], a: &[f64], b: &[f64]) {
    let m = acc.len() / 2;
    let (accr, acci) = acc.split_at_mut(m);
    let (ar, ai) = a.split_at(m);
    let (br, bi) = b.split_at(m);
    for j in 0..m {
        accr[j] += ar[j] * br[j] - ai[j] * bi[j];
        acci[j] += ar[j] * bi[j] + ai[j] * br[j];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn naive_negacyclic(a: &[i64], b: &[i64]) -> Vec<i128> {
        let n = a.len();
        let mut c = vec![0i128; n];
        for i in 0..n {
            for j in 0..n {
                let p = a[i] as i128 * b[j] as i128;
                if i + j < n {
                    c[i + j] += p;
                } else {
                    c[i + j - n] -= p;
                }
            }
        }
        c
    }

    /// Every kernel this CPU supports, checked against the CPU's features detected here: a loop
    /// over the vector kernels cannot run zero times on a machine that has them.
    fn kernels() -> Vec<Kernel> {
        let k = Kernel::available();
        let mut want = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 =
                std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
            if avx2 {
                want.push(Kernel::Avx2Fma);
            }
            if avx2 && std::is_x86_feature_detected!("avx512f") {
                want.push(Kernel::Avx512);
            }
        }
        assert_eq!(
            k, want,
            "Kernel::available() disagrees with the CPU's features"
        );
        k
    }

    #[test]
    fn kernels_under_test_are_the_cpus() {
        // Names what ran on this machine (the CI log shows it); `kernels` asserts it is complete.
        println!(
            "FFT kernels tested here: {:?}; shared plans' MAC (calibrated): {:?}",
            kernels(),
            Kernel::detect_mac()
        );
    }

    /// The vector kernels this CPU supports (compared against the portable one).
    fn vector_kernels() -> Vec<Kernel> {
        kernels()
            .into_iter()
            .filter(|&k| k != Kernel::Portable)
            .collect()
    }

    #[test]
    fn negacyclic_product_matches_naive() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for kernel in kernels() {
            for n in [4usize, 8, 16, 32, 64, 128, 1024, 2048] {
                let p = FftPlan::with_kernel(n, kernel);
                let a: Vec<i64> = (0..n).map(|_| rng.gen_range(-512..512)).collect();
                let b: Vec<i64> = (0..n)
                    .map(|_| rng.gen_range(-(1 << 31)..(1 << 31)))
                    .collect();
                let (mut fa, mut fb, mut acc) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                p.forward_i64(&mut fa, &a);
                p.forward_i64(&mut fb, &b);
                p.mul_acc(&mut acc, &fa, &fb);
                let mut out = vec![0u32; n];
                p.backward_torus(&mut out, &mut acc);
                let want = naive_negacyclic(&a, &b);
                for i in 0..n {
                    let w = want[i] as u32; // reduce mod 2^32
                    let err = out[i].wrapping_sub(w) as i32;
                    assert!(err.abs() <= 2, "n={n} i={i} err={err} kernel={kernel:?}");
                }
            }
        }
    }

    /// Forward, mul_acc, mul_acc2 and backward of every vector kernel against the portable kernel, for
    /// every degree the kernels treat differently (AVX-512: radix-2, 4, 8 or 16 first/last pass, radix
    /// 16 then radix 4 at N = 8192, N < 32 falls back to AVX2). Tolerance: relative 1e-6 on the
    /// transforms of inputs up to 1e6 (the f64 rounding of a 10-stage FFT is ~1e-12 relative to the
    /// largest value).
    #[test]
    fn vector_kernels_match_portable() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for kernel in vector_kernels() {
            for n in [8usize, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192] {
                let p0 = FftPlan::with_kernel(n, Kernel::Portable);
                let p1 = FftPlan::with_kernel(n, kernel);
                let a: Vec<f64> = (0..n).map(|_| rng.gen_range(-1e6..1e6)).collect();
                let (mut x0, mut x1) = (a.clone(), a.clone());
                {
                    let (r, i) = x0.split_at_mut(n / 2);
                    p0.forward_in_place(r, i);
                    let (r, i) = x1.split_at_mut(n / 2);
                    p1.forward_in_place(r, i);
                }
                for (u, v) in x0.iter().zip(&x1) {
                    assert!(
                        (u - v).abs() <= 1e-6 * (1.0 + u.abs()),
                        "forward n={n} {kernel:?} {u} {v}"
                    );
                }
                let (mut acc0, mut acc1) = (vec![1.0; n], vec![1.0; n]);
                p0.mul_acc(&mut acc0, &x0, &a);
                p1.mul_acc(&mut acc1, &x1, &a);
                let (mut b0, mut b1, mut c0, mut c1) =
                    (vec![0.5; n], vec![0.5; n], vec![2.0; n], vec![2.0; n]);
                p0.mul_acc2(&mut b0, &mut c0, &x0, &a, &acc0);
                p1.mul_acc2(&mut b1, &mut c1, &x0, &a, &acc0);
                for (u, v) in b0.iter().zip(&b1).chain(c0.iter().zip(&c1)) {
                    assert!((u - v).abs() <= 1e-6 * (1.0 + u.abs()), "mul_acc2 {u} {v}");
                }
                p0.backward_in_place(&mut acc0);
                p1.backward_in_place(&mut acc1);
                for (u, v) in acc0.iter().zip(&acc1) {
                    assert!((u - v).abs() <= 1e-3 * (1.0 + u.abs()), "backward {u} {v}");
                }
            }
        }
    }

    /// The grouped MAC ([`FftPlan::mul_acc_rows_strided_group`], the AVX-512 kernel
    /// `mul_acc_rows_group` for groups of 1 to 4) gives every pair what the plan's own
    /// `mul_acc_rows_strided` gives it, bit for bit, and that agrees with the portable kernel, for
    /// 1 to 7 pairs (full groups and remainders), on every kernel, with NaN in the rows' padding.
    #[test]
    fn mul_acc_rows_group_matches_single_and_portable() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
        for kernel in Kernel::available() {
            for (n, rows) in [(32usize, 2usize), (1024, 4), (2048, 4), (2048, 6)] {
                let p0 = FftPlan::with_kernel(n, Kernel::Portable);
                let p1 = FftPlan::with_kernel(n, kernel);
                let stride = n + ROW_PAD;
                let key: Vec<f64> = (0..rows * 2 * n)
                    .map(|_| rng.gen_range(-1e9..1e9))
                    .collect();
                let xs: Vec<Vec<f64>> = (0..7)
                    .map(|_| {
                        let mut x = vec![f64::NAN; rows * stride];
                        for r in 0..rows {
                            for v in &mut x[r * stride..r * stride + n] {
                                *v = rng.gen_range(-1e3..1e3);
                            }
                        }
                        x
                    })
                    .collect();
                let single = |p: &FftPlan, x: &[f64]| {
                    let (mut a, mut b) = (vec![5.0; n], vec![5.0; n]);
                    p.mul_acc_rows_strided(&mut a, &mut b, x, stride, &key);
                    (a, b)
                };
                for count in 1..=xs.len() {
                    let mut outs: Vec<(Vec<f64>, Vec<f64>)> =
                        (0..count).map(|_| (vec![-1.0; n], vec![-1.0; n])).collect();
                    let mut views: Vec<(&mut [f64], &mut [f64], &[f64])> = outs
                        .iter_mut()
                        .zip(&xs)
                        .map(|((a, b), x)| (&mut a[..], &mut b[..], &x[..]))
                        .collect();
                    p1.mul_acc_rows_strided_group(&mut views, stride, &key);
                    for ((a, b), x) in outs.iter().zip(&xs) {
                        let (sa, sb) = single(&p1, x);
                        assert_eq!((a, b), (&sa, &sb), "n={n} {kernel:?} group of {count}");
                        let (pa, pb) = single(&p0, x);
                        for (u, w) in a.iter().chain(b).zip(pa.iter().chain(&pb)) {
                            assert!(
                                (u - w).abs() <= 1e-6 * (1.0 + w.abs()),
                                "n={n} {kernel:?} against portable: {u} {w}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn mul_acc_rows_matches_portable() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for kernel in vector_kernels() {
            for (n, rows) in [
                (8usize, 1usize),
                (16, 2),
                (32, 3),
                (64, 2),
                (1024, 4),
                (2048, 6),
            ] {
                let p0 = FftPlan::with_kernel(n, Kernel::Portable);
                let p1 = FftPlan::with_kernel(n, kernel);
                let x: Vec<f64> = (0..rows * n).map(|_| rng.gen_range(-1e3..1e3)).collect();
                let key: Vec<f64> = (0..rows * 2 * n)
                    .map(|_| rng.gen_range(-1e9..1e9))
                    .collect();
                // The same key in plain split layout, row by row (a then b), for the mul_acc reference.
                let m = n / 2;
                let w = m.min(4);
                let mut plain = vec![0.0; rows * 2 * n];
                for r in 0..rows {
                    for poly in 0..2 {
                        for j in 0..m {
                            let i = interleaved_index(n, rows, r, poly, j);
                            plain[(2 * r + poly) * n + j] = key[i];
                            plain[(2 * r + poly) * n + m + j] = key[i + w];
                        }
                    }
                }
                let (mut a0, mut b0) = (vec![7.0; n], vec![7.0; n]);
                let (mut a1, mut b1) = (vec![-3.0; n], vec![-3.0; n]);
                p0.mul_acc_rows(&mut a0, &mut b0, &x, &key, rows);
                p1.mul_acc_rows(&mut a1, &mut b1, &x, &key, rows);
                // Reference: the same sums with mul_acc from zero.
                let (mut ra, mut rb) = (vec![0.0; n], vec![0.0; n]);
                for r in 0..rows {
                    p0.mul_acc(
                        &mut ra,
                        &x[r * n..(r + 1) * n],
                        &plain[2 * r * n..(2 * r + 1) * n],
                    );
                    p0.mul_acc(
                        &mut rb,
                        &x[r * n..(r + 1) * n],
                        &plain[(2 * r + 1) * n..(2 * r + 2) * n],
                    );
                }
                for ((u, v), w) in a0
                    .iter()
                    .chain(&b0)
                    .zip(a1.iter().chain(&b1))
                    .zip(ra.iter().chain(&rb))
                {
                    assert!((u - w).abs() <= 1e-9 * (1.0 + w.abs()), "portable {u} {w}");
                    assert!(
                        (v - w).abs() <= 1e-6 * (1.0 + w.abs()),
                        "n={n} {kernel:?} {v} {w}"
                    );
                }
                // Rows at a padded stride (the external product's scratch), NaN in the padding so
                // that reading it would show: the same values bit for bit, on both kernels.
                let stride = n + 16;
                let mut padded = vec![f64::NAN; rows * stride];
                for (dst, src) in padded.chunks_mut(stride).zip(x.chunks(n)) {
                    dst[..n].copy_from_slice(src);
                }
                for (p, whole) in [(&p0, (&a0, &b0)), (&p1, (&a1, &b1))] {
                    let (mut sa, mut sb) = (vec![0.5; n], vec![0.5; n]);
                    p.mul_acc_rows_strided(&mut sa, &mut sb, &padded, stride, &key);
                    assert_eq!(
                        (&sa, &sb),
                        whole,
                        "strided n={n} rows={rows} {:?}",
                        p.kernel()
                    );
                }
                // Rows in two slices and the points in two ranges (as two threads run it): the
                // whole call's values bit for bit, on both kernels.
                if rows >= 2 && n >= 16 {
                    let (xa, xb) = x.split_at((rows / 2) * n);
                    let half = (m / 2) & !3;
                    for (p, whole) in [(&p0, (&a0, &b0)), (&p1, (&a1, &b1))] {
                        let (mut sa, mut sb) = (vec![0.5; n], vec![0.5; n]);
                        p.mul_acc_rows_points(&mut sa, &mut sb, [xa, xb], &key, (half, m));
                        p.mul_acc_rows_points(&mut sa, &mut sb, [xa, xb], &key, (0, half));
                        assert_eq!((&sa, &sb), whole, "n={n} rows={rows} {:?}", p.kernel());
                    }
                }
            }
        }
    }

    /// The MAC kernel of shared plans is one this CPU has, and a plan mixing AVX-512 transforms with
    /// the AVX2 MAC (what the calibration may choose) gives exact negacyclic products like the
    /// others; a mix other than that one falls back to the transforms' kernel.
    /// The calibration ([`Kernel::detect_mac`]) may pick either MAC, and two processes (MPI ranks, a
    /// run and its resume) may pick differently. The MACs do not agree bit for bit on products that
    /// are not exact (this test shows it where both exist), so the level-2 plans, whose 64-bit
    /// products are not exact in f64, keep the flags' kernel.
    #[test]
    fn level2_plans_keep_the_flags_mac() {
        for n in [2048usize, 4096] {
            let p = plan(n);
            assert_eq!(p.mac_kernel(), p.kernel(), "N = {n}");
        }
        if !vector_kernels().contains(&Kernel::Avx512) {
            return; // one MAC only on this CPU: nothing could differ.
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        let (n, rows) = (2048usize, 4usize);
        let x: Vec<f64> = (0..rows * n).map(|_| rng.gen_range(-1e6..1e6)).collect();
        let key: Vec<f64> = (0..rows * 2 * n)
            .map(|_| rng.gen_range(-1e9..1e9))
            .collect();
        let out: Vec<Vec<u64>> = [Kernel::Avx2Fma, Kernel::Avx512]
            .iter()
            .map(|&mac| {
                let p = FftPlan::with_kernels(n, Kernel::Avx512, mac);
                let (mut a, mut b) = (vec![0.5; n], vec![0.5; n]);
                p.mul_acc_rows(&mut a, &mut b, &x, &key, rows);
                a.iter().chain(&b).map(|f| f.to_bits()).collect()
            })
            .collect();
        assert_ne!(
            out[0], out[1],
            "the MACs now agree bit for bit: level 2 could take the calibrated one"
        );
    }

    #[test]
    fn mixed_mac_plan_is_exact() {
        assert!(kernels().contains(&plan(1024).mac_kernel()));
        assert_eq!(
            FftPlan::with_kernels(1024, Kernel::Portable, Kernel::Avx512).mac_kernel(),
            Kernel::Portable
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        let vk = vector_kernels();
        for (kernel, mac) in vk.iter().flat_map(|&k| vk.iter().map(move |&m| (k, m))) {
            let n = 1024;
            let p = FftPlan::with_kernels(n, kernel, mac);
            let want_mac = if kernel == Kernel::Avx512 {
                mac
            } else {
                kernel
            };
            assert_eq!((p.kernel(), p.mac_kernel()), (kernel, want_mac));
            let rows = 4;
            let a: Vec<Vec<i64>> = (0..rows)
                .map(|_| (0..n).map(|_| rng.gen_range(-128..=128)).collect())
                .collect();
            let b: Vec<Vec<i64>> = (0..2 * rows)
                .map(|_| {
                    (0..n)
                        .map(|_| rng.gen_range(-(1i64 << 31)..(1i64 << 31)))
                        .collect()
                })
                .collect();
            let mut x = vec![0.0; rows * n];
            for (r, xr) in x.chunks_mut(n).enumerate() {
                p.forward_i64(xr, &a[r]);
            }
            let (m, w) = (n / 2, 4);
            let mut key = vec![0.0; rows * 2 * n];
            let mut f = vec![0.0; n];
            for r in 0..rows {
                for poly in 0..2 {
                    p.forward_i64(&mut f, &b[2 * r + poly]);
                    for j in 0..m {
                        let i = interleaved_index(n, rows, r, poly, j);
                        key[i] = f[j];
                        key[i + w] = f[m + j];
                    }
                }
            }
            let (mut acc_a, mut acc_b) = (vec![0.0; n], vec![0.0; n]);
            p.mul_acc_rows(&mut acc_a, &mut acc_b, &x, &key, rows);
            for (poly, acc) in [&mut acc_a, &mut acc_b].into_iter().enumerate() {
                let mut got = vec![0u32; n];
                p.backward_torus(&mut got, acc);
                let mut want = vec![0i128; n];
                for r in 0..rows {
                    let c = naive_negacyclic(&a[r], &b[2 * r + poly]);
                    want.iter_mut().zip(c).for_each(|(w, c)| *w += c);
                }
                for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    let err = g.wrapping_sub(w as u32) as i32;
                    assert!(
                        err.abs() <= 2,
                        "{kernel:?}/{mac:?} poly {poly} i={i} err={err}"
                    );
                }
            }
        }
    }

    #[test]
    fn exact_mul_small_is_exact() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let n = 2048;
        let p = plan(n);
        let s: Vec<i64> = (0..n).map(|_| rng.gen_range(-1..=1)).collect();
        let mut sf = vec![0.0; n];
        p.forward_i64(&mut sf, &s);
        let a: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        let got = p.exact_mul_small(&a, &sf);
        // Naive mod 2^64.
        for i in [0usize, 1, 777, n - 1] {
            let mut acc = 0u64;
            for j in 0..n {
                let (k, sign) = if j <= i {
                    (i - j, 1i64)
                } else {
                    (n + i - j, -1)
                };
                acc = acc.wrapping_add(a[k].wrapping_mul((s[j] * sign) as u64));
            }
            assert_eq!(got[i], acc, "coefficient {i}");
        }
    }

    /// The rounded add of every kernel equals `u32::add_f64_slice` (ties, negative values, values
    /// near ±2^47, a tail shorter than a vector).
    #[test]
    fn add_rounded_u32_matches_portable() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        let mut x: Vec<f64> = (0..1021)
            .map(|_| rng.gen_range(-(2f64.powi(47))..2f64.powi(47)))
            .collect();
        x[..8].copy_from_slice(&[0.5, -0.5, 1.5, -2.5, 0.0, -0.0, 2f64.powi(47), -3.49]);
        let out0: Vec<u32> = (0..1021).map(|_| rng.gen()).collect();
        let mut want = out0.clone();
        u32::add_f64_slice(&mut want, &x);
        for (i, (&w, &v)) in want.iter().zip(&x).enumerate() {
            let exact = out0[i].wrapping_add(v.round_ties_even() as i64 as u32);
            assert_eq!(w, exact, "portable rounding at {i}: {v}");
        }
        for kernel in kernels() {
            let p = FftPlan::with_kernel(1024, kernel);
            let mut got = out0.clone();
            p.add_rounded_u32(&mut got, &x);
            assert_eq!(got, want, "{kernel:?}");
        }
    }

    /// The u64 (level-2) product error stays within the bound documented above.
    #[test]
    fn u64_error_bound() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let n = 2048;
        let p = plan(n);
        let d: Vec<i64> = (0..n).map(|_| rng.gen_range(-512..512)).collect();
        let b: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        let (mut fd, mut fb, mut acc) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        p.forward_i64(&mut fd, &d);
        p.forward_torus(&mut fb, &b);
        p.mul_acc(&mut acc, &fd, &fb);
        let mut out = vec![0u64; n];
        p.backward_torus(&mut out, &mut acc);
        let mut max_err = 0f64;
        for i in (0..n).step_by(97) {
            let mut exact = 0u64;
            for j in 0..n {
                let (k, sign) = if j <= i {
                    (i - j, 1i64)
                } else {
                    (n + i - j, -1)
                };
                exact = exact.wrapping_add(b[j].wrapping_mul((d[k] * sign) as u64));
            }
            let err = (out[i].wrapping_sub(exact) as i64) as f64 / 2f64.powi(64);
            max_err = max_err.max(err.abs());
        }
        assert!(
            max_err < 2f64.powi(-30),
            "max level-2 FFT error 2^{}",
            max_err.log2()
        );
    }

    /// The level-2 step's fused rounding and add ([`FftPlan::add_rounded_u64`]) equals the scalar
    /// rounding (`u64::from_f64_mod`) followed by a wrapping add, with every kernel, on edge cases
    /// (halves, zeros, subnormals, magnitudes past 2^64, odd tail lengths) and random magnitudes.
    #[test]
    fn add_rounded_u64_matches_scalar() {
        let mut x: Vec<f64> = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            5e-324,
            -1e-310,
            0.49999999999999994,
            2f64.powi(63),
            -(2f64.powi(63)),
            2f64.powi(64) + 2f64.powi(12),
            -(2f64.powi(90) + 2f64.powi(40)),
            2f64.powi(1000),
            (1u64 << 53) as f64 - 0.5,
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
        for _ in 0..3001 {
            let v = rng.gen_range(0.5..1.0) * 2f64.powi(rng.gen_range(-10..90));
            x.push(if rng.gen() { v } else { -v });
        }
        let start: Vec<u64> = (0..x.len()).map(|_| rng.gen()).collect();
        let want: Vec<u64> = start
            .iter()
            .zip(&x)
            .map(|(&o, &v)| o.wrapping_add(u64::from_f64_mod(v)))
            .collect();
        for k in Kernel::available() {
            let p = FftPlan::with_kernel(2048, k);
            for len in [x.len(), 7, 8, 13] {
                let mut got = start[..len].to_vec();
                p.add_rounded_u64(&mut got, &x[..len]);
                assert_eq!(got, want[..len], "{k:?}, {len} values");
            }
        }
    }
}
