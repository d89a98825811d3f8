//! The plain backend: each bit is a `u64` holding 64 independent runs (bit-slicing), so one pass over the
//! circuit simulates 64 inputs at once. It is the oracle for the encrypted backend and what `vsp emu`
//! runs. Memories are stored bit-sliced as well; reads and writes follow each lane's own address.

use crate::backend::{check_write_part, Backend, Reader};
use crate::blueprint::MemorySpec;
use crate::error::CircuitError;
use crate::netlist::GateKind;

/// The bit-sliced plain backend (no state).
#[derive(Clone, Copy, Debug, Default)]
pub struct PlainBackend;

/// A bit-sliced memory: bit `i` of word `j` of lane `l` is bit `l` of `bits[j * data_width + i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainMemory {
    pub addr_width: usize,
    pub data_width: usize,
    pub bits: Vec<u64>,
}

impl PlainMemory {
    /// A memory holding `words` (word `j` → address `j`) in all 64 lanes; missing words are 0.
    pub fn from_words(
        addr_width: usize,
        data_width: usize,
        words: &[u64],
    ) -> Result<Self, CircuitError> {
        let n = 1usize << addr_width;
        if words.len() > n {
            return Err(CircuitError::Usage(format!(
                "{} words do not fit a memory of {n} words",
                words.len()
            )));
        }
        let mut bits = vec![0u64; n * data_width];
        for (j, &w) in words.iter().enumerate() {
            if data_width < 64 && w >> data_width != 0 {
                return Err(CircuitError::Usage(format!(
                    "word {j} = {w:#x} does not fit in {data_width} bits"
                )));
            }
            for i in 0..data_width {
                bits[j * data_width + i] = if (w >> i) & 1 == 1 { u64::MAX } else { 0 };
            }
        }
        Ok(PlainMemory {
            addr_width,
            data_width,
            bits,
        })
    }

    /// The words seen by lane `lane`.
    pub fn words(&self, lane: usize) -> Vec<u64> {
        (0..1usize << self.addr_width)
            .map(|j| {
                (0..self.data_width)
                    .map(|i| ((self.bits[j * self.data_width + i] >> lane) & 1) << i)
                    .sum()
            })
            .collect()
    }

    fn lane_addr(addr: &[&u64], lane: usize) -> usize {
        addr.iter()
            .enumerate()
            .map(|(k, s)| (((**s >> lane) & 1) as usize) << k)
            .sum()
    }

    /// `Some(address)` when every lane has the same address (the common `emu` case).
    fn uniform_addr(addr: &[&u64]) -> Option<usize> {
        let mut a = 0usize;
        for (k, s) in addr.iter().enumerate() {
            match **s {
                0 => {}
                u64::MAX => a |= 1 << k,
                _ => return None,
            }
        }
        Some(a)
    }

    fn read_bit(&self, addr: &[&u64], i: usize) -> u64 {
        let w = self.data_width;
        if let Some(a) = Self::uniform_addr(addr) {
            return self.bits[a * w + i];
        }
        (0..64)
            .map(|l| ((self.bits[Self::lane_addr(addr, l) * w + i] >> l) & 1) << l)
            .sum()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.addr_width as u64).to_le_bytes());
        out.extend_from_slice(&(self.data_width as u64).to_le_bytes());
        for b in &self.bits {
            out.extend_from_slice(&b.to_le_bytes());
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, CircuitError> {
        let a = r.count(0, crate::blueprint::MAX_ADDR_WIDTH, "memory address width")?;
        let w = r.count(0, crate::blueprint::MAX_DATA_WIDTH, "memory data width")?;
        let n = (1usize << a).saturating_mul(w);
        let bits = r.u64_words(n, "memory bits")?;
        Ok(PlainMemory {
            addr_width: a,
            data_width: w,
            bits,
        })
    }
}

impl Backend for PlainBackend {
    type Bit = u64;
    type Sel = u64;
    type Rom = PlainMemory;
    type Ram = PlainMemory;
    type WriteVal = u64;
    type Ring = u64;

    fn kind(&self) -> &'static str {
        "plain"
    }
    fn params_id(&self) -> String {
        "bitsliced64".into()
    }
    #[inline]
    fn constant(&self, v: bool) -> u64 {
        if v {
            u64::MAX
        } else {
            0
        }
    }
    #[inline]
    fn not(&self, a: &u64) -> Result<u64, CircuitError> {
        Ok(!a)
    }
    #[inline]
    fn gate(&self, k: GateKind, a: &u64, b: &u64) -> Result<u64, CircuitError> {
        Ok(k.eval_u64(*a, *b))
    }
    #[inline]
    fn mux(&self, s: &u64, a: &u64, b: &u64) -> Result<u64, CircuitError> {
        Ok((s & b) | (!s & a))
    }
    fn cell(&self, spec: &vsp_tfhe::CellSpec, ins: &[&u64]) -> Result<u64, CircuitError> {
        if ins.len() != spec.arity() {
            return Err(CircuitError::Backend(format!(
                "a {}-input cell given {} inputs",
                spec.arity(),
                ins.len()
            )));
        }
        // (Σ wᵢ·bᵢ + t) mod 4 in two bit-sliced words; the cell is 1 where it is 0 or 1 (hi clear).
        let t = spec.offset();
        let (mut lo, mut hi) = (
            if t & 1 == 1 { u64::MAX } else { 0 },
            if t & 2 == 2 { u64::MAX } else { 0 },
        );
        for (&w, &&b) in spec.weights().iter().zip(ins) {
            // −1 ≡ 3 = 1 + 2 (mod 4).
            if w == 1 || w == -1 {
                hi ^= lo & b;
                lo ^= b;
            }
            if w == 2 || w == -1 {
                hi ^= b;
            }
        }
        Ok(!hi)
    }
    fn cell_ring(&self, spec: &vsp_tfhe::CellSpec, ins: &[&u64]) -> Result<u64, CircuitError> {
        self.cell(spec, ins)
    }
    fn leveled(&self) -> Option<crate::leveled::LeveledParams> {
        None
    }
    fn ring_constant(&self, v: bool) -> u64 {
        self.constant(v)
    }
    fn ring_not(&self, r: &u64) -> u64 {
        !r
    }
    fn lift(&self, a: &u64) -> Result<u64, CircuitError> {
        Ok(*a)
    }
    fn gate_ring(&self, k: GateKind, a: &u64, b: &u64) -> Result<u64, CircuitError> {
        self.gate(k, a, b)
    }
    fn mux_ring(&self, s: &u64, a: &u64, b: &u64) -> Result<u64, CircuitError> {
        self.mux(s, a, b)
    }
    fn extract(&self, r: &u64) -> Result<u64, CircuitError> {
        Ok(*r)
    }
    fn cmux(&self, s: &u64, a: &u64, b: &u64) -> Result<u64, CircuitError> {
        self.mux(s, a, b)
    }
    fn select(&self, addr_bit: &u64) -> Result<u64, CircuitError> {
        Ok(*addr_bit)
    }
    fn rom_read(&self, rom: &PlainMemory, addr: &[&u64]) -> Result<Vec<u64>, CircuitError> {
        Ok((0..rom.data_width).map(|i| rom.read_bit(addr, i)).collect())
    }
    fn ram_read(&self, ram: &PlainMemory, addr: &[&u64], bit: usize) -> Result<u64, CircuitError> {
        Ok(ram.read_bit(addr, bit))
    }
    fn ram_write_value(&self, wren: &u64, wdata: &u64, rdata: &u64) -> Result<u64, CircuitError> {
        self.mux(wren, rdata, wdata)
    }
    fn ram_write(
        &self,
        ram: &mut PlainMemory,
        addr: &[&u64],
        vals: &[u64],
        _threads: usize,
    ) -> Result<(), CircuitError> {
        let w = ram.data_width;
        if vals.len() != w || addr.len() != ram.addr_width {
            return Err(CircuitError::Usage("RAM write of the wrong shape".into()));
        }
        if let Some(a) = PlainMemory::uniform_addr(addr) {
            ram.bits[a * w..a * w + w].copy_from_slice(vals);
            return Ok(());
        }
        for l in 0..64 {
            let a = PlainMemory::lane_addr(addr, l);
            for (i, v) in vals.iter().enumerate().take(w) {
                let cell = &mut ram.bits[a * w + i];
                *cell = (*cell & !(1u64 << l)) | (v & (1u64 << l));
            }
        }
        Ok(())
    }
    fn ram_read_part(
        &self,
        ram: &PlainMemory,
        addr_low: &[&u64],
        first: usize,
        bit: usize,
    ) -> Result<u64, CircuitError> {
        let (k, w) = (addr_low.len(), ram.data_width);
        crate::cmux::check_read_part(ram.addr_width, w, k, first, bit)?;
        Ok((0..64)
            .map(|l| {
                let j = first + PlainMemory::lane_addr(addr_low, l);
                ((ram.bits[j * w + bit] >> l) & 1) << l
            })
            .sum())
    }
    fn ram_read_join(
        &self,
        parts: &[&u64],
        addr_high: &[&u64],
    ) -> Result<(u64, Option<u64>), CircuitError> {
        if parts.len() != 1usize << addr_high.len() {
            return Err(CircuitError::Usage(
                "RAM read parts of the wrong number".into(),
            ));
        }
        let v = (0..64)
            .map(|l| ((parts[PlainMemory::lane_addr(addr_high, l)] >> l) & 1) << l)
            .sum();
        Ok((v, None))
    }
    #[allow(clippy::too_many_arguments)]
    fn ram_write_part(
        &self,
        ram: &mut PlainMemory,
        addr: &[&u64],
        vals: &[u64],
        part: usize,
        parts: usize,
        bits: std::ops::Range<usize>,
        _threads: usize,
    ) -> Result<(), CircuitError> {
        let (a, w) = (ram.addr_width, ram.data_width);
        check_write_part((a, w), (addr.len(), vals.len()), part, parts, &bits)?;
        if parts > 1usize << a {
            return Err(CircuitError::Usage("RAM write of the wrong shape".into()));
        }
        let per = (1usize << a) / parts;
        for l in 0..64 {
            let j = PlainMemory::lane_addr(addr, l);
            if j / per != part {
                continue;
            }
            for (i, v) in vals.iter().enumerate().take(bits.end).skip(bits.start) {
                let cell = &mut ram.bits[j * w + i];
                *cell = (*cell & !(1u64 << l)) | (v & (1u64 << l));
            }
        }
        Ok(())
    }
    fn ram_cell(&self, ram: &PlainMemory, i: usize) -> Result<u64, CircuitError> {
        ram.bits
            .get(i)
            .copied()
            .ok_or_else(|| CircuitError::Backend(format!("RAM cell {i} does not exist")))
    }
    fn set_ram_cell(&self, ram: &mut PlainMemory, i: usize, cell: u64) -> Result<(), CircuitError> {
        let slot = ram
            .bits
            .get_mut(i)
            .ok_or_else(|| CircuitError::Backend(format!("RAM cell {i} does not exist")))?;
        *slot = cell;
        Ok(())
    }
    fn zero_rom(&self, spec: &MemorySpec) -> PlainMemory {
        PlainMemory {
            addr_width: spec.addr_width,
            data_width: spec.data_width,
            bits: vec![0; spec.words() * spec.data_width],
        }
    }
    fn zero_ram(&self, spec: &MemorySpec) -> PlainMemory {
        self.zero_rom(spec)
    }
    fn rom_shape(&self, rom: &PlainMemory) -> (usize, usize) {
        (rom.addr_width, rom.data_width)
    }
    fn ram_shape(&self, ram: &PlainMemory) -> (usize, usize) {
        (ram.addr_width, ram.data_width)
    }
    fn reveal(&self, b: &u64) -> Option<u64> {
        Some(*b)
    }
    fn encode_bit(&self, b: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&b.to_le_bytes());
    }
    fn decode_bit(&self, r: &mut Reader<'_>) -> Result<u64, CircuitError> {
        Ok(r.u64("bit")?)
    }
    fn encode_ring(&self, b: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&b.to_le_bytes());
    }
    fn decode_ring(&self, r: &mut Reader<'_>) -> Result<u64, CircuitError> {
        Ok(r.u64("ring")?)
    }
    fn encode_write_val(&self, v: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn decode_write_val(&self, r: &mut Reader<'_>) -> Result<u64, CircuitError> {
        Ok(r.u64("write value")?)
    }
    fn encode_sel(&self, s: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&s.to_le_bytes());
    }
    fn decode_sel(&self, r: &mut Reader<'_>) -> Result<u64, CircuitError> {
        Ok(r.u64("selector")?)
    }
    fn encode_rom(&self, m: &PlainMemory, out: &mut Vec<u8>) {
        m.encode(out)
    }
    fn decode_rom(&self, r: &mut Reader<'_>) -> Result<PlainMemory, CircuitError> {
        PlainMemory::decode(r)
    }
    fn encode_ram(&self, m: &PlainMemory, out: &mut Vec<u8>) {
        m.encode(out)
    }
    fn decode_ram(&self, r: &mut Reader<'_>) -> Result<PlainMemory, CircuitError> {
        PlainMemory::decode(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_lane_addressing() {
        let b = PlainBackend;
        let mut m = PlainMemory::from_words(2, 3, &[1, 2, 3, 4]).unwrap();
        // lane 0 reads address 0, lane 1 address 3.
        let (a0, a1) = (0b10u64, 0b10u64);
        assert_eq!(
            b.rom_read(&m, &[&a0, &a1])
                .unwrap()
                .iter()
                .map(|x| x & 3)
                .collect::<Vec<_>>(),
            vec![0b01, 0b00, 0b10]
        );
        // lane 1 writes 5 at address 3; lane 0 writes 7 at address 0.
        let vals = [0b11u64, 0b01, 0b11];
        b.ram_write(&mut m, &[&a0, &a1], &vals, 1).unwrap();
        assert_eq!(m.words(0), vec![7, 2, 3, 4]);
        assert_eq!(m.words(1), vec![1, 2, 3, 5]);
        assert!(PlainMemory::from_words(1, 2, &[4]).is_err());
    }
}
