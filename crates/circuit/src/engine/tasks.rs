//! Task building: one cycle of a circuit under a MUX plan as a list of tasks in topological order,
//! the scheduler's graph (predecessors, costs, upward-rank priorities) and the batches of MUX
//! selects circuit-bootstrapped together.

use crate::backend::{Backend, TaskKind};
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::{Circuit, Node, NodeId, Step};
use crate::leveled::{MuxPlan, NO_SLOT};
use crate::schedule::TaskGraph;

/// One unit of scheduled work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Task {
    Node(NodeId),
    /// Circuit-bootstraps the MUX plan's selects of batch number `b` ([`Engine`]'s `batches`).
    MuxSels(u32),
    /// A MUX evaluated as a CMUX (with its extraction and refresh as planned).
    Cmux(NodeId),
    /// Lifts a source bit (input, flip-flop) to ring form.
    Lift(NodeId),
    /// Circuit-bootstraps address bits `first..first + count` of memory `mem` (one batch).
    Select {
        mem: u32,
        first: u32,
        count: u32,
    },
    /// Reads data bits `first..first + count` of the addressed ROM word.
    RomRead {
        mem: u32,
        first: u32,
        count: u32,
    },
    RamRead {
        mem: u32,
        bit: u32,
    },
    WriteVal {
        mem: u32,
        bit: u32,
    },
}

/// Most selects circuit-bootstrapped in one task: a batch streams the private key-switching key once.
pub(crate) const SELECT_BATCH: usize = 8;

/// How finely a cycle is cut into tasks (the MPI executor cuts finer on many ranks,
/// [`crate::partition::grain_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grain {
    /// MUX selects per circuit-bootstrapping batch.
    pub(crate) select_batch: usize,
    /// Memory address bits per circuit-bootstrapping task.
    pub(crate) mem_select: usize,
    /// ROM data bits per read task.
    pub(crate) rom_bits: usize,
}

/// The single-process engine's tasks: batches of [`SELECT_BATCH`], a memory's address and a ROM
/// read each one task.
pub(crate) const ENGINE_GRAIN: Grain = Grain {
    select_batch: SELECT_BATCH,
    mem_select: usize::MAX,
    rom_bits: usize::MAX,
};

/// `first..first + count` as indices.
pub(super) fn span(first: u32, count: u32) -> std::ops::Range<usize> {
    let f = first as usize;
    f..f.saturating_add(count as usize)
}

/// `(first, count)` chunks of at most `per` covering `0..n` (one empty chunk when `n` is 0).
fn chunks(n: usize, per: usize) -> Vec<(u32, u32)> {
    let per = per.max(1);
    if n == 0 {
        return vec![(0, 0)];
    }
    (0..n)
        .step_by(per)
        .map(|f| (f as u32, per.min(n - f) as u32))
        .collect()
}

/// Builds the task list (in topological order), the scheduler graph with upward-rank priorities, and
/// the batches of MUX selects, cut as `grain` says.
pub(crate) fn build_tasks<B: Backend>(
    c: &Circuit,
    b: &B,
    plan: &MuxPlan,
    grain: Grain,
) -> (Vec<Task>, TaskGraph, Vec<Vec<u32>>) {
    let mut tasks = Vec::new();
    let mut preds: Vec<Vec<u32>> = Vec::new();
    let mut cost = Vec::new();
    // The task producing each node's level-0 value and its ring (None for sources).
    let mut producer: Vec<Option<u32>> = vec![None; c.nodes.len()];
    let mut ring_producer: Vec<Option<u32>> = vec![None; c.nodes.len()];
    // The task circuit-bootstrapping each MUX select.
    let mut sel_task: Vec<Option<u32>> = vec![None; plan.sel_nodes.len()];
    let mut batches: Vec<Vec<u32>> = Vec::new();
    // Bootstraps on the longest path to each node: selects of about the same depth are batched.
    let depth = bootstrap_depth(c, plan);
    let available = |n: NodeId, producer: &[Option<u32>]| {
        matches!(
            c.nodes[n as usize],
            Node::Input(_) | Node::Const(_) | Node::Dff(_)
        ) || producer[n as usize].is_some()
    };
    let mut push = |t: Task, p: Vec<u32>, k: TaskKind, weight: f64, tasks: &mut Vec<Task>| -> u32 {
        tasks.push(t);
        preds.push(p);
        cost.push(b.task_cost(k) * weight);
        (tasks.len() - 1) as u32
    };
    let deps = |ids: &mut dyn Iterator<Item = NodeId>, producer: &[Option<u32>]| -> Vec<u32> {
        let mut v: Vec<u32> = ids.filter_map(|i| producer[i as usize]).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let i = id as usize;
                // Sources used as rings are lifted once, right before their first ring consumer.
                for x in c.operands(id) {
                    let x = x as usize;
                    if plan.lift[x] && ring_producer[x].is_none() {
                        let p = deps(&mut std::iter::once(x as NodeId), &producer);
                        ring_producer[x] = Some(push(
                            Task::Lift(x as NodeId),
                            p,
                            TaskKind::Lift,
                            1.0,
                            &mut tasks,
                        ));
                    }
                }
                let t = match c.nodes[i] {
                    Node::Mux { s, a, b: y } if plan.cmux[i] => {
                        let slot = plan.sel_slot[s as usize];
                        debug_assert_ne!(slot, NO_SLOT);
                        let st = match sel_task[slot as usize] {
                            Some(t) => t,
                            None => {
                                // One batch: this select and up to select_batch − 1 others not yet
                                // batched whose values exist by now and are no deeper (so none
                                // delays this one), deepest first.
                                let d = depth[s as usize];
                                let mut others: Vec<(u32, u32)> = (0..plan.sel_nodes.len() as u32)
                                    .filter(|&u| u != slot && sel_task[u as usize].is_none())
                                    .map(|u| (depth[plan.sel_nodes[u as usize] as usize], u))
                                    .filter(|&(du, u)| {
                                        du <= d && available(plan.sel_nodes[u as usize], &producer)
                                    })
                                    .collect();
                                others.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
                                let mut members = vec![slot];
                                members.extend(
                                    others
                                        .into_iter()
                                        .take(grain.select_batch.max(1) - 1)
                                        .map(|(_, u)| u),
                                );
                                let p = deps(
                                    &mut members.iter().map(|&u| plan.sel_nodes[u as usize]),
                                    &producer,
                                );
                                let t = push(
                                    Task::MuxSels(batches.len() as u32),
                                    p,
                                    TaskKind::Select,
                                    members.len() as f64,
                                    &mut tasks,
                                );
                                for &u in &members {
                                    sel_task[u as usize] = Some(t);
                                }
                                batches.push(members);
                                t
                            }
                        };
                        let mut p = deps(&mut [a, y].into_iter(), &ring_producer);
                        p.push(st);
                        p.sort_unstable();
                        p.dedup();
                        push(Task::Cmux(id), p, TaskKind::Cmux, 1.0, &mut tasks)
                    }
                    Node::Not(a) => {
                        let mut p = Vec::new();
                        if plan.tlwe[i] {
                            p.extend(producer[a as usize]);
                        }
                        if plan.ring[i] {
                            p.extend(ring_producer[a as usize]);
                        }
                        p.sort_unstable();
                        p.dedup();
                        push(Task::Node(id), p, TaskKind::Not, 1.0, &mut tasks)
                    }
                    Node::Mux { .. } => {
                        let p = deps(&mut c.operands(id), &producer);
                        push(Task::Node(id), p, TaskKind::Mux, 1.0, &mut tasks)
                    }
                    _ => {
                        let p = deps(&mut c.operands(id), &producer);
                        push(Task::Node(id), p, TaskKind::Gate, 1.0, &mut tasks)
                    }
                };
                producer[i] = Some(t);
                ring_producer[i] = Some(t);
            }
            Step::MemRead(m) => {
                let mem = &c.mems[m as usize];
                let sel: Vec<u32> = chunks(mem.addr.len(), grain.mem_select)
                    .into_iter()
                    .map(|(first, count)| {
                        let bits = &mem.addr[span(first, count)];
                        let p = deps(&mut bits.iter().copied(), &producer);
                        push(
                            Task::Select {
                                mem: m,
                                first,
                                count,
                            },
                            p,
                            TaskKind::Select,
                            f64::from(count),
                            &mut tasks,
                        )
                    })
                    .collect();
                match mem.spec.kind {
                    MemKind::Rom => {
                        let width = mem.rdata.len().max(1) as f64;
                        for (first, count) in chunks(mem.rdata.len(), grain.rom_bits) {
                            let t = push(
                                Task::RomRead {
                                    mem: m,
                                    first,
                                    count,
                                },
                                sel.clone(),
                                TaskKind::RomRead,
                                f64::from(count) / width,
                                &mut tasks,
                            );
                            for &r in &mem.rdata[span(first, count)] {
                                producer[r as usize] = Some(t);
                                ring_producer[r as usize] = Some(t);
                            }
                        }
                    }
                    MemKind::Ram => {
                        for (i, &r) in mem.rdata.iter().enumerate() {
                            let t = push(
                                Task::RamRead {
                                    mem: m,
                                    bit: i as u32,
                                },
                                sel.clone(),
                                TaskKind::RamRead,
                                1.0,
                                &mut tasks,
                            );
                            producer[r as usize] = Some(t);
                            ring_producer[r as usize] = Some(t);
                        }
                    }
                }
            }
        }
    }
    for (m, mem) in c.mems.iter().enumerate() {
        if mem.spec.imp != MemImpl::Cmux || mem.spec.kind != MemKind::Ram {
            continue;
        }
        for i in 0..mem.wdata.len() {
            let ids = [mem.wren.unwrap_or(0), mem.wdata[i], mem.rdata[i]];
            let p = deps(&mut ids.into_iter(), &producer);
            push(
                Task::WriteVal {
                    mem: m as u32,
                    bit: i as u32,
                },
                p,
                TaskKind::WriteValue,
                1.0,
                &mut tasks,
            );
        }
    }
    let g = TaskGraph::new(&preds, &cost);
    (tasks, g, batches)
}

/// Gate bootstraps on the longest path from the cycle's sources to each node (CMUXes and NOTs add
/// none; a memory read adds one after its address).
pub(super) fn bootstrap_depth(c: &Circuit, plan: &MuxPlan) -> Vec<u32> {
    let mut depth = vec![0u32; c.nodes.len()];
    for step in &c.order {
        match *step {
            Step::Node(id) => {
                let i = id as usize;
                let d = |x: NodeId| depth[x as usize];
                depth[i] = match c.nodes[i] {
                    Node::Not(a) => d(a),
                    Node::Gate(_, a, b) => 1 + d(a).max(d(b)),
                    Node::Cell { spec, ins } => {
                        1 + ins[..spec.arity()].iter().map(|&x| d(x)).max().unwrap_or(0)
                    }
                    Node::Mux { s, a, b } if plan.cmux[i] => d(s).max(d(a)).max(d(b)),
                    Node::Mux { s, a, b } => 1 + d(s).max(d(a)).max(d(b)),
                    _ => 0,
                };
            }
            Step::MemRead(m) => {
                let mem = &c.mems[m as usize];
                let a = mem
                    .addr
                    .iter()
                    .map(|&x| depth[x as usize])
                    .max()
                    .unwrap_or(0);
                for &r in &mem.rdata {
                    depth[r as usize] = a + 1;
                }
            }
        }
    }
    depth
}
