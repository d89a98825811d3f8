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
//!
//! Output paths are checked and claimed first ([`claim`], [`SnapshotPlan::resolve`]).

pub mod mpi;
mod run;

pub(crate) use run::watched;
pub use run::{
    advance, check_snapshot_header, claim, open_request, open_snapshot, Ran, ServerRun,
    SnapshotPlan, Start, Watch,
};
