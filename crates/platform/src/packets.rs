//! The packets between client and server: a [`PlainRequest`](crate::PlainRequest) (program and
//! arguments as memory words) encrypts into a [`Request`]; the server's run ends in a result
//! envelope that [`decrypt_result`] turns back into a [`Decrypted`] state.
//!
//! * A request holds the core's ROM and initial RAM. With CMUX memory (the default) the ROM is
//!   packed into level-1 TRLWEs (vertical packing) and the RAM is one TRLWE per bit; with MUX memory
//!   (Iyokan's flip-flops + MUX trees) both are one TLWE per bit. Which core runs it is the server's
//!   choice; the request does not depend on it.
//! * A result holds the cycle count, the encrypted finish flag, x0–x15 and the RAM.
//!
//! Body layouts (little-endian; `blob` = u64 length ‖ bytes; `cells` = u64 count ‖ count blobs):
//!
//! | packet | body |
//! |---|---|
//! | request | memory u8 (0 CMUX, 1 MUX) ‖ ROM ‖ RAM (CMUX: blob of the TfheRom/TfheRam encoding; MUX: cells) |
//! | result | cycles u64 ‖ memory u8 ‖ 17 × (bits u32 ‖ bits × TLWE blob) ‖ RAM (as in a request) |

use vsp_cahp::cores::{self, Memory};
use vsp_circuit::{client, TfheRam, TfheRom};
use vsp_tfhe::{Params, Tlwe};
use zeroize::Zeroizing;

use crate::envelope::{check_same_key, Envelope, KeyId, Kind, Reader, Writer};
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::program::PlainRequest;

/// Width of a CAHPv3 register.
pub const REG_BITS: usize = 16;

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

/// An encrypted request: the memories and the identity of the key they were encrypted under.
pub struct Request {
    pub params_name: String,
    pub key_id: KeyId,
    pub memories: EncryptedMemories,
}

impl PlainRequest {
    /// Encrypts the memories under `key`.
    pub fn encrypt(&self, key: &ClientKey) -> Result<Request> {
        let sk = &key.sk;
        let (ra, rw) = (cores::ROM_ADDR_WIDTH, cores::ROM_DATA_WIDTH);
        let (aa, aw) = (cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH);
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
            params_name: key.params_name.clone(),
            key_id: key.key_id,
            memories,
        })
    }
}

impl Request {
    /// The request as a file.
    pub fn to_envelope(&self, params: &Params) -> Envelope {
        let mut w = Writer::default();
        w.u8(memory_tag(self.memories.memory()));
        match &self.memories {
            EncryptedMemories::Cmux { rom, ram } => {
                w.blob(&rom.to_bytes());
                w.blob(&ram.to_bytes());
            }
            EncryptedMemories::Mux { rom, ram } => {
                put_cells(&mut w, rom, params);
                put_cells(&mut w, ram, params);
            }
        }
        Envelope {
            kind: Kind::Request,
            params: self.params_name.clone(),
            key_id: self.key_id,
            body: Zeroizing::new(w.into_bytes()),
        }
    }

    /// Parses a verified request envelope for parameters `params`.
    pub fn from_envelope(env: &Envelope, params: &Params) -> Result<Request> {
        Ok(Request {
            params_name: env.params.clone(),
            key_id: env.key_id,
            memories: parse_request(&env.body, params)?,
        })
    }
}

/// Which memory a request envelope was encrypted for (read from its first byte, before the slow
/// parse, so that a mismatch is refused before any work).
pub fn request_memory(env: &Envelope) -> Result<Memory> {
    let mut r = Reader::new(&env.body);
    memory_from_tag(r.u8()?).context(|| "corrupt request".into())
}

/// The memories of a request's body.
pub fn parse_request(body: &[u8], params: &Params) -> Result<EncryptedMemories> {
    let mut r = Reader::new(body);
    let memory = memory_from_tag(r.u8()?).context(|| "corrupt request".into())?;
    let m = match memory {
        Memory::Cmux => EncryptedMemories::Cmux {
            rom: TfheRom::from_bytes(r.blob()?, params)
                .context(|| "corrupt request: ROM".into())?,
            ram: TfheRam::from_bytes(r.blob()?, params)
                .context(|| "corrupt request: RAM".into())?,
        },
        Memory::Mux => EncryptedMemories::Mux {
            rom: get_cells(&mut r, rom_bits(), params).context(|| "corrupt request: ROM".into())?,
            ram: get_cells(&mut r, ram_bits(), params).context(|| "corrupt request: RAM".into())?,
        },
    };
    r.end()?;
    Ok(m)
}

/// The RAM as a result carries it.
pub enum EncryptedRam<'a> {
    Cmux(&'a TfheRam),
    Mux(Vec<Tlwe<u32>>),
}

/// Builds a result envelope: `cycles`, the finish flag and x0..x15 (bits, LSB first), the RAM.
pub fn result_envelope(
    params_name: &str,
    key_id: KeyId,
    params: &Params,
    cycles: u64,
    outputs: &[Vec<Tlwe<u32>>],
    ram: EncryptedRam<'_>,
) -> Envelope {
    let mut w = Writer::default();
    w.u64(cycles);
    w.u8(memory_tag(match ram {
        EncryptedRam::Cmux(_) => Memory::Cmux,
        EncryptedRam::Mux(_) => Memory::Mux,
    }));
    for bits in outputs {
        w.u32(bits.len() as u32);
        for b in bits {
            w.blob(&b.to_bytes(params));
        }
    }
    match ram {
        EncryptedRam::Cmux(ram) => w.blob(&ram.to_bytes()),
        EncryptedRam::Mux(cells) => put_cells(&mut w, &cells, params),
    }
    Envelope {
        kind: Kind::Result,
        params: params_name.to_string(),
        key_id,
        body: Zeroizing::new(w.into_bytes()),
    }
}

/// A decrypted result.
#[derive(Debug, serde::Serialize)]
pub struct Decrypted {
    pub cycles: u64,
    pub finished: bool,
    pub regs: Vec<u16>,
    /// main's return value (x8 = a0).
    pub result: u16,
    pub ram: Vec<u8>,
}

/// Decrypts a result with the secret key.
pub fn decrypt_result(key: &ClientKey, env: &Envelope) -> Result<Decrypted> {
    check_same_key(
        "the result",
        env.key_id,
        &env.params,
        key.key_id,
        &key.params_name,
    )?;
    let corrupt = |m: String| PlatformError::format(format!("corrupt result: {m}"));
    let params: &Params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let cycles = r.u64()?;
    let memory = memory_from_tag(r.u8()?).context(|| "corrupt result".into())?;
    let mut values = Vec::with_capacity(17);
    // The shape must be the core's: a 1-bit finish flag, 16-bit registers, the core's RAM.
    let widths = std::iter::once((cores::FINISH, 1)).chain(cores::REGS.map(|r| (r, REG_BITS)));
    for (name, want) in widths {
        let n = r.u32()? as usize;
        if n != want {
            return Err(corrupt(format!(
                "output {name} has {n} bits, the core's has {want}"
            )));
        }
        let bits = (0..n)
            .map(|_| {
                Tlwe::<u32>::from_bytes(r.blob()?, params)
                    .map_err(|e| PlatformError::from(e).context("corrupt result"))
            })
            .collect::<Result<Vec<_>>>()?;
        values.push(client::decrypt_value(&key.sk, &bits)?);
    }
    let words = match memory {
        Memory::Cmux => {
            let ram_bytes = r.blob()?;
            check_ram_shape(ram_bytes, cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH)
                .map_err(|e| corrupt(e.to_string()))?;
            let ram =
                TfheRam::from_bytes(ram_bytes, params).context(|| "corrupt result: RAM".into())?;
            // Decoded with the announced shape: 2^a noise bounds and 2^a·w cells.
            let words = 1usize << cores::RAM_ADDR_WIDTH;
            if ram.noise_bounds().len() != words
                || ram.cells().len() != words * cores::RAM_DATA_WIDTH
            {
                return Err(corrupt("the RAM's shape is not the core's".into()));
            }
            client::decrypt_ram(&key.sk, &ram)?
        }
        Memory::Mux => {
            let cells =
                get_cells(&mut r, ram_bits(), params).context(|| "corrupt result: RAM".into())?;
            client::decrypt_mux_memory(&key.sk, cores::RAM_DATA_WIDTH, &cells)?
        }
    };
    r.end()?;
    Ok(Decrypted {
        cycles,
        finished: values[0] == 1,
        regs: values[1..].iter().map(|&v| v as u16).collect(),
        result: values[1 + 8] as u16,
        ram: cores::ram_bytes(&words),
    })
}

/// Bits of the core's ROM.
fn rom_bits() -> usize {
    (1 << cores::ROM_ADDR_WIDTH) * cores::ROM_DATA_WIDTH
}

/// Bits of the core's RAM.
fn ram_bits() -> usize {
    (1 << cores::RAM_ADDR_WIDTH) * cores::RAM_DATA_WIDTH
}

pub(crate) fn memory_tag(m: Memory) -> u8 {
    match m {
        Memory::Cmux => 0,
        Memory::Mux => 1,
    }
}

pub(crate) fn memory_from_tag(t: u8) -> Result<Memory> {
    match t {
        0 => Ok(Memory::Cmux),
        1 => Ok(Memory::Mux),
        other => Err(PlatformError::format(format!(
            "unknown memory kind {other}"
        ))),
    }
}

pub(crate) fn put_cells(w: &mut Writer, cells: &[Tlwe<u32>], params: &Params) {
    w.u64(cells.len() as u64);
    for c in cells {
        w.blob(&c.to_bytes(params));
    }
}

/// Exactly `want` TLWE cells (the count is checked before anything is allocated).
pub(crate) fn get_cells(
    r: &mut Reader<'_>,
    want: usize,
    params: &Params,
) -> Result<Vec<Tlwe<u32>>> {
    let n = r.u64()?;
    if n != want as u64 {
        return Err(PlatformError::format(format!(
            "{n} memory cells, the core's memory has {want}"
        )));
    }
    (0..want)
        .map(|_| Ok(Tlwe::<u32>::from_bytes(r.blob()?, params)?))
        .collect()
}

/// Checks the shape a serialized RAM announces (address width u64 ‖ data width u64 ‖ …) against
/// `a` and `w` before anything is decoded.
pub(crate) fn check_ram_shape(bytes: &[u8], a: usize, w: usize) -> Result<()> {
    let mut r = Reader::new(bytes);
    let (ba, bw) = (r.u64()?, r.u64()?);
    if (ba, bw) != (a as u64, w as u64) {
        return Err(PlatformError::format(format!(
            "the RAM is 2^{ba} words of {bw} bits, the core's is 2^{a} words of {w} bits"
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A result envelope with outputs of `bits[k]` bits (finish flag first) and a 2^a × w RAM.
    pub(crate) fn result_with(
        key: &ClientKey,
        bits: [usize; 17],
        (a, w): (usize, usize),
    ) -> Envelope {
        let p = key.sk.params();
        let outputs: Vec<Vec<Tlwe<u32>>> = bits
            .iter()
            .map(|&n| (0..n).map(|_| key.sk.encrypt_bit(false)).collect())
            .collect();
        let ram = client::encrypt_ram(&key.sk, a, w, &[]).unwrap();
        result_envelope(
            &key.params_name,
            key.key_id,
            p,
            7,
            &outputs,
            EncryptedRam::Cmux(&ram),
        )
    }

    #[test]
    fn dec_checks_the_results_shape_against_the_core() {
        let key = crate::keys::generate_secret("default", &Params::default_128()).unwrap();
        let core_ram = (cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH);
        let mut good = [16; 17];
        good[0] = 1;
        let d = decrypt_result(&key, &result_with(&key, good, core_ram)).unwrap();
        assert_eq!(
            (d.cycles, d.finished, d.ram.len()),
            (7, false, cores::RAM_BYTES)
        );
        let mut no_flag = good;
        no_flag[0] = 0;
        let mut wide_reg = good;
        wide_reg[3] = 17;
        for (bits, ram, want) in [
            (no_flag, core_ram, "finflag has 0 bits, the core's has 1"),
            (wide_reg, core_ram, "has 17 bits, the core's has 16"),
            (good, (1, 1), "the RAM is 2^1 words of 1 bits"),
            (good, (8, 8), "the RAM is 2^8 words of 8 bits"),
        ] {
            let e = decrypt_result(&key, &result_with(&key, bits, ram))
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn mux_memory_requests_round_trip_and_their_cell_counts_are_checked() {
        let key = crate::keys::generate_secret("default", &Params::default_128()).unwrap();
        let p = key.sk.params();
        let plain = PlainRequest {
            rom: vec![0xdead_beef, 7],
            ram: vec![0x1234, 0, 0xffff],
            memory: Memory::Mux,
        };
        let env = plain.encrypt(&key).unwrap().to_envelope(p);
        let back = Request::from_envelope(&env, p).unwrap();
        let EncryptedMemories::Mux { rom, ram } = &back.memories else {
            panic!("a MUX request parsed as CMUX")
        };
        let rom = client::decrypt_mux_memory(&key.sk, cores::ROM_DATA_WIDTH, rom).unwrap();
        let ram = client::decrypt_mux_memory(&key.sk, cores::RAM_DATA_WIDTH, ram).unwrap();
        assert_eq!(&rom[..3], &[0xdead_beef, 7, 0]);
        assert_eq!(&ram[..4], &[0x1234, 0, 0xffff, 0]);
        // A cell count that is not the core's is refused before any cell is read.
        let mut body = env.body.to_vec();
        body[1..9].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = parse_request(&body, p).err().unwrap();
        assert!(format!("{e:?}").contains("memory cells"), "{e:?}");
        body[0] = 9;
        let e = parse_request(&body, p).err().unwrap();
        assert!(format!("{e:?}").contains("unknown memory kind 9"), "{e:?}");
    }
}
