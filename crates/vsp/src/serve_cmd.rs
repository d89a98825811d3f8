//! `vsp serve` (Bob as a service) and `vsp remote` (its client): argument parsing and printing
//! over vsp-server (docs/server.md).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use vsp_platform::server::Watch;
use vsp_server::client::{Client, Follower, Submission, SubmitFollow, UntilFinished};
use vsp_server::{Config, Server};

use crate::print_json;
use crate::progress::{fmt_bytes, Shown};

/// `vsp serve`: the options of the server, or `token …`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Serve {
    #[command(subcommand)]
    token: Option<ServeCommand>,
    /// Address to listen on (plain HTTP: put a TLS reverse proxy in front for other hosts).
    #[arg(long, default_value = "127.0.0.1:8470")]
    listen: SocketAddr,
    /// Data folder: the job database, keys, requests, snapshots and results.
    #[arg(long, required = true)]
    data: Option<PathBuf>,
    /// Jobs run at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: u64,
    /// Worker threads of each job (default: all cores).
    #[arg(short, long, value_parser = vsp_platform::server::parse_threads)]
    threads: Option<usize>,
    /// Jobs waiting beyond the running ones; more submissions are answered 503.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    queue: u64,
    /// A running job writes a snapshot at most this often (seconds; 0: after every cycle).
    #[arg(long, default_value_t = 30)]
    snapshot_secs: u64,
    /// Largest evaluation key accepted (bytes).
    #[arg(long, default_value_t = vsp_server::DEFAULT_MAX_KEY_BYTES)]
    max_key_bytes: u64,
    /// Largest request accepted (bytes).
    #[arg(long, default_value_t = vsp_server::DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: u64,
    #[command(flatten)]
    mpi: MpiArgs,
}

/// `vsp serve --mpi-ranks P …`: every job under `mpirun` (docs/server.md, docs/mpi.md).
#[derive(Args)]
struct MpiArgs {
    /// Run every job under mpirun on this many ranks (needs a vsp built with --features mpi;
    /// --threads is then per rank).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    mpi_ranks: Option<u32>,
    /// Open MPI hostfile of the jobs' machines (keys, netlists and this vsp at the same paths on
    /// every machine: docs/mpi.md).
    #[arg(long, requires = "mpi_ranks")]
    mpi_hostfile: Option<PathBuf>,
    /// The MPI launcher [default: mpirun].
    #[arg(long, requires = "mpi_ranks")]
    mpirun: Option<PathBuf>,
    /// One more launcher argument, given before the program (repeatable), e.g.
    /// --mpi-arg=--oversubscribe.
    #[arg(
        long = "mpi-arg",
        value_name = "ARG",
        requires = "mpi_ranks",
        allow_hyphen_values = true
    )]
    mpi_args: Vec<String>,
    /// A job under mpirun writes a snapshot every this many cycles.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    mpi_snapshot_every: u64,
}

impl MpiArgs {
    fn launch(self) -> Result<Option<vsp_server::MpiLaunch>> {
        let Some(ranks) = self.mpi_ranks else {
            return Ok(None);
        };
        Ok(Some(vsp_server::MpiLaunch::for_this_program(
            ranks,
            self.mpi_hostfile,
            self.mpirun,
            self.mpi_args,
            self.mpi_snapshot_every,
            cfg!(feature = "mpi"),
        )?))
    }
}

#[derive(Subcommand)]
enum ServeCommand {
    /// Client tokens.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Make a token for client NAME and print it (only its hash is stored).
    Add {
        #[command(flatten)]
        client: ClientArg,
        /// Write the token to this file (created 0600) instead of printing it.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Revoke every token of client NAME.
    Revoke(ClientArg),
    /// List the clients that have tokens.
    List(DataArg),
}

/// A client of the server's (`token add`, `token revoke`).
#[derive(Args)]
struct ClientArg {
    /// The client's name.
    name: String,
    #[command(flatten)]
    data: DataArg,
}

/// `--data` of the token commands.
#[derive(Args)]
struct DataArg {
    /// The server's data folder (as given to `vsp serve --data`).
    #[arg(long)]
    data: PathBuf,
}

impl Serve {
    pub fn run(mut self, shown: &mut Shown) -> Result<()> {
        if let Some(ServeCommand::Token(t)) = self.token.take() {
            return t.run(shown);
        }
        let cfg = self.config()?;
        let (ranks, data, jobs) = (
            cfg.mpi.as_ref().map(|m| m.ranks),
            cfg.data.clone(),
            cfg.jobs,
        );
        let server = Server::start(cfg)?;
        // The address goes to stdout (a script that asked for port 0 reads it there).
        println!("listening on http://{}", server.addr());
        shown.note(&format!(
            "vsp serve: data in {}, {jobs} job(s) at a time; Ctrl-C stops (running jobs resume at the next start)",
            data.display(),
        ));
        if let Some(r) = ranks {
            shown.note(&format!("every job runs under mpirun on {r} ranks"));
        }
        Ok(server.run_until_signal()?)
    }

    /// The server's configuration.
    fn config(self) -> Result<Config> {
        let data = self.data.ok_or_else(|| anyhow!("--data DIR is required"))?;
        Ok(Config {
            listen: self.listen,
            jobs: self.jobs as usize,
            threads: self.threads,
            queue: self.queue as usize,
            snapshot_secs: self.snapshot_secs,
            max_key_bytes: self.max_key_bytes,
            max_request_bytes: self.max_request_bytes,
            mpi: self.mpi.launch()?,
            ..Config::new(data)
        })
    }
}

impl TokenCommand {
    fn run(self, shown: &mut Shown) -> Result<()> {
        match self {
            TokenCommand::Add { client, output } => {
                let (name, data) = (client.name, client.data.data);
                if let Some(token) = vsp_server::token_add_to(&data, &name, output.as_deref())? {
                    println!("{token}");
                }
                let note =
                    "give it to the client (`vsp remote --token-file`); it is not shown again";
                shown.note(&format!("token for client {name:?}: {note}"));
            }
            TokenCommand::Revoke(ClientArg { name, data }) => {
                let n = vsp_server::token_revoke(&data.data, &name)?;
                println!("revoked {n} token(s) of {name:?}");
            }
            TokenCommand::List(DataArg { data }) => {
                for (name, n) in vsp_server::token_list(&data)? {
                    println!("{name}\t{n} token(s)");
                }
            }
        }
        Ok(())
    }
}

/// `vsp remote`: the client.
#[derive(Args)]
pub struct Remote {
    /// The server, e.g. http://127.0.0.1:8470.
    #[arg(long)]
    server: String,
    /// File holding the token (`vsp serve token add NAME` prints one).
    #[arg(long)]
    token_file: PathBuf,
    #[command(subcommand)]
    command: RemoteCommand,
}

#[derive(Subcommand)]
enum RemoteCommand {
    /// Upload the evaluation key (once: the server names it by its key id).
    KeyUpload {
        /// The evaluation key file (`vsp genbkey`).
        key: PathBuf,
    },
    /// Submit a request (`vsp enc`) for a number of cycles; prints the job id.
    Submit(SubmitArgs),
    /// Give a done job more cycles (it continues from where it ended).
    Extend {
        #[command(flatten)]
        job: JobArg,
        /// Cycles to add.
        #[arg(short, long)]
        cycles: u64,
    },
    /// A job's status (all of this client's jobs without an id).
    Status {
        /// The job id (all of this client's jobs without one).
        id: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Follow a job's progress until it ends.
    Watch(JobArg),
    /// Fetch a done job's result.
    Fetch {
        #[command(flatten)]
        job: JobArg,
        /// Where to write the result file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Cancel a queued or running job.
    Cancel(JobArg),
    /// Delete a job and its files on the server.
    Delete(JobArg),
}

/// The job a remote command is about.
#[derive(Args)]
struct JobArg {
    /// The job id (`vsp remote submit` prints it).
    id: String,
}

#[derive(Args)]
struct SubmitArgs {
    /// The request file (`vsp enc`, or `vsp circuit enc` with --netlist).
    request: PathBuf,
    /// Cycles to run (the first budget with --until-finished).
    #[arg(short, long)]
    cycles: u64,
    /// pearl or ruby.
    #[arg(long, default_value = "pearl", conflicts_with = "netlist")]
    core: String,
    /// A circuit job: the request is `vsp circuit enc`'s for this Yosys JSON netlist
    /// (uploaded first unless the server has it).
    #[arg(long, conflicts_with = "until_finished")]
    netlist: Option<PathBuf>,
    /// A circuit job: apply one public reset cycle first (a 1-bit `@reset` input).
    #[arg(long, requires = "netlist")]
    reset: bool,
    /// Follow the job to its end (a progress bar), then fetch the result.
    #[arg(long)]
    wait: bool,
    /// With --wait or --until-finished: where to write the result.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Run until the program finishes: the server cannot see the encrypted finish flag, so
    /// the client decrypts each result with this secret key and extends the job by --step
    /// cycles while the flag is not set. --cycles is the first budget.
    #[arg(long, value_name = "SECRET_KEY")]
    until_finished: Option<PathBuf>,
    /// With --until-finished: cycles added each time the program has not finished.
    #[arg(long, default_value_t = 8, requires = "until_finished")]
    step: u64,
    /// With --until-finished: give up after this many cycles in all.
    #[arg(long, default_value_t = 100_000, requires = "until_finished")]
    max_cycles: u64,
}

impl Remote {
    pub fn run(self, shown: &mut Shown) -> Result<()> {
        let c = Client::with_token_file(&self.server, &self.token_file)?;
        match self.command {
            RemoteCommand::KeyUpload { key } => println!("{}", c.key_upload(&key)?),
            RemoteCommand::Submit(s) => submit(s, &c, shown)?,
            RemoteCommand::Status { id, json } => {
                let all = c.statuses(id.as_deref())?;
                if json {
                    return print_json(&all);
                }
                all.iter().for_each(|s| println!("{}", s.line()));
            }
            RemoteCommand::Watch(job) => {
                let st = c.wait_done(&job.id, &mut |s| shown.status(s));
                shown.ran();
                println!("{}", st?.line());
            }
            RemoteCommand::Fetch { job, output } => {
                let n = fmt_bytes(c.fetch(&job.id, &output)?);
                shown.note(&format!("wrote result {} ({n})", output.display()));
            }
            RemoteCommand::Cancel(job) => println!("{}", c.cancel(&job.id)?.line()),
            RemoteCommand::Extend { job, cycles } => {
                println!("{}", c.extend(&job.id, cycles)?.line())
            }
            RemoteCommand::Delete(JobArg { id }) => {
                c.delete(&id)?;
                println!("deleted {id}");
            }
        }
        Ok(())
    }
}

/// `vsp remote submit`: the job id; with --wait or --until-finished the job followed to its
/// result.
fn submit(a: SubmitArgs, c: &Client, shown: &mut Shown) -> Result<()> {
    let (step, max_cycles) = (a.step, a.max_cycles);
    let until = a.until_finished.as_deref();
    let job = Submission {
        request: &a.request,
        cycles: a.cycles,
        core: &a.core,
        netlist: a.netlist.as_deref(),
        reset: a.reset,
    };
    let s = SubmitFollow {
        job,
        wait: a.wait,
        until_finished: until.map(|key| UntilFinished {
            key,
            step,
            max_cycles,
        }),
        output: a.output.as_deref(),
    };
    let Some(done) = c.submit_followed(&s, shown)? else {
        return Ok(());
    };
    done.finished_line().iter().for_each(|l| println!("{l}"));
    shown.end(done)
}
