//! The request: the core's memories encrypted, their size and the key they were encrypted under.

use vsp_cahp::cores::{self, MemSize, Memory};
use vsp_circuit::{client, TfheRam, TfheRom};
use vsp_tfhe::{Params, Tlwe};

use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::processor::program::PlainRequest;
use crate::wire::envelope::{vsp_file, Envelope, Kind, Stamp, Writer};
use crate::wire::tags::{get_memory, put_memory};
use vsp_codec::{FileCodec, Reader};

/// The core's memories, encrypted.
pub enum EncryptedMemories {
    /// CMUX ROM (vertically packed TRLWEs) and CMUX RAM (one TRLWE per bit).
    Cmux { rom: TfheRom, ram: TfheRam },
    /// MUX memory: one TLWE per bit, word `j` bit `i` at `j·w + i`.
    Mux {
        rom: Vec<Tlwe<u32>>,
        ram: Vec<Tlwe<u32>>,
    },
}

impl EncryptedMemories {
    /// Which memory these are.
    pub fn memory(&self) -> Memory {
        match self {
            EncryptedMemories::Cmux { .. } => Memory::Cmux,
            EncryptedMemories::Mux { .. } => Memory::Mux,
        }
    }
}

/// An encrypted request: the memories, their size and the identity of the key they were encrypted
/// under.
pub struct Request {
    /// The key the request is encrypted under.
    pub stamp: Stamp,
    /// The size of ROM and RAM (the memories have its shape).
    pub size: MemSize,
    pub memories: EncryptedMemories,
    /// The parameter set the memories are encrypted with.
    pub params: Params,
}

impl PlainRequest {
    /// Encrypts the memories under `key`.
    pub fn encrypt(&self, key: &ClientKey) -> Result<Request> {
        let sk = &key.sk;
        let (ra, rw) = (self.size.rom_addr_width(), cores::ROM_DATA_WIDTH);
        let (aa, aw) = (self.size.ram_addr_width(), cores::RAM_DATA_WIDTH);
        let memories = match self.memory {
            Memory::Cmux => EncryptedMemories::Cmux {
                rom: client::encrypt_rom(sk, ra, rw, &self.rom)?,
                ram: client::encrypt_ram(sk, aa, aw, &self.ram)?,
            },
            Memory::Mux => EncryptedMemories::Mux {
                rom: client::encrypt_mux_memory(sk, ra, rw, &self.rom)?,
                ram: client::encrypt_mux_memory(sk, aa, aw, &self.ram)?,
            },
        };
        Ok(Request {
            stamp: key.stamp(),
            size: self.size,
            memories,
            params: *sk.params(),
        })
    }
}

impl Request {
    /// The request as an envelope (written by [`Envelope::write`], or sent).
    pub fn to_envelope(&self) -> Envelope {
        Envelope::of(
            self,
            Kind::Request,
            &self.stamp.params_name,
            self.stamp.key_id,
        )
    }

    /// Parses a verified request envelope for parameters `params`.
    pub fn from_envelope(env: &Envelope, params: &Params) -> Result<Request> {
        env.decode(params)
    }
}

/// The request file: memory ‖ ROM ‖ RAM ([`super`]); decoded for a parameter set, each memory
/// checked against the size's shape.
impl FileCodec for Request {
    vsp_file!(Request, Params);

    fn write_body(&self, w: &mut Writer) {
        put_memory(w, self.memories.memory(), self.size);
        match &self.memories {
            EncryptedMemories::Cmux { rom, ram } => {
                w.blob(&rom.to_bytes());
                w.blob(&ram.to_bytes());
            }
            EncryptedMemories::Mux { rom, ram } => {
                put_cells(w, rom, &self.params);
                put_cells(w, ram, &self.params);
            }
        }
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Params) -> Result<Request> {
        let stamp = Stamp::parse(param)?;
        let (size, memories) = read_memories(r, params)?;
        Ok(Request {
            stamp,
            size,
            memories,
            params: *params,
        })
    }
}

/// Which memory, of which size, a request envelope was encrypted for (read from its first byte,
/// before the slow parse, so that a mismatch is refused before any work).
pub fn request_memory(env: &Envelope) -> Result<(Memory, MemSize)> {
    let mut r = Reader::new(&env.body);
    get_memory(&mut r).context(|| "corrupt request".into())
}

/// The size and the memories of a request's body; each memory must have the size's shape.
pub fn parse_request(body: &[u8], params: &Params) -> Result<(MemSize, EncryptedMemories)> {
    let mut r = Reader::new(body);
    let m = read_memories(&mut r, params)?;
    r.end()?;
    Ok(m)
}

/// The memory field and the memories it names, read from a request's body.
fn read_memories(r: &mut Reader<'_>, params: &Params) -> Result<(MemSize, EncryptedMemories)> {
    let (memory, size) = get_memory(r).context(|| "corrupt request".into())?;
    let corrupt = |what: &str, e: PlatformError| e.context(format!("corrupt request: {what}"));
    let want = format!("a {size} request's");
    let (ra, aa) = (size.rom_addr_width(), size.ram_addr_width());
    let m = match memory {
        Memory::Cmux => {
            let rom = r.blob(usize::MAX, "body")?;
            check_shape("ROM", &want, rom, ra, cores::ROM_DATA_WIDTH)
                .map_err(|e| corrupt("ROM", e))?;
            let rom = TfheRom::from_bytes(rom, params).map_err(|e| corrupt("ROM", e.into()))?;
            let ram = r.blob(usize::MAX, "body")?;
            check_shape("RAM", &want, ram, aa, cores::RAM_DATA_WIDTH)
                .map_err(|e| corrupt("RAM", e))?;
            let ram = TfheRam::from_bytes(ram, params).map_err(|e| corrupt("RAM", e.into()))?;
            EncryptedMemories::Cmux { rom, ram }
        }
        Memory::Mux => EncryptedMemories::Mux {
            rom: get_cells(r, rom_bits(size), params).map_err(|e| corrupt("ROM", e))?,
            ram: get_cells(r, ram_bits(size), params).map_err(|e| corrupt("RAM", e))?,
        },
    };
    Ok((size, m))
}
