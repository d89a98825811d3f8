//! What goes over the wire and into files: the envelope around every file, and the one encoding of
//! the machine (core, memory kind and size, or a user circuit) that requests, results, snapshots and
//! MPI ranks share.

pub mod envelope;
pub mod tags;
