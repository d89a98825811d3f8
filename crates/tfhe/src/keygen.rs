//! Seeded encryption helpers shared by key generation and key decompression.
//!
//! Every key entry is one TLWE/TRLWE whose mask comes from a public seed-expanded stream and whose
//! noise comes from a secret stream; the compressed key stores only the seed and the bodies, and
//! decompression regenerates the masks from the same streams in the same order.

use crate::fft::FftPlan;
use crate::rng::{normal, stream, Domain, Seed};
use crate::torus::{Gadget, Torus};
use crate::trgsw::TrgswFft;
use crate::trlwe::Trlwe;
use rand_core::RngCore;
use rayon::prelude::*;

/// The level a bootstrapping key encrypts the level-0 key bits at: BK1 (level 1, gates) or BK2
/// (level 2, circuit bootstrapping).
pub(crate) struct BkLevel<'a> {
    /// The level's transform (its degree is the level's N).
    pub plan: &'a FftPlan,
    pub gadget: Gadget,
    pub sigma: f64,
    /// The streams the key's entries draw from (`Domain::Bk1` or `Domain::Bk2`).
    pub domain: Domain,
}

impl BkLevel<'_> {
    /// 2ℓ rows of N words per key bit.
    fn entry_shape(&self) -> (usize, usize) {
        (2 * self.gadget.levels as usize, self.plan.n())
    }
}

/// Bodies of the bootstrapping key BK_i = TRGSW(s0_i) (CGGI16 §3.3) under the level's key polynomial
/// `key` (`key_fft` its transform), i over the level-0 key `s0`:
/// per key bit the 2ℓ gadget rows in order, N body words each. Entry i draws its masks from stream
/// (`mask_seed`, domain, i) and its noise from (`noise_seed`, domain, i), so it is the same for the
/// same seeds whatever the thread count (multi-threaded with rayon).
pub(crate) fn bk_bodies<T: Torus>(
    level: &BkLevel<'_>,
    s0: &[i32],
    (key, key_fft): (&[i32], &[f64]),
    mask_seed: &Seed,
    noise_seed: &Seed,
) -> Vec<T> {
    let (rows, n) = level.entry_shape();
    s0.par_iter()
        .enumerate()
        .flat_map_iter(|(i, &bit)| {
            let mut mr = stream(mask_seed, level.domain, i as u64);
            let mut nr = stream(noise_seed, level.domain, i as u64);
            let mut out = Vec::with_capacity(rows * n);
            for r in 0..rows {
                let m = gadget_row_message::<T>(level.gadget, r, bit as i64, key);
                out.extend(trlwe_body(
                    level.plan,
                    key_fft,
                    &m,
                    level.sigma,
                    &mut mr,
                    &mut nr,
                ));
            }
            out
        })
        .collect()
}

/// The bootstrapping key in Fourier form from the bodies [`bk_bodies`] wrote and the masks regenerated
/// from `mask_seed` (multi-threaded). `bodies` holds whole entries (the caller checks its length).
pub(crate) fn bk_from_bodies<T: Torus>(
    level: &BkLevel<'_>,
    mask_seed: &Seed,
    bodies: &[T],
) -> Vec<TrgswFft<T>> {
    let (rows, n) = level.entry_shape();
    bodies
        .par_chunks_exact(rows * n)
        .enumerate()
        .map(|(i, entry)| {
            let mut mr = stream(mask_seed, level.domain, i as u64);
            let rows: Vec<Trlwe<T>> = entry
                .chunks_exact(n)
                .map(|body| trlwe_from_seed(&mut mr, body))
                .collect();
            TrgswFft::from_rows(level.plan, level.gadget, &rows)
        })
        .collect()
}

/// Message of TRGSW row r for the constant μ: −μ·g·s for mask rows, μ·g (constant) for body rows.
pub(crate) fn gadget_row_message<T: Torus>(g: Gadget, r: usize, mu: i64, key: &[i32]) -> Vec<T> {
    let l = g.levels as usize;
    let gv = g.g::<T>(r % l).mul_i64(mu);
    let mut m = vec![T::zero(); key.len()];
    if r < l {
        m.iter_mut()
            .zip(key)
            .for_each(|(x, &s)| *x = gv.mul_i64(-(s as i64)));
    } else {
        m[0] = gv;
    }
    m
}

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

#[cfg(test)]
mod tests {
    use crate::bootstrap::CompressedEvalKey;
    use crate::circuit_bootstrap::CompressedCircuitKey;
    use crate::params::Params;
    use crate::rng::Seed;
    use crate::secret_key::SecretKey;
    use sha3::{Digest, Sha3_256};

    fn hex_digest<T: Copy, const W: usize>(parts: &[&[T]], le: impl Fn(T) -> [u8; W]) -> String {
        let mut h = Sha3_256::new();
        for part in parts {
            for &x in *part {
                h.update(le(x));
            }
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Key generation is deterministic in its seeds, and its bytes are pinned: the digests below were
    /// taken before bk1 and bk2 shared one generator, so a change to either key's bytes fails here.
    #[test]
    fn seeded_keys_are_pinned() {
        let p = Params {
            n0: 8,
            n1: 64,
            n2: 128,
            // The level-0 noise and BK2 gadget the digests were taken with (default_128 has
            // σ0 = 1.07e-5 and 2^15 × 2 since).
            sigma0: 5.86e-6,
            bk2: crate::torus::Gadget {
                levels: 3,
                base_bits: 10,
            },
            ..Params::default_128()
        };
        let sk = SecretKey::from_seed(&p, Seed::from_bytes([1; 32])).unwrap();
        let (mask, noise) = (Seed::from_bytes([2; 32]), Seed::from_bytes([3; 32]));
        let ek = CompressedEvalKey::generate_from_seeds(&sk, mask.clone(), &noise);
        let ck = CompressedCircuitKey::generate_from_seeds(&sk, mask, &noise);
        let ek_digest = hex_digest(&[&ek.bk_bodies, &ek.ks_bodies], u32::to_le_bytes);
        let bk2_digest = hex_digest(&[&ck.bk2_bodies], u64::to_le_bytes);
        let privks_digest = hex_digest(&[&ck.privks_bodies], u32::to_le_bytes);
        assert_eq!(
            ek_digest,
            "6e2e8a18f54904c78d338c9a30c588ac46428cf788c87205b20bc08b5405ef68"
        );
        assert_eq!(
            bk2_digest,
            "7be041518a1a7902c4bb60c77224a22aa1d0ca93ce5ca5dc837022d5b2ed5c05"
        );
        assert_eq!(
            privks_digest,
            "4e8cb62d53dc79c4673732e306172da6e79bbf2963b0d7ede33af70751c9a7c3"
        );
    }
}
