//! The packets between client and server: a [`PlainRequest`](crate::PlainRequest) (program and
//! arguments as memory words) encrypts into a [`Request`]; the server's run ends in a result
//! envelope that [`decrypt_result`] turns back into a [`Decrypted`] state.
//!
//! * A request holds the core's ROM and initial RAM. With CMUX memory (the default) the ROM is
//!   packed into level-1 TRLWEs (vertical packing) and the RAM is one TRLWE per bit; with MUX memory
//!   (Iyokan's flip-flops + MUX trees) both are one TLWE per bit. Which core runs it is the server's
//!   choice; the request does not depend on it.
//! * A result holds the cycle count, the encrypted finish flag, x0–x15 and the RAM.
//! * Both name the memory kind and the sizes of ROM and RAM (512 B to 8 KiB each, [`MemSize`]): a
//!   request runs on the circuit of its size, and every memory read from a file must have that size's
//!   shape.
//!
//! Body layouts (little-endian; `blob` = u64 length ‖ bytes; `cells` = u64 count ‖ count blobs):
//!
//! | packet | body |
//! |---|---|
//! | request | memory ‖ ROM ‖ RAM (CMUX: blob of the TfheRom/TfheRam encoding; MUX: cells) |
//! | result | cycles u64 ‖ memory ‖ 17 × (bits u32 ‖ bits × TLWE blob) ‖ RAM (as in a request) |
//!
//! The memory field: a byte with bit 0 MUX memory (clear: CMUX), bit 1 1 KiB ROM and RAM (clear: 512
//! bytes), bit 2 "sizes follow": then two more bytes, log2 of the ROM's and of the RAM's size in
//! bytes (9..=13; bit 1 must then be clear). Other bits are refused, and so are sizes no core has.
//! The two standard machines are written in the one-byte form, so their files are unchanged, and
//! files from before the 1 KiB variant (0 or 1) read as 512 bytes, as they were.

use vsp_cahp::cores::{self, MemSize, Memory};
use vsp_circuit::{client, TfheRam, TfheRom};
use vsp_tfhe::{Params, Tlwe};

use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::processor::program::PlainRequest;
use crate::wire::envelope::{Envelope, KeyId, Kind, Writer};
use crate::wire::tags::{get_memory, put_memory};
#[cfg(test)]
use crate::wire::tags::{memory_from_tag, size_from_log2};
use vsp_codec::Reader;

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

/// An encrypted request: the memories, their size and the identity of the key they were encrypted
/// under.
pub struct Request {
    pub params_name: String,
    pub key_id: KeyId,
    /// The size of ROM and RAM (the memories have its shape).
    pub size: MemSize,
    pub memories: EncryptedMemories,
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
            params_name: key.params_name.clone(),
            key_id: key.key_id,
            size: self.size,
            memories,
        })
    }
}

impl Request {
    /// The request as a file.
    pub fn to_envelope(&self, params: &Params) -> Envelope {
        let mut w = Writer::default();
        put_memory(&mut w, self.memories.memory(), self.size);
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
        Envelope::new(
            Kind::Request,
            &self.params_name,
            self.key_id,
            w.into_bytes(),
        )
    }

    /// Parses a verified request envelope for parameters `params`.
    pub fn from_envelope(env: &Envelope, params: &Params) -> Result<Request> {
        let (size, memories) = parse_request(&env.body, params)?;
        Ok(Request {
            params_name: env.params.clone(),
            key_id: env.key_id,
            size,
            memories,
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
    let (memory, size) = get_memory(&mut r).context(|| "corrupt request".into())?;
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
            rom: get_cells(&mut r, rom_bits(size), params).map_err(|e| corrupt("ROM", e))?,
            ram: get_cells(&mut r, ram_bits(size), params).map_err(|e| corrupt("RAM", e))?,
        },
    };
    r.end()?;
    Ok((size, m))
}

/// The RAM as a result carries it.
pub enum EncryptedRam<'a> {
    Cmux(&'a TfheRam),
    Mux(Vec<Tlwe<u32>>),
}

/// Builds a result envelope: `cycles`, the finish flag and x0..x15 (bits, LSB first), the RAM (of
/// `size`).
pub fn result_envelope(
    params_name: &str,
    key_id: KeyId,
    params: &Params,
    cycles: u64,
    outputs: &[Vec<Tlwe<u32>>],
    ram: EncryptedRam<'_>,
    size: MemSize,
) -> Envelope {
    let mut w = Writer::default();
    w.u64(cycles);
    let memory = match ram {
        EncryptedRam::Cmux(_) => Memory::Cmux,
        EncryptedRam::Mux(_) => Memory::Mux,
    };
    put_memory(&mut w, memory, size);
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
    Envelope::new(Kind::Result, params_name, key_id, w.into_bytes())
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
    key.check_file("the result", env)?;
    let corrupt = |m: String| PlatformError::format(format!("corrupt result: {m}"));
    let params: &Params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let cycles = r.u64("body")?;
    let (memory, size) = get_memory(&mut r).context(|| "corrupt result".into())?;
    let mut values = Vec::with_capacity(17);
    // The shape must be the core's: a 1-bit finish flag, 16-bit registers, the core's RAM.
    let widths = std::iter::once((cores::FINISH, 1)).chain(cores::REGS.map(|r| (r, REG_BITS)));
    for (name, want) in widths {
        let n = r.u32("body")? as usize;
        if n != want {
            return Err(corrupt(format!(
                "output {name} has {n} bits, the core's has {want}"
            )));
        }
        let bits = (0..n)
            .map(|_| {
                Tlwe::<u32>::from_bytes(r.blob(usize::MAX, "body")?, params)
                    .map_err(|e| PlatformError::from(e).context("corrupt result"))
            })
            .collect::<Result<Vec<_>>>()?;
        values.push(client::decrypt_value(&key.sk, &bits)?);
    }
    let aa = size.ram_addr_width();
    let words = match memory {
        Memory::Cmux => {
            let ram_bytes = r.blob(usize::MAX, "body")?;
            let want = format!("a {size} result's");
            check_shape("RAM", &want, ram_bytes, aa, cores::RAM_DATA_WIDTH)
                .map_err(|e| corrupt(e.to_string()))?;
            let ram =
                TfheRam::from_bytes(ram_bytes, params).context(|| "corrupt result: RAM".into())?;
            // Decoded with the announced shape: 2^a noise bounds and 2^a·w cells.
            let words = 1usize << aa;
            if ram.noise_bounds().len() != words
                || ram.cells().len() != words * cores::RAM_DATA_WIDTH
            {
                return Err(corrupt("the RAM's shape is not the core's".into()));
            }
            client::decrypt_ram(&key.sk, &ram)?
        }
        Memory::Mux => {
            let cells = get_cells(&mut r, ram_bits(size), params)
                .context(|| format!("corrupt result: {size} RAM"))?;
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

/// Bits of the ROM of `size`.
fn rom_bits(size: MemSize) -> usize {
    (1 << size.rom_addr_width()) * cores::ROM_DATA_WIDTH
}

/// Bits of the RAM of `size`.
fn ram_bits(size: MemSize) -> usize {
    (1 << size.ram_addr_width()) * cores::RAM_DATA_WIDTH
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
    let n = r.u64("body")?;
    if n != want as u64 {
        return Err(PlatformError::format(format!(
            "{n} memory cells, the core's memory has {want}"
        )));
    }
    (0..want)
        .map(|_| {
            Ok(Tlwe::<u32>::from_bytes(
                r.blob(usize::MAX, "body")?,
                params,
            )?)
        })
        .collect()
}

/// Checks the shape a serialized RAM announces (address width u64 ‖ data width u64 ‖ …) against
/// `a` and `w` before anything is decoded.
pub(crate) fn check_ram_shape(bytes: &[u8], a: usize, w: usize) -> Result<()> {
    check_shape("RAM", "the core's", bytes, a, w)
}

/// [`check_ram_shape`] for a serialized CMUX ROM or RAM (both begin with the two widths): `what`
/// is the memory, `want` whose shape it must have (`the ROM is …, a 1 KiB request's is …`).
pub(crate) fn check_shape(what: &str, want: &str, bytes: &[u8], a: usize, w: usize) -> Result<()> {
    let mut r = Reader::new(bytes);
    let (ba, bw) = (r.u64("body")?, r.u64("body")?);
    if (ba, bw) != (a as u64, w as u64) {
        return Err(PlatformError::format(format!(
            "the {what} is 2^{ba} words of {bw} bits, {want} is 2^{a} words of {w} bits"
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A result envelope of `size` with outputs of `bits[k]` bits (finish flag first) and a 2^a × w
    /// RAM.
    pub(crate) fn result_with(
        key: &ClientKey,
        bits: [usize; 17],
        (a, w): (usize, usize),
        size: MemSize,
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
            size,
        )
    }

    fn key() -> &'static ClientKey {
        static K: std::sync::OnceLock<ClientKey> = std::sync::OnceLock::new();
        K.get_or_init(|| crate::keys::generate_secret("default", &Params::default_128()).unwrap())
    }

    #[test]
    fn dec_checks_the_results_shape_against_the_core() {
        let key = key();
        let core_ram = (cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH);
        let k1_ram = (MemSize::K1.ram_addr_width(), cores::RAM_DATA_WIDTH);
        let mut good = [16; 17];
        good[0] = 1;
        let d = decrypt_result(key, &result_with(key, good, core_ram, MemSize::B512)).unwrap();
        assert_eq!(
            (d.cycles, d.finished, d.ram.len()),
            (7, false, cores::RAM_BYTES)
        );
        // A 1 KiB result decrypts to 1 KiB of RAM.
        let d = decrypt_result(key, &result_with(key, good, k1_ram, MemSize::K1)).unwrap();
        assert_eq!(d.ram.len(), 1024);
        let mut no_flag = good;
        no_flag[0] = 0;
        let mut wide_reg = good;
        wide_reg[3] = 17;
        let b512 = MemSize::B512;
        for (bits, ram, size, want) in [
            (
                no_flag,
                core_ram,
                b512,
                "finflag has 0 bits, the core's has 1",
            ),
            (wide_reg, core_ram, b512, "has 17 bits, the core's has 16"),
            (good, (1, 1), b512, "the RAM is 2^1 words of 1 bits"),
            (good, (8, 8), b512, "the RAM is 2^8 words of 8 bits"),
            // The size the result names and the RAM it holds disagree.
            (
                good,
                k1_ram,
                b512,
                "the RAM is 2^9 words of 16 bits, a 512 B ROM and RAM result's is 2^8",
            ),
            (
                good,
                core_ram,
                MemSize::K1,
                "the RAM is 2^8 words of 16 bits, a 1 KiB ROM and RAM result's is 2^9",
            ),
        ] {
            let e = decrypt_result(key, &result_with(key, bits, ram, size))
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn mux_memory_requests_round_trip_and_their_cell_counts_are_checked() {
        let key = key();
        let p = key.sk.params();
        let plain = PlainRequest {
            rom: vec![0xdead_beef, 7],
            ram: vec![0x1234, 0, 0xffff],
            memory: Memory::Mux,
            size: MemSize::B512,
        };
        let env = plain.encrypt(key).unwrap().to_envelope(p);
        let back = Request::from_envelope(&env, p).unwrap();
        assert_eq!(back.size, MemSize::B512);
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

    /// A 1 KiB request (the 1 KiB variant's ROM of 256 words and RAM of 512) in CMUX and in MUX
    /// memory: the size survives the file, the words past the first 512 bytes decrypt back, and a
    /// request whose memory byte names the other size is refused by its shape.
    #[test]
    fn requests_carry_their_size_and_a_size_that_is_not_the_memories_is_refused() {
        let key = key();
        let p = key.sk.params();
        let mut rom = vec![0u64; 256];
        rom[200] = 0x1234_5678;
        let mut ram = vec![0u64; 512];
        ram[300] = 0xbeef;
        for memory in [Memory::Cmux, Memory::Mux] {
            let plain = PlainRequest {
                rom: rom.clone(),
                ram: ram.clone(),
                memory,
                size: MemSize::K1,
            };
            let env = plain.encrypt(key).unwrap().to_envelope(p);
            assert_eq!(request_memory(&env).unwrap(), (memory, MemSize::K1));
            let back = Request::from_envelope(&env, p).unwrap();
            assert_eq!(back.size, MemSize::K1);
            let (rom_back, ram_back) = match &back.memories {
                EncryptedMemories::Cmux { rom, ram } => (
                    client::decrypt_rom(&key.sk, rom).unwrap(),
                    client::decrypt_ram(&key.sk, ram).unwrap(),
                ),
                EncryptedMemories::Mux { rom, ram } => (
                    client::decrypt_mux_memory(&key.sk, cores::ROM_DATA_WIDTH, rom).unwrap(),
                    client::decrypt_mux_memory(&key.sk, cores::RAM_DATA_WIDTH, ram).unwrap(),
                ),
            };
            assert_eq!(
                (rom_back, ram_back),
                (rom.clone(), ram.clone()),
                "{memory:?}"
            );
            // The same memories announced as 512 B: refused by their shape, before decoding.
            let mut body = env.body.to_vec();
            body[0] &= !2;
            assert_eq!(
                memory_from_tag(body[0], None).unwrap(),
                (memory, MemSize::B512)
            );
            let e = anyhow_chain(parse_request(&body, p).err().unwrap());
            let want = match memory {
                Memory::Cmux => {
                    "the ROM is 2^8 words of 32 bits, a 512 B ROM and RAM request's is 2^7"
                }
                Memory::Mux => "8192 memory cells, the core's memory has 4096",
            };
            assert!(e.contains(want), "{memory:?}: {e}");
        }
        // A 512 B request announced as 1 KiB is refused the same way.
        let small = PlainRequest {
            rom: vec![1],
            ram: vec![2],
            memory: Memory::Cmux,
            size: MemSize::B512,
        };
        let env = small.encrypt(key).unwrap().to_envelope(p);
        let mut body = env.body.to_vec();
        body[0] |= 2;
        let e = anyhow_chain(parse_request(&body, p).err().unwrap());
        assert!(
            e.contains("the ROM is 2^7 words of 32 bits, a 1 KiB ROM and RAM request's is 2^8"),
            "{e}"
        );
        // Bits beyond kind and size are not a memory byte; sizes only with bit 2, and only sizes
        // that a core has.
        for t in [4, 6, 7, 8, 0x82, 0xff] {
            assert!(memory_from_tag(t, None).is_err(), "{t}");
        }
        assert!(memory_from_tag(0, Some([9, 9])).is_err());
        assert!(memory_from_tag(6, Some([9, 9])).is_err());
        assert_eq!(
            memory_from_tag(5, Some([13, 9])).unwrap(),
            (Memory::Mux, MemSize::new(8192, 512).unwrap())
        );
        for bad in [[8, 9], [9, 14], [14, 14], [255, 9], [9, 0], [63, 64]] {
            let e = memory_from_tag(4, Some(bad)).unwrap_err().to_string();
            assert!(e.contains("unknown memory size"), "{bad:?}: {e}");
        }
        let e = size_from_log2(16, 255).unwrap_err().to_string();
        assert!(e.contains("a 65536-byte ROM and a 2^255-byte RAM"), "{e}");
        // A request body that ends inside the size bytes is refused, not read past.
        for body in [&[4u8][..], &[4, 10][..]] {
            assert!(parse_request(body, p).is_err());
        }
    }

    /// The error and its causes on one line, as the command prints it.
    fn anyhow_chain(e: PlatformError) -> String {
        let mut out = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            out.push_str(": ");
            out.push_str(&s.to_string());
            src = s.source();
        }
        out
    }
}
