//! `vsp-circuit` — the VSP circuit engine (our Iyokan, VSP paper seed 000, "Iyokan" and "CMUX Memory").
//!
//! It takes any synchronous gate-level circuit, evaluates it cycle by cycle in plain (bit-sliced, 64 runs
//! per word) or over TFHE on all cores, with ROM and RAM built from CMUX memory or from gates.
//!
//! # Using it
//! ```
//! use std::sync::Arc;
//! use vsp_circuit::{Blueprint, Circuit, Engine, PlainBackend, RunOptions};
//! # let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
//! // Load a blueprint (paths in it are relative to the TOML file) and flatten it.
//! let bp = Blueprint::from_path(&dir.join("counter.toml"))?;
//! let circuit = Arc::new(Circuit::compile(&bp)?);
//! let mut e = Engine::new(PlainBackend, circuit);
//! e.set_input_value("en", 1)?;                  // `@en` = 1 in all 64 lanes
//! let report = e.run(&RunOptions { max_cycles: 5, ..Default::default() }, &mut |_| {})?;
//! assert_eq!(report.cycles, 5);
//! assert_eq!(e.output_value("count", 0)?, 4);   // outputs of the 5th cycle (count before its edge)
//! # Ok::<(), vsp_circuit::CircuitError>(())
//! ```
//! * Blueprints: [`Blueprint::from_path`], [`Blueprint::from_str_with_base`],
//!   [`Blueprint::from_str_with_resolver`] (embedded data), [`Blueprint::single`] (one netlist).
//! * Inputs/outputs: [`Engine::set_input`] / [`Engine::output`] (any backend), and for the plain backend
//!   `set_input_value`, `output_value`, `load_memory_words`, `memory_words` ([`plain_api`]).
//! * Memories: [`Engine::set_rom`], [`Engine::set_ram`], [`Engine::memory`] (CMUX), and
//!   [`Engine::set_memory_cells`] / [`Engine::memory_cells`] (MUX memories).
//! * Running: [`Engine::reset`] (one `@reset` cycle), [`Engine::step`], [`Engine::run`] with
//!   [`RunOptions`] (cycle count, stop on a 1-bit output, periodic snapshots) and a [`Progress`] callback.
//! * Snapshots: [`Engine::save_snapshot`] / [`Engine::load_snapshot`] (versioned, checksummed, atomic);
//!   the state as a [`vsp_codec::FileCodec`] value is [`EngineSnapshot`] ([`Engine::snapshot`]); during a run every `snapshot_every` cycles, in another envelope with [`SnapshotWrap`].
//! * Statistics: [`Netlist::stats`], [`Circuit::stats`], [`Engine::last_cycle_stats`].
//!
//! # Encrypted runs
//! ```no_run
//! # use std::sync::Arc;
//! # use vsp_circuit::{client, Circuit, Engine, RunOptions, TfheBackend};
//! # fn f(sk: &vsp_tfhe::SecretKey, ek: vsp_tfhe::EvalKey, ck: vsp_tfhe::CircuitKey, c: Arc<Circuit>,
//! #      rom: &[u64], ram: &[u64]) -> Result<(), vsp_circuit::CircuitError> {
//! // Client: encrypt the memory images in the engine's layout (ROM 7×32, RAM 8×16 here).
//! let rom_img = client::encrypt_rom(sk, 7, 32, rom)?;
//! let ram_img = client::encrypt_ram(sk, 8, 16, ram)?;
//! // Server: one evaluation key shared by all worker threads; the circuit key drives CMUX memory.
//! let backend = TfheBackend::new(Arc::new(ek), Some(Arc::new(ck)))?;
//! let mut e = Engine::new(backend, c);                       // threads = all cores
//! e.set_rom("rom", rom_img)?;
//! e.set_ram("ram", ram_img)?;
//! e.reset()?;                                                  // trivial @reset = 1 for one cycle
//! let opts = RunOptions { max_cycles: 100, snapshot: Some("run.snap".into()), ..Default::default() };
//! e.run(&opts, &mut |p| eprintln!("cycle {} {}/{}", p.cycle, p.tasks_done, p.tasks_total))?;
//! // Client again: decrypt outputs and RAM.
//! let finished = client::decrypt_value(sk, &e.output("finflag")?)?;
//! # let _ = finished; Ok(()) }
//! ```
//! Resume: build the same engine and call [`Engine::load_snapshot`] before `run`.
//! MUXes: with a circuit key the TFHE backend evaluates MUXes whose select drives several MUXes as
//! CMUXes, circuit-bootstrapping each such select once per cycle ([`leveled`], planned per circuit from
//! the noise model; [`Engine::plan_counts`] says what a cycle costs); `TfheBackend::with_leveled(false)`
//! keeps every MUX two gate bootstraps.
//! Cells: the TFHE backend also has the engine map the circuit's two-input gates into multi-input
//! bootstrapped cells (majority, XOR3, x ⊕ g(y, z)…, [`techmap`]; same results, fewer bootstraps and
//! a shallower cycle); `TfheBackend::with_cells(false)` keeps the gates.
//! Many machines: the engine runs its cycles through an executor (by default this process's
//! threads); with the `mpi` feature, `Engine::join_mpi` hands them to the MPI executor, one rank of
//! an MPI job (`mpi`, docs/mpi.md); [`partition`] is the static split of a cycle over ranks and
//! [`costmodel`] predicts the distributed cycle time ([`dist`] holds the three).
//! CMUX RAM refresh: [`RefreshPolicy`] and [`NoiseModel`] (noise-budget refresh instead of Iyokan's
//! every-cell-every-cycle refresh; ≤ 2^-40 failures per cycle).

//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`netlist`] | the gate-level netlist IR ([`Netlist`], [`NetlistBuilder`], [`GateKind`]) |
//! | [`yosys`] | the Yosys JSON importer ([`read_yosys_json`]) |
//! | [`blueprint`] | blueprint TOML: netlist instances, built-in memories, wiring ([`Blueprint`]) |
//! | `flatten` | blueprint → one flattened graph (private) |
//! | [`circuit`] | the flattened, levelled [`Circuit`] the engine runs |
//! | [`stats`] | gate counts, depth and bootstraps per cycle ([`NetlistStats`]) |
//! | [`backend`] | the [`Backend`] trait every bit representation implements |
//! | [`plain`], [`plain_api`] | the bit-sliced plain backend and its integer-valued conveniences |
//! | [`tfhe_backend`] | the TFHE backend ([`TfheBackend`]) |
//! | [`cmux`] | CMUX memory over TFHE ([`TfheRom`], [`TfheRam`]) |
//! | [`leveled`] | select-once MUXes: which MUXes run as CMUXes ([`MuxPlan`]) |
//! | [`noise`] | the CMUX-memory noise model and RAM refresh policy |
//! | [`techmap`] | technology mapping of gates into multi-input bootstrapped cells |
//! | [`engine`] | the cycle-by-cycle evaluator ([`Engine`], [`RunOptions`]): state, a cycle's meaning, the task table, the executor interface and the local executor |
//! | [`schedule`] | the list scheduler that runs a cycle's task graph on worker threads |
//! | [`snapshot`] | engine snapshots ([`EngineSnapshot`], a [`vsp_codec::FileCodec`]) in the [`vsp_codec`] envelope (`engine::snapshot`) |
//! | [`dist`] | many processes: [`partition`], [`costmodel`], and the MPI executor (`mpi`, feature `mpi`) |
//! | [`client`] | client-side encryption and decryption of inputs and memory images |
//! | [`error`] | [`CircuitError`], wrapping the lower crates' errors |

#![forbid(unsafe_code)]

pub mod backend;
pub mod blueprint;
pub mod circuit;
pub mod client;
pub mod cmux;
pub mod dist;
pub mod engine;
pub mod error;
mod flatten;
pub mod leveled;
pub mod netlist;
pub mod noise;
pub mod plain;
pub mod plain_api;
pub mod schedule;
pub mod stats;
pub mod techmap;
pub mod tfhe_backend;
pub mod yosys;

pub use backend::{Backend, Boot, Booted, Reader, TaskKind};
pub use blueprint::{Blueprint, MemImpl, MemKind, MemorySpec, PortRef};
pub use circuit::{Circuit, Dff, ExtPort, MemBlock, Node, NodeId, Step};
pub use cmux::{TfheRam, TfheRom, WriteValue};
#[cfg(feature = "mpi")]
pub use dist::mpi;
pub use dist::{costmodel, partition};
pub use engine::snapshot;
pub use engine::{CycleStats, Engine, Item, MemState, Progress, RunOptions, RunReport, State};
pub use error::CircuitError;
pub use leveled::{LeveledParams, MuxPlan, PlanCounts};
pub use netlist::{Cell, GateKind, Netlist, NetlistBuilder, Port, Wire};
pub use noise::{NoiseModel, RefreshPolicy};
pub use partition::{Message, Partition};
pub use plain::{PlainBackend, PlainMemory};
pub use snapshot::{EngineSnapshot, SnapshotContext, SnapshotWrap};
pub use stats::NetlistStats;
pub use tfhe_backend::TfheBackend;
pub use yosys::{parse_yosys_json, read_yosys_json};
