//! The program image: ROM bytes, initial RAM bytes and symbols, and its versioned file format.
//!
//! The format is documented in `docs/image-format.md`: magic `VSPCAHPI`, version, checked lengths,
//! body, SHA3-256 checksum. Readers check every length against the bytes actually present before
//! allocating, so truncated or corrupt files are refused with a message saying which.

use std::fs;
use std::io::Write;
use std::path::Path;

use sha3::{Digest, Sha3_256};
use thiserror::Error;

const MAGIC: &[u8; 8] = b"VSPCAHPI";
/// Current image format version.
pub const FORMAT_VERSION: u16 = 1;
const CHECKSUM_LEN: usize = 32;
const HEADER_LEN: usize = 8 + 2 + 2 + 4 + 4 + 4;
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
}

/// Image file errors.
#[derive(Debug, Error)]
pub enum ImageError {
    /// Not an image file.
    #[error("not a CAHP program image (bad magic)")]
    BadMagic,
    /// Written by a newer/unknown version.
    #[error("unsupported image format version {0} (this build reads version {FORMAT_VERSION})")]
    Version(u16),
    /// File shorter than its header says.
    #[error("truncated image: {0}")]
    Truncated(String),
    /// Checksum mismatch.
    #[error("corrupt image: checksum mismatch")]
    Checksum,
    /// A field has an impossible value.
    #[error("invalid image: {0}")]
    Invalid(String),
    /// Extra bytes after the checksum.
    #[error("invalid image: {0} trailing bytes after the checksum")]
    Trailing(usize),
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl Image {
    /// Looks a symbol up by name.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// Serializes to the documented format.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ImageError> {
        if self.rom.len() > MAX_MEM || self.ram.len() > MAX_MEM {
            return Err(ImageError::Invalid(
                "ROM or RAM larger than 65536 bytes".into(),
            ));
        }
        if self.symbols.len() > MAX_MEM {
            return Err(ImageError::Invalid("more than 65536 symbols".into()));
        }
        let mut out = Vec::with_capacity(HEADER_LEN + self.rom.len() + self.ram.len() + 64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // flags, reserved
        out.extend_from_slice(&(self.rom.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.ram.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.symbols.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.rom);
        out.extend_from_slice(&self.ram);
        for s in &self.symbols {
            let name = s.name.as_bytes();
            if name.is_empty() || name.len() > MAX_NAME {
                return Err(ImageError::Invalid(format!(
                    "symbol name length {} not in 1..=1024",
                    name.len()
                )));
            }
            let kind = match s.section {
                Section::Rom => 0u8,
                Section::Ram => 1,
                Section::Abs => 2,
            };
            out.push(kind);
            out.push(u8::from(s.global));
            out.extend_from_slice(&s.value.to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name);
        }
        let sum = Sha3_256::digest(&out);
        out.extend_from_slice(&sum);
        Ok(out)
    }

    /// Parses the documented format, checking magic, version, lengths and checksum.
    pub fn from_bytes(bytes: &[u8]) -> Result<Image, ImageError> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(ImageError::BadMagic);
        }
        let mut r = Reader { b: bytes, pos: 8 };
        let version = r.u16("version")?;
        if version != FORMAT_VERSION {
            return Err(ImageError::Version(version));
        }
        let flags = r.u16("flags")?;
        if flags != 0 {
            return Err(ImageError::Invalid(format!("unknown flags 0x{flags:04x}")));
        }
        let rom_len = r.u32("ROM length")? as usize;
        let ram_len = r.u32("RAM length")? as usize;
        let nsym = r.u32("symbol count")? as usize;
        if rom_len > MAX_MEM || ram_len > MAX_MEM || nsym > MAX_MEM {
            return Err(ImageError::Invalid(format!(
                "lengths ROM {rom_len}, RAM {ram_len}, symbols {nsym} exceed 65536"
            )));
        }
        // Verify the checksum before interpreting the body, once we know the body is there.
        if bytes.len() < HEADER_LEN + rom_len + ram_len + CHECKSUM_LEN {
            return Err(ImageError::Truncated(format!(
                "{} bytes, header promises at least {}",
                bytes.len(),
                HEADER_LEN + rom_len + ram_len + CHECKSUM_LEN
            )));
        }
        let rom = r.take(rom_len, "ROM")?.to_vec();
        let ram = r.take(ram_len, "RAM")?.to_vec();
        let mut symbols = Vec::with_capacity(nsym.min(bytes.len() / 7));
        for i in 0..nsym {
            let kind = r.u8("symbol kind")?;
            let global = r.u8("symbol flags")?;
            let value = r.u16("symbol value")?;
            let nlen = usize::from(r.u16("symbol name length")?);
            let name = r.take(nlen, "symbol name")?;
            let section = match kind {
                0 => Section::Rom,
                1 => Section::Ram,
                2 => Section::Abs,
                k => return Err(ImageError::Invalid(format!("symbol {i}: unknown kind {k}"))),
            };
            if global > 1 {
                return Err(ImageError::Invalid(format!(
                    "symbol {i}: unknown flags {global}"
                )));
            }
            if nlen == 0 || nlen > MAX_NAME {
                return Err(ImageError::Invalid(format!(
                    "symbol {i}: name length {nlen}"
                )));
            }
            let name = std::str::from_utf8(name)
                .map_err(|_| ImageError::Invalid(format!("symbol {i}: name is not UTF-8")))?
                .to_string();
            symbols.push(Symbol {
                name,
                section,
                value,
                global: global == 1,
            });
        }
        let body_end = r.pos;
        let sum = r.take(CHECKSUM_LEN, "checksum")?;
        if Sha3_256::digest(&bytes[..body_end]).as_slice() != sum {
            return Err(ImageError::Checksum);
        }
        if r.pos != bytes.len() {
            return Err(ImageError::Trailing(bytes.len() - r.pos));
        }
        Ok(Image { rom, ram, symbols })
    }

    /// Writes the image atomically (temporary sibling file, then rename).
    pub fn write_atomic(&self, path: &Path) -> Result<(), ImageError> {
        let bytes = self.to_bytes()?;
        let io = |source| ImageError::Io {
            path: path.display().to_string(),
            source,
        };
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{file_name}.tmp{}", std::process::id()));
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(io)
    }

    /// Reads and checks an image file.
    pub fn read(path: &Path) -> Result<Image, ImageError> {
        let bytes = fs::read(path).map_err(|source| ImageError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Image::from_bytes(&bytes)
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ImageError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len());
        let end =
            end.ok_or_else(|| ImageError::Truncated(format!("file ends inside the {what}")))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, ImageError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, ImageError> {
        let s = self.take(2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32, ImageError> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
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
        assert!(matches!(
            Image::from_bytes(&long),
            Err(ImageError::Trailing(1))
        ));
        let mut v = bytes;
        v[8] = 2;
        assert!(matches!(Image::from_bytes(&v), Err(ImageError::Version(2))));
    }
}
