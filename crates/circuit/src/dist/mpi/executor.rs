//! The MPI [`Executor`]: a rank's share of the [`Partition`], run as data flows (the list scheduler's
//! workers compute while the main thread, the only one calling MPI, sends results as they appear and
//! releases tasks as their operands arrive: [`run_pumped`]); the distributed part of a RAM's clock
//! edge (write on the owner, refreshes spread over every rank); and the gather of the state on rank 0. Slots, latching, carried rings and
//! statistics are the engine's (`engine::cycle`), as for the local executor.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;

use super::abort_job;
use crate::backend::{Backend, Reader};
use crate::circuit::NodeId;
use crate::engine::ctx::{at, got, internal, Ctx};
use crate::engine::executor::{DagRun, Executor, View};
use crate::engine::tasks::{Grain, Task};
use crate::engine::{Carried, Item, MemState, State};
use crate::error::CircuitError;
use crate::partition::{grain_for, refreshers, Partition, Placement, RamEdge};
use crate::schedule::{run_pumped, Batching, Pump, Pumped, TaskGraph};
use std::sync::OnceLock;

/// Tags of the point-to-point messages: a cycle's `n`-th message from one rank to another
/// ([`Message::seq`](crate::partition::Message)) uses tag `n + 1`, plus [`MAX_MESSAGES`] in odd
/// cycles (a rank already in the next cycle cannot be mistaken for this one's); the state gather and
/// the clock edge use their own tags. More messages between two ranks in a cycle are refused (the
/// MPI standard guarantees tags up to 32767).
const MAX_MESSAGES: u32 = 16_000;
const TAG_GATHER: i32 = 32_700;
/// A RAM owner's cells to refresh, sent to each rank at the clock edge, and the refreshed cells back.
const TAG_REFRESH: i32 = 32_701;
const TAG_REFRESHED: i32 = 32_702;
/// How often a rank looks for arrived messages while its tasks run (also whenever one of its tasks
/// finishes), and reports progress.
const POLL: Duration = Duration::from_millis(1);
const TICK: Duration = Duration::from_millis(500);

/// What a rank runs, sends and receives in a cycle (derived from the partition): its tasks as a
/// graph of their own, each also waiting for the messages that bring its operands.
#[derive(Debug)]
struct RankPlan {
    /// Its tasks, in topological order, and their graph: predecessors on this rank, priorities the
    /// upward ranks in the whole cycle's graph (the cycle's critical path first).
    tasks: Vec<Task>,
    graph: TaskGraph,
    /// Per task: the messages it waits for.
    external: Vec<u32>,
    /// Per message it receives (index into the partition's messages): the tasks waiting for it.
    waiting: Vec<(usize, Vec<u32>)>,
    /// Per task: the messages it sends (positions in `sends`) that need its results.
    feeds: Vec<Vec<u32>>,
    /// Messages it sends, with how many of its tasks make their items (0: the cycle's sources).
    sends: Vec<(usize, u32)>,
    /// Whether the rank follows the partition's planned order ([`Partition::planned_order`]);
    /// otherwise it batches ready gate bootstraps as the local executor does.
    ordered: bool,
}

impl RankPlan {
    /// The plan of rank `rank`; `one_thread`: the rank runs its tasks in the partition's planned
    /// order where it has one ([`Partition::planned_order`]).
    fn new(p: &Partition, rank: usize, one_thread: bool) -> RankPlan {
        let me = rank as u32;
        let set = &p.set;
        let mut local = vec![u32::MAX; p.owner.len()];
        let mut global = Vec::new();
        for (t, &o) in p.owner.iter().enumerate() {
            if o == me {
                local[t] = global.len() as u32;
                global.push(t);
            }
        }
        // The message bringing each item this rank receives.
        let mut arriving: HashMap<Item, usize> = HashMap::new();
        let mut waiting: Vec<(usize, Vec<u32>)> = Vec::new();
        for (i, m) in p.messages.iter().enumerate().filter(|(_, m)| m.dst == me) {
            for &item in &m.items {
                arriving.insert(item, waiting.len());
            }
            waiting.push((i, Vec::new()));
        }
        let before = p.planned_order().filter(|_| one_thread);
        let ordered = before.is_some();
        let mut preds = Vec::with_capacity(global.len());
        let mut external = Vec::with_capacity(global.len());
        for (lt, &t) in global.iter().enumerate() {
            let (mut ps, mut ms) = (Vec::new(), Vec::new());
            if let Some(u) = before.as_ref().map(|b| b[t]).filter(|&u| u != u32::MAX) {
                ps.push(local[u as usize]);
            }
            for i in &set.facts[t].reads {
                match set.producer.get(i) {
                    Some(&q) if p.owner[q as usize] == me => ps.push(local[q as usize]),
                    _ => ms.extend(arriving.get(i).copied()),
                }
            }
            ps.sort_unstable();
            ps.dedup();
            ms.sort_unstable();
            ms.dedup();
            for &w in &ms {
                waiting[w].1.push(lt as u32);
            }
            external.push(ms.len() as u32);
            preds.push(ps);
        }
        let mut feeds = vec![Vec::new(); global.len()];
        let mut sends = Vec::new();
        for (i, m) in p.messages.iter().enumerate().filter(|(_, m)| m.src == me) {
            let mut makers: Vec<u32> = m
                .items
                .iter()
                .filter_map(|item| set.producer.get(item))
                .map(|&q| local[q as usize])
                .collect();
            makers.sort_unstable();
            makers.dedup();
            for &lt in &makers {
                feeds[lt as usize].push(sends.len() as u32);
            }
            sends.push((i, makers.len() as u32));
        }
        let priority = global.iter().map(|&t| p.priority[t]).collect();
        RankPlan {
            ordered,
            tasks: global.iter().map(|&t| set.tasks[t]).collect(),
            graph: TaskGraph::with_priorities(&preds, priority),
            external,
            waiting,
            feeds,
            sends,
        }
    }
}

/// The executor of one rank of `size`.
pub(super) struct MpiExecutor {
    rank: usize,
    size: usize,
    /// Cycles run (every rank runs the same ones): its parity picks the messages' tags.
    cycles: u64,
    /// The partition of the engine's current task table and this rank's part of it.
    part: Option<(Arc<Partition>, RankPlan)>,
}

impl MpiExecutor {
    pub(super) fn new(rank: usize, size: usize) -> MpiExecutor {
        MpiExecutor {
            rank,
            size,
            cycles: 0,
            part: None,
        }
    }

    fn part(&self) -> Result<&(Arc<Partition>, RankPlan), CircuitError> {
        self.part
            .as_ref()
            .ok_or_else(|| internal("the MPI executor was not prepared"))
    }
    fn me(&self) -> u32 {
        self.rank as u32
    }
}

/// Item `i` of `ctx`'s slots, encoded by the backend.
fn encode<B: Backend>(ctx: &Ctx<'_, B>, i: Item, out: &mut Vec<u8>) -> Result<(), CircuitError> {
    let b = ctx.b;
    match i {
        Item::Bit(n) => b.encode_bit(ctx.get(n)?, out),
        Item::Ring(n) => b.encode_ring(ctx.ring(n)?, out),
        Item::Sel { mem, bit } => b.encode_sel(got(at(ctx.sels, mem, bit)?, "selector")?, out),
        Item::WriteVal { mem, bit } => {
            b.encode_write_val(got(at(ctx.wvals, mem, bit)?, "write value")?, out)
        }
        Item::RamPart { mem, part, bit } => {
            let w = ctx.c.mems[mem as usize].rdata.len() as u32;
            b.encode_ring(
                got(at(ctx.ram_parts, mem, part * w + bit)?, "RAM read part")?,
                out,
            )
        }
        Item::MuxSel(slot) => b.encode_sel(got(msel(ctx, slot)?, "MUX select")?, out),
    }
    Ok(())
}

/// The slot of MUX-plan select `slot`.
fn msel<'a, B: Backend>(ctx: &Ctx<'a, B>, slot: u32) -> Result<&'a OnceLock<B::Sel>, CircuitError> {
    ctx.msels
        .get(slot as usize)
        .ok_or_else(|| internal("MUX select out of range"))
}

/// Decodes the items of message `m` from `bytes` into their slots of `ctx`.
fn decode_message<B: Backend>(
    ctx: &Ctx<'_, B>,
    m: &crate::partition::Message,
    bytes: &[u8],
) -> Result<(), CircuitError> {
    let mut r = Reader::new(bytes);
    for &i in &m.items {
        decode(ctx, i, &mut r)?;
    }
    if r.remaining() != 0 {
        return Err(CircuitError::Mpi(format!(
            "message from rank {} has {} bytes too many",
            m.src,
            r.remaining()
        )));
    }
    Ok(())
}

/// Decodes item `i` (written by [`encode`]) into its slot of `ctx`.
fn decode<B: Backend>(ctx: &Ctx<'_, B>, i: Item, r: &mut Reader<'_>) -> Result<(), CircuitError> {
    let b = ctx.b;
    match i {
        Item::Bit(n) => ctx.set(n, b.decode_bit(r)?),
        Item::Ring(n) => ctx.set_ring(n, b.decode_ring(r)?),
        Item::Sel { mem, bit } => {
            let _ = at(ctx.sels, mem, bit)?.set(b.decode_sel(r)?);
        }
        Item::WriteVal { mem, bit } => {
            let _ = at(ctx.wvals, mem, bit)?.set(b.decode_write_val(r)?);
        }
        Item::RamPart { mem, part, bit } => {
            let w = ctx.c.mems[mem as usize].rdata.len() as u32;
            let _ = at(ctx.ram_parts, mem, part * w + bit)?.set(b.decode_ring(r)?);
        }
        Item::MuxSel(slot) => {
            let _ = msel(ctx, slot)?.set(b.decode_sel(r)?);
        }
    }
    Ok(())
}

impl<B: Backend> Executor<B> for MpiExecutor {
    fn grain(&self) -> Grain {
        grain_for(self.size)
    }
    fn tasks_changed(&mut self) {
        self.part = None;
    }
    fn prepare(&mut self, v: &View<'_, B>) -> Result<(), CircuitError> {
        if self.part.is_some() {
            return Ok(());
        }
        let p = Partition::of(
            v.c,
            v.b,
            v.plan,
            v.tasks.clone(),
            self.size,
            Placement::Best,
        );
        let most = p.messages.iter().map(|m| m.seq + 1).max().unwrap_or(0);
        if most >= MAX_MESSAGES {
            return Err(CircuitError::Mpi(format!(
                "the partition sends {most} messages a cycle from one rank to another, the MPI executor handles at most {MAX_MESSAGES}"
            )));
        }
        let rp = RankPlan::new(&p, self.rank, v.threads == 1);
        self.part = Some((Arc::new(p), rp));
        Ok(())
    }
    fn is_root(&self) -> bool {
        self.rank == 0
    }
    fn holds_dff(&self, k: usize) -> bool {
        self.part
            .as_ref()
            .is_none_or(|(p, _)| p.dff_owner[k] == self.me())
    }
    fn holds_mem(&self, m: usize) -> bool {
        self.part.as_ref().is_none_or(|(p, _)| {
            match p.ram_edges.iter().find(|e| e.mem as usize == m) {
                Some(e) => e.holders.contains(&self.me()),
                None => p.mem_owner[m] == self.me(),
            }
        })
    }
    fn ring_exists(&self, n: NodeId) -> Option<bool> {
        self.part.as_ref().map(|(p, _)| p.ring_exists[n as usize])
    }
    fn agree(&self, flag: bool) -> bool {
        let world = SimpleCommunicator::world();
        let mut v = u8::from(flag);
        world.process_at_rank(0).broadcast_into(&mut v);
        v == 1
    }
    fn fail(&self, e: CircuitError) -> CircuitError {
        abort_job(self.rank, &e.to_string(), 1)
    }

    fn run_dag(
        &mut self,
        v: &View<'_, B>,
        ctx: &Ctx<'_, B>,
        tick: &mut dyn FnMut(usize),
    ) -> Result<DagRun, CircuitError> {
        let base = if self.cycles % 2 == 1 {
            MAX_MESSAGES
        } else {
            0
        };
        self.cycles += 1;
        let (part, rp) = self.part()?;
        let world = SimpleCommunicator::world();
        let tag = |k: usize| (base + part.messages[k].seq + 1) as i32;
        // The message each (source, tag) brings this cycle (position in `rp.waiting`).
        let expected: HashMap<(i32, i32), usize> = rp
            .waiting
            .iter()
            .enumerate()
            .map(|(w, &(k, _))| ((part.messages[k].src as i32, tag(k)), w))
            .collect();
        // A batch of circuit bootstraps takes the rank's idle threads (when it has more than one).
        let exec = |t: usize, lanes: usize| ctx.exec(rp.tasks[t], lanes);
        let wide = |t: usize| ctx.wide(rp.tasks[t]);
        // Ready gate bootstraps beyond the free threads run in batches, as in the local executor,
        // unless the rank runs its tasks in the planned order (one at a time, the cycle's critical
        // path first).
        let batchable = |t: usize| ctx.batchable(rp.tasks[t]);
        let exec_batch = |ts: &[usize]| {
            let group: Vec<_> = ts.iter().map(|&t| rp.tasks[t]).collect();
            ctx.exec_batch(&group)
        };
        let batching = Batching {
            max: ctx.b.boot_batch_max(),
            batchable: &batchable,
            exec: &exec_batch,
        };
        let batching = (!rp.ordered).then_some(&batching);
        // Send buffers outlive the request scope.
        let bufs: Vec<OnceCell<Vec<u8>>> = rp.sends.iter().map(|_| OnceCell::new()).collect();
        // Per message sent: its items' makers still running; per message received: whether it came.
        let mut makers: Vec<u32> = rp.sends.iter().map(|&(_, k)| k).collect();
        let mut arrived = vec![false; rp.waiting.len()];
        let (mut to_send, mut to_receive) = (rp.sends.len(), rp.waiting.len());
        let mut started = false;
        let timing = mpi::request::scope(|scope| {
            let mut pending = Vec::new();
            let mut send = |k: usize| -> Result<(), CircuitError> {
                let m = &part.messages[rp.sends[k].0];
                let mut data = Vec::new();
                for &i in &m.items {
                    encode(ctx, i, &mut data)?;
                }
                let buf: &Vec<u8> = bufs[k].get_or_init(|| data);
                pending.push(world.process_at_rank(m.dst as i32).immediate_send_with_tag(
                    scope,
                    &buf[..],
                    tag(rp.sends[k].0),
                ));
                Ok(())
            };
            // The calling thread posts each message once its makers are done and receives what
            // has come (probing each expected message: other ranks' clock-edge messages may be
            // queued too), releasing the tasks that waited for it.
            let mut poll = |finished: &[u32]| -> Result<Pumped, CircuitError> {
                if !started {
                    started = true;
                    for k in (0..rp.sends.len()).filter(|&k| rp.sends[k].1 == 0) {
                        send(k)?;
                        to_send -= 1;
                    }
                }
                for &t in finished {
                    for &k in &rp.feeds[t as usize] {
                        let k = k as usize;
                        makers[k] -= 1;
                        if makers[k] == 0 {
                            send(k)?;
                            to_send -= 1;
                        }
                    }
                }
                let mut released = Vec::new();
                let mut take = |w: usize, bytes: Vec<u8>, arrived: &mut [bool]| {
                    let (k, tasks) = &rp.waiting[w];
                    arrived[w] = true;
                    to_receive -= 1;
                    released.extend_from_slice(tasks);
                    decode_message(ctx, &part.messages[*k], &bytes)
                };
                // Whatever has come, in arrival order, while it is this cycle's; behind anything
                // else (another cycle's message, a clock-edge one), each expected message in turn.
                let mut blocked = false;
                while arrived.iter().any(|&a| !a) {
                    let Some(st) = world.any_process().immediate_probe() else {
                        break;
                    };
                    let key = (st.source_rank(), st.tag());
                    match expected.get(&key) {
                        Some(&w) if !arrived[w] => {
                            let (bytes, _) = world
                                .process_at_rank(key.0)
                                .receive_vec_with_tag::<u8>(key.1);
                            take(w, bytes, &mut arrived)?;
                        }
                        _ => {
                            blocked = true;
                            break;
                        }
                    }
                }
                if blocked {
                    for (w, &(k, _)) in rp.waiting.iter().enumerate() {
                        if arrived[w] {
                            continue;
                        }
                        let src = world.process_at_rank(part.messages[k].src as i32);
                        if let Some(probed) = src.immediate_matched_probe_with_tag(tag(k)) {
                            take(w, probed.matched_receive_vec::<u8>().0, &mut arrived)?;
                        }
                    }
                }
                Ok(Pumped {
                    released,
                    idle: to_send == 0 && to_receive == 0,
                })
            };
            let pump = Pump {
                external: &rp.external,
                every: POLL,
                poll: &mut poll,
            };
            let res = run_pumped(
                &rp.graph,
                v.threads,
                &exec,
                &wide,
                batching,
                Some(pump),
                TICK,
                tick,
            );
            // Pending sends may not be abandoned: a failed rank stops the job here.
            let timing = match res {
                Ok(t) => t,
                Err(err) => abort_job(self.rank, &err.to_string(), 1),
            };
            for r in pending {
                r.wait();
            }
            timing
        });
        Ok(DagRun {
            busy: timing.busy,
            threads: timing.threads,
            tasks: rp.tasks.len(),
        })
    }

    fn write_ram(
        &mut self,
        v: &View<'_, B>,
        m: usize,
        ram: &mut B::Ram,
        addr: &[&B::Sel],
        vals: &[B::WriteVal],
    ) -> Result<(), CircuitError> {
        let b = v.b;
        let (part, _) = self.part()?;
        let Some(edge) = part.ram_edges.iter().find(|e| e.mem as usize == m) else {
            // A RAM no task reads: written here, nothing to share.
            return b.ram_write(ram, addr, vals, v.threads);
        };
        let me = self.me();
        if edge.holders.len() == 1 {
            // Whole here: the write, then every rank refreshes its share of the listed cells.
            let list = b.ram_write_unrefreshed(ram, addr, vals, v.threads)?;
            return refresh_exchange(v, edge, me, self.size, ram, &list, None);
        }
        // Spread: the bookkeeping (which every rank keeps in step, and which reads no cell) says
        // which cells to refresh; the parts held here are written a few bits at a time, each cell
        // to refresh leaving as soon as its bit is written.
        let list = b.ram_write_bookkeep(ram)?;
        let write = PartWrite { addr, vals };
        refresh_exchange(v, edge, me, self.size, ram, &list, Some(write))
    }

    /// Keeps RAM `m`'s bookkeeping in step (its cells are held elsewhere) and refreshes this rank's
    /// share of the cells the holders list.
    fn help_ram(
        &mut self,
        v: &View<'_, B>,
        m: usize,
        ram: &mut B::Ram,
    ) -> Result<(), CircuitError> {
        let (part, _) = self.part()?;
        let Some(edge) = part.ram_edges.iter().find(|e| e.mem as usize == m) else {
            return Ok(());
        };
        let list = v.b.ram_write_bookkeep(ram)?;
        refresh_exchange(v, edge, self.me(), self.size, ram, &list, None)
    }

    /// Rank 0 receives the flip-flops, carried rings and memories the other ranks hold.
    fn gather(
        &mut self,
        v: &View<'_, B>,
        state: &mut State<B>,
        carried: &mut Carried<B>,
    ) -> Result<(), CircuitError> {
        let (p, _) = self.part()?;
        let (rank, size, b) = (self.rank, self.size, v.b);
        let world = SimpleCommunicator::world();
        if rank != 0 {
            let mut out = Vec::new();
            for (k, &o) in p.dff_owner.iter().enumerate() {
                if o as usize == rank {
                    b.encode_bit(&state.dffs[k], &mut out);
                    match &carried.rings[k] {
                        Some(r) => {
                            out.push(1);
                            b.encode_ring(r, &mut out);
                        }
                        None => out.push(0),
                    }
                    out.extend_from_slice(&carried.vars[k].to_le_bytes());
                }
            }
            for (m, &o) in p.mem_owner.iter().enumerate() {
                if let (Some(cells), MemState::Ram(x)) =
                    (spread_cells(v, p, m, rank), &state.mems[m])
                {
                    for i in cells {
                        b.encode_ring(&b.ram_cell(x, i)?, &mut out);
                    }
                    continue;
                }
                if o as usize == rank {
                    match &state.mems[m] {
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
                        state.dffs[k] = b.decode_bit(&mut r)?;
                        carried.rings[k] = match r.u8("ring tag")? {
                            0 => None,
                            _ => Some(b.decode_ring(&mut r)?),
                        };
                        carried.vars[k] = f64::from_bits(r.u64("ring variance")?);
                    }
                }
                for (m, &o) in p.mem_owner.iter().enumerate() {
                    if let (Some(cells), MemState::Ram(x)) =
                        (spread_cells(v, p, m, src), &mut state.mems[m])
                    {
                        for i in cells {
                            b.set_ram_cell(x, i, b.decode_ring(&mut r)?)?;
                        }
                        continue;
                    }
                    if o as usize == src {
                        match &mut state.mems[m] {
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

/// The cells (`word * data_width + bit`) of spread RAM `m` that `rank` holds, in order (`None`: the
/// RAM is not spread, it is whole on its owner).
fn spread_cells<B: Backend>(
    v: &View<'_, B>,
    p: &Partition,
    m: usize,
    rank: usize,
) -> Option<Vec<usize>> {
    let edge = p.ram_edges.iter().find(|e| e.mem as usize == m)?;
    if edge.holders.len() < 2 {
        return None;
    }
    let spec = &v.c.mems[m].spec;
    let (w, per) = (spec.data_width, spec.words() / edge.holders.len());
    Some(
        edge.holders
            .iter()
            .enumerate()
            .filter(|(_, &h)| h as usize == rank)
            .flat_map(|(j, _)| j * per * w..(j + 1) * per * w)
            .collect(),
    )
}

/// The write of a spread RAM's parts held here ([`Backend::ram_write_part`]).
struct PartWrite<'a, B: Backend> {
    addr: &'a [&'a B::Sel],
    vals: &'a [B::WriteVal],
}

/// The refresh of the cells `list` (the same on every rank: each keeps the RAM's bookkeeping) of
/// the RAM of `edge`: every rank refreshes the cells [`refreshers`] gives it — receiving them from
/// the ranks holding them, sending them back refreshed — and every holder stores the refreshed
/// cells it holds. With `write`, this rank first writes the parts it holds, `threads` data bits
/// at a time, and sends each refresher its cells as soon as their bits are written. Messages are
/// posted before any wait, so no two ranks wait for each other's sends.
fn refresh_exchange<B: Backend>(
    v: &View<'_, B>,
    edge: &RamEdge,
    me: u32,
    size: usize,
    ram: &mut B::Ram,
    list: &[usize],
    write: Option<PartWrite<'_, B>>,
) -> Result<(), CircuitError> {
    let (b, threads) = (v.b, v.threads);
    let spec = &v.c.mems[edge.mem as usize].spec;
    let (w, words) = (spec.data_width.max(1), spec.words());
    let parts = edge.holders.len().max(1);
    let per = words / parts;
    let holder = |i: usize| -> u32 { edge.holders[((i / w) / per.max(1)).min(parts - 1)] };
    let who = refreshers(list, w, &edge.holders, size);
    let (who, holder) = (&who, &holder);
    // Positions of `list` that `r` refreshes and `h` holds, in list order.
    let mine =
        |r: u32, h: u32| (0..list.len()).filter(move |&k| who[k] == r && holder(list[k]) == h);
    // The data bit after which this rank can send refresher `r` its cells (None: nothing to send).
    let last_bit = |r: u32| mine(r, me).map(|k| list[k] % w).max();
    let world = SimpleCommunicator::world();
    let out: Vec<OnceCell<Vec<u8>>> = (0..size).map(|_| OnceCell::new()).collect();
    let back: Vec<OnceCell<Vec<u8>>> = (0..size).map(|_| OnceCell::new()).collect();
    let own: Vec<usize> = (0..list.len()).filter(|&k| who[k] == me).collect();
    let mut stored: Vec<(usize, B::Ring)> = Vec::new();
    mpi::request::scope(|scope| -> Result<(), CircuitError> {
        let mut reqs = Vec::new();
        // The cells refresher `r` gets from this rank, encoded.
        let cells_for = |r: usize, ram: &B::Ram| -> Result<Vec<u8>, CircuitError> {
            let mut buf = Vec::new();
            for k in mine(r as u32, me) {
                b.encode_ring(&b.ram_cell(ram, list[k])?, &mut buf);
            }
            Ok(buf)
        };
        let others = (0..size).filter(|&r| r as u32 != me);
        // Without a write here every cell is written already; with one, the parts held here are
        // written `threads` data bits at a time, and each refresher's cells leave with their last
        // bit.
        let mut done = if write.is_some() { 0 } else { w };
        let mut sent = vec![false; size];
        loop {
            if let Some(pw) = &write {
                let bits = done..(done + threads.max(1)).min(w);
                for j in (0..parts).filter(|&j| edge.holders[j] == me) {
                    b.ram_write_part(ram, pw.addr, pw.vals, j, parts, bits.clone(), threads)?;
                }
                done = bits.end;
            }
            for r in others.clone() {
                if !sent[r] && last_bit(r as u32).is_some_and(|l| l < done) {
                    sent[r] = true;
                    let buf = cells_for(r, ram)?;
                    let buf: &Vec<u8> = out[r].get_or_init(|| buf);
                    reqs.push(world.process_at_rank(r as i32).immediate_send_with_tag(
                        scope,
                        &buf[..],
                        TAG_REFRESH,
                    ));
                }
            }
            if done >= w {
                break;
            }
        }
        let ram_ro: &B::Ram = ram;
        // This rank's share: its own cells, and those the holders send, in list order.
        let mut cells: Vec<Option<B::Ring>> = (0..own.len()).map(|_| None).collect();
        let at = |k: usize| own.binary_search(&k).unwrap_or(usize::MAX);
        let mut from: Vec<u32> = own.iter().map(|&k| holder(list[k])).collect();
        from.sort_unstable();
        from.dedup();
        for &h in &from {
            if h == me {
                for k in mine(me, me) {
                    cells[at(k)] = Some(b.ram_cell(ram_ro, list[k])?);
                }
                continue;
            }
            let (bytes, _) = world
                .process_at_rank(h as i32)
                .receive_vec_with_tag::<u8>(TAG_REFRESH);
            let mut rd = Reader::new(&bytes);
            for k in mine(me, h) {
                cells[at(k)] = Some(b.decode_ring(&mut rd)?);
            }
            if rd.remaining() != 0 {
                return Err(CircuitError::Mpi(format!(
                    "cells to refresh from rank {h} have {} bytes too many",
                    rd.remaining()
                )));
            }
        }
        let cells = cells
            .into_iter()
            .map(|c| c.ok_or_else(|| internal("a cell to refresh is missing")))
            .collect::<Result<Vec<_>, _>>()?;
        let fresh = b.refresh_ram_cells(&cells.iter().collect::<Vec<_>>(), threads)?;
        for &h in from.iter().filter(|&&h| h != me) {
            let mut buf = Vec::new();
            for k in mine(me, h) {
                b.encode_ring(&fresh[at(k)], &mut buf);
            }
            let buf: &Vec<u8> = back[h as usize].get_or_init(|| buf);
            reqs.push(world.process_at_rank(h as i32).immediate_send_with_tag(
                scope,
                &buf[..],
                TAG_REFRESHED,
            ));
        }
        for (&k, cell) in own.iter().zip(fresh) {
            if holder(list[k]) == me {
                stored.push((list[k], cell));
            }
        }
        // The cells this rank holds, refreshed by the others.
        for r in others {
            let ks: Vec<usize> = mine(r as u32, me).collect();
            if ks.is_empty() {
                continue;
            }
            let (bytes, _) = world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u8>(TAG_REFRESHED);
            let mut rd = Reader::new(&bytes);
            for k in ks {
                stored.push((list[k], b.decode_ring(&mut rd)?));
            }
            if rd.remaining() != 0 {
                return Err(CircuitError::Mpi(format!(
                    "refreshed cells from rank {r} have {} bytes too many",
                    rd.remaining()
                )));
            }
        }
        for q in reqs {
            q.wait();
        }
        Ok(())
    })?;
    for (i, cell) in stored {
        b.set_ram_cell(ram, i, cell)?;
    }
    Ok(())
}
