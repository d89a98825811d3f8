//! vsp-server: Bob as a service. `vsp serve` keeps jobs in SQLite under its data folder, their
//! files (evaluation keys, requests, snapshots, results) beside it, runs them N at a time on the
//! encrypted machine of vsp-platform with periodic snapshots, resumes every unfinished job after a
//! crash, and answers an HTTP API (docs/server.md) to clients holding a bearer token. Its client
//! ([`client`]) is behind `vsp remote`.
//!
//! | module | what |
//! |---|---|
//! | [`store`] | the data folder: SQLite (tokens, keys, jobs) and the job and key files |
//! | [`worker`] | the job runners: claim, run cycle by cycle with snapshots, resume, cancel |
//! | [`api`] | the HTTP API (axum), uploads checked as they stream, the progress stream (SSE) |
//! | [`client`] | the blocking client of that API (`vsp remote`) |
//! | [`error`] | [`ServerError`] |
//!
//! The server binds where it is told (`127.0.0.1:8470` by default in `vsp serve`); it speaks plain
//! HTTP and leaves TLS to a reverse proxy.

#![forbid(unsafe_code)]

pub mod api;
pub mod client;
pub mod error;
pub mod mpirun;
mod page;
pub mod store;
pub mod worker;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

pub use error::{Result, ServerError};
pub use mpirun::MpiLaunch;
pub use store::{JobState, JobStatus};

/// Largest evaluation key accepted by default (the default parameters' key is 216 MiB).
pub const DEFAULT_MAX_KEY_BYTES: u64 = 512 << 20;
/// Largest request accepted by default (a 512-byte CMUX request is about 32 MiB).
pub const DEFAULT_MAX_REQUEST_BYTES: u64 = 256 << 20;
/// Most cycles one job may ask for.
pub const MAX_CYCLES: u64 = 1 << 40;

/// How a server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The data folder (SQLite database, keys, jobs).
    pub data: PathBuf,
    /// Where to listen.
    pub listen: SocketAddr,
    /// Jobs run at once.
    pub jobs: usize,
    /// Worker threads of each job's engine (`None`: all cores).
    pub threads: Option<usize>,
    /// Jobs waiting beyond the running ones; a submission past that is answered 503.
    pub queue: usize,
    /// A running job writes a snapshot when this much time passed since its last one (0: after
    /// every cycle).
    pub snapshot_secs: u64,
    pub max_key_bytes: u64,
    pub max_request_bytes: u64,
    /// Uploads checked at once (each is held in memory until it is verified).
    pub upload_slots: usize,
    /// Run every job under `mpirun` on several ranks instead of in this process.
    pub mpi: Option<MpiLaunch>,
}

impl Config {
    /// The defaults of `vsp serve` for the data folder `data`.
    pub fn new(data: PathBuf) -> Config {
        Config {
            data,
            listen: SocketAddr::from(([127, 0, 0, 1], 8470)),
            jobs: 1,
            threads: None,
            queue: 16,
            snapshot_secs: 30,
            max_key_bytes: DEFAULT_MAX_KEY_BYTES,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            upload_slots: 2,
            mpi: None,
        }
    }
}

/// A running server: its address, and [`Server::shutdown`] (also on drop) to stop it.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<worker::Shared>,
    runtime: Option<tokio::runtime::Runtime>,
    stop_http: Option<tokio::sync::oneshot::Sender<()>>,
    http: Option<tokio::task::JoinHandle<()>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    /// Held (locked) while the server runs.
    _lock: std::fs::File,
}

impl Server {
    /// Opens the data folder (re-queueing the jobs a crash interrupted), binds the listener and
    /// starts the HTTP server and the job runners.
    pub fn start(cfg: Config) -> Result<Server> {
        if cfg.jobs == 0 {
            return Err(ServerError::Usage("--jobs must be at least 1".into()));
        }
        let store = store::Store::open(&cfg.data)?;
        // One server per data folder: a second one would run the same jobs.
        let lock_path = cfg.data.join("vsp-server.lock");
        let lock = std::fs::File::create(&lock_path)
            .map_err(|e| ServerError::io("cannot create", &lock_path, e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(ServerError::Usage(format!(
                    "another vsp serve is using {}",
                    cfg.data.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(ServerError::io("cannot lock", &lock_path, e))
            }
        }
        let recovered = store.recover()?;
        let shared = Arc::new(worker::Shared::new(cfg.clone(), store));
        if recovered > 0 {
            eprintln!("resuming {recovered} unfinished job(s) from their last snapshots");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| ServerError::io("cannot start the HTTP runtime", &cfg.data, e))?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(cfg.listen))
            .map_err(|e| ServerError::Listen(cfg.listen.to_string(), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError::Listen(cfg.listen.to_string(), e))?;
        let (stop_http, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = api::router(shared.clone());
        let http = runtime.spawn(async move {
            let r = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(e) = r {
                eprintln!("error: HTTP server: {e}");
            }
        });
        let workers = (0..cfg.jobs)
            .map(|i| {
                let sh = shared.clone();
                std::thread::Builder::new()
                    .name(format!("vsp-job-{i}"))
                    .spawn(move || worker::run(sh))
                    .map_err(|e| ServerError::io("cannot start a job runner", &cfg.data, e))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Server {
            addr,
            shared,
            runtime: Some(runtime),
            stop_http: Some(stop_http),
            http: Some(http),
            workers,
            _lock: lock,
        })
    }

    /// The address it listens on (the OS-assigned port when asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until SIGINT or SIGTERM, then stops (running jobs keep their last snapshot and
    /// resume at the next start).
    pub fn run_until_signal(mut self) -> Result<()> {
        if let Some(rt) = &self.runtime {
            rt.block_on(async {
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = async {
                        match term.as_mut() {
                            Some(t) => { t.recv().await; }
                            None => std::future::pending::<()>().await,
                        }
                    } => {}
                }
            });
        }
        eprintln!("stopping: running jobs save a snapshot and resume at the next start");
        self.shutdown();
        Ok(())
    }

    /// Stops the HTTP server and the job runners (each saves its job's state first).
    pub fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake_all();
        if let Some(tx) = self.stop_http.take() {
            let _ = tx.send(());
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        if let (Some(rt), Some(h)) = (self.runtime.as_ref(), self.http.take()) {
            // Open progress streams end with the runtime.
            let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(2), h).await });
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// `vsp serve token add NAME`: a new token for client `name`, returned once (only its hash is
/// stored).
pub fn token_add(data: &std::path::Path, name: &str) -> Result<String> {
    store::Store::open(data)?.add_token(name)
}

/// [`token_add`], the token written to `output` (checked first; created 0600) when given, else
/// returned.
pub fn token_add_to(
    data: &std::path::Path,
    name: &str,
    output: Option<&std::path::Path>,
) -> Result<Option<String>> {
    let Some(out) = output else {
        return token_add(data, name).map(Some);
    };
    vsp_platform::files::check_output(out, &[])?;
    let token = token_add(data, name)?;
    let access = vsp_platform::files::Access::Private;
    vsp_platform::files::write_atomic(out, format!("{token}\n").as_bytes(), access)?;
    Ok(None)
}

/// `vsp serve token revoke NAME`: removes every token of `name`; returns how many there were.
pub fn token_revoke(data: &std::path::Path, name: &str) -> Result<usize> {
    store::Store::open(data)?.revoke_tokens(name)
}

/// `vsp serve token list`: client names and their number of tokens.
pub fn token_list(data: &std::path::Path) -> Result<Vec<(String, usize)>> {
    store::Store::open(data)?.list_clients()
}
