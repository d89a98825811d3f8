//! The RNS bases of vsp-bfv on vsp-math's [`vsp_math::rns`]: a basis is vsp-math's
//! [`vsp_math::RnsBasis`] (CRT constants, reconstruction) plus, for degree n, the NTT tables and the
//! word-level views the scheme code uses. Base conversions and scale-and-round are vsp-math's
//! [`vsp_math::BaseConverter`] and [`vsp_math::ScaleRound`].
//!
//! A polynomial over an RNS basis is stored limb-major: limb i holds its n residues modulo q_i
//! contiguously.

use crate::arith::{Modulus, NttTable};
use crate::error::{Error, Result};
use num_bigint::BigUint;
use num_traits::ToPrimitive;

/// A set of pairwise coprime NTT-friendly primes for one ring degree.
#[derive(Clone, Debug)]
pub struct RnsBasis {
    n: usize,
    basis: vsp_math::RnsBasis,
    moduli: Vec<Modulus>,
    ntt: Vec<NttTable>,
    /// [(Q/q_i)^{-1}]_{q_i} and its Shoup constant.
    qhat_inv: Vec<(u64, u64)>,
}

/// Big integer modulo a word modulus.
pub(crate) fn big_mod(x: &BigUint, m: u64) -> u64 {
    (x % m).to_u64().unwrap_or(0)
}

impl RnsBasis {
    /// Builds the basis with NTT tables for degree n; the primes must be distinct and ≡ 1 mod 2n.
    pub fn new(n: usize, primes: &[u64]) -> Result<Self> {
        if primes.is_empty() {
            return Err(Error::InvalidParameters("empty RNS basis".into()));
        }
        let mut moduli = Vec::with_capacity(primes.len());
        let mut ntt = Vec::with_capacity(primes.len());
        for (i, &q) in primes.iter().enumerate() {
            if primes[..i].contains(&q) {
                return Err(Error::InvalidParameters(format!("modulus {q} repeated")));
            }
            if !crate::arith::is_prime(q) {
                return Err(Error::InvalidParameters(format!(
                    "modulus {q} is not prime"
                )));
            }
            let m = Modulus::new(q)?;
            ntt.push(NttTable::new(m, n)?);
            moduli.push(m);
        }
        let basis = vsp_math::RnsBasis::new(primes)?;
        let qhat_inv = (0..primes.len())
            .map(|i| {
                let w = basis.inv_punctured_product(i).unwrap_or_default();
                (w.value, w.quotient)
            })
            .collect();
        Ok(Self {
            n,
            basis,
            moduli,
            ntt,
            qhat_inv,
        })
    }

    /// Ring degree.
    pub fn degree(&self) -> usize {
        self.n
    }
    /// Number of limbs.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }
    /// The moduli.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }
    /// The prime values.
    pub fn primes(&self) -> Vec<u64> {
        self.moduli.iter().map(|m| m.value()).collect()
    }
    /// NTT tables per limb.
    pub fn ntt(&self) -> &[NttTable] {
        &self.ntt
    }
    /// The NTT tables and moduli of the limbs of this basis followed by those of `other`: the
    /// extended basis Q∪P (HPS) or Q∪Bsk (BEHZ) that tensor products are computed in.
    pub(crate) fn joined_with(&self, other: &RnsBasis) -> (Vec<NttTable>, Vec<Modulus>) {
        (
            self.ntt.iter().chain(&other.ntt).cloned().collect(),
            self.moduli.iter().chain(&other.moduli).copied().collect(),
        )
    }
    /// The product of the moduli.
    pub fn product(&self) -> &BigUint {
        self.basis.product()
    }
    /// [(Q/q_i)^{-1}]_{q_i} with its Shoup constant.
    pub fn qhat_inv(&self) -> &[(u64, u64)] {
        &self.qhat_inv
    }
    /// vsp-math's basis (CRT constants).
    pub fn math(&self) -> &vsp_math::RnsBasis {
        &self.basis
    }

    /// CRT reconstruction of coefficient `j` of a limb-major polynomial, in [0, Q).
    pub fn reconstruct(&self, poly: &[u64], j: usize) -> BigUint {
        let residues: Vec<u64> = (0..self.len()).map(|i| poly[i * self.n + j]).collect();
        // The residues have the basis' length by construction, the only error vsp-math reports.
        self.basis.reconstruct(&residues).unwrap_or_default()
    }
}

/// Exact (HPS) conversion of centered values between two bases of one degree (vsp-math's).
pub(crate) fn exact_converter(from: &RnsBasis, to: &RnsBasis) -> Result<vsp_math::BaseConverter> {
    vsp_math::BaseConverter::new(from.math(), to.math()).map_err(Error::from)
}

/// round(num·x/Q) into `to` (vsp-math's [`vsp_math::ScaleRound`]).
pub(crate) fn scale_round(
    q: &RnsBasis,
    to: &vsp_math::RnsBasis,
    num: u64,
    target_in_source: bool,
) -> Result<vsp_math::ScaleRound> {
    vsp_math::ScaleRound::new(q.math(), to, num, target_in_source).map_err(Error::from)
}

/// vsp-math's basis of one word modulus.
pub(crate) fn single(m: u64) -> Result<vsp_math::RnsBasis> {
    vsp_math::RnsBasis::new(&[m]).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vsp-math's refusal reaches the caller typed, not as a string.
    #[test]
    fn math_errors_stay_typed() {
        // 7 is prime but not ≡ 1 mod 2n = 16: vsp-math has no NTT for it.
        assert!(matches!(RnsBasis::new(8, &[7]), Err(Error::Arithmetic(_))));
    }
}
