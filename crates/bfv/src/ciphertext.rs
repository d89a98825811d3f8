//! BFV ciphertexts: polynomials (c0, c1[, c2]) over Q in coefficient form, optionally remembering
//! the seed their c1 expands from (fresh secret-key ciphertexts, serialized at half size).

use crate::params::BfvParameters;
use std::sync::Arc;

/// A ciphertext of size 2 (fresh or relinearized) or 3 (after a product).
#[derive(Clone, Debug)]
pub struct Ciphertext {
    pub(crate) params: Arc<BfvParameters>,
    pub(crate) polys: Vec<Vec<u64>>,
    /// Seed of c1 for fresh symmetric ciphertexts (dropped by any operation).
    pub(crate) seed: Option<[u8; 32]>,
}

impl Ciphertext {
    /// Number of polynomials (2 or 3).
    pub fn size(&self) -> usize {
        self.polys.len()
    }
    /// Whether c1 can be regenerated from a seed (compact serialization).
    pub fn is_seeded(&self) -> bool {
        self.seed.is_some()
    }
    /// The parameters.
    pub fn parameters(&self) -> &Arc<BfvParameters> {
        &self.params
    }
}

impl PartialEq for Ciphertext {
    fn eq(&self, other: &Self) -> bool {
        self.params.id() == other.params.id() && self.polys == other.polys
    }
}
