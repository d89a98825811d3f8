//! Base conversion between RNS bases, on polynomials stored limb-major (limb i of a k-limb
//! polynomial with n coefficients is `data[i·n .. (i+1)·n]`).
//!
//! * Fast (approximate) conversion, BEHZ 2016 §2.2: FastBconv(x) = Σ [x_i·(Q/q_i)^{-1}]_{q_i}·(Q/q_i)
//!   mod p_j, which equals x + u·Q for some 0 ≤ u < k.
//! * Exact conversion with the floating-point correction of Halevi–Polyakov–Shoup 2019 (HPS §2.4):
//!   u is recovered as round(Σ y_i/q_i) and subtracted, giving the centered representative of x.
//! * Exact conversion with a redundant modulus m_sk, Shenoy–Kumaresan 1989 (as used by BEHZ §4.2):
//!   u = (FastBconv_{m_sk}(x) − x_{m_sk})·Q^{-1} mod m_sk, exact for x ∈ [0, Q).

use alloc::vec::Vec;

use num_traits::ToPrimitive;

use crate::error::{MathError, Result};
use crate::modulus::{Modulus, ShoupConst};
use crate::rns::basis::RnsBasis;

/// Precomputed constants to convert polynomials from basis Q = {q_i} to basis P = {p_j}.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseConverter {
    from: RnsBasis,
    to: RnsBasis,
    /// (Q/q_i) mod p_j, row j.
    punctured_mod_to: Vec<u64>,
    /// Q mod p_j.
    product_mod_to: Vec<u64>,
    /// 1/q_i as f64 for the HPS correction.
    inv_from_f64: Vec<f64>,
}

/// Products summed in u128 before a reduction: y_i·c < 2^124, so 15 of them stay below 2^128.
const LAZY_TERMS: usize = 15;

impl BaseConverter {
    /// Constants for converting from `from` to `to`.
    pub fn new(from: &RnsBasis, to: &RnsBasis) -> Result<Self> {
        let mut punctured_mod_to = Vec::with_capacity(from.len() * to.len());
        let mut product_mod_to = Vec::with_capacity(to.len());
        for p in to.moduli() {
            for i in 0..from.len() {
                let qi_hat = from.punctured_product(i).ok_or(MathError::EmptyBasis)?;
                punctured_mod_to.push((qi_hat % p.value()).to_u64().unwrap_or(0));
            }
            product_mod_to.push((from.product() % p.value()).to_u64().unwrap_or(0));
        }
        let inv_from_f64 = from
            .moduli()
            .iter()
            .map(|q| 1.0 / q.value() as f64)
            .collect();
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            punctured_mod_to,
            product_mod_to,
            inv_from_f64,
        })
    }

    /// The source basis Q.
    pub fn from_basis(&self) -> &RnsBasis {
        &self.from
    }

    /// The target basis P.
    pub fn to_basis(&self) -> &RnsBasis {
        &self.to
    }

    fn check(&self, input: usize, output: usize, n: usize) -> Result<()> {
        if input != self.from.len() * n {
            return Err(MathError::LengthMismatch {
                what: "base conversion input",
                expected: self.from.len() * n,
                got: input,
            });
        }
        if output != self.to.len() * n {
            return Err(MathError::LengthMismatch {
                what: "base conversion output",
                expected: self.to.len() * n,
                got: output,
            });
        }
        Ok(())
    }

    /// y_i = [x_i · (Q/q_i)^{-1}]_{q_i}, limb-major.
    fn scaled_residues(&self, input: &[u64], n: usize) -> Vec<u64> {
        let mut y = Vec::with_capacity(input.len());
        for (i, (limb, q)) in input.chunks_exact(n).zip(self.from.moduli()).enumerate() {
            let inv = self.from.inv_punctured_product(i).unwrap_or_default();
            y.extend(limb.iter().map(|&x| q.mul_shoup(x, inv)));
        }
        y
    }

    /// output_j = Σ_i y_i·(Q/q_i) mod p_j.
    fn accumulate(&self, y: &[u64], output: &mut [u64], n: usize) {
        let k = self.from.len();
        let mut acc = alloc::vec![0u128; n];
        for (j, (out, p)) in output.chunks_exact_mut(n).zip(self.to.moduli()).enumerate() {
            acc.iter_mut().for_each(|a| *a = 0);
            let row = &self.punctured_mod_to[j * k..(j + 1) * k];
            for (i, (y_i, &c)) in y.chunks_exact(n).zip(row).enumerate() {
                for (a, &v) in acc.iter_mut().zip(y_i) {
                    *a += v as u128 * c as u128;
                }
                if (i + 1) % LAZY_TERMS == 0 {
                    acc.iter_mut().for_each(|a| *a = p.reduce_u128(*a) as u128);
                }
            }
            for (o, &a) in out.iter_mut().zip(&acc) {
                *o = p.reduce_u128(a);
            }
        }
    }

    /// Fast base conversion: output ≡ x + u·Q (mod p_j) for some 0 ≤ u < k (BEHZ FastBconv).
    /// `input` has k·n words, `output` l·n words, both limb-major.
    pub fn fast_convert(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check(input.len(), output.len(), n)?;
        if n == 0 {
            return Ok(());
        }
        let y = self.scaled_residues(input, n);
        self.accumulate(&y, output, n);
        Ok(())
    }

    /// Exact conversion of the centered representative x ∈ [−Q/2, Q/2) (HPS floating-point
    /// correction). Exact unless Σ y_i/q_i falls within ~k·2^-52 of a half-integer, which for
    /// uniformly distributed x has probability about k·2^-51.
    pub fn exact_convert(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check(input.len(), output.len(), n)?;
        if n == 0 {
            return Ok(());
        }
        let y = self.scaled_residues(input, n);
        self.accumulate(&y, output, n);
        let mut v = alloc::vec![0f64; n];
        for (y_i, &inv) in y.chunks_exact(n).zip(&self.inv_from_f64) {
            for (s, &yv) in v.iter_mut().zip(y_i) {
                *s += yv as f64 * inv;
            }
        }
        // Σ y_i/q_i ≥ 0, so adding 1/2 and truncating rounds to nearest.
        let v: Vec<u64> = v.iter().map(|&s| (s + 0.5) as u64).collect();
        for (out, (p, &q_mod)) in output
            .chunks_exact_mut(n)
            .zip(self.to.moduli().iter().zip(&self.product_mod_to))
        {
            let q_mod_s = p.shoup(q_mod);
            for (o, &vc) in out.iter_mut().zip(&v) {
                *o = p.sub(*o, p.mul_shoup(vc, q_mod_s));
            }
        }
        Ok(())
    }
}

/// Exact base conversion with a redundant modulus m_sk (Shenoy–Kumaresan), for x ∈ [0, Q).
#[derive(Clone, Debug, PartialEq)]
pub struct ShenoyKumaresan {
    to_target: BaseConverter,
    to_msk: BaseConverter,
    m_sk: Modulus,
    /// −Q^{-1} mod m_sk.
    neg_inv_product_msk: ShoupConst,
}

impl ShenoyKumaresan {
    /// Constants to convert from `from` to `to` with redundant modulus `m_sk`, which must be coprime
    /// to Q and larger than the number of moduli of `from`.
    pub fn new(from: &RnsBasis, to: &RnsBasis, m_sk: Modulus) -> Result<Self> {
        if m_sk.value() <= from.len() as u64 {
            return Err(MathError::ModulusOutOfRange {
                value: m_sk.value(),
                reason: "m_sk must exceed the basis size",
            });
        }
        let msk_basis = RnsBasis::from_moduli(alloc::vec![m_sk])?;
        let to_msk = BaseConverter::new(from, &msk_basis)?;
        let q_mod = to_msk.product_mod_to[0];
        let inv = m_sk.inv(q_mod).map_err(|_| MathError::NotCoprime {
            a: m_sk.value(),
            b: 0,
        })?;
        Ok(Self {
            to_target: BaseConverter::new(from, to)?,
            to_msk,
            m_sk,
            neg_inv_product_msk: m_sk.shoup(m_sk.neg(inv)),
        })
    }

    /// The redundant modulus.
    pub fn m_sk(&self) -> Modulus {
        self.m_sk
    }

    /// Converts x ∈ [0, Q), given by its residues in `from` (k·n words) and mod m_sk (n words), to
    /// the target basis (l·n words).
    pub fn convert(
        &self,
        input: &[u64],
        input_msk: &[u64],
        output: &mut [u64],
        n: usize,
    ) -> Result<()> {
        self.to_target.check(input.len(), output.len(), n)?;
        if input_msk.len() != n {
            return Err(MathError::LengthMismatch {
                what: "m_sk residues",
                expected: n,
                got: input_msk.len(),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let y = self.to_target.scaled_residues(input, n);
        self.to_target.accumulate(&y, output, n);
        let mut fast_msk = alloc::vec![0u64; n];
        self.to_msk.accumulate(&y, &mut fast_msk, n);
        let m = &self.m_sk;
        // α = (FastBconv_msk(x) − x_msk)·Q^{-1} = (x_msk − FastBconv_msk(x))·(−Q^{-1}) mod m_sk.
        let alpha: Vec<u64> = fast_msk
            .iter()
            .zip(input_msk)
            .map(|(&f, &x)| m.mul_shoup(m.sub(m.reduce(x), f), self.neg_inv_product_msk))
            .collect();
        let to = &self.to_target;
        for (out, (p, &q_mod)) in output
            .chunks_exact_mut(n)
            .zip(to.to.moduli().iter().zip(&to.product_mod_to))
        {
            let q_mod_s = p.shoup(q_mod);
            for (o, &a) in out.iter_mut().zip(&alpha) {
                *o = p.sub(*o, p.mul_shoup(a, q_mod_s));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;
    use num_bigint::{BigInt, BigUint, Sign};
    use rand::{Rng, SeedableRng};

    fn setup() -> (RnsBasis, RnsBasis, Vec<BigUint>, Vec<u64>, usize) {
        let qs = generate_ntt_primes(50, 1024, 4).unwrap();
        let ps = generate_ntt_primes(61, 1024, 5).unwrap();
        let from = RnsBasis::new(&qs).unwrap();
        let to = RnsBasis::new(&ps).unwrap();
        let n = 64;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let xs: Vec<BigUint> = (0..n)
            .map(|_| {
                let digits: Vec<u32> = (0..8).map(|_| rng.gen()).collect();
                BigUint::new(digits) % from.product()
            })
            .collect();
        let mut input = alloc::vec![0u64; 4 * n];
        for (c, x) in xs.iter().enumerate() {
            for (i, r) in from.decompose(x).into_iter().enumerate() {
                input[i * n + c] = r;
            }
        }
        (from, to, xs, input, n)
    }

    #[test]
    fn fast_conversion_is_off_by_a_small_multiple_of_q() {
        let (from, to, xs, input, n) = setup();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let mut out = alloc::vec![0u64; to.len() * n];
        conv.fast_convert(&input, &mut out, n).unwrap();
        for (c, x) in xs.iter().enumerate() {
            let got: Vec<u64> = (0..to.len()).map(|j| out[j * n + c]).collect();
            let value = to.reconstruct(&got).unwrap();
            let diff = (value + to.product() - x) % to.product();
            let u = &diff / from.product();
            assert_eq!(&u * from.product(), diff, "difference is a multiple of Q");
            assert!(u < BigUint::from(from.len()));
        }
    }

    #[test]
    fn hps_exact_conversion_gives_the_centered_value() {
        let (from, to, xs, input, n) = setup();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let mut out = alloc::vec![0u64; to.len() * n];
        conv.exact_convert(&input, &mut out, n).unwrap();
        let half = from.product() >> 1usize;
        for (c, x) in xs.iter().enumerate() {
            let got: Vec<u64> = (0..to.len()).map(|j| out[j * n + c]).collect();
            let centered = if x > &half {
                BigInt::from_biguint(Sign::Plus, x.clone())
                    - BigInt::from_biguint(Sign::Plus, from.product().clone())
            } else {
                BigInt::from_biguint(Sign::Plus, x.clone())
            };
            assert_eq!(to.reconstruct_centered(&got).unwrap(), centered);
        }
    }

    #[test]
    fn shenoy_kumaresan_is_exact() {
        let (from, to, xs, input, n) = setup();
        let m_sk = Modulus::new(generate_ntt_primes(40, 1024, 1).unwrap()[0]).unwrap();
        let sk = ShenoyKumaresan::new(&from, &to, m_sk).unwrap();
        let msk: Vec<u64> = xs
            .iter()
            .map(|x| (x % m_sk.value()).to_u64().unwrap())
            .collect();
        let mut out = alloc::vec![0u64; to.len() * n];
        sk.convert(&input, &msk, &mut out, n).unwrap();
        for (c, x) in xs.iter().enumerate() {
            let got: Vec<u64> = (0..to.len()).map(|j| out[j * n + c]).collect();
            assert_eq!(&to.reconstruct(&got).unwrap(), x);
        }
        assert!(sk.convert(&input, &msk[1..], &mut out, n).is_err());
        assert!(ShenoyKumaresan::new(&from, &to, Modulus::new(3).unwrap()).is_err());
        assert!(ShenoyKumaresan::new(&from, &to, from.moduli()[0]).is_err());
    }

    #[test]
    fn length_errors() {
        let (from, to, _, input, n) = setup();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let mut out = alloc::vec![0u64; to.len() * n - 1];
        assert!(conv.fast_convert(&input, &mut out, n).is_err());
        assert!(conv.exact_convert(&input[1..], &mut out, n).is_err());
    }

    #[test]
    fn many_moduli_exercise_lazy_reduction() {
        // 40 × 30-bit source moduli: more than LAZY_TERMS products per output.
        let from = RnsBasis::new(&generate_ntt_primes(30, 1024, 40).unwrap()).unwrap();
        let to = RnsBasis::new(&generate_ntt_primes(62, 1024, 2).unwrap()).unwrap();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let x = BigInt::from(-123_456_789_012_345i64);
        let input = from.decompose_signed(&x);
        let mut out = [0u64; 2];
        conv.exact_convert(&input, &mut out, 1).unwrap();
        assert_eq!(to.reconstruct_centered(&out).unwrap(), x);
    }
}
