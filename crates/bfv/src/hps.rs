//! HPS multiplication (Halevi–Polyakov–Shoup, CT-RSA 2019, ePrint 2018/117, §4): extend both
//! ciphertexts exactly from Q to Q∪P, take the tensor product in the NTT domain, scale-and-round by
//! t/Q straight into P, and switch P back to Q exactly. Both exact steps are vsp-math's
//! ([`vsp_math::BaseConverter::exact_convert_range`], [`vsp_math::ScaleRound`]), with 128-bit
//! fixed-point overflow estimates, so the result equals the textbook ⌊t·x/Q⌉ coefficient for
//! coefficient.

use crate::arith::{ntt_primes, Modulus, NttTable};
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::poly;
use crate::rns::{exact_converter, scale_round, RnsBasis};

/// Bit size of the auxiliary primes P. Below 2^50 the NTT runs vsp-math's fastest kernels
/// (AVX-512 IFMA, else AVX2 with FMA), which beats the fewer 60-bit limbs the integer kernels need.
pub(crate) const P_BITS: u32 = 49;

/// Precomputations of HPS for one parameter set.
#[derive(Clone, Debug)]
pub struct HpsTools {
    pub(crate) p: RnsBasis,
    q_to_p: vsp_math::BaseConverter,
    p_to_q: vsp_math::BaseConverter,
    scaler: vsp_math::ScaleRound,
    qp_ntt: Vec<NttTable>,
    qp_mod: Vec<Modulus>,
}

impl HpsTools {
    /// Chooses P with log P ≥ log Q + log N + log t + 3, so that the tensor product (|x| ≤ N·Q²/2)
    /// is exact in Q·P and t·x/Q (|·| ≤ t·N·Q/2) is exact in P.
    pub fn new(q: &RnsBasis, t: u64) -> Result<Self> {
        Self::with_prime_bits(q, t, P_BITS)
    }

    /// [`Self::new`] with auxiliary primes of `bits` bits.
    pub fn with_prime_bits(q: &RnsBasis, t: u64, bits: u32) -> Result<Self> {
        let n = q.degree();
        let log_q = q.product().bits() as usize;
        let need = log_q + n.trailing_zeros() as usize + (64 - t.leading_zeros() as usize) + 3;
        let count = need.div_ceil(bits as usize - 1);
        let primes = ntt_primes(bits, n, count, &q.primes())?;
        let p = RnsBasis::new(n, &primes)?;
        let q_to_p = exact_converter(q, &p)?;
        let p_to_q = exact_converter(&p, q)?;
        let scaler = scale_round(q, p.math(), t, true)?;
        let (qp_ntt, qp_mod) = q.joined_with(&p);
        Ok(Self {
            p,
            q_to_p,
            p_to_q,
            scaler,
            qp_ntt,
            qp_mod,
        })
    }

    /// c over Q (coefficient form) → c over Q∪P in the NTT domain.
    fn extend_ntt(&self, c: &[u64], k: usize, n: usize, exec: &Exec) -> Result<Vec<u64>> {
        let l = self.p.len();
        let mut out = poly::take_empty((k + l) * n);
        out.extend_from_slice(c);
        out.resize((k + l) * n, 0);
        exec.try_per_coeff_range(n, l, &mut out[k * n..], |s, e, blk, stride| {
            self.q_to_p
                .exact_convert_range(c, n, s, e, blk, stride)
                .map_err(Error::from)
        })?;
        poly::forward(&self.qp_ntt, &mut out, n, exec);
        Ok(out)
    }

    /// ⌊t·e/Q⌉ over Q for a tensor-product polynomial e over Q∪P in the NTT domain.
    fn scale_down(&self, e: &mut [u64], k: usize, n: usize, exec: &Exec) -> Result<Vec<u64>> {
        let l = self.p.len();
        poly::inverse(&self.qp_ntt, e, n, exec);
        let (eq, ep) = e.split_at(k * n);
        let mut in_p = poly::take(l * n);
        exec.try_per_coeff_range(n, l, &mut in_p, |s, end, blk, stride| {
            self.scaler
                .scale_range(eq, ep, n, s, end, blk, stride)
                .map_err(Error::from)
        })?;
        let mut in_q = vec![0u64; k * n];
        exec.try_per_coeff_range(n, k, &mut in_q, |s, end, blk, stride| {
            self.p_to_q
                .exact_convert_range(&in_p, n, s, end, blk, stride)
                .map_err(Error::from)
        })?;
        poly::give(in_p);
        Ok(in_q)
    }

    /// The degree-2 product of two degree-1 ciphertexts (or the square when `b` is None),
    /// each given as (c0, c1) over Q in coefficient form.
    pub fn multiply(
        &self,
        q: &RnsBasis,
        a: [&[u64]; 2],
        b: Option<[&[u64]; 2]>,
        exec: &Exec,
    ) -> Result<[Vec<u64>; 3]> {
        let (n, k) = (q.degree(), q.len());
        let ext = poly::operands(a, b)
            .into_iter()
            .map(|c| self.extend_ntt(c, k, n, exec))
            .collect::<Result<Vec<_>>>()?;
        let prods = poly::tensor(&self.qp_mod, &ext, n, exec);
        ext.into_iter().for_each(poly::give);
        let mut out: [Vec<u64>; 3] = Default::default();
        for (o, mut e) in out.iter_mut().zip(prods) {
            *o = self.scale_down(&mut e, k, n, exec)?;
            poly::give(e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::ntt_primes;
    use rand::{Rng, SeedableRng};

    #[test]
    fn auxiliary_prime_size_does_not_change_the_product() {
        // HPS is exact: 49-bit (IFMA-friendly) and 60-bit auxiliary primes give the same words.
        let n = 64;
        let q = RnsBasis::new(n, &ntt_primes(44, n, 3, &[]).unwrap()).unwrap();
        let t = 65537;
        let small = HpsTools::with_prime_bits(&q, t, 49).unwrap();
        let large = HpsTools::with_prime_bits(&q, t, 60).unwrap();
        assert!(small.p.len() > large.p.len());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let polys: Vec<Vec<u64>> = (0..4)
            .map(|_| {
                q.moduli()
                    .iter()
                    .flat_map(|m| {
                        (0..n)
                            .map(|_| rng.gen_range(0..m.value()))
                            .collect::<Vec<_>>()
                    })
                    .collect()
            })
            .collect();
        let a = [polys[0].as_slice(), polys[1].as_slice()];
        let b = Some([polys[2].as_slice(), polys[3].as_slice()]);
        let seq = Exec::sequential();
        let want = large.multiply(&q, a, b, &seq).unwrap();
        assert_eq!(small.multiply(&q, a, b, &seq).unwrap(), want);
        let two = Exec::with_threads(2).unwrap();
        assert_eq!(small.multiply(&q, a, b, &two).unwrap(), want);
        assert_ne!(want[1], small.multiply(&q, a, None, &seq).unwrap()[1]);
    }
}
