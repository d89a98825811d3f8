//! The streaming encryptor of SEAL-Embedded (`se_encrypt` / `se_encrypt_seeded`): encode once, then
//! compute and hand out the ciphertext one prime at a time through a caller-provided [`Sink`](crate::Sink).
//!
//! All buffers are allocated in [`DeviceEncryptor::new`](crate::DeviceEncryptor::new); encryption
//! itself never allocates. The pipeline is `device::buffer`'s, shared with the allocation-free
//! [`BufferEncryptor`](crate::BufferEncryptor).
//!
//! Symmetric (seeded): c1 = a sampled from a *shareable* 64-byte seed exactly as SEAL samples it, so
//! the device sends the seed once and c0 = [m + e − a·s] per prime (half the upload), and SEAL can load
//! the result as its own seeded ciphertext. Asymmetric: c = (pk0·u + e0 + m, pk1·u + e1) with the
//! server's (or SEAL's) public key, u ternary.
//!
//! [`MemoryMode::Low`](crate::MemoryMode::Low) keeps one N-word residue buffer: it forms a·NTT(s) (or pk·NTT(u)), returns to
//! the coefficient domain, adds the message and transforms again (3 NTTs per prime and polynomial
//! instead of 2). [`MemoryMode::Fast`](crate::MemoryMode::Fast) uses a second buffer. Both give bit-identical ciphertexts.

use alloc::vec::Vec;
use rand_core::{CryptoRng, RngCore};

pub use super::buffer::EncryptionSeeds;
use super::buffer::{core_encryptor_methods, fill_tables, prime_roots, Core, KeySource};
pub use super::config::{
    DeviceConfig, EncryptionKind, MemoryMode, NttRoots, Part, SecretKeyForm, SecretKeyStore, Sink,
    SinkError, SlotValues,
};
use super::keys::{DevicePublicKey, DeviceSecretKey};
use crate::encoding::{Complex, EncoderView, FftRoots, IndexMap};
use crate::error::Result;
use crate::params::MAX_DATA_PRIMES;

/// The device encryptor: parameters, tables and all working buffers, fixed at setup.
/// Buffers are wiped after every encryption and on drop.
pub struct DeviceEncryptor {
    cfg: DeviceConfig,
    psi: [u32; MAX_DATA_PRIMES],
    fft_roots: Vec<Complex>,
    index_map: Vec<u16>,
    flash_index_map: Option<&'static [u16]>,
    ntt_tables: Vec<u32>,
    msg: Vec<f64>,
    buf_a: Vec<u32>,
    buf_b: Vec<u32>,
    roots: Vec<u32>,
    key: Vec<u8>,
    key_loaded: bool,
}

impl DeviceEncryptor {
    /// Allocates everything the configuration needs (the only allocation of the device side).
    /// [`IndexMap::Loaded`] reads a table in storage: use [`DeviceEncryptor::with_flash_index_map`];
    /// here it is built into RAM like [`IndexMap::Persistent`].
    pub fn new(cfg: DeviceConfig) -> Result<Self> {
        let s = cfg.buffer_sizes();
        let mut fft_roots = alloc::vec![Complex::default(); s.fft_roots];
        let mut index_map = alloc::vec![0u16; s.index_map];
        let mut ntt_tables = alloc::vec![0u32; s.ntt_tables];
        fill_tables(&cfg, &mut fft_roots, &mut index_map, &mut ntt_tables)?;
        Ok(Self {
            psi: prime_roots(&cfg)?,
            fft_roots,
            index_map,
            flash_index_map: None,
            ntt_tables,
            msg: alloc::vec![0.0; s.msg],
            buf_a: alloc::vec![0; s.a],
            buf_b: alloc::vec![0; s.b],
            roots: alloc::vec![0; s.roots],
            key: alloc::vec![0; s.key],
            key_loaded: false,
            cfg,
        })
    }

    /// Like [`DeviceEncryptor::new`] with [`IndexMap::Loaded`]: the index map is read from
    /// `table` (in flash; made by [`crate::encoding::fill_index_map`]) at every encoding and never
    /// copied into RAM. The table is checked entry by entry.
    pub fn with_flash_index_map(mut cfg: DeviceConfig, table: &'static [u16]) -> Result<Self> {
        cfg.index_map = IndexMap::OnTheFly;
        EncoderView::new(cfg.params.n(), None, Some(table))?;
        let mut e = Self::new(cfg)?;
        e.cfg.index_map = IndexMap::Loaded;
        e.flash_index_map = Some(table);
        Ok(e)
    }

    /// The configuration.
    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    /// Bytes this encryptor holds: (working buffers, tables). The key slot counts as working memory.
    pub fn held_bytes(&self) -> (usize, usize) {
        let work = self.msg.len() * 8
            + (self.buf_a.len() + self.buf_b.len() + self.roots.len()) * 4
            + self.key.len();
        let tables =
            self.fft_roots.len() * 16 + self.index_map.len() * 2 + self.ntt_tables.len() * 4;
        (work, tables)
    }

    fn core(&mut self) -> Core<'_> {
        let encoder = EncoderView::from_trusted(
            self.cfg.params.n(),
            (self.cfg.fft_roots == FftRoots::Loaded).then_some(&self.fft_roots[..]),
            match self.flash_index_map {
                Some(t) => Some(t),
                None => (!self.index_map.is_empty()).then_some(&self.index_map[..]),
            },
        );
        Core {
            cfg: &self.cfg,
            psi: &self.psi,
            encoder,
            ntt_tables: &self.ntt_tables,
            msg: &mut self.msg,
            a: &mut self.buf_a,
            b: &mut self.buf_b,
            roots: &mut self.roots,
            key: &mut self.key,
            key_loaded: &mut self.key_loaded,
        }
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
        self.core()
            .symmetric(values, &KeySource::Ram(sk.packed()), seeds, false, sink)
    }

    /// Symmetric encryption that also sends c1 of every prime (no seed on the wire).
    pub fn encrypt_symmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        sk: &DeviceSecretKey,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        self.core()
            .symmetric(values, &KeySource::Ram(sk.packed()), seeds, true, sink)
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
        self.encrypt_symmetric_seeded(values, sk, &seeds, sink)
    }

    core_encryptor_methods!();

    /// Public-key encryption: sends c0 and c1 for each prime.
    pub fn encrypt_asymmetric<V: SlotValues + ?Sized>(
        &mut self,
        values: &V,
        pk: &DevicePublicKey,
        seeds: &EncryptionSeeds,
        sink: &mut (impl Sink + ?Sized),
    ) -> Result<()> {
        self.core().asymmetric(values, &pk.view(), seeds, sink)
    }
}

impl Drop for DeviceEncryptor {
    fn drop(&mut self) {
        // The core wipes the working buffers as it goes.
        self.core().forget_key();
    }
}
