//! Encryption and decryption (Fan–Vercauteren, ePrint 2012/144, §3): public-key encryption
//! (pk0·u + e0 + Δm, pk1·u + e1), secret-key encryption (−a·s + e + Δm, a) with a expanded from a
//! seed, decryption m = ⌊t·[c0 + c1·s (+ c2·s²)]_Q / Q⌉ mod t through the fixed-point scale-and-round
//! of HPS, and the invariant noise budget of SEAL (log2 of Q/2 over ‖[t·(c0 + c1·s)]_Q‖∞).

use crate::ciphertext::Ciphertext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::keys::{expand_uniform, PublicKey, SecretKey};
use crate::params::BfvParameters;
use crate::poly;
use crate::sampling::ternary;
use num_bigint::BigUint;
use rand::{CryptoRng, RngCore};
use std::sync::Arc;

fn check_pt(params: &BfvParameters, pt: &Plaintext) -> Result<()> {
    if pt.params_id != params.id() {
        return Err(Error::ParameterMismatch("plaintext from other parameters"));
    }
    Ok(())
}

/// Adds Δ·m to the coefficient-form polynomial c over Q.
pub(crate) fn add_scaled_message(params: &BfvParameters, c: &mut [u64], m: &[u64]) {
    let n = params.degree();
    for (i, q) in params.q.moduli().iter().enumerate() {
        let (d, ds) = params.delta[i];
        for (x, &v) in c[i * n..(i + 1) * n].iter_mut().zip(m) {
            *x = q.add(*x, q.mul_shoup(q.reduce(v), d, ds));
        }
    }
}

fn error_poly<R: RngCore + CryptoRng>(params: &BfvParameters, rng: &mut R) -> Vec<u64> {
    poly::from_signed(
        params.q.moduli(),
        &params.error_distribution().sample_vec(params.degree(), rng),
    )
}

/// An encryption of `pt` around the mask `(c0, c1, seed)` that `mask` draws (coefficient form over
/// Q): c0 gets an error and Δ·m; c1 gets an error too unless it expands from `seed` (the seeded
/// symmetric form, c1 = a uniform).
fn encrypt_with<R: RngCore + CryptoRng>(
    p: &Arc<BfvParameters>,
    pt: &Plaintext,
    rng: &mut R,
    mask: impl FnOnce(&BfvParameters, &mut R) -> (Vec<u64>, Vec<u64>, Option<[u8; 32]>),
) -> Result<Ciphertext> {
    check_pt(p, pt)?;
    let (n, m) = (p.degree(), p.q.moduli());
    let (mut c0, mut c1, seed) = mask(p, rng);
    poly::add_assign(m, &mut c0, &error_poly(p, rng), n);
    if seed.is_none() {
        poly::add_assign(m, &mut c1, &error_poly(p, rng), n);
    }
    add_scaled_message(p, &mut c0, &pt.coeffs);
    Ok(Ciphertext {
        params: p.clone(),
        polys: vec![c0, c1],
        seed,
    })
}

impl PublicKey {
    /// Public-key encryption of `pt`.
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        encrypt_with(&self.params, pt, rng, |p, rng| {
            let (n, m) = (p.degree(), p.q.moduli());
            let mut u = poly::from_signed(m, &ternary(n, rng));
            poly::forward(p.q.ntt(), &mut u, n, &Exec::sequential());
            let mut c0 = poly::mul(m, &self.b, &u, n);
            let mut c1 = poly::mul(m, &self.a, &u, n);
            poly::inverse(p.q.ntt(), &mut c0, n, &Exec::sequential());
            poly::inverse(p.q.ntt(), &mut c1, n, &Exec::sequential());
            u.iter_mut().for_each(|x| *x = 0);
            (c0, c1, None)
        })
    }
}

impl SecretKey {
    /// Secret-key encryption; c1 expands from a fresh 32-byte seed, so the ciphertext serializes at
    /// about half size until it is first operated on.
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        encrypt_with(&self.params, pt, rng, |p, rng| {
            let (n, m) = (p.degree(), p.q.moduli());
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            let a_ntt = expand_uniform(p, &seed, 0);
            let mut c0 = poly::mul(m, &a_ntt, &self.ntt, n);
            poly::neg_assign(m, &mut c0, n);
            poly::inverse(p.q.ntt(), &mut c0, n, &Exec::sequential());
            let mut c1 = a_ntt;
            poly::inverse(p.q.ntt(), &mut c1, n, &Exec::sequential());
            (c0, c1, Some(seed))
        })
    }

    /// c0 + c1·s + c2·s² + … over Q in coefficient form.
    pub(crate) fn phase(&self, ct: &Ciphertext) -> Result<Vec<u64>> {
        let p = &self.params;
        if ct.params.id() != p.id() {
            return Err(Error::ParameterMismatch("ciphertext from other parameters"));
        }
        if ct.polys.len() < 2 {
            return Err(Error::CiphertextSize(ct.polys.len()));
        }
        let n = p.degree();
        let m = p.q.moduli();
        let mut acc = vec![0u64; n * m.len()];
        let mut s_pow = self.ntt.clone();
        for (idx, c) in ct.polys.iter().enumerate().skip(1) {
            let mut c = c.clone();
            poly::forward(p.q.ntt(), &mut c, n, &Exec::sequential());
            poly::mul_add_assign(m, &mut acc, &c, &s_pow, n);
            if idx + 1 < ct.polys.len() {
                s_pow = poly::mul(m, &s_pow, &self.ntt, n);
            }
        }
        s_pow.iter_mut().for_each(|x| *x = 0);
        poly::inverse(p.q.ntt(), &mut acc, n, &Exec::sequential());
        poly::add_assign(m, &mut acc, &ct.polys[0], n);
        Ok(acc)
    }

    /// Decrypts a ciphertext of any size ≥ 2 (no noise check: a ciphertext past its budget decrypts
    /// to garbage; see [`SecretKey::decrypt_checked`]).
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let p = &self.params;
        let x = self.phase(ct)?;
        let n = p.degree();
        let mut out = vec![0u64; n];
        p.decrypt_rounder
            .scale_range(&x, &[], n, 0, n, &mut out, n)?;
        Ok(Plaintext {
            params_id: p.id(),
            coeffs: out,
        })
    }

    /// Decrypts, refusing with [`Error::NoiseBudgetExhausted`] when no bit of budget is left (the
    /// noise then exceeds Q/4 and the result is no longer trustworthy).
    pub fn decrypt_checked(&self, ct: &Ciphertext) -> Result<Plaintext> {
        if self.noise_budget(ct)? == 0 {
            return Err(Error::NoiseBudgetExhausted);
        }
        self.decrypt(ct)
    }

    /// The error term of `ct` as an encryption of `pt`: the centered [c0 + c1·s + … − ⌊Q/t⌋·m]_Q of
    /// every coefficient (for a fresh secret-key encryption, exactly the sampled error e; for a
    /// public-key one, e0 + e·u + e1·s). Refuses errors beyond ±2^62.
    pub fn noise(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Vec<i64>> {
        let p = &self.params;
        check_pt(p, pt)?;
        let mut x = self.phase(ct)?;
        let n = p.degree();
        let mut dm = vec![0u64; x.len()];
        add_scaled_message(p, &mut dm, &pt.coeffs);
        for (i, q) in p.q.moduli().iter().enumerate() {
            for (a, &b) in x[i * n..(i + 1) * n]
                .iter_mut()
                .zip(&dm[i * n..(i + 1) * n])
            {
                *a = q.sub(*a, b);
            }
        }
        let q = p.q.product();
        let half = q >> 1u32;
        let limit = BigUint::from(1u64 << 62);
        (0..n)
            .map(|j| {
                let v = p.q.reconstruct(&x, j);
                let (mag, neg) = if v > half { (q - &v, true) } else { (v, false) };
                if mag >= limit {
                    return Err(Error::InvalidInput(format!(
                        "noise of coefficient {j} exceeds 2^62"
                    )));
                }
                let m = mag.iter_u64_digits().next().unwrap_or(0) as i64;
                Ok(if neg { -m } else { m })
            })
            .collect()
    }

    /// Invariant noise budget in bits: ⌊log2(Q/2) − log2 ‖[t·(c0 + c1·s + …)]_Q‖∞⌋, at least 0.
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<u32> {
        let p = &self.params;
        let x = self.phase(ct)?;
        let q = p.q.product();
        let half = q >> 1u32;
        let t = BigUint::from(p.plaintext_modulus());
        let mut max = BigUint::from(0u32);
        for j in 0..p.degree() {
            let v = (p.q.reconstruct(&x, j) * &t) % q;
            let c = if v > half { q - &v } else { v };
            if c > max {
                max = c;
            }
        }
        let budget = log2(q) - 1.0 - log2(&max);
        Ok(if budget <= 0.0 {
            0
        } else {
            budget.floor() as u32
        })
    }
}

fn log2(x: &BigUint) -> f64 {
    let bits = x.bits();
    if bits == 0 {
        return 0.0;
    }
    let shift = bits.saturating_sub(60);
    let top: BigUint = x >> shift;
    let v = top.iter_u64_digits().next().unwrap_or(1) as f64;
    v.log2() + shift as f64
}

/// Convenience: everything a client needs from one secret key.
#[derive(Debug)]
pub struct Decryptor {
    sk: SecretKey,
}

impl Decryptor {
    /// Wraps a secret key.
    pub fn new(sk: SecretKey) -> Self {
        Self { sk }
    }
    /// See [`SecretKey::decrypt`].
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        self.sk.decrypt(ct)
    }
    /// See [`SecretKey::noise_budget`].
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<u32> {
        self.sk.noise_budget(ct)
    }
    /// The parameters.
    pub fn parameters(&self) -> &Arc<BfvParameters> {
        &self.sk.params
    }
}
