//! The program image: ROM bytes, initial RAM bytes and symbols, and its versioned file format.
//!
//! The format is documented in `docs/image-format.md`: [`vsp_codec`]'s envelope (magic `VSPCAHPI`,
//! version, kind, length, SHA3-256 checksum) around the ROM, the RAM and the symbols. The shared
//! reader checks every length against the bytes actually present before allocating, so truncated
//! or corrupt files are refused with a message saying which.

use std::path::Path;

use thiserror::Error;
use vsp_codec::{Access, FileCodec, Format, Reader, Writer};

use crate::sim::MemConfig;

/// Current image format version (2: the shared [`vsp_codec`] envelope; 1 had its own header).
pub const FORMAT_VERSION: u16 = 2;
/// The image file format.
pub const FORMAT: Format = Format {
    name: "CAHP program image",
    magic: b"VSPCAHPI",
    version: FORMAT_VERSION,
    kinds: &[(<Image as FileCodec>::KIND, "program image")],
};
const MAX_MEM: usize = 65536;
const MAX_NAME: usize = 1024;

/// Where a symbol's value points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// A ROM (instruction) byte address: `.text`.
    Rom,
    /// A RAM byte address: `.data`, `.rodata`, `.bss`.
    Ram,
    /// A plain number (`.equ`).
    Abs,
}

/// One symbol of an image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Name.
    pub name: String,
    /// Address space.
    pub section: Section,
    /// Address (or value for [`Section::Abs`]).
    pub value: u16,
    /// Declared with `.globl`.
    pub global: bool,
}

/// An assembled program: what is loaded into ROM and RAM before reset.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Image {
    /// ROM contents from address 0 (the rest of ROM is zero).
    pub rom: Vec<u8>,
    /// Initial RAM contents from address 0, up to the end of `.bss` (the rest of RAM is zero;
    /// the argument loader uses the top).
    pub ram: Vec<u8>,
    /// Symbols, sorted by section then address.
    pub symbols: Vec<Symbol>,
    /// The ROM and RAM sizes of the machine the image was linked for (the assembler's
    /// [`AsmOptions`](crate::AsmOptions)), so that the commands that run it need not be told
    /// again; `None` for images written before the size was recorded.
    pub memory: Option<MemConfig>,
}

/// Image file errors.
#[derive(Debug, Error)]
pub enum ImageError {
    /// The envelope or a length failed the codec's checks (magic, version, truncation, checksum,
    /// trailing bytes), or reading or writing the file failed.
    #[error(transparent)]
    Codec(#[from] vsp_codec::Error),
    /// A field has an impossible value.
    #[error("invalid image: {0}")]
    Invalid(String),
}

impl Image {
    /// Looks a symbol up by name.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// Serializes to the documented format (after checking that every length fits it).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ImageError> {
        if self.rom.len() > MAX_MEM || self.ram.len() > MAX_MEM {
            return Err(ImageError::Invalid(
                "ROM or RAM larger than 65536 bytes".into(),
            ));
        }
        if self.symbols.len() > MAX_MEM {
            return Err(ImageError::Invalid("more than 65536 symbols".into()));
        }
        if let Some(s) =
            (self.symbols.iter()).find(|s| s.name.is_empty() || s.name.len() > MAX_NAME)
        {
            return Err(ImageError::Invalid(format!(
                "symbol name length {} not in 1..=1024",
                s.name.len()
            )));
        }
        Ok(self.encode(&()))
    }

    /// Parses the documented format, checking the envelope, every length and every field.
    pub fn from_bytes(bytes: &[u8]) -> Result<Image, ImageError> {
        Image::decode(bytes, &())
    }

    /// Writes the image with [`vsp_codec::write_atomic`].
    pub fn write_atomic(&self, path: &Path) -> Result<(), ImageError> {
        Ok(vsp_codec::write_atomic(
            path,
            &self.to_bytes()?,
            Access::Public,
        )?)
    }

    /// Reads and checks an image file.
    pub fn read(path: &Path) -> Result<Image, ImageError> {
        Image::from_bytes(&vsp_codec::read_bounded(
            path,
            vsp_codec::limits::IMAGE,
            "a program image",
        )?)
    }
}

/// The image file: the ROM, the RAM and the symbols; the parameter id records the memory sizes
/// the image was linked for. Write it with [`Image::to_bytes`], which checks the lengths first.
impl FileCodec for Image {
    const FORMAT: &'static Format = &FORMAT;
    const KIND: u16 = 1;
    type Context = ();
    type Error = ImageError;

    fn param_id(&self, _: &()) -> Vec<u8> {
        self.memory
            .map(memory_param)
            .unwrap_or_default()
            .into_bytes()
    }

    fn write_body(&self, w: &mut Writer) {
        w.blob(&self.rom);
        w.blob(&self.ram);
        w.count(self.symbols.len());
        for s in &self.symbols {
            w.u8(match s.section {
                Section::Rom => 0,
                Section::Ram => 1,
                Section::Abs => 2,
            });
            w.bool(s.global);
            w.u16(s.value);
            w.str(&s.name);
        }
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, _: &()) -> Result<Image, ImageError> {
        let memory = parse_memory_param(param)?;
        let rom = r.blob(MAX_MEM, "ROM")?.to_vec();
        let ram = r.blob(MAX_MEM, "RAM")?.to_vec();
        // A symbol takes at least 13 bytes: kind, flags, value and a name length.
        let nsym = r.count(13, MAX_MEM, "symbol table")?;
        let mut symbols = Vec::with_capacity(nsym);
        for i in 0..nsym {
            let section = match r.u8("symbol kind")? {
                0 => Section::Rom,
                1 => Section::Ram,
                2 => Section::Abs,
                k => return Err(ImageError::Invalid(format!("symbol {i}: unknown kind {k}"))),
            };
            let global = r.bool("symbol flags")?;
            let value = r.u16("symbol value")?;
            let name = r.str(MAX_NAME, "symbol name")?;
            if name.is_empty() {
                return Err(ImageError::Invalid(format!("symbol {i}: empty name")));
            }
            symbols.push(Symbol {
                name: name.to_string(),
                section,
                value,
                global,
            });
        }
        Ok(Image {
            rom,
            ram,
            symbols,
            memory,
        })
    }
}

/// The envelope's parameter id of an image linked for `m`: `rom=<bytes>,ram=<bytes>`.
fn memory_param(m: MemConfig) -> String {
    format!("rom={},ram={}", m.rom_size, m.ram_size)
}

/// The memory sizes an image's parameter id records (empty: not recorded).
fn parse_memory_param(param: &[u8]) -> Result<Option<MemConfig>, ImageError> {
    if param.is_empty() {
        return Ok(None);
    }
    let bad = || {
        ImageError::Invalid(format!(
            "unknown machine {:?} in the parameter id (expected rom=<bytes>,ram=<bytes>)",
            String::from_utf8_lossy(param)
        ))
    };
    let text = std::str::from_utf8(param).map_err(|_| bad())?;
    let (rom, ram) = text
        .strip_prefix("rom=")
        .and_then(|t| t.split_once(",ram="))
        .ok_or_else(bad)?;
    let size = |t: &str| {
        t.parse::<usize>()
            .ok()
            .filter(|n| n.to_string() == t)
            .ok_or_else(bad)
    };
    let m = MemConfig {
        rom_size: size(rom)?,
        ram_size: size(ram)?,
    };
    m.validate()
        .map_err(|e| ImageError::Invalid(e.to_string()))?;
    Ok(Some(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Image {
        Image {
            rom: vec![0x0E, 0x00, 1, 2, 3],
            ram: vec![0, 0, 9],
            symbols: vec![
                Symbol {
                    name: "_start".into(),
                    section: Section::Rom,
                    value: 0,
                    global: true,
                },
                Symbol {
                    name: "x".into(),
                    section: Section::Ram,
                    value: 2,
                    global: false,
                },
            ],
            memory: Some(MemConfig::kib1()),
        }
    }

    #[test]
    fn the_memory_size_is_recorded_and_old_images_read_without_it() {
        let img = sample();
        let bytes = img.to_bytes().unwrap();
        // In the envelope's parameter id, which builds before it was recorded skip.
        let param = b"rom=1024,ram=1024";
        assert_eq!(usize::from(bytes[12]), param.len());
        assert_eq!(&bytes[13..13 + param.len()], param);
        assert_eq!(Image::from_bytes(&bytes).unwrap().memory, img.memory);
        // An image written without it (as before): the same, with no size.
        let old = Image {
            memory: None,
            ..sample()
        };
        let bytes = old.to_bytes().unwrap();
        assert_eq!(bytes[12], 0, "empty parameter id");
        assert_eq!(Image::from_bytes(&bytes).unwrap(), old);
        // A parameter id that names no machine is refused with a one-line message.
        let mut w = Writer::with_capacity(64);
        w.blob(&[]);
        w.blob(&[]);
        w.count(0);
        for bad in [
            &b"rom=1000,ram=512"[..],
            b"ram=512",
            b"rom=0512,ram=512",
            b"\xff",
        ] {
            let f = vsp_codec::seal(&FORMAT, <Image as FileCodec>::KIND, bad, w.as_bytes());
            let e = Image::from_bytes(&f).unwrap_err().to_string();
            assert!(e.starts_with("invalid image:"), "{e}");
            assert_eq!(e.lines().count(), 1);
        }
    }

    #[test]
    fn round_trip_and_file() {
        let img = sample();
        let bytes = img.to_bytes().unwrap();
        assert_eq!(Image::from_bytes(&bytes).unwrap(), img);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.img");
        img.write_atomic(&p).unwrap();
        assert_eq!(Image::read(&p).unwrap(), img);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_refused() {
        let bytes = sample().to_bytes().unwrap();
        for n in 0..bytes.len() {
            assert!(Image::from_bytes(&bytes[..n]).is_err(), "truncated at {n}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(Image::from_bytes(&b).is_err(), "flip at {i}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(Image::from_bytes(&long).is_err());
        // A version-1 file (the layout before the shared envelope) gets a version error.
        let mut v = bytes;
        v[8] = 1;
        assert_eq!(
            Image::from_bytes(&v).unwrap_err().to_string(),
            "unsupported CAHP program image format version 1: this build reads version 2 (regenerate the file with this build)"
        );
    }
}
