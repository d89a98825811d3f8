//! A device-side [`Sink`](crate::Sink) that turns the seeded symmetric stream directly into the bytes of SEAL's
//! `Ciphertext::save` (uncompressed, seeded form): preamble, c0 limb after limb as u64 words, then the
//! SHAKE256 seed. SEAL loads it and expands c1 itself. No allocation; bytes leave through `out`.

use super::header::{ciphertext_preamble, parms_id, prng_info, seeded_ciphertext_bytes, ParmsId};
use crate::device::config::{Part, Sink, SinkError};
use crate::error::Result;
use crate::params::CkksParams;

/// Streams a seeded ciphertext in SEAL format to a byte sink.
pub struct SealSeededWriter<F: FnMut(&[u8]) -> core::result::Result<(), SinkError>> {
    out: F,
    pid: ParmsId,
    n: usize,
    level: usize,
    scale: f64,
    seed: Option<[u8; 64]>,
    next_prime: usize,
}

impl<F: FnMut(&[u8]) -> core::result::Result<(), SinkError>> SealSeededWriter<F> {
    /// A writer for a fresh ciphertext of `params` (data level, scale of the parameters).
    pub fn new(params: &CkksParams, out: F) -> Result<Self> {
        Ok(Self {
            out,
            pid: parms_id(params.n(), params.data_primes())?,
            n: params.n(),
            level: params.data_primes().len(),
            scale: params.scale(),
            seed: None,
            next_prime: 0,
        })
    }

    /// Total bytes the stream will have.
    pub fn total_bytes(&self) -> u64 {
        seeded_ciphertext_bytes(self.n, self.level)
    }

    /// Writes the trailing seed; call after the encryption returned.
    pub fn finish(mut self) -> core::result::Result<F, SinkError> {
        match self.seed {
            Some(seed) if self.next_prime == self.level => {
                (self.out)(&prng_info(&seed))?;
                Ok(self.out)
            }
            _ => Err(SinkError),
        }
    }
}

impl<F: FnMut(&[u8]) -> core::result::Result<(), SinkError>> Sink for SealSeededWriter<F> {
    fn send(&mut self, part: Part<'_>) -> core::result::Result<(), SinkError> {
        match part {
            Part::Seed(s) if self.seed.is_none() => {
                self.seed = Some(*s);
                let total = self.total_bytes();
                let pre =
                    ciphertext_preamble(&self.pid, self.n, self.level, 2, 1, self.scale, total);
                (self.out)(&pre)
            }
            Part::Limb {
                poly: 0,
                prime,
                coeffs,
            } if self.seed.is_some() && prime == self.next_prime => {
                let mut chunk = [0u8; 512];
                for words in coeffs.chunks(64) {
                    for (i, &w) in words.iter().enumerate() {
                        chunk[8 * i..8 * i + 8].copy_from_slice(&(w as u64).to_le_bytes());
                    }
                    (self.out)(&chunk[..8 * words.len()])?;
                }
                self.next_prime += 1;
                Ok(())
            }
            _ => Err(SinkError),
        }
    }
}
