//! Gate bootstraps in batches: several independent bootstraps (two-input gates, multi-input cells,
//! gate MUXes, refreshes, bootstraps of a sample or of a ring's coefficient with any test value;
//! each to a bit or left as a ring) run their blind rotations step by step together, so each
//! bootstrapping-key TRGSW (64 KB for `default_128`) is read from memory once per batch and applied
//! to every accumulator while it is in cache, and their key switches share one pass over the
//! key-switching key. A gate bootstrap is partly memory-bound (a CMUX step takes 8.0 µs with the key
//! streamed from memory against 6.2–6.4 µs with it in cache on an AMD EPYC Zen 4); a batch pays the
//! stream once. Every result equals the unbatched call's bit for bit (the same kernels and the same
//! floating-point operations per accumulator, in the same order; the rest is integer arithmetic).

use crate::bootstrap::{blind_rotate_many_tvs, key_switch_many, EvalKey};
use crate::cells::CellSpec;
use crate::gates::{Bit, Gate2};
use crate::tlwe::Tlwe;
use crate::trlwe::Trlwe;
use crate::Error;

/// The gates' test-vector value, 1/8.
const MU: u32 = 1 << 29;

/// What one bootstrap of a batch decides.
#[derive(Clone, Copy, Debug)]
pub enum Bootstrap<'a> {
    /// A two-input gate ([`EvalKey::gate2`], [`EvalKey::gate2_trlwe`]).
    Gate2(Gate2, &'a Bit, &'a Bit),
    /// A multi-input cell ([`EvalKey::cell`], [`EvalKey::cell_trlwe`]).
    Cell(&'a CellSpec, &'a [&'a Bit]),
    /// A refresh of one bit ([`EvalKey::bootstrap`], [`EvalKey::bit_to_trlwe`]).
    Refresh(&'a Bit),
    /// The gate MUX `c ? a : b`, two blind rotations ([`EvalKey::mux`] to a bit,
    /// [`EvalKey::mux_without_se`] to a ring).
    Mux(&'a Bit, &'a Bit, &'a Bit),
    /// A level-0 sample bootstrapped with test value `mu` ([`EvalKey::bootstrap_to_trlwe`] to a
    /// ring; to a bit, that ring's coefficient 0 extracted and key-switched).
    Sample(&'a Tlwe<u32>, u32),
    /// Coefficient `i` of a level-1 TRLWE extracted and key-switched to level 0
    /// ([`EvalKey::extract_bit`]), then bootstrapped with test value `mu` as [`Bootstrap::Sample`].
    Coefficient(&'a Trlwe<u32>, usize, u32),
}

/// The result of one bootstrap of a batch.
#[derive(Clone, Debug, PartialEq)]
pub enum Booted {
    /// A fresh level-0 bit (blind rotation, sample extraction, key switch).
    Bit(Bit),
    /// The level-1 TRLWE after the blind rotation (constant coefficient ±mu).
    Ring(Trlwe<u32>),
}

/// Where a job's rotations sit among the batch's: one, or the two halves of a MUX.
enum Rotations {
    One(usize),
    Two(usize, usize),
}

impl EvalKey {
    /// Runs the bootstraps `jobs` (each with `true` to leave its result as a ring, `false` for a
    /// bit) as one batch: result i equals the unbatched call for job i bit for bit — `Gate2` with a
    /// bit is [`EvalKey::gate2`], with a ring [`EvalKey::gate2_trlwe`]; `Cell` is [`EvalKey::cell`] or
    /// [`EvalKey::cell_trlwe`]; `Refresh` is [`EvalKey::bootstrap`] or [`EvalKey::bit_to_trlwe`];
    /// `Mux(c, a, b)` is [`EvalKey::mux`] or [`EvalKey::mux_without_se`]; `Sample(x, mu)` is
    /// [`EvalKey::bootstrap_to_trlwe`] (and its extraction and key switch for a bit);
    /// `Coefficient(r, i, mu)` is that of [`EvalKey::extract_bit`]`(r, i)` — at one read of the keys
    /// for the whole batch. Any input of a wrong dimension fails the batch.
    pub fn bootstrap_batch(&self, jobs: &[(Bootstrap<'_>, bool)]) -> Result<Vec<Booted>, Error> {
        // The coefficients' key switches first, together (one pass over the key-switching key).
        let coefs = jobs
            .iter()
            .filter_map(|(job, _)| match *job {
                Bootstrap::Coefficient(r, i, _) => Some(self.check1(r).and(r.sample_extract(i))),
                _ => None,
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut switched =
            key_switch_many(&self.params, &self.ks, &coefs.iter().collect::<Vec<_>>()).into_iter();
        // Every rotation's sample and test value; each job's rotations.
        let mut lins: Vec<(Tlwe<u32>, u32)> = Vec::with_capacity(jobs.len() + 1);
        let mut at = Vec::with_capacity(jobs.len());
        for (job, _) in jobs {
            let k = lins.len();
            match *job {
                Bootstrap::Gate2(g, a, b) => lins.push((self.gate2_input(g, a, b)?, MU)),
                Bootstrap::Cell(spec, ins) => lins.push((self.cell_input(spec, ins)?, MU)),
                Bootstrap::Refresh(a) => {
                    self.check0(a)?;
                    lins.push((a.clone(), MU));
                }
                Bootstrap::Mux(c, a, b) => {
                    let (x, y) = self.mux_inputs(c, a, b)?;
                    lins.push((x, MU));
                    lins.push((y, MU));
                    at.push(Rotations::Two(k, k + 1));
                    continue;
                }
                Bootstrap::Sample(x, mu) => {
                    self.check0(x)?;
                    lins.push((x.clone(), mu));
                }
                Bootstrap::Coefficient(_, _, mu) => {
                    let x = switched
                        .next()
                        .ok_or_else(|| Error::Dimension("batch key switch lost a sample".into()))?;
                    lins.push((x, mu));
                }
            }
            at.push(Rotations::One(k));
        }
        // One test vector per distinct value (most batches have one).
        let mut tv_values: Vec<u32> = Vec::new();
        for &(_, mu) in &lins {
            if !tv_values.contains(&mu) {
                tv_values.push(mu);
            }
        }
        let tv_store: Vec<Vec<u32>> = tv_values
            .iter()
            .map(|&mu| vec![mu; self.params.n1])
            .collect();
        let tvs: Vec<&[u32]> = lins
            .iter()
            .map(|(_, mu)| {
                let j = tv_values.iter().position(|v| v == mu).unwrap_or(0);
                &tv_store[j][..]
            })
            .collect();
        let samples: Vec<&Tlwe<u32>> = lins.iter().map(|(x, _)| x).collect();
        let mut accs: Vec<Option<Trlwe<u32>>> =
            blind_rotate_many_tvs(&self.plan1, &self.bk, self.params.bk1, &samples, &tvs, 1)
                .into_iter()
                .map(Some)
                .collect();
        let mut take = |k: usize| {
            accs.get_mut(k)
                .and_then(Option::take)
                .ok_or_else(|| Error::Dimension("batch rotation lost a sample".into()))
        };
        // Each job's ring, or the level-1 sample its bit is key-switched from.
        let mut outs: Vec<Result<Trlwe<u32>, Tlwe<u32>>> = Vec::with_capacity(jobs.len());
        for ((_, ring), rot) in jobs.iter().zip(&at) {
            outs.push(match (rot, ring) {
                (Rotations::One(k), true) => Ok(take(*k)?),
                (Rotations::One(k), false) => Err(take(*k)?.sample_extract(0)?),
                (Rotations::Two(x, y), true) => {
                    let mut x = take(*x)?;
                    x.add_assign(&take(*y)?)?;
                    x.add_const(0, MU)?;
                    Ok(x)
                }
                (Rotations::Two(x, y), false) => {
                    let mut u = take(*x)?.sample_extract(0)?;
                    u.add_assign(&take(*y)?.sample_extract(0)?)?;
                    u.add_const(MU);
                    Err(u)
                }
            });
        }
        let level1: Vec<&Tlwe<u32>> = outs.iter().filter_map(|o| o.as_ref().err()).collect();
        let mut bits = key_switch_many(&self.params, &self.ks, &level1).into_iter();
        outs.into_iter()
            .map(|o| match o {
                Ok(r) => Ok(Booted::Ring(r)),
                Err(_) => bits
                    .next()
                    .map(Booted::Bit)
                    .ok_or_else(|| Error::Dimension("batch key switch lost a sample".into())),
            })
            .collect()
    }
}
