//! The private key-switching key of circuit bootstrapping in a blocked layout, and its kernels.
//!
//! A private key switch of K level-2 samples (a batch's gadget levels) computes, for every output word
//! w (2·N1 words: the TRLWE's mask then body) and output k, out[k][w] = −Σ_e d[k][e]·key[e][w] over
//! the key's (N2+1)·t entries e, with small signed digits d. Entry-major (one entry's 2·N1 words,
//! then the next's, as the key is generated), every entry sweeps all K outputs (256 KB for a batch of
//! 8 at ℓ = 4): L2-bound. Here the key is stored in chunks of [`CHUNK`] entries, and within a chunk in
//! blocks of [`BLOCK`] words, each block's CHUNK × BLOCK words contiguous ("slabs"): a kernel keeps up
//! to 16 outputs' BLOCK words in registers while it runs through a slab's entries, reading each digit
//! (from a CHUNK-digit window per output that stays in L1) and each key word once; slabs follow one
//! another in memory, so the key is still one sequential stream. Splitting the blocks between threads
//! splits the work and the key traffic, with every output word computed exactly as in one thread.
//!
//! Kernels: portable, AVX2 (8 lanes, 4 outputs per pass) and AVX-512F (16 lanes, 16 outputs per
//! pass), chosen by [`Kernel::detect`]; all exact u32 arithmetic, so identical results (tested below).

use crate::fft::Kernel;
use rayon::prelude::*;
use std::ops::Range;

/// Entries per chunk.
pub(crate) const CHUNK: usize = 128;
/// Words per block (one AVX-512 vector).
pub(crate) const BLOCK: usize = 16;

/// How far ahead (in u32 words) the vector kernels prefetch the slab they stream: 4 KiB.
#[cfg(target_arch = "x86_64")]
const PREFETCH_WORDS: usize = 1024;

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
        let i = ((e / CHUNK) * self.blocks() + w / BLOCK) * CHUNK * BLOCK
            + (e % CHUNK) * BLOCK
            + w % BLOCK;
        self.data[i]
    }

    /// out −= Σ_e digits[k·E' + e]·key[e] on the words of `blocks`, for `outputs` outputs, where E' =
    /// [`Self::padded_entries`] (digits past the real entries must be zero… or anything: the padding
    /// entries are zero). `out` is block-major: for each block of the range, the outputs' BLOCK words
    /// one after the other (`blocks.len() · outputs · BLOCK` words).
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
        let slab_words = CHUNK * BLOCK;
        for c in 0..ep / CHUNK {
            let chunk = &self.data[c * self.blocks() * slab_words..][..self.blocks() * slab_words];
            for b in blocks.clone() {
                let slab = &chunk[b * slab_words..(b + 1) * slab_words];
                let o = &mut out[(b - blocks.start) * outputs * BLOCK..][..outputs * BLOCK];
                let mut k = 0;
                while k < outputs {
                    let left = outputs - k;
                    let dig = &digits[k * ep + c * CHUNK..];
                    let ok = &mut o[k * BLOCK..];
                    k += slab_pass(kernel, left, slab, dig, ep, ok);
                }
            }
        }
    }
}

/// One pass of as many of the `left` outputs as a kernel keeps in registers over one slab; returns
/// how many it did.
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
        Kernel::Avx512 => {
            fn f<const KB: usize>(s: &[u32], d: &[u32], st: usize, o: &mut [u32]) {
                // SAFETY: Kernel::Avx512 is only detected (or listed as available) when the CPU
                // supports AVX-512F; slab_avx512 checks the slice lengths it relies on.
                unsafe { slab_avx512::<KB>(s, d, st, o) }
            }
            pass!(f, 16, 8, 4, 2, 1)
        }
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2Fma => {
            fn f<const KB: usize>(s: &[u32], d: &[u32], st: usize, o: &mut [u32]) {
                // SAFETY: Kernel::Avx2Fma is only detected (or listed as available) when the CPU
                // supports AVX2; slab_avx2 checks the slice lengths it relies on.
                unsafe { slab_avx2::<KB>(s, d, st, o) }
            }
            pass!(f, 4, 2, 1)
        }
        _ => pass!(slab_portable, 16, 8, 4, 2, 1),
    }
}

/// Checks the lengths a slab kernel relies on: a slab of CHUNK entries, KB digit rows of CHUNK digits
/// `stride` apart, KB outputs of BLOCK words.
#[inline(always)]
fn check_slab<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &[u32]) {
    assert!(
        slab.len() >= CHUNK * BLOCK
            && stride >= CHUNK
            && dig.len() >= (KB - 1) * stride + CHUNK
            && out.len() >= KB * BLOCK
    );
}

/// The portable slab pass: KB outputs' BLOCK words accumulated over the slab's CHUNK entries.
fn slab_portable<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &mut [u32]) {
    check_slab::<KB>(slab, dig, stride, out);
    let mut acc = [[0u32; BLOCK]; KB];
    for (k, a) in acc.iter_mut().enumerate() {
        a.copy_from_slice(&out[k * BLOCK..(k + 1) * BLOCK]);
    }
    for (e, kv) in slab.chunks_exact(BLOCK).take(CHUNK).enumerate() {
        for (k, a) in acc.iter_mut().enumerate() {
            let d = dig[k * stride + e];
            for (x, &y) in a.iter_mut().zip(kv) {
                *x = x.wrapping_sub(y.wrapping_mul(d));
            }
        }
    }
    for (k, a) in acc.iter().enumerate() {
        out[k * BLOCK..(k + 1) * BLOCK].copy_from_slice(a);
    }
}

/// [`slab_portable`] with AVX-512F: each output's 16 words in one register (KB ≤ 16 of them), the
/// digit broadcast, `vpmulld` and `vpsubd`; the slab prefetched [`PREFETCH_WORDS`] ahead (running into
/// the next slab, which follows in memory).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn slab_avx512<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &mut [u32]) {
    use std::arch::x86_64::*;
    check_slab::<KB>(slab, dig, stride, out);
    let (ps, pd, po) = (slab.as_ptr(), dig.as_ptr(), out.as_mut_ptr());
    // SAFETY: checked above: the slab holds CHUNK·16 words (reads at e·16 for e < CHUNK), the digits
    // (k·stride + e) for k < KB, e < CHUNK, and out KB·16 words; the prefetch address is formed with
    // wrapping_add and prefetches never fault.
    unsafe {
        let mut acc = [_mm512_setzero_si512(); KB];
        for (k, a) in acc.iter_mut().enumerate() {
            *a = _mm512_loadu_si512(po.add(k * BLOCK) as *const __m512i);
        }
        for e in 0..CHUNK {
            _mm_prefetch::<_MM_HINT_T0>(ps.wrapping_add(e * BLOCK + PREFETCH_WORDS) as *const i8);
            let kv = _mm512_loadu_si512(ps.add(e * BLOCK) as *const __m512i);
            for (k, a) in acc.iter_mut().enumerate() {
                let d = _mm512_set1_epi32(*pd.add(k * stride + e) as i32);
                *a = _mm512_sub_epi32(*a, _mm512_mullo_epi32(kv, d));
            }
        }
        for (k, a) in acc.iter().enumerate() {
            _mm512_storeu_si512(po.add(k * BLOCK) as *mut __m512i, *a);
        }
    }
}

/// [`slab_portable`] with AVX2: each output's 16 words in two registers (KB ≤ 4 outputs).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn slab_avx2<const KB: usize>(slab: &[u32], dig: &[u32], stride: usize, out: &mut [u32]) {
    use std::arch::x86_64::*;
    check_slab::<KB>(slab, dig, stride, out);
    let (ps, pd, po) = (slab.as_ptr(), dig.as_ptr(), out.as_mut_ptr());
    // SAFETY: as in slab_avx512: every read and write is within the lengths checked above; prefetches
    // never fault.
    unsafe {
        let mut lo = [_mm256_setzero_si256(); KB];
        let mut hi = [_mm256_setzero_si256(); KB];
        for k in 0..KB {
            lo[k] = _mm256_loadu_si256(po.add(k * BLOCK) as *const __m256i);
            hi[k] = _mm256_loadu_si256(po.add(k * BLOCK + 8) as *const __m256i);
        }
        for e in 0..CHUNK {
            _mm_prefetch::<_MM_HINT_T0>(ps.wrapping_add(e * BLOCK + PREFETCH_WORDS) as *const i8);
            let k0 = _mm256_loadu_si256(ps.add(e * BLOCK) as *const __m256i);
            let k1 = _mm256_loadu_si256(ps.add(e * BLOCK + 8) as *const __m256i);
            for k in 0..KB {
                let d = _mm256_set1_epi32(*pd.add(k * stride + e) as i32);
                lo[k] = _mm256_sub_epi32(lo[k], _mm256_mullo_epi32(k0, d));
                hi[k] = _mm256_sub_epi32(hi[k], _mm256_mullo_epi32(k1, d));
            }
        }
        for k in 0..KB {
            _mm256_storeu_si256(po.add(k * BLOCK) as *mut __m256i, lo[k]);
            _mm256_storeu_si256(po.add(k * BLOCK + 8) as *mut __m256i, hi[k]);
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

    /// The blocked key holds the generated words where `word` says; every kernel's result equals the
    /// plain entry-major formula out[k][w] = −Σ_e d[k][e]·key[e][w] (exact u32 arithmetic), for output
    /// counts that exercise every pass width and a partial last chunk; and block ranges split between
    /// calls give the whole call's words.
    #[test]
    fn kernels_match_the_formula() {
        let (entries, width, per) = (3 * CHUNK + 37, 4 * BLOCK, 5);
        let mut r = xorshift(7);
        let flat: Vec<u32> = (0..entries.div_ceil(per) * per * width)
            .map(|_| r())
            .collect();
        let key = PrivKsKey::build(entries, width, per, |g| {
            flat[g * per * width..(g + 1) * per * width].to_vec()
        });
        for e in [0, 1, CHUNK - 1, CHUNK, entries - 1] {
            for w in [0, 1, BLOCK, width - 1] {
                assert_eq!(key.word(e, w), flat[e * width + w], "entry {e} word {w}");
            }
        }
        let ep = key.padded_entries();
        for outputs in [1usize, 3, 4, 7, 16, 21, 32] {
            let mut digits = vec![0u32; outputs * ep];
            for k in 0..outputs {
                for e in 0..entries {
                    digits[k * ep + e] = ((r() % 8) as i32 - 4) as u32;
                }
            }
            let mut want = vec![0u32; outputs * width];
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
            for kernel in Kernel::available() {
                let mut out = vec![0u32; nb * outputs * BLOCK];
                key.apply(&digits, outputs, 0..nb, &mut out, kernel);
                for k in 0..outputs {
                    for w in 0..width {
                        let got = out[(w / BLOCK) * outputs * BLOCK + k * BLOCK + w % BLOCK];
                        assert_eq!(got, want[k * width + w], "{kernel:?}: output {k} word {w}");
                    }
                }
                // Two block ranges, as two threads would run them.
                let mut split = vec![0u32; nb * outputs * BLOCK];
                let (lo, hi) = split.split_at_mut(outputs * BLOCK);
                key.apply(&digits, outputs, 0..1, lo, kernel);
                key.apply(&digits, outputs, 1..nb, hi, kernel);
                assert_eq!(split, out, "{kernel:?}: split blocks");
            }
        }
    }
}
