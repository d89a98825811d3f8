//! A cost model of the distributed run (the MPI executor, `crate::dist::mpi`): seconds per cycle on `P` ranks from measured
//! inputs — the time of one unit of task cost (calibrated from a measured cycle: busy seconds over
//! the cycle's cost units, the backend's per-kind ratios being measured ones), the clock edge, the
//! [`Partition`] (levels, per-rank work, cut, messages), ciphertext sizes and a network (bandwidth,
//! latency).
//!
//! It replays what the executor does: each rank runs its levels in order, a level's tasks on its
//! threads (longest first), waiting before a level for the messages it needs; a message leaves when
//! its producing level ends, queues behind the sender's earlier messages on its link and arrives
//! `latency + bytes / bandwidth` later. At the clock edge ([`crate::partition::RamEdge`]) each RAM's
//! owner writes (on its threads), sends every rank its share of the cells to refresh, refreshes its
//! own share and waits for the others' to come back; each rank refreshes its share on its threads
//! once it has finished its levels. The prediction is never below the critical path: the cycle's
//! DAG plus, per RAM, the write and one refresh (the floor no number of ranks can beat).

use crate::partition::{refresh_share, Partition};

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

/// Predicts one cycle of `part` with `threads` threads per rank.
pub fn predict(part: &Partition, m: &Measured, net: &Network, threads: usize) -> Prediction {
    let ranks = part.ranks;
    let threads = threads.max(1);
    let nl = part.levels as usize;
    let mut by_level: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); nl]; ranks];
    for (t, &r) in part.owner.iter().enumerate() {
        by_level[r as usize][part.level[t] as usize].push(part.cost(t) * m.seconds_per_unit);
    }
    let mut sends: Vec<Vec<usize>> = vec![Vec::new(); nl + 1];
    let mut recvs: Vec<Vec<Vec<usize>>> = vec![vec![Vec::new(); nl + 1]; ranks];
    for (i, msg) in part.messages.iter().enumerate() {
        sends[(msg.level + 1) as usize].push(i);
        recvs[msg.dst as usize][msg.deadline as usize].push(i);
    }
    let size = |i: usize| -> usize {
        let msg = &part.messages[i];
        let (b, r) = msg.counts();
        b * m.bit_bytes + r * m.ring_bytes + msg.sels() * m.sel_bytes
    };
    let mut arrival = vec![0f64; part.messages.len()];
    let mut clock = vec![0f64; ranks];
    let mut link = vec![0f64; ranks];
    let post = |i: usize, at: f64, link: &mut [f64], arrival: &mut [f64]| {
        let src = part.messages[i].src as usize;
        let start = link[src].max(at);
        link[src] = start + size(i) as f64 * 8.0 / net.bandwidth_bits;
        arrival[i] = link[src] + net.latency;
    };
    for &i in &sends[0] {
        post(i, 0.0, &mut link, &mut arrival);
    }
    let mut lanes = vec![0f64; threads];
    for l in 0..nl {
        for r in 0..ranks {
            for &i in &recvs[r][l] {
                clock[r] = clock[r].max(arrival[i]);
            }
            let ts = &mut by_level[r][l];
            if !ts.is_empty() {
                ts.sort_by(|a, b| b.total_cmp(a));
                lanes.iter_mut().for_each(|x| *x = 0.0);
                for &c in ts.iter() {
                    let k = (0..threads)
                        .min_by(|&a, &b| lanes[a].total_cmp(&lanes[b]))
                        .unwrap_or(0);
                    lanes[k] += c;
                }
                clock[r] += lanes.iter().copied().fold(0.0, f64::max);
            }
        }
        for &i in &sends[l + 1] {
            let src = part.messages[i].src as usize;
            post(i, clock[src], &mut link, &mut arrival);
        }
    }
    for r in 0..ranks {
        for &i in &recvs[r][nl] {
            clock[r] = clock[r].max(arrival[i]);
        }
    }
    // The clock edge, RAM by RAM.
    let spu = m.seconds_per_unit;
    let wire = |cells: usize| (cells * m.ring_bytes) as f64 * 8.0 / net.bandwidth_bits;
    let on_threads = |cells: usize, unit: f64| cells.div_ceil(threads) as f64 * unit * spu;
    let (mut edge_one, mut edge_floor) = (0f64, 0f64);
    for e in &part.ram_edges {
        let o = (e.owner as usize).min(ranks - 1);
        edge_one += (e.write_units + e.refresh_cells as f64 * e.refresh_units) * spu;
        edge_floor += e.write_units * spu / threads as f64;
        if e.refresh_cells > 0 {
            edge_floor += e.refresh_units * spu;
        }
        clock[o] += e.write_units * spu / threads as f64;
        let mut back = clock[o];
        link[o] = link[o].max(clock[o]);
        for r in (0..ranks).filter(|&r| r != o) {
            let k = refresh_share(e.refresh_cells, ranks, r).len();
            link[o] += wire(k);
            let start = clock[r].max(link[o] + net.latency);
            let done = start + on_threads(k, e.refresh_units);
            link[r] = link[r].max(done) + wire(k);
            back = back.max(link[r] + net.latency);
            clock[r] = done;
        }
        let own = refresh_share(e.refresh_cells, ranks, o).len();
        clock[o] = (clock[o] + on_threads(own, e.refresh_units)).max(back);
    }
    let end = clock.iter().copied().fold(0f64, f64::max);
    let work = part.work();
    let max_work = work.iter().copied().fold(0.0, f64::max) * m.seconds_per_unit;
    let critical = part.critical_path_units * spu + edge_floor;
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
