//! The MPI executor: one [`Engine`] per rank of an MPI job (Open MPI through rsmpi), all evaluating the
//! same circuit under the same MUX plan, each running the tasks the static [`Partition`](crate::partition::Partition) gives it.
//! It is an [`Executor`](crate::engine) like the local one: the engine's cycle (slots, clock edge,
//! carried rings, statistics) is the same code; this module only says where tasks run and moves
//! values between ranks. It is not fault tolerant beyond stopping the whole job.
//!
//! * Every rank builds the same engine (same circuit, same evaluation key: each rank loads its own copy
//!   of the key files). Rank 0 sets the inputs and memories (it reads the request); every rank then
//!   calls [`Engine::join_mpi`], which gives all ranks rank 0's state, and runs the same calls
//!   ([`Engine::run`], [`Engine::reset`], [`Engine::step`]). Each call is collective.
//! * Within a cycle a rank runs its tasks as data flows: its worker threads (the list scheduler,
//!   cycle's critical path first) start any task whose operands are there, while its main thread posts
//!   a non-blocking send of each message (exactly the values another rank reads, one message per
//!   producing task and destination) as soon as the task making it is done, and polls for the
//!   messages it expects, releasing the tasks that waited for them. No rank waits for a level.
//!   Flip-flops and memories live on the rank that computes them; rank 0 receives the output bits
//!   every cycle and the rest of the state at [`Engine::gather_state`] (end of a run, snapshots).
//! * A CMUX RAM on 3 ranks or more is spread: its words cut into parts
//!   ([`crate::partition::ram_holder`]), each held by one rank, which reads its words' trees (a read
//!   joins the parts per data bit) and writes its words at the clock edge. Every rank keeps the RAM's
//!   bookkeeping (noise bounds, refresh round robin) in step, so all know the cells refreshed this
//!   cycle; each rank refreshes an even share of them, receiving them from their holders and sending
//!   them back ([`crate::partition::RamEdge`]). On 2 ranks a RAM is whole on one rank, refreshes
//!   spread the same way. Memory selectors (TRGSWs) travel like other values, so a memory's address
//!   bits and a ROM word's bits can be split over ranks ([`crate::partition::select_batch_for`]).
//! * Bootstrapping is deterministic and nothing in a cycle draws randomness, so each value is
//!   bit-identical to the one the single-process engine computes.
//! * An error on any rank inside a distributed call is fatal for the whole job: the rank prints it and
//!   calls `MPI_Abort`, which makes `mpirun` stop every rank (no rank waits forever for a message that
//!   will not come). A rank that dies is noticed by `mpirun`, which stops the others.
//!
//! | part | what it holds |
//! |---|---|
//! | this module | the MPI session, the job's [`World`], [`Engine::join_mpi`] |
//! | `executor` | the executor: a rank's plan, its cycle's dataflow and messages, the RAM edge, the gather |

use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use mpi::Threading;
use sha3::{Digest, Sha3_256};

use crate::backend::{Backend, Reader};
use crate::engine::ctx::internal;
use crate::engine::Engine;
use crate::error::CircuitError;

mod executor;

use executor::MpiExecutor;

/// True when this process was started by `mpirun`/`mpiexec` (Open MPI, MPICH or PMIx launchers).
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// An initialized MPI environment (finalized on drop). Create one per process, before any engine
/// joins the job, and keep it until the last MPI call.
pub struct MpiSession {
    _universe: Universe,
    world: World,
}

impl MpiSession {
    /// Initializes MPI (threads may compute while the main thread communicates).
    pub fn init() -> Result<MpiSession, CircuitError> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| CircuitError::Mpi("MPI was already initialized".into()))?;
        let w = universe.world();
        let world = World {
            rank: w.rank() as usize,
            size: w.size() as usize,
        };
        Ok(MpiSession {
            _universe: universe,
            world,
        })
    }
    /// The job's world (valid while this session lives).
    pub fn world(&self) -> World {
        self.world
    }
}

/// This process's place in the MPI job: its rank among `size` ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct World {
    rank: usize,
    size: usize,
}

impl World {
    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Ranks in the job.
    pub fn size(&self) -> usize {
        self.size
    }
    /// Prints `message` (prefixed with the rank) and stops every rank of the job with `code`.
    pub fn abort(&self, message: &str, code: i32) -> ! {
        abort_job(self.rank, message, code)
    }
    /// Checks that every rank passed the same `bytes` (a run's settings): a job whose ranks disagree
    /// would wait forever for each other, so a mismatch is an error on every rank.
    pub fn check_same(&self, what: &str, bytes: &[u8]) -> Result<(), CircuitError> {
        let world = SimpleCommunicator::world();
        let mine: [u8; 32] = Sha3_256::digest(bytes).into();
        let mut all = vec![0u8; 32 * self.size];
        world.all_gather_into(&mine[..], &mut all[..]);
        match all.chunks(32).position(|d| d != mine) {
            None => Ok(()),
            Some(r) => Err(CircuitError::Mpi(format!(
                "ranks {} and {r} were started with different {what}; every rank must run the same command",
                self.rank
            ))),
        }
    }
    /// Rank 0's `bytes`, on every rank (rank 0 passes `Some`, the others `None`).
    pub fn broadcast(&self, bytes: Option<Vec<u8>>) -> Vec<u8> {
        broadcast_bytes(&SimpleCommunicator::world(), bytes)
    }
}

pub(crate) fn abort_job(rank: usize, message: &str, code: i32) -> ! {
    eprintln!("error: MPI rank {rank}: {message}; stopping every rank of the job");
    mpi::traits::Communicator::abort(&SimpleCommunicator::world(), code)
}

fn broadcast_bytes(world: &SimpleCommunicator, bytes: Option<Vec<u8>>) -> Vec<u8> {
    let root = world.process_at_rank(0);
    let mut len = bytes.as_ref().map_or(0, |b| b.len() as u64);
    root.broadcast_into(&mut len);
    let mut buf = bytes.unwrap_or_else(|| vec![0u8; len as usize]);
    root.broadcast_into(&mut buf[..]);
    buf
}

impl<B: Backend> Engine<B> {
    /// Collective: makes this engine one rank of the MPI job of `world` — from now on every cycle is
    /// evaluated by all ranks together, each call collective — and gives every rank rank 0's state
    /// (cycle, inputs, flip-flops, memories, carried rings). Call it on every rank after rank 0 has
    /// set the inputs and memories or loaded a snapshot, before the first cycle. With one rank the
    /// engine runs as before. A rank whose circuit or key parameters differ from rank 0's stops the
    /// job.
    pub fn join_mpi(&mut self, world: World) -> Result<(), CircuitError> {
        if world.size <= 1 {
            return Ok(());
        }
        self.exec = Box::new(MpiExecutor::new(world.rank, world.size));
        self.rebuild_tasks();
        let (v, exec, ..) = self.parts();
        exec.prepare(&v).map_err(|e| exec.fail(e))?;
        self.share_state(world.rank);
        Ok(())
    }

    /// Rank 0's state (its snapshot and carried rings) on every rank.
    fn share_state(&mut self, rank: usize) {
        let b = &self.backend;
        let bytes = (rank == 0).then(|| {
            let mut out = Vec::new();
            let snap = self.snapshot_bytes();
            out.extend_from_slice(&(snap.len() as u64).to_le_bytes());
            out.extend_from_slice(&snap);
            for (r, v) in self.carried.rings.iter().zip(&self.carried.vars) {
                match r {
                    Some(r) => {
                        out.push(1);
                        b.encode_ring(r, &mut out);
                    }
                    None => out.push(0),
                }
                out.extend_from_slice(&v.to_le_bytes());
            }
            out
        });
        let bytes = broadcast_bytes(&SimpleCommunicator::world(), bytes);
        if rank == 0 {
            return;
        }
        let res = (|| -> Result<(), CircuitError> {
            let mut r = Reader::new(&bytes);
            let n = r.u64("shared state length")?;
            let snap = r.take(
                usize::try_from(n).map_err(|_| internal("shared state length"))?,
                "shared state",
            )?;
            self.restore_snapshot(snap)?;
            let b = &self.backend;
            let dffs = self.circuit.dffs().len();
            let (mut rings, mut vars) = (Vec::with_capacity(dffs), Vec::with_capacity(dffs));
            for _ in 0..dffs {
                rings.push(match r.u8("ring tag")? {
                    0 => None,
                    _ => Some(b.decode_ring(&mut r)?),
                });
                vars.push(f64::from_bits(r.u64("ring variance")?));
            }
            self.carried.rings = rings;
            self.carried.vars = vars;
            Ok(())
        })();
        if let Err(e) = res {
            abort_job(rank, &format!("cannot take rank 0's state: {e}"), 1);
        }
    }
}
