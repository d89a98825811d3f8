//! The client's steps on files, as `vsp genkey`, `genbkey`, `asm`, `cc`, `enc` and `emu` take
//! them: each output path checked and claimed first ([`claim_output`]), then the work, then the
//! file written atomically. What a command shows besides goes to the [`Watch`].

use std::path::{Path, PathBuf};

use vsp_cahp::cores::MemSize;
use vsp_cahp::Image;

use super::program::{self, PlainRequest};
use crate::error::Result;
use crate::files::{
    check_output, lock_output, write_atomic, Access, OutputLock, What, Written, WrittenImage,
};
use crate::keys::{self, ClientKey};
use crate::processor::emu::EmuResult;
use crate::processor::packets::Decrypted;
use crate::server::Watch;
use crate::wire::envelope::{Envelope, Kind};

/// Checks `output` (regular or absent, not one of `inputs`) and claims it until the lock is
/// dropped: a second process writing the same file is refused at once.
pub fn claim_output(output: &Path, inputs: &[(&str, &Path)]) -> Result<OutputLock> {
    check_output(output, inputs)?;
    Ok(lock_output(output)?)
}

/// Loads a secret key; a key file others can read is warned about.
pub fn load_client_key(path: &Path, watch: &mut dyn Watch) -> Result<ClientKey> {
    // Loaded first: the warning is for a real key file, not a FIFO or device refused as one.
    let key = ClientKey::load(path)?;
    if let Some(w) = crate::files::exposure_warning(path) {
        watch.warn(&w);
    }
    Ok(key)
}

/// `vsp dec`: the result at `input` decrypted with the secret key at `key`.
pub fn decrypt_file(key: &Path, input: &Path, watch: &mut dyn Watch) -> Result<Decrypted> {
    let key = load_client_key(key, watch)?;
    crate::decrypt_result(&key, &Envelope::read(input, Kind::Result)?)
}

/// `vsp genkey`: a new secret key of the parameter set `params` (one below 128-bit security only
/// when `insecure`, and warned about) written to `output`.
pub fn write_secret_key(
    params: &str,
    insecure: bool,
    output: &Path,
    watch: &mut dyn Watch,
) -> Result<Written> {
    let _lock = claim_output(output, &[])?;
    let p = keys::params_by_name(params, insecure)?;
    if keys::is_insecure(params) {
        watch.warn(&format!(
            "WARNING: parameter set {params:?} is below 128-bit security; never use it for real data"
        ));
    }
    let key = keys::generate_secret(params, &p)?;
    let bytes = key.save(output)?;
    let (params, key_id) = (params.to_string(), key.key_id);
    let what = What::SecretKey { params, key_id };
    Ok(Written::new(output, bytes, what))
}

/// `vsp genbkey`: the evaluation key of the secret key at `key` written (compressed) to
/// `output`, and the seconds that took (loading the secret key included).
pub fn write_eval_key(key: &Path, output: &Path, watch: &mut dyn Watch) -> Result<Written> {
    let t = std::time::Instant::now();
    let _lock = claim_output(output, &[("secret key", key)])?;
    let key = load_client_key(key, watch)?;
    watch.step("generating the evaluation key (gate + circuit bootstrapping)");
    let bytes = key.save_eval_key(output);
    watch.step_done();
    let seconds = t.elapsed().as_secs_f64();
    Ok(Written::new(output, bytes?, What::EvalKey { seconds }))
}

/// What `vsp enc` encrypts: a program (an image, or a `.s`/`.c` source compiled on the fly) run
/// with `args`, on `memory` (cmux or mux) of `size` (default: the image's).
pub struct ProgramRequest<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub memory: &'a str,
    pub size: Option<MemSize>,
}

/// `vsp enc`: the request of `p` encrypted under the secret key at `key` and written to `output`
/// (the note says its memory and size).
pub fn encrypt_program(
    key: &Path,
    p: &ProgramRequest<'_>,
    output: &Path,
    watch: &mut dyn Watch,
) -> Result<Written> {
    let _lock = claim_output(output, &[("secret key", key), ("program", p.program)])?;
    let memory = program::parse_memory(p.memory)?;
    let key = load_client_key(key, watch)?;
    let (image, size) = program::load_program_sized(p.program, false, p.size)?;
    let plain = PlainRequest::new_sized(&image, p.args, memory, size)?;
    watch.step("encrypting ROM and RAM");
    let written = plain
        .encrypt(&key)
        .and_then(|r| crate::wire::envelope::save(&r, output, key.sk.params()));
    watch.step_done();
    Ok(Written::new(
        output,
        written?,
        What::Request { memory, size },
    ))
}

/// `vsp emu`: `p` run in plain on the gate-level `core` (pearl or ruby) for at most `max_cycles`
/// cycles and cross-checked with the ISA simulator ([`crate::emulate`]); with `trace`, the ISA
/// trace first, a line at a time to [`Watch::say`]. The result and the memory size it ran with.
pub fn emulate_file(
    p: &ProgramRequest<'_>,
    core: &str,
    max_cycles: u64,
    trace: bool,
    watch: &mut dyn Watch,
) -> Result<(EmuResult, MemSize)> {
    let core = program::parse_core(core)?;
    let memory = program::parse_memory(p.memory)?;
    let (image, size) = program::load_program_sized(p.program, false, p.size)?;
    if trace {
        for line in program::trace_lines(&image, p.args, size, max_cycles)? {
            watch.say(&line);
        }
    }
    let r = crate::emulate(&image, p.args, core, memory, size, max_cycles)?;
    Ok((r, size))
}

/// `vsp asm`: the assembly `sources` (linked in order; `runtime`: crt0 and the multiply/divide
/// helpers) assembled for `size` and written to `output` (the note counts its symbols).
pub fn assemble_to(
    sources: &[PathBuf],
    runtime: bool,
    size: MemSize,
    output: &Path,
) -> Result<WrittenImage> {
    let named: Vec<(&str, &Path)> = sources.iter().map(|p| ("source", p.as_path())).collect();
    let _lock = claim_output(output, &named)?;
    let image = program::assemble_files(sources, runtime, size)?;
    write_image(&image, output)?;
    Ok(WrittenImage::new(output, image, true))
}

/// `vsp cc`: the C `sources` compiled with `opts` for `size` and written to `output`, the
/// generated assembly to `emit_asm` as well (before the size check, so that a program that does
/// not fit can be looked at).
pub fn compile_to(
    sources: &[PathBuf],
    opts: &vsp_cc::CcOptions,
    size: MemSize,
    output: &Path,
    emit_asm: Option<&Path>,
) -> Result<WrittenImage> {
    let mut inputs: Vec<(&str, &Path)> = sources.iter().map(|s| ("source", s.as_path())).collect();
    let _lock = claim_output(output, &inputs)?;
    inputs.push(("output image", output));
    let _asm_lock = emit_asm.map(|p| claim_output(p, &inputs)).transpose()?;
    let asm = program::compile_c_asm(sources, opts)?;
    if let Some(p) = emit_asm {
        write_atomic(p, asm.as_bytes(), Access::Public)?;
    }
    let image = program::assemble_c(&asm, sources, opts, size)?;
    write_image(&image, output)?;
    Ok(WrittenImage::new(output, image, false))
}

/// Writes a program image with the one atomic writer.
pub fn write_image(image: &Image, path: &Path) -> Result<()> {
    write_atomic(path, &image.to_bytes()?, Access::Public)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what a command would show.
    #[derive(Default, Debug)]
    struct Said(Vec<String>);

    impl Watch for Said {
        fn say(&mut self, line: &str) {
            self.0.push(line.to_string());
        }
    }

    fn emu(memory: &str, core: &str, trace: bool) -> Result<(EmuResult, Said)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let program = dir.join("../cahp/asm/programs/fib.s");
        let args = ["5".to_string()];
        let size = MemSize::new(1024, 512).expect("a size");
        let p = ProgramRequest {
            program: &program,
            args: &args,
            memory,
            size: Some(size),
        };
        let mut said = Said::default();
        let (r, ran) = emulate_file(&p, core, 10_000, trace, &mut said)?;
        assert_eq!(ran, size, "the size asked for");
        Ok((r, said))
    }

    /// `vsp emu` as one call: the program runs to its halt, and the ISA trace goes to `say`
    /// only when asked for.
    #[test]
    fn emulate_file_runs_a_source_and_traces_on_request() {
        let (r, said) = emu("cmux", "pearl", true).expect("runs");
        assert!(r.finished && r.result == 5, "fib(5): {r:?}");
        assert_eq!(r.agrees_with_isa, Some(true));
        assert!(
            said.0.len() > 2,
            "a trace line per instruction: {:?}",
            said.0
        );
        assert!(said.0.iter().any(|l| l.contains("add2")), "{:?}", said.0);
        let (r, said) = emu("mux", "ruby", false).expect("runs");
        assert!(r.finished && r.result == 5 && said.0.is_empty(), "{r:?}");
        let e = emu("cmux", "opal", false).expect_err("no such core");
        assert!(e.to_string().contains("opal"), "{e}");
        let e = emu("ram", "pearl", false).expect_err("no such memory");
        assert!(e.to_string().contains("ram"), "{e}");
    }
}
