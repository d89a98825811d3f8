//! The CAHPv3 processor as a machine: programs and their initial memories ([`program`]), the
//! encrypted request and result ([`packets`]), the core with its memories ([`machine`]), a run's progress and snapshots ([`run`]), the plain
//! gate-level run ([`emu`]) and the client's commands on files ([`client`]).

pub mod client;
pub mod emu;
pub mod machine;
pub mod packets;
pub mod program;
pub mod run;
