//! Key material as the device holds it: the ternary secret packed 2 bits per coefficient (N/4 bytes,
//! SEAL-Embedded's "n/16 words"), and the public key's data-level limbs in 32-bit words (SEAL-Embedded
//! drops the special-prime limb, since the device never key-switches).

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::fmt;
#[cfg(feature = "alloc")]
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::config::{SecretKeyStore, StoreError};
use crate::error::{CkksError, Result};
use crate::params::CkksParams;

/// Coefficient `i` of a packed ternary key (code 3 never occurs in a checked key; read as 0).
#[inline(always)]
pub(crate) fn packed_coeff(packed: &[u8], i: usize) -> i8 {
    match (packed[i / 4] >> (2 * (i % 4))) & 3 {
        1 => 1,
        2 => -1,
        _ => 0,
    }
}

/// Whether every 2-bit code of a packed key is 0, 1 or 2.
pub(crate) fn packed_is_valid(packed: &[u8]) -> bool {
    packed
        .iter()
        .all(|&b| (0..4).all(|k| (b >> (2 * k)) & 3 != 3))
}

/// A packed secret key borrowed from the caller (RAM or flash): the allocation-free counterpart of
/// [`DeviceSecretKey`], same layout. Redacted in Debug.
#[derive(Clone, Copy)]
pub struct PackedSecretKey<'a> {
    n: usize,
    packed: &'a [u8],
}

impl fmt::Debug for PackedSecretKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PackedSecretKey {{ n: {}, <redacted> }}", self.n)
    }
}

impl<'a> PackedSecretKey<'a> {
    /// Wraps N/4 packed bytes (00 = 0, 01 = 1, 10 = −1); code 11 or a wrong length is refused.
    pub fn new(n: usize, packed: &'a [u8]) -> Result<Self> {
        if n == 0 || !n.is_multiple_of(4) || packed.len() != n / 4 {
            return Err(CkksError::LengthMismatch {
                expected: n / 4,
                got: packed.len(),
            });
        }
        if !packed_is_valid(packed) {
            return Err(CkksError::Format("secret coefficient outside {-1, 0, 1}"));
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
        packed_coeff(self.packed, i)
    }
}

fn read_slice(src: &[u8], offset: usize, out: &mut [u8]) -> core::result::Result<(), StoreError> {
    let end = offset.checked_add(out.len()).ok_or(StoreError)?;
    out.copy_from_slice(src.get(offset..end).ok_or(StoreError)?);
    Ok(())
}

impl SecretKeyStore for PackedSecretKey<'_> {
    fn degree(&self) -> usize {
        self.n
    }
    fn read(&self, offset: usize, out: &mut [u8]) -> core::result::Result<(), StoreError> {
        read_slice(self.packed, offset, out)
    }
}

#[cfg(feature = "alloc")]
impl SecretKeyStore for DeviceSecretKey {
    fn degree(&self) -> usize {
        self.n
    }
    fn read(&self, offset: usize, out: &mut [u8]) -> core::result::Result<(), StoreError> {
        read_slice(&self.packed, offset, out)
    }
}

/// A public key borrowed from the caller (RAM or flash): the allocation-free counterpart of
/// [`DevicePublicKey`], same layout (pk0 limbs then pk1 limbs, N words each, NTT form).
#[derive(Clone, Copy, Debug)]
pub struct PublicKeyView<'a> {
    n: usize,
    primes: &'a [u64],
    data: &'a [u32],
}

impl<'a> PublicKeyView<'a> {
    /// Wraps 2·L·N words for `params` (each limb's words must be below its prime).
    pub fn new(params: &'a CkksParams, data: &'a [u32]) -> Result<Self> {
        let (n, primes) = (params.n(), params.data_primes());
        if data.len() != 2 * primes.len() * n {
            return Err(CkksError::LengthMismatch {
                expected: 2 * primes.len() * n,
                got: data.len(),
            });
        }
        let l = primes.len();
        for (k, limb) in data.chunks_exact(n).enumerate() {
            let q = primes[k % l];
            if limb.iter().any(|&x| x as u64 >= q) {
                return Err(CkksError::Format("public key limb has unreduced values"));
            }
        }
        Ok(Self { n, primes, data })
    }
    /// Limb of poly (0 or 1) at data prime `prime`.
    pub fn limb(&self, poly: usize, prime: usize) -> &'a [u32] {
        let l = self.primes.len();
        let start = (poly * l + prime) * self.n;
        &self.data[start..start + self.n]
    }
    /// The data primes this key was made for.
    pub fn primes(&self) -> &'a [u64] {
        self.primes
    }
}

/// The secret s ∈ {−1, 0, 1}^N, packed (00 = 0, 01 = 1, 10 = −1). Zeroized on drop, redacted in Debug.
#[cfg(feature = "alloc")]
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct DeviceSecretKey {
    n: usize,
    packed: Vec<u8>,
}

#[cfg(feature = "alloc")]
impl fmt::Debug for DeviceSecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceSecretKey {{ n: {}, <redacted> }}", self.n)
    }
}

#[cfg(feature = "alloc")]
impl DeviceSecretKey {
    /// The borrowed view the encryptors read.
    pub fn packed(&self) -> PackedSecretKey<'_> {
        PackedSecretKey {
            n: self.n,
            packed: &self.packed,
        }
    }
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
        packed_coeff(&self.packed, i)
    }
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.packed.len()
    }
}

/// The public key (pk0, pk1) in NTT form for the data primes, limb after limb, 32-bit words.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePublicKey {
    n: usize,
    primes: Vec<u64>,
    /// pk0 limbs then pk1 limbs: index (poly · L + prime) · N + i.
    data: Vec<u32>,
}

#[cfg(feature = "alloc")]
impl DevicePublicKey {
    /// The borrowed view the encryptors read.
    pub fn view(&self) -> PublicKeyView<'_> {
        PublicKeyView {
            n: self.n,
            primes: &self.primes,
            data: &self.data,
        }
    }
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
