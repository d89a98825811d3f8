//! `vsp`: the Virtual Secure Platform command line — kvsp rebuilt (VSP paper, seed 000).
//!
//! Alice (the client) holds the secret key: `genkey`, `genbkey`, `asm`/`cc`, `enc`, `dec`, `emu`.
//! Bob (the server) holds only the evaluation key: `run`, `resume`. `demo` does all of it on one
//! machine. Every file is a checked, versioned envelope ([`container`]).

mod container;
mod program;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "vsp", version, about = "Virtual Secure Platform: run programs on an encrypted CAHPv3 processor")]
struct Cli {
    /// Print only results (no progress bars, no sizes).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Assemble a CAHPv3 program into a program image.
    Asm {
        /// Assembly source files (linked in order).
        #[arg(required = true)]
        sources: Vec<PathBuf>,
        /// Output image.
        #[arg(short, long)]
        output: PathBuf,
        /// Link crt0 (calls `main`, halts) and the multiply/divide helpers.
        #[arg(long)]
        runtime: bool,
        /// Print a listing of the assembled ROM.
        #[arg(long)]
        listing: bool,
    },
    /// Compile a C program (clang + vsp-cc) into a program image.
    Cc {
        source: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// Optimisation level passed to clang (e.g. -Oz, -O2).
        #[arg(short = 'O', default_value = "z")]
        opt: String,
        /// Write the generated assembly here as well.
        #[arg(long)]
        emit_asm: Option<PathBuf>,
    },
    /// Run a program in plain on the gate-level core until it halts (the oracle for `vsp run`).
    Emu {
        /// Program image (or a .s / .c source, compiled on the fly).
        program: PathBuf,
        /// Arguments passed to main (argv[1..]).
        args: Vec<String>,
        #[arg(long, default_value = "ruby")]
        core: String,
        /// Print every retired instruction (ISA simulator trace with disassembly).
        #[arg(long)]
        trace: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
        /// Give up after this many cycles.
        #[arg(long, default_value_t = program::DEFAULT_MAX_CYCLES)]
        max_cycles: u64,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Asm { sources, output, runtime, listing } => {
            let texts = sources
                .iter()
                .map(|p| std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display())))
                .collect::<Result<Vec<_>>>()?;
            let names: Vec<String> = sources.iter().map(|p| p.display().to_string()).collect();
            let srcs: Vec<vsp_cahp::Source> =
                names.iter().zip(&texts).map(|(name, text)| vsp_cahp::Source { name, text }).collect();
            let opts = vsp_cahp::AsmOptions { runtime, ..Default::default() };
            let image = vsp_cahp::assemble_sources(&srcs, &opts).map_err(|e| anyhow::anyhow!("{e}"))?;
            image.write_atomic(&output)?;
            if listing {
                print!("{}", vsp_cahp::listing(&image));
            }
            if !cli.quiet {
                eprintln!(
                    "wrote {} (ROM {} B, RAM data {} B, {} symbols)",
                    output.display(),
                    image.rom.len(),
                    image.ram.len(),
                    image.symbols.len()
                );
            }
        }
        Command::Cc { source, output, opt, emit_asm } => {
            let opts = vsp_cc::CcOptions { opt: format!("-O{opt}"), ..Default::default() };
            let asm = vsp_cc::compile_c(&source, &opts).map_err(|e| anyhow::anyhow!("{e}"))?;
            if let Some(p) = emit_asm {
                container::write_atomic(&p, asm.as_bytes())?;
            }
            let name = format!("{} (compiled)", source.display());
            let image = vsp_cahp::assemble_with_runtime(&asm, &name).map_err(|e| anyhow::anyhow!("{e}"))?;
            image.write_atomic(&output)?;
            if !cli.quiet {
                eprintln!("wrote {} (ROM {} B, RAM data {} B)", output.display(), image.rom.len(), image.ram.len());
            }
        }
        Command::Emu { program, args, core, trace, json, max_cycles } => {
            let core = program::parse_core(&core)?;
            let image = program::load_program(&program, false)?;
            if trace {
                program::print_trace(&image, &args, max_cycles)?;
            }
            let r = program::emulate(&image, &args, core, max_cycles)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!("core:       {}", r.core);
                println!("finished:   {}", if r.finished { "yes" } else { "no" });
                println!("cycles:     {}   (pass --cycles {} to `vsp run`)", r.cycles, r.cycles);
                println!("result a0:  {} (0x{:04x})", r.result, r.result);
                println!("ISA check:  {} ({} instructions retired)", if r.agrees_with_isa { "agrees" } else { "DISAGREES" }, r.instructions);
                for (i, v) in r.regs.iter().enumerate() {
                    print!("x{i:<2}={v:<6}{}", if i % 8 == 7 { "\n" } else { " " });
                }
            }
            if !r.finished {
                anyhow::bail!("the program did not halt within {max_cycles} cycles");
            }
        }
    }
    Ok(())
}
