//! RNS bases and the exact conversions the RNS variants of BFV need.
//!
//! A polynomial over an RNS basis is stored limb-major: limb i holds its n residues modulo q_i
//! contiguously. The exact conversions follow Halevi–Polyakov–Shoup (ePrint 2018/117): the overflow
//! count of the CRT sum is the rounded sum of y_i/q_i, estimated here with 128-bit fixed-point
//! fractions instead of doubles, so that the estimate is exact for up to 2^60 limbs of 62 bits.

use crate::arith::{Modulus, NttTable};
use crate::error::{Error, Result};
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};

/// A set of pairwise coprime NTT-friendly primes for one ring degree.
#[derive(Clone, Debug)]
pub struct RnsBasis {
    n: usize,
    moduli: Vec<Modulus>,
    ntt: Vec<NttTable>,
    product: BigUint,
    /// [(Q/q_i)^{-1}]_{q_i} and its Shoup constant.
    qhat_inv: Vec<(u64, u64)>,
}

/// ⌊2^128·r/q⌋ for r < q as a 128-bit fixed-point fraction.
pub(crate) fn frac128(r: &BigUint, q: &BigUint) -> u128 {
    ((r << 128u32) / q).to_u128().unwrap_or(u128::MAX)
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
        let product = primes.iter().fold(BigUint::one(), |acc, &q| acc * q);
        let qhat_inv = moduli
            .iter()
            .map(|m| {
                let qhat = big_mod(&(&product / m.value()), m.value());
                let inv = m.inv(qhat).unwrap_or(0);
                (inv, m.shoup(inv))
            })
            .collect();
        Ok(Self {
            n,
            moduli,
            ntt,
            product,
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
    /// The product of the moduli.
    pub fn product(&self) -> &BigUint {
        &self.product
    }
    /// [(Q/q_i)^{-1}]_{q_i} with its Shoup constant.
    pub fn qhat_inv(&self) -> &[(u64, u64)] {
        &self.qhat_inv
    }

    /// CRT reconstruction of coefficient `j` of a limb-major polynomial, in [0, Q).
    pub fn reconstruct(&self, poly: &[u64], j: usize) -> BigUint {
        let mut acc = BigUint::zero();
        for (i, m) in self.moduli.iter().enumerate() {
            let (w, ws) = self.qhat_inv[i];
            let y = m.mul_shoup(poly[i * self.n + j], w, ws);
            acc += (&self.product / m.value()) * y;
        }
        acc % &self.product
    }
}

/// Exact conversion of centered values from basis A (|x| < A/2) to basis B: the HPS base extension.
#[derive(Clone, Debug)]
pub struct BaseConverter {
    n: usize,
    from: Vec<Modulus>,
    from_qhat_inv: Vec<(u64, u64)>,
    /// 2^128/q_i as (hi, lo) words of a fixed-point number.
    from_inv: Vec<(u64, u64)>,
    to: Vec<Modulus>,
    /// (A/a_i) mod b_j, indexed [j][i].
    qhat_mod_to: Vec<Vec<u64>>,
    /// (−A) mod b_j.
    neg_a_mod_to: Vec<u64>,
}

impl BaseConverter {
    /// Converter from `a` to the moduli `to` (which must be coprime to a's).
    pub fn new(a: &RnsBasis, to: &[Modulus]) -> Self {
        let from_inv = a
            .moduli
            .iter()
            .map(|m| {
                let f = frac128(&BigUint::one(), &BigUint::from(m.value()));
                ((f >> 64) as u64, f as u64)
            })
            .collect();
        let qhat_mod_to = to
            .iter()
            .map(|b| {
                a.moduli
                    .iter()
                    .map(|m| big_mod(&(&a.product / m.value()), b.value()))
                    .collect()
            })
            .collect();
        let neg_a_mod_to = to
            .iter()
            .map(|b| b.neg(big_mod(&a.product, b.value())))
            .collect();
        Self {
            n: a.n,
            from: a.moduli.clone(),
            from_qhat_inv: a.qhat_inv.clone(),
            from_inv,
            to: to.to_vec(),
            qhat_mod_to,
            neg_a_mod_to,
        }
    }

    /// Converts coefficients [start, end) of `input` (limb-major over A) into `out`: coefficient c of
    /// target limb j goes to out[j·stride + c − start].
    pub fn convert_range(
        &self,
        input: &[u64],
        out: &mut [u64],
        start: usize,
        end: usize,
        stride: usize,
    ) {
        let k = self.from.len();
        let n = self.n;
        let mut y = vec![0u64; k];
        for c in start..end {
            // y_i = x_i·(A/a_i)^{-1} mod a_i; v = round(Σ y_i/a_i) is the CRT overflow.
            let mut frac: u128 = 0;
            let mut int: u64 = 0;
            for i in 0..k {
                let (w, ws) = self.from_qhat_inv[i];
                let yi = self.from[i].mul_shoup(input[i * n + c], w, ws);
                y[i] = yi;
                let (hi, lo) = self.from_inv[i];
                let a = yi as u128 * hi as u128;
                let b = (yi as u128 * lo as u128) >> 64;
                int += (a >> 64) as u64;
                frac += (a as u64) as u128 + b;
            }
            let v = int + ((frac + (1u128 << 63)) >> 64) as u64;
            for (j, b) in self.to.iter().enumerate() {
                let row = &self.qhat_mod_to[j];
                // v ≤ number of limbs, far below any 2N-friendly prime: no reduction needed.
                let mut acc: u128 = b.mul(v, self.neg_a_mod_to[j]) as u128;
                for (chunk_y, chunk_r) in y.chunks(8).zip(row.chunks(8)) {
                    for (yi, r) in chunk_y.iter().zip(chunk_r) {
                        acc += *yi as u128 * *r as u128;
                    }
                    acc = b.reduce_u128(acc) as u128;
                }
                out[j * stride + c - start] = acc as u64;
            }
        }
    }
}

/// Computes round(num·x/Q) modulo target moduli T, where x is given over Q (and, when
/// `target_in_source`, also over T, i.e. x lives in Q∪T): decryption (T = {t}) and HPS's
/// scale-and-round (T = P).
#[derive(Clone, Debug)]
pub struct ScaleRounder {
    n: usize,
    q: Vec<Modulus>,
    /// Fixed-point fractional part of num·P·w_i/q_i as (hi, lo).
    frac: Vec<(u64, u64)>,
    /// Integer part ⌊num·P·w_i/q_i⌋ mod T_j, indexed [j][i].
    int_mod_t: Vec<Vec<u64>>,
    t: Vec<Modulus>,
    /// Per target limb: num·(T/t_j)·[(Q·T/t_j)^{-1}]_{t_j} mod t_j with Shoup constant.
    self_factor: Vec<(u64, u64)>,
    target_in_source: bool,
}

impl ScaleRounder {
    /// Builds the rounder for round(num·x/Q) into `t`.
    pub fn new(q: &RnsBasis, t: &[Modulus], num: u64, target_in_source: bool) -> Result<Self> {
        let p_prod: BigUint = if target_in_source {
            t.iter().fold(BigUint::one(), |a, m| a * m.value())
        } else {
            BigUint::one()
        };
        let full = q.product() * &p_prod;
        let mut frac = Vec::new();
        let mut ints = Vec::new();
        for m in q.moduli() {
            let qi = m.value();
            let hat = big_mod(&(&full / qi), qi);
            let w = m
                .inv(hat)
                .ok_or_else(|| Error::InvalidParameters("basis not coprime".into()))?;
            let c = BigUint::from(num) * &p_prod * w;
            let f = frac128(&(&c % qi), &BigUint::from(qi));
            frac.push(((f >> 64) as u64, f as u64));
            ints.push(c / qi);
        }
        let int_mod_t = t
            .iter()
            .map(|tj| ints.iter().map(|x| big_mod(x, tj.value())).collect())
            .collect();
        let mut self_factor = Vec::new();
        if target_in_source {
            for tj in t {
                let v = tj.value();
                let hat = big_mod(&(&full / v), v);
                let inv = tj
                    .inv(hat)
                    .ok_or_else(|| Error::InvalidParameters("basis not coprime".into()))?;
                let f = tj.mul(tj.mul(num % v, big_mod(&(&p_prod / v), v)), inv);
                self_factor.push((f, tj.shoup(f)));
            }
        }
        Ok(Self {
            n: q.degree(),
            q: q.moduli().to_vec(),
            frac,
            int_mod_t,
            t: t.to_vec(),
            self_factor,
            target_in_source,
        })
    }

    /// Coefficients [start, end): `xq` limb-major over Q, `xt` limb-major over T (read only when the
    /// target is in the source); coefficient c of target limb j goes to out[j·stride + c − start].
    #[allow(clippy::too_many_arguments)]
    pub fn scale_range(
        &self,
        xq: &[u64],
        xt: &[u64],
        out: &mut [u64],
        start: usize,
        end: usize,
        stride: usize,
    ) {
        let n = self.n;
        let k = self.q.len();
        for c in start..end {
            let mut frac: u128 = 0;
            let mut int: u128 = 0;
            for i in 0..k {
                let x = xq[i * n + c];
                let (hi, lo) = self.frac[i];
                let a = x as u128 * hi as u128;
                int += a >> 64;
                frac += (a as u64) as u128 + ((x as u128 * lo as u128) >> 64);
            }
            let r = int + ((frac + (1u128 << 63)) >> 64);
            for (j, tj) in self.t.iter().enumerate() {
                let row = &self.int_mod_t[j];
                let mut acc: u128 = tj.reduce_u128(r) as u128;
                if self.target_in_source {
                    let (f, fs) = self.self_factor[j];
                    acc += tj.mul_shoup(xt[j * n + c], f, fs) as u128;
                }
                let mut i0 = 0;
                while i0 < k {
                    let i1 = (i0 + 8).min(k);
                    for (i, r) in row.iter().enumerate().take(i1).skip(i0) {
                        acc += xq[i * n + c] as u128 * *r as u128;
                    }
                    acc = tj.reduce_u128(acc) as u128;
                    i0 = i1;
                }
                out[j * stride + c - start] = acc as u64;
            }
        }
    }
}
