//! A run's progress and snapshots, shared by the processor's machine and a circuit's
//! ([`crate::design::CircuitMachine`]): where and how often snapshots are written ([`Snapshots`]),
//! what a run reports ([`RunProgress`]), the key stamped on them ([`Stamp`]), the snapshot file
//! around the engine's state, and the engine's run with both.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use vsp_cahp::cores::{Core, MemSize, Memory};
use vsp_circuit::{Backend, Engine, Progress, RunOptions, SnapshotWrap};

use crate::error::{PlatformError, Result};
use crate::keys::ServerKeys;
pub use crate::wire::envelope::Stamp;
use crate::wire::envelope::{self, vsp_file, Writer};
use crate::wire::tags::MachineTag;
use vsp_codec::text::fmt_secs;
use vsp_codec::{FileCodec, Reader};

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

    /// The log line of a finished cycle, `cycle 3/10 done in 4.2 s (4.1 s/cycle, ETA 29s)`: what
    /// a command prints when stderr is not a terminal, and what the job server reads back from an
    /// MPI run's log. `None` within a cycle.
    pub fn finished_line(&self) -> Option<String> {
        let (e, done, total) = (self.engine, self.done, self.total);
        e.cycle_finished.then(|| {
            let per_cycle = self.seconds_per_cycle().unwrap_or(e.cycle_seconds);
            let eta = fmt_secs(self.eta().unwrap_or(0.0));
            let took = e.cycle_seconds;
            format!("cycle {done}/{total} done in {took:.1} s ({per_cycle:.1} s/cycle, ETA {eta})")
        })
    }
}

/// The platform's snapshot file around an engine snapshot: a `vsp` file of kind snapshot stamped
/// with the key, whose body is the machine's tag (a core and its memory, or a user circuit) and the
/// engine's snapshot as a blob.
pub struct Snapshot<'a> {
    pub stamp: Stamp,
    pub tag: MachineTag,
    /// The engine's snapshot ([`vsp_circuit::snapshot`]).
    pub state: Cow<'a, [u8]>,
}

impl FileCodec for Snapshot<'_> {
    vsp_file!(Snapshot, ());

    fn write_body(&self, w: &mut Writer) {
        w.bytes(&self.tag.to_bytes());
        w.blob(&self.state);
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, _: &()) -> Result<Self> {
        let stamp = Stamp::parse(param)?;
        let tag = MachineTag::parse(r)?;
        let state = r.blob(usize::MAX, "body")?.to_vec();
        Ok(Snapshot {
            stamp,
            tag,
            state: Cow::Owned(state),
        })
    }
}

/// How the engine's run writes snapshots ([`vsp_circuit::RunOptions::snapshot_wrap`]): as a
/// [`Snapshot`] of the machine `tag` stamped with `stamp`.
pub(crate) fn snapshot_wrap(stamp: Stamp, tag: MachineTag) -> SnapshotWrap {
    SnapshotWrap(Arc::new(move |state: &[u8]| {
        // A snapshot holds ciphertexts and public values only: nothing to zeroize.
        Snapshot {
            stamp: stamp.clone(),
            tag,
            state: Cow::Borrowed(state),
        }
        .encode(&())
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
pub(crate) fn read_snapshot(keys: &ServerKeys, path: &Path) -> Result<Snapshot<'static>> {
    let snapshot: Snapshot = envelope::load(path, &())?;
    keys.check_stamp("the snapshot", &snapshot.stamp)?;
    Ok(snapshot)
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

impl Snapshot<'_> {
    /// The core, memory and memory size of a processor snapshot (a circuit's is refused).
    pub fn core(&self) -> Result<(Core, Memory, MemSize)> {
        let MachineTag::Core(core, memory, size) = self.tag else {
            return Err(PlatformError::usage(
                "a circuit snapshot: continue it with `vsp circuit resume`",
            ));
        };
        Ok((core, memory, size))
    }
}

/// The core, memory, memory size and engine state of a snapshot file whose body is `body`.
#[cfg(test)]
pub(crate) fn parse_snapshot(body: &[u8]) -> Result<(Core, Memory, MemSize, Vec<u8>)> {
    use crate::wire::envelope::{KeyId, Kind, FORMAT};
    let param = envelope::param_id(KeyId([0; 16]), "plain");
    let bytes = vsp_codec::seal(&FORMAT, Kind::Snapshot as u16, &param, body);
    let s = Snapshot::decode(&bytes, &())?;
    let (core, memory, size) = s.core()?;
    Ok((core, memory, size, s.state.into_owned()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::envelope::{Envelope, KeyId, Kind};
    use vsp_cahp::cores::{Core, MemSize, Memory};

    /// A finished cycle has a log line (rate and ETA from the run's mean); a report within a cycle
    /// has none.
    #[test]
    fn a_finished_cycle_has_a_log_line() {
        let mut engine = Progress {
            cycle_seconds: 4.24,
            cycle_finished: true,
            ..Progress::default()
        };
        let p = |engine: &Progress, done| {
            RunProgress {
                done,
                total: 10,
                elapsed: 12.3,
                engine,
            }
            .finished_line()
        };
        let line = "cycle 3/10 done in 4.2 s (4.1 s/cycle, ETA 29s)";
        assert_eq!(p(&engine, 3).as_deref(), Some(line));
        // No mean yet: the cycle's own time, and no ETA.
        let first = "cycle 0/10 done in 4.2 s (4.2 s/cycle, ETA 0s)";
        assert_eq!(p(&engine, 0).as_deref(), Some(first));
        engine.cycle_finished = false;
        assert_eq!(p(&engine, 3), None);
    }

    /// A snapshot file is the envelope of kind snapshot around the tag and the state blob, byte for
    /// byte as before it had its own type, and reads back.
    #[test]
    fn snapshot_files_are_the_envelope_around_tag_and_state() {
        let stamp = Stamp {
            params_name: "default".into(),
            key_id: KeyId([3; 16]),
        };
        for tag in [
            MachineTag::Circuit,
            MachineTag::Core(Core::Ruby, Memory::Mux, MemSize::K1),
        ] {
            let s = Snapshot {
                stamp: stamp.clone(),
                tag,
                state: Cow::Borrowed(b"engine state"),
            };
            let mut body = tag.to_bytes();
            body.extend_from_slice(&12u64.to_le_bytes());
            body.extend_from_slice(b"engine state");
            let env = Envelope::new(Kind::Snapshot, "default", KeyId([3; 16]), body);
            let bytes = s.encode(&());
            assert_eq!(bytes, *env.to_bytes());
            let back = Snapshot::decode(&bytes, &()).unwrap();
            assert_eq!((back.tag, &back.state[..]), (tag, &b"engine state"[..]));
            assert_eq!(
                (back.stamp.key_id, back.stamp.params_name),
                (KeyId([3; 16]), "default".to_string())
            );
        }
    }
}
