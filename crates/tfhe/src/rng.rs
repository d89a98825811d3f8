//! Randomness, all of it from vsp-math (one source per concept): the [`Seed`] is vsp-math's, mask
//! streams are vsp-math's domain-separated ChaCha20 [`SeededStream`]s, fresh randomness for secrets
//! and noise comes from vsp-math's [`ChaCha20`] keyed from the OS (one per thread), and the noise is
//! vsp-math's continuous Gaussian ([`vsp_math::sampler::gaussian_f64`]).
//!
//! Stream derivation: `SeededStream::chacha20(seed, "vsp-tfhe/" ‖ domain ‖ "/" ‖ index as u64 LE)`,
//! so every key entry has an independent stream and key generation parallelizes deterministically.

use std::cell::RefCell;

use rand_core::RngCore;
use vsp_math::{ChaCha20, SeededStream};
use zeroize::Zeroize;

pub use vsp_math::Seed;

/// Domains of the seed-expanded streams.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Domain {
    Bk1,
    Ks,
    Bk2,
    PrivKs,
    SecretKey,
}

impl Domain {
    fn label(self) -> &'static [u8] {
        match self {
            Domain::Bk1 => b"bk1",
            Domain::Ks => b"ks",
            Domain::Bk2 => b"bk2",
            Domain::PrivKs => b"privks",
            Domain::SecretKey => b"secret-key",
        }
    }
}

/// The stream for (seed, domain, index).
pub(crate) fn stream(seed: &Seed, domain: Domain, index: u64) -> SeededStream {
    let mut d = Vec::with_capacity(32);
    d.extend_from_slice(b"vsp-tfhe/");
    d.extend_from_slice(domain.label());
    d.push(b'/');
    d.extend_from_slice(&index.to_le_bytes());
    SeededStream::chacha20(seed, &d)
}

thread_local! {
    static THREAD_RNG: RefCell<ChaCha20> = RefCell::new(
        ChaCha20::from_os().unwrap_or_else(|e| panic!("vsp-tfhe needs OS randomness: {e}")),
    );
}

/// Runs `f` with this thread's OS-keyed ChaCha20 generator.
pub(crate) fn with_thread_rng<R>(f: impl FnOnce(&mut ChaCha20) -> R) -> R {
    THREAD_RNG.with(|r| f(&mut r.borrow_mut()))
}

/// A fresh seed from this thread's OS-keyed generator.
pub(crate) fn fresh_seed() -> Seed {
    with_thread_rng(Seed::generate)
}

/// A ChaCha20 noise generator keyed from `rng` (so a caller's generator never draws noise directly).
pub(crate) fn noise_rng<R: RngCore + ?Sized>(rng: &mut R) -> ChaCha20 {
    let mut key = [0u8; 32];
    rng.fill_bytes(&mut key);
    let out = ChaCha20::from_key(&key);
    key.zeroize();
    out
}

/// A centered normal sample of standard deviation `sigma` (vsp-math's continuous Gaussian; rounded
/// to the torus grid by the caller, as in TFHE).
#[inline]
pub(crate) fn normal<R: RngCore>(rng: &mut R, sigma: f64) -> f64 {
    vsp_math::sampler::gaussian_f64(rng, sigma)
}
