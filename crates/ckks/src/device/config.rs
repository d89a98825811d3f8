//! The device's configuration knobs and its streaming interface: where roots and index maps come
//! from, the buffer strategy, the slot-value types it encodes, and the [`Sink`] that receives the
//! ciphertext one limb at a time (SEAL-Embedded's `send_fn`).

use alloc::vec::Vec;

use crate::encoding::{Complex, Encoder, FftRoots, IndexMap};
use crate::error::Result;
use crate::params::CkksParams;
use crate::prng::SEED_BYTES;

/// Slot values the device can encode: real (`f64`) or complex ([`Complex`]) slices, vectors, arrays.
pub trait SlotValues {
    /// Encodes into the encoder's coefficient buffer layout.
    fn encode_into(&self, enc: &Encoder, scale: f64, out: &mut [f64]) -> Result<()>;
}

impl SlotValues for [f64] {
    fn encode_into(&self, enc: &Encoder, scale: f64, out: &mut [f64]) -> Result<()> {
        enc.encode_real(self, scale, out)
    }
}

impl SlotValues for [Complex] {
    fn encode_into(&self, enc: &Encoder, scale: f64, out: &mut [f64]) -> Result<()> {
        enc.encode_complex(self, scale, out)
    }
}

impl<T> SlotValues for Vec<T>
where
    [T]: SlotValues,
{
    fn encode_into(&self, enc: &Encoder, scale: f64, out: &mut [f64]) -> Result<()> {
        self.as_slice().encode_into(enc, scale, out)
    }
}

impl<T, const K: usize> SlotValues for [T; K]
where
    [T]: SlotValues,
{
    fn encode_into(&self, enc: &Encoder, scale: f64, out: &mut [f64]) -> Result<()> {
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
    /// Roots and Shoup constants of every prime prepared at setup (lazy Harvey butterflies).
    Loaded,
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
