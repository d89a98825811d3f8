//! BEHZ multiplication (Bajard, Eynard, Hasan, Zucca, "A Full RNS Variant of FV like Somewhat
//! Homomorphic Encryption Schemes", SAC 2016), in the form of SEAL's `bfv_multiply`: fast base
//! conversion of both inputs to Bsk ∪ {m̃}, small Montgomery reduction modulo m̃ = 2^32 to remove
//! the α·q overflow, tensor product in q ∪ Bsk, fast floor of t·x/q into Bsk, and the exact
//! Shenoy–Kumaresan conversion Bsk → q with the redundant modulus m_sk. All arithmetic is integer; the
//! plain fast conversions are vsp-math's [`vsp_math::BaseConverter::fast_convert`], the one with the m̃
//! factor and residue is [`FastConv`] here.

use crate::arith::{ntt_primes, Modulus, NttTable};
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::poly;
use crate::rns::{big_mod, single, RnsBasis};
use num_bigint::BigUint;
use num_traits::One;

const M_TILDE_BITS: u32 = 32;
const M_TILDE_MASK: u64 = (1 << M_TILDE_BITS) - 1;

/// Fast (approximate) base conversion Σ [x_i·f·(A/a_i)^{-1}]_{a_i}·(A/a_i) mod b_j: the result
/// is x·f + α·A with 0 ≤ α < |A|.
#[derive(Clone, Debug)]
struct FastConv {
    n: usize,
    from: Vec<Modulus>,
    factor_inv: Vec<(u64, u64)>,
    to: Vec<Modulus>,
    hat_mod_to: Vec<Vec<u64>>,
    /// (A/a_i) mod 2^32 when converting to m̃ as well.
    hat_mod_mtilde: Option<Vec<u64>>,
}

impl FastConv {
    fn new(a: &RnsBasis, factor: u64, to: &[Modulus], mtilde: bool) -> Result<Self> {
        let mut factor_inv = Vec::new();
        for (m, &(w, _)) in a.moduli().iter().zip(a.qhat_inv()) {
            let f = m.mul(w, m.reduce(factor));
            factor_inv.push((f, m.shoup(f)));
        }
        let hats: Vec<BigUint> = a.moduli().iter().map(|m| a.product() / m.value()).collect();
        let hat_mod_to = to
            .iter()
            .map(|b| hats.iter().map(|h| big_mod(h, b.value())).collect())
            .collect();
        let hat_mod_mtilde =
            mtilde.then(|| hats.iter().map(|h| big_mod(h, 1 << M_TILDE_BITS)).collect());
        if a.moduli()
            .iter()
            .any(|m| to.iter().any(|b| b.value() == m.value()))
        {
            return Err(Error::InvalidParameters("BEHZ bases overlap".into()));
        }
        Ok(Self {
            n: a.degree(),
            from: a.moduli().to_vec(),
            factor_inv,
            to: to.to_vec(),
            hat_mod_to,
            hat_mod_mtilde,
        })
    }

    /// Converts all n coefficients of `input` into `out` (limb-major over `to`), and into `mt` (the
    /// m̃ residues) when configured.
    fn convert(&self, input: &[u64], out: &mut [u64], mut mt: Option<&mut [u64]>) {
        let n = self.n;
        let k = self.from.len();
        let mut y = vec![0u64; k];
        for c in 0..n {
            for i in 0..k {
                let (f, fs) = self.factor_inv[i];
                y[i] = self.from[i].mul_shoup(input[i * n + c], f, fs);
            }
            for (j, b) in self.to.iter().enumerate() {
                let row = &self.hat_mod_to[j];
                let mut acc: u128 = 0;
                let mut i0 = 0;
                while i0 < k {
                    let i1 = (i0 + 8).min(k);
                    for i in i0..i1 {
                        acc += y[i] as u128 * row[i] as u128;
                    }
                    acc = b.reduce_u128(acc) as u128;
                    i0 = i1;
                }
                out[j * n + c] = acc as u64;
            }
            if let (Some(mt), Some(row)) = (mt.as_deref_mut(), &self.hat_mod_mtilde) {
                let mut acc = 0u64;
                for i in 0..k {
                    acc = acc.wrapping_add(y[i].wrapping_mul(row[i]));
                }
                mt[c] = acc & M_TILDE_MASK;
            }
        }
    }
}

/// Precomputations of BEHZ for one parameter set.
#[derive(Clone, Debug)]
pub struct BehzTools {
    /// Bsk = B ∪ {m_sk}; the last limb is m_sk.
    bsk: RnsBasis,
    b_len: usize,
    q_to_bsk_mtilde: FastConv,
    q_to_bsk: vsp_math::BaseConverter,
    b_to_q: vsp_math::BaseConverter,
    b_to_msk: vsp_math::BaseConverter,
    /// −q^{-1} mod m̃.
    neg_inv_q_mtilde: u64,
    /// q mod Bsk_j and m̃^{-1} mod Bsk_j.
    q_mod_bsk: Vec<u64>,
    inv_mtilde_bsk: Vec<(u64, u64)>,
    /// q^{-1} mod Bsk_j.
    inv_q_bsk: Vec<(u64, u64)>,
    /// B^{-1} mod m_sk, B mod q_i.
    inv_b_msk: u64,
    b_mod_q: Vec<u64>,
    qb_ntt: Vec<NttTable>,
    qb_mod: Vec<Modulus>,
}

impl BehzTools {
    /// B gets enough 61-bit primes that |⌊t·x/q⌉| < B/2 for every tensor product x.
    pub fn new(q: &RnsBasis, t: u64) -> Result<Self> {
        let n = q.degree();
        let k = q.len();
        let need = q.product().bits() as usize
            + (64 - t.leading_zeros() as usize)
            + n.trailing_zeros() as usize
            + 2 * (usize::BITS - k.leading_zeros()) as usize
            + M_TILDE_BITS as usize
            + 4;
        let b_len = need.div_ceil(60).max(k);
        let primes = ntt_primes(61, n, b_len + 1, &q.primes())?;
        let b = RnsBasis::new(n, &primes[..b_len])?;
        let bsk = RnsBasis::new(n, &primes)?;
        let msk = *bsk
            .moduli()
            .last()
            .ok_or(Error::Precondition("empty Bsk"))?;
        let q_to_bsk_mtilde = FastConv::new(q, 1 << M_TILDE_BITS, bsk.moduli(), true)?;
        let fast = |from: &RnsBasis, to: &vsp_math::RnsBasis| {
            vsp_math::BaseConverter::new(from.math(), to).map_err(Error::from)
        };
        let q_to_bsk = fast(q, bsk.math())?;
        let b_to_q = fast(&b, q.math())?;
        let b_to_msk = fast(&b, &single(msk.value())?)?;
        let q_mod_mt = big_mod(q.product(), 1 << M_TILDE_BITS);
        // q is odd, so it is invertible modulo 2^32 (Newton iteration).
        let mut inv = 1u64;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(q_mod_mt.wrapping_mul(inv))) & M_TILDE_MASK;
        }
        let neg_inv_q_mtilde = (1u64 << M_TILDE_BITS).wrapping_sub(inv) & M_TILDE_MASK;
        let mut q_mod_bsk = Vec::new();
        let mut inv_mtilde_bsk = Vec::new();
        let mut inv_q_bsk = Vec::new();
        for m in bsk.moduli() {
            let qm = big_mod(q.product(), m.value());
            q_mod_bsk.push(qm);
            let im = m
                .inv(1 << M_TILDE_BITS)
                .ok_or(Error::Precondition("m̃ not invertible"))?;
            inv_mtilde_bsk.push((im, m.shoup(im)));
            let iq = m
                .inv(qm)
                .ok_or(Error::Precondition("q not invertible mod Bsk"))?;
            inv_q_bsk.push((iq, m.shoup(iq)));
        }
        let b_prod = primes[..b_len].iter().fold(BigUint::one(), |a, &p| a * p);
        let inv_b_msk = msk
            .inv(big_mod(&b_prod, msk.value()))
            .ok_or(Error::Precondition("B not invertible"))?;
        let b_mod_q = q
            .moduli()
            .iter()
            .map(|m| big_mod(&b_prod, m.value()))
            .collect();
        let (qb_ntt, qb_mod) = q.joined_with(&bsk);
        Ok(Self {
            bsk,
            b_len,
            q_to_bsk_mtilde,
            q_to_bsk,
            b_to_q,
            b_to_msk,
            neg_inv_q_mtilde,
            q_mod_bsk,
            inv_mtilde_bsk,
            inv_q_bsk,
            inv_b_msk,
            b_mod_q,
            qb_ntt,
            qb_mod,
        })
    }

    /// c over q → c + α'·q over q ∪ Bsk (|α'| ≤ 1), NTT domain (steps 1–3 of BEHZ).
    fn lift_ntt(&self, c: &[u64], k: usize, n: usize) -> Vec<u64> {
        let l = self.bsk.len();
        let mut out = vec![0u64; (k + l) * n];
        out[..k * n].copy_from_slice(c);
        let mut mt = vec![0u64; n];
        let mut tmp = vec![0u64; l * n];
        self.q_to_bsk_mtilde.convert(c, &mut tmp, Some(&mut mt));
        // Small Montgomery reduction: r = −x·q^{-1} mod m̃ (centered), (x + q·r)/m̃ in Bsk.
        let half = 1u64 << (M_TILDE_BITS - 1);
        for (j, m) in self.bsk.moduli().iter().enumerate() {
            let (im, ims) = self.inv_mtilde_bsk[j];
            let qm = self.q_mod_bsk[j];
            let dst = &mut out[(k + j) * n..(k + j + 1) * n];
            for (c_idx, d) in dst.iter_mut().enumerate() {
                let r = mt[c_idx].wrapping_mul(self.neg_inv_q_mtilde) & M_TILDE_MASK;
                let qr = if r >= half {
                    m.neg(m.mul(qm, (1u64 << M_TILDE_BITS) - r))
                } else {
                    m.mul(qm, r)
                };
                *d = m.mul_shoup(m.add(tmp[j * n + c_idx], qr), im, ims);
            }
        }
        poly::forward(&self.qb_ntt, &mut out, n, &Exec::sequential());
        out
    }

    /// ⌊t·x/q⌉ over q ∪ Bsk (coefficient form) → result over q (steps 6–8: fast floor, SK).
    fn floor_and_convert(&self, x: &mut [u64], k: usize, n: usize, t: u64) -> Result<Vec<u64>> {
        let l = self.bsk.len();
        for (i, m) in self.qb_mod.iter().enumerate() {
            let tm = m.reduce(t);
            let ts = m.shoup(tm);
            x[i * n..(i + 1) * n]
                .iter_mut()
                .for_each(|v| *v = m.mul_shoup(*v, tm, ts));
        }
        let mut conv = vec![0u64; l * n];
        self.q_to_bsk.fast_convert(&x[..k * n], &mut conv, n)?;
        let mut floor = vec![0u64; l * n];
        for (j, m) in self.bsk.moduli().iter().enumerate() {
            let (iq, iqs) = self.inv_q_bsk[j];
            for c in 0..n {
                let v = m.sub(x[(k + j) * n + c], conv[j * n + c]);
                floor[j * n + c] = m.mul_shoup(v, iq, iqs);
            }
        }
        // Shenoy–Kumaresan: the m_sk residue reveals the overflow of the conversion from B.
        let mut out = vec![0u64; k * n];
        self.b_to_q
            .fast_convert(&floor[..self.b_len * n], &mut out, n)?;
        let mut in_msk = vec![0u64; n];
        self.b_to_msk
            .fast_convert(&floor[..self.b_len * n], &mut in_msk, n)?;
        let msk = self.bsk.moduli()[self.b_len];
        let x_msk = &floor[self.b_len * n..];
        for c in 0..n {
            let alpha = msk.mul(msk.sub(in_msk[c], x_msk[c]), self.inv_b_msk);
            let negative = alpha > msk.value() / 2;
            for (i, m) in self.qb_mod[..k].iter().enumerate() {
                let o = &mut out[i * n + c];
                if negative {
                    let a = m.reduce(msk.value() - alpha);
                    *o = m.add(*o, m.mul(a, self.b_mod_q[i]));
                } else {
                    *o = m.sub(*o, m.mul(m.reduce(alpha), self.b_mod_q[i]));
                }
            }
        }
        Ok(out)
    }

    /// The degree-2 product of two degree-1 ciphertexts (or the square when `b` is None).
    pub fn multiply(
        &self,
        q: &RnsBasis,
        t: u64,
        a: [&[u64]; 2],
        b: Option<[&[u64]; 2]>,
        exec: &Exec,
    ) -> Result<[Vec<u64>; 3]> {
        let (n, k) = (q.degree(), q.len());
        let mut ext: Vec<Vec<u64>> = poly::operands(a, b)
            .into_iter()
            .map(<[u64]>::to_vec)
            .collect();
        exec.per_item(&mut ext, |_, c| *c = self.lift_ntt(c, k, n));
        let m = &self.qb_mod;
        let mut prods: [Result<Vec<u64>>; 3] =
            poly::tensor(m, &ext, n, &Exec::sequential()).map(Ok);
        exec.per_item(&mut prods, |_, e| {
            if let Ok(x) = e {
                poly::inverse(&self.qb_ntt, x, n, &Exec::sequential());
                *e = self.floor_and_convert(x, k, n, t);
            }
        });
        let [e0, e1, e2] = prods;
        Ok([e0?, e1?, e2?])
    }
}

/// BEHZ decryption (SEAL's `Decryptor::decrypt` → `RNSTool::decrypt_scale_and_round`): the integer
/// alternative to HPS's fixed-point scale-and-round. With a 61-bit prime γ coprime to q and t:
/// y = [t·γ·x]_q per limb, fast base conversion q → {t, γ} (which adds α·q, 0 ≤ α < k), times
/// −q^{-1} mod {t, γ}; the γ residue, centered, cancels the rounding and the α·q error, and a final
/// γ^{-1} mod t gives m = ⌊t·x/q⌉ mod t. Exact while the noise leaves ≥ 1 bit of budget (and
/// k ≤ γ/(2t)); tested against HPS decryption.
#[derive(Clone, Debug)]
pub struct BehzDecryptor {
    params: std::sync::Arc<crate::BfvParameters>,
    n: usize,
    gamma: Modulus,
    t: Modulus,
    /// (t·γ mod q_i) with its Shoup constant.
    t_gamma_mod_q: Vec<(u64, u64)>,
    conv: FastConv,
    /// −q^{-1} mod t and mod γ.
    neg_inv_q_t: u64,
    neg_inv_q_gamma: u64,
    /// γ^{-1} mod t.
    inv_gamma_t: u64,
}

impl BehzDecryptor {
    /// Precomputations for `params`.
    pub fn new(params: &std::sync::Arc<crate::BfvParameters>) -> Result<Self> {
        let q = &params.q;
        let n = q.degree();
        let t_val = params.plaintext_modulus();
        let mut exclude = q.primes();
        exclude.push(t_val);
        let gamma_val = *ntt_primes(61, n, 1, &exclude)?
            .first()
            .ok_or(Error::Precondition("no γ prime"))?;
        let gamma = Modulus::new(gamma_val)?;
        let t = Modulus::new(t_val)?;
        let t_gamma_mod_q = q
            .moduli()
            .iter()
            .map(|m| {
                let v = m.reduce_u128(t_val as u128 * gamma_val as u128);
                (v, m.shoup(v))
            })
            .collect();
        let conv = FastConv::new(q, 1, &[t, gamma], false)?;
        let neg_inv = |m: &Modulus| -> Result<u64> {
            let qm = big_mod(q.product(), m.value());
            let inv = m
                .inv(qm)
                .ok_or_else(|| Error::InvalidParameters("q and t share a factor".into()))?;
            Ok(m.neg(inv))
        };
        let inv_gamma_t = t
            .inv(t.reduce(gamma_val))
            .ok_or(Error::Precondition("γ not invertible mod t"))?;
        Ok(Self {
            params: params.clone(),
            n,
            neg_inv_q_t: neg_inv(&t)?,
            neg_inv_q_gamma: neg_inv(&gamma)?,
            gamma,
            t,
            t_gamma_mod_q,
            conv,
            inv_gamma_t,
        })
    }

    /// Decrypts with `sk` through BEHZ scale-and-round.
    pub fn decrypt(
        &self,
        sk: &crate::SecretKey,
        ct: &crate::Ciphertext,
    ) -> Result<crate::Plaintext> {
        if sk.parameters().id() != self.params.id() {
            return Err(Error::ParameterMismatch("secret key from other parameters"));
        }
        let x = sk.phase(ct)?;
        Ok(crate::Plaintext {
            params_id: self.params.id(),
            coeffs: self.scale_and_round(&x),
        })
    }

    /// m = ⌊t·x/q⌉ mod t for x over q (coefficient form, limb-major).
    pub(crate) fn scale_and_round(&self, x: &[u64]) -> Vec<u64> {
        let n = self.n;
        let mut y = x.to_vec();
        for (i, (m, &(f, fs))) in self
            .params
            .q
            .moduli()
            .iter()
            .zip(&self.t_gamma_mod_q)
            .enumerate()
        {
            for v in &mut y[i * n..(i + 1) * n] {
                *v = m.mul_shoup(*v, f, fs);
            }
        }
        let mut tg = vec![0u64; 2 * n];
        self.conv.convert(&y, &mut tg, None);
        let (t, g) = (&self.t, &self.gamma);
        let half_gamma = g.value() >> 1;
        (0..n)
            .map(|c| {
                let st = t.mul(tg[c], self.neg_inv_q_t);
                let sg = g.mul(tg[n + c], self.neg_inv_q_gamma);
                let r = if sg > half_gamma {
                    t.add(st, t.reduce(g.value() - sg))
                } else {
                    t.sub(st, t.reduce(sg))
                };
                t.mul(r, self.inv_gamma_t)
            })
            .collect()
    }
}
