//! The negacyclic number-theoretic transform over `Z_q[X]/(X^N + 1)`, N = 2^1 … 2^17 (and up to 2^20).
//!
//! **Order convention (same as SEAL and SEAL-Embedded):** the forward transform takes coefficients
//! a_0 … a_{N−1} in natural order and returns `A[j] = a(ψ^{2·bitrev(j)+1})`, i.e. evaluations at the odd
//! powers of the primitive 2N-th root ψ in bit-reversed order; [`NttTable::inverse`] undoes it exactly.
//! Point-wise products of two forward transforms are the transform of the negacyclic product.
//! With the default root (the smallest primitive 2N-th root, SEAL's choice) the values are identical to
//! SEAL's `ntt_negacyclic_harvey`.
//!
//! Algorithms: Harvey's lazy butterflies with Shoup twiddles (Harvey 2014), the twist by ψ merged into
//! the twiddles and N^{-1} merged into the last inverse stage (Longa–Naehrig 2016). Kernels:
//! `portable` (reference), `avx2`, `avx2-fma` (q < 2^50), `avx512` and `avx512-ifma` (q < 2^50).
//! The default ([`Backend::best`], used by every table from [`NttTable::new`], hence by BFV and
//! CKKS) is chosen at run time from the CPU's features and the modulus size by the measured rule in
//! [`Backend::preference`]; [`NttTable::with_backend`] picks a kernel explicitly (tests, benches).
//! [`NttOnTheFly`] keeps no twiddle table at all (seed 003's memory-saving mode).

/// The butterflies of one stage of a vector kernel (`avx2`, `avx2_fma`, `avx512`) whose half-block
/// `t` holds whole vectors of `lanes` words: for each block `i` of `blocks`, the twiddle `w` =
/// `twiddle` once, then for each vector offset j < t the vectors x at word 2ti + j and y t words
/// later, `load`ed (with the optional extra argument), replaced by `butterfly` and `store`d back.
/// `load` and `store` are the kernel's own functions. Expanded in place, inside the kernel's
/// `unsafe` block, so it runs with the kernel's target features; `p` points to 2t·blocks words.
#[cfg(target_arch = "x86_64")]
macro_rules! vector_stage {
    ($p:expr, $blocks:expr, $t:expr, $lanes:expr, $load:ident $(($extra:expr))?,
     |$i:ident| $twiddle:expr, |$x:ident, $y:ident, $w:ident| $butterfly:expr) => {{
        let (p, t) = ($p, $t);
        for $i in 0..$blocks {
            let $w = $twiddle;
            let base = 2 * t * $i;
            let mut j = 0;
            while j < t {
                // SAFETY: base + t + j + lanes ≤ 2t(i + 1) ≤ 2t·blocks, so both accesses are in
                // bounds.
                let $x = $load(p.add(base + j) $(, $extra)?);
                let $y = $load(p.add(base + t + j) $(, $extra)?);
                let (x, y) = $butterfly;
                store(p.add(base + j), x);
                store(p.add(base + t + j), y);
                j += $lanes;
            }
        }
    }};
}

/// The forward and inverse kernels of both AVX2 backends, which share their stage structure:
/// `avx2` (integer Shoup lanes, any q < 2^62) and `avx2_fma` (doubles, q < 2^50). `$root` is the
/// module's twiddle type. The module provides the vector operations the stages use: `consts`,
/// `load`/`store` (working lanes), `load_u` (input words → working lanes), `store_u` (output words),
/// `finish` (working lanes → words in [0, q)), `broadcast`, `twiddle_pairs` (k, k, k+1, k+1),
/// `twiddle_quad` (k, k+2, k+1, k+3), `halves` and `unpack` (the lane regroupings of the stages
/// t = 2 and t = 1, each its own inverse), the butterflies `ct` and `gs`, and `last_butterfly` (the
/// last inverse stage with N^{-1} merged, fully reduced).
///
/// `forward`: input words in [0, 4q), output in [0, q); `inverse` (N^{-1} and the last twiddle
/// merged into `n_inv` and `last`): input in [0, 2q), output in [0, q). Both require
/// n = a.len() ≥ 16, a power of two, and n-entry twiddle tables.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_kernels {
    ($features:literal, $root:ty) => {
        /// Forward transform (see `avx2_kernels!` in `ntt/mod.rs`).
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn forward(a: &mut [u64], roots: &[$root], q: &Modulus) {
            // SAFETY: the caller upholds this function's safety contract (its target features are
            // present, pointers and lengths in bounds); the block relies on nothing else.
            unsafe {
                let n = a.len();
                let c = consts(q);
                let p = a.as_mut_ptr();
                // Stages with t ≥ 4; the first (t = n/2, one block) converts the input as it loads.
                let mut t = n / 2;
                vector_stage!(
                    p,
                    1,
                    t,
                    4,
                    load_u(&c),
                    |i| broadcast(roots[1 + i]),
                    |x, y, w| { ct(x, y, w, &c) }
                );
                let mut m = 2;
                while t > 4 {
                    t >>= 1;
                    vector_stage!(p, m, t, 4, load, |i| broadcast(roots[m + i]), |x, y, w| {
                        ct(x, y, w, &c)
                    });
                    m <<= 1;
                }
                // t = 2: blocks of 4 words; two blocks per pair of vectors.
                for i in (0..m).step_by(2) {
                    let w = twiddle_pairs(roots, m + i);
                    // SAFETY: 4i + 8 ≤ 2m·2 = n words.
                    let (x, y) = halves(load(p.add(4 * i)), load(p.add(4 * i + 4)));
                    let (x, y) = ct(x, y, w, &c);
                    let (v0, v1) = halves(x, y);
                    store(p.add(4 * i), v0);
                    store(p.add(4 * i + 4), v1);
                }
                m <<= 1;
                // t = 1: pairs; four blocks per pair of vectors; the final reduction merged in.
                for i in (0..m).step_by(4) {
                    let w = twiddle_quad(roots, m + i);
                    // SAFETY: 2i + 8 ≤ 2m = n words.
                    let (x, y) = unpack(load(p.add(2 * i)), load(p.add(2 * i + 4)));
                    let (x, y) = ct(x, y, w, &c);
                    let (x, y) = (finish(x, &c), finish(y, &c));
                    store_u(p.add(2 * i), _mm256_unpacklo_epi64(x, y));
                    store_u(p.add(2 * i + 4), _mm256_unpackhi_epi64(x, y));
                }
            }
        }

        /// Inverse transform including N^{-1} (see `avx2_kernels!` in `ntt/mod.rs`).
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn inverse(
            a: &mut [u64],
            inv_roots: &[$root],
            n_inv: $root,
            last: $root,
            q: &Modulus,
        ) {
            // SAFETY: the caller upholds this function's safety contract (its target features are
            // present, pointers and lengths in bounds); the block relies on nothing else.
            unsafe {
                let n = a.len();
                let c = consts(q);
                let p = a.as_mut_ptr();
                // t = 1 (h = n/2 blocks), converting the input as it loads.
                let mut h = n / 2;
                for i in (0..h).step_by(4) {
                    let w = twiddle_quad(inv_roots, h + i);
                    // SAFETY: 2i + 8 ≤ n.
                    let (x, y) = unpack(load_u(p.add(2 * i), &c), load_u(p.add(2 * i + 4), &c));
                    let (x, y) = gs(x, y, w, &c);
                    let (v0, v1) = unpack(x, y);
                    store(p.add(2 * i), v0);
                    store(p.add(2 * i + 4), v1);
                }
                // t = 2.
                h >>= 1;
                for i in (0..h).step_by(2) {
                    let w = twiddle_pairs(inv_roots, h + i);
                    // SAFETY: 4i + 8 ≤ n.
                    let (x, y) = halves(load(p.add(4 * i)), load(p.add(4 * i + 4)));
                    let (x, y) = gs(x, y, w, &c);
                    let (v0, v1) = halves(x, y);
                    store(p.add(4 * i), v0);
                    store(p.add(4 * i + 4), v1);
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
                        |x, y, w| { gs(x, y, w, &c) }
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
                    let (s, d) = last_butterfly(x, y, wn, wl, &c);
                    store_u(p.add(j), s);
                    store_u(p.add(half + j), d);
                    j += 4;
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx2_fma;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod portable;

use alloc::vec::Vec;

use crate::error::{MathError, Result};
use crate::modulus::{Modulus, ShoupConst};
use crate::prime::{check_ntt_prime, is_primitive_root, minimal_primitive_root};

/// Which kernel family runs a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Scalar Harvey butterflies; always available; the reference in tests.
    Portable,
    /// AVX2, four 64-bit lanes, Shoup products from 32-bit multiplies; any q < 2^62, N ≥ 16.
    Avx2,
    /// AVX2 + FMA in double precision (error-free products, floating-point Barrett); q < 2^50.
    Avx2Fma,
    /// AVX-512F/DQ, eight 64-bit lanes; any q < 2^62, N ≥ 16.
    Avx512,
    /// AVX-512 IFMA52, eight lanes, 52-bit Shoup products; q < 2^50, N ≥ 16.
    Ifma,
}

impl Backend {
    /// Every backend this crate has, whether or not this CPU supports it.
    pub const ALL: [Backend; 5] = [
        Backend::Portable,
        Backend::Avx2,
        Backend::Avx2Fma,
        Backend::Avx512,
        Backend::Ifma,
    ];

    /// Short name for tables and error messages.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx2Fma => "avx2-fma",
            Backend::Avx512 => "avx512",
            Backend::Ifma => "avx512-ifma",
        }
    }

    /// Whether this backend can run on this CPU for modulus q.
    pub fn is_available(&self, q: &Modulus) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::is_supported(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2Fma => q.bits() <= avx2_fma::MAX_BITS && avx2_fma::is_supported(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::wide_supported(),
            #[cfg(target_arch = "x86_64")]
            Backend::Ifma => q.bits() <= IFMA_MAX_BITS && avx512::ifma_supported(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => {
                let _ = q;
                false
            }
        }
    }

    /// The default backend for modulus q on this CPU: the first entry of [`Backend::preference`]
    /// that the CPU (detected at run time) and the modulus allow, else [`Backend::Portable`].
    /// Every [`NttTable`] built by [`NttTable::new`] / [`NttTable::with_root`] runs on it, so this is
    /// what BFV and CKKS use. (SIMD kernels need N ≥ 16; smaller transforms fall back to the
    /// portable kernels whatever the backend.)
    pub fn best(q: &Modulus) -> Backend {
        Backend::preference(q)
            .iter()
            .copied()
            .find(|b| b.is_available(q))
            .unwrap_or(Backend::Portable)
    }

    /// The documented selection rule, fastest first, as measured with
    /// `cargo run --release -p vsp-bench -- ntt` (N = 4096 … 65536, BENCHMARKS.md "Arithmetic"):
    ///
    /// * q < 2^50 ([`IFMA_MAX_BITS`]): AVX-512 IFMA52 (eight lanes, 52-bit Shoup products), then
    ///   AVX2 + FMA in double precision, then the AVX-512 and AVX2 integer kernels. Forward
    ///   transforms on the AMD Zen 5 project machine (2026-12-01): IFMA 1.8–2.2× faster than
    ///   AVX2-FMA, which is 1.4–1.6× faster than integer AVX-512, itself ≈ 1.6× faster than integer
    ///   AVX2; on the earlier AVX2-only EPYC, AVX2-FMA was ≈ 2× faster than integer AVX2.
    /// * larger q (up to 2^62): the integer Shoup kernels, AVX-512F/DQ before AVX2 (Zen 5:
    ///   1.6–1.9× faster at N = 4096 … 65536).
    ///
    /// [`Backend::best`] takes the first entry available; the portable kernel is the fallback.
    pub fn preference(q: &Modulus) -> &'static [Backend] {
        if q.bits() <= IFMA_MAX_BITS {
            &[
                Backend::Ifma,
                Backend::Avx2Fma,
                Backend::Avx512,
                Backend::Avx2,
            ]
        } else {
            &[Backend::Avx512, Backend::Avx2]
        }
    }

    /// All backends that are available on this CPU for modulus q (portable first).
    pub fn available(q: &Modulus) -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available(q))
            .collect()
    }
}

/// The smallest primitive 2n-th root of unity mod q (SEAL's choice), for q NTT-friendly for n.
fn minimal_root(n: usize, modulus: &Modulus) -> Result<u64> {
    check_ntt_prime(modulus, n)?;
    minimal_primitive_root(2 * n as u64, modulus)
}

/// Checks that q is NTT-friendly for degree n and ψ a primitive 2n-th root of unity mod q.
fn check_root(n: usize, modulus: &Modulus, psi: u64) -> Result<()> {
    check_ntt_prime(modulus, n)?;
    if !is_primitive_root(psi, 2 * n as u64, modulus) {
        return Err(MathError::NotPrimitiveRoot {
            root: psi,
            order: 2 * n as u64,
            modulus: modulus.value(),
        });
    }
    Ok(())
}

/// Largest modulus size for the IFMA backend: lazy values below 4q must fit in 52 bits.
pub const IFMA_MAX_BITS: u32 = 50;

/// Twiddles with 52-bit Shoup quotients ⌊w·2^52/q⌋ for the IFMA kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tables52 {
    roots: Vec<ShoupConst>,
    inv_roots: Vec<ShoupConst>,
    n_inv: ShoupConst,
    last: ShoupConst,
}

fn shoup52(c: ShoupConst, q: &Modulus) -> ShoupConst {
    ShoupConst {
        value: c.value,
        quotient: (((c.value as u128) << 52) / q.value() as u128) as u64,
    }
}

/// Twiddles as doubles for the AVX2-FMA kernels, stored as their bit patterns (keeps `Eq`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct TablesF64 {
    roots: Vec<u64>,
    inv_roots: Vec<u64>,
    n_inv: u64,
    last: u64,
}

/// Precomputed twiddles for one (N, q): ψ^{bitrev(k)} and ψ^{-bitrev(k)} with their Shoup quotients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttTable {
    n: usize,
    modulus: Modulus,
    psi: u64,
    backend: Backend,
    roots: Vec<ShoupConst>,
    inv_roots: Vec<ShoupConst>,
    n_inv: ShoupConst,
    /// N^{-1}·ψ^{-bitrev(1)}, the merged twiddle of the last inverse stage.
    last: ShoupConst,
    /// Present when the backend is IFMA.
    tables52: Option<Tables52>,
    /// Present when the backend is AVX2-FMA.
    tables_f64: Option<TablesF64>,
}

impl NttTable {
    /// Tables for degree `n` and NTT-friendly prime q (q ≡ 1 mod 2n), with the smallest primitive
    /// 2n-th root (SEAL's choice) and the fastest backend of this CPU.
    pub fn new(n: usize, modulus: Modulus) -> Result<Self> {
        let psi = minimal_root(n, &modulus)?;
        Self::with_root(n, modulus, psi)
    }

    /// Tables for a caller-chosen primitive 2n-th root ψ.
    pub fn with_root(n: usize, modulus: Modulus, psi: u64) -> Result<Self> {
        check_root(n, &modulus, psi)?;
        let q = &modulus;
        let log_n = n.trailing_zeros();
        let psi_inv = q.inv(psi)?;
        let bitrev = |k: usize| {
            if log_n == 0 {
                0
            } else {
                k.reverse_bits() >> (usize::BITS - log_n)
            }
        };
        let mut powers = Vec::with_capacity(n);
        let mut inv_powers = Vec::with_capacity(n);
        let (mut p, mut pi) = (1u64, 1u64);
        for _ in 0..n {
            powers.push(p);
            inv_powers.push(pi);
            p = q.mul(p, psi);
            pi = q.mul(pi, psi_inv);
        }
        let roots = (0..n).map(|k| q.shoup(powers[bitrev(k)])).collect();
        let inv_roots: Vec<ShoupConst> = (0..n).map(|k| q.shoup(inv_powers[bitrev(k)])).collect();
        let n_inv_value = q.inv(n as u64)?;
        let last = q.shoup(q.mul(n_inv_value, inv_roots[1].value));
        let table = Self {
            n,
            modulus,
            psi,
            backend: Backend::Portable,
            roots,
            inv_roots,
            n_inv: q.shoup(n_inv_value),
            last,
            tables52: None,
            tables_f64: None,
        };
        table.with_backend(Backend::best(&modulus))
    }

    /// The same tables running on backend `backend`; an error if the CPU or modulus does not allow it.
    pub fn with_backend(mut self, backend: Backend) -> Result<Self> {
        if !backend.is_available(&self.modulus) {
            return Err(MathError::BackendUnavailable {
                backend: backend.name(),
                reason: "CPU lacks the instructions or the modulus is too large",
            });
        }
        self.backend = backend;
        self.tables52 = None;
        self.tables_f64 = None;
        if backend == Backend::Avx2Fma {
            self.tables_f64 = Some(TablesF64 {
                roots: self
                    .roots
                    .iter()
                    .map(|c| (c.value as f64).to_bits())
                    .collect(),
                inv_roots: self
                    .inv_roots
                    .iter()
                    .map(|c| (c.value as f64).to_bits())
                    .collect(),
                n_inv: (self.n_inv.value as f64).to_bits(),
                last: (self.last.value as f64).to_bits(),
            });
        }
        if backend == Backend::Ifma {
            let q = &self.modulus;
            self.tables52 = Some(Tables52 {
                roots: self.roots.iter().map(|&c| shoup52(c, q)).collect(),
                inv_roots: self.inv_roots.iter().map(|&c| shoup52(c, q)).collect(),
                n_inv: shoup52(self.n_inv, q),
                last: shoup52(self.last, q),
            });
        }
        Ok(self)
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The prime q.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The primitive 2N-th root ψ the tables use.
    pub fn psi(&self) -> u64 {
        self.psi
    }

    /// The backend transforms run on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len != self.n {
            return Err(MathError::LengthMismatch {
                what: "NTT input",
                expected: self.n,
                got: len,
            });
        }
        Ok(())
    }

    /// In-place forward negacyclic NTT. Input in natural order with values in [0, 4q); output in
    /// bit-reversed order (see the module doc), fully reduced to [0, q).
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        self.check_len(a.len())?;
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the backend was checked available (AVX2 present) when it was selected, and
            // the length is N ≥ 16 with N-entry twiddle tables.
            Backend::Avx2 if self.n >= 16 => unsafe {
                avx2::forward(a, &self.roots, &self.modulus)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX2 and FMA checked at selection together with q < 2^50; tables built then.
            Backend::Avx2Fma if self.n >= 16 && self.tables_f64.is_some() => unsafe {
                if let Some(t) = &self.tables_f64 {
                    avx2_fma::forward(a, &t.roots, &self.modulus)
                }
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX-512F/DQ checked at selection; N ≥ 16, N-entry tables.
            Backend::Avx512 if self.n >= 16 => unsafe {
                avx512::forward_wide(a, &self.roots, &self.modulus)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: IFMA checked at selection together with q < 2^50; 52-bit tables built then.
            Backend::Ifma if self.n >= 16 && self.tables52.is_some() => unsafe {
                if let Some(t) = &self.tables52 {
                    avx512::forward_ifma(a, &t.roots, &self.modulus)
                }
            },
            _ => {
                portable::forward_lazy(a, &self.roots, &self.modulus);
                portable::reduce_from_4q(a, &self.modulus);
            }
        }
        Ok(())
    }

    /// In-place inverse negacyclic NTT (including the 1/N scaling). Input in bit-reversed order with
    /// values in [0, 2q); output in natural order, fully reduced to [0, q).
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        self.check_len(a.len())?;
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `forward`.
            Backend::Avx2 if self.n >= 16 => unsafe {
                avx2::inverse(a, &self.inv_roots, self.n_inv, self.last, &self.modulus)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `forward`.
            Backend::Avx2Fma if self.n >= 16 && self.tables_f64.is_some() => unsafe {
                if let Some(t) = &self.tables_f64 {
                    avx2_fma::inverse(a, &t.inv_roots, t.n_inv, t.last, &self.modulus)
                }
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `forward`.
            Backend::Avx512 if self.n >= 16 => unsafe {
                avx512::inverse_wide(a, &self.inv_roots, self.n_inv, self.last, &self.modulus)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `forward`.
            Backend::Ifma if self.n >= 16 && self.tables52.is_some() => unsafe {
                if let Some(t) = &self.tables52 {
                    avx512::inverse_ifma(a, &t.inv_roots, t.n_inv, t.last, &self.modulus)
                }
            },
            _ => {
                portable::inverse_lazy(a, &self.inv_roots, self.n_inv, self.last, &self.modulus);
                for x in a.iter_mut() {
                    *x = self.modulus.reduce_once(*x);
                }
            }
        }
        Ok(())
    }

    /// Point-wise product `a[i] ← a[i]·b[i] mod q` of two transformed operands in [0, q).
    pub fn mul_pointwise(&self, a: &mut [u64], b: &[u64]) -> Result<()> {
        self.check_len(a.len())?;
        self.check_len(b.len())?;
        let q = &self.modulus;
        for (x, &y) in a.iter_mut().zip(b) {
            *x = q.mul(*x, y);
        }
        Ok(())
    }

    /// The negacyclic product a·b mod (X^N + 1, q) of two coefficient vectors in [0, q).
    pub fn negacyclic_mul(&self, a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
        self.check_len(a.len())?;
        self.check_len(b.len())?;
        let mut fa = a.to_vec();
        let mut fb = b.to_vec();
        self.forward(&mut fa)?;
        self.forward(&mut fb)?;
        self.mul_pointwise(&mut fa, &fb)?;
        self.inverse(&mut fa)?;
        Ok(fa)
    }

    /// Twiddle-table memory in bytes (what [`NttOnTheFly`] saves).
    pub fn table_bytes(&self) -> usize {
        (self.roots.len() + self.inv_roots.len()) * core::mem::size_of::<ShoupConst>()
    }
}

/// A negacyclic NTT that stores no twiddle table: each stage derives its twiddles from ψ with one
/// multiplication per block (seed 003's "on-the-fly" roots). Same order convention and results as
/// [`NttTable`]; slower, but O(1) memory besides the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttOnTheFly {
    n: usize,
    modulus: Modulus,
    psi: u64,
    psi_inv: u64,
    n_inv: u64,
}

impl NttOnTheFly {
    /// On-the-fly transform for degree `n`, prime q ≡ 1 mod 2n and the smallest primitive root.
    pub fn new(n: usize, modulus: Modulus) -> Result<Self> {
        let psi = minimal_root(n, &modulus)?;
        Self::with_root(n, modulus, psi)
    }

    /// On-the-fly transform with a caller-chosen primitive 2n-th root ψ.
    pub fn with_root(n: usize, modulus: Modulus, psi: u64) -> Result<Self> {
        check_root(n, &modulus, psi)?;
        Ok(Self {
            n,
            modulus,
            psi,
            psi_inv: modulus.inv(psi)?,
            n_inv: modulus.inv(n as u64)?,
        })
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The prime q.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// In-place forward transform; input in [0, 4q), output in [0, q), bit-reversed order.
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        if a.len() != self.n {
            return Err(MathError::LengthMismatch {
                what: "NTT input",
                expected: self.n,
                got: a.len(),
            });
        }
        portable::forward_on_the_fly(a, self.psi, &self.modulus);
        Ok(())
    }

    /// In-place inverse transform; input in [0, 2q), output in [0, q), natural order.
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        if a.len() != self.n {
            return Err(MathError::LengthMismatch {
                what: "NTT input",
                expected: self.n,
                got: a.len(),
            });
        }
        portable::inverse_on_the_fly(a, self.psi_inv, self.n_inv, &self.modulus);
        Ok(())
    }
}

/// The negacyclic product a·b mod (X^N + 1, q) by the O(N²) schoolbook rule, for inputs in [0, q)
/// of one length N: the reference the transforms are tested against.
pub fn negacyclic_schoolbook(a: &[u64], b: &[u64], q: &Modulus) -> Vec<u64> {
    let n = a.len();
    let mut out = alloc::vec![0u64; n];
    for (i, &ai) in a.iter().enumerate() {
        if ai == 0 {
            continue;
        }
        for (j, &bj) in b.iter().enumerate() {
            let p = q.mul(ai, bj);
            let k = i + j;
            if k < n {
                out[k] = q.add(out[k], p);
            } else {
                out[k - n] = q.sub(out[k - n], p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
