//! Randomness: an OS-seeded ChaCha20 CSPRNG and seed-expandable, domain-separated streams
//! (ChaCha20 and SHAKE256) for compressed keys and seeded ciphertexts.
//!
//! A [`SeededStream`] is a deterministic function of (kind, seed, domain): two parties holding the same
//! 32-byte seed expand the same mask polynomial, and different domains (e.g. `b"bfv/pk/a"` and
//! `b"tfhe/bsk/mask"`) give independent streams. Derivation:
//! * ChaCha20: key = SHAKE256("VSP-MATH/CHACHA20/v1" ‖ len(domain) as u64 LE ‖ domain ‖ seed)[..32],
//!   nonce 0, 64-bit block counter from 0 (RFC 8439's block function with the original 64/64 split);
//! * SHAKE256: the XOF of "VSP-MATH/SHAKE256/v1" ‖ len(domain) as u64 LE ‖ domain ‖ seed.
//!
//! The ChaCha20 core is written here (instead of taken from `rand_chacha`) so that its key and
//! buffered key stream are zeroized on drop; tests check it against `rand_chacha` word for word.

use rand_core::{CryptoRng, RngCore};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::Shake256;
use zeroize::{Zeroize, ZeroizeOnDrop};

#[cfg(feature = "std")]
use crate::error::{MathError, Result};

/// Length of a seed in bytes.
pub const SEED_BYTES: usize = 32;

/// A 32-byte secret seed. Zeroized on drop; `Debug` does not print it.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct Seed([u8; SEED_BYTES]);

impl core::fmt::Debug for Seed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Seed(<redacted>)")
    }
}

impl Seed {
    /// Wraps 32 bytes (e.g. read from a key file).
    pub fn from_bytes(bytes: [u8; SEED_BYTES]) -> Self {
        Self(bytes)
    }

    /// The seed bytes (to store in a compressed key or seeded ciphertext).
    pub fn as_bytes(&self) -> &[u8; SEED_BYTES] {
        &self.0
    }

    /// A fresh seed drawn from a cryptographic RNG.
    pub fn generate<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let mut bytes = [0u8; SEED_BYTES];
        rng.fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// A fresh seed from the operating system's random source.
    #[cfg(feature = "std")]
    pub fn from_os() -> Result<Self> {
        let mut bytes = [0u8; SEED_BYTES];
        rand_core::OsRng
            .try_fill_bytes(&mut bytes)
            .map_err(|_| MathError::OsRandomness)?;
        Ok(Self(bytes))
    }
}

/// The ChaCha20 block function's state: key, 64-bit counter and 64-bit stream id, plus one buffered
/// block of output. Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct ChaCha20 {
    key: [u32; 8],
    counter: u64,
    stream: u64,
    buffer: [u32; 16],
    /// Next unread word of `buffer` (16 = empty).
    index: usize,
}

impl core::fmt::Debug for ChaCha20 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ChaCha20(<redacted>)")
    }
}

#[inline(always)]
fn quarter_round(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

impl ChaCha20 {
    /// ChaCha20 keyed with 32 bytes, stream id 0, counter 0.
    pub fn from_key(key: &[u8; 32]) -> Self {
        let mut k = [0u32; 8];
        for (w, chunk) in k.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        Self {
            key: k,
            counter: 0,
            stream: 0,
            buffer: [0; 16],
            index: 16,
        }
    }

    /// A ChaCha20 CSPRNG keyed from the operating system's random source.
    #[cfg(feature = "std")]
    pub fn from_os() -> Result<Self> {
        let seed = Seed::from_os()?;
        Ok(Self::from_key(seed.as_bytes()))
    }

    /// Selects one of 2^64 independent streams of the same key and restarts it at block 0.
    pub fn set_stream(&mut self, stream: u64) {
        self.stream = stream;
        self.counter = 0;
        self.index = 16;
    }

    fn refill(&mut self) {
        const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
        let mut init = [0u32; 16];
        init[..4].copy_from_slice(&SIGMA);
        init[4..12].copy_from_slice(&self.key);
        init[12] = self.counter as u32;
        init[13] = (self.counter >> 32) as u32;
        init[14] = self.stream as u32;
        init[15] = (self.stream >> 32) as u32;
        let mut s = init;
        for _ in 0..10 {
            quarter_round(&mut s, 0, 4, 8, 12);
            quarter_round(&mut s, 1, 5, 9, 13);
            quarter_round(&mut s, 2, 6, 10, 14);
            quarter_round(&mut s, 3, 7, 11, 15);
            quarter_round(&mut s, 0, 5, 10, 15);
            quarter_round(&mut s, 1, 6, 11, 12);
            quarter_round(&mut s, 2, 7, 8, 13);
            quarter_round(&mut s, 3, 4, 9, 14);
        }
        for (out, (x, y)) in self.buffer.iter_mut().zip(s.iter().zip(init.iter())) {
            *out = x.wrapping_add(*y);
        }
        init.zeroize();
        s.zeroize();
        self.counter = self.counter.wrapping_add(1);
        self.index = 0;
    }
}

impl RngCore for ChaCha20 {
    fn next_u32(&mut self) -> u32 {
        if self.index >= 16 {
            self.refill();
        }
        let w = self.buffer[self.index];
        self.index += 1;
        w
    }

    fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32() as u64;
        let hi = self.next_u32() as u64;
        lo | (hi << 32)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(4) {
            let w = self.next_u32().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> core::result::Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for ChaCha20 {}

/// Which primitive expands a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// ChaCha20 keyed by SHAKE256(domain, seed) — the fast choice.
    ChaCha20,
    /// SHAKE256(domain, seed) read as an XOF — the choice of Kyber/SEAL-style seeded masks.
    Shake256,
}

enum StreamInner {
    ChaCha(ChaCha20),
    // Boxed: the Keccak state is three times the size of ChaCha's.
    Shake(alloc::boxed::Box<sha3::Shake256Reader>),
}

/// A deterministic, domain-separated random stream expanded from a [`Seed`]; implements
/// [`RngCore`] so every sampler accepts it.
pub struct SeededStream {
    inner: StreamInner,
}

impl core::fmt::Debug for SeededStream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SeededStream(<redacted>)")
    }
}

fn absorb(label: &[u8], seed: &Seed, domain: &[u8]) -> Shake256 {
    let mut h = Shake256::default();
    h.update(label);
    h.update(&(domain.len() as u64).to_le_bytes());
    h.update(domain);
    h.update(seed.as_bytes());
    h
}

impl SeededStream {
    /// The stream of `kind` for (seed, domain).
    pub fn new(kind: StreamKind, seed: &Seed, domain: &[u8]) -> Self {
        match kind {
            StreamKind::ChaCha20 => {
                let mut key = [0u8; 32];
                absorb(b"VSP-MATH/CHACHA20/v1", seed, domain)
                    .finalize_xof()
                    .read(&mut key);
                let rng = ChaCha20::from_key(&key);
                key.zeroize();
                Self {
                    inner: StreamInner::ChaCha(rng),
                }
            }
            StreamKind::Shake256 => Self {
                inner: StreamInner::Shake(alloc::boxed::Box::new(
                    absorb(b"VSP-MATH/SHAKE256/v1", seed, domain).finalize_xof(),
                )),
            },
        }
    }

    /// Shorthand for `SeededStream::new(StreamKind::ChaCha20, seed, domain)`.
    pub fn chacha20(seed: &Seed, domain: &[u8]) -> Self {
        Self::new(StreamKind::ChaCha20, seed, domain)
    }

    /// Shorthand for `SeededStream::new(StreamKind::Shake256, seed, domain)`.
    pub fn shake256(seed: &Seed, domain: &[u8]) -> Self {
        Self::new(StreamKind::Shake256, seed, domain)
    }
}

impl RngCore for SeededStream {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        match &mut self.inner {
            StreamInner::ChaCha(c) => c.next_u64(),
            StreamInner::Shake(_) => {
                let mut b = [0u8; 8];
                self.fill_bytes(&mut b);
                u64::from_le_bytes(b)
            }
        }
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        match &mut self.inner {
            StreamInner::ChaCha(c) => c.fill_bytes(dest),
            StreamInner::Shake(r) => r.read(dest),
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> core::result::Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for SeededStream {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn chacha20_matches_rand_chacha() {
        let key: [u8; 32] = core::array::from_fn(|i| (i * 7 + 1) as u8);
        let mut ours = ChaCha20::from_key(&key);
        let mut theirs = rand_chacha::ChaCha20Rng::from_seed(key);
        for _ in 0..100 {
            assert_eq!(ours.next_u32(), theirs.next_u32());
        }
        let mut ours = ChaCha20::from_key(&key);
        let mut theirs = rand_chacha::ChaCha20Rng::from_seed(key);
        ours.set_stream(5);
        theirs.set_stream(5);
        let mut a = [0u8; 256];
        let mut b = [0u8; 256];
        ours.fill_bytes(&mut a);
        theirs.fill_bytes(&mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn rfc8439_block_function_zero_key() {
        // RFC 8439 §A.1 test vector #1: all-zero key and nonce, counter 0.
        let mut c = ChaCha20::from_key(&[0u8; 32]);
        let mut out = [0u8; 16];
        c.fill_bytes(&mut out);
        assert_eq!(
            out,
            [
                0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86,
                0xbd, 0x28
            ]
        );
    }

    #[test]
    fn streams_are_deterministic_and_domain_separated() {
        let seed = Seed::from_bytes([42u8; 32]);
        for kind in [StreamKind::ChaCha20, StreamKind::Shake256] {
            let a: [u64; 4] = {
                let mut s = SeededStream::new(kind, &seed, b"pk/a");
                core::array::from_fn(|_| s.next_u64())
            };
            let b: [u64; 4] = {
                let mut s = SeededStream::new(kind, &seed, b"pk/a");
                core::array::from_fn(|_| s.next_u64())
            };
            let c: [u64; 4] = {
                let mut s = SeededStream::new(kind, &seed, b"pk/b");
                core::array::from_fn(|_| s.next_u64())
            };
            assert_eq!(a, b);
            assert_ne!(a, c);
        }
        let mut x = SeededStream::chacha20(&seed, b"d");
        let mut y = SeededStream::shake256(&seed, b"d");
        assert_ne!(x.next_u64(), y.next_u64());
        let other = Seed::from_bytes([43u8; 32]);
        assert_ne!(
            SeededStream::chacha20(&other, b"d").next_u64(),
            SeededStream::chacha20(&seed, b"d").next_u64()
        );
    }

    #[test]
    fn debug_redacts_secrets() {
        let seed = Seed::from_bytes([7u8; 32]);
        let text = std::format!(
            "{seed:?} {:?} {:?}",
            ChaCha20::from_key(&[7u8; 32]),
            SeededStream::chacha20(&seed, b"")
        );
        assert!(!text.contains('7'), "{text}");
    }

    #[test]
    fn os_seeds_differ() {
        let a = Seed::from_os().unwrap();
        let b = Seed::from_os().unwrap();
        assert_ne!(a, b);
        let mut r = ChaCha20::from_os().unwrap();
        assert_ne!(r.next_u64(), r.next_u64());
    }
}
