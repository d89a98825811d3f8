//! `vsp-bench`: side-by-side speed comparisons of VSP against its peers, in one process.
//!
//! Usage: `cargo run --release -p vsp-bench -- <suite>`; each suite prints a table and ends with one
//! `name=value` line that BENCHMARKS.md quotes.

mod bfv;
mod circuit;
mod ckks;
mod common;
#[cfg(feature = "mpi")]
mod mpi;
mod ntt;
mod paper;
mod plan;
mod seed001;
mod seed002;
mod seed004;
mod tfhe;
mod vsp;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let suite = args.first().map(String::as_str).unwrap_or("");
    let rest = args.get(1..).unwrap_or(&[]);
    match suite {
        "bfv" => bfv::run(rest),
        "circuit" => circuit::run(rest),
        "ckks" => ckks::run(rest),
        "ntt" => ntt::run(rest),
        "paper" => paper::run(rest),
        "plan" => plan::run(rest),
        #[cfg(feature = "mpi")]
        "mpi" => mpi::run(rest),
        #[cfg(feature = "mpi")]
        "mpi-worker" => mpi::worker(rest),
        #[cfg(feature = "mpi")]
        "mpi-model" => mpi::model(rest),
        #[cfg(not(feature = "mpi"))]
        "mpi" => anyhow::bail!("the mpi suite needs `--features mpi` (and Open MPI installed)"),
        "tfhe" => tfhe::run(rest),
        "vsp" => vsp::run(rest),
        "seed001" => seed001::run(rest),
        "seed002" => seed002::run(rest),
        "seed004" => seed004::run(rest),
        other => {
            anyhow::bail!(
                "unknown suite {other:?}; available: ntt, tfhe, circuit, vsp, plan, paper, bfv, ckks, mpi, seed001, seed002, seed004"
            )
        }
    }
}
