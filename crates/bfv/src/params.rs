//! BFV parameters: ring degree N, ciphertext modulus Q as an RNS chain, plaintext modulus t, error
//! distribution and multiplication method, validated against the HomomorphicEncryption.org 128-bit
//! table (Albrecht et al., "Homomorphic Encryption Standard", 2018; the caps SEAL's hestdparms.h and
//! OpenFHE's stdlatticeparms.cpp ship for a ternary secret and σ = 3.2).
//!
//! Building the parameters precomputes everything the scheme needs once (NTT tables, the HPS and BEHZ
//! auxiliary bases, the decryption rounder, batching tables), so the rest of the crate shares one
//! immutable `Arc<BfvParameters>`.

use crate::arith::{ntt_primes, Modulus};
use crate::behz::BehzTools;
use crate::encoding::BatchTables;
use crate::error::{Error, Result};
use crate::hps::HpsTools;
use crate::rns::{big_mod, scale_round, single, RnsBasis};
use crate::sampling::ErrorDistribution;
use num_bigint::BigUint;
use sha3::{Digest, Sha3_256};
use std::sync::Arc;

/// How ciphertext × ciphertext products are scaled by t/Q in RNS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MulMethod {
    /// Halevi–Polyakov–Shoup: exact base extension and scale-and-round with fixed-point corrections.
    #[default]
    Hps,
    /// Bajard–Eynard–Hasan–Zucca: auxiliary base, Montgomery correction, Shenoy–Kumaresan.
    Behz,
}

/// 128-bit classical bounds on log2 Q for a ternary secret (N = 1024 … 32768).
pub const MAX_LOG_Q_128: [(usize, u32); 6] = [
    (1024, 27),
    (2048, 54),
    (4096, 109),
    (8192, 218),
    (16384, 438),
    (32768, 881),
];

/// The largest log2 Q the standard allows at 128-bit security for degree n, if n is in the table.
pub fn max_log_q_128(n: usize) -> Option<u32> {
    MAX_LOG_Q_128.iter().find(|(d, _)| *d == n).map(|(_, b)| *b)
}

/// Default prime sizes per degree (SEAL's BFVDefault totals: 27/54/109/218/438/881 bits).
fn default_sizes(n: usize) -> Option<Vec<u32>> {
    Some(match n {
        1024 => vec![27],
        2048 => vec![54],
        4096 => vec![36, 36, 37],
        8192 => vec![43, 43, 44, 44, 44],
        16384 => vec![48, 48, 48, 49, 49, 49, 49, 49, 49],
        32768 => {
            let mut v = vec![55; 15];
            v.push(56);
            v
        }
        _ => return None,
    })
}

/// Immutable, validated BFV parameters with their precomputations.
#[derive(Debug)]
pub struct BfvParameters {
    degree: usize,
    plaintext: u64,
    moduli: Vec<u64>,
    error: ErrorDistribution,
    method: MulMethod,
    insecure: bool,
    id: [u8; 32],
    pub(crate) q: RnsBasis,
    pub(crate) t: Modulus,
    /// ⌊Q/t⌋ mod q_i with Shoup constants.
    pub(crate) delta: Vec<(u64, u64)>,
    pub(crate) decrypt_rounder: vsp_math::ScaleRound,
    pub(crate) hps: HpsTools,
    pub(crate) behz: BehzTools,
    pub(crate) batch: Option<BatchTables>,
}

/// Builder of [`BfvParameters`].
#[derive(Clone, Debug, Default)]
pub struct BfvParametersBuilder {
    degree: usize,
    plaintext: u64,
    moduli: Option<Vec<u64>>,
    sizes: Option<Vec<u32>>,
    error: ErrorDistribution,
    method: MulMethod,
    insecure: bool,
}

impl BfvParametersBuilder {
    vsp_codec::setters! {
        /// Ring degree N (power of two, 1024 … 32768; smaller only with `insecure`).
        degree(n: usize) => degree = n;
        /// Plaintext modulus t (batching needs a prime t ≡ 1 mod 2N).
        plaintext_modulus(t: u64) => plaintext = t;
        /// Explicit ciphertext primes (each ≡ 1 mod 2N, < 2^61).
        moduli(q: &[u64]) => moduli = Some(q.to_vec());
        /// Ciphertext primes generated from bit sizes (10 … 61 bits each).
        moduli_sizes(sizes: &[u32]) => sizes = Some(sizes.to_vec());
        /// Error distribution (default CBD with η = 21, σ ≈ 3.24).
        error_distribution(e: ErrorDistribution) => error = e;
        /// Default multiplication method of the evaluator.
        mul_method(m: MulMethod) => method = m;
    }
    /// Accept sets below 128-bit security (paper reproduction only; prints a warning).
    pub fn insecure(mut self) -> Self {
        self.insecure = true;
        self
    }

    /// Validates and precomputes.
    pub fn build(self) -> Result<Arc<BfvParameters>> {
        let n = self.degree;
        let min_n = if self.insecure { 8 } else { 1024 };
        if !n.is_power_of_two() || n < min_n || n > 32768 {
            return Err(Error::InvalidParameters(format!(
                "degree {n} must be a power of two in [{min_n}, 32768]"
            )));
        }
        self.error.validate()?;
        let t = self.plaintext;
        if !(2..(1u64 << 60)).contains(&t) {
            return Err(Error::InvalidParameters(format!(
                "plaintext modulus {t} outside [2, 2^60)"
            )));
        }
        let moduli = match (self.moduli, self.sizes) {
            (Some(q), None) => q,
            (None, Some(sizes)) => generate(n, &sizes)?,
            (None, None) => generate(
                n,
                &default_sizes(n).ok_or_else(|| {
                    Error::InvalidParameters(format!("no default moduli for degree {n}"))
                })?,
            )?,
            (Some(_), Some(_)) => {
                return Err(Error::InvalidParameters(
                    "give either moduli or moduli sizes, not both".into(),
                ))
            }
        };
        for &q in &moduli {
            if q >= 1 << 61 || q % (2 * n as u64) != 1 {
                return Err(Error::InvalidParameters(format!(
                    "modulus {q} must be < 2^61 and ≡ 1 mod 2N = {}",
                    2 * n
                )));
            }
            if num_integer::gcd(q, t) != 1 {
                return Err(Error::InvalidParameters(format!(
                    "modulus {q} not coprime to t = {t}"
                )));
            }
        }
        let log_q: u32 = moduli.iter().map(|q| 64 - q.leading_zeros()).sum();
        match max_log_q_128(n) {
            Some(max) if log_q <= max => {}
            _ if self.insecure => {
                eprintln!(
                    "vsp-bfv WARNING: insecure parameters (N = {n}, log2 Q = {log_q}): below 128-bit \
                     security, for paper reproduction only"
                );
            }
            Some(max) => {
                return Err(Error::Insecure {
                    degree: n,
                    log_q,
                    max,
                })
            }
            None => {
                return Err(Error::InvalidParameters(format!(
                    "degree {n} not in the security table"
                )))
            }
        }
        let q = RnsBasis::new(n, &moduli)?;
        if q.product() <= &BigUint::from(t) {
            return Err(Error::InvalidParameters("Q must exceed t".into()));
        }
        let tm = Modulus::new(t)?;
        let delta_big = q.product() / t;
        let delta = q
            .moduli()
            .iter()
            .map(|m| {
                let d = big_mod(&delta_big, m.value());
                (d, m.shoup(d))
            })
            .collect();
        let decrypt_rounder = scale_round(&q, &single(t)?, t, false)?;
        let hps = HpsTools::new(&q, t)?;
        let behz = BehzTools::new(&q, t)?;
        let batch = BatchTables::new(n, t).ok();
        let mut h = Sha3_256::new();
        h.update(b"vsp-bfv params v1");
        h.update((n as u64).to_le_bytes());
        h.update(t.to_le_bytes());
        for &m in &moduli {
            h.update(m.to_le_bytes());
        }
        match self.error {
            ErrorDistribution::Cbd { eta } => h.update([0u8, eta as u8]),
            ErrorDistribution::Gaussian { sigma } => {
                h.update([1u8]);
                h.update(sigma.to_le_bytes());
            }
            ErrorDistribution::Ziggurat { sigma } => {
                h.update([2u8]);
                h.update(sigma.to_le_bytes());
            }
        }
        h.update([self.insecure as u8]);
        let id: [u8; 32] = h.finalize().into();
        Ok(Arc::new(BfvParameters {
            degree: n,
            plaintext: t,
            moduli,
            error: self.error,
            method: self.method,
            insecure: self.insecure,
            id,
            q,
            t: tm,
            delta,
            decrypt_rounder,
            hps,
            behz,
            batch,
        }))
    }
}

fn generate(n: usize, sizes: &[u32]) -> Result<Vec<u64>> {
    if sizes.is_empty() {
        return Err(Error::InvalidParameters("no moduli sizes".into()));
    }
    let mut out: Vec<u64> = Vec::with_capacity(sizes.len());
    for &b in sizes {
        let p = ntt_primes(b, n, 1, &out)?;
        out.extend(p);
    }
    Ok(out)
}

impl BfvParameters {
    /// A fresh builder.
    pub fn builder() -> BfvParametersBuilder {
        BfvParametersBuilder::default()
    }

    /// 128-bit secure defaults for degree n (SEAL's BFVDefault sizes) and plaintext modulus t.
    pub fn default_128(n: usize, t: u64) -> Result<Arc<Self>> {
        Self::builder().degree(n).plaintext_modulus(t).build()
    }

    /// The smallest 128-bit secure default set that supports `depth` sequential multiplications
    /// with plaintext modulus t (calibrated by the depth tests of this crate).
    pub fn for_depth(depth: usize, t: u64) -> Result<Arc<Self>> {
        let tb = 64 - t.leading_zeros() as usize;
        for &(n, max) in MAX_LOG_Q_128.iter() {
            let nb = n.trailing_zeros() as usize;
            // Fresh noise plus a safety margin, then about log t + log N + 8 bits per level.
            let need = tb + 2 * nb + 8 + depth * (tb + nb + 8);
            if need <= max as usize {
                return Self::default_128(n, t);
            }
        }
        Err(Error::InvalidParameters(format!(
            "depth {depth} needs more than N = 32768"
        )))
    }

    /// The largest prime of `bits` bits that is ≡ 1 mod 2n: a plaintext modulus that allows batching.
    pub fn batching_modulus(n: usize, bits: u32) -> Result<u64> {
        Ok(ntt_primes(bits, n, 1, &[])?[0])
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.degree
    }
    /// Plaintext modulus t.
    pub fn plaintext_modulus(&self) -> u64 {
        self.plaintext
    }
    /// Ciphertext primes.
    pub fn moduli(&self) -> &[u64] {
        &self.moduli
    }
    /// Bit size of Q (sum of the primes' bit lengths, as in the security table).
    pub fn log_q(&self) -> u32 {
        self.moduli.iter().map(|q| 64 - q.leading_zeros()).sum()
    }
    /// Error distribution.
    pub fn error_distribution(&self) -> ErrorDistribution {
        self.error
    }
    /// Default multiplication method.
    pub fn mul_method(&self) -> MulMethod {
        self.method
    }
    /// Whether the set was built with the insecure opt-in.
    pub fn is_insecure(&self) -> bool {
        self.insecure
    }
    /// Whether SIMD batching is available (t prime, t ≡ 1 mod 2N).
    pub fn supports_batching(&self) -> bool {
        self.batch.is_some()
    }
    /// SHA3-256 identifier of the set; serialized objects carry it.
    pub fn id(&self) -> [u8; 32] {
        self.id
    }
    /// The ciphertext modulus Q.
    pub fn ciphertext_modulus(&self) -> &BigUint {
        self.q.product()
    }
}
