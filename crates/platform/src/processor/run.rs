//! A run's progress and snapshots, shared by the processor's machine and a circuit's
//! ([`crate::design::CircuitMachine`]): where and how often snapshots are written ([`Snapshots`]),
//! what a run reports ([`RunProgress`]), the key stamped on them ([`Stamp`]), the snapshot file
//! around the engine's state, and the engine's run with both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use vsp_cahp::cores::{Core, MemSize, Memory};
use vsp_circuit::{Backend, Engine, Progress, RunOptions, SnapshotWrap};

use crate::error::{PlatformError, Result};
use crate::keys::ServerKeys;
use crate::wire::envelope::{Envelope, KeyId, Kind, Writer};
use crate::wire::tags::MachineTag;
use vsp_codec::Reader;

/// Where and how often a run writes snapshots.
#[derive(Clone, Debug)]
pub struct Snapshots {
    pub path: PathBuf,
    /// Every this many cycles (0: only at the end).
    pub every: u64,
}

/// Progress of [`Machine::run`](crate::Machine::run): the engine's report plus the run's own count.
#[derive(Clone, Copy, Debug)]
pub struct RunProgress<'a> {
    /// Cycles of this run finished.
    pub done: u64,
    /// Cycles this run does.
    pub total: u64,
    /// Seconds since the run started.
    pub elapsed: f64,
    /// The engine's report (tasks of the current cycle, …).
    pub engine: &'a Progress,
}

impl RunProgress<'_> {
    /// Mean seconds per finished cycle (before one finished: the engine's estimate, if any).
    pub fn seconds_per_cycle(&self) -> Option<f64> {
        if self.done > 0 {
            Some(self.elapsed / self.done as f64)
        } else {
            self.engine.mean_cycle_seconds
        }
    }

    /// Estimated seconds until the run ends.
    pub fn eta(&self) -> Option<f64> {
        self.seconds_per_cycle()
            .map(|s| s * self.total.saturating_sub(self.done) as f64)
    }
}

/// Identity of the key a machine's state is encrypted under (stamped on snapshots and results).
#[derive(Clone, Debug)]
pub struct Stamp {
    pub params_name: String,
    pub key_id: KeyId,
}

/// The platform's snapshot file around an engine snapshot: an envelope of kind snapshot stamped with
/// the key, whose body is `tag` (which machine: a core and its memory, or a user circuit) and the
/// engine's snapshot as a blob. The engine's run writes it ([`vsp_circuit::RunOptions::snapshot_wrap`]).
pub(crate) fn snapshot_wrap(stamp: Stamp, tag: Vec<u8>) -> SnapshotWrap {
    SnapshotWrap(Arc::new(move |state: &[u8]| {
        let mut w = Writer::default();
        for &b in &tag {
            w.u8(b);
        }
        w.blob(state);
        let mut bytes = Envelope::new(
            Kind::Snapshot,
            &stamp.params_name,
            stamp.key_id,
            w.into_bytes(),
        )
        .to_bytes();
        // A snapshot holds ciphertexts and public values only: nothing to zeroize.
        std::mem::take(&mut *bytes)
    }))
}

/// Writes `engine`'s snapshot to `path` through `wrap`; returns the file's size (0 on an engine that
/// is not its executor's root — another rank of a distributed run — which writes nothing).
pub(crate) fn save_engine<B: Backend>(
    engine: &Engine<B>,
    path: &Path,
    wrap: &SnapshotWrap,
) -> Result<u64> {
    if !engine.is_root() {
        return Ok(0);
    }
    let size = engine.write_snapshot(path, Some(wrap))?;
    crate::files::warn_stale_temps(path);
    Ok(size)
}

/// Reads a snapshot file and checks that it was written under `keys`' key.
pub(crate) fn read_snapshot(keys: &ServerKeys, path: &Path) -> Result<Envelope> {
    let env = Envelope::read(path, Kind::Snapshot)?;
    keys.check_key_of("the snapshot", env.key_id, &env.params)?;
    Ok(env)
}

/// Runs `cycles` cycles of `engine` in one engine run, which writes the snapshots (through `wrap`)
/// every `snapshots.every` cycles and at the end, reporting progress with the run's own count.
pub(crate) fn run_engine<B: Backend>(
    engine: &mut Engine<B>,
    cycles: u64,
    snapshots: Option<&Snapshots>,
    wrap: SnapshotWrap,
    progress: &mut dyn FnMut(&RunProgress<'_>),
) -> Result<()> {
    let opts = RunOptions {
        max_cycles: cycles,
        snapshot: snapshots.map(|s| s.path.clone()),
        snapshot_every: snapshots.map(|s| s.every),
        snapshot_wrap: Some(wrap),
        ..Default::default()
    };
    let t0 = Instant::now();
    engine.run(&opts, &mut |p: &Progress| {
        progress(&RunProgress {
            done: p.cycles_done,
            total: cycles,
            elapsed: t0.elapsed().as_secs_f64(),
            engine: p,
        })
    })?;
    if let Some(s) = snapshots.filter(|_| engine.is_root()) {
        crate::files::warn_stale_temps(&s.path);
    }
    Ok(())
}

/// The core, memory, memory size and engine state of a snapshot's body ([`MachineTag`]).
pub fn parse_snapshot(body: &[u8]) -> Result<(Core, Memory, MemSize, &[u8])> {
    let mut r = Reader::new(body);
    let MachineTag::Core(core, memory, size) = MachineTag::parse(&mut r)? else {
        return Err(PlatformError::usage(
            "a circuit snapshot: continue it with `vsp circuit resume`",
        ));
    };
    let state = r.blob(usize::MAX, "body")?;
    r.end()?;
    Ok((core, memory, size, state))
}

/// The cycle a run of `cycles` more cycles from `start` ends at, refusing a counter that would wrap
/// (a snapshot's counter is not trusted to be small).
pub(crate) fn target_cycle(start: u64, cycles: u64) -> Result<u64> {
    start.checked_add(cycles).ok_or_else(|| {
        PlatformError::usage(format!(
            "cannot run {cycles} more cycles from cycle {start}: the cycle counter would overflow"
        ))
    })
}
