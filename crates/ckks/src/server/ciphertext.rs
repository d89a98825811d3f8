//! Server-side ciphertexts: `size` polynomials over the first `level` data primes, NTT form (as SEAL
//! keeps CKKS ciphertexts), layout `[poly][limb][coefficient]` exactly as SEAL's `Ciphertext::data`.

use crate::error::{CkksError, Result};

/// A CKKS ciphertext in NTT form.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) n: usize,
    pub(crate) level: usize,
    pub(crate) size: usize,
    pub(crate) scale: f64,
    pub(crate) data: Vec<u64>,
}

impl Ciphertext {
    /// A zero ciphertext.
    pub fn zero(n: usize, level: usize, size: usize, scale: f64) -> Self {
        Self {
            n,
            level,
            size,
            scale,
            data: vec![0; n * level * size],
        }
    }
    /// Builds from raw SEAL-layout data (validated length).
    pub fn from_raw(
        n: usize,
        level: usize,
        size: usize,
        scale: f64,
        data: Vec<u64>,
    ) -> Result<Self> {
        if data.len() != n * level * size {
            return Err(CkksError::LengthMismatch {
                expected: n * level * size,
                got: data.len(),
            });
        }
        Ok(Self {
            n,
            level,
            size,
            scale,
            data,
        })
    }
    /// Degree.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of primes (data primes q_0 … q_{level−1}).
    pub fn level(&self) -> usize {
        self.level
    }
    /// Number of polynomials (2 fresh, 3 after a multiplication).
    pub fn size(&self) -> usize {
        self.size
    }
    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Overrides the scale (e.g. to align scales before an addition).
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = scale;
    }
    /// Raw coefficients.
    pub fn data(&self) -> &[u64] {
        &self.data
    }
    /// Limb `limb` of polynomial `poly`.
    pub fn limb(&self, poly: usize, limb: usize) -> &[u64] {
        let s = (poly * self.level + limb) * self.n;
        &self.data[s..s + self.n]
    }
    /// Mutable limb.
    pub fn limb_mut(&mut self, poly: usize, limb: usize) -> &mut [u64] {
        let s = (poly * self.level + limb) * self.n;
        &mut self.data[s..s + self.n]
    }
}
