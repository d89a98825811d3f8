//! The device's configuration knobs and its streaming interface: where roots and index maps come
//! from, the buffer strategy, the slot-value types it encodes, and the [`Sink`](crate::Sink) that receives the
//! ciphertext one limb at a time (SEAL-Embedded's `send_fn`).

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::encoding::{Complex, EncoderView, FftRoots, IndexMap};
use crate::error::Result;
use crate::params::CkksParams;
use crate::prng::SEED_BYTES;

/// Slot values the device can encode: real (`f64`) or complex ([`Complex`]) slices, vectors, arrays.
pub trait SlotValues {
    /// Encodes into the encoder's coefficient buffer layout.
    fn encode_into(&self, enc: &EncoderView<'_>, scale: f64, out: &mut [f64]) -> Result<()>;
}

impl SlotValues for [f64] {
    fn encode_into(&self, enc: &EncoderView<'_>, scale: f64, out: &mut [f64]) -> Result<()> {
        enc.encode_real(self, scale, out)
    }
}

impl SlotValues for [Complex] {
    fn encode_into(&self, enc: &EncoderView<'_>, scale: f64, out: &mut [f64]) -> Result<()> {
        enc.encode_complex(self, scale, out)
    }
}

#[cfg(feature = "alloc")]
impl<T> SlotValues for Vec<T>
where
    [T]: SlotValues,
{
    fn encode_into(&self, enc: &EncoderView<'_>, scale: f64, out: &mut [f64]) -> Result<()> {
        self.as_slice().encode_into(enc, scale, out)
    }
}

impl<T, const K: usize> SlotValues for [T; K]
where
    [T]: SlotValues,
{
    fn encode_into(&self, enc: &EncoderView<'_>, scale: f64, out: &mut [f64]) -> Result<()> {
        self.as_slice().encode_into(enc, scale, out)
    }
}

/// Where the NTT twiddles come from (SEAL-Embedded's `SE_NTT_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttRoots {
    /// No table; each stage's roots are generated incrementally.
    OnTheFly,
    /// The current prime's N roots are computed into scratch before each transform.
    OneShot,
    /// Every prime's roots prepared at setup or read from storage, plain Barrett butterflies
    /// (SEAL-Embedded's `SE_NTT_REG`: N words per prime and direction).
    LoadedPlain,
    /// Roots and Shoup constants of every prime prepared at setup or read from storage, lazy Harvey
    /// butterflies (`SE_NTT_FAST`: 2N words per prime and direction).
    Loaded,
}

impl NttRoots {
    /// Whether the roots come from per-prime tables.
    pub fn is_loaded(self) -> bool {
        matches!(self, Self::LoadedPlain | Self::Loaded)
    }
}

/// How the device holds the secret key for symmetric encryption (SEAL-Embedded's `SE_SK_TYPE`).
/// The key lives in storage (a [`SecretKeyStore`], e.g. flash) in its small form, 2 bits per
/// coefficient; the forms trade RAM against reads. All give bit-identical ciphertexts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecretKeyForm {
    /// Never held: streamed from storage for every prime, in 64-byte pieces on the stack
    /// (`SE_SK_NOT_PERSISTENT`: L loads per encryption, no key RAM).
    NotPersistent,
    /// Loaded once per encryption into an N/4-byte working buffer, wiped afterwards
    /// (`SE_SK_PERSISTENT_ACROSS_PRIMES`).
    PersistentAcrossPrimes,
    /// Loaded once and kept in the encryptor's N/4-byte key slot until dropped or forgotten
    /// (`SE_SK_PERSISTENT`).
    Persistent,
}

/// Error of a [`SecretKeyStore`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreError;

/// Where the device keeps its packed secret key (flash, a secure element, a file): reads
/// `out.len()` bytes at byte `offset` of the N/4-byte packed form (00 = 0, 01 = 1, 10 = −1, four
/// coefficients per byte, lowest bits first).
pub trait SecretKeyStore {
    /// Degree N of the stored key.
    fn degree(&self) -> usize;
    /// Copies bytes `offset .. offset + out.len()` of the packed key into `out`.
    fn read(&self, offset: usize, out: &mut [u8]) -> core::result::Result<(), StoreError>;
}

/// Buffer strategy (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryMode {
    /// One residue buffer, one extra inverse + forward NTT per polynomial.
    Low,
    /// Two residue buffers.
    Fast,
}

/// Symmetric or public-key encryption.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncryptionKind {
    /// Secret key on the device, seeded c1.
    Symmetric,
    /// Public key from the server.
    Asymmetric,
}

/// Every knob of the device side.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceConfig {
    /// The parameters.
    pub params: CkksParams,
    /// Encoder roots.
    pub fft_roots: FftRoots,
    /// Encoder index map.
    pub index_map: IndexMap,
    /// NTT roots.
    pub ntt_roots: NttRoots,
    /// Buffer strategy.
    pub memory: MemoryMode,
    /// How a stored secret key is held (symmetric encryption from a [`SecretKeyStore`]).
    pub secret_key: SecretKeyForm,
}

/// Lengths (in elements) of every caller buffer and table a configuration needs: what
/// `BufferEncryptor` takes and what `DeviceEncryptor` allocates. Zero means "pass an empty slice".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSizes {
    /// Encoded message, f64 (N).
    pub msg: usize,
    /// First residue buffer, u32 (N).
    pub a: usize,
    /// Second residue buffer, u32 (N in [`MemoryMode::Fast`]).
    pub b: usize,
    /// One-shot NTT roots, u32 (N for [`NttRoots::OneShot`]).
    pub roots: usize,
    /// Secret-key slot, bytes (N/4 unless [`SecretKeyForm::NotPersistent`]).
    pub key: usize,
    /// FFT root table, [`Complex`] (N/2 for [`FftRoots::Loaded`]).
    pub fft_roots: usize,
    /// Index-map table, u16 (N/2 unless [`IndexMap::OnTheFly`]).
    pub index_map: usize,
    /// NTT tables of all primes, u32 (for loaded NTT roots).
    pub ntt_tables: usize,
}

impl BufferSizes {
    /// Bytes of the working buffers (message, residues, one-shot roots, key slot).
    pub fn working_bytes(&self) -> usize {
        8 * self.msg + 4 * (self.a + self.b + self.roots) + self.key
    }
    /// Bytes of the tables.
    pub fn table_bytes(&self) -> usize {
        16 * self.fft_roots + 2 * self.index_map + 4 * self.ntt_tables
    }
}

impl DeviceConfig {
    /// The smallest-RAM configuration: everything on the fly, one residue buffer.
    pub fn low_memory(params: CkksParams) -> Self {
        Self {
            params,
            fft_roots: FftRoots::OnTheFly,
            index_map: IndexMap::OnTheFly,
            ntt_roots: NttRoots::OnTheFly,
            memory: MemoryMode::Low,
            secret_key: SecretKeyForm::Persistent,
        }
    }
    /// The fastest configuration: loaded tables, two buffers.
    pub fn fast(params: CkksParams) -> Self {
        Self {
            params,
            fft_roots: FftRoots::Loaded,
            index_map: IndexMap::Persistent,
            ntt_roots: NttRoots::Loaded,
            memory: MemoryMode::Fast,
            secret_key: SecretKeyForm::Persistent,
        }
    }

    /// Whether the inverse NTT is used (and loaded tables include the inverse direction).
    pub fn needs_inverse_ntt(&self) -> bool {
        self.memory == MemoryMode::Low
    }

    /// The buffers and tables this configuration needs.
    pub fn buffer_sizes(&self) -> BufferSizes {
        let n = self.params.n();
        let l = self.params.data_primes().len();
        let per_prime = super::ntt::loaded_words(
            self.params.log_n(),
            self.ntt_roots == NttRoots::Loaded,
            self.needs_inverse_ntt(),
        );
        BufferSizes {
            msg: n,
            a: n,
            b: if self.memory == MemoryMode::Fast {
                n
            } else {
                0
            },
            roots: if self.ntt_roots == NttRoots::OneShot {
                n
            } else {
                0
            },
            key: if self.secret_key == SecretKeyForm::NotPersistent {
                0
            } else {
                n / 4
            },
            fft_roots: if self.fft_roots == FftRoots::Loaded {
                n / 2
            } else {
                0
            },
            index_map: if self.index_map == IndexMap::OnTheFly {
                0
            } else {
                n / 2
            },
            ntt_tables: if self.ntt_roots.is_loaded() {
                l * per_prime
            } else {
                0
            },
        }
    }
}

/// One piece of a streamed ciphertext.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// The shareable seed that expands to c1 (sent first, once).
    Seed(&'a [u8; SEED_BYTES]),
    /// Limb `prime` of polynomial `poly` (0 = c0, 1 = c1), NTT form, values < q.
    Limb {
        /// 0 for c0, 1 for c1.
        poly: usize,
        /// Index of the data prime.
        prime: usize,
        /// N coefficients.
        coeffs: &'a [u32],
    },
}

/// A sink refused data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SinkError;

/// Receives the ciphertext as it is produced (SEAL-Embedded's `send_fn`).
pub trait Sink {
    /// Takes one part; an error aborts the encryption.
    fn send(&mut self, part: Part<'_>) -> core::result::Result<(), SinkError>;
}

impl<F: FnMut(Part<'_>) -> core::result::Result<(), SinkError> + ?Sized> Sink for F {
    fn send(&mut self, part: Part<'_>) -> core::result::Result<(), SinkError> {
        self(part)
    }
}
