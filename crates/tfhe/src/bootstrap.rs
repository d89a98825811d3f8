//! Blind rotation, gate bootstrapping and identity key switching (CGGI16 Alg. 3 and §2.2), and the
//! evaluation key that holds the level-0 → level-1 bootstrapping key (Fourier form) and the level-1 →
//! level-0 key-switching key.
//!
//! Gate bootstrapping of a level-0 sample (a, b): modulus-switch to Z_2N (ā, b̄), start from
//! ACC = X^(−b̄)·(0, v) and for each key bit run ACC ← ACC + BK_i ⊡ (X^(ā_i)·ACC − ACC) (a CMUX on s_i),
//! so ACC's constant coefficient becomes ±v_0 by the sign of the phase. The evaluation key is immutable
//! and `Send + Sync`; each call allocates its own small scratch, so one key serves any number of threads.

use crate::fft::{plan, FftPlan, MAC_GROUP};
use crate::keygen::{bk_bodies, bk_from_bodies, tlwe_body, tlwe_from_seed, BkLevel};
use crate::params::Params;
use crate::rng::{fresh_seed, stream, Domain, Seed};
use crate::secret_key::SecretKey;
use crate::tlwe::Tlwe;
use crate::torus::{mod_switch, Gadget, Torus};
use crate::trgsw::{ExtScratch, TrgswFft};
use crate::trlwe::{mul_monomial, mul_monomial_minus_one, Trlwe};
use crate::Error;
use rayon::prelude::*;
use std::sync::Arc;

/// Blind rotation of ACC = X^(−b̄)·(0, tv) by the level-0 sample `c` (modulus switched to Z_2N rounded to
/// multiples of `stride`, for many-LUT bootstrapping; stride 1 for gates).
pub(crate) fn blind_rotate<T: Torus>(
    plan: &FftPlan,
    bk: &[TrgswFft<T>],
    gadget: Gadget,
    c: &Tlwe<u32>,
    tv: &[T],
    stride: usize,
) -> Trlwe<T> {
    let n = tv.len();
    let log2_2n = (2 * n).trailing_zeros();
    let log2_stride = stride.trailing_zeros();
    let ms = |x: u32| mod_switch(x, log2_2n - log2_stride) << log2_stride;
    let bbar = ms(c.b());
    let mut acc = Trlwe::zero(n);
    mul_monomial(&mut acc.b, tv, (2 * n - bbar) % (2 * n));
    let mut tmp = Trlwe::zero(n);
    let mut s = ExtScratch::new(n, gadget);
    for (i, (key, &a)) in bk.iter().zip(c.a()).enumerate() {
        let abar = ms(a);
        let next = bk.get(i + 1).map_or(&[][..], |k| &k.data[..]);
        if abar == 0 || key.rotate_step_fused(plan, &mut acc, abar, &mut s, next) {
            continue;
        }
        mul_monomial_minus_one(&mut tmp.a, &acc.a, abar);
        mul_monomial_minus_one(&mut tmp.b, &acc.b, abar);
        key.external_product_add_into(plan, &tmp, &mut acc, &mut s);
    }
    acc
}

/// [`blind_rotate`] of several samples with one test vector, step by step together: each
/// bootstrapping-key TRGSW is read from memory once for all of them (from cache for all but the first)
/// instead of once per sample. Within a step the samples go in groups of up to
/// [`MAC_GROUP`] ([`TrgswFft::rotate_steps_grouped`]: their forward transforms, one MAC that
/// reads the key once for the group, their inverse transforms), and each sample prefetches its
/// share of the next step's key. Every accumulator goes through exactly the operations
/// [`blind_rotate`] applies to it, so the results are the same bit for bit. Measured on AMD EPYC
/// Zen 4 (ignored tests `level2_batch_speed`, `level1_batch_speed`: the ways interleaved step by
/// step): a level-2 step (circuit bootstrapping) 5–7 % and a level-1 step (gate batches) 3–4 %
/// cheaper than one sample at a time, each prefetching the whole next key.
pub(crate) fn blind_rotate_many<T: Torus>(
    plan: &FftPlan,
    bk: &[TrgswFft<T>],
    gadget: Gadget,
    cs: &[&Tlwe<u32>],
    tv: &[T],
    stride: usize,
) -> Vec<Trlwe<T>> {
    let tvs = vec![tv; cs.len()];
    blind_rotate_many_tvs(plan, bk, gadget, cs, &tvs, stride)
}

/// [`blind_rotate_many`] with a test vector per sample (`tvs[k]` for `cs[k]`, all of one degree):
/// each result equals [`blind_rotate`] of its sample with its test vector, bit for bit.
pub(crate) fn blind_rotate_many_tvs<T: Torus>(
    plan: &FftPlan,
    bk: &[TrgswFft<T>],
    gadget: Gadget,
    cs: &[&Tlwe<u32>],
    tvs: &[&[T]],
    stride: usize,
) -> Vec<Trlwe<T>> {
    let Some(n) = tvs.first().map(|tv| tv.len()) else {
        return Vec::new();
    };
    let log2_2n = (2 * n).trailing_zeros();
    let log2_stride = stride.trailing_zeros();
    let ms = |x: u32| mod_switch(x, log2_2n - log2_stride) << log2_stride;
    let mut accs: Vec<Trlwe<T>> = cs
        .iter()
        .zip(tvs)
        .map(|(c, tv)| {
            let mut acc = Trlwe::zero(n);
            mul_monomial(&mut acc.b, tv, (2 * n - ms(c.b())) % (2 * n));
            acc
        })
        .collect();
    let mut tmp = Trlwe::zero(n);
    let mut s = ExtScratch::new(n, gadget);
    // The next step's key is prefetched in shares, one per sample (whole cache lines): the
    // first sample's step brings its share into L2 and the later ones theirs, so the key is
    // prefetched once per step, not once per sample (the later samples' prefetches were of lines
    // already there, a few thousand wasted load-port slots per step and sample).
    let shares = cs.len().max(1);
    if cs.len() > 1 {
        // The samples' steps in groups: all forward transforms, one MAC reading the step's key
        // once per group, the inverse transforms.
        let mut scratch: Vec<ExtScratch> = (0..cs.len().min(MAC_GROUP))
            .map(|_| ExtScratch::new(n, gadget))
            .collect();
        for (i, key) in bk.iter().enumerate() {
            let next = bk.get(i + 1).map_or(&[][..], |k| &k.data[..]);
            let share = next.len().div_ceil(shares).next_multiple_of(8);
            let mut group: Vec<(&mut Trlwe<T>, usize, &[f64])> = Vec::with_capacity(MAC_GROUP);
            for (k, (acc, c)) in accs.iter_mut().zip(cs).enumerate() {
                let Some(&a) = c.a().get(i) else { continue };
                let abar = ms(a);
                if abar == 0 {
                    continue;
                }
                let next = next
                    .get(k * share..next.len().min((k + 1) * share))
                    .unwrap_or(&[]);
                group.push((acc, abar, next));
                if group.len() == MAC_GROUP {
                    step_group(plan, key, &mut group, &mut scratch, &mut tmp);
                    group.clear();
                }
            }
            if !group.is_empty() {
                step_group(plan, key, &mut group, &mut scratch, &mut tmp);
            }
        }
        return accs;
    }
    for (i, key) in bk.iter().enumerate() {
        let next = bk.get(i + 1).map_or(&[][..], |k| &k.data[..]);
        let share = next.len().div_ceil(shares).next_multiple_of(8);
        for (k, (acc, c)) in accs.iter_mut().zip(cs).enumerate() {
            let next = next
                .get(k * share..next.len().min((k + 1) * share))
                .unwrap_or(&[]);
            let Some(&a) = c.a().get(i) else { continue };
            let abar = ms(a);
            if abar == 0 || key.rotate_step_fused(plan, acc, abar, &mut s, next) {
                continue;
            }
            mul_monomial_minus_one(&mut tmp.a, &acc.a, abar);
            mul_monomial_minus_one(&mut tmp.b, &acc.b, abar);
            key.external_product_add_into(plan, &tmp, acc, &mut s);
        }
    }
    accs
}

/// One step of [`blind_rotate_many_tvs`] for a group of samples (acc, k, next-key share): grouped
/// ([`TrgswFft::rotate_steps_grouped`]) where the plan has the fused kernels, otherwise one at a
/// time as the single rotation steps them. The same result either way, bit for bit.
fn step_group<T: Torus>(
    plan: &FftPlan,
    key: &TrgswFft<T>,
    group: &mut [(&mut Trlwe<T>, usize, &[f64])],
    scratch: &mut [ExtScratch],
    tmp: &mut Trlwe<T>,
) {
    if key.rotate_steps_grouped(plan, group, scratch) {
        return;
    }
    for (acc, k, next) in group.iter_mut() {
        if key.rotate_step_fused(plan, acc, *k, &mut scratch[0], next) {
            continue;
        }
        mul_monomial_minus_one(&mut tmp.a, &acc.a, *k);
        mul_monomial_minus_one(&mut tmp.b, &acc.b, *k);
        key.external_product_add_into(plan, tmp, acc, &mut scratch[0]);
    }
}

/// The identity key-switching key level 1 → 0 in memory: entries TLWE_s0(s1_i·g_j), each n0 + 1 words,
/// rounded to their top 24 bits and stored as 3 bytes (little-endian bits 8..32 of the word).
///
/// The key switch streams the whole key once per gate (16.5 MB as u32 for `default_128`), which makes
/// it memory-bound; 3 bytes a word cut that traffic by a quarter. Rounding public LWE samples is public
/// post-processing, so security is unchanged; the rounding adds (1 + n0·E[s0²])·2^-48/12 to each
/// entry's error, i.e. +0.3% of the key switch's variance for `default_128` (in
/// [`crate::noise::key_switch_var`]). The key file is unaffected (it holds the unrounded bodies).
#[derive(Debug)]
pub(crate) struct KsKey {
    /// Words per entry (n0 + 1).
    width: usize,
    /// 3·width bytes per entry, then [`KS_PAD`] zero bytes (vector loops may read past the last word);
    /// empty where the key is held in the [`KsTiled`] layout instead.
    bytes: Vec<u8>,
    /// The same rounded words in the layout of the VNNI key switch, where that runs.
    tiled: Option<KsTiled>,
}

/// The key-switching key in the layout of the AVX-512 VNNI key switch ([`key_switch_tiled`]): the
/// entries in groups of four (entry e = i·t + j in group e/4, zero entries padding the last group),
/// the words in tiles of 16, and for tile τ, group g and byte plane β (bits 8β + 8 .. 8β + 16 of the
/// rounded word), 64 bytes: word 16τ + w of entry 4g + q at byte 4w + q. One `vpdpbusd` then adds,
/// for 16 words at once, the four entries' byte-plane values times their four digits (signed bytes);
/// three planes and three shifts rebuild d·word mod 2^32 exactly. The same 24-bit words as [`KsKey`]'s
/// packed rows, so the same outputs bit for bit. 49 × 1280 × 192 bytes = 12.0 MB for `default_128`
/// (the rows: 11.9 MB).
#[derive(Debug)]
struct KsTiled {
    /// Groups of four entries.
    groups: usize,
    /// Tiles of 16 words (the last one zero-padded).
    tiles: usize,
    /// tiles × groups × 3 × 64 bytes.
    bytes: Vec<u8>,
}

/// Bytes of one tile's group: three byte planes of 16 words × 4 entries.
const TILE_GROUP_BYTES: usize = 3 * 64;

/// Bits of a key-switching key word kept in memory.
pub(crate) const KS_KEPT_BITS: u32 = 24;

/// Zero bytes after the packed key-switching key: the vector decoders read up to 16 bytes past the last
/// word they use.
const KS_PAD: usize = 64;

/// A key word rounded to its top 24 bits, as the 3 bytes kept (bits 8..32 of the rounded word).
#[inline(always)]
fn round24(w: u32) -> u32 {
    w.wrapping_add(1 << 7) >> 8
}

impl KsKey {
    /// Packs entries of `width` words each (rounding every word to its top 24 bits) as rows.
    pub(crate) fn pack(words: &[u32], width: usize) -> KsKey {
        let mut bytes = Vec::with_capacity(words.len() * 3 + KS_PAD);
        for &w in words {
            bytes.extend_from_slice(&round24(w).to_le_bytes()[..3]);
        }
        bytes.resize(words.len() * 3 + KS_PAD, 0);
        KsKey {
            width,
            bytes,
            tiled: None,
        }
    }

    /// Packs entries of `width` words each for key switches with `gadget`: in the tiled layout of the
    /// VNNI key switch where that runs ([`tiled_key_switch_runs`]), otherwise as rows ([`KsKey::pack`]).
    pub(crate) fn pack_for(words: &[u32], width: usize, gadget: Gadget) -> KsKey {
        if tiled_key_switch_runs(gadget) {
            KsKey::pack_tiled(words, width)
        } else {
            KsKey::pack(words, width)
        }
    }

    /// Packs entries of `width` words each (rounded as [`KsKey::pack`] does) in the tiled layout.
    fn pack_tiled(words: &[u32], width: usize) -> KsKey {
        let entries = words.len() / width.max(1);
        let groups = entries.div_ceil(4);
        let tiles = width.div_ceil(16);
        let mut bytes = vec![0u8; tiles * groups * TILE_GROUP_BYTES];
        for (e, entry) in words.chunks_exact(width).enumerate() {
            let (g, q) = (e / 4, e % 4);
            for (i, &w) in entry.iter().enumerate() {
                let (tau, lane) = (i / 16, i % 16);
                let at = (tau * groups + g) * TILE_GROUP_BYTES + 4 * lane + q;
                for (beta, &byte) in round24(w).to_le_bytes()[..3].iter().enumerate() {
                    bytes[at + 64 * beta] = byte;
                }
            }
        }
        KsKey {
            width,
            bytes: Vec::new(),
            tiled: Some(KsTiled {
                groups,
                tiles,
                bytes,
            }),
        }
    }

    /// Bytes in memory.
    pub(crate) fn size_bytes(&self) -> usize {
        self.bytes.len() + self.tiled.as_ref().map_or(0, |t| t.bytes.len())
    }

    /// Entry `e` (3·width bytes, followed in memory by at least KS_PAD readable bytes; rows layout).
    #[inline]
    fn entry(&self, e: usize) -> &[u8] {
        let w3 = 3 * self.width;
        &self.bytes[e * w3..(e + 1) * w3 + KS_PAD]
    }
}

/// Identity key switching of a level-1 TLWE (dimension N) to level 0 with the key `ks`.
pub(crate) fn key_switch(p: &Params, ks: &KsKey, c: &Tlwe<u32>) -> Tlwe<u32> {
    if let Some(tiled) = &ks.tiled {
        let mut out = key_switch_tiled(p, tiled, ks.width, &[c], tiled_kernel());
        if let Some(x) = out.pop() {
            return x;
        }
    }
    let n0 = p.n0;
    let t = p.ks.levels as usize;
    let mut out = vec![0u32; n0 + 1];
    out[n0] = c.b();
    let mut d = vec![0i64; t];
    for (i, &a) in c.a().iter().enumerate() {
        p.ks.decompose(a, &mut d);
        for (j, &dj) in d.iter().enumerate() {
            if dj != 0 {
                sub_scaled(&mut out, ks.entry(i * t + j), dj as u32);
            }
        }
    }
    Tlwe { data: out }
}

/// [`key_switch`] of several level-1 samples together: each key entry is read once (from memory) and
/// subtracted from every output while it is in L1, instead of the key being streamed once per sample.
/// Wrapping integer arithmetic, so each output equals [`key_switch`] of its sample bit for bit.
pub(crate) fn key_switch_many(p: &Params, ks: &KsKey, cs: &[&Tlwe<u32>]) -> Vec<Tlwe<u32>> {
    if let Some(tiled) = &ks.tiled {
        return key_switch_tiled(p, tiled, ks.width, cs, tiled_kernel());
    }
    let n0 = p.n0;
    let t = p.ks.levels as usize;
    let mut outs: Vec<Vec<u32>> = cs
        .iter()
        .map(|c| {
            let mut out = vec![0u32; n0 + 1];
            out[n0] = c.b();
            out
        })
        .collect();
    // Digits of coefficient i of every sample, sample after sample.
    let mut d = vec![0i64; t * cs.len()];
    for i in 0..p.n1 {
        for (c, dc) in cs.iter().zip(d.chunks_exact_mut(t)) {
            p.ks.decompose(c.a()[i], dc);
        }
        for j in 0..t {
            let entry = ks.entry(i * t + j);
            for (out, dc) in outs.iter_mut().zip(d.chunks_exact(t)) {
                if dc[j] != 0 {
                    sub_scaled(out, entry, dc[j] as u32);
                }
            }
        }
    }
    outs.into_iter().map(|data| Tlwe { data }).collect()
}

/// Whether the VNNI key switch runs for key switches with `gadget` (its digits, at most 2^(b−1) in
/// magnitude, fit a signed byte) on this CPU under [`crate::fft::Kernel::detect`]'s kernel
/// (AVX-512 with VNNI and BW).
pub(crate) fn tiled_key_switch_runs(gadget: Gadget) -> bool {
    gadget.base_bits <= 7 && tiled_kernel()
}

/// Whether [`Kernel::detect`](crate::fft::Kernel::detect) gives AVX-512 and the CPU has AVX-512 BW
/// and VNNI: the VNNI key switch's kernel, else its portable loop.
fn tiled_kernel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::fft::Kernel::detect().has_avx512() && has_avx512_vnni()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
use crate::privks::has_avx512_vnni;

/// Samples one pass of the tiled key switch keeps in registers (3 accumulators each).
const TILED_SAMPLES: usize = 8;

/// [`key_switch_many`] on the tiled key (`width` words an entry): each sample's digits as signed bytes,
/// four entries' to a dword; then tile by tile (16 output words), up to [`TILED_SAMPLES`] samples at a
/// time accumulate their byte-plane sums over every group in registers ([`tile_vnni`] with `vnni`,
/// else [`tile_portable`]), the tile's key read once from memory and from cache for further passes.
/// out = (0, b) − Σ d·word mod 2^32, the same words as the rows' key switch bit for bit.
fn key_switch_tiled(
    p: &Params,
    ks: &KsTiled,
    width: usize,
    cs: &[&Tlwe<u32>],
    vnni: bool,
) -> Vec<Tlwe<u32>> {
    let t = p.ks.levels as usize;
    let g = ks.groups;
    let mut dig = vec![0u32; g * cs.len()];
    let mut d = vec![0i64; t];
    let mut bytes = vec![0u8; 4 * g];
    for (c, row) in cs.iter().zip(dig.chunks_exact_mut(g)) {
        bytes.fill(0);
        for (i, &a) in c.a().iter().enumerate() {
            p.ks.decompose(a, &mut d);
            for (j, &dj) in d.iter().enumerate() {
                // |dj| ≤ 2^(b−1) ≤ 64 (tiled_key_switch_runs): a signed byte.
                if let Some(x) = bytes.get_mut(i * t + j) {
                    *x = dj as i8 as u8;
                }
            }
        }
        for (w, b4) in row.iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes([b4[0], b4[1], b4[2], b4[3]]);
        }
    }
    let mut outs: Vec<Vec<u32>> = cs
        .iter()
        .map(|c| {
            let mut out = vec![0u32; ks.tiles * 16];
            out[width - 1] = c.b();
            out
        })
        .collect();
    let mut sums = [0u32; 16 * TILED_SAMPLES];
    for (tau, tile) in ks
        .bytes
        .chunks_exact(g * TILE_GROUP_BYTES)
        .take(ks.tiles)
        .enumerate()
    {
        let mut s0 = 0;
        while s0 < cs.len() {
            let k = tiled_pass(vnni, cs.len() - s0, tile, &dig[s0 * g..], g, &mut sums);
            for (out, sum) in outs[s0..s0 + k].iter_mut().zip(sums.chunks_exact(16)) {
                for (o, &x) in out[16 * tau..16 * tau + 16].iter_mut().zip(sum) {
                    *o = o.wrapping_sub(x);
                }
            }
            s0 += k;
        }
    }
    outs.into_iter()
        .map(|mut data| {
            data.truncate(width);
            Tlwe { data }
        })
        .collect()
}

/// One pass of the tiled key switch over one tile for as many of the `left` (≥ 1) samples as a kernel
/// keeps in registers; returns how many it did. `dig` holds each sample's group digit dwords, rows
/// `stride` apart; `sums` gets, per sample, the tile's 16 words of Σ d·word mod 2^32.
fn tiled_pass(
    vnni: bool,
    left: usize,
    tile: &[u8],
    dig: &[u32],
    stride: usize,
    sums: &mut [u32],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if vnni && has_avx512_vnni() {
        macro_rules! pass {
            ($($s:literal),+) => {{
                $(if left >= $s {
                    // SAFETY: has_avx512_vnni() checked AVX-512F/BW/VNNI just above; tile_vnni
                    // checks the slice lengths it relies on.
                    unsafe { tile_vnni::<$s>(tile, dig, stride, sums) };
                    return $s;
                })+
            }};
        }
        pass!(8, 7, 6, 5, 4, 3, 2, 1);
    }
    let _ = vnni;
    let k = left.clamp(1, TILED_SAMPLES);
    tile_portable(k, tile, dig, stride, sums);
    k
}

/// Checks the lengths a tile kernel relies on: whole groups, `k` digit rows of `groups` dwords
/// `stride` apart, 16 sums per sample.
#[inline(always)]
fn check_tile(k: usize, tile: &[u8], dig: &[u32], stride: usize, sums: &[u32]) -> usize {
    let groups = tile.len() / TILE_GROUP_BYTES;
    assert!(
        k >= 1
            && tile.len() == groups * TILE_GROUP_BYTES
            && stride >= groups
            && dig.len() >= (k - 1) * stride + groups
            && sums.len() >= 16 * k
    );
    groups
}

/// The portable tile pass: for `k` samples, the tile's 16 words' byte-plane sums Σ digit·byte over
/// every group's four entries, then (plane 0 << 8) + (plane 1 << 16) + (plane 2 << 24), all mod 2^32.
fn tile_portable(k: usize, tile: &[u8], dig: &[u32], stride: usize, sums: &mut [u32]) {
    let groups = check_tile(k, tile, dig, stride, sums);
    for s in 0..k {
        let mut acc = [[0u32; 16]; 3];
        for (g, key) in tile.chunks_exact(TILE_GROUP_BYTES).take(groups).enumerate() {
            let d = dig[s * stride + g].to_le_bytes();
            for (plane, bytes) in acc.iter_mut().zip(key.chunks_exact(64)) {
                for (a, four) in plane.iter_mut().zip(bytes.chunks_exact(4)) {
                    for (&kb, &dq) in four.iter().zip(&d) {
                        *a = a.wrapping_add(u32::from(kb).wrapping_mul(dq as i8 as i32 as u32));
                    }
                }
            }
        }
        for (w, x) in sums[16 * s..16 * s + 16].iter_mut().enumerate() {
            *x = (acc[0][w] << 8)
                .wrapping_add(acc[1][w] << 16)
                .wrapping_add(acc[2][w] << 24);
        }
    }
}

/// The tile pass with AVX-512 VNNI for S samples: 3·S accumulators (S ≤ 8: 24 zmm), per group the
/// three byte planes loaded once and one `vpdpbusd` per plane and sample with the sample's four
/// digits broadcast (unsigned key bytes × signed digits, four products summed into each dword, mod
/// 2^32); at the end the planes shifted into place and summed, as [`tile_portable`].
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512BW and AVX-512 VNNI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile_vnni<const S: usize>(tile: &[u8], dig: &[u32], stride: usize, sums: &mut [u32]) {
    use std::arch::x86_64::*;
    let groups = check_tile(S, tile, dig, stride, sums);
    let (pk, pd, ps) = (tile.as_ptr(), dig.as_ptr(), sums.as_mut_ptr());
    // SAFETY: checked above: the tile holds groups·192 bytes (three 64-byte loads at g·192 for
    // g < groups), the digit dwords s·stride + g for s < S, g < groups, and sums 16·S words; the
    // inline `vpdpbusd`s only read and write the zmm registers given to them (AVX-512 VNNI, which the
    // caller guarantees).
    unsafe {
        let mut acc = [[_mm512_setzero_si512(); 3]; S];
        for g in 0..groups {
            let at = pk.add(g * TILE_GROUP_BYTES);
            let k0 = _mm512_loadu_si512(at as *const __m512i);
            let k1 = _mm512_loadu_si512(at.add(64) as *const __m512i);
            let k2 = _mm512_loadu_si512(at.add(128) as *const __m512i);
            for (s, a) in acc.iter_mut().enumerate() {
                let d = _mm512_set1_epi32(*pd.add(s * stride + g) as i32);
                // `vpdpbusd` written out, as in privks.rs's slab kernel: LLVM's machine combiner
                // would otherwise split it into several µops.
                std::arch::asm!(
                    "vpdpbusd {a0}, {k0}, {d}",
                    "vpdpbusd {a1}, {k1}, {d}",
                    "vpdpbusd {a2}, {k2}, {d}",
                    a0 = inout(zmm_reg) a[0],
                    a1 = inout(zmm_reg) a[1],
                    a2 = inout(zmm_reg) a[2],
                    k0 = in(zmm_reg) k0,
                    k1 = in(zmm_reg) k1,
                    k2 = in(zmm_reg) k2,
                    d = in(zmm_reg) d,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
        }
        for (s, a) in acc.iter().enumerate() {
            let sum = _mm512_add_epi32(
                _mm512_add_epi32(_mm512_slli_epi32::<8>(a[0]), _mm512_slli_epi32::<16>(a[1])),
                _mm512_slli_epi32::<24>(a[2]),
            );
            _mm512_storeu_si512(ps.add(16 * s) as *mut __m512i, sum);
        }
    }
}

/// Word i of a packed entry (its top 24 bits; the low byte is zero).
#[inline(always)]
fn packed_word(key: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([0, key[3 * i], key[3 * i + 1], key[3 * i + 2]])
}

/// out −= d·key on u32 words, the key packed 3 bytes a word (portable).
#[inline(always)]
fn sub_scaled_core(out: &mut [u32], key: &[u8], d: u32) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = o.wrapping_sub(packed_word(key, i).wrapping_mul(d));
    }
}

/// Byte shuffle that widens four packed 3-byte words (12 bytes at the start of a 128-bit lane) to four
/// u32 lanes with a zero low byte (−1 = 0x80: the byte is zeroed).
#[cfg(target_arch = "x86_64")]
const WIDEN: [i8; 16] = [-1, 0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11];

/// [`sub_scaled_core`] with AVX2 (8 lanes): 24 key bytes per step, spread over the two 128-bit lanes
/// (dwords 0–2 and 3–5) and widened with a byte shuffle.
///
/// # Safety
/// The CPU must support AVX2; `key` must hold 3·out.len() + 8 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sub_scaled_avx2(out: &mut [u32], key: &[u8], d: u32) {
    use std::arch::x86_64::*;
    let n = out.len();
    assert!(key.len() >= 3 * n + 8);
    let dv = _mm256_set1_epi32(d as i32);
    let spread = _mm256_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0);
    let w = WIDEN;
    let widen = _mm256_setr_epi8(
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13],
        w[14], w[15], w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11],
        w[12], w[13], w[14], w[15],
    );
    let (op, kp) = (out.as_mut_ptr(), key.as_ptr());
    let mut i = 0;
    // SAFETY: i + 8 ≤ n, so the 32-byte key load at 3i ends at 3i + 32 ≤ 3n + 8 ≤ key.len(), and the
    // out accesses are within [0, n); the prefetch address is formed with wrapping_add and prefetches
    // never fault.
    unsafe {
        while i + 8 <= n {
            _mm_prefetch::<_MM_HINT_T1>(kp.wrapping_add(3 * i + KS_PREFETCH_BYTES) as *const i8);
            let raw = _mm256_loadu_si256(kp.add(3 * i) as *const __m256i);
            let k = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(raw, spread), widen);
            let o = _mm256_loadu_si256(op.add(i) as *const __m256i);
            let r = _mm256_sub_epi32(o, _mm256_mullo_epi32(k, dv));
            _mm256_storeu_si256(op.add(i) as *mut __m256i, r);
            i += 8;
        }
    }
    sub_scaled_core(&mut out[i..], &key[3 * i..], d)
}

/// How far ahead (in bytes) the vector [`sub_scaled`] loops prefetch the key-switching key, which the key
/// switch streams from DRAM once per gate (12.4 MB packed for `default_128`): 3 KiB (the 4 KiB of
/// u32 words this was measured at on the AVX-512 EPYC: ~33% fewer perf samples in the key-switch loop
/// than without it). The hint is T1 (into L2): on AMD Zen 4 (EPYC, family 25) a plain streaming read
/// of 52 MB ran at 26 GB/s with T1 prefetches 6 KiB ahead against 13 GB/s with T0, and a NAND took
/// 1.5–4% less CPU time with T1 here (in-process A/B, 4 runs of 15–21 rounds, load 9–10).
#[cfg(target_arch = "x86_64")]
const KS_PREFETCH_BYTES: usize = 3072;

/// [`sub_scaled_core`] with AVX-512F/BW (16 lanes): 48 key bytes per step, each 128-bit lane given its
/// 12 bytes by a dword permutation, then widened with a byte shuffle; a software prefetch
/// [`KS_PREFETCH_BYTES`] ahead (the entries are contiguous, so this runs into the next ones).
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW; `key` must hold 3·out.len() + 16 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn sub_scaled_avx512(out: &mut [u32], key: &[u8], d: u32) {
    use std::arch::x86_64::*;
    let n = out.len();
    assert!(key.len() >= 3 * n + 16);
    let dv = _mm512_set1_epi32(d as i32);
    let spread = _mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0);
    let w = WIDEN;
    let lane = _mm_setr_epi8(
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13],
        w[14], w[15],
    );
    let widen = _mm512_broadcast_i32x4(lane);
    let (op, kp) = (out.as_mut_ptr(), key.as_ptr());
    let mut i = 0;
    // SAFETY: i + 16 ≤ n, so the 64-byte key load at 3i ends at 3i + 64 ≤ 3n + 16 ≤ key.len(), and the
    // out accesses are within [0, n); the prefetch address is formed with wrapping_add and prefetches
    // never fault.
    unsafe {
        while i + 16 <= n {
            _mm_prefetch::<_MM_HINT_T1>(kp.wrapping_add(3 * i + KS_PREFETCH_BYTES) as *const i8);
            let raw = _mm512_loadu_si512(kp.add(3 * i) as *const __m512i);
            let k = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(spread, raw), widen);
            let o = _mm512_loadu_si512(op.add(i) as *const __m512i);
            let r = _mm512_sub_epi32(o, _mm512_mullo_epi32(k, dv));
            _mm512_storeu_si512(op.add(i) as *mut __m512i, r);
            i += 16;
        }
    }
    sub_scaled_core(&mut out[i..], &key[3 * i..], d)
}

/// Whether the CPU has AVX-512BW besides the AVX-512F the Avx512 kernel implies (cached).
#[cfg(target_arch = "x86_64")]
fn has_avx512bw() -> bool {
    static BW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BW.get_or_init(|| std::is_x86_feature_detected!("avx512bw"))
}

/// out −= d·key on u32 words with a packed key of at least 3·out.len() + [`KS_PAD`] bytes (key
/// switching inner loop; AVX-512 or AVX2 when present).
#[inline]
pub(crate) fn sub_scaled(out: &mut [u32], key: &[u8], d: u32) {
    assert!(key.len() >= 3 * out.len() + KS_PAD);
    #[cfg(target_arch = "x86_64")]
    if crate::fft::Kernel::detect().has_avx512() && has_avx512bw() {
        // SAFETY: Kernel::Avx512 is only detected when the CPU supports AVX-512F, and AVX-512BW was
        // just checked; the key length is asserted above.
        unsafe { sub_scaled_avx512(out, key, d) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if crate::fft::Kernel::detect().has_avx2() {
        // SAFETY: Avx2Fma and Avx512 are only detected when the CPU supports AVX2; key length above.
        unsafe { sub_scaled_avx2(out, key, d) };
        return;
    }
    sub_scaled_core(out, key, d)
}

/// The evaluation (cloud) key for gates: bootstrapping key level 0 → 1 in Fourier form and the identity
/// key-switching key level 1 → 0.
#[derive(Debug)]
pub struct EvalKey {
    pub(crate) params: Params,
    pub(crate) plan1: Arc<FftPlan>,
    pub(crate) bk: Vec<TrgswFft<u32>>,
    pub(crate) ks: KsKey,
}

/// The evaluation key with masks replaced by a seed (≈ 4× smaller; [`CompressedEvalKey::decompress`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedEvalKey {
    pub(crate) params: Params,
    pub(crate) mask_seed: Seed,
    /// n0 × 2ℓ rows × N body words.
    pub(crate) bk_bodies: Vec<u32>,
    /// N × t body words.
    pub(crate) ks_bodies: Vec<u32>,
}

impl CompressedEvalKey {
    /// Generates the compressed evaluation key (multi-threaded with rayon).
    pub fn generate(sk: &SecretKey) -> CompressedEvalKey {
        Self::generate_from_seeds(sk, fresh_seed(), &fresh_seed())
    }

    /// The compressed evaluation key whose masks come from `mask_seed` and noise from `noise_seed`
    /// (deterministic: the same seeds give the same key bytes).
    pub(crate) fn generate_from_seeds(
        sk: &SecretKey,
        mask_seed: Seed,
        noise_seed: &Seed,
    ) -> CompressedEvalKey {
        let p = sk.params;
        let plan1 = plan(p.n1);
        let bk_bodies = bk_bodies::<u32>(
            &bk1_level(&p, &plan1),
            &sk.s0,
            (&sk.s1, &sk.s1_fft),
            &mask_seed,
            noise_seed,
        );
        let t = p.ks.levels as usize;
        let ks_bodies: Vec<u32> = (0..p.n1)
            .into_par_iter()
            .flat_map_iter(|i| {
                let mut mr = stream(&mask_seed, Domain::Ks, i as u64);
                let mut nr = stream(noise_seed, Domain::Ks, i as u64);
                (0..t)
                    .map(|j| {
                        let m = p.ks.g::<u32>(j).mul_i64(sk.s1[i] as i64);
                        tlwe_body(&sk.s0, m, p.sigma0, &mut mr, &mut nr)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        CompressedEvalKey {
            params: p,
            mask_seed,
            bk_bodies,
            ks_bodies,
        }
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Expands masks from the seed and transforms the bootstrapping key (multi-threaded).
    pub fn decompress(&self) -> Result<EvalKey, Error> {
        let p = self.params;
        p.validate()?;
        let l2 = 2 * p.bk1.levels as usize;
        let t = p.ks.levels as usize;
        if self.bk_bodies.len() != p.n0 * l2 * p.n1 || self.ks_bodies.len() != p.n1 * t {
            return Err(Error::Format(
                "compressed evaluation key has wrong lengths".into(),
            ));
        }
        let plan1 = plan(p.n1);
        let bk = bk_from_bodies(&bk1_level(&p, &plan1), &self.mask_seed, &self.bk_bodies);
        let ks: Vec<u32> = (0..p.n1)
            .into_par_iter()
            .flat_map_iter(|i| {
                let mut mr = stream(&self.mask_seed, Domain::Ks, i as u64);
                let mut out = Vec::with_capacity(t * (p.n0 + 1));
                for j in 0..t {
                    tlwe_from_seed(&mut mr, p.n0, self.ks_bodies[i * t + j], &mut out);
                }
                out
            })
            .collect();
        Ok(EvalKey {
            params: p,
            plan1,
            bk,
            ks: KsKey::pack_for(&ks, p.n0 + 1, p.ks),
        })
    }
}

/// BK1's level: level 1 under the `bk1` gadget.
fn bk1_level<'a>(p: &Params, plan1: &'a FftPlan) -> BkLevel<'a> {
    BkLevel {
        plan: plan1,
        gadget: p.bk1,
        sigma: p.sigma1,
        domain: Domain::Bk1,
    }
}

impl EvalKey {
    /// Generates the evaluation key (multi-threaded).
    pub fn generate(sk: &SecretKey) -> Result<EvalKey, Error> {
        CompressedEvalKey::generate(sk).decompress()
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Size of the key in memory (bytes).
    pub fn size_bytes(&self) -> usize {
        self.bk.iter().map(|k| k.data.len() * 8).sum::<usize>() + self.ks.size_bytes()
    }

    pub(crate) fn check0(&self, c: &Tlwe<u32>) -> Result<(), Error> {
        if c.dim() != self.params.n0 {
            return Err(Error::Dimension(format!(
                "level-0 TLWE of dimension {}, parameters expect {}",
                c.dim(),
                self.params.n0
            )));
        }
        Ok(())
    }

    /// Gate bootstrapping to a level-1 TRLWE: constant coefficient = +mu if phase(c) ∈ (0, 1/2), −mu
    /// otherwise (no sample extraction, no key switch). Used for refreshing CMUX RAM cells.
    pub fn bootstrap_to_trlwe(&self, c: &Tlwe<u32>, mu: u32) -> Result<Trlwe<u32>, Error> {
        self.check0(c)?;
        let tv = vec![mu; self.params.n1];
        Ok(blind_rotate(
            &self.plan1,
            &self.bk,
            self.params.bk1,
            c,
            &tv,
            1,
        ))
    }

    /// Gate bootstrapping to a level-1 TLWE (blind rotation + sample extraction), value ±mu.
    pub fn bootstrap_to_lvl1(&self, c: &Tlwe<u32>, mu: u32) -> Result<Tlwe<u32>, Error> {
        self.bootstrap_to_trlwe(c, mu)?.sample_extract(0)
    }

    /// Identity key switch of a level-1 TLWE (dimension N) to level 0.
    pub fn key_switch(&self, c: &Tlwe<u32>) -> Result<Tlwe<u32>, Error> {
        if c.dim() != self.params.n1 {
            return Err(Error::Dimension(format!(
                "level-1 TLWE of dim {}, expected {}",
                c.dim(),
                self.params.n1
            )));
        }
        Ok(key_switch(&self.params, &self.ks, c))
    }

    /// Full gate bootstrapping: level-0 sample → fresh level-0 sample encoding sign(phase)·1/8.
    pub fn bootstrap(&self, c: &Tlwe<u32>) -> Result<Tlwe<u32>, Error> {
        let t = self.bootstrap_to_lvl1(c, 1 << 29)?;
        Ok(key_switch(&self.params, &self.ks, &t))
    }
}

#[cfg(test)]
mod tests {
    use super::KsKey;
    use crate::fft::{FftPlan, Kernel};
    use crate::tlwe::Tlwe;
    use crate::torus::Gadget;
    use crate::trgsw::tests::words;
    use crate::trgsw::TrgswFft;
    use crate::trlwe::Trlwe;

    /// The blind rotations of a batch, step by step together, equal each sample's own rotation bit
    /// for bit, for batches of 1 to 5 (the first with a zero mask word: a skipped step) on every FFT
    /// kernel the CPU has (the portable one, and the fused AVX-512 step where present), and the
    /// batched key switch equals the single one.
    #[test]
    fn batched_rotation_and_key_switch_match_one_at_a_time() {
        let n = 1024;
        let n0 = 12;
        let gadget = Gadget {
            levels: 2,
            base_bits: 8,
        };
        let samples: Vec<Tlwe<u32>> = (0..5)
            .map(|i| {
                let mut data = words(n0 + 1, 100 + i);
                if i == 0 {
                    data[3] = 0;
                }
                Tlwe { data }
            })
            .collect();
        let tv = vec![1u32 << 29; n];
        for kernel in Kernel::available() {
            let plan = FftPlan::with_kernel(n, kernel);
            let bk: Vec<TrgswFft<u32>> = (0..n0 as u32)
                .map(|k| {
                    let rows: Vec<Trlwe<u32>> = (0..4)
                        .map(|r| Trlwe {
                            a: words(n, 1000 * k + 10 * r + 1),
                            b: words(n, 1000 * k + 10 * r + 2),
                        })
                        .collect();
                    TrgswFft::from_rows(&plan, gadget, &rows)
                })
                .collect();
            let single: Vec<Trlwe<u32>> = samples
                .iter()
                .map(|c| super::blind_rotate(&plan, &bk, gadget, c, &tv, 1))
                .collect();
            for b in 1..=samples.len() {
                let refs: Vec<&Tlwe<u32>> = samples[..b].iter().collect();
                let many = super::blind_rotate_many(&plan, &bk, gadget, &refs, &tv, 1);
                assert_eq!(many, single[..b], "{kernel:?}, batch of {b}");
            }
        }
        let p = crate::params::Params {
            n0,
            ..crate::params::Params::default_128()
        };
        let t = p.ks.levels as usize;
        let ks = KsKey::pack(&words(p.n1 * t * (n0 + 1), 7), n0 + 1);
        let level1: Vec<Tlwe<u32>> = (0..5)
            .map(|i| Tlwe {
                data: words(p.n1 + 1, 200 + i),
            })
            .collect();
        for b in 1..=level1.len() {
            let refs: Vec<&Tlwe<u32>> = level1[..b].iter().collect();
            let many = super::key_switch_many(&p, &ks, &refs);
            for (c, got) in level1.iter().zip(&many) {
                assert_eq!(got, &super::key_switch(&p, &ks, c), "batch of {b}");
            }
        }
    }

    /// The tiled key switch (the VNNI kernel where the CPU has it, and the portable loop) equals the
    /// rows' one bit for bit, alone and in batches of 1 to 11 (over one pass of 8 samples), for
    /// default_128's gadget (2^3 × 5) and one with 7-bit digits (±64, the largest a signed byte
    /// holds as the kernel needs), on a width that leaves a partial tile (n0 + 1 = 37) and a
    /// number of entries that leaves a partial group (1023 × 5).
    #[test]
    fn tiled_key_switch_matches_rows() {
        for (levels, base_bits) in [(5, 3), (3, 7)] {
            let p = crate::params::Params {
                n0: 36,
                n1: 1023,
                ks: Gadget { levels, base_bits },
                ..crate::params::Params::default_128()
            };
            let (t, width) = (p.ks.levels as usize, p.n0 + 1);
            let key_words = words(p.n1 * t * width, 11);
            let rows = KsKey::pack(&key_words, width);
            let tiled = KsKey::pack_tiled(&key_words, width);
            let level1: Vec<Tlwe<u32>> = (0..11)
                .map(|i| Tlwe {
                    data: words(p.n1 + 1, 300 + i),
                })
                .collect();
            let want: Vec<Tlwe<u32>> = level1
                .iter()
                .map(|c| super::key_switch(&p, &rows, c))
                .collect();
            assert_ne!(want[0], want[1]);
            let Some(tk) = &tiled.tiled else {
                panic!("pack_tiled gave rows")
            };
            for b in 1..=level1.len() {
                let refs: Vec<&Tlwe<u32>> = level1[..b].iter().collect();
                let port = super::key_switch_tiled(&p, tk, width, &refs, false);
                assert_eq!(
                    port,
                    want[..b],
                    "{levels}×2^{base_bits}: portable, batch of {b}"
                );
                let vnni = super::key_switch_tiled(&p, tk, width, &refs, true);
                assert_eq!(
                    vnni,
                    want[..b],
                    "{levels}×2^{base_bits}: VNNI, batch of {b}"
                );
                let many = super::key_switch_many(&p, &tiled, &refs);
                assert_eq!(
                    many,
                    want[..b],
                    "{levels}×2^{base_bits}: dispatch, batch of {b}"
                );
            }
            assert_eq!(super::key_switch(&p, &tiled, &level1[3]), want[3]);
        }
    }

    /// On the 64-bit torus (level 2: grouped steps and a grouped MAC) the batched rotations equal
    /// each sample's own rotation bit for bit too, for batches of 1 to 6 (one with a zero mask word),
    /// at N = 2048 with the circuit bootstrap's gadget, on every kernel.
    #[test]
    fn batched_level2_rotation_matches_one_at_a_time() {
        let (n, n0) = (2048, 5);
        let gadget = Gadget {
            levels: 2,
            base_bits: 15,
        };
        let wide = |len: usize, seed: u32| -> Vec<u64> {
            let (hi, lo) = (words(len, seed), words(len, seed ^ 0x3333));
            hi.iter()
                .zip(&lo)
                .map(|(&h, &l)| ((h as u64) << 32) | l as u64)
                .collect()
        };
        let samples: Vec<Tlwe<u32>> = (0..6)
            .map(|i| {
                let mut data = words(n0 + 1, 300 + i);
                if i == 2 {
                    data[1] = 0;
                }
                Tlwe { data }
            })
            .collect();
        let tv: Vec<u64> = (0..n as u64).map(|j| (j % 4) << 60).collect();
        for kernel in Kernel::available() {
            let plan = FftPlan::with_kernel(n, kernel);
            let bk: Vec<TrgswFft<u64>> = (0..n0 as u32)
                .map(|k| {
                    let rows: Vec<Trlwe<u64>> = (0..4)
                        .map(|r| Trlwe {
                            a: wide(n, 1000 * k + 10 * r + 1),
                            b: wide(n, 1000 * k + 10 * r + 2),
                        })
                        .collect();
                    TrgswFft::from_rows(&plan, gadget, &rows)
                })
                .collect();
            let single: Vec<Trlwe<u64>> = samples
                .iter()
                .map(|c| super::blind_rotate(&plan, &bk, gadget, c, &tv, 4))
                .collect();
            for b in 1..=samples.len() {
                let refs: Vec<&Tlwe<u32>> = samples[..b].iter().collect();
                let many = super::blind_rotate_many(&plan, &bk, gadget, &refs, &tv, 4);
                assert_eq!(many, single[..b], "{kernel:?}, batch of {b}");
            }
        }
    }

    /// The ways to run a batch's level-2 rotation steps agree bit for bit, and (with
    /// `VSP_TFHE_STEP_BENCH=1`: 150 steps, 7 rounds, instead of a 10-step check) an in-process
    /// comparison of their speed (8 samples, N = 2048, BK2's gadget): (0) one sample at a time, each prefetching the whole next
    /// key (before this branch); (1) one at a time, each prefetching its share of it; (2) grouped
    /// by 2 and (3) by 4 ([`TrgswFft::rotate_steps_level2`]: all forward transforms, one MAC per
    /// group, then the inverse transforms; `blind_rotate_many` uses groups of `MAC_GROUP`). Each
    /// way has its own copy of the key (150 random TRGSWs, 19 MB each, streamed from DRAM as BK2
    /// is) and its own accumulators, and the ways take turns step by step (the order rotating), so
    /// that a loaded machine's interference falls on all of them alike; prints per round each
    /// way's wall time per sample and step (steps where a way was descheduled dropped for all),
    /// and the medians over the rounds of the ratios to
    /// way (0). All ways give the same accumulators (checked).
    /// `VSP_TFHE_STEP_BENCH=1 cargo test --release -p vsp-tfhe --lib level2_batch_speed --
    /// --nocapture`.
    #[test]
    fn level2_batch_speed() {
        use crate::trgsw::ExtScratch;
        const WAYS: usize = 4;
        let full = std::env::var_os("VSP_TFHE_STEP_BENCH").is_some();
        let (n, n0, batch) = (2048, if full { 150 } else { 10 }, 8usize);
        let rounds = if full { 7 } else { 1 };
        let gadget = Gadget {
            levels: 2,
            base_bits: 15,
        };
        let plan = FftPlan::with_kernel(n, Kernel::detect());
        let wide = |seed: u32| -> Vec<u64> {
            let (hi, lo) = (words(n, seed), words(n, seed ^ 0x3333));
            hi.iter()
                .zip(&lo)
                .map(|(&h, &l)| ((h as u64) << 32) | l as u64)
                .collect()
        };
        let bk: Vec<TrgswFft<u64>> = (0..n0 as u32)
            .map(|k| {
                let rows: Vec<Trlwe<u64>> = (0..4)
                    .map(|r| Trlwe {
                        a: wide(1000 * k + 10 * r + 1),
                        b: wide(1000 * k + 10 * r + 2),
                    })
                    .collect();
                TrgswFft::from_rows(&plan, gadget, &rows)
            })
            .collect();
        let bks: Vec<Vec<TrgswFft<u64>>> = (0..WAYS).map(|_| bk.clone()).collect();
        let samples: Vec<Tlwe<u32>> = (0..batch as u32)
            .map(|i| Tlwe {
                data: words(n0 + 1, 500 + i),
            })
            .collect();
        let tv: Vec<u64> = (0..n as u64).map(|j| (j % 4) << 60).collect();
        let ms = |x: u32| crate::torus::mod_switch(x, 12 - 2) << 2;
        let start: Vec<Trlwe<u64>> = samples
            .iter()
            .map(|c| {
                let mut acc = Trlwe::zero(n);
                crate::trlwe::mul_monomial(&mut acc.b, &tv, (2 * n - ms(c.b())) % (2 * n));
                acc
            })
            .collect();
        let mut scratch: Vec<ExtScratch> = (0..4).map(|_| ExtScratch::new(n, gadget)).collect();
        let mut ratios: [Vec<f64>; WAYS] = Default::default();
        for round in 0..rounds {
            let mut accs: Vec<Vec<Trlwe<u64>>> = (0..WAYS).map(|_| start.clone()).collect();
            let mut time = [0.0; WAYS];
            let mut dropped = 0;
            for i in 0..n0 {
                let mut step = [0.0; WAYS];
                for t in 0..WAYS {
                    let way = (i + t) % WAYS;
                    let (bk, accs) = (&bks[way], &mut accs[way]);
                    let next = bk.get(i + 1).map_or(&[][..], |k| &k.data[..]);
                    let share = next.len().div_ceil(batch).next_multiple_of(8);
                    let t0 = std::time::Instant::now();
                    let mut steps: Vec<(&mut Trlwe<u64>, usize, &[f64])> = accs
                        .iter_mut()
                        .zip(&samples)
                        .enumerate()
                        .map(|(k, (acc, c))| {
                            let next = if way == 0 {
                                next
                            } else {
                                next.get(k * share..next.len().min((k + 1) * share))
                                    .unwrap_or(&[])
                            };
                            (acc, ms(c.a()[i]), next)
                        })
                        .filter(|s| s.1 != 0)
                        .collect();
                    let group = [1, 1, 2, 4][way];
                    for chunk in steps.chunks_mut(group) {
                        if group == 1 {
                            let (acc, k, next) = &mut chunk[0];
                            assert!(bk[i].rotate_step_fused(&plan, acc, *k, &mut scratch[0], next));
                        } else {
                            bk[i].rotate_steps_level2(&plan, chunk, &mut scratch);
                        }
                    }
                    step[way] = t0.elapsed().as_secs_f64() * 1e6;
                }
                // A step during which a way was descheduled (more than 1.5 times the fastest
                // way's time) counts for none of them.
                let fastest = step.iter().copied().fold(f64::INFINITY, f64::min);
                if step.iter().all(|&t| t <= 1.5 * fastest) {
                    for w in 0..WAYS {
                        time[w] += step[w];
                    }
                } else {
                    dropped += 1;
                }
            }
            assert!(accs.iter().all(|a| *a == accs[0]), "the ways disagree");
            let per: Vec<String> = time
                .iter()
                .map(|t| format!("{:.2}", t / (batch * (n0 - dropped)) as f64))
                .collect();
            if full {
                println!(
                    "round {round}: wall µs per sample and step by way: {} ({dropped} of {n0} \
                     steps dropped)",
                    per.join(" ")
                );
            }
            for w in 0..WAYS {
                ratios[w].push(time[w] / time[0]);
            }
        }
        let med: Vec<String> = ratios
            .iter_mut()
            .map(|v| {
                v.sort_by(f64::total_cmp);
                format!("{:.3}", v[v.len() / 2])
            })
            .collect();
        if full {
            println!(
                "medians of the ratios to way 0 (whole prefetch, one at a time / shares / groups \
                 of 2 / groups of 4): {}",
                med.join(" ")
            );
        }
    }

    /// The level-1 (gate) batched rotation's ways agree bit for bit (on every CPU: without the
    /// fused kernels each way steps as the unfused rotation does), and (with
    /// `VSP_TFHE_STEP_BENCH=1`: 300 steps, 7 rounds, instead of a 10-step check) their speed: each
    /// sample prefetching the whole next key (way 0, before this branch) or its share of it (way 1), or grouped by 4
    /// (way 2, [`TrgswFft::rotate_steps_grouped`], what `blind_rotate_many` does now), as [`level2_batch_speed`] compares them (own key copies, turns step by step, wall
    /// time with descheduled steps dropped), for batches of 4 and 16 at N = 1024, BK1's gadget.
    /// `VSP_TFHE_STEP_BENCH=1 cargo test --release -p vsp-tfhe --lib level1_batch_speed --
    /// --nocapture`.
    #[test]
    fn level1_batch_speed() {
        use crate::trgsw::ExtScratch;
        let full = std::env::var_os("VSP_TFHE_STEP_BENCH").is_some();
        let (n, n0) = (1024, if full { 300 } else { 10 });
        let rounds = if full { 7 } else { 1 };
        let gadget = Gadget {
            levels: 2,
            base_bits: 8,
        };
        let plan = FftPlan::with_kernel(n, Kernel::detect());
        let bk: Vec<TrgswFft<u32>> = (0..n0 as u32)
            .map(|k| {
                let rows: Vec<Trlwe<u32>> = (0..4)
                    .map(|r| Trlwe {
                        a: words(n, 1000 * k + 10 * r + 1),
                        b: words(n, 1000 * k + 10 * r + 2),
                    })
                    .collect();
                TrgswFft::from_rows(&plan, gadget, &rows)
            })
            .collect();
        let bks = [bk.clone(), bk.clone(), bk];
        let ms = |x: u32| crate::torus::mod_switch(x, 11);
        for batch in [4usize, 16] {
            let samples: Vec<Tlwe<u32>> = (0..batch as u32)
                .map(|i| Tlwe {
                    data: words(n0 + 1, 700 + i),
                })
                .collect();
            let mut s = ExtScratch::new(n, gadget);
            let mut tmp = Trlwe::zero(n);
            let mut scratch: Vec<ExtScratch> = (0..4).map(|_| ExtScratch::new(n, gadget)).collect();
            let mut ratios = [vec![], vec![]];
            for _ in 0..rounds {
                let mut accs: Vec<Vec<Trlwe<u32>>> = (0..3)
                    .map(|_| {
                        samples
                            .iter()
                            .map(|c| {
                                let mut acc = Trlwe::zero(n);
                                acc.b.iter_mut().for_each(|x| *x = c.b() ^ (1 << 29));
                                acc
                            })
                            .collect()
                    })
                    .collect();
                let mut time = [0.0; 3];
                for i in 0..n0 {
                    let mut step = [0.0; 3];
                    for t in 0..3 {
                        let way = (i + t) % 3;
                        let bk = &bks[way];
                        let next = bk.get(i + 1).map_or(&[][..], |k| &k.data[..]);
                        let share = next.len().div_ceil(batch).next_multiple_of(8);
                        let t0 = std::time::Instant::now();
                        let mut steps: Vec<(&mut Trlwe<u32>, usize, &[f64])> = accs[way]
                            .iter_mut()
                            .zip(&samples)
                            .enumerate()
                            .map(|(k, (acc, c))| {
                                let next = if way == 0 {
                                    next
                                } else {
                                    next.get(k * share..next.len().min((k + 1) * share))
                                        .unwrap_or(&[])
                                };
                                (acc, ms(c.a()[i]), next)
                            })
                            .filter(|s| s.1 != 0)
                            .collect();
                        if way == 2 {
                            for chunk in steps.chunks_mut(4) {
                                super::step_group(&plan, &bk[i], chunk, &mut scratch, &mut tmp);
                            }
                        } else {
                            for (acc, k, next) in steps.iter_mut() {
                                if !bk[i].rotate_step_fused(&plan, acc, *k, &mut s, next) {
                                    crate::trlwe::mul_monomial_minus_one(&mut tmp.a, &acc.a, *k);
                                    crate::trlwe::mul_monomial_minus_one(&mut tmp.b, &acc.b, *k);
                                    bk[i].external_product_add_into(&plan, &tmp, acc, &mut s);
                                }
                            }
                        }
                        step[way] = t0.elapsed().as_secs_f64() * 1e6;
                    }
                    let fastest = step.iter().copied().fold(f64::INFINITY, f64::min);
                    if step.iter().all(|&t| t <= 1.5 * fastest) {
                        for w in 0..3 {
                            time[w] += step[w];
                        }
                    }
                }
                assert!(
                    accs[0] == accs[1] && accs[1] == accs[2],
                    "the ways disagree"
                );
                ratios[0].push(time[1] / time[0]);
                ratios[1].push(time[2] / time[0]);
            }
            for r in &mut ratios {
                r.sort_by(f64::total_cmp);
            }
            let (mid, last) = (rounds / 2, rounds - 1);
            if full {
                println!(
                    "level 1, batch {batch}: step time over whole-key prefetch one at a time, \
                     medians of {rounds} rounds: prefetch shares {:.3} (range {:.3}–{:.3}), \
                     grouped by 4 {:.3} (range {:.3}–{:.3})",
                    ratios[0][mid],
                    ratios[0][0],
                    ratios[0][last],
                    ratios[1][mid],
                    ratios[1][0],
                    ratios[1][last]
                );
            }
        }
    }

    /// The AVX2 and AVX-512 key-switching loops equal the portable one (where the CPU has them), on a
    /// packed key whose words are the rounded top 24 bits of the originals.
    #[test]
    fn sub_scaled_kernels_match_portable() {
        let words: Vec<u32> = (0..631u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995)
            .collect();
        let key = KsKey::pack(&words, words.len());
        // Packing rounds each word to a multiple of 2^8: within 2^7 of the original.
        for (i, &w) in words.iter().enumerate() {
            let p = super::packed_word(key.entry(0), i);
            assert_eq!(p & 0xff, 0);
            assert!(
                (p.wrapping_sub(w) as i32).abs() <= 128,
                "word {i}: {w:#x} packed as {p:#x}"
            );
        }
        let out0: Vec<u32> = (0..631u32).map(|i| i.wrapping_mul(0x85eb_ca6b)).collect();
        let mut want = out0.clone();
        for (o, &w) in want.iter_mut().zip(&words) {
            *o = o.wrapping_sub(((w.wrapping_add(128)) & !0xff).wrapping_mul(0xdead_beef));
        }
        let mut port = out0.clone();
        super::sub_scaled_core(&mut port, key.entry(0), 0xdead_beef);
        assert_eq!(port, want, "portable loop against the unpacked formula");
        assert_ne!(want, out0);
        let mut got = out0.clone();
        super::sub_scaled(&mut got, key.entry(0), 0xdead_beef);
        assert_eq!(got, want, "the dispatching entry point");
        #[cfg(target_arch = "x86_64")]
        for k in crate::fft::Kernel::available() {
            let mut got = out0.clone();
            match k {
                // SAFETY: the kernel is in Kernel::available(), so the CPU has AVX2; the entry has
                // KS_PAD bytes after its words.
                crate::fft::Kernel::Avx2Fma => unsafe {
                    super::sub_scaled_avx2(&mut got, key.entry(0), 0xdead_beef)
                },
                // SAFETY: the kernel is in Kernel::available(), so the CPU has AVX-512F; BW checked.
                crate::fft::Kernel::Avx512 if super::has_avx512bw() => unsafe {
                    super::sub_scaled_avx512(&mut got, key.entry(0), 0xdead_beef)
                },
                _ => super::sub_scaled(&mut got, key.entry(0), 0xdead_beef),
            }
            assert_eq!(got, want, "{k:?}");
        }
    }
}
