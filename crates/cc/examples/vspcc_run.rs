//! Compiles a C file with vsp-cc, runs it on the vsp-cahp ISA simulator and prints the result, the
//! ROM size and the number of instructions executed:
//! `cargo run -p vsp-cc --example vspcc_run -- prog.c [args…]` (add `--listing` first for a listing).

use vsp_cahp::{listing, MemConfig, Simulator};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.first().is_some_and(|a| a == "--listing");
    if show {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("usage: vspcc_run [--listing] <file.c> [args…]");
        std::process::exit(2);
    }
    let path = args.remove(0);
    let run = || -> Result<(), Box<dyn std::error::Error>> {
        let (_, image) =
            vsp_cc::compile_c_to_image(std::path::Path::new(&path), &vsp_cc::CcOptions::default())?;
        if show {
            print!("{}", listing(&image));
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut sim = Simulator::from_image(&image, &argv, MemConfig::default())?;
        let stats = sim.run(10_000_000)?;
        println!(
            "result {} | halted {} | ROM {} B | RAM {} B | {} instructions",
            sim.result(),
            stats.halted,
            image.rom.len(),
            image.ram.len(),
            stats.steps
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
