//! Receiving streamed device output: a [`Collector`] is a [`Sink`](crate::Sink) that assembles the parts into a
//! [`Ciphertext`], re-expanding c1 from the shareable seed exactly as SEAL's `sample_poly_uniform`
//! would (so the same bytes also load in SEAL as a seeded ciphertext).

use super::ciphertext::Ciphertext;
use super::context::ServerContext;
use crate::device::encryptor::{Part, Sink, SinkError};
use crate::error::{CkksError, Result};
use crate::prng::{sample_uniform_limb, SEED_BYTES};

/// c1 = a expanded from a seed, all data primes of `level`, NTT form.
pub fn expand_seed(ctx: &ServerContext, seed: &[u8; SEED_BYTES], level: usize) -> Vec<Vec<u64>> {
    let n = ctx.n();
    let mut rejections = 0;
    (0..level)
        .map(|j| {
            let mut limb = vec![0u64; n];
            sample_uniform_limb(seed, n, level, j, ctx.q(j), &mut rejections, |i, a| {
                limb[i] = a
            });
            limb
        })
        .collect()
}

/// Builds a seeded ciphertext's full form from c0 limbs and the seed.
pub fn expand_seeded(
    ctx: &ServerContext,
    c0: &[Vec<u64>],
    seed: &[u8; SEED_BYTES],
    scale: f64,
) -> Result<Ciphertext> {
    let level = c0.len();
    let n = ctx.n();
    if level == 0 || level > ctx.max_level() || c0.iter().any(|l| l.len() != n) {
        return Err(CkksError::Mismatch(
            "seeded ciphertext does not match the parameters",
        ));
    }
    let mut ct = Ciphertext::zero(n, level, 2, scale);
    for (j, (limb, a)) in c0.iter().zip(expand_seed(ctx, seed, level)).enumerate() {
        if limb.iter().any(|&x| x >= ctx.q(j)) {
            return Err(CkksError::Format(
                "coefficient not reduced modulo its prime",
            ));
        }
        ct.limb_mut(0, j).copy_from_slice(limb);
        ct.limb_mut(1, j).copy_from_slice(&a);
    }
    Ok(ct)
}

/// Collects a device's streamed ciphertext.
pub struct Collector<'a> {
    ctx: &'a ServerContext,
    seed: Option<[u8; SEED_BYTES]>,
    ct: Ciphertext,
    seen: Vec<bool>,
}

impl<'a> Collector<'a> {
    /// Ready for a fresh (full-level) ciphertext at the parameters' scale.
    pub fn new(ctx: &'a ServerContext) -> Self {
        let l = ctx.max_level();
        Self {
            ct: Ciphertext::zero(ctx.n(), l, 2, ctx.params().scale()),
            seed: None,
            seen: vec![false; 2 * l],
            ctx,
        }
    }

    /// The assembled ciphertext; errors if a limb is missing.
    pub fn finish(mut self) -> Result<Ciphertext> {
        let l = self.ct.level;
        if let Some(seed) = self.seed {
            if self.seen[l..].iter().any(|&s| s) {
                return Err(CkksError::Format("both a seed and c1 limbs were received"));
            }
            for (j, a) in expand_seed(self.ctx, &seed, l).into_iter().enumerate() {
                self.ct.limb_mut(1, j).copy_from_slice(&a);
                self.seen[l + j] = true;
            }
        }
        if self.seen.iter().any(|&s| !s) {
            return Err(CkksError::Format("streamed ciphertext is incomplete"));
        }
        Ok(self.ct)
    }
}

impl Sink for Collector<'_> {
    fn send(&mut self, part: Part<'_>) -> core::result::Result<(), SinkError> {
        match part {
            Part::Seed(s) => {
                if self.seed.is_some() {
                    return Err(SinkError);
                }
                self.seed = Some(*s);
            }
            Part::Limb {
                poly,
                prime,
                coeffs,
            } => {
                let l = self.ct.level;
                if poly > 1
                    || prime >= l
                    || coeffs.len() != self.ct.n
                    || self.seen[poly * l + prime]
                {
                    return Err(SinkError);
                }
                for (d, &c) in self.ct.limb_mut(poly, prime).iter_mut().zip(coeffs) {
                    *d = c as u64;
                }
                self.seen[poly * l + prime] = true;
            }
        }
        Ok(())
    }
}
