//! vsp-platform: the Virtual Secure Platform as a library — everything between the engine
//! (vsp-circuit over vsp-tfhe), the processor (vsp-cahp) and the `vsp` command, which is only
//! argument parsing and printing on top of it. The bench, the tests and the co-verification use the
//! same machine.
//!
//! | module | what |
//! |---|---|
//! | [`program`] | reading programs (image, `.s`, `.c`), the initial memories ([`PlainRequest`]), the ISA trace |
//! | [`keys`] | secret key (client) and evaluation key (server) files, parameter sets |
//! | [`packets`] | a [`PlainRequest`] encrypts into a [`Request`]; a result decrypts into a [`Decrypted`] state |
//! | [`machine`] | the core + memories ([`core_circuit`]): run with progress and snapshots, resume, [`emulate`] |
//! | [`design`] | any user circuit (blueprint or bare Yosys JSON) and its per-cycle output traces (JSON lines, VCD) |
//! | [`envelope`] | the checked, versioned envelope of every file ([`Envelope`], [`Kind`]; bodies are read with [`vsp_codec::Reader`]) |
//! | [`files`] | the one atomic file writer and the checks on output paths |
//! | [`error`] | [`PlatformError`], wrapping the lower crates' errors |
//!
//! The client's side: [`keys::generate_secret`] → [`PlainRequest::new`] → [`PlainRequest::encrypt`]
//! → [`Request::to_envelope`]. The server's: [`keys::ServerKeys::load`] → [`Machine::start`] →
//! [`Machine::run`] (→ [`Machine::save`] / [`Machine::resume`]) → [`Machine::result`]. The client
//! again: [`decrypt_result`].

#![forbid(unsafe_code)]

pub mod design;
pub mod envelope;
pub mod error;
pub mod files;
pub mod keys;
pub mod machine;
pub mod packets;
pub mod program;
pub mod server;
pub mod wire;

#[cfg(test)]
#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;
#[cfg(test)]
mod mutation_tests;

pub use envelope::{Envelope, KeyId, Kind, Writer};
pub use error::{PlatformError, Result, ResultExt};
pub use keys::{ClientKey, ServerKeys};
pub use machine::{
    core_circuit, core_circuit_with, emulate, plain_state_after, CoreBuild, EmuResult, Machine,
    RunProgress, Snapshots,
};
pub use packets::{decrypt_result, Decrypted, EncryptedMemories, Request};
pub use program::PlainRequest;
pub use vsp_cahp::cores::{Core, MemSize, Memory};
