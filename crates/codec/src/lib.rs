//! # vsp-codec — the one file codec of VSP
//!
//! Every file the project writes (TFHE keys and ciphertexts, BFV objects, CAHP program images,
//! circuit snapshots, the `vsp` command's key, request, result and snapshot files) goes through
//! this crate, so there is one envelope, one bounds-checked reader and one atomic write.
//!
//! | module | what it holds |
//! |---|---|
//! | [`envelope`] | [`Format`], [`seal`] and [`open`]: magic, version, kind, parameter id, body length, SHA3-256 checksum |
//! | [`file`](mod@file) | [`FileCodec`]: the trait every format implements (kind, parameter id, body; envelope, save and load come with it) |
//! | [`reader`] | [`Reader`]: little-endian reads that check every length against the bytes that remain before allocating |
//! | [`writer`] | [`Writer`]: the matching little-endian writes (count-prefixed vectors and strings) |
//! | [`atomic`] | [`write_atomic`], [`read_file`], [`check_output`], [`exposed_mode`]: the one way a file reaches the disk |
//! | [`input`] | [`read_bounded`], [`read_text_bounded`], [`check_input`]: inputs only from regular files, never past a bound per kind |
//! | [`lock`] | [`lock_output`]: an exclusive claim on an output while it is produced |
//! | [`text`] | [`text::excerpt`], [`text::escape_control`]: input echoed in messages, escaped and cut short |
//! | [`error`] | [`Error`], the crate's typed error that every format crate wraps with `#[from]` |

#![forbid(unsafe_code)]

pub mod atomic;
pub mod envelope;
pub mod error;
pub mod file;
pub mod input;
pub mod lock;
pub mod reader;
pub mod text;
pub mod writer;

pub use atomic::{check_output, exposed_mode, read_file, stale_temps, write_atomic, Access};
pub use envelope::{open, seal, Format, Opened};
pub use error::Error;
pub use file::FileCodec;
pub use input::{check_input, limits, read_bounded, read_prefix, read_text_bounded};
pub use lock::{lock_output, OutputLock};
pub use reader::Reader;
pub use writer::Writer;

/// Builder setters: `name(arg: Type) => field = value;` is `pub fn name(mut self, arg: Type) -> Self`
/// that sets `self.field = value` (the parameter and instruction builders of the workspace's crates
/// use it inside their `impl` blocks).
#[macro_export]
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) => $field:ident = $value:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $arg: $ty) -> Self {
                self.$field = $value;
                self
            }
        )*
    };
}
