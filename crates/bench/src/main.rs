//! `vsp-bench`: side-by-side speed comparisons of VSP against its peers, in one process.
//!
//! Usage: `cargo run --release -p vsp-bench -- <suite>`; each suite prints a table and ends with one
//! `name=value` line that BENCHMARKS.md quotes.

mod bfv;
mod circuit;
mod ckks;
mod ntt;
mod tfhe;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let suite = args.first().map(String::as_str).unwrap_or("");
    let _rest = args.get(1..).unwrap_or(&[]);
    match suite {
        "bfv" => bfv::run(_rest),
        "circuit" => circuit::run(_rest),
        "ckks" => ckks::run(_rest),
        "ntt" => ntt::run(_rest),
        "tfhe" => tfhe::run(_rest),
        // Each suite lives in its own module (ntt.rs, tfhe.rs, circuit.rs, vsp.rs, bfv.rs, ckks.rs).
        other => anyhow::bail!("unknown suite {other:?}; available: (none yet)"),
    }
}
