//! The packets between client and server: a [`PlainRequest`](crate::PlainRequest) (program and
//! arguments as memory words) encrypts into a [`Request`]; the server's run ends in a result
//! envelope that [`decrypt_result`] turns back into a [`Decrypted`] state.
//!
//! * A request holds the core's ROM and initial RAM. With CMUX memory (the default) the ROM is
//!   packed into level-1 TRLWEs (vertical packing) and the RAM is one TRLWE per bit; with MUX memory
//!   (Iyokan's flip-flops + MUX trees) both are one TLWE per bit. Which core runs it is the server's
//!   choice; the request does not depend on it.
//! * A result holds the cycle count, the encrypted finish flag, x0–x15 and the RAM.
//! * Both name the memory kind and the sizes of ROM and RAM (512 B to 8 KiB each, [`MemSize`](crate::MemSize)): a
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

mod cells;
mod request;
mod result;

pub(crate) use cells::{check_ram_shape, check_shape, get_cells, put_cells, ram_bits, rom_bits};
pub use request::{parse_request, request_memory, EncryptedMemories, Request};
pub use result::{decrypt_result, Decrypted, EncryptedRam, EncryptedResult};
pub(crate) use result::{regs_table, yes_no};

#[cfg(test)]
use crate::wire::tags::{memory_from_tag, size_from_log2};

/// Width of a CAHPv3 register.
pub const REG_BITS: usize = 16;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::PlatformError;
    use crate::keys::ClientKey;
    use crate::processor::program::PlainRequest;
    use crate::wire::envelope::Envelope;
    use vsp_cahp::cores::{self, MemSize, Memory};
    use vsp_circuit::client;
    use vsp_tfhe::{Params, Tlwe};

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
        EncryptedResult {
            stamp: key.stamp(),
            cycles: 7,
            size,
            outputs,
            ram: EncryptedRam::Cmux(std::borrow::Cow::Owned(ram)),
            params: *p,
        }
        .to_envelope()
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
        let request = plain.encrypt(key).unwrap();
        let env = request.to_envelope();
        // The file through FileCodec is the envelope's, byte for byte.
        assert_eq!(vsp_codec::FileCodec::encode(&request, p), *env.to_bytes());
        let back = Request::from_envelope(&env, p).unwrap();
        assert_eq!(back.size, MemSize::B512);
        // An envelope of another kind is not decoded as a request.
        let result = result_with(key, [1; 17], (1, 1), MemSize::B512);
        let e = result.decode::<Request>(p).err().unwrap().to_string();
        assert_eq!(e, "found encrypted result, expected encrypted request");
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
            let env = plain.encrypt(key).unwrap().to_envelope();
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
        let env = small.encrypt(key).unwrap().to_envelope();
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
