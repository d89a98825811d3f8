//! Decryption and decoding: m = c0 + c1·s (+ c2·s²) in NTT form, back to coefficients, CRT
//! reconstruction to centred integers (exact, with big integers), division by the scale, and the
//! canonical-embedding decoder.

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};

use super::ciphertext::Ciphertext;
use super::context::ServerContext;
use super::keys::SecretKey;
use crate::arith::{inv_mod, mul_mod};
use crate::encoding::Complex;
use crate::error::{CkksError, Result};

/// Decrypts with a secret key.
pub struct Decryptor<'a> {
    ctx: &'a ServerContext,
    sk: &'a SecretKey,
}

impl<'a> Decryptor<'a> {
    /// A decryptor for `sk`.
    pub fn new(ctx: &'a ServerContext, sk: &'a SecretKey) -> Self {
        Self { ctx, sk }
    }

    /// The plaintext polynomial's residues (coefficient form), limb after limb.
    pub fn decrypt_residues(&self, ct: &Ciphertext) -> Result<Vec<u64>> {
        let n = self.ctx.n();
        if ct.n != n
            || ct.level == 0
            || ct.level > self.ctx.max_level()
            || !(2..=3).contains(&ct.size)
        {
            return Err(CkksError::Mismatch(
                "ciphertext does not match the parameters",
            ));
        }
        let mut out = vec![0u64; ct.level * n];
        for i in 0..ct.level {
            let mq = self.ctx.modulus(i);
            let s = self.sk.ntt_limb(i);
            let acc = &mut out[i * n..(i + 1) * n];
            acc.copy_from_slice(ct.limb(0, i));
            let c1 = ct.limb(1, i);
            for k in 0..n {
                acc[k] = mq.add(acc[k], mq.mul(c1[k], s[k]));
            }
            if ct.size == 3 {
                let c2 = ct.limb(2, i);
                for k in 0..n {
                    let s2 = mq.mul(s[k], s[k]);
                    acc[k] = mq.add(acc[k], mq.mul(c2[k], s2));
                }
            }
            self.ctx.inverse(i, acc)?;
        }
        Ok(out)
    }

    /// Centred plaintext coefficients divided by the scale.
    pub fn decrypt_coeffs(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        let r = self.decrypt_residues(ct)?;
        let primes: Vec<u64> = (0..ct.level).map(|i| self.ctx.q(i)).collect();
        Ok(crt_centered(&r, &primes, self.ctx.n())
            .into_iter()
            .map(|x| x / ct.scale)
            .collect())
    }

    /// Decrypts and decodes all N/2 complex slots.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Vec<Complex>> {
        let coeffs = self.decrypt_coeffs(ct)?;
        let n = self.ctx.n();
        let mut scratch = vec![Complex::default(); n];
        let mut out = vec![Complex::default(); n / 2];
        self.ctx.encoder().decode(&coeffs, &mut scratch, &mut out)?;
        Ok(out)
    }

    /// Decrypts and decodes the real parts of the slots.
    pub fn decrypt_real(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        Ok(self.decrypt(ct)?.into_iter().map(|c| c.re).collect())
    }
}

/// CRT reconstruction of residues (limb-major) to centred values as f64.
pub fn crt_centered(residues: &[u64], primes: &[u64], n: usize) -> Vec<f64> {
    if primes.len() == 1 {
        let q = primes[0];
        return residues[..n]
            .iter()
            .map(|&x| {
                if x > q / 2 {
                    -((q - x) as f64)
                } else {
                    x as f64
                }
            })
            .collect();
    }
    let big_q = primes.iter().fold(BigUint::from(1u8), |acc, &q| acc * q);
    let half = &big_q >> 1;
    let parts: Vec<(BigUint, u64)> = primes
        .iter()
        .map(|&q| {
            let qi = &big_q / q;
            let r = (&qi % q).to_u64().unwrap_or(0);
            (qi, inv_mod(r, q))
        })
        .collect();
    (0..n)
        .map(|k| {
            let mut x = BigUint::zero();
            for (i, (qi, inv)) in parts.iter().enumerate() {
                let y = mul_mod(residues[i * n + k], *inv, primes[i]);
                x += qi * y;
            }
            x %= &big_q;
            if x > half {
                -(&big_q - &x).to_f64().unwrap_or(f64::INFINITY)
            } else {
                x.to_f64().unwrap_or(f64::INFINITY)
            }
        })
        .collect()
}
