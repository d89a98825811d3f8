//! Plaintexts and their encodings: coefficient encoding (one value mod t per coefficient) and SIMD
//! batching (t prime, t ≡ 1 mod 2N: N slots arranged as a 2 × N/2 matrix, slot (r, j) evaluating
//! the plaintext polynomial at ζ^{±3^j}, SEAL's layout), under which Galois automorphisms rotate rows
//! and swap the two rows.

use crate::arith::{Modulus, NttTable};
use crate::error::{Error, Result};
use crate::params::BfvParameters;
use std::collections::HashMap;
use std::sync::Arc;

/// A plaintext: N coefficients modulo t.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plaintext {
    pub(crate) params_id: [u8; 32],
    pub(crate) coeffs: Vec<u64>,
}

impl Plaintext {
    /// The coefficients (each < t).
    pub fn coefficients(&self) -> &[u64] {
        &self.coeffs
    }
}

/// NTT modulo t and the slot ↔ NTT-index map.
#[derive(Clone, Debug)]
pub struct BatchTables {
    ntt: NttTable,
    slot_to_index: Vec<usize>,
}

impl BatchTables {
    /// Tables for degree n and plaintext modulus t; fails unless t is a prime ≡ 1 mod 2n.
    pub fn new(n: usize, t: u64) -> Result<Self> {
        if !crate::arith::is_prime(t) {
            return Err(Error::InvalidParameters(format!(
                "t = {t} is not prime: no batching"
            )));
        }
        let m = Modulus::new(t)?;
        let ntt = NttTable::new(m, n)?;
        // Find which power of a primitive 2n-th root each NTT output evaluates at, independently of
        // the transform's output order: transform the monomial x and take discrete logs.
        let mut x = vec![0u64; n];
        x[1] = 1;
        ntt.forward(&mut x);
        let zeta = x[0];
        let two_n = 2 * n;
        let mut log = HashMap::with_capacity(two_n);
        let mut p = 1u64;
        for e in 0..two_n {
            log.insert(p, e);
            p = m.mul(p, zeta);
        }
        let mut exp_to_index = vec![usize::MAX; two_n];
        for (k, v) in x.iter().enumerate() {
            let e = *log
                .get(v)
                .ok_or(Error::Precondition("batching root not found"))?;
            exp_to_index[e] = k;
        }
        let half = n / 2;
        let mut slot_to_index = vec![0usize; n];
        let mut g = 1usize;
        for j in 0..half {
            slot_to_index[j] = exp_to_index[g];
            slot_to_index[half + j] = exp_to_index[two_n - g];
            g = g * 3 % two_n;
        }
        if slot_to_index.contains(&usize::MAX) {
            return Err(Error::Precondition("batching index map incomplete"));
        }
        Ok(Self { ntt, slot_to_index })
    }
}

/// Encodes and decodes plaintexts of one parameter set.
#[derive(Clone, Debug)]
pub struct Encoder {
    params: Arc<BfvParameters>,
}

impl Encoder {
    /// An encoder for `params`.
    pub fn new(params: &Arc<BfvParameters>) -> Self {
        Self {
            params: params.clone(),
        }
    }

    /// Number of slots (N) in batching mode.
    pub fn slot_count(&self) -> usize {
        self.params.degree()
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len > self.params.degree() {
            return Err(Error::InvalidInput(format!(
                "{len} values for {} coefficients",
                self.params.degree()
            )));
        }
        Ok(())
    }

    /// Coefficient encoding of values < t (missing coefficients are 0).
    pub fn encode_coefficients(&self, values: &[u64]) -> Result<Plaintext> {
        self.check_len(values.len())?;
        let t = self.params.plaintext_modulus();
        if let Some(v) = values.iter().find(|&&v| v >= t) {
            return Err(Error::InvalidInput(format!("value {v} ≥ t = {t}")));
        }
        let mut coeffs = values.to_vec();
        coeffs.resize(self.params.degree(), 0);
        Ok(Plaintext {
            params_id: self.params.id(),
            coeffs,
        })
    }

    /// Coefficient encoding of signed values (reduced modulo t).
    pub fn encode_coefficients_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = &self.params.t;
        let v: Vec<u64> = values.iter().map(|&x| t.reduce_i64(x)).collect();
        self.encode_coefficients(&v)
    }

    /// Batch encoding of up to N slot values < t.
    pub fn encode_batch(&self, values: &[u64]) -> Result<Plaintext> {
        let tables = self.tables()?;
        self.check_len(values.len())?;
        let t = self.params.plaintext_modulus();
        let mut a = vec![0u64; self.params.degree()];
        for (slot, &v) in values.iter().enumerate() {
            if v >= t {
                return Err(Error::InvalidInput(format!("value {v} ≥ t = {t}")));
            }
            a[tables.slot_to_index[slot]] = v;
        }
        tables.ntt.inverse(&mut a);
        Ok(Plaintext {
            params_id: self.params.id(),
            coeffs: a,
        })
    }

    /// Batch encoding of signed slot values (reduced modulo t).
    pub fn encode_batch_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = &self.params.t;
        let v: Vec<u64> = values.iter().map(|&x| t.reduce_i64(x)).collect();
        self.encode_batch(&v)
    }

    fn tables(&self) -> Result<&BatchTables> {
        self.params.batch.as_ref().ok_or_else(|| {
            Error::InvalidParameters(format!(
                "batching needs a prime t ≡ 1 mod 2N; t = {}",
                self.params.plaintext_modulus()
            ))
        })
    }

    fn check(&self, pt: &Plaintext) -> Result<()> {
        if pt.params_id != self.params.id() {
            return Err(Error::ParameterMismatch("plaintext from other parameters"));
        }
        Ok(())
    }

    /// The coefficients of a plaintext.
    pub fn decode_coefficients(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        self.check(pt)?;
        Ok(pt.coeffs.clone())
    }

    /// The N slot values of a batch-encoded plaintext.
    pub fn decode_batch(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        self.check(pt)?;
        let tables = self.tables()?;
        let mut a = pt.coeffs.clone();
        tables.ntt.forward(&mut a);
        Ok(tables.slot_to_index.iter().map(|&i| a[i]).collect())
    }

    /// Slot values centered into (−t/2, t/2].
    pub fn decode_batch_signed(&self, pt: &Plaintext) -> Result<Vec<i64>> {
        Ok(self.centered(self.decode_batch(pt)?))
    }

    /// Coefficients centered into (−t/2, t/2].
    pub fn decode_coefficients_signed(&self, pt: &Plaintext) -> Result<Vec<i64>> {
        Ok(self.centered(self.decode_coefficients(pt)?))
    }

    /// Values mod t centered into (−t/2, t/2].
    fn centered(&self, values: Vec<u64>) -> Vec<i64> {
        let t = self.params.plaintext_modulus();
        values.into_iter().map(|v| center(v, t)).collect()
    }
}

/// v ∈ [0, t) centered into (−t/2, t/2].
pub(crate) fn center(v: u64, t: u64) -> i64 {
    if v > t / 2 {
        -((t - v) as i64)
    } else {
        v as i64
    }
}
