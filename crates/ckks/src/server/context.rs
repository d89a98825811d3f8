//! The server's view of a parameter set: NTT tables for every key-level prime (data primes, then the
//! special prime), and an encoder with loaded tables.

use super::ring::Ntt64;
use crate::encoding::{Encoder, FftRoots, IndexMap};
use crate::error::Result;
use crate::params::CkksParams;

/// Precomputed server state of one parameter set. Cheap to share by reference; immutable.
#[derive(Clone, Debug)]
pub struct ServerContext {
    params: CkksParams,
    ntt: Vec<Ntt64>,
    encoder: Encoder,
}

impl ServerContext {
    /// Builds the tables.
    pub fn new(params: CkksParams) -> Result<Self> {
        let n = params.n();
        let ntt = params.key_primes().iter().map(|&q| Ntt64::new(q, n)).collect::<Result<_>>()?;
        let encoder = Encoder::new(n, FftRoots::Loaded, IndexMap::Persistent)?;
        Ok(Self { params, ntt, encoder })
    }
    /// The parameters.
    pub fn params(&self) -> &CkksParams {
        &self.params
    }
    /// Degree N.
    pub fn n(&self) -> usize {
        self.params.n()
    }
    /// Number of data primes L (level of a fresh ciphertext).
    pub fn max_level(&self) -> usize {
        self.params.data_primes().len()
    }
    /// Number of key-level primes (L, or L + 1 with a special prime).
    pub fn key_level(&self) -> usize {
        self.ntt.len()
    }
    /// NTT tables of key-level prime i.
    pub fn ntt(&self, i: usize) -> &Ntt64 {
        &self.ntt[i]
    }
    /// Prime i of the key level.
    pub fn q(&self, i: usize) -> u64 {
        self.ntt[i].q
    }
    /// The encoder.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }
}
