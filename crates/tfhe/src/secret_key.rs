//! The secret key: level-0 LWE key, level-1 and level-2 ring keys. Zeroized on drop, redacted in Debug.
//!
//! Encrypts and decrypts bits as level-0 TLWE (gate ciphertexts) and packed bits as level-1 TRLWE (CMUX
//! memory), and makes the evaluation and circuit keys ([`crate::EvalKey`], [`crate::CircuitKey`]).

use crate::fft::plan;
use crate::params::{KeyDist, Params};
use crate::rng::{fresh_seed, noise_rng, with_thread_rng, Domain, Seed};
use crate::tlwe::{check_tlwe_dim, encode_bit, Tlwe};
use crate::torus::Torus;
use crate::trgsw::TrgswFft;
use crate::trlwe::{self, Trlwe};
use crate::Error;
use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

/// Secret keys of all three levels.
pub struct SecretKey {
    pub(crate) params: Params,
    pub(crate) s0: Vec<i32>,
    pub(crate) s1: Vec<i32>,
    pub(crate) s2: Vec<i32>,
    pub(crate) s1_fft: Vec<f64>,
    pub(crate) s2_fft: Vec<f64>,
    /// Seed the key was expanded from (kept so the key file is 32 bytes + header).
    pub(crate) seed: Seed,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.s0.zeroize();
        self.s1.zeroize();
        self.s2.zeroize();
        self.s1_fft.zeroize();
        self.s2_fft.zeroize();
        self.seed.zeroize();
    }
}

impl core::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SecretKey({:?}, <redacted>)", self.params.id)
    }
}

fn sample_key<R: RngCore>(rng: &mut R, n: usize, dist: KeyDist) -> Vec<i32> {
    (0..n)
        .map(|_| match dist {
            KeyDist::Binary => (rng.next_u32() & 1) as i32,
            KeyDist::Ternary => loop {
                // Rejection sampling for an unbiased value in {-1, 0, 1}.
                let v = rng.next_u32() & 3;
                if v < 3 {
                    break v as i32 - 1;
                }
            },
        })
        .collect()
}

impl SecretKey {
    /// A fresh key from the OS-seeded generator.
    pub fn generate(params: &Params) -> Result<SecretKey, Error> {
        Self::from_seed(params, fresh_seed())
    }

    /// A fresh key drawing its seed from `rng`.
    pub fn generate_with<R: RngCore + CryptoRng>(
        params: &Params,
        rng: &mut R,
    ) -> Result<SecretKey, Error> {
        Self::from_seed(params, Seed::generate(rng))
    }

    /// The key expanded deterministically from `seed` (the secret key file stores only the seed).
    pub fn from_seed(params: &Params, seed: Seed) -> Result<SecretKey, Error> {
        params.validate()?;
        let mut r = crate::rng::stream(&seed, Domain::SecretKey, 0);
        let s0 = sample_key(&mut r, params.n0, KeyDist::Binary);
        let s1 = sample_key(&mut r, params.n1, params.key1);
        let s2 = sample_key(&mut r, params.n2, params.key2);
        let fft = |s: &[i32]| {
            let p = plan(s.len());
            let v: Vec<i64> = s.iter().map(|&x| x as i64).collect();
            let mut f = vec![0.0; s.len()];
            p.forward_i64(&mut f, &v);
            f
        };
        let s1_fft = fft(&s1);
        let s2_fft = fft(&s2);
        Ok(SecretKey {
            params: *params,
            s0,
            s1,
            s2,
            s1_fft,
            s2_fft,
            seed,
        })
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Encrypts a bit as a level-0 TLWE (±1/8).
    pub fn encrypt_bit(&self, bit: bool) -> Tlwe<u32> {
        with_thread_rng(|r| self.encrypt_bit_with(bit, r))
    }

    /// Encrypts a bit as a level-0 TLWE with randomness from `rng`.
    pub fn encrypt_bit_with<R: RngCore + CryptoRng>(&self, bit: bool, rng: &mut R) -> Tlwe<u32> {
        let mut noise = noise_rng(rng);
        Tlwe::encrypt(
            &self.s0,
            encode_bit(bit),
            self.params.sigma0,
            rng,
            &mut noise,
        )
    }

    /// Decrypts a level-0 TLWE bit (sign of the phase).
    pub fn decrypt_bit(&self, c: &Tlwe<u32>) -> Result<bool, Error> {
        Ok(self.phase_lvl0(c)? > 0.0)
    }

    /// The phase of a level-0 TLWE as a real in [-1/2, 1/2) (for noise measurements).
    pub fn phase_lvl0(&self, c: &Tlwe<u32>) -> Result<f64, Error> {
        check_tlwe_dim(0, c.dim(), self.params.n0)?;
        Ok(c.phase(&self.s0).to_phase())
    }

    /// Phase of a level-1 TLWE (dimension N, e.g. from sample extraction).
    pub fn phase_lvl1_tlwe(&self, c: &Tlwe<u32>) -> Result<f64, Error> {
        check_tlwe_dim(1, c.dim(), self.params.n1)?;
        Ok(c.phase(&self.s1).to_phase())
    }

    /// Phase of a level-2 TLWE (dimension N2, u64 torus; e.g. circuit bootstrapping's level-2
    /// samples), as the torus word (for noise measurements below f64's resolution of a real phase).
    pub fn phase_lvl2_tlwe(&self, c: &Tlwe<u64>) -> Result<u64, Error> {
        check_tlwe_dim(2, c.dim(), self.params.n2)?;
        Ok(c.phase(&self.s2))
    }

    /// Encrypts bits packed into the coefficients of a level-1 TRLWE (coefficient i = `bits[i]`,
    /// the rest false).
    pub fn encrypt_trlwe_bits(&self, bits: &[bool]) -> Result<Trlwe<u32>, Error> {
        self.encrypt_trlwe(&trlwe::encode_bits::<u32>(self.params.n1, bits)?)
    }

    /// Encrypts an arbitrary torus polynomial of degree N as a level-1 TRLWE.
    pub fn encrypt_trlwe(&self, m: &[u32]) -> Result<Trlwe<u32>, Error> {
        let n = self.params.n1;
        if m.len() != n {
            return Err(Error::Dimension(format!(
                "message of degree {}, expected {n}",
                m.len()
            )));
        }
        let p = plan(n);
        Ok(with_thread_rng(|r| {
            let mut noise = noise_rng(r);
            trlwe::encrypt(&p, &self.s1_fft, m, self.params.sigma1, r, &mut noise)
        }))
    }

    /// Phase polynomial of a level-1 TRLWE (torus words).
    pub fn phase_trlwe(&self, c: &Trlwe<u32>) -> Result<Vec<u32>, Error> {
        trlwe::check_trlwe_degree(c.degree(), self.params.n1)?;
        Ok(trlwe::phase(&plan(self.params.n1), &self.s1_fft, c))
    }

    /// Decrypts every coefficient of a level-1 TRLWE as a bit (sign of the phase).
    pub fn decrypt_trlwe_bits(&self, c: &Trlwe<u32>) -> Result<Vec<bool>, Error> {
        Ok(self
            .phase_trlwe(c)?
            .iter()
            .map(|&x| (x as i32) > 0)
            .collect())
    }

    /// Encrypts the integer μ as a level-1 TRGSW in Fourier form with the circuit-bootstrapping gadget
    /// (a fresh, low-noise selector; circuit bootstrapping makes the same thing from a TLWE).
    pub fn encrypt_trgsw_lvl1(&self, mu: i64) -> TrgswFft<u32> {
        let p = plan(self.params.n1);
        with_thread_rng(|r| {
            let mut noise = noise_rng(r);
            TrgswFft::encrypt_const(
                &p,
                (&self.s1, &self.s1_fft),
                self.params.cb,
                mu,
                self.params.sigma1,
                (r, &mut noise),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::{Digest, Sha3_256};

    fn digest(k: &SecretKey) -> String {
        let mut h = Sha3_256::new();
        for s in [&k.s0, &k.s1, &k.s2] {
            for x in s.iter() {
                h.update(x.to_le_bytes());
            }
        }
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A secret key file holds only the seed, so the expansion seed → key must never change
    /// silently: it is pinned here (vsp-math's ChaCha20 stream, domain `vsp-tfhe/secret-key/0`).
    #[test]
    fn key_expansion_is_deterministic_per_seed_and_pinned() {
        // The level-0 dimension the digest was taken with (default_128 has n0 = 770 since).
        let p = Params {
            n0: 805,
            ..Params::default_128()
        };
        let a = SecretKey::from_seed(&p, Seed::from_bytes([1; 32])).unwrap();
        let b = SecretKey::from_seed(&p, Seed::from_bytes([1; 32])).unwrap();
        let c = SecretKey::from_seed(&p, Seed::from_bytes([2; 32])).unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
        assert!(a.s0.iter().all(|&x| x == 0 || x == 1));
        assert_eq!(digest(&a), "d749345f703424d0");
        // Keys of one seed decrypt each other's ciphertexts.
        assert!(b.decrypt_bit(&a.encrypt_bit(true)).unwrap());
    }
}
