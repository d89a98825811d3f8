//! The client's steps on files, as `vsp genkey`, `genbkey`, `asm`, `cc`, `enc` and `emu` take
//! them: each output path checked and claimed first ([`claim_output`]), then the work, then the
//! file written atomically. What a command shows besides goes to the [`Watch`].

use std::path::{Path, PathBuf};

use vsp_cahp::cores::{MemSize, Memory};
use vsp_cahp::Image;

use super::program::{self, PlainRequest};
use crate::error::Result;
use crate::files::{check_output, lock_output, write_atomic, Access, OutputLock};
use crate::keys::{self, ClientKey};
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
/// when `insecure`, and warned about) written to `output`; the key and the file's size.
pub fn write_secret_key(
    params: &str,
    insecure: bool,
    output: &Path,
    watch: &mut dyn Watch,
) -> Result<(ClientKey, u64)> {
    let _lock = claim_output(output, &[])?;
    let p = keys::params_by_name(params, insecure)?;
    if keys::is_insecure(params) {
        watch.warn(&format!(
            "WARNING: parameter set {params:?} is below 128-bit security; never use it for real data"
        ));
    }
    let key = keys::generate_secret(params, &p)?;
    let size = key.save(output)?;
    Ok((key, size))
}

/// `vsp genbkey`: the evaluation key of the secret key at `key` written (compressed) to
/// `output`; the file's size.
pub fn write_eval_key(key: &Path, output: &Path, watch: &mut dyn Watch) -> Result<u64> {
    let _lock = claim_output(output, &[("secret key", key)])?;
    let key = load_client_key(key, watch)?;
    watch.step("generating the evaluation key (gate + circuit bootstrapping)");
    let size = key.save_eval_key(output);
    watch.step_done();
    size
}

/// What `vsp enc` encrypts: a program (an image, or a `.s`/`.c` source compiled on the fly) run
/// with `args`, on `memory` (cmux or mux) of `size` (default: the image's).
pub struct ProgramRequest<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub memory: &'a str,
    pub size: Option<MemSize>,
}

/// `vsp enc`: the request of `p` encrypted under the secret key at `key` and written to `output`;
/// the file's size, the memory and its size.
pub fn encrypt_program(
    key: &Path,
    p: &ProgramRequest<'_>,
    output: &Path,
    watch: &mut dyn Watch,
) -> Result<(u64, Memory, MemSize)> {
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
    Ok((written?, memory, size))
}

/// `vsp asm`: the assembly `sources` (linked in order; `runtime`: crt0 and the multiply/divide
/// helpers) assembled for `size` and written to `output`.
pub fn assemble_to(
    sources: &[PathBuf],
    runtime: bool,
    size: MemSize,
    output: &Path,
) -> Result<Image> {
    let named: Vec<(&str, &Path)> = sources.iter().map(|p| ("source", p.as_path())).collect();
    let _lock = claim_output(output, &named)?;
    let image = program::assemble_files(sources, runtime, size)?;
    write_image(&image, output)?;
    Ok(image)
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
) -> Result<Image> {
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
    Ok(image)
}

/// Writes a program image with the one atomic writer.
pub fn write_image(image: &Image, path: &Path) -> Result<()> {
    write_atomic(path, &image.to_bytes()?, Access::Public)
}
