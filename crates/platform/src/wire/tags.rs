//! The one encoding of which machine a file is for: the memory field of requests and results, and
//! the tag at the head of a snapshot's body (a core with its memory, or a user circuit). MPI ranks
//! exchange the machine in the same snapshot tag.
//!
//! * Memory field (requests, results): a byte with bit 0 MUX memory (clear: CMUX), bit 1 1 KiB ROM
//!   and RAM (clear: 512 bytes), bit 2 "sizes follow": then two more bytes, log2 of the ROM's and of
//!   the RAM's size in bytes (bit 1 must then be clear). Other bits are refused, and so are sizes no
//!   core has.
//! * Snapshot tag: a byte with core (bit 0: Ruby), memory (bit 1: MUX) and size (bit 2: 1 KiB ROM and
//!   RAM; bit 3: the sizes follow as two bytes, log2 of the ROM's and of the RAM's bytes, bit 2 then
//!   clear); [`CIRCUIT`] for a user circuit's snapshot. Snapshots from before MUX memory (0 Pearl,
//!   1 Ruby) and before the 1 KiB variant read the same.
//!
//! Both keep the one-byte form for the two standard sizes, so their files are unchanged.

use vsp_cahp::cores::{Core, MemSize, Memory};

use crate::error::{PlatformError, Result, ResultExt};
use crate::wire::envelope::Writer;
use vsp_codec::Reader;

/// The snapshot tag of a user circuit's snapshot.
pub const CIRCUIT: u8 = 0x80;

/// Size bits of both encodings: `None` for 512 B, `Some(None)` for 1 KiB, else the log2 bytes.
fn size_bits(size: MemSize) -> Option<Option<[u8; 2]>> {
    if size == MemSize::B512 {
        None
    } else if size == MemSize::K1 {
        Some(None)
    } else {
        Some(Some([size.rom_log2(), size.ram_log2()]))
    }
}

/// The memory byte of requests and results: bit 0 MUX memory, bit 1 1 KiB ROM and RAM, bit 2 the
/// sizes follow (`None`: the byte says it all, `Some` the two log2 bytes after it).
pub(crate) fn memory_tag(m: Memory, size: MemSize) -> (u8, Option<[u8; 2]>) {
    let kind = u8::from(m == Memory::Mux);
    match size_bits(size) {
        None => (kind, None),
        Some(None) => (kind | 2, None),
        Some(sizes) => (kind | 4, sizes),
    }
}

/// Writes the memory field of a request or result.
pub(crate) fn put_memory(w: &mut Writer, m: Memory, size: MemSize) {
    let (tag, sizes) = memory_tag(m, size);
    w.u8(tag);
    for b in sizes.into_iter().flatten() {
        w.u8(b);
    }
}

/// Reads the memory field of a request or result ([`memory_tag`]).
pub(crate) fn get_memory(r: &mut Reader) -> Result<(Memory, MemSize)> {
    let tag = r.u8("body")?;
    let sizes = if tag & 4 != 0 {
        Some([r.u8("body")?, r.u8("body")?])
    } else {
        None
    };
    memory_from_tag(tag, sizes)
}

/// Inverse of [`memory_tag`]; any other bit set, or a size no core has, is refused.
pub(crate) fn memory_from_tag(t: u8, sizes: Option<[u8; 2]>) -> Result<(Memory, MemSize)> {
    if t > 5 || t & 6 == 6 || (t & 4 != 0) != sizes.is_some() {
        return Err(PlatformError::format(format!("unknown memory kind {t}")));
    }
    let memory = if t & 1 == 0 {
        Memory::Cmux
    } else {
        Memory::Mux
    };
    let size = match sizes {
        Some([rom, ram]) => size_from_log2(rom, ram)?,
        None if t & 2 == 0 => MemSize::B512,
        None => MemSize::K1,
    };
    Ok((memory, size))
}

/// The machine of a file's two size bytes (log2 of ROM and RAM bytes), refusing sizes no core has.
pub(crate) fn size_from_log2(rom: u8, ram: u8) -> Result<MemSize> {
    MemSize::from_log2(rom, ram).ok_or_else(|| {
        let show = |l: u8| match 1u64.checked_shl(u32::from(l)) {
            Some(b) if l < 64 => format!("{b}-byte"),
            _ => format!("2^{l}-byte"),
        };
        PlatformError::format(format!(
            "unknown memory size: a {} ROM and a {} RAM (the cores have 512 B to 8 KiB of each)",
            show(rom),
            show(ram)
        ))
    })
}

/// Which machine a snapshot is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachineTag {
    /// The processor: a core with its memory kind and size.
    Core(Core, Memory, MemSize),
    /// A user circuit (which one: the engine's snapshot checks its fingerprint).
    Circuit,
}

impl MachineTag {
    /// The tag's bytes.
    pub fn to_bytes(self) -> Vec<u8> {
        let MachineTag::Core(core, memory, size) = self else {
            return vec![CIRCUIT];
        };
        let c = u8::from(core == Core::Ruby) | (u8::from(memory == Memory::Mux) << 1);
        match size_bits(size) {
            None => vec![c],
            Some(None) => vec![c | 4],
            Some(Some([rom, ram])) => vec![c | 8, rom, ram],
        }
    }

    /// Reads a tag ([`MachineTag::to_bytes`]); any other byte, or a size no core has, is refused.
    pub fn parse(r: &mut Reader<'_>) -> Result<MachineTag> {
        let tag = r.u8("body")?;
        if tag == CIRCUIT {
            return Ok(MachineTag::Circuit);
        }
        let unknown = || PlatformError::format(format!("corrupt snapshot: unknown core {tag}"));
        if tag > 11 {
            return Err(unknown());
        }
        let core = if tag & 1 == 0 {
            Core::Pearl
        } else {
            Core::Ruby
        };
        let memory = if tag & 2 == 0 {
            Memory::Cmux
        } else {
            Memory::Mux
        };
        let size = match tag & 12 {
            0 => MemSize::B512,
            4 => MemSize::K1,
            8 => {
                let (rom, ram) = (r.u8("body")?, r.u8("body")?);
                size_from_log2(rom, ram).context(|| "corrupt snapshot".into())?
            }
            _ => return Err(unknown()),
        };
        Ok(MachineTag::Core(core, memory, size))
    }
}
