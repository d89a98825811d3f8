//! CKKS parameter sets, following SEAL-Embedded (TCHES 2021(3), `parameters.c`): degree N from 1024 to
//! 16384, 27- or 30-bit data primes (< 2^30 so that lazy Harvey butterflies fit a 32-bit word on the
//! device), an optional key-switching ("special") prime that only the server and SEAL's key level use,
//! and the encoding scale.
//!
//! Security: the total modulus (data primes + special prime) is checked against the
//! HomomorphicEncryption.org 128-bit classical table for ternary secrets and σ = 3.2 (SEAL
//! `hestdparms.h`): log Q ≤ 27, 54, 109, 218, 438 bits for N = 1024 … 16384. Sets above the cap are
//! only built through [`CkksParams::new_insecure`].

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::arith::is_prime_u64;
use crate::error::{CkksError, Result};

/// The 27-bit primes of SEAL-Embedded, each ≡ 1 mod 8192.
pub const PRIMES_27: [u64; 3] = [134012929, 134111233, 134176769];
/// The 30-bit primes of SEAL-Embedded, each ≡ 1 mod 2^16 (one set serves every N ≤ 16384).
pub const PRIMES_30: [u64; 13] = [
    1053818881, 1054015489, 1054212097, 1055260673, 1056178177, 1056440321, 1058209793, 1060175873,
    1060700161, 1060765697, 1061093377, 1062469633, 1062535169,
];

/// Largest data prime the device accepts: 4q must fit in 32 bits for lazy butterflies.
pub const DEVICE_PRIME_LIMIT: u64 = 1 << 30;
/// Largest special prime (the server works in 64-bit words with 4q < 2^64).
pub const SPECIAL_PRIME_LIMIT: u64 = 1 << 61;

/// 128-bit classical caps on log2 Q (HE standard, SEAL `hestdparms.h`), indexed by log2 N − 10.
const MAX_LOGQ_128: [u32; 5] = [27, 54, 109, 218, 438];

/// Most data primes a parameter set may have (held inline: parameters need no allocator).
pub const MAX_DATA_PRIMES: usize = 64;

/// Data primes stored inline, with their count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Primes {
    len: usize,
    q: [u64; MAX_DATA_PRIMES],
}

impl Primes {
    fn of(primes: &[u64]) -> Self {
        let mut q = [0; MAX_DATA_PRIMES];
        q[..primes.len()].copy_from_slice(primes);
        Self {
            len: primes.len(),
            q,
        }
    }
    fn as_slice(&self) -> &[u64] {
        &self.q[..self.len]
    }
}

/// A validated CKKS parameter set.
#[derive(Clone, Debug, PartialEq)]
pub struct CkksParams {
    n: usize,
    log_n: u32,
    data_primes: Primes,
    special_prime: Option<u64>,
    scale: f64,
    insecure: bool,
}

impl Default for CkksParams {
    /// SEAL-Embedded's `se_setup_default`: N = 4096, three 30-bit primes, scale 2^25 (and the 19-bit
    /// special prime 417793 that SEAL's `CoeffModulus::Create(4096, {19})` yields; 109 bits in all).
    fn default() -> Self {
        Self {
            n: 4096,
            log_n: 12,
            data_primes: Primes::of(&PRIMES_30[..3]),
            special_prime: Some(417793),
            scale: (1u64 << 25) as f64,
            insecure: false,
        }
    }
}

impl CkksParams {
    /// SEAL-Embedded's default set for degree `n` (its `parameters.c` / adapter table):
    /// 1024: one 27-bit prime, scale 2^20; 2048: 27 + 27-bit special, 2^25; 4096: 3×30 + 19-bit,
    /// 2^25; 8192: 6×30 + 38-bit, 2^25; 16384: 13×30 + 48-bit, 2^25. All are ≤ the 128-bit cap.
    pub fn seal_embedded(n: usize) -> Result<Self> {
        let (data, special, log_scale): (&[u64], Option<u64>, u32) = match n {
            1024 => (&PRIMES_27[..1], None, 20),
            2048 => (&PRIMES_27[..1], Some(134111233), 25),
            4096 => (&PRIMES_30[..3], Some(417793), 25),
            8192 => (&PRIMES_30[..6], Some(274877562881), 25),
            16384 => (&PRIMES_30[..13], Some(281474976546817), 25),
            _ => {
                return Err(CkksError::InvalidParams(
                    "N must be 1024, 2048, 4096, 8192 or 16384",
                ))
            }
        };
        Self::new(n, data, special, (1u64 << log_scale) as f64)
    }

    /// SEAL-Embedded's alternative N = 4096 set: three 27-bit primes, 28-bit special prime, scale 2^20.
    pub fn seal_embedded_4096_27bit() -> Self {
        Self {
            n: 4096,
            log_n: 12,
            data_primes: Primes::of(&PRIMES_27),
            special_prime: Some(268369921),
            scale: (1u64 << 20) as f64,
            insecure: false,
        }
    }

    /// A user set: data primes (each prime, ≡ 1 mod 2N, < 2^30), an optional special prime for key
    /// switching (< 2^61), and the scale. Refuses sets beyond the 128-bit security cap.
    pub fn new(
        n: usize,
        data_primes: &[u64],
        special_prime: Option<u64>,
        scale: f64,
    ) -> Result<Self> {
        let p = Self::build(n, data_primes, special_prime, scale, false)?;
        if p.total_bits() > p.max_secure_bits() {
            return Err(CkksError::InvalidParams(
                "log2 Q exceeds the 128-bit HE-standard cap for this N (use new_insecure to override)",
            ));
        }
        Ok(p)
    }

    /// Like [`CkksParams::new`] but skips the security cap. Only for reproducing papers: the set is
    /// marked insecure and [`CkksParams::is_insecure`] reports it.
    pub fn new_insecure(
        n: usize,
        data_primes: &[u64],
        special_prime: Option<u64>,
        scale: f64,
    ) -> Result<Self> {
        let p = Self::build(n, data_primes, special_prime, scale, true)?;
        #[cfg(feature = "std")]
        if p.total_bits() > p.max_secure_bits() {
            std::eprintln!(
                "warning: vsp-ckks insecure parameter set (log2 Q = {} > {} for N = {})",
                p.total_bits(),
                p.max_secure_bits(),
                n
            );
        }
        Ok(p)
    }

    fn build(
        n: usize,
        data_primes: &[u64],
        special_prime: Option<u64>,
        scale: f64,
        insecure: bool,
    ) -> Result<Self> {
        if !(1024..=16384).contains(&n) || !n.is_power_of_two() {
            return Err(CkksError::InvalidParams(
                "N must be a power of two in 1024..=16384",
            ));
        }
        if data_primes.is_empty() || data_primes.len() > MAX_DATA_PRIMES {
            return Err(CkksError::InvalidParams("need 1 to 64 data primes"));
        }
        let two_n = 2 * n as u64;
        for &q in data_primes {
            if q >= DEVICE_PRIME_LIMIT || q % two_n != 1 || !is_prime_u64(q) {
                return Err(CkksError::BadModulus(q));
            }
        }
        if let Some(p) = special_prime {
            if p >= SPECIAL_PRIME_LIMIT || p % two_n != 1 || !is_prime_u64(p) {
                return Err(CkksError::BadModulus(p));
            }
        }
        for (i, a) in data_primes.iter().enumerate() {
            if data_primes[i + 1..].contains(a) || special_prime == Some(*a) {
                return Err(CkksError::InvalidParams("primes must be distinct"));
            }
        }
        let data_bits: u32 = data_primes.iter().map(|q| 64 - q.leading_zeros()).sum();
        if !scale.is_finite() || scale < 1.0 || libm::log2(scale) >= data_bits as f64 {
            return Err(CkksError::InvalidParams(
                "scale must be ≥ 1 and below the data modulus",
            ));
        }
        Ok(Self {
            n,
            log_n: n.trailing_zeros(),
            data_primes: Primes::of(data_primes),
            special_prime,
            scale,
            insecure,
        })
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.n
    }
    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }
    /// Number of complex slots, N/2.
    pub fn slots(&self) -> usize {
        self.n / 2
    }
    /// The data primes q_0 … q_{L−1} (the level a fresh ciphertext lives at).
    pub fn data_primes(&self) -> &[u64] {
        self.data_primes.as_slice()
    }
    /// The key-switching prime, if any.
    pub fn special_prime(&self) -> Option<u64> {
        self.special_prime
    }
    /// All primes of the key level: data primes then the special prime (SEAL's `coeff_modulus`).
    #[cfg(feature = "alloc")]
    pub fn key_primes(&self) -> Vec<u64> {
        let mut v = self.data_primes().to_vec();
        v.extend(self.special_prime);
        v
    }
    /// The encoding scale Δ.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Sets another encoding scale (same validity rule as construction).
    pub fn with_scale(mut self, scale: f64) -> Result<Self> {
        let data_bits: u32 = self
            .data_primes()
            .iter()
            .map(|q| 64 - q.leading_zeros())
            .sum();
        if !scale.is_finite() || scale < 1.0 || libm::log2(scale) >= data_bits as f64 {
            return Err(CkksError::InvalidParams(
                "scale must be ≥ 1 and below the data modulus",
            ));
        }
        self.scale = scale;
        Ok(self)
    }
    /// Bits of the whole key-level modulus (what the security cap applies to).
    pub fn total_bits(&self) -> u32 {
        self.data_primes()
            .iter()
            .chain(&self.special_prime)
            .map(|q| 64 - q.leading_zeros())
            .sum()
    }
    /// The 128-bit classical cap on log2 Q for this N.
    pub fn max_secure_bits(&self) -> u32 {
        MAX_LOGQ_128[(self.log_n - 10) as usize]
    }
    /// True when built through [`CkksParams::new_insecure`] beyond the cap.
    pub fn is_insecure(&self) -> bool {
        self.insecure && self.total_bits() > self.max_secure_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_secure() {
        for n in [1024, 2048, 4096, 8192, 16384] {
            let p = CkksParams::seal_embedded(n).unwrap();
            assert!(p.total_bits() <= p.max_secure_bits(), "n={n}");
            assert!(!p.is_insecure());
        }
        let d = CkksParams::default();
        assert_eq!(CkksParams::seal_embedded(4096).unwrap(), d);
        assert_eq!(d.total_bits(), 109);
        let alt = CkksParams::seal_embedded_4096_27bit();
        assert_eq!(
            CkksParams::new(4096, alt.data_primes(), alt.special_prime(), alt.scale()).unwrap(),
            alt
        );
    }

    #[test]
    fn rejects_bad_sets() {
        assert!(CkksParams::new(3000, &PRIMES_30[..1], None, 1e6).is_err());
        assert!(CkksParams::new(4096, &[1053818883], None, 1e6).is_err()); // not prime
        assert!(CkksParams::new(4096, &[PRIMES_30[0], PRIMES_30[0]], None, 1e6).is_err());
        assert!(CkksParams::new(4096, &PRIMES_30[..4], None, 1e6).is_err()); // 120 > 109 bits
        assert!(CkksParams::new_insecure(4096, &PRIMES_30[..4], None, 1e6)
            .unwrap()
            .is_insecure());
        assert!(CkksParams::new(4096, &PRIMES_30[..1], None, f64::NAN).is_err());
        assert!(CkksParams::new(4096, &PRIMES_30[..1], None, 2f64.powi(40)).is_err());
        // 12289 is prime but only 1 mod 4096, not 1 mod 8192.
        assert_eq!(
            CkksParams::new(4096, &[12289], None, 1.0),
            Err(CkksError::BadModulus(12289))
        );
    }
}
