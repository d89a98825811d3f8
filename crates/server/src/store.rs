//! The data folder: `vsp-server.sqlite` (tokens, keys, jobs) and the files beside it.
//!
//! ```text
//! DIR/vsp-server.sqlite            tokens (SHA3-256 of each, never the token), keys, jobs
//! DIR/keys/CLIENT/KEYID.key        evaluation keys, one per client and key id
//! DIR/designs/CLIENT/SHA3.json     circuit jobs' Yosys JSON netlists, named by their SHA3-256
//! DIR/jobs/JOBID/request.enc       the request as uploaded
//! DIR/jobs/JOBID/snapshot          the machine's last snapshot (written atomically)
//! DIR/jobs/JOBID/result.enc        the result (written atomically, then the job is marked done)
//! ```
//!
//! The folder and the database are created 0700 and 0600. A job's state moves queued → running →
//! done | failed | cancelled; a job found running when the server starts was interrupted and is
//! queued again (its runner resumes from the snapshot, or takes the result already written).

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use sha3::{Digest, Sha3_256};

use crate::error::{Result, ServerError};

/// A job's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
    /// Deleted while running: hidden, removed when its runner stops.
    Deleted,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Deleted => "deleted",
        }
    }
    fn parse(s: &str) -> Result<JobState> {
        Ok(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            "cancelled" => JobState::Cancelled,
            "deleted" => JobState::Deleted,
            _ => return Err(ServerError::Usage(format!("unknown job state {s:?}"))),
        })
    }
    /// Done, failed or cancelled: nothing more will happen to it.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Done | JobState::Failed | JobState::Cancelled | JobState::Deleted
        )
    }
}

/// What the API tells about a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobStatus {
    pub id: String,
    pub state: JobState,
    /// `pearl` or `ruby`, or `circuit` for a job on an uploaded netlist.
    pub core: String,
    /// The evaluation key's id (32 hex digits).
    pub key_id: String,
    /// The cycle budget.
    pub cycles: u64,
    /// Cycles run so far.
    pub cycles_done: u64,
    /// Mean seconds per cycle of the current (or last) run.
    pub seconds_per_cycle: Option<f64>,
    /// Estimated seconds until the result.
    pub eta_seconds: Option<f64>,
    /// Gates of the current cycle evaluated so far, of all (while running).
    pub gates: Option<(u64, u64)>,
    /// Why it failed.
    pub error: Option<String>,
    /// Unix times.
    pub created: f64,
    pub started: Option<f64>,
    pub finished: Option<f64>,
}

impl JobStatus {
    /// The status on one line, as `vsp remote status` prints it.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{}  {:<9} {} cycle {}/{}",
            self.id,
            self.state.as_str(),
            self.core,
            self.cycles_done,
            self.cycles
        );
        if let Some(spc) = self.seconds_per_cycle {
            out.push_str(&format!("  {spc:.1} s/cycle"));
        }
        if let Some(eta) = self.eta_seconds {
            out.push_str(&format!("  ETA {}", vsp_codec::text::fmt_secs(eta)));
        }
        if let Some(e) = &self.error {
            out.push_str(&format!("  error: {e}"));
        }
        out
    }

    /// The job's progress on one line, as a follower logs it when stderr is not a terminal:
    /// `cycle 3/10 (4.1 s/cycle, ETA 29s)`, or `cycle 0/10` before a rate is known.
    pub fn progress_line(&self) -> String {
        let (done, total) = (self.cycles_done, self.cycles);
        let eta = vsp_codec::text::fmt_secs(self.eta_seconds.unwrap_or(0.0));
        match self.seconds_per_cycle {
            Some(s) => format!("cycle {done}/{total} ({s:.1} s/cycle, ETA {eta})"),
            None => format!("cycle {done}/{total}"),
        }
    }
}

/// Whether `queue` jobs wait already (asked inside the transaction that would queue one more).
fn queue_full(tx: &rusqlite::Transaction<'_>, queue: usize) -> Result<bool> {
    let waiting: i64 = tx.query_row(
        "SELECT COUNT(*) FROM jobs WHERE state = 'queued'",
        [],
        |r| r.get(0),
    )?;
    Ok(waiting as usize >= queue)
}

/// A job row, as the runner needs it.
#[derive(Clone, Debug)]
pub struct Job {
    pub id: String,
    pub client: String,
    pub key_id: String,
    pub core: String,
    pub cycles: u64,
    /// A circuit job's netlist (its SHA3-256 in hex); `None` for the processor.
    pub design: Option<String>,
    /// A circuit job applies one public reset cycle first.
    pub reset: bool,
}

/// The database (one connection; the server holds it behind a mutex).
pub struct Store {
    dir: PathBuf,
    conn: Connection,
}

pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A fresh random id: 32 hex digits.
pub(crate) fn random_hex() -> String {
    let mut b = [0u8; 16];
    rand::Rng::fill(&mut rand::rngs::OsRng, &mut b);
    hex(&b)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `s` is a SHA3-256 in hex (64 lowercase hex digits): a netlist's name.
pub fn is_hash(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `s` is an id of ours (32 lowercase hex digits): anything else names no job or key.
pub fn is_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// SHA3-256 of a token, in hex.
pub(crate) fn token_hash(token: &str) -> String {
    sha3_hex(token.as_bytes())
}

/// SHA3-256 of `bytes`, in hex.
pub fn sha3_hex(bytes: &[u8]) -> String {
    hex(&Sha3_256::digest(bytes))
}

/// A client name: 1–64 of `A-Z a-z 0-9 _ - .`, not starting with a dot (it names a folder).
pub fn check_client_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(ServerError::Usage(format!(
            "client name {name:?}: use 1 to 64 letters, digits, '_', '-' or '.' (not starting with '.')"
        )))
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY,
    client TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS keys (
    client TEXT NOT NULL,
    key_id TEXT NOT NULL,
    params TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (client, key_id)
);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    client TEXT NOT NULL,
    key_id TEXT NOT NULL,
    core TEXT NOT NULL,
    design TEXT,
    reset INTEGER NOT NULL DEFAULT 0,
    cycles INTEGER NOT NULL,
    state TEXT NOT NULL,
    cycles_done INTEGER NOT NULL DEFAULT 0,
    seconds_per_cycle REAL,
    error TEXT,
    created REAL NOT NULL,
    started REAL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS designs (
    client TEXT NOT NULL,
    hash TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (client, hash)
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, seq);
";

impl Store {
    /// Opens (creating) the data folder and its database.
    pub fn open(dir: &Path) -> Result<Store> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| ServerError::io("cannot create", dir, e))?;
        for sub in ["keys", "designs", "jobs"] {
            let p = dir.join(sub);
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&p)
                .map_err(|e| ServerError::io("cannot create", &p, e))?;
        }
        let db = dir.join("vsp-server.sqlite");
        let conn = Connection::open(&db)?;
        fs::set_permissions(&db, fs::Permissions::from_mode(0o600))
            .map_err(|e| ServerError::io("cannot restrict", &db, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            conn,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of job `id`.
    pub fn job_dir(&self, id: &str) -> PathBuf {
        self.dir.join("jobs").join(id)
    }

    /// The file of client `client`'s key `key_id`.
    pub fn key_path(&self, client: &str, key_id: &str) -> PathBuf {
        self.dir
            .join("keys")
            .join(client)
            .join(format!("{key_id}.key"))
    }

    // --- tokens ---

    pub fn add_token(&self, client: &str) -> Result<String> {
        check_client_name(client)?;
        let mut b = [0u8; 32];
        rand::Rng::fill(&mut rand::rngs::OsRng, &mut b);
        let token = format!("vsp_{}", hex(&b));
        self.conn.execute(
            "INSERT INTO tokens (hash, client, created) VALUES (?1, ?2, ?3)",
            params![token_hash(&token), client, now()],
        )?;
        Ok(token)
    }

    pub fn revoke_tokens(&self, client: &str) -> Result<usize> {
        Ok(self
            .conn
            .execute("DELETE FROM tokens WHERE client = ?1", params![client])?)
    }

    pub fn list_clients(&self) -> Result<Vec<(String, usize)>> {
        let mut st = self
            .conn
            .prepare("SELECT client, COUNT(*) FROM tokens GROUP BY client ORDER BY client")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The client a token belongs to.
    pub fn client_of(&self, token: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT client FROM tokens WHERE hash = ?1",
                params![token_hash(token)],
                |r| r.get(0),
            )
            .optional()?)
    }

    // --- keys ---

    /// The parameter set and size of `client`'s key `key_id`, if uploaded.
    pub fn key(&self, client: &str, key_id: &str) -> Result<Option<(String, u64)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT params, bytes FROM keys WHERE client = ?1 AND key_id = ?2",
                params![client, key_id],
                |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
            )
            .optional()?)
    }

    /// Records a key whose file is in place; false when it was there already.
    pub fn add_key(
        &self,
        client: &str,
        key_id: &str,
        params_name: &str,
        bytes: u64,
    ) -> Result<bool> {
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO keys (client, key_id, params, bytes, created) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![client, key_id, params_name, bytes as i64, now()],
        )?;
        Ok(n == 1)
    }

    /// The file of client `client`'s netlist `hash`.
    pub fn design_path(&self, client: &str, hash: &str) -> PathBuf {
        self.dir
            .join("designs")
            .join(client)
            .join(format!("{hash}.json"))
    }

    /// The size of `client`'s netlist `hash`, if uploaded.
    pub fn design(&self, client: &str, hash: &str) -> Result<Option<u64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT bytes FROM designs WHERE client = ?1 AND hash = ?2",
                params![client, hash],
                |r| Ok(r.get::<_, i64>(0)? as u64),
            )
            .optional()?)
    }

    /// Records a netlist whose file is in place.
    pub fn add_design(&self, client: &str, hash: &str, bytes: u64) -> Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO designs (client, hash, bytes, created) VALUES (?1, ?2, ?3, ?4)",
            params![client, hash, bytes as i64, now()],
        )?;
        Ok(())
    }

    // --- jobs ---

    /// Jobs waiting to run.
    pub fn queued(&self) -> Result<usize> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM jobs WHERE state = 'queued'",
            [],
            |r| r.get::<_, i64>(0),
        )? as usize)
    }

    /// Adds a queued job unless `queue` jobs are waiting already (then `None`).
    pub fn add_job(&mut self, job: &Job, queue: usize) -> Result<Option<()>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if queue_full(&tx, queue)? {
            return Ok(None);
        }
        tx.execute(
            "INSERT INTO jobs (id, client, key_id, core, design, reset, cycles, state, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8)",
            params![job.id, job.client, job.key_id, job.core, job.design, job.reset, job.cycles as i64, now()],
        )?;
        tx.commit()?;
        Ok(Some(()))
    }

    /// Takes the oldest queued job and marks it running.
    pub fn claim(&mut self) -> Result<Option<Job>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let job = tx
            .query_row(
                "SELECT id, client, key_id, core, cycles, design, reset FROM jobs WHERE state = 'queued' ORDER BY seq LIMIT 1",
                [],
                |r| {
                    Ok(Job {
                        id: r.get(0)?,
                        client: r.get(1)?,
                        key_id: r.get(2)?,
                        core: r.get(3)?,
                        cycles: r.get::<_, i64>(4)? as u64,
                        design: r.get(5)?,
                        reset: r.get(6)?,
                    })
                },
            )
            .optional()?;
        if let Some(j) = &job {
            tx.execute(
                "UPDATE jobs SET state = 'running', started = COALESCE(started, ?2) WHERE id = ?1",
                params![j.id, now()],
            )?;
        }
        tx.commit()?;
        Ok(job)
    }

    /// At start: jobs left running by a crash are queued again (ahead of the others, in their
    /// order); jobs deleted while running lose their files. Returns how many were re-queued.
    pub fn recover(&self) -> Result<usize> {
        let n = self.conn.execute(
            "UPDATE jobs SET state = 'queued' WHERE state = 'running'",
            [],
        )?;
        let deleted: Vec<String> = {
            let mut st = self
                .conn
                .prepare("SELECT id FROM jobs WHERE state = 'deleted'")?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for id in deleted {
            self.remove_job(&id)?;
        }
        Ok(n)
    }

    /// Records a running job's progress (after each snapshot).
    pub fn set_progress(&self, id: &str, cycles_done: u64, spc: Option<f64>) -> Result<()> {
        self.conn.execute(
            "UPDATE jobs SET cycles_done = ?2, seconds_per_cycle = COALESCE(?3, seconds_per_cycle) WHERE id = ?1",
            params![id, cycles_done as i64, spc],
        )?;
        Ok(())
    }

    /// Ends a running job in `state`; returns the state it was in (a job cancelled or deleted
    /// meanwhile keeps that state).
    pub fn finish(
        &self,
        id: &str,
        state: JobState,
        cycles_done: Option<u64>,
        spc: Option<f64>,
        error: Option<&str>,
    ) -> Result<Option<JobState>> {
        self.conn.execute(
            "UPDATE jobs SET state = ?2, cycles_done = COALESCE(?3, cycles_done), seconds_per_cycle = COALESCE(?4, seconds_per_cycle), error = ?5, finished = ?6 WHERE id = ?1 AND state = 'running'",
            params![id, state.as_str(), cycles_done.map(|c| c as i64), spc, error, now()],
        )?;
        self.state(id)
    }

    /// A runner that stopped for shutdown puts its job back in the queue.
    pub fn requeue(&self, id: &str, cycles_done: u64) -> Result<()> {
        self.conn.execute(
            "UPDATE jobs SET state = 'queued', cycles_done = ?2 WHERE id = ?1 AND state = 'running'",
            params![id, cycles_done as i64],
        )?;
        Ok(())
    }

    pub fn state(&self, id: &str) -> Result<Option<JobState>> {
        let s: Option<String> = self
            .conn
            .query_row("SELECT state FROM jobs WHERE id = ?1", params![id], |r| {
                r.get(0)
            })
            .optional()?;
        s.map(|s| JobState::parse(&s)).transpose()
    }

    /// Job `id` if `client` owns it (a deleted job is no job).
    pub fn status(&self, client: &str, id: &str) -> Result<Option<JobStatus>> {
        let mut st = self.conn.prepare(
            "SELECT id, state, core, key_id, cycles, cycles_done, seconds_per_cycle, error, created, started, finished FROM jobs WHERE id = ?1 AND client = ?2 AND state != 'deleted'",
        )?;
        let row = st.query_row(params![id, client], row_status).optional()?;
        row.map(finish_status).transpose()
    }

    /// `client`'s jobs, oldest first.
    pub fn list(&self, client: &str) -> Result<Vec<JobStatus>> {
        let mut st = self.conn.prepare(
            "SELECT id, state, core, key_id, cycles, cycles_done, seconds_per_cycle, error, created, started, finished FROM jobs WHERE client = ?1 AND state != 'deleted' ORDER BY seq",
        )?;
        let rows = st.query_map(params![client], row_status)?;
        rows.map(|r| finish_status(r?)).collect()
    }

    /// Cancels a queued or running job; returns its state before.
    pub fn cancel(&self, id: &str) -> Result<Option<JobState>> {
        let before = self.state(id)?;
        self.conn.execute(
            "UPDATE jobs SET state = 'cancelled', finished = ?2 WHERE id = ?1 AND state IN ('queued', 'running')",
            params![id, now()],
        )?;
        Ok(before)
    }

    /// Gives a done job `more` cycles and queues it again (it resumes from its final snapshot);
    /// `None` when `queue` jobs wait already, `Some(false)` when it is not done.
    pub fn extend(&mut self, id: &str, more: u64, queue: usize) -> Result<Option<bool>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if queue_full(&tx, queue)? {
            return Ok(None);
        }
        let n = tx.execute(
            "UPDATE jobs SET cycles = cycles + ?2, state = 'queued', finished = NULL, error = NULL, seconds_per_cycle = NULL \
             WHERE id = ?1 AND state = 'done' AND cycles + ?2 <= ?3",
            params![id, more as i64, crate::MAX_CYCLES as i64],
        )?;
        tx.commit()?;
        Ok(Some(n == 1))
    }

    /// Deletes a job: a running one is marked deleted (its runner removes it when it stops),
    /// any other loses its files and row now. Returns whether it was running.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let n = self.conn.execute(
            "UPDATE jobs SET state = 'deleted' WHERE id = ?1 AND state = 'running'",
            params![id],
        )?;
        if n == 1 {
            return Ok(true);
        }
        self.remove_job(id)?;
        Ok(false)
    }

    /// Removes a job's files, then its row.
    pub fn remove_job(&self, id: &str) -> Result<()> {
        let dir = self.job_dir(id);
        match fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ServerError::io("cannot remove", &dir, e)),
        }
        self.conn
            .execute("DELETE FROM jobs WHERE id = ?1", params![id])?;
        Ok(())
    }
}

type Row = (
    String,
    String,
    String,
    String,
    i64,
    i64,
    Option<f64>,
    Option<String>,
    f64,
    Option<f64>,
    Option<f64>,
);

fn row_status(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
    ))
}

fn finish_status(r: Row) -> Result<JobStatus> {
    let (id, state, core, key_id, cycles, done, spc, error, created, started, finished) = r;
    let state = JobState::parse(&state)?;
    let (cycles, cycles_done) = (cycles as u64, done as u64);
    Ok(JobStatus {
        id,
        state,
        core,
        key_id,
        cycles,
        cycles_done,
        seconds_per_cycle: spc,
        eta_seconds: None,
        gates: None,
        error,
        created,
        started,
        finished,
    })
}

#[cfg(test)]
mod tests {
    use super::{JobState, JobStatus};

    fn status() -> JobStatus {
        JobStatus {
            id: "j1".into(),
            state: JobState::Running,
            core: "pearl".into(),
            key_id: "00".repeat(16),
            cycles: 10,
            cycles_done: 3,
            seconds_per_cycle: Some(4.12),
            eta_seconds: Some(28.8),
            gates: None,
            error: None,
            created: 0.0,
            started: None,
            finished: None,
        }
    }

    /// `vsp remote status`'s line and a follower's progress line, with and without a rate.
    #[test]
    fn a_status_prints_on_one_line() {
        let mut s = status();
        assert_eq!(
            s.line(),
            "j1  running   pearl cycle 3/10  4.1 s/cycle  ETA 29s"
        );
        assert_eq!(s.progress_line(), "cycle 3/10 (4.1 s/cycle, ETA 29s)");
        (s.seconds_per_cycle, s.eta_seconds) = (None, None);
        s.error = Some("out of memory".into());
        assert_eq!(
            s.line(),
            "j1  running   pearl cycle 3/10  error: out of memory"
        );
        assert_eq!(s.progress_line(), "cycle 3/10");
    }
}
