//! Memory accounting of the device side (SEAL-Embedded's `ckks_get_mempool_size_*`, redone for this
//! design). Working RAM is what one encryption needs besides code; tables are what the "loaded"
//! choices keep (flash-resident on a real device); keys are the secret or public key held.
//!
//! With everything on the fly and [`MemoryMode::Low`], symmetric encryption needs
//! 8N (message, N/2 complex f64) + 4N (one residue buffer) + N/4 (packed secret) bytes ≈ 12.25·N,
//! i.e. 49 KiB at N = 4096 — against SEAL-Embedded's default ≈ 97 KiB.

use super::encryptor::{DeviceConfig, EncryptionKind, MemoryMode, NttRoots};
use crate::encoding::{FftRoots, IndexMap};

/// Bytes of the SHAKE256 state and small locals alive during encryption (stack).
pub const STATE_BYTES: usize = 512;

/// What a configuration needs, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryReport {
    /// Buffers used during one encryption, plus the SHAKE state.
    pub working: usize,
    /// Precomputed tables (FFT roots, index map, NTT roots).
    pub tables: usize,
    /// Key material (packed secret key, or the public key's data-level limbs).
    pub keys: usize,
}

impl MemoryReport {
    /// RAM if tables and keys live in RAM too.
    pub fn total(&self) -> usize {
        self.working + self.tables + self.keys
    }
    /// RAM when tables and the public key stay in flash (the secret key is always counted).
    pub fn ram(&self, kind: EncryptionKind) -> usize {
        match kind {
            EncryptionKind::Symmetric => self.working + self.keys,
            EncryptionKind::Asymmetric => self.working,
        }
    }
}

/// The bytes configuration `cfg` needs for `kind` of encryption.
pub fn working_memory(cfg: &DeviceConfig, kind: EncryptionKind) -> MemoryReport {
    let n = cfg.params.n();
    let l = cfg.params.data_primes().len();
    let mut working = 8 * n + 4 * n + STATE_BYTES;
    if cfg.memory == MemoryMode::Fast {
        working += 4 * n;
    }
    if cfg.ntt_roots == NttRoots::OneShot {
        working += 4 * n;
    }
    let mut tables = 0;
    if cfg.fft_roots == FftRoots::Loaded {
        tables += 16 * (n / 2);
    }
    if cfg.index_map == IndexMap::Persistent {
        tables += 2 * (n / 2);
    }
    if cfg.ntt_roots == NttRoots::Loaded {
        let dirs = if cfg.memory == MemoryMode::Low { 2 } else { 1 };
        tables += l * dirs * 2 * 4 * n;
    }
    let keys = match kind {
        EncryptionKind::Symmetric => n / 4,
        EncryptionKind::Asymmetric => 2 * l * 4 * n,
    };
    MemoryReport {
        working,
        tables,
        keys,
    }
}
