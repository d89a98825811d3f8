//! Memory accounting of the device side (SEAL-Embedded's `ckks_get_mempool_size_*`, redone for this
//! design). Working RAM is what one encryption needs besides code; tables are what the "loaded"
//! choices keep (flash-resident on a real device); keys are the secret or public key held.
//!
//! With everything on the fly and [`MemoryMode::Low`](crate::MemoryMode::Low), symmetric encryption needs
//! 8N (message, N/2 complex f64) + 4N (one residue buffer) + N/4 (packed secret) bytes ≈ 12.25·N,
//! i.e. 49 KiB at N = 4096 — against SEAL-Embedded's default ≈ 97 KiB.

use super::config::{DeviceConfig, EncryptionKind, SecretKeyForm};
use crate::encoding::IndexMap;

/// Bytes of the SHAKE256 state and small locals alive during encryption (stack).
pub const STATE_BYTES: usize = 512;

/// What a configuration needs, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryReport {
    /// Buffers used during one encryption, plus the SHAKE state (and, for a key loaded per
    /// encryption, its N/4-byte slot).
    pub working: usize,
    /// Tables kept in RAM (FFT roots, a persistent index map, NTT roots).
    pub tables: usize,
    /// Key material held in RAM (a persistent packed secret key, or the public key's data-level limbs).
    pub keys: usize,
    /// Read from storage and never copied into RAM: a loaded index map, a stored secret key.
    pub flash: usize,
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

/// The bytes configuration `cfg` needs for `kind` of encryption (the symmetric key from storage,
/// held as `cfg.secret_key` says).
pub fn working_memory(cfg: &DeviceConfig, kind: EncryptionKind) -> MemoryReport {
    let n = cfg.params.n();
    let l = cfg.params.data_primes().len();
    let s = cfg.buffer_sizes();
    let mut working = 8 * s.msg + 4 * (s.a + s.b + s.roots) + STATE_BYTES;
    let mut tables = s.table_bytes();
    let mut flash = 0;
    if cfg.index_map == IndexMap::Loaded {
        tables -= 2 * s.index_map;
        flash += 2 * s.index_map;
    }
    if cfg.secret_key == SecretKeyForm::PersistentAcrossPrimes {
        // The key slot (allocated whatever the kind of encryption).
        working += n / 4;
    }
    let keys = match kind {
        EncryptionKind::Symmetric => match cfg.secret_key {
            SecretKeyForm::Persistent => n / 4,
            SecretKeyForm::PersistentAcrossPrimes => {
                flash += n / 4;
                0
            }
            SecretKeyForm::NotPersistent => {
                flash += n / 4;
                0
            }
        },
        EncryptionKind::Asymmetric => 2 * l * 4 * n,
    };
    MemoryReport {
        working,
        tables,
        keys,
        flash,
    }
}
