//! Jobs under `mpirun`: with [`MpiLaunch`] configured, a runner does not evaluate its job in the
//! server's process but starts `mpirun … vsp run|resume|circuit exec|circuit resume …` on the
//! configured hosts (docs/mpi.md) and watches it (docs/server.md, "Jobs on many machines").
//!
//! * The launched job writes a snapshot every [`MpiLaunch::snapshot_every`] cycles into one of two
//!   slots of the job folder (`snapshot`, `snapshot.b`): a resumed run never overwrites the
//!   snapshot it resumes from, so the other slot takes the new ones, and the newer complete one of
//!   the two (by its cycle) is where the next start resumes.
//! * The launcher runs in a process group of its own, recorded in the job folder (`launcher.pid`).
//!   A cancel, a delete or the server's shutdown stops the whole group; a server that was killed
//!   (SIGKILL, a crash) leaves it running, so the next start stops the recorded group first, then
//!   resumes the job from its newest snapshot — one job never has two launchers writing its folder.
//! * Progress comes from rank 0's per-cycle log lines (`cycle D/T done in …`); the result is the
//!   file rank 0 writes, checked as the in-process runner checks its own.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vsp_platform::Snapshot;

use crate::error::{Result, ServerError};
use crate::store::{Job, JobState};
use crate::worker::{has_result, update_live, Outcome, Shared};

/// How the server starts a job on several machines.
#[derive(Clone, Debug)]
pub struct MpiLaunch {
    /// The launcher (`mpirun`).
    pub mpirun: PathBuf,
    /// Ranks of every job (`-np`).
    pub ranks: u32,
    /// An Open MPI hostfile (`--hostfile`); `None`: the ranks run on this machine.
    pub hostfile: Option<PathBuf>,
    /// More launcher arguments, before the program (e.g. `--oversubscribe`).
    pub launcher_args: Vec<String>,
    /// The `vsp` the ranks run (built with `--features mpi`; the same path on every host).
    pub program: PathBuf,
    /// The launched job writes a snapshot every this many cycles (at least 1).
    pub snapshot_every: u64,
}

impl MpiLaunch {
    /// Every job under `mpirun` (default launcher: `mpirun`) on `ranks` ranks, running this very
    /// program, which must have been built with MPI (`built_with_mpi`; otherwise each rank would run
    /// the whole job); a hostfile must exist.
    pub fn for_this_program(
        ranks: u32,
        hostfile: Option<PathBuf>,
        mpirun: Option<PathBuf>,
        launcher_args: Vec<String>,
        snapshot_every: u64,
        built_with_mpi: bool,
    ) -> Result<MpiLaunch> {
        if !built_with_mpi {
            return Err(ServerError::Usage(
                "--mpi-ranks needs a vsp built with --features mpi (docs/mpi.md): this one would run the whole job on every rank".into(),
            ));
        }
        if let Some(h) = hostfile.as_ref().filter(|h| !h.is_file()) {
            return Err(ServerError::Usage(format!(
                "--mpi-hostfile {}: no such file",
                h.display()
            )));
        }
        let program = std::env::current_exe().map_err(|e| {
            ServerError::Usage(format!("cannot find this program's path for mpirun: {e}"))
        })?;
        Ok(MpiLaunch {
            mpirun: mpirun.unwrap_or_else(|| "mpirun".into()),
            ranks,
            hostfile,
            launcher_args,
            program,
            snapshot_every,
        })
    }
}

/// The two snapshot slots of a job folder (the in-process runner writes the first).
pub(crate) const SLOTS: [&str; 2] = ["snapshot", "snapshot.b"];

/// The file naming the launcher's process group.
const PID_FILE: &str = "launcher.pid";

/// Lines of the launcher's log kept for a failure's reason.
const LOG_LINES: usize = 16;

/// The cycle a complete, checked snapshot is at (processor and circuit snapshots alike: a machine tag
/// byte, then the engine's snapshot, docs/files.md).
fn snapshot_cycle(path: &Path) -> Result<u64> {
    let snapshot: Snapshot = vsp_platform::wire::envelope::load(path, &())?;
    vsp_circuit::snapshot::snapshot_cycle(&snapshot.state)
        .map_err(|e| ServerError::Job(format!("{}: {e}", path.display())))
}

/// The newest complete snapshot of job folder `dir` and its cycle (a torn or corrupt one does not
/// count).
pub(crate) fn latest_snapshot(dir: &Path) -> Option<(PathBuf, u64)> {
    SLOTS
        .iter()
        .map(|s| dir.join(s))
        .filter(|p| p.exists())
        .filter_map(|p| snapshot_cycle(&p).ok().map(|c| (p, c)))
        .max_by_key(|(_, c)| *c)
}

/// Stops process group `pgid` (TERM, then KILL after `grace`), through `kill(1)`.
fn kill_group(pgid: u32, grace: Duration) {
    let alive = || Path::new(&format!("/proc/{pgid}")).exists();
    let signal = |sig: &str| {
        let _ = Command::new("kill")
            .args([sig, "--", &format!("-{pgid}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    };
    signal("-TERM");
    let t = Instant::now();
    while alive() && t.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(50));
    }
    signal("-KILL");
}

/// Stops a launcher that a killed server left running on job folder `dir` (its group leader's
/// command line must name the folder: a reused process id is left alone).
fn reap_orphan(dir: &Path) {
    let pid_file = dir.join(PID_FILE);
    let Ok(text) = std::fs::read_to_string(&pid_file) else {
        return;
    };
    if let Ok(pgid) = text.trim().parse::<u32>() {
        let cmdline = std::fs::read(format!("/proc/{pgid}/cmdline")).unwrap_or_default();
        let ours = String::from_utf8_lossy(&cmdline).contains(&*dir.to_string_lossy());
        if pgid > 1 && ours {
            eprintln!(
                "stopping the launcher (process group {pgid}) a previous server left running"
            );
            kill_group(pgid, Duration::from_secs(5));
            let t = Instant::now();
            while Path::new(&format!("/proc/{pgid}")).exists()
                && t.elapsed() < Duration::from_secs(10)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    let _ = std::fs::remove_file(&pid_file);
}

/// The launcher's command line for `job` in folder `dir`, from snapshot `from` (at cycle `start`)
/// or from its request, writing snapshots to `to`.
fn command(
    sh: &Shared,
    launch: &MpiLaunch,
    job: &Job,
    dir: &Path,
    from: Option<&Path>,
    start: u64,
    to: &Path,
) -> Command {
    let mut c = Command::new(&launch.mpirun);
    c.args(&launch.launcher_args)
        .arg("-np")
        .arg(launch.ranks.to_string());
    if let Some(h) = &launch.hostfile {
        c.arg("--hostfile").arg(h);
    }
    c.arg(&launch.program);
    let key = sh.store().key_path(&job.client, &job.key_id);
    let design = job
        .design
        .as_ref()
        .map(|d| sh.store().design_path(&job.client, d));
    match (&design, from) {
        (None, None) => {
            c.arg("run").arg("-i").arg(dir.join("request.enc"));
            c.args(["--core", &job.core]);
        }
        (None, Some(from)) => {
            c.arg("resume").arg(from);
        }
        (Some(d), None) => {
            c.args(["circuit", "exec", "--netlist"]).arg(d);
            c.arg("-i").arg(dir.join("request.enc"));
            if job.reset {
                c.arg("--reset");
            }
        }
        (Some(d), Some(from)) => {
            c.args(["circuit", "resume"]).arg(from);
            c.arg("--netlist").arg(d);
        }
    }
    c.arg("-e").arg(key);
    c.arg("-o").arg(dir.join("result.enc"));
    c.arg("--cycles").arg((job.cycles - start).to_string());
    if let Some(t) = sh.cfg.threads {
        c.arg("--threads").arg(t.to_string());
    }
    c.arg("--snapshot").arg(to);
    c.arg("--snapshot-every")
        .arg(launch.snapshot_every.max(1).to_string());
    c
}

/// `cycle D/T done in …` → D.
fn cycle_line(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("cycle ")?;
    let (done, rest) = rest.split_once('/')?;
    rest.contains(" done in ").then_some(())?;
    done.parse().ok()
}

/// Runs `job` under the launcher and waits for it, or for a cancel or the server's stop.
pub(crate) fn run_job(
    sh: &Shared,
    launch: &MpiLaunch,
    job: &Job,
    cancel: &AtomicBool,
) -> Result<Outcome> {
    let dir = sh.store().job_dir(&job.id);
    let result_path = dir.join("result.enc");
    reap_orphan(&dir);
    if has_result(&result_path, job.cycles, job.design.is_some()) {
        return Ok(Outcome::Done {
            cycles: job.cycles,
            spc: None,
        });
    }
    let latest = latest_snapshot(&dir);
    let start = latest.as_ref().map_or(0, |(_, c)| *c);
    if start > job.cycles {
        return Err(ServerError::Job(format!(
            "the snapshot is at cycle {start}, past the job's {} cycles",
            job.cycles
        )));
    }
    let from = latest.as_ref().map(|(p, _)| p.as_path());
    // New snapshots go to the slot the run does not resume from.
    let to = match from {
        Some(p) if p.ends_with(SLOTS[0]) => dir.join(SLOTS[1]),
        _ => dir.join(SLOTS[0]),
    };
    if from.is_some() {
        eprintln!(
            "job {}: resuming from its snapshot at cycle {start}",
            job.id
        );
        update_live(sh, &job.id, &mut |l| l.cycles_done = start);
        sh.store().set_progress(&job.id, start, None)?;
        sh.notify();
    }
    let mut cmd = command(sh, launch, job, &dir, from, start, &to);
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| ServerError::Job(format!("cannot start {}: {e}", launch.mpirun.display())))?;
    // Recorded for the next start after a crash of this server.
    let pid = child.id();
    vsp_platform::files::write_atomic(
        &dir.join(PID_FILE),
        format!("{pid}\n").as_bytes(),
        vsp_platform::files::Access::Public,
    )?;
    let log = Arc::new(Mutex::new(VecDeque::<String>::new()));
    let reader = child.stderr.take().map(|err| {
        let log = log.clone();
        let done = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = done.clone();
        let h = std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(|l| l.ok()) {
                if let Some(d) = cycle_line(&line) {
                    seen.store(d, Ordering::SeqCst);
                }
                let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
                if l.len() == LOG_LINES {
                    l.pop_front();
                }
                l.push_back(line);
            }
        });
        (h, done)
    });
    let t0 = Instant::now();
    let mut reported = 0;
    let stop_child = |child: &mut Child| {
        kill_group(pid, Duration::from_secs(10));
        let _ = child.wait();
    };
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| ServerError::Job(e.to_string()))?
        {
            break s;
        }
        let cancelled =
            cancel.load(Ordering::SeqCst) || sh.store().state(&job.id)? != Some(JobState::Running);
        if cancelled || sh.stop.load(Ordering::SeqCst) {
            stop_child(&mut child);
            let _ = std::fs::remove_file(dir.join(PID_FILE));
            let cycles = latest_snapshot(&dir).map_or(0, |(_, c)| c);
            return Ok(if cancelled {
                Outcome::Cancelled { cycles }
            } else {
                Outcome::Stopped { cycles }
            });
        }
        if let Some((_, done)) = &reader {
            let d = done.load(Ordering::SeqCst);
            if d > reported {
                reported = d;
                let cycle = start + d;
                let spc = t0.elapsed().as_secs_f64() / d as f64;
                update_live(sh, &job.id, &mut |l| {
                    l.cycles_done = cycle;
                    l.seconds_per_cycle = Some(spc);
                });
                // The database follows the snapshots (a restart resumes from them).
                let saved = latest_snapshot(&dir).map_or(start, |(_, c)| c);
                sh.store().set_progress(&job.id, saved, Some(spc))?;
                sh.notify();
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if let Some((h, _)) = reader {
        let _ = h.join();
    }
    let _ = std::fs::remove_file(dir.join(PID_FILE));
    let elapsed = t0.elapsed().as_secs_f64();
    if status.success() && has_result(&result_path, job.cycles, job.design.is_some()) {
        let ran = job.cycles - start;
        return Ok(Outcome::Done {
            cycles: job.cycles,
            spc: (ran > 0).then(|| elapsed / ran as f64),
        });
    }
    let log = log.lock().unwrap_or_else(|p| p.into_inner());
    let why = log
        .iter()
        .rev()
        .find(|l| l.contains("error"))
        .or(log.back())
        .cloned()
        .unwrap_or_else(|| "no output".into());
    Err(ServerError::Job(format!(
        "{} exited with {status}: {why}",
        launch.mpirun.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_lines_are_read_and_nothing_else() {
        assert_eq!(
            cycle_line("cycle 3/10 done in 4.2 s (4.1 s/cycle, ETA 29 s)"),
            Some(3)
        );
        assert_eq!(cycle_line("cycle 3/10"), None);
        // The line a `vsp run` rank writes is the line read here.
        let engine = vsp_circuit::Progress {
            cycle_finished: true,
            ..Default::default()
        };
        let p = |done| vsp_platform::RunProgress {
            done,
            total: 10,
            elapsed: 1.0,
            engine: &engine,
        };
        for done in [0, 7, 10] {
            assert_eq!(
                p(done).finished_line().and_then(|l| cycle_line(&l)),
                Some(done)
            );
        }
        assert_eq!(cycle_line("error: cycle 3/10 done in"), None);
        assert_eq!(cycle_line("cycle x/10 done in 1 s"), None);
    }

    #[test]
    fn the_newest_complete_snapshot_is_chosen_and_a_torn_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(latest_snapshot(d).is_none());
        let write = |slot: &str, cycle: u64| {
            let mut inner = vec![0u8; 32];
            inner.extend_from_slice(&cycle.to_le_bytes());
            inner.extend_from_slice(b"state");
            let state = vsp_codec::seal(
                &vsp_circuit::snapshot::FORMAT,
                vsp_circuit::snapshot::KIND_SNAPSHOT,
                b"plain:none",
                &inner,
            );
            let snapshot = Snapshot {
                stamp: vsp_platform::Stamp {
                    params_name: "plain".into(),
                    key_id: vsp_platform::KeyId([0; 16]),
                },
                tag: vsp_platform::wire::tags::MachineTag::Core(
                    vsp_platform::Core::Pearl,
                    vsp_platform::Memory::Cmux,
                    vsp_platform::MemSize::B512,
                ),
                state: state.into(),
            };
            vsp_platform::wire::envelope::save(&snapshot, &d.join(slot), &()).unwrap();
        };
        write(SLOTS[0], 7);
        assert_eq!(latest_snapshot(d), Some((d.join(SLOTS[0]), 7)));
        write(SLOTS[1], 9);
        assert_eq!(latest_snapshot(d), Some((d.join(SLOTS[1]), 9)));
        // A torn newer file (a crash mid-write would leave none, but a copy might) does not count.
        let bytes = std::fs::read(d.join(SLOTS[1])).unwrap();
        std::fs::write(d.join(SLOTS[1]), &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(latest_snapshot(d), Some((d.join(SLOTS[0]), 7)));
    }
}
