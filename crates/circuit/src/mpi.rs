//! The MPI executor: one [`Engine`] per rank of an MPI job (Open MPI through rsmpi), all evaluating the
//! same circuit under the same MUX plan, each running the tasks the static [`Partition`] gives it.
//!
//! * Every rank builds the same engine (same circuit, same evaluation key: each rank loads its own copy
//!   of the key files). Rank 0 sets the inputs and memories (it reads the request) and calls
//!   [`Engine::share_state`]; every rank then runs the same calls ([`Engine::run`], [`Engine::reset`],
//!   [`Engine::step`]). Each call is collective.
//! * Within a cycle a rank runs its tasks level by level (on its own threads); after each level it posts
//!   non-blocking sends of exactly the values other ranks read (one message per destination and level),
//!   and before a level it receives the messages that level needs. Flip-flops and memories live on the
//!   rank that computes them; rank 0 receives the output bits every cycle and the rest of the state at
//!   [`Engine::gather_state`] (end of a run, snapshots).
//! * At the clock edge each CMUX RAM's owner writes it (the write without its refresh), then every
//!   rank refreshes an even share of the cells the refresh policy picked: the owner sends each rank
//!   its cells and stores what comes back ([`crate::partition::RamEdge`]). Memory selectors (TRGSWs)
//!   travel like other values, so a memory's address bits and a ROM word's bits can be split over
//!   ranks ([`crate::partition::select_batch_for`]).
//! * Bootstrapping is deterministic and nothing in a cycle draws randomness, so each value is
//!   bit-identical to the one the single-process engine computes.
//! * An error on any rank inside a distributed call is fatal for the whole job: the rank prints it and
//!   calls `MPI_Abort`, which makes `mpirun` stop every rank (no rank waits forever for a message that
//!   will not come). A rank that dies is noticed by `mpirun`, which stops the others.

use std::cell::OnceCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use mpi::Threading;
use sha3::{Digest, Sha3_256};

use crate::backend::{Backend, Reader};
use crate::blueprint::MemImpl;
use crate::circuit::Node;
use crate::cmux::par_for;
use crate::engine::{internal, Ctx, CycleStats, Engine, MemState};
use crate::error::CircuitError;
use crate::partition::{item, refresh_share, task_io, Item, Partition};

/// Tags of the point-to-point messages: a cycle's message from level `L` uses tag `L + 1`; the state
/// gather uses its own tag. Levels beyond this bound are refused (the MPI standard guarantees tags up
/// to 32767).
const MAX_LEVELS: u32 = 32_000;
const TAG_GATHER: i32 = 32_700;
/// A RAM owner's cells to refresh, sent to each rank at the clock edge, and the refreshed cells back.
const TAG_REFRESH: i32 = 32_701;
const TAG_REFRESHED: i32 = 32_702;

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

fn abort_job(rank: usize, message: &str, code: i32) -> ! {
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

/// Rank 0's `flag` on every rank.
pub(crate) fn root_decides(flag: bool) -> bool {
    let world = SimpleCommunicator::world();
    let mut v = u8::from(flag);
    world.process_at_rank(0).broadcast_into(&mut v);
    v == 1
}

/// What a rank runs and sends in a cycle (derived from the partition).
#[derive(Debug)]
struct RankPlan {
    /// Its tasks, per level: those that need nothing the level's messages bring (run before
    /// waiting for them) and those that do.
    by_level: Vec<Vec<u32>>,
    late: Vec<Vec<u32>>,
    /// Messages it sends, per producing level + 1 (index 0: the cycle's sources).
    sends: Vec<Vec<usize>>,
    /// Messages it receives, per deadline (index `levels`: before the clock edge).
    recvs: Vec<Vec<usize>>,
    tasks: usize,
}

/// An engine's place in an MPI job.
#[derive(Debug)]
pub(crate) struct Dist {
    pub(crate) rank: usize,
    pub(crate) size: usize,
    part: Option<(Arc<Partition>, Arc<RankPlan>)>,
}

impl Dist {
    /// Forgets the partition (the task list changed).
    pub(crate) fn invalidate(&mut self) {
        self.part = None;
    }
}

impl<B: Backend> Engine<B> {
    /// Makes this engine one rank of the MPI job of `session`: from now on every cycle is evaluated by
    /// all ranks together (each call is collective). With one rank the engine runs as before.
    pub fn join_mpi(&mut self, world: World) {
        self.dist = (world.size > 1).then_some(Dist {
            rank: world.rank,
            size: world.size,
            part: None,
        });
    }

    /// The partition of this circuit over the job's ranks (computed once, on first use).
    pub fn partition(&mut self) -> Option<Arc<Partition>> {
        self.ensure_partition().ok().map(|(p, _)| p)
    }

    fn ensure_partition(&mut self) -> Result<(Arc<Partition>, Arc<RankPlan>), CircuitError> {
        let d = self
            .dist
            .as_ref()
            .ok_or_else(|| internal("not part of an MPI job"))?;
        if let Some((p, r)) = &d.part {
            return Ok((p.clone(), r.clone()));
        }
        let (rank, size) = (d.rank, d.size);
        let p = self.plan_partition(size);
        if p.levels >= MAX_LEVELS {
            return Err(CircuitError::Mpi(format!(
                "the circuit's task graph has {} levels, the MPI executor handles at most {MAX_LEVELS}",
                p.levels
            )));
        }
        let nl = p.levels as usize;
        let mut rp = RankPlan {
            by_level: vec![Vec::new(); nl],
            late: vec![Vec::new(); nl],
            sends: vec![Vec::new(); nl + 1],
            recvs: vec![Vec::new(); nl + 1],
            tasks: 0,
        };
        // Items this rank receives, with the level that first needs them.
        let mut arriving: std::collections::HashMap<u64, u32> = Default::default();
        for m in p.messages.iter().filter(|m| m.dst as usize == rank) {
            for &i in &m.items {
                arriving.insert(i, m.deadline);
            }
        }
        for (t, &o) in p.owner.iter().enumerate() {
            if o as usize == rank {
                let l = p.level[t];
                let io = task_io(&self.circuit, &self.plan, &p.batches, p.tasks[t]);
                let waits = io.reads.iter().any(|i| arriving.get(i) == Some(&l));
                let slot = if waits {
                    &mut rp.late
                } else {
                    &mut rp.by_level
                };
                slot[l as usize].push(t as u32);
                rp.tasks += 1;
            }
        }
        for (i, m) in p.messages.iter().enumerate() {
            if m.src as usize == rank {
                rp.sends[(m.level + 1) as usize].push(i);
            }
            if m.dst as usize == rank {
                rp.recvs[m.deadline as usize].push(i);
            }
        }
        let (p, rp) = (Arc::new(p), Arc::new(rp));
        if let Some(d) = &mut self.dist {
            d.part = Some((p.clone(), rp.clone()));
        }
        Ok((p, rp))
    }

    /// Collective: every rank takes rank 0's state (cycle, inputs, flip-flops, memories, carried
    /// rings). Call it after rank 0 has set the inputs and memories or loaded a snapshot, before the
    /// first cycle. A rank whose circuit or key parameters differ from rank 0's stops the job.
    pub fn share_state(&mut self) -> Result<(), CircuitError> {
        let Some(d) = &self.dist else {
            return Ok(());
        };
        let rank = d.rank;
        let world = SimpleCommunicator::world();
        let b = &self.backend;
        let bytes = (rank == 0).then(|| {
            let mut out = Vec::new();
            let snap = self.snapshot_bytes();
            out.extend_from_slice(&(snap.len() as u64).to_le_bytes());
            out.extend_from_slice(&snap);
            for (r, v) in self.dff_rings.iter().zip(&self.dff_ring_var) {
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
        let bytes = broadcast_bytes(&world, bytes);
        if rank == 0 {
            return Ok(());
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
            let mut rings = Vec::with_capacity(self.circuit.dffs().len());
            let mut vars = Vec::with_capacity(self.circuit.dffs().len());
            for _ in 0..self.circuit.dffs().len() {
                rings.push(match r.u8("ring tag")? {
                    0 => None,
                    _ => Some(b.decode_ring(&mut r)?),
                });
                vars.push(f64::from_bits(r.u64("ring variance")?));
            }
            self.dff_rings = rings;
            self.dff_ring_var = vars;
            Ok(())
        })();
        if let Err(e) = res {
            abort_job(rank, &format!("cannot take rank 0's state: {e}"), 1);
        }
        Ok(())
    }

    /// Collective: rank 0 receives the flip-flops, carried rings and memories the other ranks own, so
    /// that its [`Engine::state`] is the whole state ([`Engine::run`] does this at its end and before
    /// each snapshot).
    pub fn gather_state(&mut self) -> Result<(), CircuitError> {
        let Some(d) = &self.dist else {
            return Ok(());
        };
        let (rank, size) = (d.rank, d.size);
        let (p, _) = self.ensure_partition()?;
        let world = SimpleCommunicator::world();
        let b = &self.backend;
        if rank != 0 {
            let mut out = Vec::new();
            for (k, &o) in p.dff_owner.iter().enumerate() {
                if o as usize == rank {
                    b.encode_bit(&self.state.dffs[k], &mut out);
                    match &self.dff_rings[k] {
                        Some(r) => {
                            out.push(1);
                            b.encode_ring(r, &mut out);
                        }
                        None => out.push(0),
                    }
                    out.extend_from_slice(&self.dff_ring_var[k].to_le_bytes());
                }
            }
            for (m, &o) in p.mem_owner.iter().enumerate() {
                if o as usize == rank {
                    match &self.state.mems[m] {
                        MemState::Rom(x) => b.encode_rom(x, &mut out),
                        MemState::Ram(x) => b.encode_ram(x, &mut out),
                        MemState::Cells => {}
                    }
                }
            }
            world.process_at_rank(0).send_with_tag(&out[..], TAG_GATHER);
            return Ok(());
        }
        for src in 1..size {
            let (bytes, _) = world
                .process_at_rank(src as i32)
                .receive_vec_with_tag::<u8>(TAG_GATHER);
            let res = (|| -> Result<(), CircuitError> {
                let mut r = Reader::new(&bytes);
                for (k, &o) in p.dff_owner.iter().enumerate() {
                    if o as usize == src {
                        self.state.dffs[k] = b.decode_bit(&mut r)?;
                        self.dff_rings[k] = match r.u8("ring tag")? {
                            0 => None,
                            _ => Some(b.decode_ring(&mut r)?),
                        };
                        self.dff_ring_var[k] = f64::from_bits(r.u64("ring variance")?);
                    }
                }
                for (m, &o) in p.mem_owner.iter().enumerate() {
                    if o as usize == src {
                        match &mut self.state.mems[m] {
                            MemState::Rom(x) => *x = b.decode_rom(&mut r)?,
                            MemState::Ram(x) => *x = b.decode_ram(&mut r)?,
                            MemState::Cells => {}
                        }
                    }
                }
                if r.remaining() != 0 {
                    return Err(internal("trailing bytes in a gathered state"));
                }
                Ok(())
            })();
            if let Err(e) = res {
                abort_job(rank, &format!("state from rank {src}: {e}"), 1);
            }
        }
        Ok(())
    }
}

/// Cells of memory `m` (the most a rank is asked to refresh).
fn ram_cells(c: &crate::circuit::Circuit, m: usize) -> usize {
    let spec = &c.mems[m].spec;
    spec.words().saturating_mul(spec.data_width)
}

/// A rank's part of another rank's RAM refresh: receives its share of the cells from `owner`,
/// refreshes them on `threads` threads and sends them back.
fn refresh_for<B: Backend>(
    b: &B,
    world: &SimpleCommunicator,
    owner: u32,
    max_cells: usize,
    threads: usize,
) -> Result<(), CircuitError> {
    let (bytes, _) = world
        .process_at_rank(owner as i32)
        .receive_vec_with_tag::<u8>(TAG_REFRESH);
    let mut r = Reader::new(&bytes);
    let n = r.count(1, max_cells, "cells to refresh")?;
    let cells = (0..n)
        .map(|_| b.decode_ring(&mut r))
        .collect::<Result<Vec<_>, _>>()?;
    if r.remaining() != 0 {
        return Err(CircuitError::Mpi(format!(
            "cells to refresh from rank {owner} have {} bytes too many",
            r.remaining()
        )));
    }
    let fresh = par_for(cells.len(), threads, |k| b.refresh_ram_cell(&cells[k]))?;
    let mut out = Vec::new();
    for x in &fresh {
        b.encode_ring(x, &mut out);
    }
    world
        .process_at_rank(owner as i32)
        .send_with_tag(&out[..], TAG_REFRESHED);
    Ok(())
}

/// One distributed cycle (evaluate and latch) of `e`'s rank; any error stops the job.
pub(crate) fn cycle<B: Backend>(
    e: &mut Engine<B>,
    tick: &mut dyn FnMut(usize),
) -> Result<(), CircuitError> {
    let rank = e.dist.as_ref().map_or(0, |d| d.rank);
    match cycle_inner(e, tick) {
        Ok(()) => Ok(()),
        Err(err) => abort_job(rank, &err.to_string(), 1),
    }
}

fn cycle_inner<B: Backend>(
    e: &mut Engine<B>,
    tick: &mut dyn FnMut(usize),
) -> Result<(), CircuitError> {
    let (part, rp) = e.ensure_partition()?;
    let me = e.dist.as_ref().map_or(0, |d| d.rank) as u32;
    let world = SimpleCommunicator::world();
    let c = &*e.circuit;
    let b = &e.backend;
    let plan = &e.plan;
    let t0 = Instant::now();
    let values: Vec<OnceLock<B::Bit>> = (0..c.nodes.len()).map(|_| OnceLock::new()).collect();
    for (i, n) in c.nodes.iter().enumerate() {
        let v = match n {
            Node::Input(k) => e.state.inputs[*k as usize].clone(),
            Node::Const(v) => b.constant(*v),
            Node::Dff(k) if part.dff_owner[*k as usize] == me => e.state.dffs[*k as usize].clone(),
            _ => continue,
        };
        let _ = values[i].set(v);
    }
    let per_mem = |f: &dyn Fn(&crate::circuit::MemBlock) -> usize| -> Vec<usize> {
        c.mems
            .iter()
            .map(|m| if m.spec.imp == MemImpl::Cmux { f(m) } else { 0 })
            .collect()
    };
    let sels: Vec<Vec<OnceLock<B::Sel>>> = per_mem(&|m| m.addr.len())
        .into_iter()
        .map(|n| (0..n).map(|_| OnceLock::new()).collect())
        .collect();
    let wvals: Vec<Vec<OnceLock<B::WriteVal>>> = per_mem(&|m| m.wdata.len())
        .into_iter()
        .map(|n| (0..n).map(|_| OnceLock::new()).collect())
        .collect();
    let rings: Vec<OnceLock<B::Ring>> = (0..c.nodes.len()).map(|_| OnceLock::new()).collect();
    for (i, n) in c.nodes.iter().enumerate() {
        if let (Node::Const(v), true) = (n, plan.ring[i]) {
            let _ = rings[i].set(b.ring_constant(*v));
        }
    }
    let lifts = AtomicUsize::new(0);
    let msels: Vec<OnceLock<B::Sel>> = plan.sel_nodes.iter().map(|_| OnceLock::new()).collect();
    let ctx = Ctx {
        c,
        b,
        plan,
        values: &values,
        rings: &rings,
        dff_rings: &e.dff_rings,
        lifts: &lifts,
        sels: &sels,
        msels: &msels,
        batches: &part.batches,
        wvals: &wvals,
        mems: &e.state.mems,
    };
    let threads = e.threads.max(1);
    let tasks = &part.tasks;
    let busy = Mutex::new(0f64);
    let done = AtomicUsize::new(0);
    let run_level = |ts: &[u32]| -> Result<(), CircuitError> {
        if threads <= 1 || ts.len() <= 1 {
            let s = Instant::now();
            for &t in ts {
                ctx.exec(tasks[t as usize])?;
            }
            *busy.lock().map_err(|_| internal("timing lock"))? += s.elapsed().as_secs_f64();
            done.fetch_add(ts.len(), Ordering::Relaxed);
            return Ok(());
        }
        let next = AtomicUsize::new(0);
        let first_err: Mutex<Option<CircuitError>> = Mutex::new(None);
        std::thread::scope(|s| {
            for _ in 0..threads.min(ts.len()) {
                s.spawn(|| {
                    let st = Instant::now();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&t) = ts.get(i) else { break };
                        if let Err(err) = ctx.exec(tasks[t as usize]) {
                            if let Ok(mut g) = first_err.lock() {
                                g.get_or_insert(err);
                            }
                            next.store(ts.len(), Ordering::Relaxed);
                            break;
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Ok(mut g) = busy.lock() {
                        *g += st.elapsed().as_secs_f64();
                    }
                });
            }
        });
        match first_err.into_inner() {
            Ok(None) => Ok(()),
            Ok(Some(err)) => Err(err),
            Err(_) => Err(internal("error lock")),
        }
    };
    let encode = |items: &[u64]| -> Result<Vec<u8>, CircuitError> {
        let mut out = Vec::new();
        for &i in items {
            match item(i) {
                Item::Bit(n) => b.encode_bit(ctx.get(n)?, &mut out),
                Item::Ring(n) => b.encode_ring(ctx.ring(n)?, &mut out),
                Item::Sel { mem, bit } => b.encode_sel(ctx.sel(mem, bit)?, &mut out),
                Item::WriteVal { mem, bit } => b.encode_write_val(ctx.wval(mem, bit)?, &mut out),
            }
        }
        Ok(out)
    };
    let receive = |mi: usize| -> Result<(), CircuitError> {
        let m = &part.messages[mi];
        let (bytes, _) = world
            .process_at_rank(m.src as i32)
            .receive_vec_with_tag::<u8>((m.level + 1) as i32);
        let mut r = Reader::new(&bytes);
        for &i in &m.items {
            match item(i) {
                Item::Bit(n) => ctx.set(n, b.decode_bit(&mut r)?),
                Item::Ring(n) => ctx.set_ring(n, b.decode_ring(&mut r)?),
                Item::Sel { mem, bit } => ctx.set_sel(mem, bit, b.decode_sel(&mut r)?)?,
                Item::WriteVal { mem, bit } => {
                    ctx.set_wval(mem, bit, b.decode_write_val(&mut r)?)?
                }
            }
        }
        if r.remaining() != 0 {
            return Err(CircuitError::Mpi(format!(
                "message from rank {} has {} bytes too many",
                m.src,
                r.remaining()
            )));
        }
        Ok(())
    };
    // Send buffers outlive the request scope.
    let bufs: Vec<OnceCell<Vec<u8>>> = part.messages.iter().map(|_| OnceCell::new()).collect();
    let nl = part.levels as usize;
    let mut last_tick = Instant::now();
    mpi::request::scope(|scope| {
        let mut pending = Vec::new();
        let res = (|| -> Result<(), CircuitError> {
            // Step 0 sends the cycle's sources; step s > 0 runs level s − 1 and sends what it made.
            for step in 0..=nl {
                if step > 0 {
                    // What the level's messages do not feed runs while they travel.
                    let l = step - 1;
                    run_level(&rp.by_level[l])?;
                    for &mi in &rp.recvs[l] {
                        receive(mi)?;
                    }
                    run_level(&rp.late[l])?;
                }
                for &mi in &rp.sends[step] {
                    let m = &part.messages[mi];
                    let data = encode(&m.items)?;
                    let buf: &Vec<u8> = bufs[mi].get_or_init(|| data);
                    pending.push(world.process_at_rank(m.dst as i32).immediate_send_with_tag(
                        scope,
                        &buf[..],
                        (m.level + 1) as i32,
                    ));
                }
                if last_tick.elapsed() > Duration::from_millis(500) {
                    tick(done.load(Ordering::Relaxed));
                    last_tick = Instant::now();
                }
            }
            for &mi in &rp.recvs[nl] {
                receive(mi)?;
            }
            Ok(())
        })();
        if let Err(err) = res {
            abort_job(me as usize, &err.to_string(), 1);
        }
        for r in pending {
            r.wait();
        }
    });
    let eval_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    // The clock edge: rank 0 keeps the outputs, each rank latches its flip-flops and writes its RAMs.
    let outputs = if me == 0 {
        let mut o = Vec::new();
        for p in c.outputs() {
            for &n in &p.bits {
                o.push(ctx.get(n)?.clone());
            }
        }
        Some(o)
    } else {
        None
    };
    let mut dffs = e.state.dffs.clone();
    for (k, d) in c.dffs().iter().enumerate() {
        if part.dff_owner[k] == me {
            dffs[k] = ctx.get(d.d)?.clone();
        }
    }
    // RAM by RAM (the same order on every rank): the owner writes, then every rank refreshes its
    // share of the cells the policy picked (the owner sends them and takes them back).
    let size = e.dist.as_ref().map_or(1, |d| d.size);
    let mut wvals: Vec<Option<Vec<OnceLock<B::WriteVal>>>> = wvals.into_iter().map(Some).collect();
    for edge in &part.ram_edges {
        let m = edge.mem as usize;
        if edge.owner != me {
            refresh_for(b, &world, edge.owner, ram_cells(c, m), threads)?;
            continue;
        }
        let MemState::Ram(ram) = &mut e.state.mems[m] else {
            return Err(internal("RAM state missing"));
        };
        let addr = sels[m]
            .iter()
            .map(|s| s.get().ok_or_else(|| internal("address selector missing")))
            .collect::<Result<Vec<_>, _>>()?;
        let vals = wvals[m]
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|w| {
                w.into_inner()
                    .ok_or_else(|| internal("RAM write value missing"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let list = b.ram_write_unrefreshed(ram, &addr, &vals, threads)?;
        let ram_ro: &B::Ram = ram;
        let mut bufs = Vec::with_capacity(size);
        for r in 0..size {
            let share = refresh_share(list.len(), size, r);
            let mut out = Vec::new();
            out.extend_from_slice(&(share.len() as u64).to_le_bytes());
            if r as u32 != me {
                for &i in &list[share] {
                    b.encode_ring(&b.ram_cell(ram_ro, i)?, &mut out);
                }
            }
            bufs.push(out);
        }
        let own = refresh_share(list.len(), size, me as usize);
        let fresh = mpi::request::scope(|scope| {
            let reqs: Vec<_> = (0..size)
                .filter(|&r| r as u32 != me)
                .map(|r| {
                    world.process_at_rank(r as i32).immediate_send_with_tag(
                        scope,
                        &bufs[r][..],
                        TAG_REFRESH,
                    )
                })
                .collect();
            let fresh = par_for(own.len(), threads, |k| {
                b.refresh_ram_cell(&b.ram_cell(ram_ro, list[own.start + k])?)
            });
            for q in reqs {
                q.wait();
            }
            fresh
        })?;
        for (k, cell) in fresh.into_iter().enumerate() {
            b.set_ram_cell(ram, list[own.start + k], cell)?;
        }
        for r in (0..size).filter(|&r| r as u32 != me) {
            let share = refresh_share(list.len(), size, r);
            let (bytes, _) = world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u8>(TAG_REFRESHED);
            let mut rd = Reader::new(&bytes);
            for &i in &list[share] {
                b.set_ram_cell(ram, i, b.decode_ring(&mut rd)?)?;
            }
            if rd.remaining() != 0 {
                return Err(CircuitError::Mpi(format!(
                    "refreshed cells from rank {r} have {} bytes too many",
                    rd.remaining()
                )));
            }
        }
    }
    // Carried rings, decided identically on every rank (the variances and which rings exist are
    // known everywhere); a rank keeps the rings of its own flip-flops and a placeholder for the
    // others' (only the owner lifts a flip-flop).
    let rv = e.carried_ring_vars();
    let mut dff_rings = Vec::with_capacity(c.dffs().len());
    let mut dff_ring_var = Vec::with_capacity(c.dffs().len());
    for (k, d) in c.dffs().iter().enumerate() {
        let v = rv.get(d.d as usize).copied().unwrap_or(f64::INFINITY);
        let carried = e.plan.within_budget(k, v) && part.ring_exists[d.d as usize];
        let ring = if !carried {
            None
        } else if part.dff_owner[k] == me {
            Some(
                rings[d.d as usize]
                    .get()
                    .cloned()
                    .ok_or_else(|| internal("carried ring missing"))?,
            )
        } else {
            Some(b.ring_constant(false))
        };
        dff_ring_var.push(if ring.is_some() { v } else { 0.0 });
        dff_rings.push(ring);
    }
    e.state.dffs = dffs;
    e.dff_rings = dff_rings;
    e.dff_ring_var = dff_ring_var;
    e.state.outputs = outputs;
    e.last = CycleStats {
        cycle: e.state.cycle,
        eval_seconds,
        latch_seconds: t1.elapsed().as_secs_f64(),
        busy_seconds: busy.into_inner().unwrap_or(0.0),
        threads,
        tasks: rp.tasks,
        lifts: lifts.into_inner(),
    };
    Ok(())
}
