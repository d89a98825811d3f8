//! Homomorphic evaluation: additions, plaintext operations, ciphertext products by the RNS
//! variants (HPS or BEHZ), relinearisation and Galois automorphisms (row/column rotations, inner
//! sums) by RNS-digit key switching. An evaluator holds no mutable state, so one can be shared by
//! threads; opt-in internal threading comes from its thread count.

use crate::ciphertext::Ciphertext;
use crate::encoding::{center, Plaintext};
use crate::encrypt::add_scaled_message;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::keys::{galois_element_for_step, GaloisKeys, RelinKey};
use crate::params::{BfvParameters, MulMethod};
use crate::poly;
use std::sync::Arc;

/// Evaluates operations on ciphertexts of one parameter set.
#[derive(Clone, Debug)]
pub struct Evaluator {
    params: Arc<BfvParameters>,
    exec: Exec,
    method: MulMethod,
}

impl Evaluator {
    /// Single-threaded evaluator using the parameters' multiplication method.
    pub fn new(params: &Arc<BfvParameters>) -> Self {
        Self {
            params: params.clone(),
            exec: Exec::sequential(),
            method: params.mul_method(),
        }
    }

    /// Evaluator that splits work over `threads` threads (results identical to one thread).
    pub fn with_threads(params: &Arc<BfvParameters>, threads: usize) -> Result<Self> {
        Ok(Self {
            params: params.clone(),
            exec: Exec::with_threads(threads)?,
            method: params.mul_method(),
        })
    }

    /// Same evaluator with another multiplication method.
    pub fn with_method(mut self, method: MulMethod) -> Self {
        self.method = method;
        self
    }

    /// The multiplication method in use.
    pub fn method(&self) -> MulMethod {
        self.method
    }

    fn check(&self, ct: &Ciphertext) -> Result<()> {
        if ct.params.id() != self.params.id() {
            return Err(Error::ParameterMismatch("ciphertext from other parameters"));
        }
        if ct.polys.len() < 2 {
            return Err(Error::CiphertextSize(ct.polys.len()));
        }
        Ok(())
    }

    fn check_pt(&self, pt: &Plaintext) -> Result<()> {
        if pt.params_id != self.params.id() {
            return Err(Error::ParameterMismatch("plaintext from other parameters"));
        }
        Ok(())
    }

    fn new_ct(&self, polys: Vec<Vec<u64>>) -> Ciphertext {
        Ciphertext {
            params: self.params.clone(),
            polys,
            seed: None,
        }
    }

    fn zip(&self, a: &Ciphertext, b: &Ciphertext, sub: bool) -> Result<Ciphertext> {
        self.check(a)?;
        self.check(b)?;
        let n = self.params.degree();
        let m = self.params.q.moduli();
        let len = a.size().max(b.size());
        let mut polys = Vec::with_capacity(len);
        for i in 0..len {
            let mut p = a
                .polys
                .get(i)
                .cloned()
                .unwrap_or_else(|| vec![0; n * m.len()]);
            if let Some(q) = b.polys.get(i) {
                if sub {
                    poly::sub_assign(m, &mut p, q, n);
                } else {
                    poly::add_assign(m, &mut p, q, n);
                }
            }
            polys.push(p);
        }
        Ok(self.new_ct(polys))
    }

    /// a + b.
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.zip(a, b, false)
    }

    /// a − b.
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.zip(a, b, true)
    }

    /// −a.
    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check(a)?;
        let n = self.params.degree();
        let mut polys = a.polys.clone();
        for p in polys.iter_mut() {
            poly::neg_assign(self.params.q.moduli(), p, n);
        }
        Ok(self.new_ct(polys))
    }

    /// a + pt.
    pub fn add_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check(a)?;
        self.check_pt(pt)?;
        let mut polys = a.polys.clone();
        add_scaled_message(&self.params, &mut polys[0], &pt.coeffs);
        Ok(self.new_ct(polys))
    }

    /// a − pt.
    pub fn sub_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_pt(pt)?;
        let t = &self.params.t;
        let neg = Plaintext {
            params_id: pt.params_id,
            coeffs: pt.coeffs.iter().map(|&v| t.neg(v)).collect(),
        };
        self.add_plain(a, &neg)
    }

    /// a · pt (polynomial product with the centered plaintext; noise grows by about ‖pt‖·N).
    pub fn mul_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check(a)?;
        self.check_pt(pt)?;
        let p = &self.params;
        let n = p.degree();
        let m = p.q.moduli();
        let t = p.plaintext_modulus();
        let signed: Vec<i64> = pt.coeffs.iter().map(|&v| center(v, t)).collect();
        let mut w = poly::from_signed(m, &signed);
        poly::forward(p.q.ntt(), &mut w, n, &self.exec);
        let mut polys = a.polys.clone();
        self.exec.per_item(&mut polys, |_, c| {
            let seq = Exec::sequential();
            poly::forward(p.q.ntt(), c, n, &seq);
            poly::mul_assign(m, c, &w, n);
            poly::inverse(p.q.ntt(), c, n, &seq);
        });
        Ok(self.new_ct(polys))
    }

    fn product(&self, a: &Ciphertext, b: Option<&Ciphertext>) -> Result<Ciphertext> {
        self.check(a)?;
        if a.size() != 2 {
            return Err(Error::CiphertextSize(a.size()));
        }
        if let Some(b) = b {
            self.check(b)?;
            if b.size() != 2 {
                return Err(Error::CiphertextSize(b.size()));
            }
        }
        let p = &self.params;
        let ia = [a.polys[0].as_slice(), a.polys[1].as_slice()];
        let ib = b.map(|b| [b.polys[0].as_slice(), b.polys[1].as_slice()]);
        let [e0, e1, e2] = match self.method {
            MulMethod::Hps => p.hps.multiply(&p.q, ia, ib, &self.exec)?,
            MulMethod::Behz => p
                .behz
                .multiply(&p.q, p.plaintext_modulus(), ia, ib, &self.exec)?,
        };
        Ok(self.new_ct(vec![e0, e1, e2]))
    }

    /// a · b as a size-3 ciphertext (both inputs of size 2).
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.product(a, Some(b))
    }

    /// a² as a size-3 ciphertext (two base extensions instead of four).
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.product(a, None)
    }

    /// Size-3 → size-2 by key switching c2 from s² to s.
    pub fn relinearize(&self, a: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        self.check(a)?;
        self.relinearize_owned(a.polys.clone(), rk)
    }

    /// [`Self::relinearize`] on polynomials this evaluator owns (no copies).
    fn relinearize_owned(&self, mut polys: Vec<Vec<u64>>, rk: &RelinKey) -> Result<Ciphertext> {
        if rk.0.params.id() != self.params.id() {
            return Err(Error::ParameterMismatch(
                "relinearisation key from other parameters",
            ));
        }
        match polys.len() {
            2 => return Ok(self.new_ct(polys)),
            3 => {}
            s => return Err(Error::CiphertextSize(s)),
        }
        let n = self.params.degree();
        let m = self.params.q.moduli();
        let c2 = polys.pop().unwrap_or_default();
        let (u0, u1) = rk.0.switch(&c2, &self.exec);
        poly::add_assign(m, &mut polys[0], &u0, n);
        poly::add_assign(m, &mut polys[1], &u1, n);
        poly::give(u0);
        poly::give(u1);
        poly::give(c2);
        Ok(self.new_ct(polys))
    }

    /// a · b relinearized.
    pub fn multiply_relin(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        let c = self.multiply(a, b)?;
        self.relinearize_owned(c.polys, rk)
    }

    /// Applies σ_g: x ↦ x^g and switches back to s.
    pub fn apply_galois(&self, a: &Ciphertext, g: usize, gk: &GaloisKeys) -> Result<Ciphertext> {
        self.check(a)?;
        if a.size() != 2 {
            return Err(Error::CiphertextSize(a.size()));
        }
        let key = gk.get(g)?;
        if key.params.id() != self.params.id() {
            return Err(Error::ParameterMismatch("Galois key from other parameters"));
        }
        let n = self.params.degree();
        let m = self.params.q.moduli();
        let mut c0 = poly::automorphism(m, &a.polys[0], n, g);
        let c1 = poly::automorphism(m, &a.polys[1], n, g);
        let (u0, u1) = key.switch(&c1, &self.exec);
        poly::add_assign(m, &mut c0, &u0, n);
        poly::give(u0);
        poly::give(c1);
        Ok(self.new_ct(vec![c0, u1]))
    }

    /// Rotates both rows of the slot matrix left by `step` (right for negative steps). Steps without
    /// a dedicated key are composed from power-of-two keys when those exist.
    pub fn rotate_columns(&self, a: &Ciphertext, step: i64, gk: &GaloisKeys) -> Result<Ciphertext> {
        let n = self.params.degree();
        let half = (n / 2) as i64;
        let s = step.rem_euclid(half);
        if s == 0 {
            self.check(a)?;
            return Ok(self.new_ct(a.polys.clone()));
        }
        let g = galois_element_for_step(n, s);
        if gk.keys.contains_key(&g) {
            return self.apply_galois(a, g, gk);
        }
        // Binary decomposition over the power-of-two keys.
        let mut ct = a.clone();
        let mut rest = s;
        let mut bit = 1i64;
        while rest != 0 {
            if rest & 1 == 1 {
                let g = galois_element_for_step(n, bit);
                ct = self.apply_galois(&ct, g, gk)?;
            }
            rest >>= 1;
            bit <<= 1;
        }
        Ok(ct)
    }

    /// Swaps the two rows of the slot matrix.
    pub fn rotate_rows(&self, a: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        self.apply_galois(a, 2 * self.params.degree() - 1, gk)
    }

    /// Every slot receives the sum of all N slots (needs power-of-two keys and the row swap).
    pub fn inner_sum(&self, a: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        let n = self.params.degree();
        let mut acc = self.new_ct(a.polys.clone());
        let mut step = 1i64;
        while (step as usize) < n / 2 {
            let r = self.rotate_columns(&acc, step, gk)?;
            acc = self.add(&acc, &r)?;
            step *= 2;
        }
        let r = self.rotate_rows(&acc, gk)?;
        self.add(&acc, &r)
    }
}
