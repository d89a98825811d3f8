//! The private key-switching key of circuit bootstrapping in a blocked layout, and its kernels.
//!
//! A private key switch of K level-2 samples (a batch's gadget levels) computes, for every output word
//! w (2·N1 words: the TRLWE's mask then body) and output k, out[k][w] = −Σ_e d[k][e]·key[e][w] over
//! the key's (N2+1)·t entries e, with small signed digits d. Entry-major (one entry's 2·N1 words,
//! then the next's, as the key is generated), every entry sweeps all K outputs (256 KB for a batch of
//! 8 at ℓ = 4): L2-bound. Here the key is stored in chunks of [`CHUNK`] entries, and within a chunk in
//! blocks of [`BLOCK`] words ("slabs" of CHUNK × BLOCK words): a kernel keeps several outputs' BLOCK
//! words in registers while it runs through a slab's entries, reading each digit (from a CHUNK-digit
//! window per output that stays in L1) and each key word once; slabs follow one another in memory,
//! so the key is still one sequential stream. Splitting the blocks between threads splits the work
//! and the key traffic, with every output word computed exactly as in one thread.
//!
//! **16-bit limbs of entry pairs.** Within a slab, entries go in pairs (2p, 2p + 1), and each word
//! k = kh·2^16 + kl is stored as two signed 16-bit limbs (kl ∈ [−2^15, 2^15), kh = (k − kl)/2^16
//! mod 2^16): for pair p, 16 "low" u32 words holding (kl of entry 2p, kl of entry 2p + 1) for the
//! block's 16 words, then 16 "high" words holding the two kh. Then d0·k0 + d1·k1 =
//! (d0·kl0 + d1·kl1) + 2^16·(d0·kh0 + d1·kh1) mod 2^32, and each bracket is one `vpdpwssd` (AVX-512
//! VNNI: 16 lanes of two 16 × 16-bit products added to a 32-bit accumulator) or `vpmaddwd` + `vpaddd`
//! (AVX2) with the digit pair broadcast. The key is as large as before (2 × 16 bits a word); the
//! multiplier work per word and entry is the same as a `vpmulld`'s, but a pair costs one digit
//! broadcast and no separate subtraction, where the 32-bit kernel paid a broadcast, a `vpmulld` and a
//! `vpsubd` per entry. The digits must fit in i16 (|d| ≤ 2^15 − 1: any privKS gadget of base ≤ 2^15;
//! `default_128`'s are in [−4, 4]); for digits that do not, [`PrivKsKey::apply`] runs the portable
//! kernel, which rebuilds each word and is exact for any digit.
//!
//! Kernels: portable, AVX2 (`vpmaddwd`, 2 outputs per pass) and AVX-512 VNNI (`vpdpwssd`, 8 outputs
//! per pass; where [`Kernel::detect`] gives AVX-512 but the CPU lacks AVX-512BW/VNNI, the AVX2
//! kernel); all exact u32 arithmetic, so identical results (tested below).

use crate::fft::Kernel;
use rayon::prelude::*;
use std::ops::Range;

/// Entries per chunk (even: entries go in pairs).
pub(crate) const CHUNK: usize = 128;
/// Words per block (one AVX-512 vector of u32).
pub(crate) const BLOCK: usize = 16;

/// Entry pairs per chunk.
const PAIRS: usize = CHUNK / 2;

/// How far ahead (in u32 words) the vector kernels prefetch the slab they stream: 4 KiB.
#[cfg(target_arch = "x86_64")]
const PREFETCH_WORDS: usize = 1024;

/// The two 16-bit limbs (kl, kh) of a key word k, kl signed (k = kh·2^16 + kl mod 2^32).
#[inline(always)]
fn limbs(k: u32) -> (u16, u16) {
    (k as u16, (k.wrapping_add(0x8000) >> 16) as u16)
}

/// The key word from its limbs ([`limbs`]'s inverse).
#[inline(always)]
fn from_limbs(kl: u16, kh: u16) -> u32 {
    ((kh as u32) << 16).wrapping_add(kl as i16 as i32 as u32)
}

/// Index of entry e's (local to its chunk: e < CHUNK) limb word for block word w (< BLOCK) in a slab,
/// and which half of it: (index of the low limb's u32, index of the high limb's u32, shift).
#[inline(always)]
fn slab_pos(e: usize, w: usize) -> (usize, usize, u32) {
    let base = (e / 2) * 2 * BLOCK + w;
    (base, base + BLOCK, 16 * (e % 2) as u32)
}

/// One function's private key-switching key, blocked (see the module docs). Entries past `entries`
/// (the last chunk's padding) are zero.
#[derive(Debug)]
pub(crate) struct PrivKsKey {
    entries: usize,
    width: usize,
    data: Vec<u32>,
}

impl PrivKsKey {
    /// Builds the key from `group(g)`, which returns entries g·per … g·per + per − 1 (`width` words
    /// each, back to back); multi-threaded over chunks. `width` must be a multiple of [`BLOCK`].
    pub(crate) fn build(
        entries: usize,
        width: usize,
        per: usize,
        group: impl Fn(usize) -> Vec<u32> + Sync,
    ) -> PrivKsKey {
        assert!(width.is_multiple_of(BLOCK) && per > 0 && width > 0);
        let blocks = width / BLOCK;
        let chunk_words = blocks * CHUNK * BLOCK;
        let mut data = vec![0u32; entries.div_ceil(CHUNK) * chunk_words];
        data.par_chunks_mut(chunk_words)
            .enumerate()
            .for_each(|(c, chunk)| {
                let (e0, e1) = (c * CHUNK, ((c + 1) * CHUNK).min(entries));
                for g in e0 / per..(e1 - 1) / per + 1 {
                    let words = group(g);
                    for j in 0..per {
                        let e = g * per + j;
                        if !(e0..e1).contains(&e) {
                            continue;
                        }
                        for (w, &x) in words[j * width..(j + 1) * width].iter().enumerate() {
                            chunk[(w / BLOCK) * CHUNK * BLOCK + (e - e0) * BLOCK + w % BLOCK] = x;
                        }
                    }
                }
                // Each slab from entry-major words (entry e's BLOCK words at e·BLOCK) to limb pairs.
                let mut plain = vec![0u32; CHUNK * BLOCK];
                for slab in chunk.chunks_exact_mut(CHUNK * BLOCK) {
                    plain.copy_from_slice(slab);
                    for (p, pair) in plain.chunks_exact(2 * BLOCK).enumerate() {
                        let (k0, k1) = pair.split_at(BLOCK);
                        for (w, (&x0, &x1)) in k0.iter().zip(k1).enumerate() {
                            let ((l0, h0), (l1, h1)) = (limbs(x0), limbs(x1));
                            let (lo, hi, _) = slab_pos(2 * p, w);
                            slab[lo] = l0 as u32 | (l1 as u32) << 16;
                            slab[hi] = h0 as u32 | (h1 as u32) << 16;
                        }
                    }
                }
            });
        PrivKsKey {
            entries,
            width,
            data,
        }
    }

    /// Words per entry (2·N1).
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Blocks of [`BLOCK`] words per entry.
    pub(crate) fn blocks(&self) -> usize {
        self.width / BLOCK
    }

    /// Entries with the last chunk's padding: the digit rows' length.
    pub(crate) fn padded_entries(&self) -> usize {
        self.entries.div_ceil(CHUNK) * CHUNK
    }

    /// Bytes in memory.
    pub(crate) fn size_bytes(&self) -> usize {
        self.data.len() * 4
    }

    /// Word w of entry e.
    #[cfg(test)]
    fn word(&self, e: usize, w: usize) -> u32 {
        let slab = ((e / CHUNK) * self.blocks() + w / BLOCK) * CHUNK * BLOCK;
        let (lo, hi, sh) = slab_pos(e % CHUNK, w % BLOCK);
        from_limbs(
            (self.data[slab + lo] >> sh) as u16,
            (self.data[slab + hi] >> sh) as u16,
        )
    }

    /// out −= Σ_e digits[k·E' + e]·key[e] on the words of `blocks`, for `outputs` outputs, where E' =
    /// [`Self::padded_entries`] (digits past the real entries must be zero… or anything: the padding
    /// entries are zero). `out` is block-major: for each block of the range, the outputs' BLOCK words
    /// one after the other (`blocks.len() · outputs · BLOCK` words). Digits are signed values as u32
    /// words; the vector kernels take them in i16 pairs, and where one does not fit in i16 the
    /// portable kernel runs instead (the same result).
    pub(crate) fn apply(
        &self,
        digits: &[u32],
        outputs: usize,
        blocks: Range<usize>,
        out: &mut [u32],
        kernel: Kernel,
    ) {
        let ep = self.padded_entries();
        assert!(
            digits.len() == outputs * ep
                && blocks.start <= blocks.end
                && blocks.end <= self.blocks()
                && out.len() == blocks.len() * outputs * BLOCK,
            "private key switch: digits, block range and output must match the key"
        );
        if outputs == 0 {
            return;
        }
        // Digit pairs (d[2p] in the low 16 bits, d[2p + 1] in the high), E'/2 per output; None if a
        // digit does not fit in i16.
        let pairs: Option<Vec<u32>> = match kernel {
            Kernel::Portable => None,
            _ => digits
                .chunks_exact(2)
                .map(|d| {
                    let (a, b) = (d[0] as i32, d[1] as i32);
                    let fits = |x: i32| i16::try_from(x).is_ok();
                    (fits(a) && fits(b)).then_some((a as u16 as u32) | ((b as u16 as u32) << 16))
                })
                .collect(),
        };
        let kernel = if pairs.is_some() {
            kernel
        } else {
            Kernel::Portable
        };
        let slab_words = CHUNK * BLOCK;
        for c in 0..ep / CHUNK {
            let chunk = &self.data[c * self.blocks() * slab_words..][..self.blocks() * slab_words];
            for b in blocks.clone() {
                let slab = &chunk[b * slab_words..(b + 1) * slab_words];
                let o = &mut out[(b - blocks.start) * outputs * BLOCK..][..outputs * BLOCK];
                let mut k = 0;
                while k < outputs {
                    let left = outputs - k;
                    let ok = &mut o[k * BLOCK..];
                    k += match &pairs {
                        Some(p) => {
                            let dig = &p[(k * ep + c * CHUNK) / 2..];
                            slab_pass(kernel, left, slab, dig, ep / 2, ok)
                        }
                        None => {
                            let dig = &digits[k * ep + c * CHUNK..];
                            slab_pass(Kernel::Portable, left, slab, dig, ep, ok)
                        }
                    };
                }
            }
        }
    }
}

/// Whether the CPU has the AVX-512 extensions of the VNNI kernels (F, BW, VNNI; cached): this slab
/// kernel and the identity key switch's tiled one (`bootstrap`).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx512_vnni() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
    })
}

/// One pass of as many of the `left` outputs as a kernel keeps in registers over one slab; returns
/// how many it did. `dig` holds, for the portable kernel, each output's CHUNK digits (rows `stride`
/// apart); for the vector kernels, each output's CHUNK/2 digit pairs (rows `stride` pairs apart).
fn slab_pass(
    kernel: Kernel,
    left: usize,
    slab: &[u32],
    dig: &[u32],
    stride: usize,
    out: &mut [u32],
) -> usize {
    macro_rules! pass {
        ($f:ident, $($kb:literal),+) => {{
            $(if left >= $kb {
                $f::<$kb>(slab, dig, stride, out);
                return $kb;
            })+
            unreachable!("left ≥ 1")
        }};
    }
    match kernel {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if has_avx512_vnni() => {
            fn f<const KB: usize>(s: &[u32], d: &[u32], st: usize, o: &mut [u32]) {
                // SAFETY: has_avx512_vnni() checked AVX-512F/BW/VNNI just above; slab_vnni checks
                // the slice lengths it relies on.
                unsafe { slab_vnni::<KB>(s, d, st, o) }
            }
            pass!(f, 8, 4, 2, 1)
        }
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 | Kernel::Avx2Fma => {
            fn f<const KB: usize>(s: &[u32], d: &[u32], st: usize, o: &mut [u32]) {
                // SAFETY: Kernel::Avx2Fma and Kernel::Avx512 are only detected (or listed as
                // available) when the CPU supports AVX2; slab_avx2 checks the slice lengths it
                // relies on.
                unsafe { slab_avx2::<KB>(s, d, st, o) }
            }
            pass!(f, 2, 1)
        }
        _ => pass!(slab_portable, 8, 4, 2, 1),
    }
}

/// Checks the lengths a slab kernel relies on: a slab of CHUNK entries, KB digit rows of `per`
/// values (CHUNK digits or CHUNK/2 pairs) `stride` apart, KB outputs of BLOCK words.
#[inline(always)]
fn check_slab<const KB: usize>(slab: &[u32], dig: &[u32], per: usize, stride: usize, out: &[u32]) {
    assert!(
        slab.len() >= CHUNK * BLOCK
            && stride >= per
            && dig.len() >= (KB - 1) * stride + per
            && out.len() >= KB * BLOCK
    );
}

/// The portable slab pass: KB outputs' BLOCK words accumulated over the slab's CHUNK entries, each
/// key word rebuilt from its limbs and multiplied by its digit (exact for any u32 digit).
fn slab_portable<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &mut [u32]) {
    check_slab::<KB>(slab, dig, CHUNK, stride, out);
    let mut acc = [[0u32; BLOCK]; KB];
    for (k, a) in acc.iter_mut().enumerate() {
        a.copy_from_slice(&out[k * BLOCK..(k + 1) * BLOCK]);
    }
    for (p, pair) in slab.chunks_exact(2 * BLOCK).take(PAIRS).enumerate() {
        let (lo, hi) = pair.split_at(BLOCK);
        for half in 0..2 {
            let sh = 16 * half as u32;
            let e = 2 * p + half;
            for (k, a) in acc.iter_mut().enumerate() {
                let d = dig[k * stride + e];
                for ((x, &l), &h) in a.iter_mut().zip(lo).zip(hi) {
                    let y = from_limbs((l >> sh) as u16, (h >> sh) as u16);
                    *x = x.wrapping_sub(y.wrapping_mul(d));
                }
            }
        }
    }
    for (k, a) in acc.iter().enumerate() {
        out[k * BLOCK..(k + 1) * BLOCK].copy_from_slice(a);
    }
}

/// The vector slab pass with AVX-512 VNNI: per output, the low limbs' sums and the high limbs' sums
/// in two registers (KB ≤ 8 outputs: 16 accumulators), one `vpdpwssd` each per entry pair with the
/// output's digit pair broadcast; at the end out −= lo + (hi << 16). The slab prefetched
/// [`PREFETCH_WORDS`] ahead (running into the next slab, which follows in memory).
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512BW and AVX-512 VNNI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn slab_vnni<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &mut [u32]) {
    use std::arch::x86_64::*;
    check_slab::<KB>(slab, dig, PAIRS, stride, out);
    let (ps, pd, po) = (slab.as_ptr(), dig.as_ptr(), out.as_mut_ptr());
    // SAFETY: checked above: the slab holds CHUNK·16 words (reads at p·32 and p·32 + 16, 16 words
    // each, for p < CHUNK/2), the digit pairs (k·stride + p) for k < KB, p < CHUNK/2, and out KB·16
    // words; the prefetch addresses are formed with wrapping_add and prefetches never fault; the
    // inline `vpdpwssd`s only read and write the zmm registers given to them (AVX-512 VNNI, which
    // the caller guarantees).
    unsafe {
        let mut lo = [_mm512_setzero_si512(); KB];
        let mut hi = [_mm512_setzero_si512(); KB];
        for p in 0..PAIRS {
            let at = p * 2 * BLOCK;
            _mm_prefetch::<_MM_HINT_T0>(ps.wrapping_add(at + PREFETCH_WORDS) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(ps.wrapping_add(at + BLOCK + PREFETCH_WORDS) as *const i8);
            let kl = _mm512_loadu_si512(ps.add(at) as *const __m512i);
            let kh = _mm512_loadu_si512(ps.add(at + BLOCK) as *const __m512i);
            for k in 0..KB {
                let d = _mm512_set1_epi32(*pd.add(k * stride + p) as i32);
                // `vpdpwssd` written out: LLVM's machine combiner would otherwise split the
                // intrinsic into `vpmaddwd` + `vpaddd` (to shorten the accumulator's dependency
                // chain, which is not the bottleneck here), doubling the µops.
                std::arch::asm!(
                    "vpdpwssd {lo}, {kl}, {d}",
                    "vpdpwssd {hi}, {kh}, {d}",
                    lo = inout(zmm_reg) lo[k],
                    hi = inout(zmm_reg) hi[k],
                    kl = in(zmm_reg) kl,
                    kh = in(zmm_reg) kh,
                    d = in(zmm_reg) d,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
        }
        for k in 0..KB {
            let o = _mm512_loadu_si512(po.add(k * BLOCK) as *const __m512i);
            let sum = _mm512_add_epi32(lo[k], _mm512_slli_epi32::<16>(hi[k]));
            _mm512_storeu_si512(po.add(k * BLOCK) as *mut __m512i, _mm512_sub_epi32(o, sum));
        }
    }
}

/// The vector slab pass with AVX2: as [`slab_vnni`] with `vpmaddwd` + `vpaddd` on 8-lane halves
/// (each output's 16 words' low and high sums in four registers; KB ≤ 2 outputs).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn slab_avx2<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &mut [u32]) {
    use std::arch::x86_64::*;
    check_slab::<KB>(slab, dig, PAIRS, stride, out);
    let (ps, pd, po) = (slab.as_ptr(), dig.as_ptr(), out.as_mut_ptr());
    // SAFETY: as in slab_vnni: every read and write is within the lengths checked above;
    // prefetches never fault.
    unsafe {
        let z = _mm256_setzero_si256();
        let mut acc = [[z; 4]; KB];
        for p in 0..PAIRS {
            let at = p * 2 * BLOCK;
            _mm_prefetch::<_MM_HINT_T0>(ps.wrapping_add(at + PREFETCH_WORDS) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(ps.wrapping_add(at + BLOCK + PREFETCH_WORDS) as *const i8);
            let kv = [
                _mm256_loadu_si256(ps.add(at) as *const __m256i),
                _mm256_loadu_si256(ps.add(at + 8) as *const __m256i),
                _mm256_loadu_si256(ps.add(at + BLOCK) as *const __m256i),
                _mm256_loadu_si256(ps.add(at + BLOCK + 8) as *const __m256i),
            ];
            for (k, a) in acc.iter_mut().enumerate() {
                let d = _mm256_set1_epi32(*pd.add(k * stride + p) as i32);
                for (x, &y) in a.iter_mut().zip(&kv) {
                    *x = _mm256_add_epi32(*x, _mm256_madd_epi16(y, d));
                }
            }
        }
        for (k, a) in acc.iter().enumerate() {
            for half in 0..2 {
                let at = po.add(k * BLOCK + 8 * half);
                let o = _mm256_loadu_si256(at as *const __m256i);
                let sum = _mm256_add_epi32(a[half], _mm256_slli_epi32::<16>(a[2 + half]));
                _mm256_storeu_si256(at as *mut __m256i, _mm256_sub_epi32(o, sum));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(seed: u32) -> impl FnMut() -> u32 {
        let mut x = seed.wrapping_mul(0x9e37_79b9) | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        }
    }

    /// A word's two 16-bit limbs give the word back, for edge values around the limbs' sign and
    /// carry boundaries and for random words.
    #[test]
    fn limbs_round_trip() {
        let mut r = xorshift(3);
        let edges = [
            0u32,
            1,
            0x7fff,
            0x8000,
            0x8001,
            0xffff,
            0x1_0000,
            0x7fff_7fff,
            0x7fff_8000,
            0x8000_0000,
            0xffff_7fff,
            0xffff_8000,
            0xffff_ffff,
        ];
        for k in edges.into_iter().chain((0..10_000).map(|_| r())) {
            let (kl, kh) = limbs(k);
            assert_eq!(from_limbs(kl, kh), k, "{k:#x}");
            // The identity the vector kernels use: d·k = d·kl + 2^16·(d·kh) mod 2^32, kl and kh
            // read as i16.
            for d in [-32768i32, -4, -1, 1, 3, 32767] {
                let split = d
                    .wrapping_mul(kl as i16 as i32)
                    .wrapping_add(d.wrapping_mul(kh as i16 as i32) << 16);
                assert_eq!(split as u32, k.wrapping_mul(d as u32), "{k:#x}·{d}");
            }
        }
    }

    /// The blocked key holds the generated words where `word` says; every kernel's result equals the
    /// plain entry-major formula out[k][w] −= Σ_e d[k][e]·key[e][w] (exact u32 arithmetic), for output
    /// counts that exercise every pass width and a partial last chunk, for small digits (the privKS
    /// gadget's), digits over the whole i16 range, and digits outside it (the portable fallback);
    /// and block ranges split between calls give the whole call's words.
    #[test]
    fn kernels_match_the_formula() {
        let (entries, width, per) = (3 * CHUNK + 37, 4 * BLOCK, 5);
        let mut r = xorshift(7);
        let edges = [0x8000u32, 0x7fff, 0xffff_8000, 0xffff_ffff, 0x8000_0000];
        let flat: Vec<u32> = (0..entries.div_ceil(per) * per * width)
            .map(|i| if i % 7 == 0 { edges[i % 5] } else { r() })
            .collect();
        let key = PrivKsKey::build(entries, width, per, |g| {
            flat[g * per * width..(g + 1) * per * width].to_vec()
        });
        for e in [0, 1, 2, 3, CHUNK - 1, CHUNK, CHUNK + 1, entries - 1] {
            for w in [0, 1, BLOCK - 1, BLOCK, width - 1] {
                assert_eq!(key.word(e, w), flat[e * width + w], "entry {e} word {w}");
            }
        }
        let ep = key.padded_entries();
        for (outputs, mode) in [
            (1usize, 0),
            (3, 0),
            (4, 0),
            (7, 0),
            (16, 0),
            (21, 0),
            (32, 0),
        ]
        .into_iter()
        .chain([(9, 1), (5, 2)])
        {
            let mut digits = vec![0u32; outputs * ep];
            for k in 0..outputs {
                for e in 0..entries {
                    digits[k * ep + e] = match mode {
                        0 => ((r() % 8) as i32 - 4) as u32,
                        1 if e % 5 == 0 => [-32768i32, 32767][e % 2] as u32,
                        1 => r() as i16 as i32 as u32,
                        _ if e == entries / 2 => 1 << 15,
                        _ => ((r() % 8) as i32 - 4) as u32,
                    };
                }
            }
            let start: Vec<u32> = (0..outputs * width).map(|_| r()).collect();
            let mut want = start.clone();
            for k in 0..outputs {
                for e in 0..entries {
                    let d = digits[k * ep + e];
                    for w in 0..width {
                        let x = &mut want[k * width + w];
                        *x = x.wrapping_sub(flat[e * width + w].wrapping_mul(d));
                    }
                }
            }
            let nb = key.blocks();
            let mut init = vec![0u32; nb * outputs * BLOCK];
            for k in 0..outputs {
                for w in 0..width {
                    init[(w / BLOCK) * outputs * BLOCK + k * BLOCK + w % BLOCK] =
                        start[k * width + w];
                }
            }
            for kernel in Kernel::available() {
                let mut out = init.clone();
                key.apply(&digits, outputs, 0..nb, &mut out, kernel);
                for k in 0..outputs {
                    for w in 0..width {
                        let got = out[(w / BLOCK) * outputs * BLOCK + k * BLOCK + w % BLOCK];
                        assert_eq!(
                            got,
                            want[k * width + w],
                            "{kernel:?}, digits {mode}: output {k} word {w}"
                        );
                    }
                }
                // Two block ranges, as two threads would run them.
                let mut split = init.clone();
                let (lo, hi) = split.split_at_mut(outputs * BLOCK);
                key.apply(&digits, outputs, 0..1, lo, kernel);
                key.apply(&digits, outputs, 1..nb, hi, kernel);
                assert_eq!(split, out, "{kernel:?}: split blocks");
            }
        }
    }
}
