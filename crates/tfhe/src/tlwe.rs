//! TLWE samples (CGGI16 §2.1): c = (a, b) ∈ T^(n+1) with phase φ = b − ⟨a, s⟩.
//!
//! One type serves level 0 (u32, dimension n), level 1 (u32, N, after sample extraction) and level 2
//! (u64, 2N): the dimension is checked at run time. Gate inputs/outputs are level-0 samples encoding
//! true = +1/8 and false = −1/8.

use crate::torus::Torus;
use crate::Error;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

/// A TLWE sample; `data` holds a_0..a_{n-1} followed by b.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tlwe<T> {
    pub(crate) data: Vec<T>,
}

/// Level-0 TLWE (gate ciphertext).
pub type TlweLvl0 = Tlwe<u32>;

/// The encoding of a bit as a torus value: ±1/8.
#[inline]
pub fn encode_bit<T: Torus>(bit: bool) -> T {
    let mu = T::pow2_neg(3);
    if bit {
        mu
    } else {
        mu.neg()
    }
}

/// Checks that a level-`level` TLWE has the key's dimension `expected`.
pub(crate) fn check_tlwe_dim(level: u8, dim: usize, expected: usize) -> Result<(), Error> {
    if dim != expected {
        return Err(Error::Dimension(format!(
            "level-{level} TLWE of dim {dim}, expected {expected}"
        )));
    }
    Ok(())
}

impl<T: Torus> Tlwe<T> {
    /// The noiseless sample (0, …, 0, m) of dimension `n`.
    pub fn trivial(n: usize, m: T) -> Self {
        let mut data = vec![T::zero(); n + 1];
        data[n] = m;
        Tlwe { data }
    }
    /// A trivial encryption of a bit (a constant gate input).
    pub fn constant(n: usize, bit: bool) -> Self {
        Self::trivial(n, encode_bit(bit))
    }
    /// Rebuilds a sample from its words (mask then body); errors on an empty vector.
    pub fn from_words(data: Vec<T>) -> Result<Self, Error> {
        if data.len() < 2 {
            return Err(Error::Dimension(
                "a TLWE sample needs a mask and a body".into(),
            ));
        }
        Ok(Tlwe { data })
    }
    /// Mask then body.
    pub fn words(&self) -> &[T] {
        &self.data
    }
    /// LWE dimension n.
    pub fn dim(&self) -> usize {
        self.data.len() - 1
    }
    /// The mask a.
    pub fn a(&self) -> &[T] {
        &self.data[..self.dim()]
    }
    /// The body b.
    pub fn b(&self) -> T {
        self.data[self.dim()]
    }
    fn check(&self, o: &Self) -> Result<(), Error> {
        if self.data.len() != o.data.len() {
            return Err(Error::Dimension(format!(
                "TLWE dimensions {} and {}",
                self.dim(),
                o.dim()
            )));
        }
        Ok(())
    }
    /// self += o.
    pub fn add_assign(&mut self, o: &Self) -> Result<(), Error> {
        self.combine(o, T::add)
    }
    /// self -= o.
    pub fn sub_assign(&mut self, o: &Self) -> Result<(), Error> {
        self.combine(o, T::sub)
    }
    /// Coefficient-wise self ← f(self, o), for samples of one dimension.
    fn combine(&mut self, o: &Self, f: fn(T, T) -> T) -> Result<(), Error> {
        self.check(o)?;
        for (x, &y) in self.data.iter_mut().zip(&o.data) {
            *x = f(*x, y);
        }
        Ok(())
    }
    /// −self (the free NOT for gate ciphertexts).
    pub fn neg(&self) -> Self {
        Tlwe {
            data: self.data.iter().map(|x| x.neg()).collect(),
        }
    }
    /// Adds a constant to the phase.
    pub fn add_const(&mut self, m: T) {
        let n = self.dim();
        self.data[n] = self.data[n].add(m);
    }
    /// Σ c_i·x_i + constant over samples of equal dimension (the linear part of a gate).
    pub fn linear(terms: &[(i64, &Self)], constant: T) -> Result<Self, Error> {
        let first = terms
            .first()
            .ok_or_else(|| Error::Dimension("empty combination".into()))?;
        let mut out = Tlwe::trivial(first.1.dim(), constant);
        for (c, x) in terms {
            out.check(x)?;
            out.data
                .iter_mut()
                .zip(&x.data)
                .for_each(|(o, &v)| *o = o.add(v.mul_i64(*c)));
        }
        Ok(out)
    }
    /// The phase b − ⟨a, s⟩ under an integer key.
    pub(crate) fn phase(&self, key: &[i32]) -> T {
        let mut acc = self.b();
        for (&a, &s) in self.a().iter().zip(key) {
            acc = acc.sub(a.mul_i64(s as i64));
        }
        acc
    }
    /// Encrypts the torus value m under `key` with masks from `mask_rng` and noise from `noise_rng`.
    pub(crate) fn encrypt<R1: RngCore, R2: RngCore>(
        key: &[i32],
        m: T,
        sigma: f64,
        mask_rng: &mut R1,
        noise_rng: &mut R2,
    ) -> Self {
        let n = key.len();
        let mut data = Vec::with_capacity(n + 1);
        let mut acc = m.add(T::from_phase(crate::rng::normal(noise_rng, sigma)));
        for &s in key {
            let a = T::uniform(mask_rng);
            acc = acc.add(a.mul_i64(s as i64));
            data.push(a);
        }
        data.push(acc);
        Tlwe { data }
    }
}
