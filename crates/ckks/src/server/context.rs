//! The server's view of a parameter set: vsp-math NTT tables and Barrett moduli for every key-level
//! prime (data primes, then the special prime), and an encoder with loaded tables.

use vsp_math::{Modulus, NttTable};

use crate::encoding::{Encoder, FftRoots, IndexMap};
use crate::error::Result;
use crate::params::CkksParams;

/// Precomputed server state of one parameter set. Immutable, so shareable across threads.
#[derive(Clone, Debug)]
pub struct ServerContext {
    params: CkksParams,
    ntt: Vec<NttTable>,
    moduli: Vec<Modulus>,
    encoder: Encoder,
}

impl ServerContext {
    /// Builds the tables.
    pub fn new(params: CkksParams) -> Result<Self> {
        let n = params.n();
        let moduli = params
            .key_primes()
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<core::result::Result<Vec<_>, _>>()?;
        let ntt = moduli
            .iter()
            .map(|m| NttTable::new(n, *m))
            .collect::<core::result::Result<Vec<_>, _>>()?;
        let encoder = Encoder::new(n, FftRoots::Loaded, IndexMap::Persistent)?;
        Ok(Self {
            params,
            ntt,
            moduli,
            encoder,
        })
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
    /// Prime i of the key level.
    pub fn q(&self, i: usize) -> u64 {
        self.moduli[i].value()
    }
    /// Barrett modulus of key-level prime i.
    pub fn modulus(&self, i: usize) -> &Modulus {
        &self.moduli[i]
    }
    /// Forward NTT of an N-coefficient limb modulo key-level prime i.
    pub fn forward(&self, i: usize, a: &mut [u64]) -> Result<()> {
        Ok(self.ntt[i].forward(a)?)
    }
    /// Inverse NTT of an N-coefficient limb modulo key-level prime i.
    pub fn inverse(&self, i: usize, a: &mut [u64]) -> Result<()> {
        Ok(self.ntt[i].inverse(a)?)
    }
    /// The encoder.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }
}
