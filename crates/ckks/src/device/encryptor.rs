//! The streaming encryptor of SEAL-Embedded (`se_encrypt` / `se_encrypt_seeded`): encode once, then
//! compute and hand out the ciphertext one prime at a time through a caller-provided [`Sink`].
//!
//! All buffers are allocated in [`DeviceEncryptor::new`]; encryption itself never allocates.
//!
//! Symmetric (seeded): c1 = a sampled from a *shareable* 64-byte seed exactly as SEAL samples it, so
//! the device sends the seed once and c0 = [m + e − a·s] per prime (half the upload), and SEAL can load
//! the result as its own seeded ciphertext. Asymmetric: c = (pk0·u + e0 + m, pk1·u + e1) with the
//! server's (or SEAL's) public key, u ternary.
//!
//! [`MemoryMode::Low`] keeps one N-word residue buffer: it forms a·NTT(s) (or pk·NTT(u)), returns to
//! the coefficient domain, adds the message and transforms again (3 NTTs per prime and polynomial
//! instead of 2). [`MemoryMode::Fast`] uses a second buffer. Both give bit-identical ciphertexts.

use alloc::vec::Vec;
use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

pub use super::config::{
    DeviceConfig, EncryptionKind, MemoryMode, NttRoots, Part, Sink, SinkError, SlotValues,
};
use super::keys::{DevicePublicKey, DeviceSecretKey};
use super::ntt::{self, LoadedRoots, NttPrime};
use crate::arith::minimal_primitive_root;
use crate::encoding::Encoder;
use crate::error::{CkksError, Result};
use crate::prng::{sample_uniform_limb, ternary, Cbd21, Xof, SEED_BYTES};

/// Randomness of one encryption: the shareable seed (expands to `a`) and the private noise seed.
#[derive(Clone, Zeroize)]
#[zeroize(drop)]
pub struct EncryptionSeeds {
    /// Public: sent with the ciphertext (symmetric mode).
    pub shareable: [u8; SEED_BYTES],
    /// Secret: expands to u and the errors.
    pub private: [u8; 32],
}

impl EncryptionSeeds {
    /// Fresh seeds from a cryptographic RNG.
    pub fn random<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let mut s = Self {
            shareable: [0; SEED_BYTES],
            private: [0; 32],
        };
        rng.fill_bytes(&mut s.shareable);
        rng.fill_bytes(&mut s.private);
        s
    }
}

/// The device encryptor: parameters, tables and all working buffers, fixed at setup.
/// Buffers are wiped after every encryption and on drop.
pub struct DeviceEncryptor {
    cfg: DeviceConfig,
    encoder: Encoder,
    primes: Vec<NttPrime>,
    loaded: Vec<LoadedRoots>,
    msg: Vec<f64>,
    buf_a: Vec<u32>,
    buf_b: Vec<u32>,
    roots: Vec<u32>,
}

impl DeviceEncryptor {
    /// Allocates everything the configuration needs (the only allocation of the device side).
    pub fn new(cfg: DeviceConfig) -> Result<Self> {
        let p = &cfg.params;
        let n = p.n();
        let encoder = Encoder::new(n, cfg.fft_roots, cfg.index_map)?;
        let mut primes = Vec::with_capacity(p.data_primes().len());
        for &q in p.data_primes() {
            let psi = minimal_primitive_root(2 * n as u64, q).ok_or(CkksError::BadModulus(q))?;
            primes.push(NttPrime::new(q as u32, psi as u32, p.log_n()));
        }
        let loaded = if cfg.ntt_roots == NttRoots::Loaded {
            let inverse = cfg.memory == MemoryMode::Low;
            primes
                .iter()
                .map(|pr| LoadedRoots::new(pr, inverse))
                .collect()
        } else {
            Vec::new()
        };
        let buf_b = if cfg.memory == MemoryMode::Fast {
            alloc::vec![0; n]
        } else {
            Vec::new()
        };
        let roots = if cfg.ntt_roots == NttRoots::OneShot {
            alloc::vec![0; n]
        } else {
            Vec::new()
        };
        Ok(Self {
            encoder,
            primes,
            loaded,
            msg: alloc::vec![0.0; n],
            buf_a: alloc::vec![0; n],
            buf_b,
            roots,
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    /// Bytes this encryptor holds: (working buffers, tables).
    pub fn held_bytes(&self) -> (usize, usize) {
        let work =
            self.msg.len() * 8 + (self.buf_a.len() + self.buf_b.len() + self.roots.len()) * 4;
        let tables =
            self.encoder.table_bytes() + self.loaded.iter().map(|l| l.words() * 4).sum::<usize>();
        (work, tables)
    }

    /// Symmetric seeded encryption of real values: sends `Seed`, then c0 of each prime.
    /// The server (or SEAL) expands c1 from the seed.
    pub fn encrypt_symmetric_seeded<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        sk: &DeviceSecretKey,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        self.symmetric(values, sk, seeds, false, sink)
    }

    /// Symmetric encryption that also sends c1 of every prime (no seed on the wire).
    pub fn encrypt_symmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        sk: &DeviceSecretKey,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        self.symmetric(values, sk, seeds, true, sink)
    }

    /// Symmetric seeded encryption with fresh randomness from `rng`.
    pub fn encrypt_symmetric_rng<V: SlotValues + ?Sized, R: RngCore + CryptoRng>(
        &mut self,
        values: &V,
        sk: &DeviceSecretKey,
        rng: &mut R,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        let seeds = EncryptionSeeds::random(rng);
        self.symmetric(values, sk, &seeds, false, sink)
    }

    /// Public-key encryption: sends c0 and c1 for each prime.
    pub fn encrypt_asymmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        pk: &DevicePublicKey,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        let r = self.asymmetric(values, pk, seeds, sink);
        self.wipe();
        r
    }

    /// Clears every buffer that held message, noise, NTT(s) or NTT(u) (also on error paths).
    fn wipe(&mut self) {
        self.msg.as_mut_slice().zeroize();
        self.buf_a.as_mut_slice().zeroize();
        self.buf_b.as_mut_slice().zeroize();
    }

    fn asymmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        pk: &DevicePublicKey,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        if pk.primes() != self.cfg.params.data_primes() {
            return Err(CkksError::Mismatch("public key made for other primes"));
        }
        self.encode_with_error(values, &seeds.private, b"e0")?;
        for j in 0..self.primes.len() {
            match self.cfg.memory {
                MemoryMode::Fast => {
                    self.load_ternary(&seeds.private, b"u", j, true);
                    self.ntt_a(j);
                    for poly in 0..2 {
                        if poly == 0 {
                            self.load_msg_into_b(j);
                        } else {
                            self.load_cbd_into_b(&seeds.private, b"e1", j);
                        }
                        self.ntt_b(j);
                        let m = self.primes[j].m;
                        let pkl = pk.limb(poly, j);
                        for ((b, &a), &k) in self.buf_b.iter_mut().zip(&self.buf_a).zip(pkl) {
                            *b = m.add(*b, m.mul(a, k));
                        }
                        sink.send(Part::Limb {
                            poly,
                            prime: j,
                            coeffs: &self.buf_b,
                        })
                        .map_err(|_| CkksError::SinkFailed)?;
                    }
                }
                MemoryMode::Low => {
                    for poly in 0..2 {
                        self.load_ternary(&seeds.private, b"u", j, true);
                        self.ntt_a(j);
                        let m = self.primes[j].m;
                        for (a, &k) in self.buf_a.iter_mut().zip(pk.limb(poly, j)) {
                            *a = m.mul(*a, k);
                        }
                        self.intt_a(j);
                        if poly == 0 {
                            self.add_msg_to_a(j);
                        } else {
                            let mut x = Cbd21::new(&seeds.private, b"e1");
                            for a in self.buf_a.iter_mut() {
                                *a = m.add(*a, m.from_i64(x.sample()));
                            }
                        }
                        self.ntt_a(j);
                        sink.send(Part::Limb {
                            poly,
                            prime: j,
                            coeffs: &self.buf_a,
                        })
                        .map_err(|_| CkksError::SinkFailed)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn symmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        sk: &DeviceSecretKey,
        seeds: &EncryptionSeeds,
        send_c1: bool,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        let r = self.symmetric_inner(values, sk, seeds, send_c1, sink);
        self.wipe();
        r
    }

    fn symmetric_inner<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        sk: &DeviceSecretKey,
        seeds: &EncryptionSeeds,
        send_c1: bool,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        let n = self.cfg.params.n();
        if sk.n() != n {
            return Err(CkksError::Mismatch(
                "secret key degree differs from the parameters",
            ));
        }
        self.encode_with_error(values, &seeds.private, b"e")?;
        if !send_c1 {
            sink.send(Part::Seed(&seeds.shareable))
                .map_err(|_| CkksError::SinkFailed)?;
        }
        let l = self.primes.len();
        let mut rejections = 0u64;
        for j in 0..l {
            let m = self.primes[j].m;
            let q = m.q as u64;
            // A = NTT(s) mod q_j.
            for (i, a) in self.buf_a.iter_mut().enumerate() {
                *a = m.from_i64(sk.get(i) as i64);
            }
            self.ntt_a(j);
            let rej_before = rejections;
            match self.cfg.memory {
                MemoryMode::Fast => {
                    self.load_msg_into_b(j);
                    self.ntt_b(j);
                    let (a_buf, b_buf) = (&self.buf_a, &mut self.buf_b);
                    sample_uniform_limb(&seeds.shareable, n, l, j, q, &mut rejections, |i, a| {
                        b_buf[i] = m.sub(b_buf[i], m.mul(a as u32, a_buf[i]));
                    });
                    sink.send(Part::Limb {
                        poly: 0,
                        prime: j,
                        coeffs: &self.buf_b,
                    })
                    .map_err(|_| CkksError::SinkFailed)?;
                }
                MemoryMode::Low => {
                    let a_buf = &mut self.buf_a;
                    sample_uniform_limb(&seeds.shareable, n, l, j, q, &mut rejections, |i, a| {
                        a_buf[i] = m.mul(a as u32, a_buf[i]);
                    });
                    self.intt_a(j);
                    // A = (m + e) − a·s in the coefficient domain, then back to NTT form.
                    for a in self.buf_a.iter_mut() {
                        *a = m.sub(0, *a);
                    }
                    self.add_msg_to_a(j);
                    self.ntt_a(j);
                    sink.send(Part::Limb {
                        poly: 0,
                        prime: j,
                        coeffs: &self.buf_a,
                    })
                    .map_err(|_| CkksError::SinkFailed)?;
                }
            }
            if send_c1 {
                let mut again = rej_before;
                let a_buf = &mut self.buf_a;
                sample_uniform_limb(&seeds.shareable, n, l, j, q, &mut again, |i, a| {
                    a_buf[i] = a as u32
                });
                sink.send(Part::Limb {
                    poly: 1,
                    prime: j,
                    coeffs: &self.buf_a,
                })
                .map_err(|_| CkksError::SinkFailed)?;
            }
        }
        Ok(())
    }

    /// Encodes into `msg` and adds the CBD error e (integers, so it is the same for every prime).
    fn encode_with_error<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        private: &[u8; 32],
        label: &[u8],
    ) -> Result<()> {
        let p = &self.cfg.params;
        values.encode_into(&self.encoder, p.scale(), &mut self.msg)?;
        let n = p.n();
        let mut x = Cbd21::new(private, label);
        for c in 0..n {
            self.msg[crate::encoding::coeff_index(c, n)] += x.sample() as f64;
        }
        Ok(())
    }

    fn add_msg_to_a(&mut self, j: usize) {
        let m = self.primes[j].m;
        let half = self.buf_a.len() / 2;
        let (lo, hi) = self.buf_a.split_at_mut(half);
        for k in 0..half {
            lo[k] = m.add(lo[k], m.from_i64(self.msg[2 * k] as i64));
            hi[k] = m.add(hi[k], m.from_i64(self.msg[2 * k + 1] as i64));
        }
    }

    fn load_msg_into_b(&mut self, j: usize) {
        let m = self.primes[j].m;
        let half = self.buf_b.len() / 2;
        let (lo, hi) = self.buf_b.split_at_mut(half);
        for k in 0..half {
            lo[k] = m.from_i64(self.msg[2 * k] as i64);
            hi[k] = m.from_i64(self.msg[2 * k + 1] as i64);
        }
    }

    fn load_cbd_into_b(&mut self, private: &[u8; 32], label: &[u8], j: usize) {
        let m = self.primes[j].m;
        let mut x = Cbd21::new(private, label);
        for b in self.buf_b.iter_mut() {
            *b = m.from_i64(x.sample());
        }
    }

    fn load_ternary(&mut self, private: &[u8; 32], label: &[u8], j: usize, into_a: bool) {
        let m = self.primes[j].m;
        let buf = if into_a {
            &mut self.buf_a
        } else {
            &mut self.buf_b
        };
        let n = buf.len();
        ternary(&mut Xof::new(private, label), n, |i, t| {
            buf[i] = m.from_i64(t as i64)
        });
    }

    fn ntt_a(&mut self, j: usize) {
        Self::forward(
            &self.cfg,
            &self.primes[j],
            self.loaded.get(j),
            &mut self.roots,
            &mut self.buf_a,
        );
    }
    fn ntt_b(&mut self, j: usize) {
        Self::forward(
            &self.cfg,
            &self.primes[j],
            self.loaded.get(j),
            &mut self.roots,
            &mut self.buf_b,
        );
    }
    fn intt_a(&mut self, j: usize) {
        let p = &self.primes[j];
        match self.cfg.ntt_roots {
            NttRoots::OnTheFly => ntt::inverse_otf(&mut self.buf_a, p),
            NttRoots::OneShot => {
                p.fill_roots(true, &mut self.roots);
                ntt::inverse_table(&mut self.buf_a, p, &self.roots);
            }
            NttRoots::Loaded => match self.loaded.get(j) {
                Some(r) => ntt::inverse_loaded(&mut self.buf_a, p, r),
                None => ntt::inverse_otf(&mut self.buf_a, p),
            },
        }
    }
    fn forward(
        cfg: &DeviceConfig,
        p: &NttPrime,
        loaded: Option<&LoadedRoots>,
        roots: &mut [u32],
        buf: &mut [u32],
    ) {
        match (cfg.ntt_roots, loaded) {
            (NttRoots::Loaded, Some(r)) => ntt::forward_loaded(buf, p, r),
            (NttRoots::OneShot, _) => {
                p.fill_roots(false, roots);
                ntt::forward_table(buf, p, roots);
            }
            _ => ntt::forward_otf(buf, p),
        }
    }
}

impl Drop for DeviceEncryptor {
    fn drop(&mut self) {
        self.wipe();
    }
}
