//! An RNS basis {q_0, …, q_{k−1}} of pairwise coprime word-size moduli, with decomposition of big
//! integers into residues and CRT reconstruction from precomputed constants (seed 001's "LUT-based
//! CRT": the table holds Q/q_i and [(Q/q_i)^{-1}]_{q_i}, so reconstruction is k word products and
//! k big-integer multiply-adds).

use alloc::vec::Vec;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

use crate::error::{MathError, Result};
use crate::modulus::{Modulus, ShoupConst};

/// A basis of pairwise coprime moduli and its CRT constants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RnsBasis {
    moduli: Vec<Modulus>,
    product: BigUint,
    half_product: BigUint,
    /// Q / q_i.
    punctured: Vec<BigUint>,
    /// [(Q / q_i)^{-1}]_{q_i} with its Shoup quotient.
    inv_punctured: Vec<ShoupConst>,
}

impl RnsBasis {
    /// A basis from raw moduli; each must be a valid [`Modulus`] and the set pairwise coprime.
    pub fn new(moduli: &[u64]) -> Result<Self> {
        let ms = moduli
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<Result<Vec<_>>>()?;
        Self::from_moduli(ms)
    }

    /// A basis from already-constructed moduli.
    pub fn from_moduli(moduli: Vec<Modulus>) -> Result<Self> {
        if moduli.is_empty() {
            return Err(MathError::EmptyBasis);
        }
        for (i, a) in moduli.iter().enumerate() {
            for b in &moduli[i + 1..] {
                if a.value().gcd(&b.value()) != 1 {
                    return Err(MathError::NotCoprime {
                        a: a.value(),
                        b: b.value(),
                    });
                }
            }
        }
        let product = moduli
            .iter()
            .fold(BigUint::from(1u8), |acc, q| acc * q.value());
        let mut punctured = Vec::with_capacity(moduli.len());
        let mut inv_punctured = Vec::with_capacity(moduli.len());
        for q in &moduli {
            let p = &product / q.value();
            let p_mod = (&p % q.value()).to_u64().unwrap_or(0);
            inv_punctured.push(q.shoup(q.inv(p_mod)?));
            punctured.push(p);
        }
        let half_product = &product >> 1usize;
        Ok(Self {
            moduli,
            product,
            half_product,
            punctured,
            inv_punctured,
        })
    }

    /// Number of moduli k.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always false: a basis has at least one modulus.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The moduli.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// Q = Π q_i.
    pub fn product(&self) -> &BigUint {
        &self.product
    }

    /// Q / q_i, or `None` when i ≥ k.
    pub fn punctured_product(&self, i: usize) -> Option<&BigUint> {
        self.punctured.get(i)
    }

    /// [(Q/q_i)^{-1}]_{q_i} (with Shoup quotient), or `None` when i ≥ k.
    pub fn inv_punctured_product(&self, i: usize) -> Option<ShoupConst> {
        self.inv_punctured.get(i).copied()
    }

    /// The basis followed by `other`'s moduli (e.g. Q ∪ P for BEHZ/HPS); must stay coprime.
    pub fn extend(&self, other: &RnsBasis) -> Result<RnsBasis> {
        let mut all = self.moduli.clone();
        all.extend_from_slice(&other.moduli);
        Self::from_moduli(all)
    }

    /// The basis without its last modulus (the level below, after rescaling).
    pub fn drop_last(&self) -> Result<RnsBasis> {
        if self.moduli.len() < 2 {
            return Err(MathError::EmptyBasis);
        }
        Self::from_moduli(self.moduli[..self.moduli.len() - 1].to_vec())
    }

    /// Residues of a non-negative integer.
    pub fn decompose(&self, x: &BigUint) -> Vec<u64> {
        self.moduli
            .iter()
            .map(|q| (x % q.value()).to_u64().unwrap_or(0))
            .collect()
    }

    /// Residues of a signed integer (negative values map to Q − |x| mod q_i).
    pub fn decompose_signed(&self, x: &BigInt) -> Vec<u64> {
        let r = self.decompose(x.magnitude());
        if x.sign() == Sign::Minus {
            r.iter().zip(&self.moduli).map(|(&v, q)| q.neg(v)).collect()
        } else {
            r
        }
    }

    fn check_residues(&self, residues: &[u64]) -> Result<()> {
        if residues.len() != self.moduli.len() {
            return Err(MathError::LengthMismatch {
                what: "RNS residues",
                expected: self.moduli.len(),
                got: residues.len(),
            });
        }
        Ok(())
    }

    /// The unique x ∈ [0, Q) with x ≡ `residues[i]` (mod q_i):
    /// `x = Σ [r_i·(Q/q_i)^{-1}]_{q_i} · (Q/q_i) mod Q`.
    pub fn reconstruct(&self, residues: &[u64]) -> Result<BigUint> {
        self.check_residues(residues)?;
        let mut acc = BigUint::zero();
        for ((&r, q), (p, &inv)) in residues
            .iter()
            .zip(&self.moduli)
            .zip(self.punctured.iter().zip(&self.inv_punctured))
        {
            let y = q.mul_shoup(q.reduce(r), inv);
            acc += p * y;
        }
        // acc < k·Q, so a remainder (not a full division) suffices.
        Ok(acc % &self.product)
    }

    /// The representative of the residues in (−Q/2, Q/2].
    pub fn reconstruct_centered(&self, residues: &[u64]) -> Result<BigInt> {
        let x = self.reconstruct(residues)?;
        if x > self.half_product {
            Ok(BigInt::from_biguint(Sign::Plus, x)
                - BigInt::from_biguint(Sign::Plus, self.product.clone()))
        } else {
            Ok(BigInt::from_biguint(Sign::Plus, x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;
    use rand::{Rng, SeedableRng};

    fn random_big(rng: &mut impl Rng, below: &BigUint) -> BigUint {
        let words = below.to_u64_digits().len() + 1;
        let digits: Vec<u64> = (0..words).map(|_| rng.gen()).collect();
        BigUint::new(
            digits
                .iter()
                .flat_map(|d| [*d as u32, (*d >> 32) as u32])
                .collect(),
        ) % below
    }

    #[test]
    fn crt_matches_bigint_for_1200_bit_modulus() {
        // Seed 001's case: 40 moduli of 30 bits, a 1200-bit Q.
        let primes = generate_ntt_primes(30, 4096, 40).unwrap();
        let basis = RnsBasis::new(&primes).unwrap();
        assert_eq!(basis.len(), 40);
        assert!(basis.product().bits() > 1190 && basis.product().bits() <= 1200);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(10);
        for _ in 0..200 {
            let x = random_big(&mut rng, basis.product());
            let r = basis.decompose(&x);
            for (ri, q) in r.iter().zip(&primes) {
                assert_eq!(BigUint::from(*ri), &x % *q);
            }
            assert_eq!(basis.reconstruct(&r).unwrap(), x);
            // Arithmetic commutes with the CRT map.
            let y = random_big(&mut rng, basis.product());
            let ry = basis.decompose(&y);
            let prod: Vec<u64> = r
                .iter()
                .zip(&ry)
                .zip(basis.moduli())
                .map(|((&a, &b), q)| q.mul(a, b))
                .collect();
            assert_eq!(
                basis.reconstruct(&prod).unwrap(),
                (&x * &y) % basis.product()
            );
        }
    }

    #[test]
    fn centered_and_signed_round_trip() {
        let basis = RnsBasis::new(&generate_ntt_primes(50, 1024, 3).unwrap()).unwrap();
        for v in [-5i64, 0, 7, i64::MIN + 1, i64::MAX] {
            let x = BigInt::from(v);
            let r = basis.decompose_signed(&x);
            assert_eq!(basis.reconstruct_centered(&r).unwrap(), x);
        }
        let q_half = BigInt::from_biguint(Sign::Plus, basis.product() >> 1usize);
        assert_eq!(
            basis
                .reconstruct_centered(&basis.decompose_signed(&q_half))
                .unwrap(),
            q_half
        );
        assert_eq!(
            basis
                .reconstruct_centered(&basis.decompose_signed(&-&q_half))
                .unwrap(),
            -q_half
        );
    }

    #[test]
    fn bad_bases_are_errors() {
        assert!(matches!(RnsBasis::new(&[]), Err(MathError::EmptyBasis)));
        assert!(matches!(
            RnsBasis::new(&[15, 21]),
            Err(MathError::NotCoprime { a: 15, b: 21 })
        ));
        assert!(matches!(
            RnsBasis::new(&[1 << 62]),
            Err(MathError::ModulusOutOfRange { .. })
        ));
        let b = RnsBasis::new(&[7, 11]).unwrap();
        assert!(matches!(
            b.reconstruct(&[1]),
            Err(MathError::LengthMismatch { .. })
        ));
        assert!(b.extend(&RnsBasis::new(&[77]).unwrap()).is_err());
        assert_eq!(b.extend(&RnsBasis::new(&[13]).unwrap()).unwrap().len(), 3);
        assert_eq!(b.drop_last().unwrap().moduli()[0].value(), 7);
        assert!(RnsBasis::new(&[7]).unwrap().drop_last().is_err());
        assert!(b.punctured_product(2).is_none());
    }
}
