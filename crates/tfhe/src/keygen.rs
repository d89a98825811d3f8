//! Seeded encryption helpers shared by key generation and key decompression.
//!
//! Every key entry is one TLWE/TRLWE whose mask comes from a public seed-expanded stream and whose
//! noise comes from a secret stream; the compressed key stores only the seed and the bodies, and
//! decompression regenerates the masks from the same streams in the same order.

use crate::fft::FftPlan;
use crate::rng::normal;
use crate::torus::Torus;
use crate::trlwe::Trlwe;
use rand_core::RngCore;

/// Body of a TRLWE encryption of m: draws the mask a from `mask_rng`, returns a·s + m + e.
pub(crate) fn trlwe_body<T: Torus, R1: RngCore, R2: RngCore>(
    plan: &FftPlan,
    key_fft: &[f64],
    m: &[T],
    sigma: f64,
    mask_rng: &mut R1,
    noise_rng: &mut R2,
) -> Vec<T> {
    crate::trlwe::encrypt(plan, key_fft, m, sigma, mask_rng, noise_rng).b
}

/// Rebuilds a TRLWE from its seeded mask and stored body.
pub(crate) fn trlwe_from_seed<T: Torus, R: RngCore>(mask_rng: &mut R, body: &[T]) -> Trlwe<T> {
    let a: Vec<T> = (0..body.len()).map(|_| T::uniform(mask_rng)).collect();
    Trlwe {
        a,
        b: body.to_vec(),
    }
}

/// Body of a TLWE encryption of m under `key`: ⟨a, s⟩ + m + e with a drawn from `mask_rng`.
pub(crate) fn tlwe_body<T: Torus, R1: RngCore, R2: RngCore>(
    key: &[i32],
    m: T,
    sigma: f64,
    mask_rng: &mut R1,
    noise_rng: &mut R2,
) -> T {
    let mut acc = m.add(T::from_phase(normal(noise_rng, sigma)));
    for &s in key {
        let a = T::uniform(mask_rng);
        acc = acc.add(a.mul_i64(s as i64));
    }
    acc
}

/// Appends a seeded TLWE mask (n words) and its body to `out`.
pub(crate) fn tlwe_from_seed<T: Torus, R: RngCore>(
    mask_rng: &mut R,
    n: usize,
    body: T,
    out: &mut Vec<T>,
) {
    for _ in 0..n {
        out.push(T::uniform(mask_rng));
    }
    out.push(body);
}
