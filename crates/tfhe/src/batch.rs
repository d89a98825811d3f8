//! Gate bootstraps in batches: several independent bootstraps (two-input gates, multi-input cells,
//! refreshes; each to a bit or left as a ring) run their blind rotations step by step together, so
//! each bootstrapping-key TRGSW (64 KB for `default_128`) is read from memory once per batch and
//! applied to every accumulator while it is in cache, and their key switches share one pass over the
//! key-switching key. A gate bootstrap is partly memory-bound (a CMUX step takes 8.0 µs with the key
//! streamed from memory against 6.2–6.4 µs with it in cache on an AMD EPYC Zen 4); a batch pays the
//! stream once. Every result equals the unbatched call's bit for bit (the same kernels and the same
//! floating-point operations per accumulator, in the same order).

use crate::bootstrap::{blind_rotate_many, key_switch_many, EvalKey};
use crate::cells::CellSpec;
use crate::gates::{Bit, Gate2};
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
}

/// The result of one bootstrap of a batch.
#[derive(Clone, Debug, PartialEq)]
pub enum Booted {
    /// A fresh level-0 bit (blind rotation, sample extraction, key switch).
    Bit(Bit),
    /// The level-1 TRLWE after the blind rotation (constant coefficient ±1/8).
    Ring(Trlwe<u32>),
}

impl EvalKey {
    /// Runs the bootstraps `jobs` (each with `true` to leave its result as a ring, `false` for a
    /// bit) as one batch: result i equals the unbatched call for job i bit for bit — `Gate2` with a
    /// bit is [`EvalKey::gate2`], with a ring [`EvalKey::gate2_trlwe`]; `Cell` is [`EvalKey::cell`] or
    /// [`EvalKey::cell_trlwe`]; `Refresh` is [`EvalKey::bootstrap`] or [`EvalKey::bit_to_trlwe`] — at
    /// one read of the keys for the whole batch. Any input of a wrong dimension fails the batch.
    pub fn bootstrap_batch(&self, jobs: &[(Bootstrap<'_>, bool)]) -> Result<Vec<Booted>, Error> {
        let lins = jobs
            .iter()
            .map(|(job, _)| match *job {
                Bootstrap::Gate2(g, a, b) => self.gate2_input(g, a, b),
                Bootstrap::Cell(spec, ins) => self.cell_input(spec, ins),
                Bootstrap::Refresh(a) => self.check0(a).map(|()| a.clone()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tv = vec![MU; self.params.n1];
        let refs: Vec<_> = lins.iter().collect();
        let accs = blind_rotate_many(&self.plan1, &self.bk, self.params.bk1, &refs, &tv, 1);
        let extracted = jobs
            .iter()
            .zip(&accs)
            .filter(|((_, ring), _)| !ring)
            .map(|(_, acc)| acc.sample_extract(0))
            .collect::<Result<Vec<_>, _>>()?;
        let mut bits = key_switch_many(
            &self.params,
            &self.ks,
            &extracted.iter().collect::<Vec<_>>(),
        )
        .into_iter();
        jobs.iter()
            .zip(accs)
            .map(|((_, ring), acc)| match ring {
                true => Ok(Booted::Ring(acc)),
                false => bits
                    .next()
                    .map(Booted::Bit)
                    .ok_or_else(|| Error::Dimension("batch key switch lost a sample".into())),
            })
            .collect()
    }
}
