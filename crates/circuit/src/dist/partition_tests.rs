//! Tests of the partition (`super`): every read is served in time, shares are even, and the cost
//! model built on it is consistent.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::*;
use crate::costmodel::{predict, Measured, Network};
use crate::{Blueprint, Engine, GateKind, LeveledParams, NetlistBuilder, PlainBackend};

/// A random circuit with flip-flops, NOTs and MUXes whose selects drive several MUXes (so the
/// TFHE plan makes CMUXes, select batches and lifts).
fn random_circuit(seed: u64) -> Arc<Circuit> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut b = NetlistBuilder::new();
    let mut w = b.input("x", 8);
    let dffs: Vec<_> = (0..12).map(|i| b.dff(i % 3 == 0)).collect();
    w.extend(&dffs);
    let sels: Vec<_> = w[..4].to_vec();
    for i in 0..150 {
        let (a, c) = (w[next(w.len())], w[next(w.len())]);
        let v = match i % 5 {
            0 => b.not(a),
            1 | 2 => b.mux(sels[next(sels.len())], a, c),
            _ => b.gate(GateKind::ALL[next(GateKind::ALL.len())], a, c),
        };
        w.push(v);
    }
    for (k, &q) in dffs.iter().enumerate() {
        b.connect_dff(q, w[w.len() - 1 - k]).unwrap();
    }
    let outs = w[w.len() - 8..].to_vec();
    b.output("y", &outs);
    let bp = Blueprint::single("core", b.build().unwrap());
    Arc::new(Circuit::compile(&bp).unwrap())
}

fn memuser() -> Arc<Circuit> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/memuser.toml");
    Arc::new(Circuit::from_blueprint_path(&p).unwrap())
}

fn engines() -> Vec<Engine<PlainBackend>> {
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    let mut v = Vec::new();
    for c in [memuser(), random_circuit(1), random_circuit(7)] {
        let mut e = Engine::new(PlainBackend, c.clone());
        v.push(Engine::new(PlainBackend, c));
        e.set_leveled(Some(lp));
        v.push(e);
    }
    v
}

/// Every value a rank reads at level L is made there earlier, held there, or arrives in a
/// message from a lower level due by L; outputs reach rank 0 and D inputs their flip-flop's rank.
/// The cost model's inputs the model tests share: 1 ms a unit and TFHE-like sizes on the wire.
const MEASURED: Measured = Measured {
    seconds_per_unit: 1e-3,
    bit_bytes: 2528,
    ring_bytes: 16400,
    sel_bytes: 131_080,
    small_sel_bytes: 131_080,
};

#[test]
fn every_read_is_local_or_received_in_time() {
    let mut cmuxes = 0;
    for e in engines() {
        let c = &*e.circuit;
        for ranks in [1, 2, 3, 7] {
            let p = e.plan_partition(ranks);
            cmuxes += p
                .set
                .tasks
                .iter()
                .filter(|t| matches!(t, Task::Cmux(_)))
                .count();
            assert_eq!(p.owner.len(), p.tasks());
            assert!(p.set.batches.iter().all(|b| b.len() <= p.select_batch));
            assert!(p.owner.iter().all(|&r| (r as usize) < ranks));
            if ranks == 1 {
                assert!(p.messages.is_empty());
                assert_eq!(
                    p.set.tasks, e.tasks.tasks,
                    "one rank runs the engine's own tasks"
                );
            }
            let mut made: HashMap<Item, usize> = HashMap::new();
            let io = &p.set.facts;
            for (t, x) in io.iter().enumerate() {
                for &w in &x.writes {
                    assert!(made.insert(w, t).is_none(), "one writer per item");
                }
            }
            let mut got: HashMap<(Item, u32), (i64, u32)> = HashMap::new();
            for m in &p.messages {
                assert_ne!(m.src, m.dst);
                assert!(m.deadline as i64 > m.level);
                for &i in &m.items {
                    assert!(got.insert((i, m.dst), (m.level, m.deadline)).is_none());
                    if let Some(&t) = made.get(&i) {
                        assert_eq!(p.owner[t], m.src);
                        assert_eq!(i64::from(p.level[t]), m.level);
                    }
                }
            }
            let has = |i: Item, r: u32, at: u32| -> bool {
                match made.get(&i) {
                    Some(&t) if p.owner[t] == r => p.level[t] < at,
                    Some(_) => got.get(&(i, r)).is_some_and(|&(_, d)| d <= at),
                    // Only sources have no task: inputs and constants everywhere, flip-flops
                    // on their owner.
                    None => match i {
                        Item::Bit(n) | Item::Ring(n) => match c.nodes[n as usize] {
                            Node::Dff(k) => {
                                p.dff_owner[k as usize] == r
                                    || got.get(&(i, r)).is_some_and(|&(_, d)| d <= at)
                            }
                            Node::Input(_) | Node::Const(_) => true,
                            _ => false,
                        },
                        Item::Sel { .. }
                        | Item::WriteVal { .. }
                        | Item::MuxSel(_)
                        | Item::RamPart { .. } => false,
                    },
                }
            };
            for (t, x) in io.iter().enumerate() {
                for &i in &x.reads {
                    assert!(has(i, p.owner[t], p.level[t]), "task {t} misses item {i:?}");
                }
            }
            for port in &c.outputs {
                for &n in &port.bits {
                    assert!(has(Item::Bit(n), 0, p.levels));
                }
            }
            for (k, d) in c.dffs.iter().enumerate() {
                assert!(has(Item::Bit(d.d), p.dff_owner[k], p.levels));
            }
            for edge in &p.ram_edges {
                assert_eq!(edge.holders[0], p.mem_owner[edge.mem as usize]);
                // On 3 ranks and more a RAM is spread over ranks (a part each).
                assert_eq!(edge.holders.len() > 1, ranks > 2);
                let mem = edge.mem;
                for &h in &edge.holders {
                    for bit in 0..c.mems[mem as usize].addr.len() as u32 {
                        let s = Item::Sel { mem, bit };
                        assert!(has(s, h, p.levels), "the RAM write's selectors");
                    }
                    for bit in 0..c.mems[mem as usize].wdata.len() as u32 {
                        let v = Item::WriteVal { mem, bit };
                        assert!(has(v, h, p.levels), "the RAM write's values");
                    }
                }
            }
            if ranks == 7 && c.mems.len() > 1 {
                let parts = p
                    .set
                    .tasks
                    .iter()
                    .filter(|t| matches!(t, Task::Select { .. } | Task::RomRead { .. }))
                    .count();
                assert!(parts > 2 * c.mems.len(), "selects and ROM reads are cut up");
            }
            let total: f64 = p.work().iter().sum();
            let cost: f64 = (0..p.tasks()).map(|t| p.cost(t)).sum();
            assert!((total - cost).abs() <= 1e-9 * cost.max(1.0));
            let owners: HashSet<u32> = p.owner.iter().copied().collect();
            if ranks > 1 && p.tasks() > 50 {
                assert!(owners.len() > 1, "work is spread");
            }
        }
    }
    assert!(cmuxes > 0, "the plans exercise CMUXes");
}

/// Refresh shares are as even as can be; the ranks holding no part of the RAM take the larger
/// shares and the earliest-written bits; the answer does not depend on the list's order.
#[test]
fn refreshers_deal_cells_evenly_in_bit_order() {
    let w = 16;
    for (cells, first_word) in [(0, 0), (1, 3), (7, 40), (80, 37), (304, 0), (4096, 0)] {
        let list: Vec<usize> = (first_word * w..first_word * w + cells).collect();
        for (ranks, holders) in [
            (1, vec![0]),
            (2, vec![0]),
            (3, vec![0, 1]),
            (
                64,
                (0..16).map(|p| ram_holder(p, 16, 64)).collect::<Vec<_>>(),
            ),
            (256, (0..16).map(|p| ram_holder(p, 16, 256)).collect()),
        ] {
            let who = refreshers(&list, w, &holders, ranks);
            assert_eq!(who.len(), cells);
            let mut share = vec![0usize; ranks];
            for &r in &who {
                share[r as usize] += 1;
            }
            let (lo, hi) = (share.iter().min().unwrap(), share.iter().max().unwrap());
            assert!(hi - lo <= 1, "{cells} cells on {ranks} ranks: {share:?}");
            let holds = |r: usize| holders.contains(&(r as u32));
            for r in 0..ranks {
                for q in 0..ranks {
                    if !holds(r) && holds(q) {
                        assert!(share[r] >= share[q], "a holder took more than a free rank");
                    }
                }
            }
            // Bit order: every cell a free rank refreshes is written no later than any cell a
            // holder refreshes.
            let bit = |k: usize| list[k] % w;
            let latest_free = (0..cells)
                .filter(|&k| !holds(who[k] as usize))
                .map(bit)
                .max();
            let earliest_held = (0..cells)
                .filter(|&k| holds(who[k] as usize))
                .map(bit)
                .min();
            if let (Some(f), Some(h)) = (latest_free, earliest_held) {
                assert!(f <= h, "{cells} cells on {ranks} ranks");
            }
            let mut rev = list.clone();
            rev.reverse();
            let mut who_rev = refreshers(&rev, w, &holders, ranks);
            who_rev.reverse();
            assert_eq!(who_rev, who, "the list's order matters");
        }
    }
    // 80 cells on 64 ranks of which 16 hold the RAM: the 48 free ranks take 64 cells (16 of them
    // two), the holders one each.
    let holders: Vec<u32> = (0..16).map(|p| ram_holder(p, 16, 64)).collect();
    let list: Vec<usize> = (37 * w..42 * w).collect();
    let who = refreshers(&list, w, &holders, 64);
    for h in &holders {
        assert_eq!(who.iter().filter(|&&r| r == *h).count(), 1);
    }
    assert_eq!(select_batch_for(1), SELECT_BATCH);
    assert_eq!(select_batch_for(2), SELECT_BATCH);
    assert!(select_batch_for(4) < SELECT_BATCH);
    assert_eq!(select_batch_for(64), 1);
}

/// The model on one rank is the work plus the clock edge; more ranks over a free network are
/// never slower than the critical path allows and not slower than one rank.
#[test]
fn cost_model_is_consistent() {
    for e in engines() {
        let m = MEASURED;
        let free = Network {
            bandwidth_bits: f64::INFINITY,
            latency: 0.0,
        };
        let p1 = e.plan_partition(1);
        let one = predict(&p1, &m, &free, 1);
        let edge: f64 = p1
            .ram_edges
            .iter()
            .map(|x| {
                x.write_units * x.holders.len() as f64 + x.refresh_cells as f64 * x.refresh_units
            })
            .sum();
        let dag: f64 = (0..p1.tasks()).map(|t| p1.cost(t)).sum();
        let work: f64 = (dag + edge) * 1e-3;
        assert!((one.seconds - work.max(one.critical_path_seconds)).abs() < 1e-9);
        for ranks in [2, 4, 64] {
            let part = e.plan_partition(ranks);
            let p = predict(&part, &m, &free, 1);
            assert!(p.seconds >= p.critical_path_seconds - 1e-12);
            assert!(p.seconds <= one.seconds + 1e-9);
            // A greedy dataflow schedule is not monotone in message delays (Graham's list-scheduling
            // anomalies: a later message can reorder the ready tasks for the better), so a real
            // network may come out a little faster than a free one; a crawling one may not.
            let slow = predict(&part, &m, &Network::TEN_GBE, 1);
            assert!(
                slow.seconds >= 0.85 * p.seconds,
                "{ranks}: {} < {}",
                slow.seconds,
                p.seconds
            );
            let crawl = Network {
                bandwidth_bits: 1e6,
                latency: 1e-3,
            };
            if !part.messages.is_empty() {
                assert!(predict(&part, &m, &crawl, 1).seconds > p.seconds);
            }
        }
    }
}

/// A RAM's clock edge: the write on its rank, the refresh cells split over every rank, and the
/// model charges them so (TFHE costs, plain circuit: no key needed to plan).
#[test]
fn ram_refresh_is_spread_over_ranks() {
    let c = memuser();
    let params = vsp_tfhe::Params::default_128();
    let noise = crate::noise::NoiseModel::of(&params);
    let spec = &c
        .mems
        .iter()
        .find(|m| m.spec.kind == crate::blueprint::MemKind::Ram)
        .unwrap()
        .spec;
    let cells = crate::cmux::refreshes_per_cycle(
        &noise,
        crate::noise::RefreshPolicy::default(),
        spec.addr_width,
        spec.data_width,
    );
    assert!(cells >= spec.data_width, "at least a word a cycle");
    let m = MEASURED;
    // The same partitions with the RAM refreshing `cells` cells of 10 units each, or none.
    let e = Engine::new(PlainBackend, c.clone());
    let with_refresh = |ranks: usize, cells: usize| {
        let mut p = e.plan_partition(ranks);
        assert_eq!(p.ram_edges.len(), 1);
        for x in &mut p.ram_edges {
            x.refresh_cells = cells;
            x.refresh_units = 10.0;
        }
        p
    };
    let free = Network {
        bandwidth_bits: f64::INFINITY,
        latency: 0.0,
    };
    let unit = 10.0 * 1e-3;
    let t = |ranks: usize, cells: usize| predict(&with_refresh(ranks, cells), &m, &free, 1).seconds;
    // One rank does every refresh; on four each does at most a quarter after its levels.
    assert!((t(1, cells) - t(1, 0) - cells as f64 * unit).abs() < 1e-9);
    let four = t(4, cells) - t(4, 0);
    assert!(four > 0.0);
    assert!(four <= cells.div_ceil(4) as f64 * unit + 1e-9, "{four}");
}

/// Every placement keeps what must stay together (by level: a CMUX with the batch making its
/// select, which by finish times travels to it instead; a RAM's reads with its cells, a spread
/// RAM's parts on their holders and its write values with their reads) and covers every task; the
/// default takes the one the model prices fastest.
#[test]
fn placements_keep_units_and_best_is_fastest() {
    for e in engines() {
        for ranks in [2, 5] {
            let time = |p: &Partition| {
                predict(p, &PLACEMENT_PRICE.measured, &PLACEMENT_PRICE.network, 1).seconds
            };
            let (pb, pc, pe) = (
                e.plan_partition_with(ranks, Placement::Balanced),
                e.plan_partition_with(ranks, Placement::Critical),
                e.plan_partition_with(ranks, Placement::Earliest),
            );
            for p in [&pb, &pc, &pe] {
                assert!(p.owner.iter().all(|&r| (r as usize) < ranks));
                for (t, task) in p.set.tasks.iter().enumerate() {
                    match task {
                        // By level, a CMUX stays with its select; placed by finish times, a
                        // select made elsewhere comes in a message.
                        Task::Cmux(_) => {
                            for i in &p.set.facts[t].reads {
                                if let (Item::MuxSel(_), Some(&q)) = (i, p.set.producer.get(i)) {
                                    let (here, there) = (p.owner[t], p.owner[q as usize]);
                                    if p.placement == Placement::Earliest {
                                        assert!(
                                            here == there
                                                || p.messages.iter().any(|m| m.src == there
                                                    && m.dst == here
                                                    && m.items.contains(i)),
                                            "select {i:?} for task {t} never reaches rank {here}"
                                        );
                                    } else {
                                        assert_eq!(here, there);
                                    }
                                }
                            }
                        }
                        Task::RamRead { mem, .. } => {
                            assert_eq!(p.owner[t], p.mem_owner[*mem as usize]);
                        }
                        Task::RamPart { part, parts, .. } => {
                            assert_eq!(
                                p.owner[t],
                                ram_holder(*part as usize, *parts as usize, ranks)
                            );
                        }
                        // A write value stays with the read of its bit (it keeps the tree).
                        Task::WriteVal { mem, bit } => {
                            if let Some(j) = p.set.tasks.iter().position(|x| {
                                matches!(x, Task::RamJoin { mem: m, bit: b, .. } if m == mem && b == bit)
                            }) {
                                assert_eq!(p.owner[t], p.owner[j]);
                            }
                        }
                        _ => {}
                    }
                }
            }
            let best = e.plan_partition(ranks);
            let (tb, tc, te) = (time(&pb), time(&pc), time(&pe));
            assert!(time(&best) <= tb.min(tc).min(te) + 1e-12);
            let want = if te < tb.min(tc) {
                Placement::Earliest
            } else if tc < tb {
                Placement::Critical
            } else {
                Placement::Balanced
            };
            assert_eq!(best.placement, want);
        }
    }
}

/// On 3 ranks and more a RAM is spread: its parts on distinct ranks, the reads joined per data bit;
/// and a batch of circuit bootstraps split over idle threads is as built at latency 1, and faster,
/// with a lower floor, below it, except where every batch is one bit (never split).
#[test]
fn ram_is_spread_and_the_cb_split_is_priced() {
    let e = Engine::new(PlainBackend, memuser());
    let c = &*e.circuit;
    let whole = e.plan_partition(2);
    assert_eq!(whole.ram_edges[0].holders.len(), 1);
    for ranks in [3, 8, 64] {
        let p = e.plan_partition(ranks);
        let edge = &p.ram_edges[0];
        let words = c.mems[edge.mem as usize].spec.words();
        let parts = edge.holders.len();
        assert!(parts > 1 && parts.is_power_of_two() && parts <= ranks.min(words));
        let mut hs = edge.holders.clone();
        hs.dedup();
        assert_eq!(hs.len(), parts, "one part per rank");
        let joins = p
            .set
            .tasks
            .iter()
            .filter(|t| matches!(t, Task::RamJoin { .. }))
            .count();
        assert_eq!(joins, c.mems[edge.mem as usize].rdata.len());
    }
    let cb = crate::costmodel::CbSplit {
        threads: 4,
        latency: 0.3,
    };
    assert_eq!(cb.latency_on(1), 1.0);
    assert!((cb.latency_on(4) - 0.3).abs() < 1e-12);
    assert!(cb.latency_on(2) < 1.0 && cb.latency_on(2) > 0.3);
    let m = MEASURED;
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    let mut e = Engine::new(PlainBackend, memuser());
    e.set_leveled(Some(lp));
    // On 2 ranks the selects go in batches of several bits (a memory's whole address in one task),
    // which a split spreads over the rank's idle threads, one per bit.
    let p = e.plan_partition(2);
    let net = Network::TEN_GBE;
    let one = crate::costmodel::predict_with(&p, &m, &net, 4, None);
    let same = crate::costmodel::predict_with(
        &p,
        &m,
        &net,
        4,
        Some(crate::costmodel::CbSplit {
            threads: 4,
            latency: 1.0,
        }),
    );
    assert!((one.seconds - same.seconds).abs() < 1e-12);
    let split = crate::costmodel::predict_with(&p, &m, &net, 4, Some(cb));
    assert!(split.critical_path_seconds < one.critical_path_seconds);
    assert!(split.seconds < one.seconds);
    // On 64 ranks every select task is one bit: none is split.
    let p = e.plan_partition(64);
    assert!((0..p.set.len())
        .filter(|&t| p.kind(t) == TaskKind::Select)
        .all(|t| p.writes(t) == 1));
    let one = crate::costmodel::predict_with(&p, &m, &net, 4, None);
    let split = crate::costmodel::predict_with(&p, &m, &net, 4, Some(cb));
    assert!((one.seconds - split.seconds).abs() < 1e-12);
    assert!((one.critical_path_seconds - split.critical_path_seconds).abs() < 1e-12);
}

/// Placed by finish times, a one-thread rank runs its tasks of nonzero cost in the planned order:
/// each of them once, in one chain per rank, and the chains with the data dependencies still leave
/// an order in which every task can run (no rank waits for a task that waits for it).
#[test]
fn planned_order_covers_each_rank_and_never_deadlocks() {
    let mut ordered = 0;
    for e in engines() {
        for ranks in [2, 5, 64] {
            let p = e.plan_partition_with(ranks, Placement::Earliest);
            assert!(e
                .plan_partition_with(ranks, Placement::Critical)
                .planned_order()
                .is_none());
            let busiest = p.work().into_iter().fold(0.0, f64::max);
            let Some(before) = p.planned_order() else {
                assert!(
                    busiest > p.critical_path_units,
                    "{ranks} ranks: no order planned"
                );
                continue;
            };
            assert!(busiest <= p.critical_path_units);
            ordered += 1;
            let n = p.tasks();
            // Each rank's chain: one first task, every other task of nonzero cost after one
            // task of its own rank.
            let mut firsts = HashSet::new();
            for (t, &u) in before.iter().enumerate() {
                if p.cost(t) == 0.0 {
                    assert_eq!(u, u32::MAX, "task {t} of no cost is in a chain");
                } else if u == u32::MAX {
                    assert!(
                        firsts.insert(p.owner[t]),
                        "two first tasks on rank {}",
                        p.owner[t]
                    );
                } else {
                    assert_eq!(p.owner[u as usize], p.owner[t]);
                    assert!(p.cost(u as usize) > 0.0);
                }
            }
            let mut followers = HashMap::new();
            for &u in before.iter().filter(|&&u| u != u32::MAX) {
                *followers.entry(u).or_insert(0) += 1;
            }
            assert!(followers.values().all(|&k| k == 1), "a chain forks");
            // Kahn's algorithm over data dependencies and chains visits every task.
            let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
            let mut waits = vec![0usize; n];
            for t in 0..n {
                for i in &p.set.facts[t].reads {
                    if let Some(&q) = p.set.producer.get(i) {
                        succ[q as usize].push(t);
                        waits[t] += 1;
                    }
                }
                if before[t] != u32::MAX {
                    succ[before[t] as usize].push(t);
                    waits[t] += 1;
                }
            }
            let mut ready: Vec<usize> = (0..n).filter(|&t| waits[t] == 0).collect();
            let mut seen = 0;
            while let Some(t) = ready.pop() {
                seen += 1;
                for &s in &succ[t] {
                    waits[s] -= 1;
                    if waits[s] == 0 {
                        ready.push(s);
                    }
                }
            }
            assert_eq!(seen, n, "{ranks} ranks: the planned order deadlocks");
        }
    }
    assert!(ordered > 0, "no partition had a planned order");
}
