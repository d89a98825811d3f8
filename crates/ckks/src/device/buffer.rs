//! The encryption pipeline over caller-provided memory, and
//! [`BufferEncryptor`](crate::BufferEncryptor), the device encryptor that uses no allocator at all
//! (the crate's `--no-default-features` build).
//!
//! Every buffer and table is a slice the caller hands in (static arrays, a linker section, flash):
//! sizes come from [`DeviceConfig::buffer_sizes`](crate::DeviceConfig::buffer_sizes), tables are
//! filled by [`fill_tables`](crate::fill_tables) (or made once by the server and kept in flash,
//! SEAL-Embedded's "load" options) and checked entry by entry at setup. The owned `DeviceEncryptor`
//! runs the very same code over its own `Vec`s, so both give bit-identical ciphertexts.

use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

use super::config::{
    BufferSizes, DeviceConfig, MemoryMode, NttRoots, Part, SecretKeyForm, SecretKeyStore, Sink,
    SlotValues,
};
use super::keys::{packed_coeff, packed_is_valid, PackedSecretKey, PublicKeyView};
use super::ntt::{self, LoadedTables, NttPrime};
use crate::arith::minimal_primitive_root;
use crate::encoding::{fill_fft_roots, fill_index_map, Complex, EncoderView, FftRoots, IndexMap};
use crate::error::{CkksError, Result};
use crate::params::MAX_DATA_PRIMES;
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

/// Bytes of the stack piece a [`SecretKeyForm::NotPersistent`] key is streamed through.
pub const KEY_CHUNK: usize = 64;

/// The SEAL minimal primitive 2N-th roots of the data primes (setup work shared by both encryptors).
pub(crate) fn prime_roots(cfg: &DeviceConfig) -> Result<[u32; MAX_DATA_PRIMES]> {
    let p = &cfg.params;
    let mut psi = [0u32; MAX_DATA_PRIMES];
    for (r, &q) in psi.iter_mut().zip(p.data_primes()) {
        *r = minimal_primitive_root(2 * p.n() as u64, q).ok_or(CkksError::BadModulus(q))? as u32;
    }
    Ok(psi)
}

/// Fills the tables a configuration reads (lengths from [`DeviceConfig::buffer_sizes`]; pass empty
/// slices for tables it does not use): FFT roots, index map, and every prime's NTT tables.
pub fn fill_tables(
    cfg: &DeviceConfig,
    fft_roots: &mut [Complex],
    index_map: &mut [u16],
    ntt_tables: &mut [u32],
) -> Result<()> {
    let sizes = cfg.buffer_sizes();
    check_len(ntt_tables.len(), sizes.ntt_tables)?;
    if sizes.fft_roots > 0 {
        fill_fft_roots(cfg.params.n(), fft_roots)?;
    } else {
        check_len(fft_roots.len(), 0)?;
    }
    if sizes.index_map > 0 {
        fill_index_map(cfg.params.n(), index_map)?;
    } else {
        check_len(index_map.len(), 0)?;
    }
    if sizes.ntt_tables > 0 {
        let psi = prime_roots(cfg)?;
        let per = sizes.ntt_tables / cfg.params.data_primes().len();
        for (j, t) in ntt_tables.chunks_exact_mut(per).enumerate() {
            let p = nttp(cfg, &psi, j)?;
            ntt::fill_loaded(
                &p,
                cfg.ntt_roots == NttRoots::Loaded,
                cfg.needs_inverse_ntt(),
                t,
            );
        }
    }
    Ok(())
}

fn check_len(got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(CkksError::LengthMismatch { expected, got })
    }
}

fn nttp(cfg: &DeviceConfig, psi: &[u32; MAX_DATA_PRIMES], j: usize) -> Result<NttPrime> {
    let p = &cfg.params;
    NttPrime::new(p.data_primes()[j] as u32, psi[j], p.log_n())
}

/// Where the secret key of one symmetric encryption comes from.
pub(crate) enum KeySource<'k> {
    /// A key the caller holds in RAM.
    Ram(PackedSecretKey<'k>),
    /// A key in storage, held as the configuration's [`SecretKeyForm`] says.
    Store(&'k (dyn SecretKeyStore + 'k)),
}

/// The working memory of one encryptor, borrowed: the pipeline itself. Every encryption runs on a
/// fresh `Core` (`fn core(&mut self)` of the encryptor), which wipes the working buffers when it
/// is dropped, so no encryption leaves message, noise or NTT(s) behind, whatever it returned.
pub(crate) struct Core<'a> {
    pub cfg: &'a DeviceConfig,
    pub psi: &'a [u32; MAX_DATA_PRIMES],
    pub encoder: EncoderView<'a>,
    pub ntt_tables: &'a [u32],
    pub msg: &'a mut [f64],
    pub a: &'a mut [u32],
    pub b: &'a mut [u32],
    pub roots: &'a mut [u32],
    pub key: &'a mut [u8],
    pub key_loaded: &'a mut bool,
}

impl Drop for Core<'_> {
    fn drop(&mut self) {
        self.wipe();
    }
}

impl<'a> Core<'a> {
    fn prime(&self, j: usize) -> Result<NttPrime> {
        nttp(self.cfg, self.psi, j)
    }

    fn tables(&self, j: usize) -> Option<LoadedTables<'a>> {
        if !self.cfg.ntt_roots.is_loaded() {
            return None;
        }
        let l = self.cfg.params.data_primes().len();
        let all: &'a [u32] = self.ntt_tables;
        let per = all.len() / l;
        LoadedTables::split(
            all.get(j * per..(j + 1) * per)?,
            self.cfg.params.n(),
            self.cfg.ntt_roots == NttRoots::Loaded,
            self.cfg.needs_inverse_ntt(),
        )
    }

    fn forward(&mut self, j: usize, second: bool) -> Result<()> {
        let p = self.prime(j)?;
        let mode = self.cfg.ntt_roots;
        let t = self.tables(j);
        let buf: &mut [u32] = if second { &mut *self.b } else { &mut *self.a };
        match (mode, t) {
            (NttRoots::Loaded, Some(t)) => ntt::forward_loaded(buf, &p, &t),
            (NttRoots::LoadedPlain, Some(t)) => ntt::forward_table(buf, &p, t.fwd),
            (NttRoots::OneShot, _) => {
                p.fill_roots(false, &mut *self.roots);
                ntt::forward_table(buf, &p, &*self.roots);
            }
            _ => ntt::forward_otf(buf, &p),
        }
        Ok(())
    }

    fn inverse_a(&mut self, j: usize) -> Result<()> {
        let p = self.prime(j)?;
        let t = self.tables(j);
        match (self.cfg.ntt_roots, t) {
            (NttRoots::Loaded, Some(t)) => ntt::inverse_loaded(self.a, &p, &t),
            (NttRoots::LoadedPlain, Some(t)) if !t.inv.is_empty() => {
                ntt::inverse_table(self.a, &p, t.inv)
            }
            (NttRoots::OneShot, _) => {
                p.fill_roots(true, self.roots);
                ntt::inverse_table(self.a, &p, self.roots);
            }
            _ => ntt::inverse_otf(self.a, &p),
        }
        Ok(())
    }

    /// Clears every buffer that held message, noise, NTT(s) or NTT(u); the key slot too unless the
    /// key is persistent.
    pub fn wipe(&mut self) {
        self.msg.zeroize();
        self.a.zeroize();
        self.b.zeroize();
        if self.cfg.secret_key != SecretKeyForm::Persistent {
            self.key.zeroize();
            *self.key_loaded = false;
        }
    }

    /// Forgets a persistent key.
    pub fn forget_key(&mut self) {
        self.key.zeroize();
        *self.key_loaded = false;
    }

    fn load_key(&mut self, store: &dyn SecretKeyStore) -> Result<()> {
        store
            .read(0, self.key)
            .map_err(|_| CkksError::KeyStoreFailed)?;
        if !packed_is_valid(self.key) {
            self.key.zeroize();
            return Err(CkksError::Format(
                "stored secret key has a coefficient outside {-1, 0, 1}",
            ));
        }
        *self.key_loaded = true;
        Ok(())
    }

    /// A = s mod q_j (coefficient domain) from wherever the key is.
    fn secret_into_a(&mut self, j: usize, src: &KeySource<'_>) -> Result<()> {
        let m = self.prime(j)?.m;
        match src {
            KeySource::Ram(k) => {
                for (i, a) in self.a.iter_mut().enumerate() {
                    *a = m.reduce_i64(k.get(i) as i64);
                }
            }
            KeySource::Store(store) if self.cfg.secret_key == SecretKeyForm::NotPersistent => {
                let mut piece = [0u8; KEY_CHUNK];
                let mut ok = true;
                for (c, out) in self.a.chunks_mut(4 * KEY_CHUNK).enumerate() {
                    let bytes = out.len() / 4;
                    store
                        .read(c * KEY_CHUNK, &mut piece[..bytes])
                        .map_err(|_| CkksError::KeyStoreFailed)?;
                    ok &= packed_is_valid(&piece[..bytes]);
                    for (i, a) in out.iter_mut().enumerate() {
                        *a = m.reduce_i64(packed_coeff(&piece, i) as i64);
                    }
                }
                piece.zeroize();
                if !ok {
                    return Err(CkksError::Format(
                        "stored secret key has a coefficient outside {-1, 0, 1}",
                    ));
                }
            }
            KeySource::Store(_) => {
                for (i, a) in self.a.iter_mut().enumerate() {
                    *a = m.reduce_i64(packed_coeff(self.key, i) as i64);
                }
            }
        }
        Ok(())
    }

    pub fn symmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        src: &KeySource<'_>,
        seeds: &EncryptionSeeds,
        send_c1: bool,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        let n = self.cfg.params.n();
        let degree = match src {
            KeySource::Ram(k) => k.n(),
            KeySource::Store(s) => s.degree(),
        };
        if degree != n {
            return Err(CkksError::Mismatch(
                "secret key degree differs from the parameters",
            ));
        }
        if let KeySource::Store(store) = src {
            match self.cfg.secret_key {
                SecretKeyForm::NotPersistent => {}
                SecretKeyForm::PersistentAcrossPrimes => self.load_key(*store)?,
                SecretKeyForm::Persistent => {
                    if !*self.key_loaded {
                        self.load_key(*store)?;
                    }
                }
            }
        }
        self.encode_with_error(values, &seeds.private, b"e")?;
        if !send_c1 {
            sink.send(Part::Seed(&seeds.shareable))
                .map_err(|_| CkksError::SinkFailed)?;
        }
        let l = self.cfg.params.data_primes().len();
        let mut rejections = 0u64;
        for j in 0..l {
            let m = self.prime(j)?.m;
            let q = m.value() as u64;
            // A = NTT(s) mod q_j.
            self.secret_into_a(j, src)?;
            self.forward(j, false)?;
            let rej_before = rejections;
            match self.cfg.memory {
                MemoryMode::Fast => {
                    self.load_msg_into_b(j)?;
                    self.forward(j, true)?;
                    let (a_buf, b_buf) = (&*self.a, &mut *self.b);
                    sample_uniform_limb(&seeds.shareable, n, l, j, q, &mut rejections, |i, a| {
                        b_buf[i] = m.sub(b_buf[i], m.mul(a as u32, a_buf[i]));
                    });
                    send_limb(sink, 0, j, self.b)?;
                }
                MemoryMode::Low => {
                    let a_buf = &mut *self.a;
                    sample_uniform_limb(&seeds.shareable, n, l, j, q, &mut rejections, |i, a| {
                        a_buf[i] = m.mul(a as u32, a_buf[i]);
                    });
                    self.inverse_a(j)?;
                    // A = (m + e) − a·s in the coefficient domain, then back to NTT form.
                    for a in self.a.iter_mut() {
                        *a = m.sub(0, *a);
                    }
                    self.add_msg_to_a(j)?;
                    self.forward(j, false)?;
                    send_limb(sink, 0, j, self.a)?;
                }
            }
            if send_c1 {
                let mut again = rej_before;
                let a_buf = &mut *self.a;
                sample_uniform_limb(&seeds.shareable, n, l, j, q, &mut again, |i, a| {
                    a_buf[i] = a as u32
                });
                send_limb(sink, 1, j, self.a)?;
            }
        }
        Ok(())
    }

    pub fn asymmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        pk: &PublicKeyView<'_>,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        if pk.primes() != self.cfg.params.data_primes() {
            return Err(CkksError::Mismatch("public key made for other primes"));
        }
        self.encode_with_error(values, &seeds.private, b"e0")?;
        for j in 0..self.cfg.params.data_primes().len() {
            let m = self.prime(j)?.m;
            match self.cfg.memory {
                MemoryMode::Fast => {
                    self.load_ternary_into_a(&seeds.private, b"u", j)?;
                    self.forward(j, false)?;
                    for poly in 0..2 {
                        if poly == 0 {
                            self.load_msg_into_b(j)?;
                        } else {
                            self.load_cbd_into_b(&seeds.private, b"e1", j)?;
                        }
                        self.forward(j, true)?;
                        let pkl = pk.limb(poly, j);
                        for ((b, &a), &k) in self.b.iter_mut().zip(self.a.iter()).zip(pkl) {
                            *b = m.add(*b, m.mul(a, k));
                        }
                        send_limb(sink, poly, j, self.b)?;
                    }
                }
                MemoryMode::Low => {
                    for poly in 0..2 {
                        self.load_ternary_into_a(&seeds.private, b"u", j)?;
                        self.forward(j, false)?;
                        for (a, &k) in self.a.iter_mut().zip(pk.limb(poly, j)) {
                            *a = m.mul(*a, k);
                        }
                        self.inverse_a(j)?;
                        if poly == 0 {
                            self.add_msg_to_a(j)?;
                        } else {
                            let mut x = Cbd21::new(&seeds.private, b"e1");
                            for a in self.a.iter_mut() {
                                *a = m.add(*a, m.reduce_i64(x.sample()));
                            }
                        }
                        self.forward(j, false)?;
                        send_limb(sink, poly, j, self.a)?;
                    }
                }
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
        values.encode_into(&self.encoder, p.scale(), self.msg)?;
        let n = p.n();
        let mut x = Cbd21::new(private, label);
        for c in 0..n {
            self.msg[crate::encoding::coeff_index(c, n)] += x.sample() as f64;
        }
        Ok(())
    }

    fn add_msg_to_a(&mut self, j: usize) -> Result<()> {
        let m = self.prime(j)?.m;
        merge_msg(self.msg, self.a, |x, v| m.add(x, m.reduce_i64(v)));
        Ok(())
    }

    fn load_msg_into_b(&mut self, j: usize) -> Result<()> {
        let m = self.prime(j)?.m;
        merge_msg(self.msg, self.b, |_, v| m.reduce_i64(v));
        Ok(())
    }

    fn load_cbd_into_b(&mut self, private: &[u8; 32], label: &[u8], j: usize) -> Result<()> {
        let m = self.prime(j)?.m;
        let mut x = Cbd21::new(private, label);
        for b in self.b.iter_mut() {
            *b = m.reduce_i64(x.sample());
        }
        Ok(())
    }

    fn load_ternary_into_a(&mut self, private: &[u8; 32], label: &[u8], j: usize) -> Result<()> {
        let m = self.prime(j)?.m;
        let buf = &mut *self.a;
        let n = buf.len();
        ternary(&mut Xof::new(private, label), n, |i, t| {
            buf[i] = m.reduce_i64(t as i64)
        });
        Ok(())
    }
}

/// The methods every device encryptor has over its pipeline [`Core`] (the owned
/// `DeviceEncryptor` and the allocation-free [`BufferEncryptor`]), written once and expanded in
/// both `impl` blocks so that they stay inherent methods; the type provides `fn core(&mut self)`.
macro_rules! core_encryptor_methods {
    () => {
        /// Symmetric encryption with a key from storage, held as [`DeviceConfig::secret_key`] says
        /// (streamed per prime, loaded per encryption, or loaded once and kept); `seeded` sends the
        /// seed instead of c1.
        ///
        /// [`DeviceConfig::secret_key`]: crate::DeviceConfig::secret_key
        pub fn encrypt_symmetric_stored<V: $crate::device::config::SlotValues + ?Sized>(
            &mut self,
            values: &V,
            store: &dyn $crate::device::config::SecretKeyStore,
            seeds: &$crate::device::buffer::EncryptionSeeds,
            seeded: bool,
            sink: &mut (impl $crate::device::config::Sink + ?Sized),
        ) -> $crate::error::Result<()> {
            let key = $crate::device::buffer::KeySource::Store(store);
            self.core().symmetric(values, &key, seeds, !seeded, sink)
        }

        /// Wipes a persistent secret key from the key slot.
        pub fn forget_secret_key(&mut self) {
            self.core().forget_key();
        }
    };
}
#[cfg(feature = "alloc")]
pub(crate) use core_encryptor_methods;

/// `buf[i] = f(buf[i], msg coefficient)` over a residue buffer, whose first half holds the even
/// message coefficients and second half the odd ones (`msg` interleaves them).
fn merge_msg(msg: &[f64], buf: &mut [u32], f: impl Fn(u32, i64) -> u32) {
    let half = buf.len() / 2;
    let (lo, hi) = buf.split_at_mut(half);
    for k in 0..half {
        lo[k] = f(lo[k], msg[2 * k] as i64);
        hi[k] = f(hi[k], msg[2 * k + 1] as i64);
    }
}

/// Sends limb `prime` of ciphertext polynomial `poly`.
fn send_limb(
    sink: &mut (impl Sink + ?Sized),
    poly: usize,
    prime: usize,
    coeffs: &[u32],
) -> Result<()> {
    sink.send(Part::Limb {
        poly,
        prime,
        coeffs,
    })
    .map_err(|_| CkksError::SinkFailed)
}

/// Caller memory for a [`BufferEncryptor`]: working buffers (written) and tables (read).
/// Lengths must equal [`DeviceConfig::buffer_sizes`]; unused ones are empty slices.
pub struct DeviceMemory<'a> {
    /// Encoded message (`msg`).
    pub msg: &'a mut [f64],
    /// First residue buffer (`a`).
    pub a: &'a mut [u32],
    /// Second residue buffer (`b`).
    pub b: &'a mut [u32],
    /// One-shot NTT roots (`roots`).
    pub roots: &'a mut [u32],
    /// Secret-key slot (`key`).
    pub key: &'a mut [u8],
    /// FFT root table (`fft_roots`), e.g. in flash.
    pub fft_roots: &'a [Complex],
    /// Index map (`index_map`), e.g. in flash.
    pub index_map: &'a [u16],
    /// NTT tables of all primes (`ntt_tables`), e.g. in flash.
    pub ntt_tables: &'a [u32],
}

/// The device encryptor without an allocator: the pipeline of `DeviceEncryptor` over caller
/// buffers and tables. Setup checks every length and every table entry; encryption never
/// allocates (the crate has no allocator in this build). Buffers are wiped after every encryption
/// and on drop.
pub struct BufferEncryptor<'a> {
    cfg: DeviceConfig,
    psi: [u32; MAX_DATA_PRIMES],
    encoder: EncoderView<'a>,
    ntt_tables: &'a [u32],
    msg: &'a mut [f64],
    a: &'a mut [u32],
    b: &'a mut [u32],
    roots: &'a mut [u32],
    key: &'a mut [u8],
    key_loaded: bool,
}

impl<'a> BufferEncryptor<'a> {
    /// Sets up over `mem` (see [`DeviceMemory`]); loaded tables are checked against the parameters.
    pub fn new(cfg: DeviceConfig, mem: DeviceMemory<'a>) -> Result<Self> {
        let s: BufferSizes = cfg.buffer_sizes();
        check_len(mem.msg.len(), s.msg)?;
        check_len(mem.a.len(), s.a)?;
        check_len(mem.b.len(), s.b)?;
        check_len(mem.roots.len(), s.roots)?;
        check_len(mem.key.len(), s.key)?;
        check_len(mem.fft_roots.len(), s.fft_roots)?;
        check_len(mem.index_map.len(), s.index_map)?;
        check_len(mem.ntt_tables.len(), s.ntt_tables)?;
        let n = cfg.params.n();
        let encoder = EncoderView::new(
            n,
            (cfg.fft_roots == FftRoots::Loaded).then_some(mem.fft_roots),
            (cfg.index_map != IndexMap::OnTheFly).then_some(mem.index_map),
        )?;
        let psi = prime_roots(&cfg)?;
        if s.ntt_tables > 0 {
            let per = s.ntt_tables / cfg.params.data_primes().len();
            for (j, t) in mem.ntt_tables.chunks_exact(per).enumerate() {
                let p = nttp(&cfg, &psi, j)?;
                if !ntt::check_loaded(
                    &p,
                    cfg.ntt_roots == NttRoots::Loaded,
                    cfg.needs_inverse_ntt(),
                    t,
                ) {
                    return Err(CkksError::Format(
                        "NTT root table does not match the parameters",
                    ));
                }
            }
        }
        Ok(Self {
            cfg,
            psi,
            encoder,
            ntt_tables: mem.ntt_tables,
            msg: mem.msg,
            a: mem.a,
            b: mem.b,
            roots: mem.roots,
            key: mem.key,
            key_loaded: false,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    fn core(&mut self) -> Core<'_> {
        Core {
            cfg: &self.cfg,
            psi: &self.psi,
            encoder: self.encoder,
            ntt_tables: self.ntt_tables,
            msg: self.msg,
            a: self.a,
            b: self.b,
            roots: self.roots,
            key: self.key,
            key_loaded: &mut self.key_loaded,
        }
    }

    /// Symmetric seeded encryption with a key held in RAM: sends `Seed`, then c0 of each prime.
    pub fn encrypt_symmetric_seeded<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        sk: &PackedSecretKey<'_>,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        self.core()
            .symmetric(values, &KeySource::Ram(*sk), seeds, false, sink)
    }

    core_encryptor_methods!();

    /// Public-key encryption: sends c0 and c1 for each prime.
    pub fn encrypt_asymmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        pk: &PublicKeyView<'_>,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        self.core().asymmetric(values, pk, seeds, sink)
    }
}

impl Drop for BufferEncryptor<'_> {
    fn drop(&mut self) {
        // The core wipes the working buffers as it goes.
        self.core().forget_key();
    }
}
