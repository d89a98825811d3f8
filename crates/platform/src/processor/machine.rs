//! The machine: a core (Pearl or Ruby) wired to its ROM and RAM (CMUX or MUX memory), on any
//! backend of the engine — plain for `emu` and the tests, TFHE for the server's run.
//!
//! * [`core_circuit`] is the one place the "core + ROM + RAM" circuit is built.
//! * [`Machine::run`] runs cycles, reporting progress to a callback (no UI here) and writing a
//!   snapshot every `every` cycles and at the end when asked; [`Machine::resume`] continues from one
//!   exactly where it stopped. There is no reset cycle: the cores power up in their reset state (all
//!   flip-flops 0, checked by `tests/power_up.rs`), and a reset would cost a whole encrypted cycle.
//!   The server never sees the finish flag, so it runs exactly the cycles asked (the flag is sticky
//!   and `js 0` loops, so extra cycles are harmless — [`emulate`](crate::emulate) says how many are enough).
//! * A snapshot is an envelope (kind snapshot, the key's id and parameter set) around a byte naming
//!   core, memory and memory size and the engine's own snapshot (cycle, flip-flops, memories). The
//!   engine's run writes them ([`vsp_circuit::RunOptions::snapshot_wrap`]): one periodic-snapshot
//!   mechanism for the engine, the machines and `vsp circuit`.
//! * A machine has 512-byte (the default) or 1 KiB ROM and RAM ([`MemSize`]): a request, a snapshot
//!   and a result name their size, and a run builds the circuit of that size.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use vsp_cahp::cores::{self, Core, MemSize, Memory};
use vsp_circuit::{
    Backend, Blueprint, Circuit, CircuitError, Engine, MemState, PlainBackend, RunOptions,
    SnapshotWrap, TfheBackend,
};

use super::run::{
    read_snapshot, run_engine, save_engine, snapshot_wrap, target_cycle, RunProgress, Snapshots,
    Stamp,
};
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ServerKeys;
use crate::processor::packets::{EncryptedMemories, EncryptedRam, EncryptedResult, Request};
use crate::processor::program::PlainRequest;
use crate::wire::envelope::{Envelope, KeyId};
use crate::wire::tags::MachineTag;

/// Options of [`core_circuit_with`]: the memories' size, a replacement core netlist and blueprint
/// lines appended to `[connect]` (the co-verification adds debug outputs this way).
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreBuild<'a> {
    /// 512-byte (the default) or 1 KiB ROM and RAM.
    pub size: MemSize,
    /// Yosys JSON to use as the core instead of the shipped netlist.
    pub netlist: Option<&'a str>,
    /// Lines appended to the blueprint's `[connect]` table.
    pub connect: &'a str,
}

/// The flattened circuit "core + ROM + RAM" of `core` with `memory`.
pub fn core_circuit(core: Core, memory: Memory) -> Result<Arc<Circuit>> {
    core_circuit_with(core, memory, CoreBuild::default())
}

/// [`core_circuit`] with a replacement netlist and extra connections.
pub fn core_circuit_with(core: Core, memory: Memory, build: CoreBuild<'_>) -> Result<Arc<Circuit>> {
    let mut text = core.blueprint_sized(memory, build.size).to_string();
    text.push_str(build.connect);
    let bp = Blueprint::from_str_with_resolver(&text, |p| match (build.netlist, p) {
        (Some(n), p) if p == core.netlist_path_sized(build.size) => Ok(n.to_string()),
        _ => cores::resolve(p).map(str::to_string).ok_or_else(|| {
            CircuitError::Blueprint(format!("shipped blueprint names unknown file {p}"))
        }),
    })
    .context(|| format!("cannot load the {core} blueprint"))?;
    Ok(Arc::new(
        Circuit::compile(&bp).context(|| format!("cannot build the {core} circuit"))?,
    ))
}

/// A core with its memories on backend `B`.
pub struct Machine<B: Backend> {
    engine: Engine<B>,
    core: Core,
    memory: Memory,
    size: MemSize,
    stamp: Option<Stamp>,
}

impl<B: Backend> Machine<B> {
    /// A machine of `core` with `memory` of `size` on `backend`; memories empty, flip-flops at
    /// power-up.
    pub fn new(backend: B, core: Core, memory: Memory, size: MemSize) -> Result<Machine<B>> {
        let build = CoreBuild {
            size,
            ..CoreBuild::default()
        };
        Ok(Machine {
            engine: Engine::new(backend, core_circuit_with(core, memory, build)?),
            core,
            memory,
            size,
            stamp: None,
        })
    }

    pub fn core(&self) -> Core {
        self.core
    }
    pub fn memory(&self) -> Memory {
        self.memory
    }
    /// The size of ROM and RAM.
    pub fn size(&self) -> MemSize {
        self.size
    }
    /// Cycles run since power-up.
    pub fn cycle(&self) -> u64 {
        self.engine.cycle()
    }
    pub fn engine(&self) -> &Engine<B> {
        &self.engine
    }
    pub fn engine_mut(&mut self) -> &mut Engine<B> {
        &mut self.engine
    }
    /// Worker threads (`None`: all cores).
    pub fn set_threads(&mut self, threads: Option<usize>) {
        if let Some(t) = threads {
            self.engine.set_threads(t.max(1));
        }
    }

    /// Runs `cycles` more cycles; with `snapshots`, writes one every `every` cycles and at the end.
    pub fn run(
        &mut self,
        cycles: u64,
        snapshots: Option<&Snapshots>,
        progress: &mut dyn FnMut(&RunProgress<'_>),
    ) -> Result<()> {
        target_cycle(self.engine.cycle(), cycles)?;
        let wrap = self.snapshot_wrap();
        run_engine(&mut self.engine, cycles, snapshots, wrap, progress)
    }

    /// Writes the whole machine state (core, memory, cycle, flip-flops, memories) atomically; returns
    /// the file's size.
    pub fn save(&self, path: &Path) -> Result<u64> {
        save_engine(&self.engine, path, &self.snapshot_wrap())
    }

    /// How this machine's snapshots are written: the engine's state after the machine's tag, in the
    /// envelope stamped with the key (a plain machine's with no key).
    fn snapshot_wrap(&self) -> SnapshotWrap {
        let stamp = self.stamp.clone().unwrap_or(Stamp {
            params_name: "plain".into(),
            key_id: KeyId([0; 16]),
        });
        snapshot_wrap(stamp, MachineTag::Core(self.core, self.memory, self.size))
    }
}

impl Machine<PlainBackend> {
    /// A plain machine loaded with `request` (no reset cycle, as on the server).
    pub fn plain(core: Core, request: &PlainRequest) -> Result<Machine<PlainBackend>> {
        let mut m = Machine::new(PlainBackend, core, request.memory, request.size)?;
        m.engine.load_memory_words(cores::ROM, &request.rom)?;
        m.engine.load_memory_words(cores::RAM, &request.ram)?;
        Ok(m)
    }

    /// Runs until the finish flag rises (or `max_cycles`); returns whether it rose.
    pub fn run_until_finished(&mut self, max_cycles: u64) -> Result<(u64, bool)> {
        let opts = RunOptions {
            max_cycles,
            stop_when: Some(cores::FINISH.to_string()),
            ..Default::default()
        };
        let report = self.engine.run(&opts, &mut |_| {})?;
        Ok((report.cycles, report.stopped))
    }

    /// x0..x15.
    pub fn regs(&self) -> Result<Vec<u16>> {
        Ok(cores::REGS
            .iter()
            .map(|r| self.engine.output_value(r, 0).map(|v| v as u16))
            .collect::<Result<Vec<u16>, _>>()?)
    }

    /// The finish flag.
    pub fn finished(&self) -> Result<bool> {
        Ok(self.engine.output_value(cores::FINISH, 0)? == 1)
    }

    /// The RAM's bytes.
    pub fn ram_bytes(&self) -> Result<Vec<u8>> {
        Ok(cores::ram_bytes(&self.engine.memory_words(cores::RAM, 0)?))
    }
}

impl Machine<TfheBackend> {
    /// Starts the server's run of `request` on `core`: loads the encrypted memories.
    pub fn start(
        keys: &ServerKeys,
        request: &Request,
        core: Core,
        threads: Option<usize>,
    ) -> Result<Machine<TfheBackend>> {
        keys.check_stamp("the request", &request.stamp)?;
        let memory = request.memories.memory();
        let mut m = Self::encrypted(keys, core, memory, request.size, threads)?;
        match &request.memories {
            EncryptedMemories::Cmux { rom, ram } => {
                m.engine.set_rom(cores::ROM, rom.clone())?;
                m.engine.set_ram(cores::RAM, ram.clone())?;
            }
            EncryptedMemories::Mux { rom, ram } => {
                m.engine.set_memory_cells(cores::ROM, rom.clone())?;
                m.engine.set_memory_cells(cores::RAM, ram.clone())?;
            }
        }
        Ok(m)
    }

    pub(crate) fn encrypted(
        keys: &ServerKeys,
        core: Core,
        memory: Memory,
        size: MemSize,
        threads: Option<usize>,
    ) -> Result<Machine<TfheBackend>> {
        let backend = TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
        let mut m = Machine::new(backend, core, memory, size)?;
        m.set_threads(threads);
        m.stamp = Some(keys.stamp());
        Ok(m)
    }

    /// Reloads a snapshot written by [`Machine::save`].
    pub fn resume(
        keys: &ServerKeys,
        path: &Path,
        threads: Option<usize>,
    ) -> Result<Machine<TfheBackend>> {
        let snapshot = read_snapshot(keys, path)?;
        let (core, memory, size) = snapshot.core().in_file(path)?;
        let mut m = Self::encrypted(keys, core, memory, size, threads)?;
        m.engine
            .restore_snapshot(&snapshot.state)
            .context(|| format!("{}: corrupt snapshot", path.display()))?;
        Ok(m)
    }

    /// The encrypted result: finish flag, registers, RAM.
    pub fn result(&self) -> Result<Envelope> {
        let stamp = self
            .stamp
            .as_ref()
            .ok_or_else(|| PlatformError::usage("an encrypted machine without a key stamp"))?;
        let outputs = std::iter::once(cores::FINISH)
            .chain(cores::REGS)
            .map(|name| self.engine.output(name))
            .collect::<Result<Vec<_>, _>>()?;
        let ram = match self.engine.memory(cores::RAM)? {
            MemState::Ram(ram) => EncryptedRam::Cmux(Cow::Borrowed(ram)),
            MemState::Cells => EncryptedRam::Mux(self.engine.memory_cells(cores::RAM)?),
            MemState::Rom(_) => {
                return Err(PlatformError::usage(format!(
                    "the {} blueprint's RAM is a ROM",
                    self.core
                )))
            }
        };
        let result = EncryptedResult {
            stamp: stamp.clone(),
            cycles: self.engine.cycle(),
            size: self.size,
            outputs,
            ram,
            params: *self.engine.backend().params(),
        };
        Ok(result.to_envelope())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processor::emu::*;
    use crate::processor::run::*;

    #[test]
    fn the_cycle_counter_never_wraps() {
        assert_eq!(target_cycle(5, 10).unwrap(), 15);
        assert_eq!(target_cycle(0, u64::MAX).unwrap(), u64::MAX);
        let e = target_cycle(u64::MAX, 1).unwrap_err().to_string();
        assert!(e.contains("would overflow"), "{e}");
        assert!(target_cycle(1 << 62, u64::MAX).is_err());
    }

    #[test]
    fn snapshot_tags_name_core_memory_and_size() {
        let mut tags = std::collections::HashSet::new();
        for core in Core::ALL {
            for memory in [Memory::Cmux, Memory::Mux] {
                for size in MemSize::ALL {
                    let mut body = MachineTag::Core(core, memory, size).to_bytes();
                    tags.insert(body.clone());
                    body.extend_from_slice(&1u64.to_le_bytes());
                    body.push(9);
                    let (c, m, z, s) = parse_snapshot(&body).unwrap();
                    assert_eq!((c, m, z, &s[..]), (core, memory, size, &[9u8][..]));
                }
            }
        }
        assert_eq!(tags.len(), 2 * 2 * MemSize::ALL.len());
        // Snapshots from before the 1 KiB variant (tags 0..=3) are 512-byte machines.
        assert!((0..4)
            .all(|t| parse_snapshot(&[t, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap().2 == MemSize::B512));
        for t in [12u8, 13, 15, 16, 0x7f] {
            let e = parse_snapshot(&[t, 0, 0, 0, 0, 0, 0, 0, 0]).err().unwrap();
            assert!(e.to_string().contains(&format!("unknown core {t}")), "{e}");
        }
        // Sizes no core has, and a body that ends inside the size bytes.
        for bad in [[8u8, 9], [9, 14], [0, 0], [255, 255]] {
            let mut body = vec![8, bad[0], bad[1]];
            body.extend_from_slice(&0u64.to_le_bytes());
            let e = parse_snapshot(&body).err().unwrap().to_string();
            assert!(e.contains("corrupt snapshot"), "{bad:?}: {e}");
        }
        assert!(parse_snapshot(&[8, 9]).is_err());
    }

    /// The fib benchmark assembled, and its arguments.
    fn fib() -> (vsp_cahp::Image, Vec<String>) {
        let p = &vsp_cahp::programs::FIB;
        let image = vsp_cahp::assemble(p.source, p.name).unwrap();
        (image, p.args.iter().map(|s| s.to_string()).collect())
    }

    /// MUX memory (Iyokan's gates-and-flip-flops ROM/RAM) computes what CMUX memory does.
    #[test]
    fn mux_memory_runs_the_programs_like_cmux_memory() {
        let (image, args) = fib();
        let b512 = MemSize::B512;
        let cmux = emulate(&image, &args, Core::Pearl, Memory::Cmux, b512, 5000).unwrap();
        let mux = emulate(&image, &args, Core::Pearl, Memory::Mux, b512, 5000).unwrap();
        assert!(cmux.finished && mux.finished && mux.agrees_with_isa == Some(true));
        assert_eq!((mux.cycles, &mux.regs), (cmux.cycles, &cmux.regs));
        assert_eq!(mux.result, vsp_cahp::programs::FIB.expected);
    }

    /// The plain machine restored from the processor snapshot at `path`, with the snapshot's core,
    /// memory and size, and its engine state.
    fn restore_plain(path: &Path) -> (Machine<PlainBackend>, (Core, Memory, MemSize), Vec<u8>) {
        let s: Snapshot = crate::wire::envelope::load(path, &()).unwrap();
        let (core, memory, size) = s.core().unwrap();
        let state = s.state.into_owned();
        let mut m = Machine::new(PlainBackend, core, memory, size).unwrap();
        m.engine_mut().restore_snapshot(&state).unwrap();
        (m, (core, memory, size), state)
    }

    /// The cycle of the machine snapshot at `path` (`None` when there is none yet).
    fn snapshot_cycle(path: &Path) -> Option<u64> {
        path.exists().then(|| restore_plain(path).0.cycle())
    }

    /// The machine's snapshots are the engine run's: every k cycles and at the end, in the
    /// platform's envelope, and a run resumed from one equals a straight run.
    #[test]
    fn machine_snapshots_every_k_cycles_resume_to_a_straight_run() {
        let dir = tempfile::tempdir().unwrap();
        let (image, args) = fib();
        let req = PlainRequest::new(&image, &args, Memory::Mux).unwrap();
        let mut m = Machine::plain(Core::Pearl, &req).unwrap();
        let snaps = Snapshots {
            path: dir.path().join("s"),
            every: 3,
        };
        let kept = dir.path().join("kept");
        let mut seen = Vec::new();
        m.run(7, Some(&snaps), &mut |p| {
            if p.engine.cycle_finished {
                seen.push((p.done, p.total, snapshot_cycle(&snaps.path)));
                if p.done == 7 {
                    std::fs::copy(&snaps.path, &kept).unwrap();
                }
            }
        })
        .unwrap();
        let want: Vec<(u64, u64, Option<u64>)> = (1..=7)
            .map(|d| (d, 7, Some((d - 1) / 3 * 3).filter(|&k| k > 0)))
            .collect();
        assert_eq!(seen, want);
        assert_eq!(snapshot_cycle(&snaps.path), Some(7));
        assert_eq!(snapshot_cycle(&kept), Some(6));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);

        let (mut back, shape, _) = restore_plain(&kept);
        assert_eq!(shape, (Core::Pearl, Memory::Mux, MemSize::B512));
        back.run(5, None, &mut |_| {}).unwrap();
        assert_eq!(back.cycle(), 11);
        let (finished, regs, ram) = plain_state_after(&req, Core::Pearl, 11).unwrap();
        assert_eq!(back.finished().unwrap(), finished);
        assert_eq!(back.regs().unwrap(), regs);
        assert_eq!(back.ram_bytes().unwrap(), ram);
    }

    /// A 1 KiB machine's snapshot names its size and resumes on the 1 KiB circuit only: read as a
    /// 512-byte machine's (its size bit cleared) it is refused as another circuit's.
    #[test]
    fn a_1k_snapshot_resumes_on_the_1k_circuit_only() {
        let dir = tempfile::tempdir().unwrap();
        let (image, args) = fib();
        let req = PlainRequest::new_sized(&image, &args, Memory::Cmux, MemSize::K1).unwrap();
        assert_eq!((req.rom.len(), req.ram.len()), (256, 512));
        let mut m = Machine::plain(Core::Pearl, &req).unwrap();
        assert_eq!(m.size(), MemSize::K1);
        let path = dir.path().join("s");
        m.run(
            4,
            Some(&Snapshots {
                path: path.clone(),
                every: 0,
            }),
            &mut |_| {},
        )
        .unwrap();
        let (back, (core, memory, size), state) = restore_plain(&path);
        assert_eq!(
            (core, memory, size),
            (Core::Pearl, Memory::Cmux, MemSize::K1)
        );
        assert_eq!(back.regs().unwrap(), m.regs().unwrap());
        assert_eq!(back.ram_bytes().unwrap().len(), 1024);
        let mut small = Machine::new(PlainBackend, core, memory, MemSize::B512).unwrap();
        let e = small.engine_mut().restore_snapshot(&state).unwrap_err();
        assert!(e.to_string().contains("different circuit"), "{e}");
    }
}
