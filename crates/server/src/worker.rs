//! The job runners: `--jobs N` threads, each taking the oldest queued job and running it on the
//! encrypted machine one cycle at a time, so that a cancel or a shutdown is seen between cycles.
//!
//! * A job starts from its request, or from its snapshot when it has one (a job the server was
//!   killed in, or stopped in). A snapshot is written when `snapshot_secs` passed since the last
//!   one, and before a shutdown; the database's `cycles_done` follows the snapshots.
//! * At the end the snapshot is written (an extended job resumes from it), then the result,
//!   atomically, then the job is marked done. A job found with its result
//!   already in place (the server died between the two) is marked done without running again.
//! * Evaluation keys are loaded once and kept while jobs use them (at most `jobs` of them).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use vsp_circuit::TfheBackend;
use vsp_platform::design::{load_design, CircuitMachine, CircuitRequest};
use vsp_platform::processor::program;
use vsp_platform::{Envelope, Kind, Machine, Request, RunProgress, ServerKeys};

use crate::error::{Result, ServerError};
use crate::store::{Job, JobState, JobStatus, Store};
use crate::Config;

/// A running job's progress, newer than the database's.
#[derive(Clone, Debug, Default)]
pub struct Live {
    pub cancel: Arc<AtomicBool>,
    pub cycles_done: u64,
    pub seconds_per_cycle: Option<f64>,
    pub gates: Option<(u64, u64)>,
}

/// What the HTTP side and the runners share.
pub struct Shared {
    pub cfg: Config,
    store: Mutex<Store>,
    live: Mutex<HashMap<String, Live>>,
    wake: (Mutex<()>, Condvar),
    /// Bumped on every change of any job (the progress streams wait on it).
    pub changed: tokio::sync::watch::Sender<u64>,
    /// Set to stop the runners.
    pub stop: AtomicBool,
    keys: Mutex<HashMap<(String, String), Arc<ServerKeys>>>,
    /// Uploads being checked at once.
    pub uploads: tokio::sync::Semaphore,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub fn new(cfg: Config, store: Store) -> Shared {
        let slots = cfg.upload_slots.max(1);
        Shared {
            cfg,
            store: Mutex::new(store),
            live: Mutex::new(HashMap::new()),
            wake: (Mutex::new(()), Condvar::new()),
            changed: tokio::sync::watch::channel(0).0,
            stop: AtomicBool::new(false),
            keys: Mutex::new(HashMap::new()),
            uploads: tokio::sync::Semaphore::new(slots),
        }
    }

    /// The database.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        lock(&self.store)
    }

    /// Tells the progress streams that something changed.
    pub fn notify(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// Wakes one runner (a job was queued).
    pub fn wake_one(&self) {
        self.wake.1.notify_one();
        self.notify();
    }

    pub fn wake_all(&self) {
        self.wake.1.notify_all();
    }

    /// Job `id` of `client` with its live progress and ETA.
    pub fn status(&self, client: &str, id: &str) -> Result<Option<JobStatus>> {
        let st = self.store().status(client, id)?;
        Ok(st.map(|s| self.with_live(s)))
    }

    /// `client`'s jobs with their live progress.
    pub fn list(&self, client: &str) -> Result<Vec<JobStatus>> {
        let all = self.store().list(client)?;
        Ok(all.into_iter().map(|s| self.with_live(s)).collect())
    }

    fn with_live(&self, mut s: JobStatus) -> JobStatus {
        if s.state == JobState::Running {
            if let Some(l) = lock(&self.live).get(&s.id) {
                s.cycles_done = s.cycles_done.max(l.cycles_done);
                s.seconds_per_cycle = l.seconds_per_cycle.or(s.seconds_per_cycle);
                s.gates = l.gates;
            }
        }
        if !s.state.is_final() {
            s.eta_seconds = s
                .seconds_per_cycle
                .map(|spc| spc * s.cycles.saturating_sub(s.cycles_done) as f64);
        }
        s
    }

    /// Cancels job `id` (owned by the caller, checked before); a running one stops after its
    /// current cycle.
    pub fn cancel(&self, id: &str) -> Result<()> {
        self.store().cancel(id)?;
        if let Some(l) = lock(&self.live).get(id) {
            l.cancel.store(true, Ordering::SeqCst);
        }
        self.notify();
        Ok(())
    }

    /// Deletes job `id` and its files (a running one when its runner stops).
    pub fn delete(&self, id: &str) -> Result<()> {
        let running = self.store().delete(id)?;
        if running {
            if let Some(l) = lock(&self.live).get(id) {
                l.cancel.store(true, Ordering::SeqCst);
            }
        }
        self.notify();
        Ok(())
    }

    /// The loaded evaluation key `key_id` of `client` (loaded once, kept while in use).
    fn keys_for(&self, client: &str, key_id: &str) -> Result<Arc<ServerKeys>> {
        let k = (client.to_string(), key_id.to_string());
        let mut cache = lock(&self.keys);
        if let Some(keys) = cache.get(&k) {
            return Ok(keys.clone());
        }
        let path = self.store().key_path(client, key_id);
        let keys = Arc::new(ServerKeys::load(&path)?);
        // Keep at most one key per runner: drop those no job holds.
        if cache.len() >= self.cfg.jobs {
            cache.retain(|_, v| Arc::strong_count(v) > 1);
        }
        cache.insert(k, keys.clone());
        Ok(keys)
    }
}

/// A machine a job runs on: the processor or a user circuit.
trait Runner {
    fn cycle(&self) -> u64;
    /// One cycle (after the public reset cycle when `reset`).
    fn step(&mut self, reset: bool, progress: &mut dyn FnMut(&RunProgress<'_>)) -> Result<()>;
    fn save(&self, path: &Path) -> Result<u64>;
    fn result(&self) -> Result<Envelope>;
}

impl Runner for Machine<TfheBackend> {
    fn cycle(&self) -> u64 {
        Machine::cycle(self)
    }
    fn step(&mut self, _reset: bool, progress: &mut dyn FnMut(&RunProgress<'_>)) -> Result<()> {
        Ok(self.run(1, None, progress)?)
    }
    fn save(&self, path: &Path) -> Result<u64> {
        Ok(Machine::save(self, path)?)
    }
    fn result(&self) -> Result<Envelope> {
        Ok(Machine::result(self)?)
    }
}

impl Runner for CircuitMachine {
    fn cycle(&self) -> u64 {
        self.engine.cycle()
    }
    fn step(&mut self, reset: bool, progress: &mut dyn FnMut(&RunProgress<'_>)) -> Result<()> {
        Ok(self.run(1, reset, None, progress)?)
    }
    fn save(&self, path: &Path) -> Result<u64> {
        Ok(CircuitMachine::save(self, path)?)
    }
    fn result(&self) -> Result<Envelope> {
        Ok(CircuitMachine::result(self)?)
    }
}

/// How a runner's job ended.
pub(crate) enum Outcome {
    Done {
        cycles: u64,
        spc: Option<f64>,
    },
    /// Cancelled or deleted through the API.
    Cancelled {
        cycles: u64,
    },
    /// The server is stopping: the job waits for the next start.
    Stopped {
        cycles: u64,
    },
}

/// One runner: takes jobs until the server stops.
pub fn run(sh: Arc<Shared>) {
    while !sh.stop.load(Ordering::SeqCst) {
        let job = match sh.store().claim() {
            Ok(j) => j,
            Err(e) => {
                eprintln!("error: cannot take a job: {}", e.chain());
                None
            }
        };
        let Some(job) = job else {
            let g = lock(&sh.wake.0);
            let _ = sh.wake.1.wait_timeout(g, Duration::from_millis(500));
            continue;
        };
        sh.notify();
        let cancel = Arc::new(AtomicBool::new(false));
        lock(&sh.live).insert(
            job.id.clone(),
            Live {
                cancel: cancel.clone(),
                ..Live::default()
            },
        );
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| match &sh.cfg.mpi {
            Some(launch) => crate::mpirun::run_job(&sh, launch, &job, &cancel),
            None => run_job(&sh, &job, &cancel),
        }))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(ServerError::Job(format!("internal error: {msg}")))
        });
        lock(&sh.live).remove(&job.id);
        if let Err(e) = record(&sh, &job, r) {
            eprintln!("error: job {}: {}", job.id, e.chain());
        }
        sh.notify();
    }
}

/// Writes a job's outcome to the database (and removes a job deleted while it ran).
fn record(sh: &Shared, job: &Job, r: Result<Outcome>) -> Result<()> {
    let store = sh.store();
    let after = match r {
        Ok(Outcome::Done { cycles, spc }) => {
            store.finish(&job.id, JobState::Done, Some(cycles), spc, None)?
        }
        Ok(Outcome::Cancelled { cycles }) => {
            store.set_progress(&job.id, cycles, None)?;
            store.state(&job.id)?
        }
        Ok(Outcome::Stopped { cycles }) => {
            store.requeue(&job.id, cycles)?;
            store.state(&job.id)?
        }
        Err(e) => {
            let why = e.chain();
            eprintln!("job {} failed: {why}", job.id);
            store.finish(&job.id, JobState::Failed, None, None, Some(&why))?
        }
    };
    if after == Some(JobState::Deleted) {
        store.remove_job(&job.id)?;
    }
    Ok(())
}

/// Whether `path` holds a complete, checked result of `cycles` cycles (an extended job's older
/// result does not count).
pub(crate) fn has_result(path: &Path, cycles: u64, circuit: bool) -> bool {
    // A circuit result starts with the circuit's fingerprint, then the cycles.
    let at = if circuit { 32 } else { 0 };
    path.exists()
        && Envelope::read(path, Kind::Result).is_ok_and(|env| {
            env.body
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
                == Some(cycles)
        })
}

fn run_job(sh: &Shared, job: &Job, cancel: &AtomicBool) -> Result<Outcome> {
    let dir = sh.store().job_dir(&job.id);
    let result_path = dir.join("result.enc");
    if has_result(&result_path, job.cycles, job.design.is_some()) {
        // Written before a crash that came before the database said done: never run it again.
        return Ok(Outcome::Done {
            cycles: job.cycles,
            spc: None,
        });
    }
    // Snapshots are written to the first slot; the newest complete one of both slots (a job once
    // run under `mpirun` may have written the second) is where the job resumes.
    let snapshot = dir.join(crate::mpirun::SLOTS[0]);
    let latest = crate::mpirun::latest_snapshot(&dir).map(|(p, _)| p);
    let keys = sh.keys_for(&job.client, &job.key_id)?;
    let threads = sh.cfg.threads;
    let resumed = latest.is_some();
    let mut m: Box<dyn Runner> = match (&job.design, &latest) {
        (None, Some(from)) => Box::new(Machine::resume(&keys, from, threads)?),
        (None, None) => {
            let path = dir.join("request.enc");
            let env = Envelope::read(&path, Kind::Request)?;
            let request =
                Request::from_envelope(&env, keys.ek.params()).map_err(|e| e.in_file(&path))?;
            drop(env);
            let core = program::parse_core(&job.core)?;
            Box::new(Machine::start(&keys, &request, core, threads)?)
        }
        (Some(d), _) => {
            let circuit = load_design(&sh.store().design_path(&job.client, d))?;
            if let Some(from) = &latest {
                Box::new(CircuitMachine::resume(&keys, circuit, from, threads)?)
            } else {
                let path = dir.join("request.enc");
                let env = Envelope::read(&path, Kind::Request)?;
                let request = CircuitRequest::from_envelope(&env, &circuit, keys.ek.params())
                    .map_err(|e| e.in_file(&path))?;
                drop(env);
                Box::new(CircuitMachine::start(&keys, circuit, request, threads)?)
            }
        }
    };
    if resumed {
        eprintln!(
            "job {}: resuming from its snapshot at cycle {}",
            job.id,
            m.cycle()
        );
    }
    // A circuit job's public reset cycle, before its first cycle only.
    let mut reset = job.reset && !resumed;
    if m.cycle() > job.cycles {
        return Err(ServerError::Job(format!(
            "the snapshot is at cycle {}, past the job's {} cycles",
            m.cycle(),
            job.cycles
        )));
    }
    let start = m.cycle();
    if start > 0 {
        // Resumed: the snapshot's cycle is the job's progress.
        update_live(sh, &job.id, &mut |l| l.cycles_done = start);
        sh.store().set_progress(&job.id, start, None)?;
        sh.notify();
    }
    let t0 = Instant::now();
    let mut saved = Instant::now();
    let mut saved_cycle = start;
    let every = Duration::from_secs(sh.cfg.snapshot_secs);
    let mut last_note = Instant::now();
    let update = |f: &mut dyn FnMut(&mut Live)| update_live(sh, &job.id, f);
    while m.cycle() < job.cycles {
        // The flag, or the database for a cancel that came before the flag was there.
        if cancel.load(Ordering::SeqCst) || sh.store().state(&job.id)? != Some(JobState::Running) {
            return Ok(Outcome::Cancelled { cycles: m.cycle() });
        }
        if sh.stop.load(Ordering::SeqCst) {
            if m.cycle() > saved_cycle {
                m.save(&snapshot)?;
            }
            return Ok(Outcome::Stopped { cycles: m.cycle() });
        }
        m.step(std::mem::take(&mut reset), &mut |p| {
            if last_note.elapsed() >= Duration::from_millis(250) {
                let e = p.engine;
                update(&mut |l| l.gates = Some((e.tasks_done as u64, e.tasks_total as u64)));
                sh.notify();
                last_note = Instant::now();
            }
        })?;
        let cycle = m.cycle();
        let spc = t0.elapsed().as_secs_f64() / (cycle - start) as f64;
        update(&mut |l| {
            l.cycles_done = cycle;
            l.seconds_per_cycle = Some(spc);
            l.gates = None;
        });
        if cycle < job.cycles && saved.elapsed() >= every {
            m.save(&snapshot)?;
            sh.store().set_progress(&job.id, cycle, Some(spc))?;
            saved = Instant::now();
            saved_cycle = cycle;
        }
        sh.notify();
    }
    let spc = (m.cycle() > start).then(|| t0.elapsed().as_secs_f64() / (m.cycle() - start) as f64);
    if cancel.load(Ordering::SeqCst) {
        return Ok(Outcome::Cancelled { cycles: m.cycle() });
    }
    // The final state too, for a job that is extended later.
    if m.cycle() > saved_cycle {
        m.save(&snapshot)?;
    }
    m.result()?.write(&result_path)?;
    Ok(Outcome::Done {
        cycles: m.cycle(),
        spc,
    })
}

pub(crate) fn update_live(sh: &Shared, id: &str, f: &mut dyn FnMut(&mut Live)) {
    if let Some(l) = lock(&sh.live).get_mut(id) {
        f(l);
    }
}
