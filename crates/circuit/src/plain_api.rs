//! Convenience methods of the plain engine (`Engine<PlainBackend>`): integer-valued inputs and outputs
//! and whole-memory images, either the same in all 64 lanes or one value per lane. This is the API
//! `vsp emu` and co-verification of the cores use.

use crate::blueprint::{MemImpl, MemKind};
use crate::engine::{Engine, MemState};
use crate::error::CircuitError;
use crate::plain::{PlainBackend, PlainMemory};

fn spread(value: u64, width: usize) -> Vec<u64> {
    (0..width)
        .map(|i| {
            if i < 64 && (value >> i) & 1 == 1 {
                u64::MAX
            } else {
                0
            }
        })
        .collect()
}

impl Engine<PlainBackend> {
    /// Sets `@name` to `value` in every lane (bits above the port width must be 0).
    pub fn set_input_value(&mut self, name: &str, value: u64) -> Result<(), CircuitError> {
        let w = self.input_width(name)?;
        if w < 64 && value >> w != 0 {
            return Err(CircuitError::WidthMismatch(format!(
                "value {value:#x} does not fit the {w}-bit input @{name}"
            )));
        }
        self.set_input(name, spread(value, w))
    }

    /// Sets `@name` per lane: lane `l` gets `values[l]` (at most 64 values; missing lanes get 0).
    pub fn set_input_lanes(&mut self, name: &str, values: &[u64]) -> Result<(), CircuitError> {
        let w = self.input_width(name)?;
        if values.len() > 64 {
            return Err(CircuitError::Usage(format!(
                "{} lane values, at most 64",
                values.len()
            )));
        }
        let bits = (0..w)
            .map(|i| {
                values
                    .iter()
                    .enumerate()
                    .map(|(l, v)| if i < 64 { ((v >> i) & 1) << l } else { 0 })
                    .sum()
            })
            .collect();
        self.set_input(name, bits)
    }

    fn input_width(&self, name: &str) -> Result<usize, CircuitError> {
        self.circuit()
            .input(name)
            .map(|p| p.bits.len())
            .ok_or_else(|| CircuitError::Usage(format!("no external input @{name}")))
    }

    /// The value of output `@name` in lane `lane` after the last cycle (ports wider than 64 bits are
    /// truncated; use [`Engine::output`] for those).
    pub fn output_value(&self, name: &str, lane: usize) -> Result<u64, CircuitError> {
        if lane >= 64 {
            return Err(CircuitError::Usage(format!(
                "lane {lane} out of range 0..64"
            )));
        }
        let bits = self.output(name)?;
        Ok(bits
            .iter()
            .take(64)
            .enumerate()
            .map(|(i, b)| ((b >> lane) & 1) << i)
            .sum())
    }

    /// The value of output `@name` in each of the 64 lanes.
    pub fn output_lanes(&self, name: &str) -> Result<Vec<u64>, CircuitError> {
        (0..64).map(|l| self.output_value(name, l)).collect()
    }

    /// Loads `words` (address 0 upward; the rest 0) into memory `name`, whatever its kind, in all lanes.
    pub fn load_memory_words(&mut self, name: &str, words: &[u64]) -> Result<(), CircuitError> {
        let (_, m) = self
            .circuit()
            .memory(name)
            .ok_or_else(|| CircuitError::Usage(format!("no memory named {name:?}")))?;
        let spec = m.spec.clone();
        let img = PlainMemory::from_words(spec.addr_width, spec.data_width, words)
            .map_err(|e| CircuitError::Usage(format!("memory {name}: {e}")))?;
        match (spec.imp, spec.kind) {
            (MemImpl::Cmux, MemKind::Rom) => self.set_rom(name, img),
            (MemImpl::Cmux, MemKind::Ram) => self.set_ram(name, img),
            (MemImpl::Mux, _) => self.set_memory_cells(name, img.bits),
        }
    }

    /// The words of memory `name` as lane `lane` sees them.
    pub fn memory_words(&self, name: &str, lane: usize) -> Result<Vec<u64>, CircuitError> {
        if lane >= 64 {
            return Err(CircuitError::Usage(format!(
                "lane {lane} out of range 0..64"
            )));
        }
        match self.memory(name)? {
            MemState::Rom(m) | MemState::Ram(m) => Ok(m.words(lane)),
            MemState::Cells => {
                let (_, m) = self
                    .circuit()
                    .memory(name)
                    .ok_or_else(|| CircuitError::Usage(format!("no memory named {name:?}")))?;
                let img = PlainMemory {
                    addr_width: m.spec.addr_width,
                    data_width: m.spec.data_width,
                    bits: self.memory_cells(name)?,
                };
                Ok(img.words(lane))
            }
        }
    }
}
