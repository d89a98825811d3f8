//! Circuit bootstrapping TLWE level 0 → TRGSW level 1 (CGGI17 Alg. 3 / JoC 2020 §4.3; TFHEpp
//! `circuitbootstrapping`), with private functional key switching level 2 → level 1 (CGGI17 Alg. 2).
//!
//! 1. One many-LUT blind rotation (CLOT21, ePrint 2021/729) of the level-0 input into level 2: the test
//!    polynomial holds ±Bg^-(i+1)/2 at positions ≡ i (mod stride), the modulus switch rounds to multiples of
//!    the stride, so sample extraction at i = 0..ℓ gives every gadget level from one rotation; adding
//!    Bg^-(i+1)/2 turns the phase into m·Bg^-(i+1).
//! 2. For each level, two private functional key switches: with the secret function x ↦ −s1·x (mask row)
//!    and with the identity (body row), giving the 2ℓ rows of TRGSW(m). The key entries are
//!    TRLWE(P·s2_u·g_j) with one entry per digit position (gadget key switching: digits multiply entries),
//!    so the keys are t/2^(b−1) times smaller than TFHEpp's per-digit-value tables.
//! 3. FFT the rows. TRGSW(1 − m) is the gadget matrix minus TRGSW(m), computed in the Fourier domain.

use crate::bootstrap::{blind_rotate, sub_scaled_words};
use crate::fft::{plan, FftPlan};
use crate::keygen::{bk_bodies, bk_from_bodies, trlwe_body, trlwe_from_seed, BkLevel};
use crate::params::Params;
use crate::rng::{fresh_seed, stream, Domain, Seed};
use crate::secret_key::SecretKey;
use crate::tlwe::Tlwe;
use crate::torus::{Gadget, Torus};
use crate::trgsw::TrgswFft;
use crate::trlwe::Trlwe;
use crate::Error;
use rayon::prelude::*;
use std::sync::Arc;

/// The secret linear function a private key switch applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivFunction {
    /// x ↦ −s1·x (s1 the level-1 key polynomial): produces TRGSW mask rows.
    MinusKey = 0,
    /// x ↦ x: produces TRGSW body rows.
    Identity = 1,
}

/// Keys for circuit bootstrapping: level-0 → level-2 bootstrapping key (Fourier form) and the two private
/// key-switching keys level 2 → level 1. Separate from [`crate::EvalKey`] so gate-only users skip it.
#[derive(Debug)]
pub struct CircuitKey {
    pub(crate) params: Params,
    pub(crate) plan1: Arc<FftPlan>,
    pub(crate) plan2: Arc<FftPlan>,
    pub(crate) bk2: Vec<TrgswFft<u64>>,
    /// Per function: (N2+1)·t entries of 2·N1 words (mask then body).
    pub(crate) privks: [Vec<u32>; 2],
}

/// [`CircuitKey`] with masks replaced by a seed (half the size).
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedCircuitKey {
    pub(crate) params: Params,
    pub(crate) mask_seed: Seed,
    pub(crate) bk2_bodies: Vec<u64>,
    pub(crate) privks_bodies: Vec<u32>,
}

impl CompressedCircuitKey {
    /// Generates the compressed circuit key (multi-threaded).
    pub fn generate(sk: &SecretKey) -> CompressedCircuitKey {
        Self::generate_from_seeds(sk, fresh_seed(), &fresh_seed())
    }

    /// The compressed circuit key whose masks come from `mask_seed` and noise from `noise_seed`
    /// (deterministic: the same seeds give the same key bytes).
    pub(crate) fn generate_from_seeds(
        sk: &SecretKey,
        mask_seed: Seed,
        noise_seed: &Seed,
    ) -> CompressedCircuitKey {
        let p = sk.params;
        let plan1 = plan(p.n1);
        let plan2 = plan(p.n2);
        let bk2_bodies = bk_bodies::<u64>(
            &bk2_level(&p, &plan2),
            &sk.s0,
            (&sk.s2, &sk.s2_fft),
            &mask_seed,
            noise_seed,
        );
        let t = p.privks.levels as usize;
        let inputs = p.n2 + 1;
        let privks_bodies: Vec<u32> = (0..2 * inputs)
            .into_par_iter()
            .flat_map_iter(|idx| {
                let (f, u) = (idx / inputs, idx % inputs);
                let mut mr = stream(&mask_seed, Domain::PrivKs, idx as u64);
                let mut nr = stream(noise_seed, Domain::PrivKs, idx as u64);
                let s2u = if u < p.n2 { sk.s2[u] as i64 } else { -1 };
                let mut out = Vec::with_capacity(t * p.n1);
                for j in 0..t {
                    let c = p.privks.g::<u32>(j).mul_i64(s2u);
                    let m: Vec<u32> = if f == PrivFunction::MinusKey as usize {
                        sk.s1.iter().map(|&s| c.mul_i64(-(s as i64))).collect()
                    } else {
                        let mut m = vec![0u32; p.n1];
                        m[0] = c;
                        m
                    };
                    out.extend(trlwe_body(
                        &plan1, &sk.s1_fft, &m, p.sigma1, &mut mr, &mut nr,
                    ));
                }
                out
            })
            .collect();
        CompressedCircuitKey {
            params: p,
            mask_seed,
            bk2_bodies,
            privks_bodies,
        }
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Regenerates masks and transforms the bootstrapping key (multi-threaded).
    pub fn decompress(&self) -> Result<CircuitKey, Error> {
        let p = self.params;
        p.validate()?;
        let l2 = 2 * p.bk2.levels as usize;
        let t = p.privks.levels as usize;
        let inputs = p.n2 + 1;
        if self.bk2_bodies.len() != p.n0 * l2 * p.n2
            || self.privks_bodies.len() != 2 * inputs * t * p.n1
        {
            return Err(Error::Format(
                "compressed circuit key has wrong lengths".into(),
            ));
        }
        let plan1 = plan(p.n1);
        let plan2 = plan(p.n2);
        let bk2 = bk_from_bodies(&bk2_level(&p, &plan2), &self.mask_seed, &self.bk2_bodies);
        let expand = |f: usize| -> Vec<u32> {
            (0..inputs)
                .into_par_iter()
                .flat_map_iter(|u| {
                    let idx = f * inputs + u;
                    let mut mr = stream(&self.mask_seed, Domain::PrivKs, idx as u64);
                    let mut out = Vec::with_capacity(t * 2 * p.n1);
                    for j in 0..t {
                        let off = (idx * t + j) * p.n1;
                        let row = trlwe_from_seed(&mut mr, &self.privks_bodies[off..off + p.n1]);
                        out.extend_from_slice(&row.a);
                        out.extend_from_slice(&row.b);
                    }
                    out
                })
                .collect()
        };
        let privks = [expand(0), expand(1)];
        Ok(CircuitKey {
            params: p,
            plan1,
            plan2,
            bk2,
            privks,
        })
    }
}

/// BK2's level: level 2 under the `bk2` gadget.
fn bk2_level<'a>(p: &Params, plan2: &'a FftPlan) -> BkLevel<'a> {
    BkLevel {
        plan: plan2,
        gadget: p.bk2,
        sigma: p.sigma2,
        domain: Domain::Bk2,
    }
}

impl CircuitKey {
    /// Generates the circuit key (multi-threaded).
    pub fn generate(sk: &SecretKey) -> Result<CircuitKey, Error> {
        CompressedCircuitKey::generate(sk).decompress()
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Size of the key in memory (bytes).
    pub fn size_bytes(&self) -> usize {
        self.bk2.iter().map(|k| k.data.len() * 8).sum::<usize>()
            + self.privks.iter().map(|k| k.len() * 4).sum::<usize>()
    }

    /// Private functional key switching of level-2 TLWEs (dimension N2) to level-1 TRLWEs under one
    /// function; all inputs share one pass over the key.
    pub fn private_key_switch(
        &self,
        inputs: &[Tlwe<u64>],
        f: PrivFunction,
    ) -> Result<Vec<Trlwe<u32>>, Error> {
        let p = &self.params;
        if let Some(bad) = inputs.iter().find(|c| c.dim() != p.n2) {
            return Err(Error::Dimension(format!(
                "level-2 TLWE of dim {}, expected {}",
                bad.dim(),
                p.n2
            )));
        }
        let t = p.privks.levels as usize;
        let n1 = p.n1;
        // digits[k][u·t + j]
        let digits: Vec<Vec<i64>> = inputs
            .iter()
            .map(|c| {
                let mut d = vec![0i64; (p.n2 + 1) * t];
                for (u, &x) in c.words().iter().enumerate() {
                    p.privks.decompose(x, &mut d[u * t..(u + 1) * t]);
                }
                d
            })
            .collect();
        let key = &self.privks[f as usize];
        let mut outs = vec![vec![0u32; 2 * n1]; inputs.len()];
        for e in 0..(p.n2 + 1) * t {
            let entry = &key[e * 2 * n1..(e + 1) * 2 * n1];
            for (out, d) in outs.iter_mut().zip(&digits) {
                if d[e] != 0 {
                    sub_scaled_words(out, entry, d[e] as u32);
                }
            }
        }
        Ok(outs
            .into_iter()
            .map(|mut w| {
                let b = w.split_off(n1);
                Trlwe { a: w, b }
            })
            .collect())
    }

    /// The ℓ level-2 TLWEs of m·Bg^-(i+1) (i < ℓ) from one many-LUT blind rotation of a level-0 bit,
    /// for the circuit-bootstrapping gadget `Params::cb`.
    pub fn level2_gadget_samples(&self, c: &Tlwe<u32>) -> Result<Vec<Tlwe<u64>>, Error> {
        self.level2_gadget_samples_for(c, self.params.cb)
    }

    /// [`Self::level2_gadget_samples`] for output gadget `g` (`Params::cb` or `Params::cb_ram`).
    fn level2_gadget_samples_for(&self, c: &Tlwe<u32>, g: Gadget) -> Result<Vec<Tlwe<u64>>, Error> {
        let p = &self.params;
        if c.dim() != p.n0 {
            return Err(Error::Dimension(format!(
                "level-0 TLWE of dim {}, expected {}",
                c.dim(),
                p.n0
            )));
        }
        let l = g.levels as usize;
        let stride = Params::stride_of(g);
        let half = |i: usize| u64::pow2_neg((i as u32 + 1) * g.base_bits + 1);
        let tv: Vec<u64> = (0..p.n2)
            .map(|j| if j % stride < l { half(j % stride) } else { 0 })
            .collect();
        let acc = blind_rotate(&self.plan2, &self.bk2, p.bk2, c, &tv, stride);
        (0..l)
            .map(|i| {
                let mut s = acc.sample_extract(i)?;
                s.add_const(half(i));
                Ok(s)
            })
            .collect()
    }

    /// Circuit bootstrapping: level-0 bit m → (TRGSW(m), TRGSW(1 − m)) at level 1 in Fourier form, ready
    /// to drive CMUXes.
    pub fn circuit_bootstrap(
        &self,
        c: &Tlwe<u32>,
    ) -> Result<(TrgswFft<u32>, TrgswFft<u32>), Error> {
        let g = self.circuit_bootstrap_one(c)?;
        let inv = g.complement();
        Ok((g, inv))
    }

    /// Circuit bootstrapping without the complement.
    pub fn circuit_bootstrap_one(&self, c: &Tlwe<u32>) -> Result<TrgswFft<u32>, Error> {
        let mut out = self.circuit_bootstrap_batch(&[c])?;
        out.pop()
            .ok_or_else(|| Error::Dimension("empty circuit-bootstrapping batch".into()))
    }

    /// Circuit bootstrapping of several bits at once, each without the complement. The private key
    /// switch streams its (large) key once for the whole batch instead of once per bit, so a batch is
    /// cheaper than the same bits one at a time; the results are the same.
    pub fn circuit_bootstrap_batch(&self, cs: &[&Tlwe<u32>]) -> Result<Vec<TrgswFft<u32>>, Error> {
        self.circuit_bootstrap_batch_for(cs, self.params.cb)
    }

    /// [`Self::circuit_bootstrap_batch`] with the RAM address gadget `Params::cb_ram`: TRGSWs whose
    /// external products add less noise (finer digits) at a higher cost.
    pub fn circuit_bootstrap_batch_ram(
        &self,
        cs: &[&Tlwe<u32>],
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        self.circuit_bootstrap_batch_for(cs, self.params.cb_ram)
    }

    fn circuit_bootstrap_batch_for(
        &self,
        cs: &[&Tlwe<u32>],
        g: Gadget,
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        let l = g.levels as usize;
        let mut lvl2 = Vec::with_capacity(cs.len() * l);
        for c in cs {
            lvl2.extend(self.level2_gadget_samples_for(c, g)?);
        }
        let minus = self.private_key_switch(&lvl2, PrivFunction::MinusKey)?;
        let ident = self.private_key_switch(&lvl2, PrivFunction::Identity)?;
        Ok((0..cs.len())
            .map(|k| {
                let mut rows = minus[k * l..(k + 1) * l].to_vec();
                rows.extend_from_slice(&ident[k * l..(k + 1) * l]);
                TrgswFft::from_rows(&self.plan1, g, &rows)
            })
            .collect())
    }
}
