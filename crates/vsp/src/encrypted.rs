//! The encrypted flow: `vsp enc` (Alice), `vsp run` / `vsp resume` (Bob), `vsp dec` (Alice).
//!
//! * A request holds the program's ROM packed into level-1 TRLWEs (vertical packing) and its initial
//!   RAM — static data plus argv — one TRLWE per bit, exactly the CMUX-memory layout of vsp-circuit.
//!   Which core runs it is Bob's choice; the request does not depend on it.
//! * `run` needs only the evaluation key: it builds "core + CMUX ROM + CMUX RAM" and evaluates the
//!   requested number of cycles on all threads (no reset cycle: the cores power up in reset state). The server never sees the
//!   finish flag, so it runs exactly `--cycles` cycles (the flag is sticky and `js 0` loops, so extra
//!   cycles are harmless — `vsp emu` says how many are enough).
//! * Every `--snapshot-every` cycles (and at the end) the whole machine state is written atomically to
//!   the snapshot file; `resume` continues from it exactly where it stopped.
//! * A result holds the encrypted finish flag, x0–x15 and the RAM; `dec` needs only the secret key.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use vsp_cahp::cores::{self, Core, Memory};
use vsp_cahp::Image;
use vsp_circuit::{client, Engine, Progress, RunOptions, TfheBackend, TfheRam, TfheRom};
use vsp_tfhe::{Params, Tlwe};
use zeroize::Zeroizing;

use crate::container::{Envelope, KeyId, Kind, Reader};
use crate::keys::{ClientKey, ServerKeys};
use crate::program;
use crate::progress::Bar;
use vsp_codec::Writer;

/// Encrypts a program and its arguments into a request.
pub fn encrypt_request(key: &ClientKey, image: &Image, args: &[String]) -> Result<Envelope> {
    let ram = program::initial_ram(image, args)?;
    let (rom_w, ram_w) = program::memory_words(image, &ram)?;
    let rom = client::encrypt_rom(
        &key.sk,
        cores::ROM_ADDR_WIDTH,
        cores::ROM_DATA_WIDTH,
        &rom_w,
    )?;
    let ram = client::encrypt_ram(
        &key.sk,
        cores::RAM_ADDR_WIDTH,
        cores::RAM_DATA_WIDTH,
        &ram_w,
    )?;
    let mut w = Writer::default();
    w.blob(&rom.to_bytes());
    w.blob(&ram.to_bytes());
    Ok(Envelope {
        kind: Kind::Request,
        params: key.params_name.clone(),
        key_id: key.key_id,
        body: Zeroizing::new(w.into_bytes()),
    })
}

/// Checks that a file made for `file_key`/`file_params` may be used with keys `key`/`params`.
pub fn check_same_key(
    what: &str,
    file_key: KeyId,
    file_params: &str,
    key: KeyId,
    params: &str,
) -> Result<()> {
    if file_params != params {
        bail!("{what} was made with parameter set {file_params:?}, the key uses {params:?}");
    }
    if file_key != key {
        bail!("{what} was encrypted under another key (key id {file_key}, this key is {key})");
    }
    Ok(())
}

/// A server-side run in progress: the engine plus what a snapshot must remember.
pub struct Run {
    pub engine: Engine<TfheBackend>,
    pub core: Core,
    pub key_id: KeyId,
    pub params_name: String,
}

impl Run {
    /// Starts a run of `request` on `core`: loads the memories. There is no reset cycle — the cores
    /// power up in their reset state (all flip-flops 0, checked by `tests/power_up.rs`).
    pub fn start(
        keys: &Arc<ServerKeys>,
        request: &Envelope,
        core: Core,
        threads: Option<usize>,
    ) -> Result<Run> {
        check_same_key(
            "the request",
            request.key_id,
            &request.params,
            keys.key_id,
            &keys.params_name,
        )?;
        let (rom, ram) = parse_request(&request.body, keys.ek.params())?;
        let mut engine = Self::engine(keys, core, threads)?;
        engine.set_rom(cores::ROM, rom)?;
        engine.set_ram(cores::RAM, ram)?;
        Ok(Run {
            engine,
            core,
            key_id: keys.key_id,
            params_name: keys.params_name.clone(),
        })
    }

    fn engine(
        keys: &Arc<ServerKeys>,
        core: Core,
        threads: Option<usize>,
    ) -> Result<Engine<TfheBackend>> {
        let backend = TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
        let mut engine = Engine::new(backend, program::core_circuit(core, Memory::Cmux)?);
        if let Some(t) = threads {
            engine.set_threads(t.max(1));
        }
        Ok(engine)
    }

    /// Runs `cycles` more cycles, writing a snapshot every `every` cycles and at the end.
    pub fn advance(
        &mut self,
        cycles: u64,
        every: Option<u64>,
        snapshot: Option<&Path>,
        bar: &Bar,
    ) -> Result<()> {
        let start_cycle = self.engine.cycle();
        let target = target_cycle(start_cycle, cycles)?;
        let chunk = every
            .filter(|&k| k > 0 && snapshot.is_some())
            .unwrap_or(cycles.max(1));
        let t0 = Instant::now();
        while self.engine.cycle() < target {
            let n = chunk.min(target - self.engine.cycle());
            let opts = RunOptions {
                max_cycles: n,
                ..Default::default()
            };
            let done_before = self.engine.cycle() - start_cycle;
            self.engine.run(&opts, &mut |p: &Progress| {
                bar.cycle(
                    done_before + p.cycles_done,
                    cycles,
                    p,
                    t0.elapsed().as_secs_f64(),
                );
            })?;
            if let Some(path) = snapshot {
                self.save(path)?;
            }
        }
        Ok(())
    }

    /// Writes the whole machine state (core, cycle, flip-flops, memories) atomically.
    pub fn save(&self, path: &Path) -> Result<u64> {
        let mut w = Writer::default();
        w.u8(match self.core {
            Core::Pearl => 0,
            Core::Ruby => 1,
        });
        w.blob(&self.engine.snapshot_bytes());
        Envelope {
            kind: Kind::Snapshot,
            params: self.params_name.clone(),
            key_id: self.key_id,
            body: Zeroizing::new(w.into_bytes()),
        }
        .write(path)
    }

    /// Reloads a snapshot written by [`Run::save`].
    pub fn resume(keys: &Arc<ServerKeys>, path: &Path, threads: Option<usize>) -> Result<Run> {
        let env = Envelope::read(path, Kind::Snapshot)?;
        check_same_key(
            "the snapshot",
            env.key_id,
            &env.params,
            keys.key_id,
            &keys.params_name,
        )?;
        let (core, state) = parse_snapshot(&env.body)?;
        let mut engine = Self::engine(keys, core, threads)?;
        engine.restore_snapshot(state).context("corrupt snapshot")?;
        Ok(Run {
            engine,
            core,
            key_id: env.key_id,
            params_name: env.params,
        })
    }

    /// The encrypted result: finish flag, registers, RAM.
    pub fn result(&self) -> Result<Envelope> {
        let params = self.engine.backend().params();
        let mut w = Writer::default();
        w.u64(self.engine.cycle());
        for name in std::iter::once(cores::FINISH).chain(cores::REGS) {
            let bits = self.engine.output(name)?;
            w.u32(bits.len() as u32);
            for b in &bits {
                w.blob(&b.to_bytes(params));
            }
        }
        let ram = match self.engine.memory(cores::RAM)? {
            vsp_circuit::MemState::Ram(ram) => ram,
            _ => bail!("the {} blueprint has no CMUX RAM", self.core),
        };
        w.blob(&ram.to_bytes());
        Ok(Envelope {
            kind: Kind::Result,
            params: self.params_name.clone(),
            key_id: self.key_id,
            body: Zeroizing::new(w.into_bytes()),
        })
    }
}

/// A decrypted result.
#[derive(Debug, serde::Serialize)]
pub struct Decrypted {
    pub cycles: u64,
    pub finished: bool,
    pub regs: Vec<u16>,
    /// main's return value (x8 = a0).
    pub result: u16,
    pub ram: Vec<u8>,
}

/// Decrypts a result with the secret key.
pub fn decrypt_result(key: &ClientKey, env: &Envelope) -> Result<Decrypted> {
    check_same_key(
        "the result",
        env.key_id,
        &env.params,
        key.key_id,
        &key.params_name,
    )?;
    let params: &Params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let cycles = u64::from_le_bytes(r.array()?);
    let mut values = Vec::with_capacity(17);
    // The shape must be the core's: a 1-bit finish flag, 16-bit registers, the core's RAM.
    let widths = std::iter::once((cores::FINISH, 1)).chain(cores::REGS.map(|r| (r, REG_BITS)));
    for (name, want) in widths {
        let n = u32::from_le_bytes(r.array()?) as usize;
        if n != want {
            bail!("corrupt result: output {name} has {n} bits, the core's has {want}");
        }
        let bits = (0..n)
            .map(|_| {
                Tlwe::<u32>::from_bytes(r.blob()?, params)
                    .map_err(|e| anyhow::anyhow!("corrupt result: {e}"))
            })
            .collect::<Result<Vec<_>>>()?;
        values.push(client::decrypt_value(&key.sk, &bits)?);
    }
    let ram_bytes = r.blob()?;
    check_ram_shape(ram_bytes)?;
    let ram = TfheRam::from_bytes(ram_bytes, params).context("corrupt result: RAM")?;
    r.end()?;
    // Decoded with the announced shape: 2^a noise bounds and 2^a·w cells.
    let words = 1usize << cores::RAM_ADDR_WIDTH;
    if ram.noise_bounds().len() != words || ram.cells().len() != words * cores::RAM_DATA_WIDTH {
        bail!("corrupt result: the RAM's shape is not the core's");
    }
    let words = client::decrypt_ram(&key.sk, &ram)?;
    Ok(Decrypted {
        cycles,
        finished: values[0] == 1,
        regs: values[1..].iter().map(|&v| v as u16).collect(),
        result: values[1 + 8] as u16,
        ram: cores::ram_bytes(&words),
    })
}

/// The ROM and RAM of a request's body.
pub fn parse_request(body: &[u8], params: &Params) -> Result<(TfheRom, TfheRam)> {
    let mut r = Reader::new(body);
    let rom = TfheRom::from_bytes(r.blob()?, params).context("corrupt request: ROM")?;
    let ram = TfheRam::from_bytes(r.blob()?, params).context("corrupt request: RAM")?;
    r.end()?;
    Ok((rom, ram))
}

/// The core and the engine state of a snapshot's body.
pub fn parse_snapshot(body: &[u8]) -> Result<(Core, &[u8])> {
    let mut r = Reader::new(body);
    let core = match r.take(1)?[0] {
        0 => Core::Pearl,
        1 => Core::Ruby,
        other => bail!("corrupt snapshot: unknown core {other}"),
    };
    let state = r.blob()?;
    r.end()?;
    Ok((core, state))
}

/// Width of a CAHPv3 register.
const REG_BITS: usize = 16;

/// Checks the shape a serialized RAM announces (address width u64 ‖ data width u64 ‖ …) against the
/// core's before anything is decoded.
fn check_ram_shape(bytes: &[u8]) -> Result<()> {
    let mut r = Reader::new(bytes);
    let a = u64::from_le_bytes(r.array()?);
    let w = u64::from_le_bytes(r.array()?);
    let (ca, cw) = (cores::RAM_ADDR_WIDTH as u64, cores::RAM_DATA_WIDTH as u64);
    if (a, w) != (ca, cw) {
        bail!(
            "corrupt result: the RAM is 2^{a} words of {w} bits, the core's is 2^{ca} words of {cw} bits"
        );
    }
    Ok(())
}

/// The cycle a run of `cycles` more cycles from `start` ends at, refusing a counter that would wrap
/// (a snapshot's counter is not trusted to be small).
fn target_cycle(start: u64, cycles: u64) -> Result<u64> {
    match start.checked_add(cycles) {
        Some(t) => Ok(t),
        None => bail!(
            "cannot run {cycles} more cycles from cycle {start}: the cycle counter would overflow"
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_cycle_counter_never_wraps() {
        assert_eq!(target_cycle(5, 10).unwrap(), 15);
        assert_eq!(target_cycle(0, u64::MAX).unwrap(), u64::MAX);
        let e = target_cycle(u64::MAX, 1).unwrap_err().to_string();
        assert!(e.contains("would overflow"), "{e}");
        assert!(target_cycle(1 << 62, u64::MAX).is_err());
    }

    /// A result envelope with outputs of `bits[k]` bits (finish flag first) and a 2^a × w RAM.
    pub(crate) fn result_with(
        key: &ClientKey,
        bits: [usize; 17],
        (a, w): (usize, usize),
    ) -> Envelope {
        let p = key.sk.params();
        let mut out = Writer::default();
        out.u64(7);
        for n in bits {
            out.u32(n as u32);
            for _ in 0..n {
                out.blob(&key.sk.encrypt_bit(false).to_bytes(p));
            }
        }
        let ram = client::encrypt_ram(&key.sk, a, w, &[]).unwrap();
        out.blob(&ram.to_bytes());
        Envelope {
            kind: Kind::Result,
            params: key.params_name.clone(),
            key_id: key.key_id,
            body: Zeroizing::new(out.into_bytes()),
        }
    }

    #[test]
    fn dec_checks_the_results_shape_against_the_core() {
        let key = crate::keys::generate_secret("default", &Params::default_128()).unwrap();
        let core_ram = (cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH);
        let mut good = [16; 17];
        good[0] = 1;
        let d = decrypt_result(&key, &result_with(&key, good, core_ram)).unwrap();
        assert_eq!(
            (d.cycles, d.finished, d.ram.len()),
            (7, false, cores::RAM_BYTES)
        );
        let mut no_flag = good;
        no_flag[0] = 0;
        let mut wide_reg = good;
        wide_reg[3] = 17;
        for (bits, ram, want) in [
            (no_flag, core_ram, "finflag has 0 bits, the core's has 1"),
            (wide_reg, core_ram, "has 17 bits, the core's has 16"),
            (good, (1, 1), "the RAM is 2^1 words of 1 bits"),
            (good, (8, 8), "the RAM is 2^8 words of 8 bits"),
        ] {
            let e = decrypt_result(&key, &result_with(&key, bits, ram))
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
