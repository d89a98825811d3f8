//! Seeded randomness.
//!
//! * [`SealShake`](crate::prng::SealShake): SEAL's `Shake256PRNG` stream — block b is SHAKE256(seed ‖ b as u64 LE), 4096 bytes,
//!   b = 0, 1, … (SEAL `randomgen.cpp`). Blocks are independent, so the device can start the stream at
//!   any prime without producing the earlier ones.
//! * [`sample_uniform_limb`](crate::prng::sample_uniform_limb): SEAL's `sample_poly_uniform` (`rlwe.cpp`) over that stream: one u64 per
//!   coefficient, prime after prime, rejecting words ≥ 2^64 − 1 − ((2^64 − 1) mod q) − 1 and drawing the
//!   replacements from the stream *after* all N·L words. This is what lets SEAL itself expand our seeded
//!   ciphertexts (prng type 2 = shake256 in its `UniformRandomGeneratorInfo`).
//! * [`Xof`](crate::prng::Xof): a domain-separated SHAKE256 reader for the device's private noise (ternary u, CBD
//!   errors), so that low-memory modes can regenerate the same noise for every prime instead of storing it.

use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::Shake256;

/// SEAL's PRNG seed: 8 u64 words = 64 bytes.
pub const SEED_BYTES: usize = 64;
const BLOCK: usize = 4096;

const CHUNK: usize = 256;

/// A reader of SEAL's SHAKE256 block stream (reads the XOF 256 bytes at a time).
pub struct SealShake<'a> {
    seed: &'a [u8; SEED_BYTES],
    block: u64,
    /// Bytes of the current block consumed from the XOF into `buf`.
    squeezed: usize,
    buf: [u8; CHUNK],
    pos: usize,
    reader: sha3::Shake256Reader,
}

impl<'a> SealShake<'a> {
    /// Positions the stream at byte `offset` (any multiple of 8).
    pub fn at(seed: &'a [u8; SEED_BYTES], offset: u64) -> Self {
        let block = offset / BLOCK as u64;
        let within = (offset % BLOCK as u64) as usize;
        let mut s = Self {
            seed,
            block,
            squeezed: 0,
            buf: [0; CHUNK],
            pos: CHUNK,
            reader: Self::block_reader(seed, block),
        };
        // Skip whole chunks, then land inside one.
        while s.squeezed + CHUNK <= within {
            s.refill();
        }
        s.refill();
        s.pos = within % CHUNK;
        s
    }

    fn block_reader(seed: &[u8; SEED_BYTES], block: u64) -> sha3::Shake256Reader {
        let mut h = Shake256::default();
        h.update(seed);
        h.update(&block.to_le_bytes());
        h.finalize_xof()
    }

    fn refill(&mut self) {
        if self.squeezed == BLOCK {
            self.block += 1;
            self.reader = Self::block_reader(self.seed, self.block);
            self.squeezed = 0;
        }
        self.reader.read(&mut self.buf);
        self.squeezed += CHUNK;
        self.pos = 0;
    }

    /// The next little-endian u64 of the stream.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        if self.pos == CHUNK {
            self.refill();
        }
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.buf[self.pos..self.pos + 8]);
        self.pos += 8;
        u64::from_le_bytes(b)
    }
}

/// SEAL's uniform sampling of limb `prime` (of `primes` limbs, degree `n`) from `seed`, in NTT form
/// (SEAL samples `a` directly in the NTT domain). `rejections` carries the number of replacement
/// words drawn by earlier limbs, so limbs must be sampled in order 0, 1, …; it is updated.
/// `put(i, a_i)` receives the coefficients in order.
pub fn sample_uniform_limb(
    seed: &[u8; SEED_BYTES],
    n: usize,
    primes: usize,
    prime: usize,
    q: u64,
    rejections: &mut u64,
    mut put: impl FnMut(usize, u64),
) {
    let max_multiple = u64::MAX - (u64::MAX % q) - 1;
    let mut s = SealShake::at(seed, 8 * (prime * n) as u64);
    let tail = 8 * (primes * n) as u64;
    for i in 0..n {
        let mut v = s.next_u64();
        while v >= max_multiple {
            // Astronomically rare (< 2^-33 per word), so re-opening the tail block each time is fine.
            v = SealShake::at(seed, tail + 8 * *rejections).next_u64();
            *rejections += 1;
        }
        put(i, v % q);
    }
}

/// The device's private noise stream: ChaCha20 (vsp-math) keyed by SHAKE256(label ‖ seed).
/// ChaCha20 is several times faster than SHAKE256 in software; this stream never leaves the
/// device, so it needs no compatibility with anything.
#[cfg(feature = "alloc")]
pub struct Xof(vsp_math::ChaCha20);
/// The device's private noise stream (allocation-free build: rand_chacha's ChaCha20, the same
/// keystream as vsp-math's, checked in the default build).
#[cfg(not(feature = "alloc"))]
pub struct Xof(rand_chacha::ChaCha20Rng);

impl Xof {
    /// Opens the stream for `label` under a 32-byte private seed.
    pub fn new(seed: &[u8; 32], label: &[u8]) -> Self {
        let mut h = Shake256::default();
        h.update(b"vsp-ckks/");
        h.update(label);
        h.update(&[0]);
        h.update(seed);
        let mut key = [0u8; 32];
        h.finalize_xof().read(&mut key);
        #[cfg(feature = "alloc")]
        let x = Self(vsp_math::ChaCha20::from_key(&key));
        #[cfg(not(feature = "alloc"))]
        let x = Self(<rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::from_seed(key));
        zeroize::Zeroize::zeroize(&mut key);
        x
    }
    /// Fills `out` with stream bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        rand_core::RngCore::fill_bytes(&mut self.0, out);
    }
    /// Next u64.
    pub fn next_u64(&mut self) -> u64 {
        rand_core::RngCore::next_u64(&mut self.0)
    }
}

/// CBD(21) samples, four per 21 stream bytes (168 bits = 4 × 42).
pub struct Cbd21 {
    x: Xof,
    pending: [i8; 4],
    left: usize,
}

impl Cbd21 {
    /// The error stream for `label` under the private seed.
    pub fn new(seed: &[u8; 32], label: &[u8]) -> Self {
        Self {
            x: Xof::new(seed, label),
            pending: [0; 4],
            left: 0,
        }
    }
    /// Next sample in [−21, 21].
    #[inline]
    pub fn sample(&mut self) -> i64 {
        if self.left == 0 {
            let mut b = [0u8; 24];
            self.x.fill(&mut b[..21]);
            let mut lo = [0u8; 16];
            lo.copy_from_slice(&b[..16]);
            let lo = u128::from_le_bytes(lo);
            let mut hi = [0u8; 8];
            hi.copy_from_slice(&b[16..24]);
            let hi = u64::from_le_bytes(hi);
            const M42: u64 = (1 << 42) - 1;
            let words = [
                lo as u64 & M42,
                (lo >> 42) as u64 & M42,
                (lo >> 84) as u64 & M42,
                ((lo >> 126) as u64 | (hi << 2)) & M42,
            ];
            for (p, w) in self.pending.iter_mut().zip(words) {
                *p = ((w & 0x1F_FFFF).count_ones() as i8) - ((w >> 21).count_ones() as i8);
            }
            self.left = 4;
        }
        self.left -= 1;
        self.pending[3 - self.left] as i64
    }
}

/// Streams N uniform ternary values in {−1, 0, 1} (5 trits per accepted byte, bytes ≥ 243 rejected).
pub fn ternary(x: &mut Xof, n: usize, mut put: impl FnMut(usize, i8)) {
    let mut i = 0;
    let mut buf = [0u8; 32];
    while i < n {
        x.fill(&mut buf);
        for &b in buf.iter() {
            if b >= 243 {
                continue;
            }
            let mut v = b;
            for _ in 0..5 {
                if i < n {
                    put(i, (v % 3) as i8 - 1);
                    i += 1;
                }
                v /= 3;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The allocation-free build's noise stream (rand_chacha) is vsp-math's keystream, so both
    /// builds make the same ciphertexts from the same seeds.
    #[cfg(feature = "alloc")]
    #[test]
    fn rand_chacha_matches_vsp_math_chacha20() {
        for k in 0..4u8 {
            let key = [k.wrapping_mul(37).wrapping_add(1); 32];
            let mut a = vsp_math::ChaCha20::from_key(&key);
            let mut b = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::from_seed(key);
            let (mut x, mut y) = ([0u8; 1000], [0u8; 1000]);
            rand_core::RngCore::fill_bytes(&mut a, &mut x[..21]);
            rand_core::RngCore::fill_bytes(&mut b, &mut y[..21]);
            rand_core::RngCore::fill_bytes(&mut a, &mut x[21..]);
            rand_core::RngCore::fill_bytes(&mut b, &mut y[21..]);
            assert_eq!(x, y);
            assert_eq!(
                rand_core::RngCore::next_u64(&mut a),
                rand_core::RngCore::next_u64(&mut b)
            );
        }
    }

    #[test]
    fn stream_random_access_matches_sequential() {
        let seed = [7u8; 64];
        let mut s = SealShake::at(&seed, 0);
        let seq: [u64; 1100] = core::array::from_fn(|_| s.next_u64());
        for off in [0usize, 1, 31, 32, 33, 64, 511, 512, 513, 1099] {
            assert_eq!(SealShake::at(&seed, 8 * off as u64).next_u64(), seq[off]);
        }
        // Block 1 is SHAKE256(seed ‖ 1): differs from block 0.
        assert_ne!(seq[0], seq[512]);
    }

    #[test]
    fn noise_distributions_are_sane() {
        let mut x = Cbd21::new(&[1; 32], b"t");
        let (mut sum, mut sq) = (0i64, 0i64);
        for _ in 0..20000 {
            let e = x.sample();
            assert!((-21..=21).contains(&e));
            sum += e;
            sq += e * e;
        }
        let var = sq as f64 / 20000.0;
        assert!(sum.abs() < 1500 && (var - 10.5).abs() < 1.0, "var {var}");
        let mut counts = [0usize; 3];
        ternary(&mut Xof::new(&[2; 32], b"u"), 30000, |_, t| {
            counts[(t + 1) as usize] += 1
        });
        assert!(
            counts.iter().all(|&c| (9000..11000).contains(&c)),
            "{counts:?}"
        );
    }
}
