//! A cost model of the distributed run (the MPI executor, `crate::dist::mpi`): seconds per cycle on `P` ranks from measured
//! inputs — the time of one unit of task cost (calibrated from a measured cycle: busy seconds over
//! the cycle's cost units, the backend's per-kind ratios being measured ones), the clock edge, the
//! [`Partition`] (placement, per-rank work, cut, messages), ciphertext sizes and a network (bandwidth,
//! latency).
//!
//! It replays what the executor does, as data flows: each rank's threads take its ready tasks (those
//! whose operands are made or have arrived) by upward rank; a message leaves when the tasks making it
//! are done, queues behind the sender's earlier messages on its link and arrives
//! `latency + bytes / bandwidth` later. At the clock edge ([`crate::partition::RamEdge`]) each RAM's
//! owner writes (on its threads), sends every rank its share of the cells to refresh, refreshes its
//! own share and waits for the others' to come back; each rank refreshes its share on its threads
//! once it has finished its tasks. The prediction is never below the critical path: the cycle's
//! DAG plus, per RAM, the write and one refresh (the floor no number of ranks can beat).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::backend::TaskKind;
use crate::engine::Item;
use crate::partition::{refreshers, Partition};

/// A network between ranks.
#[derive(Clone, Copy, Debug)]
pub struct Network {
    /// Bits per second each rank can send.
    pub bandwidth_bits: f64,
    /// Seconds from send to arrival of an empty message.
    pub latency: f64,
}

/// The model's network assumptions, stated: a rank's sends leave one after another on its own link
/// at `bandwidth_bits` (no switch contention, no receive-side limit), each arriving `latency` after
/// its last bit; a message costs nothing else (no per-message CPU time, no serialization time).
impl Network {
    /// 1 Gb/s Ethernet, 20 µs.
    pub const ONE_GBE: Network = Network {
        bandwidth_bits: 1e9,
        latency: 20e-6,
    };
    /// 10 Gb/s Ethernet with 20 µs latency (the cluster; the default of the predictions).
    pub const TEN_GBE: Network = Network {
        bandwidth_bits: 10e9,
        latency: 20e-6,
    };
    /// 100 Gb/s (InfiniBand-class), 20 µs kept so that only the bandwidth changes.
    pub const HUNDRED_GBE: Network = Network {
        bandwidth_bits: 100e9,
        latency: 20e-6,
    };
    /// Ranks on one machine, through Open MPI's shared-memory transport (≈ 80 Gb/s, 2 µs).
    pub const SHARED_MEMORY: Network = Network {
        bandwidth_bits: 80e9,
        latency: 2e-6,
    };
}

/// Measured inputs of the model.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// Seconds per unit of task cost ([`crate::Backend::task_cost`]) on one thread (the clock
    /// edge's RAM write and refresh are priced in the same units).
    pub seconds_per_unit: f64,
    /// Bytes of a level-0 bit, a ring and a memory selector (a TRGSW in TFHE) on the wire.
    pub bit_bytes: usize,
    pub ring_bytes: usize,
    pub sel_bytes: usize,
    /// Bytes of a selector with the circuit's gadget (a ROM's, an ordinary MUX select's).
    pub small_sel_bytes: usize,
}

impl Measured {
    /// These inputs for `threads` threads in all (ranks × threads per rank) on a machine of `cores`
    /// cores: when there are more threads than cores each runs `threads / cores` times slower (the
    /// model has no notion of shared cores otherwise; a rank waiting for a message is counted as
    /// busy, so this is pessimistic when ranks wait).
    pub fn on_cores(&self, threads: usize, cores: usize) -> Measured {
        let slow = (threads as f64 / cores.max(1) as f64).max(1.0);
        Measured {
            seconds_per_unit: self.seconds_per_unit * slow,
            ..*self
        }
    }
}

/// A predicted cycle.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub ranks: usize,
    /// Seconds per cycle (at least `critical_path_seconds`).
    pub seconds: f64,
    /// The cycle's critical path (cost units × seconds per unit, plus the clock edge's floor).
    pub critical_path_seconds: f64,
    /// Seconds of the clock edge's RAM work on one thread (write and every refresh).
    pub edge_seconds_one_thread: f64,
    /// The busiest rank's work in seconds (no waiting).
    pub max_work_seconds: f64,
    /// Ciphertexts crossing ranks per cycle (level-0 bits, rings, memory selectors), messages and
    /// bytes (not counting the clock edge's refresh cells).
    pub crossing_bits: usize,
    pub crossing_rings: usize,
    pub crossing_sels: usize,
    pub messages: usize,
    pub bytes: usize,
}

/// One event of the replayed cycle.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    TaskDone(u32),
    Arrives(u32),
}

/// A time-ordered queue of events (ties in the order they were queued).
#[derive(Default)]
struct Events {
    heap: BinaryHeap<Reverse<(Time, u64, Event)>>,
    seq: u64,
}

/// An event time with a total order.
#[derive(Clone, Copy, PartialEq)]
struct Time(f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Time {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl Events {
    fn push(&mut self, at: f64, e: Event) {
        self.seq += 1;
        self.heap.push(Reverse((Time(at), self.seq, e)));
    }
    fn pop(&mut self) -> Option<(f64, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t.0, e))
    }
}

/// The cycle's DAG as the MPI executor runs it, as data flows: on each rank `threads` lanes take the
/// ready task with the highest upward rank; a message leaves when the tasks making its items are
/// done (the cycle's sources at once), queues behind the sender's earlier messages on its link and
/// arrives `latency + bytes / bandwidth` later, releasing the tasks that wait for it. Returns when
/// each rank has finished its tasks and received everything (its clock), and when each link is free.
fn dataflow(
    part: &Partition,
    m: &Measured,
    net: &Network,
    threads: usize,
    split: Option<CbSplit>,
    size: &dyn Fn(usize) -> usize,
) -> (Vec<f64>, Vec<f64>) {
    let (ranks, set) = (part.ranks, &part.set);
    let n = part.owner.len();
    let mut msg_of: HashMap<(Item, u32), u32> = HashMap::new();
    for (i, msg) in part.messages.iter().enumerate() {
        for &item in &msg.items {
            msg_of.insert((item, msg.dst), i as u32);
        }
    }
    // Per task: what it waits for (local predecessors and messages) and whom it releases.
    let mut waits = vec![0u32; n];
    let mut next: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut feeds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut makers = vec![0u32; part.messages.len()];
    let mut released: Vec<Vec<u32>> = vec![Vec::new(); part.messages.len()];
    for (t, (f, &r)) in set.facts.iter().zip(&part.owner).enumerate() {
        let mut on: Vec<(bool, u32)> = f
            .reads
            .iter()
            .filter_map(|i| match set.producer.get(i) {
                Some(&q) if part.owner[q as usize] == r => Some((false, q)),
                _ => msg_of.get(&(*i, r)).map(|&k| (true, k)),
            })
            .collect();
        on.sort_unstable();
        on.dedup();
        for &(is_msg, x) in &on {
            if is_msg {
                released[x as usize].push(t as u32);
            } else {
                next[x as usize].push(t as u32);
            }
        }
        waits[t] = on.len() as u32;
    }
    // A one-thread rank runs its tasks in the planned order when the placement made one.
    if threads == 1 {
        if let Some(before) = part.planned_order() {
            for (t, &u) in before.iter().enumerate() {
                if u != u32::MAX {
                    next[u as usize].push(t as u32);
                    waits[t] += 1;
                }
            }
        }
    }
    for (k, msg) in part.messages.iter().enumerate() {
        let mut q: Vec<u32> = msg
            .items
            .iter()
            .filter_map(|i| set.producer.get(i).copied())
            .collect();
        q.sort_unstable();
        q.dedup();
        makers[k] = q.len() as u32;
        for t in q {
            feeds[t as usize].push(k as u32);
        }
    }
    let mut ready: Vec<BinaryHeap<(Time, Reverse<u32>)>> = vec![BinaryHeap::new(); ranks];
    let mut free = vec![threads; ranks];
    let mut clock = vec![0f64; ranks];
    let mut link = vec![0f64; ranks];
    let mut ev = Events::default();
    let ready_now = |t: usize, ready: &mut Vec<BinaryHeap<(Time, Reverse<u32>)>>| {
        ready[part.owner[t] as usize].push((Time(part.priority[t]), Reverse(t as u32)));
    };
    let post = |k: usize, at: f64, link: &mut [f64], ev: &mut Events| {
        let src = part.messages[k].src as usize;
        link[src] = link[src].max(at) + size(k) as f64 * 8.0 / net.bandwidth_bits;
        ev.push(link[src] + net.latency, Event::Arrives(k as u32));
    };
    for k in (0..part.messages.len()).filter(|&k| makers[k] == 0) {
        post(k, 0.0, &mut link, &mut ev);
    }
    for t in (0..n).filter(|&t| waits[t] == 0) {
        ready_now(t, &mut ready);
    }
    // Lanes each running task holds (a split circuit bootstrap holds several).
    let mut lanes = vec![1usize; n];
    let start = |r: usize,
                 now: f64,
                 ready: &mut Vec<BinaryHeap<_>>,
                 free: &mut [usize],
                 lanes: &mut [usize],
                 ev: &mut Events| {
        while free[r] > 0 {
            let Some((_, Reverse(t))) = ready[r].pop() else {
                break;
            };
            let t = t as usize;
            let mut secs = part.cost(t) * m.seconds_per_unit;
            lanes[t] = 1;
            if let Some(cb) = split.filter(|_| part.kind(t) == TaskKind::Select) {
                // As the scheduler lends lanes (`schedule::run_wide`): the free threads that no
                // other ready task of the rank wants.
                // At most one thread per bit (`Ctx::wide`).
                let spare = (free[r] - 1).saturating_sub(ready[r].len());
                let k = 1 + cb.threads.min(part.writes(t)).saturating_sub(1).min(spare);
                lanes[t] = k;
                secs *= cb.latency_on(k);
            }
            free[r] -= lanes[t];
            ev.push(now + secs, Event::TaskDone(t as u32));
        }
    };
    for r in 0..ranks {
        start(r, 0.0, &mut ready, &mut free, &mut lanes, &mut ev);
    }
    while let Some((now, e)) = ev.pop() {
        let r = match e {
            Event::TaskDone(t) => {
                let t = t as usize;
                let r = part.owner[t] as usize;
                free[r] += lanes[t];
                for &s in &next[t] {
                    waits[s as usize] -= 1;
                    if waits[s as usize] == 0 {
                        ready_now(s as usize, &mut ready);
                    }
                }
                for &k in &feeds[t] {
                    makers[k as usize] -= 1;
                    if makers[k as usize] == 0 {
                        post(k as usize, now, &mut link, &mut ev);
                    }
                }
                r
            }
            Event::Arrives(k) => {
                for &s in &released[k as usize] {
                    waits[s as usize] -= 1;
                    if waits[s as usize] == 0 {
                        ready_now(s as usize, &mut ready);
                    }
                }
                part.messages[k as usize].dst as usize
            }
        };
        clock[r] = clock[r].max(now);
        start(r, now, &mut ready, &mut free, &mut lanes, &mut ev);
    }
    (clock, link)
}

/// A batch of circuit bootstraps split over a rank's idle threads (an option of [`predict_with`];
/// what the executors do where a rank has more than one thread: `schedule::run_wide`,
/// `Backend::select_batch_on`, bit-identical): one on `threads` threads takes `latency` times its
/// one-thread time (measured: `cargo run --release -p vsp-circuit --example task_costs`). A split
/// batch (a [`TaskKind::Select`] task) takes, when it starts, the free threads of its rank that no
/// other ready task wants, up to `threads` and one per bit, and holds them to its end; on `k` of them its speed
/// over one thread is interpolated linearly between 1 (one thread) and `1 / latency` (`threads`
/// threads).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CbSplit {
    pub threads: usize,
    pub latency: f64,
}

impl CbSplit {
    /// The latency factor on `k` threads.
    pub fn latency_on(&self, k: usize) -> f64 {
        if self.threads <= 1 || k <= 1 {
            return 1.0;
        }
        let k = k.min(self.threads);
        let top = 1.0 / self.latency.max(1e-9);
        let speed = 1.0 + (top - 1.0) * (k - 1) as f64 / (self.threads - 1) as f64;
        1.0 / speed
    }
}

/// Predicts one cycle of `part` with `threads` threads per rank.
pub fn predict(part: &Partition, m: &Measured, net: &Network, threads: usize) -> Prediction {
    predict_with(part, m, net, threads, None)
}

/// [`predict`], circuit bootstraps split over idle threads as `split` says (`None`: one thread
/// each, as built).
pub fn predict_with(
    part: &Partition,
    m: &Measured,
    net: &Network,
    threads: usize,
    split: Option<CbSplit>,
) -> Prediction {
    let ranks = part.ranks;
    let threads = threads.max(1);
    let size = |i: usize| -> usize {
        let msg = &part.messages[i];
        let (b, r) = msg.counts();
        b * m.bit_bytes
            + r * m.ring_bytes
            + (msg.sels() - msg.small_sels) * m.sel_bytes
            + msg.small_sels * m.small_sel_bytes
    };
    let (mut clock, mut link) = dataflow(part, m, net, threads, split, &size);
    // The clock edge, RAM by RAM.
    let spu = m.seconds_per_unit;
    let wire = |cells: usize| (cells * m.ring_bytes) as f64 * 8.0 / net.bandwidth_bits;
    let on_threads = |cells: usize, unit: f64| cells.div_ceil(threads) as f64 * unit * spu;
    let (mut edge_one, mut edge_floor) = (0f64, 0f64);
    for e in &part.ram_edges {
        let holders: Vec<u32> = e.holders.iter().map(|&h| h.min(ranks as u32 - 1)).collect();
        let parts = holders.len().max(1);
        let w = e.data_width.max(1);
        edge_one += (e.write_units * parts as f64 + e.refresh_cells as f64 * e.refresh_units) * spu;
        // A spread RAM's holders write `threads` bits at a time and send each cell to refresh
        // with its bit; a whole one is written before any cell leaves.
        let step = threads.min(w);
        let chunk = e.write_units * spu * step as f64 / w as f64 / threads as f64;
        let written = |h: usize, start: &[f64], bit: usize| -> f64 {
            let held = holders.iter().filter(|&&x| x as usize == h).count() as f64;
            match parts {
                1 => start[h] + e.write_units * spu / threads as f64,
                _ => start[h] + held * chunk * (bit / step + 1) as f64,
            }
        };
        edge_floor += match parts {
            1 => e.write_units * spu / threads as f64,
            _ => chunk,
        };
        if e.refresh_cells > 0 {
            edge_floor += e.refresh_units * spu;
        }
        let start = clock.clone();
        for &h in &holders {
            let h = h as usize;
            clock[h] = written(h, &start, w - 1);
        }
        // The cycle's cells to refresh: some consecutive words (the round robin's), here the first.
        let list: Vec<usize> = (0..e.refresh_cells).collect();
        let words = e.words.max(1);
        let holder = |i: usize| holders[((i / w) * parts / words).min(parts - 1)] as usize;
        let who = refreshers(&list, w, &holders, ranks);
        // Each (holder, refresher) message leaves with its last cell's bit, on the holder's link.
        let mut msgs: Vec<(f64, usize, usize, usize)> = Vec::new();
        for r in 0..ranks {
            for &h in &holders {
                let h = h as usize;
                let ks: Vec<usize> = (0..list.len())
                    .filter(|&k| who[k] as usize == r && holder(list[k]) == h)
                    .collect();
                if ks.is_empty() || msgs.iter().any(|m| m.1 == h && m.2 == r) {
                    continue;
                }
                let last = ks.iter().map(|&k| list[k] % w).max().unwrap_or(0);
                msgs.push((written(h, &start, last), h, r, ks.len()));
            }
        }
        msgs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut arrive = vec![0f64; ranks];
        for &(at, h, r, k) in &msgs {
            if h == r {
                arrive[r] = arrive[r].max(at);
                continue;
            }
            link[h] = link[h].max(at) + wire(k);
            arrive[r] = arrive[r].max(link[h] + net.latency);
        }
        // Each refresher refreshes its share when its cells are in and its own work is done, and
        // sends every holder its cells back; the holders wait for them.
        let mut back = vec![0f64; ranks];
        for r in 0..ranks {
            let k = who.iter().filter(|&&x| x as usize == r).count();
            if k == 0 {
                continue;
            }
            let done = clock[r].max(arrive[r]) + on_threads(k, e.refresh_units);
            clock[r] = done;
            for &(_, h, _, kk) in msgs.iter().filter(|m| m.2 == r) {
                if h == r {
                    back[h] = back[h].max(done);
                    continue;
                }
                link[r] = link[r].max(done) + wire(kk);
                back[h] = back[h].max(link[r] + net.latency);
            }
        }
        for &h in &holders {
            let h = h as usize;
            clock[h] = clock[h].max(back[h]);
        }
    }
    let end = clock.iter().copied().fold(0f64, f64::max);
    let work = part.work();
    let max_work = work.iter().copied().fold(0.0, f64::max) * m.seconds_per_unit;
    // The DAG's longest path, with circuit bootstraps as short as a split makes them.
    let dag_path = match split {
        Some(cb) if cb.latency_on(threads) < 1.0 => {
            part.with_scaled(|k, bits| match k {
                TaskKind::Select => cb.latency_on(threads.min(bits)),
                _ => 1.0,
            })
            .critical_path_units
        }
        _ => part.critical_path_units,
    };
    let critical = dag_path * spu + edge_floor;
    let (crossing_bits, crossing_rings) = part.crossing();
    Prediction {
        ranks,
        seconds: end.max(critical),
        critical_path_seconds: critical,
        edge_seconds_one_thread: edge_one,
        max_work_seconds: max_work / threads as f64,
        crossing_bits,
        crossing_rings,
        crossing_sels: part.crossing_sels(),
        messages: part.messages.len(),
        bytes: (0..part.messages.len()).map(size).sum(),
    }
}
