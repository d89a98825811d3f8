//! HPS multiplication (Halevi–Polyakov–Shoup, CT-RSA 2019, ePrint 2018/117, §4): extend both
//! ciphertexts exactly from Q to Q∪P, take the tensor product in the NTT domain, scale-and-round by
//! t/Q straight into P, and switch P back to Q exactly. Both exact steps use the CRT overflow
//! estimate of [`crate::rns`], so the result equals the textbook ⌊t·x/Q⌉ coefficient for coefficient.

use crate::arith::{ntt_primes, Modulus, NttTable};
use crate::error::Result;
use crate::exec::Exec;
use crate::poly;
use crate::rns::{BaseConverter, RnsBasis, ScaleRounder};

/// Precomputations of HPS for one parameter set.
#[derive(Clone, Debug)]
pub struct HpsTools {
    pub(crate) p: RnsBasis,
    q_to_p: BaseConverter,
    p_to_q: BaseConverter,
    scaler: ScaleRounder,
    qp_ntt: Vec<NttTable>,
    qp_mod: Vec<Modulus>,
}

impl HpsTools {
    /// Chooses P with log P ≥ log Q + log N + log t + 3, so that the tensor product (|x| ≤ N·Q²/2)
    /// is exact in Q·P and t·x/Q (|·| ≤ t·N·Q/2) is exact in P.
    pub fn new(q: &RnsBasis, t: u64) -> Result<Self> {
        let n = q.degree();
        let log_q = q.product().bits() as usize;
        let need = log_q + n.trailing_zeros() as usize + (64 - t.leading_zeros() as usize) + 3;
        let count = need.div_ceil(59);
        let primes = ntt_primes(60, n, count, &q.primes())?;
        let p = RnsBasis::new(n, &primes)?;
        let q_to_p = BaseConverter::new(q, p.moduli());
        let p_to_q = BaseConverter::new(&p, q.moduli());
        let scaler = ScaleRounder::new(q, p.moduli(), t, true)?;
        let qp_ntt = q.ntt().iter().chain(p.ntt()).cloned().collect();
        let qp_mod = q.moduli().iter().chain(p.moduli()).copied().collect();
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
    fn extend_ntt(&self, c: &[u64], k: usize, n: usize, exec: &Exec) -> Vec<u64> {
        let l = self.p.len();
        let mut out = vec![0u64; (k + l) * n];
        out[..k * n].copy_from_slice(c);
        exec.per_coeff_range(n, l, &mut out[k * n..], |s, e, blk, stride| {
            self.q_to_p.convert_range(c, blk, s, e, stride)
        });
        poly::forward(&self.qp_ntt, &mut out, n, exec);
        out
    }

    /// The degree-2 product of two degree-1 ciphertexts (or the square when `b` is None),
    /// each given as (c0, c1) over Q in coefficient form.
    pub fn multiply(
        &self,
        q: &RnsBasis,
        a: [&[u64]; 2],
        b: Option<[&[u64]; 2]>,
        exec: &Exec,
    ) -> [Vec<u64>; 3] {
        let n = q.degree();
        let k = q.len();
        let mut ext: Vec<Vec<u64>> = match b {
            Some(b) => vec![a[0], a[1], b[0], b[1]],
            None => vec![a[0], a[1]],
        }
        .into_iter()
        .map(|c| c.to_vec())
        .collect();
        exec.per_item(&mut ext, |_, c| {
            *c = self.extend_ntt(c, k, n, &Exec::sequential())
        });
        let m = &self.qp_mod;
        let mut prods = poly::tensor(m, &ext, n);
        exec.per_item(&mut prods, |_, e| {
            let seq = Exec::sequential();
            poly::inverse(&self.qp_ntt, e, n, &seq);
            let l = self.p.len();
            let mut in_p = vec![0u64; l * n];
            self.scaler
                .scale_range(&e[..k * n], &e[k * n..], &mut in_p, 0, n, n);
            let mut in_q = vec![0u64; k * n];
            self.p_to_q.convert_range(&in_p, &mut in_q, 0, n, n);
            *e = in_q;
        });
        let mut it = prods.into_iter();
        let e0 = it.next().unwrap_or_default();
        let e1 = it.next().unwrap_or_default();
        let e2 = it.next().unwrap_or_default();
        [e0, e1, e2]
    }
}
