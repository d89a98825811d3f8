//! Any user circuit for `vsp circuit`: a blueprint (TOML, `docs/blueprint.md`) or a bare Yosys JSON
//! netlist (`docs/yosys.md`), whose ports then become the circuit's external ports of the same name;
//! per-cycle output traces as JSON lines and as a VCD that GTKWave opens; and the client/server split
//! for any circuit on the same envelopes as the processor's: [`CircuitInputs::encrypt`] →
//! [`CircuitRequest`] → [`CircuitMachine`] (run, snapshot, resume) → [`decrypt_circuit_result`].
//!
//! | file | what |
//! |---|---|
//! | `load` | [`load_design`]: a blueprint or a bare netlist |
//! | `inputs` | [`CircuitInputs`]: the inputs file |
//! | `request` | [`CircuitRequest`]: encrypted inputs and memories, their wire format |
//! | `machine` | [`CircuitMachine`]: the server's encrypted run, snapshots |
//! | `result` | [`CircuitOutputs`]: the result, encrypted and decrypted |
//! | `trace` | [`Trace`] (JSON lines, VCD) and [`EncryptedTrace`] |
//! | `run` | local runs ([`LocalRun`]): plain, or encrypted on one machine |
//! | `server` | the server's half ([`crate::server::ServerRun::run_circuit`]) |
//! | `client` | the client's files: [`encrypt_inputs`], [`decrypt_file`] |
//! | `stats` | [`stats_json`], [`stats_text`] |

mod client;
mod inputs;
mod load;
mod machine;
mod request;
mod result;
mod run;
mod server;
mod stats;
mod trace;

pub use client::{decrypt_file, encrypt_inputs, Decrypt, Decrypted};
pub use inputs::CircuitInputs;
#[cfg(test)]
pub(crate) use load::netlist_circuit;
pub use load::{load_design, netlist_blueprint};
pub use machine::CircuitMachine;
pub use request::{CircuitRequest, EncryptedMemory, RequestContext};
pub use result::{decrypt_circuit_result, plain_outputs, CircuitOutputs, CircuitResult};
pub use run::{
    check_reset, outputs_json, public_warning, run_design, run_encrypted, run_plain, DesignRun,
    LocalRun,
};
pub use server::{CircuitStart, Exec, Executed};
pub use stats::{stats_json, stats_text};
pub use trace::{decrypt_circuit_trace, EncryptedTrace, Trace, MAX_TRACE_CYCLES};
