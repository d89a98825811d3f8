//! What a client command wrote, as its closing note says it: `vsp genkey`, `genbkey`, `enc`,
//! `asm`, `cc` and `circuit enc` print the [`Written`] (or [`WrittenImage`]) their library call
//! returns.

use std::fmt;
use std::path::{Path, PathBuf};

use vsp_cahp::cores::{MemSize, Memory};
use vsp_cahp::Image;

use super::text::{fmt_bytes, fmt_secs};
use crate::processor::program::memory_name;
use crate::wire::envelope::KeyId;

/// A file a client command wrote: its path, its size and what it is.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: PathBuf,
    pub bytes: u64,
    pub what: What,
}

/// What a [`Written`] file holds.
#[derive(Debug, Clone)]
pub enum What {
    /// A secret key of the parameter set `params` (`vsp genkey`).
    SecretKey { params: String, key_id: KeyId },
    /// A compressed evaluation key, generated in `seconds` (`vsp genbkey`).
    EvalKey { seconds: f64 },
    /// A processor request for `memory` of `size` (`vsp enc`).
    Request { memory: Memory, size: MemSize },
    /// A circuit request (`vsp circuit enc`).
    CircuitRequest,
}

impl Written {
    pub fn new(path: &Path, bytes: u64, what: What) -> Written {
        let path = path.to_path_buf();
        Written { path, bytes, what }
    }
}

impl fmt::Display for Written {
    /// `wrote request req.enc (1.2 MiB, cmux memory, 512 B ROM and RAM)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, size) = (self.path.display(), fmt_bytes(self.bytes));
        match &self.what {
            What::SecretKey { params, key_id } => write!(
                f,
                "wrote secret key {path} ({size}, parameters {params}, key id {key_id})"
            ),
            What::EvalKey { seconds } => {
                let secs = fmt_secs(*seconds);
                write!(
                    f,
                    "wrote evaluation key {path} ({size} compressed) in {secs}"
                )
            }
            What::Request { memory, size: mem } => {
                let memory = memory_name(*memory);
                write!(f, "wrote request {path} ({size}, {memory} memory, {mem})")
            }
            What::CircuitRequest => write!(f, "wrote circuit request {path} ({size})"),
        }
    }
}

/// A program image a client command wrote (`vsp asm`, with its symbol count; `vsp cc`).
#[derive(Debug, Clone)]
pub struct WrittenImage {
    pub path: PathBuf,
    pub image: Image,
    /// Whether the note counts the image's symbols (`vsp asm`'s does).
    pub symbols: bool,
}

impl WrittenImage {
    pub fn new(path: &Path, image: Image, symbols: bool) -> WrittenImage {
        let path = path.to_path_buf();
        WrittenImage {
            path,
            image,
            symbols,
        }
    }
}

impl fmt::Display for WrittenImage {
    /// `wrote fib.img (ROM 120 B, RAM data 4 B, 9 symbols)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, rom, ram) = (
            self.path.display(),
            self.image.rom.len(),
            self.image.ram.len(),
        );
        write!(f, "wrote {path} (ROM {rom} B, RAM data {ram} B")?;
        if self.symbols {
            write!(f, ", {} symbols", self.image.symbols.len())?;
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(what: What) -> String {
        let path = PathBuf::from("out.bin");
        Written {
            path,
            bytes: 3 << 20,
            what,
        }
        .to_string()
    }

    /// The closing notes, word for word as the commands printed them before they were the
    /// library's.
    #[test]
    fn notes_read_as_the_commands_print_them() {
        let key_id = KeyId([0xab; 16]);
        let id = key_id.to_string();
        let params = "default".to_string();
        assert_eq!(
            written(What::SecretKey { params, key_id }),
            format!("wrote secret key out.bin (3.0 MiB, parameters default, key id {id})")
        );
        assert_eq!(
            written(What::EvalKey { seconds: 75.0 }),
            "wrote evaluation key out.bin (3.0 MiB compressed) in 1m15s"
        );
        let size = MemSize::new(1024, 512).unwrap();
        let memory = Memory::Mux;
        assert_eq!(
            written(What::Request { memory, size }),
            "wrote request out.bin (3.0 MiB, mux memory, 1 KiB ROM and 512 B RAM)"
        );
        assert_eq!(
            written(What::CircuitRequest),
            "wrote circuit request out.bin (3.0 MiB)"
        );
    }

    #[test]
    fn an_image_note_counts_symbols_only_when_asked() {
        let text = include_str!("../../../cahp/asm/programs/fib.s");
        let source = vsp_cahp::asm::Source {
            name: "fib.s",
            text,
        };
        let image = crate::processor::program::assemble(&[source], false, MemSize::default())
            .expect("assembles");
        let (rom, ram) = (image.rom.len(), image.ram.len());
        let n = image.symbols.len();
        let mut w = WrittenImage {
            path: PathBuf::from("a.img"),
            image,
            symbols: true,
        };
        let with = format!("wrote a.img (ROM {rom} B, RAM data {ram} B, {n} symbols)");
        assert_eq!(w.to_string(), with);
        w.symbols = false;
        let without = format!("wrote a.img (ROM {rom} B, RAM data {ram} B)");
        assert_eq!(w.to_string(), without);
        assert!(rom > 0 && n > 0, "the test image has code and a symbol");
    }
}
