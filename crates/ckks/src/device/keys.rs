//! Key material as the device holds it: the ternary secret packed 2 bits per coefficient (N/4 bytes,
//! SEAL-Embedded's "n/16 words"), and the public key's data-level limbs in 32-bit words (SEAL-Embedded
//! drops the special-prime limb, since the device never key-switches).

use alloc::vec::Vec;
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{CkksError, Result};
use crate::params::CkksParams;

/// The secret s ∈ {−1, 0, 1}^N, packed (00 = 0, 01 = 1, 10 = −1). Zeroized on drop, redacted in Debug.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct DeviceSecretKey {
    n: usize,
    packed: Vec<u8>,
}

impl fmt::Debug for DeviceSecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceSecretKey {{ n: {}, <redacted> }}", self.n)
    }
}

impl DeviceSecretKey {
    /// Packs ternary coefficients; anything outside {−1, 0, 1} is refused.
    pub fn from_ternary(s: &[i8]) -> Result<Self> {
        let n = s.len();
        if n == 0 || !n.is_multiple_of(4) {
            return Err(CkksError::InvalidParams(
                "secret length must be a positive multiple of 4",
            ));
        }
        let mut packed = alloc::vec![0u8; n / 4];
        for (i, &c) in s.iter().enumerate() {
            let bits = match c {
                0 => 0u8,
                1 => 1,
                -1 => 2,
                _ => return Err(CkksError::Format("secret coefficient outside {-1, 0, 1}")),
            };
            packed[i / 4] |= bits << (2 * (i % 4));
        }
        Ok(Self { n, packed })
    }
    /// Degree.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Coefficient i.
    #[inline(always)]
    pub fn get(&self, i: usize) -> i8 {
        match (self.packed[i / 4] >> (2 * (i % 4))) & 3 {
            1 => 1,
            2 => -1,
            _ => 0,
        }
    }
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.packed.len()
    }
}

/// The public key (pk0, pk1) in NTT form for the data primes, limb after limb, 32-bit words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePublicKey {
    n: usize,
    primes: Vec<u64>,
    /// pk0 limbs then pk1 limbs: index (poly · L + prime) · N + i.
    data: Vec<u32>,
}

impl DevicePublicKey {
    /// From the two polynomials' data-level limbs (`pk[poly][prime][i]`, values reduced mod q).
    pub fn from_limbs(params: &CkksParams, pk0: &[Vec<u64>], pk1: &[Vec<u64>]) -> Result<Self> {
        let n = params.n();
        let primes = params.data_primes();
        if pk0.len() < primes.len() || pk1.len() < primes.len() {
            return Err(CkksError::Mismatch(
                "public key has fewer limbs than data primes",
            ));
        }
        let mut data = Vec::with_capacity(2 * primes.len() * n);
        for poly in [pk0, pk1] {
            for (limb, &q) in poly.iter().zip(primes) {
                if limb.len() != n || limb.iter().any(|&x| x >= q) {
                    return Err(CkksError::Format(
                        "public key limb has wrong length or unreduced values",
                    ));
                }
                data.extend(limb.iter().map(|&x| x as u32));
            }
        }
        Ok(Self {
            n,
            primes: primes.to_vec(),
            data,
        })
    }
    /// Limb of poly (0 or 1) at data prime `prime`.
    pub fn limb(&self, poly: usize, prime: usize) -> &[u32] {
        let l = self.primes.len();
        let start = (poly * l + prime) * self.n;
        &self.data[start..start + self.n]
    }
    /// The data primes this key was made for.
    pub fn primes(&self) -> &[u64] {
        &self.primes
    }
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.data.len() * 4
    }
}
