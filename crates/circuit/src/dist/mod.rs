//! Running one engine's cycles over many processes: the static [`partition`] of a cycle's task table
//! over ranks, the [`costmodel`] that predicts a distributed cycle from it, and (feature `mpi`) the
//! MPI executor `mpi` that runs it over Open MPI.
//!
//! This module is built on the engine (its task table, its cycle slots, its [`Executor`] trait) and
//! plugs into it from outside; the engine does not import it. It is not a general cluster scheduler:
//! the partition is static per circuit and MUX plan; within it each rank runs its tasks as data flows.
//!
//! [`Executor`]: crate::engine

pub mod costmodel;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod partition;
