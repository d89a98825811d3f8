//! The server's side of a run, as the `vsp` commands and the job server play it: open a request or
//! a snapshot under the evaluation key, run it with progress and snapshots, write the result — on
//! one process or as one rank of an MPI job ([`mpi`]), the root/follower choreography written once
//! here.
//!
//! | step | processor ([`crate::Machine`]) | user circuit ([`crate::design::CircuitMachine`]) |
//! |---|---|---|
//! | open a request | [`open_request`] | [`crate::design::CircuitMachine::open_request`] |
//! | open a snapshot | [`open_snapshot`] | [`crate::design::CircuitMachine::open_snapshot`] |
//! | run and write | [`advance`] | [`crate::design::CircuitMachine::exec`] |
//! | all of it, outputs claimed first | [`ServerRun::run_processor`] | [`ServerRun::run_circuit`] |
//!
//! Output paths are checked and claimed first ([`claim`], [`ServerRun::claim`],
//! [`SnapshotPlan::resolve`]). Both runs go through one watched loop (`watched`): the
//! [`Watch`] is told the start, every cycle's progress and the end.

pub mod mpi;
mod run;

pub(crate) use run::watched;
pub use run::{
    advance, check_snapshot_header, claim, open_request, open_snapshot, parse_threads,
    read_request, Ran, ServerRun, SnapshotPlan, Start, Watch, MAX_THREADS,
};
