//! Randomness: OS-seeded ChaCha20 for secrets and noise, and seed-expanded ChaCha20 streams with domain
//! separation for masks (so that keys can be stored compressed as seed + bodies).
//!
//! Stream derivation: key = SHA3-256("vsp-tfhe" ‖ domain ‖ seed), ChaCha20 stream id = entry index, so
//! every key entry has an independent stream and key generation parallelizes deterministically.

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, OsRng, RngCore, SeedableRng};
use sha3::{Digest, Sha3_256};
use std::cell::RefCell;
use zeroize::Zeroize;

/// A 32-byte seed.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Zeroize)]
pub struct Seed(pub [u8; 32]);

impl core::fmt::Debug for Seed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Seed(<redacted>)")
    }
}

impl Seed {
    /// A fresh seed from the OS.
    pub fn from_os() -> Seed {
        let mut s = [0u8; 32];
        OsRng.fill_bytes(&mut s);
        Seed(s)
    }
    /// A fresh seed drawn from `rng`.
    pub fn from_rng<R: RngCore + CryptoRng>(rng: &mut R) -> Seed {
        let mut s = [0u8; 32];
        rng.fill_bytes(&mut s);
        Seed(s)
    }
}

/// Domains of the seed-expanded streams.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
#[allow(dead_code)]
pub(crate) enum Domain {
    Bk1 = 1,
    Ks = 2,
    Bk2 = 3,
    PrivKs = 4,
    SecretKey = 5,
}

/// The ChaCha20 stream for (seed, domain, index).
pub(crate) fn stream(seed: &Seed, domain: Domain, index: u64) -> ChaCha20Rng {
    let mut h = Sha3_256::new();
    h.update(b"vsp-tfhe");
    h.update((domain as u64).to_le_bytes());
    h.update(seed.0);
    let mut key: [u8; 32] = h.finalize().into();
    let mut r = ChaCha20Rng::from_seed(key);
    key.zeroize();
    r.set_stream(index);
    r
}

thread_local! {
    static THREAD_RNG: RefCell<ChaCha20Rng> = RefCell::new(ChaCha20Rng::from_rng(OsRng).unwrap_or_else(|_| ChaCha20Rng::from_seed(Seed::from_os().0)));
}

/// Runs `f` with this thread's OS-seeded ChaCha20 generator.
pub(crate) fn with_thread_rng<R>(f: impl FnOnce(&mut ChaCha20Rng) -> R) -> R {
    THREAD_RNG.with(|r| f(&mut r.borrow_mut()))
}

/// Uniform f64 in (0, 1] from 53 random bits.
#[inline]
fn unit_open0<R: RngCore>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 1.0) / 9007199254740992.0
}

/// A centered normal sample of standard deviation `sigma` (Box–Muller; a continuous Gaussian rounded to
/// the torus grid, as in TFHE).
#[inline]
pub(crate) fn normal<R: RngCore>(rng: &mut R, sigma: f64) -> f64 {
    let u1 = unit_open0(rng);
    let u2 = unit_open0(rng);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos() * sigma
}
