//! Opt-in multi-threading: work is split across RNS limbs (NTTs, pointwise products) or across
//! coefficient ranges (base conversions) on a private rayon pool. Every split computes exactly what
//! the sequential loop computes, so results are bit-identical for any thread count.

use crate::error::Result;
use rayon::prelude::*;
use std::sync::Arc;

/// Executes limb- or coefficient-parallel loops, sequentially when built with one thread.
#[derive(Clone, Debug, Default)]
pub struct Exec {
    pool: Option<Arc<rayon::ThreadPool>>,
    threads: usize,
}

impl Exec {
    /// Single-threaded executor.
    pub fn sequential() -> Self {
        Self {
            pool: None,
            threads: 1,
        }
    }

    /// Executor with `threads` worker threads (1 means sequential).
    pub fn with_threads(threads: usize) -> Result<Self> {
        if threads <= 1 {
            return Ok(Self::sequential());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        Ok(Self {
            pool: Some(Arc::new(pool)),
            threads,
        })
    }

    /// Runs f(limb index, limb) on every n-sized limb of `data`.
    pub fn per_limb<F>(&self, data: &mut [u64], n: usize, f: F)
    where
        F: Fn(usize, &mut [u64]) + Sync + Send,
    {
        match &self.pool {
            None => data.chunks_mut(n).enumerate().for_each(|(i, l)| f(i, l)),
            Some(p) => p.install(|| {
                data.par_chunks_mut(n)
                    .enumerate()
                    .for_each(|(i, l)| f(i, l))
            }),
        }
    }

    /// Runs f(index, item) on every item.
    pub fn per_item<T: Send, F>(&self, items: &mut [T], f: F)
    where
        F: Fn(usize, &mut T) + Sync + Send,
    {
        match &self.pool {
            None => items.iter_mut().enumerate().for_each(|(i, x)| f(i, x)),
            Some(p) => p.install(|| items.par_iter_mut().enumerate().for_each(|(i, x)| f(i, x))),
        }
    }

    /// Fills the limb-major `out` (`limbs` limbs of n) by f(start, end, block, stride), where f writes
    /// coefficient c of limb j to block[j·stride + c − start]; the first error of any range is
    /// returned.
    pub fn try_per_coeff_range<F>(
        &self,
        n: usize,
        limbs: usize,
        out: &mut [u64],
        f: F,
    ) -> Result<()>
    where
        F: Fn(usize, usize, &mut [u64], usize) -> Result<()> + Sync + Send,
    {
        match &self.pool {
            None => f(0, n, out, n),
            Some(p) => {
                let chunks = self.threads.min(n).max(1);
                let len = n.div_ceil(chunks);
                let blocks: Vec<Result<(usize, Vec<u64>)>> = p.install(|| {
                    (0..chunks)
                        .into_par_iter()
                        .filter_map(|b| {
                            let start = b * len;
                            let end = (start + len).min(n);
                            if start >= end {
                                return None;
                            }
                            let mut blk = vec![0u64; limbs * (end - start)];
                            Some(f(start, end, &mut blk, end - start).map(|()| (start, blk)))
                        })
                        .collect()
                });
                for b in blocks {
                    let (start, blk) = b?;
                    let w = blk.len() / limbs.max(1);
                    for j in 0..limbs {
                        out[j * n + start..j * n + start + w]
                            .copy_from_slice(&blk[j * w..(j + 1) * w]);
                    }
                }
                Ok(())
            }
        }
    }
}
