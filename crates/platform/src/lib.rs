//! vsp-platform: the Virtual Secure Platform as a library — everything between the engine
//! (vsp-circuit over vsp-tfhe), the processor (vsp-cahp) and the `vsp` command, which is only
//! argument parsing and printing on top of it. The bench, the tests and the co-verification use the
//! same machine.
//!
//! The layers, from the bytes up:
//!
//! | folder / module | what |
//! |---|---|
//! | [`wire`] | the checked, versioned [`Envelope`] of every file ([`Kind`]; bodies are read with [`vsp_codec::Reader`]), and the one encoding of the machine tag ([`wire::tags`]: core, memory kind and size, or a circuit) |
//! | [`keys`] | secret key (client) and evaluation key (server) files, parameter sets |
//! | [`processor`] | the CAHPv3 machine: [`processor::program`] (images, `.s`, `.c`, the initial memories [`PlainRequest`], the ISA trace), [`processor::packets`] (request, result, cells: a [`PlainRequest`] encrypts into a [`Request`]; a result decrypts into a [`Decrypted`] state), [`processor::machine`] (core + memories: run, resume), [`processor::run`] (progress and snapshots), [`processor::emu`] ([`emulate`]), [`processor::client`] (the client's commands on files: keys, images, requests) |
//! | [`design`] | any user circuit (blueprint or bare Yosys JSON), a file per type: load, inputs, request, machine, result, per-cycle traces (JSON lines, VCD), runs ([`design::LocalRun`], [`design::run_plain`], [`design::run_encrypted`], the server's half) and statistics |
//! | [`server`] | a server run, as `vsp run`/`resume`/`circuit exec`/`circuit resume` and the job server play it ([`server::ServerRun`]): claim the outputs, open a request or snapshot, run, write; what it shows goes to a [`server::Watch`]; the MPI root/follower choreography ([`server::mpi`], `mpi` feature) |
//! | [`demo`] | `vsp demo`: both sides of the platform on one machine, checked against the plain run |
//! | [`files`] | the one atomic file writer and the checks on output paths |
//! | [`error`] | [`PlatformError`], wrapping the lower crates' errors |
//!
//! The client's side: [`keys::generate_secret`] → [`PlainRequest::new`] → [`PlainRequest::encrypt`]
//! → [`wire::envelope::save`]. The server's: [`keys::ServerKeys::load`] → [`Machine::start`] →
//! [`Machine::run`] (→ [`Machine::save`] / [`Machine::resume`]) → [`Machine::result`]. The client
//! again: [`decrypt_result`].

#![forbid(unsafe_code)]

pub mod demo;
pub mod design;
pub mod error;
pub mod files;
pub mod keys;
pub mod processor;
pub mod server;
pub mod wire;

#[cfg(test)]
#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;
#[cfg(test)]
mod mutation_tests;

pub use error::{PlatformError, Result, ResultExt};
pub use keys::{ClientKey, ServerKeys};
pub use processor::emu::{emulate, plain_state_after, EmuResult};
pub use processor::machine::{core_circuit, core_circuit_with, CoreBuild, Machine};
pub use processor::packets::{decrypt_result, Decrypted, EncryptedMemories, Request};
pub use processor::program::PlainRequest;
pub use processor::run::{RunProgress, Snapshot, Snapshots, Stamp};
pub use vsp_cahp::cores::{Core, MemSize, Memory};
pub use wire::envelope::{Envelope, KeyId, Kind, Writer};
