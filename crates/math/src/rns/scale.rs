//! Scale-and-round between RNS bases (Halevi–Polyakov–Shoup, ePrint 2018/117, §2.3 and §4.2):
//! round(num·x/Q) modulo target moduli T for x given over Q (decryption: T = {t}) or over Q ∪ T
//! (BFV's HPS multiplication: T = P). The fractional parts of num·(Q∪T/q_i)^{-1}-weighted terms
//! are 128-bit fixed-point numbers, so the rounding is exact unless the true value lies within
//! k·2^−64 of a half-integer.

use alloc::vec::Vec;

use num_bigint::BigUint;
use num_traits::ToPrimitive;

use crate::error::{MathError, Result};
use crate::modulus::{Modulus, ShoupConst};
use crate::rns::basis::RnsBasis;
use crate::rns::convert::{
    check_range, fixed_mul_acc, fixed_point_fraction, fixed_round, lazy_dot, BLOCK,
};

/// Precomputed round(num·x/Q) from basis Q (optionally Q ∪ T) into basis T.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleRound {
    q: Vec<Modulus>,
    t: Vec<Modulus>,
    /// Fractional part of num·(T·w_i)/q_i as a 128-bit fixed-point number, w_i = [(Q·T/q_i)^{-1}]_{q_i}
    /// (T = 1 when the target is not part of the source).
    frac: Vec<(u64, u64)>,
    /// Integer part ⌊num·T·w_i/q_i⌋ mod t_j, row j.
    int_mod_t: Vec<u64>,
    /// Per target limb: num·(T/t_j)·[(Q·T/t_j)^{-1}]_{t_j} mod t_j (target in the source only).
    self_factor: Vec<ShoupConst>,
    target_in_source: bool,
}

fn big_mod(x: &BigUint, m: u64) -> u64 {
    (x % m).to_u64().unwrap_or(0)
}

impl ScaleRound {
    /// Constants for round(num·x/Q) into `t`; with `target_in_source` the input x lives in Q ∪ T
    /// (its T residues are passed separately), otherwise in Q only. Q and T must be coprime.
    pub fn new(q: &RnsBasis, t: &RnsBasis, num: u64, target_in_source: bool) -> Result<Self> {
        let t_prod = if target_in_source {
            t.product().clone()
        } else {
            BigUint::from(1u8)
        };
        let full = q.product() * &t_prod;
        let mut frac = Vec::with_capacity(q.len());
        let mut ints = Vec::with_capacity(q.len());
        for m in q.moduli() {
            let qi = m.value();
            let w = m.inv(big_mod(&(&full / qi), qi))?;
            let c = BigUint::from(num) * &t_prod * w;
            frac.push(fixed_point_fraction(&(&c % qi), &BigUint::from(qi)));
            ints.push(c / qi);
        }
        let mut int_mod_t = Vec::with_capacity(q.len() * t.len());
        for tj in t.moduli() {
            int_mod_t.extend(ints.iter().map(|x| big_mod(x, tj.value())));
        }
        let mut self_factor = Vec::new();
        if target_in_source {
            for tj in t.moduli() {
                let v = tj.value();
                let inv = tj.inv(big_mod(&(&full / v), v))?;
                let f = tj.mul(tj.mul(tj.reduce(num), big_mod(&(&t_prod / v), v)), inv);
                self_factor.push(tj.shoup(f));
            }
        }
        if q.moduli()
            .iter()
            .any(|a| t.moduli().iter().any(|b| a.value() == b.value()))
        {
            return Err(MathError::NotCoprime {
                a: q.moduli()[0].value(),
                b: t.moduli()[0].value(),
            });
        }
        Ok(Self {
            q: q.moduli().to_vec(),
            t: t.moduli().to_vec(),
            frac,
            int_mod_t,
            self_factor,
            target_in_source,
        })
    }

    /// Coefficients [start, end) of round(num·x/Q): `xq` is x over Q (k limbs of n words), `xt` x
    /// over T (read only when the target is in the source; may be empty otherwise); coefficient c of
    /// target limb j goes to `out[j·stride + c − start]`. Split ranges give bit-identical results.
    #[allow(clippy::too_many_arguments)]
    pub fn scale_range(
        &self,
        xq: &[u64],
        xt: &[u64],
        n: usize,
        start: usize,
        end: usize,
        out: &mut [u64],
        stride: usize,
    ) -> Result<()> {
        let k = self.q.len();
        let l = self.t.len();
        check_range(
            "scale-and-round input",
            xq.len(),
            k,
            n,
            (start, end),
            out.len(),
            (l, stride),
        )?;
        if self.target_in_source && Some(xt.len()) != l.checked_mul(n) {
            return Err(MathError::LengthMismatch {
                what: "scale-and-round target residues",
                expected: l.saturating_mul(n),
                got: xt.len(),
            });
        }
        let mut r = [0u64; BLOCK];
        let mut acc = [0u128; BLOCK];
        let mut b0 = start;
        while b0 < end {
            let w = BLOCK.min(end - b0);
            // r = round(Σ x_i·frac_i): at most k + 1 above the integer parts' sum, fits a word.
            for (c, rc) in r[..w].iter_mut().enumerate() {
                let (mut int, mut frac) = (0u64, 0u128);
                for (i, &f) in self.frac.iter().enumerate() {
                    fixed_mul_acc(&mut int, &mut frac, xq[i * n + b0 + c], f);
                }
                *rc = fixed_round(int, frac);
            }
            for (j, tj) in self.t.iter().enumerate() {
                let row = &self.int_mod_t[j * k..(j + 1) * k];
                for (a, &rc) in acc[..w].iter_mut().zip(&r[..w]) {
                    *a = tj.reduce(rc) as u128;
                }
                if self.target_in_source {
                    let f = self.self_factor[j];
                    let src = &xt[j * n + b0..j * n + b0 + w];
                    for (a, &x) in acc[..w].iter_mut().zip(src) {
                        *a += tj.mul_shoup(x, f) as u128;
                    }
                }
                // acc holds the reduced r (and the target's own term): below 2^63 together.
                let dst = &mut out[j * stride + b0 - start..j * stride + b0 - start + w];
                let column = |i: usize| &xq[i * n + b0..i * n + b0 + w];
                lazy_dot(&mut acc[..w], 1, row, column, tj, dst);
            }
            b0 += w;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;
    use num_bigint::{BigInt, Sign};
    use num_integer::Integer;
    use rand::{Rng, SeedableRng};

    /// round(num·x/Q) for x ∈ [0, M) read centered in (−M/2, M/2], reduced mod t (big integers).
    fn reference(x: &BigUint, m: &BigUint, q: &BigUint, num: u64, t: u64) -> u64 {
        let xc = if x > &(m >> 1usize) {
            BigInt::from_biguint(Sign::Plus, x.clone())
                - BigInt::from_biguint(Sign::Plus, m.clone())
        } else {
            BigInt::from_biguint(Sign::Plus, x.clone())
        };
        let qb = BigInt::from_biguint(Sign::Plus, q.clone());
        let num2: BigInt = xc * 2 * num + &qb;
        let r = num2.div_floor(&(qb * 2u32));
        r.mod_floor(&BigInt::from(t)).to_u64().unwrap()
    }

    fn random_below(rng: &mut impl Rng, m: &BigUint) -> BigUint {
        let words = m.to_u64_digits().len() * 2 + 2;
        BigUint::new((0..words).map(|_| rng.gen()).collect()) % m
    }

    #[test]
    fn decryption_rounding_matches_big_integers() {
        // 4 × 50 bits, and 20 × 30 bits (more terms than one lazy chunk holds).
        for (bits, count) in [(50, 4), (30, 20)] {
            decryption_case(bits, count);
        }
    }

    fn decryption_case(bits: u32, count: usize) {
        let q = RnsBasis::new(&generate_ntt_primes(bits, 1024, count).unwrap()).unwrap();
        let t = RnsBasis::new(&[65537]).unwrap();
        let s = ScaleRound::new(&q, &t, 65537, false).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let n = 300;
        let xs: Vec<BigUint> = (0..n)
            .map(|_| random_below(&mut rng, q.product()))
            .collect();
        let mut xq = alloc::vec![0u64; count * n];
        for (c, x) in xs.iter().enumerate() {
            for (i, r) in q.decompose(x).into_iter().enumerate() {
                xq[i * n + c] = r;
            }
        }
        let mut out = alloc::vec![0u64; n];
        s.scale_range(&xq, &[], n, 0, n, &mut out, n).unwrap();
        for (c, x) in xs.iter().enumerate() {
            // Decryption reads x in [0, Q): round(t·x/Q) mod t.
            let want = ((x * 65537u64 * 2u64 + q.product()) / (q.product() * 2u64)) % 65537u64;
            assert_eq!(BigUint::from(out[c]), want);
        }
        // A split range gives the same words.
        let mut part = alloc::vec![0u64; 100];
        s.scale_range(&xq, &[], n, 150, 250, &mut part, 100)
            .unwrap();
        assert_eq!(&part[..], &out[150..250]);
    }

    #[test]
    fn hps_scaling_into_the_target_matches_big_integers() {
        let qs = generate_ntt_primes(44, 1024, 3).unwrap();
        let ps: Vec<u64> = generate_ntt_primes(60, 1024, 4).unwrap();
        let q = RnsBasis::new(&qs).unwrap();
        let p = RnsBasis::new(&ps).unwrap();
        let qp = q.extend(&p).unwrap();
        let t = 65537;
        let s = ScaleRound::new(&q, &p, t, true).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let n = 200;
        // |x| < Q·P/(2t) so that t·x/Q fits the centered range of P.
        let bound: BigUint = qp.product() / (2u64 * t);
        let xs: Vec<BigUint> = (0..n)
            .map(|c| {
                let v = random_below(&mut rng, &bound);
                if c % 2 == 0 {
                    v
                } else {
                    qp.product() - v
                }
            })
            .collect();
        let (k, l) = (q.len(), p.len());
        let mut xq = alloc::vec![0u64; k * n];
        let mut xp = alloc::vec![0u64; l * n];
        for (c, x) in xs.iter().enumerate() {
            let r = qp.decompose(x);
            for i in 0..k {
                xq[i * n + c] = r[i];
            }
            for j in 0..l {
                xp[j * n + c] = r[k + j];
            }
        }
        let mut out = alloc::vec![0u64; l * n];
        s.scale_range(&xq, &xp, n, 0, n, &mut out, n).unwrap();
        for (c, x) in xs.iter().enumerate() {
            for (j, pj) in ps.iter().enumerate() {
                assert_eq!(
                    out[j * n + c],
                    reference(x, qp.product(), q.product(), t, *pj)
                );
            }
        }
        assert!(s.scale_range(&xq, &xp[1..], n, 0, n, &mut out, n).is_err());
        assert!(s.scale_range(&xq, &xp, n, 0, n + 1, &mut out, n).is_err());
        assert!(s.scale_range(&xq, &xp, n, 0, n, &mut out[1..], n).is_err());
        assert!(ScaleRound::new(&q, &q, t, true).is_err());
    }
}
