//! The list scheduler: runs a task DAG on N worker threads, always starting the ready task with the
//! highest priority (HEFT upward rank: a task's cost plus the largest rank among its successors, so the
//! critical path moves first — Iyokan's `--sched ranku`, VSP paper seed 000). Dependents are released by
//! atomic counters; idle workers sleep on a condition variable (no busy waiting). A panicking task stops
//! the run and is reported as an error instead of deadlocking the other workers.
//!
//! Tasks may also wait for events from outside the graph (`run_pumped`): the calling thread pumps
//! them (the MPI executor's messages: it posts sends as results appear and releases the tasks whose
//! operands arrived) while the workers compute.

use std::collections::BinaryHeap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::CircuitError;

/// A DAG in compressed form with per-task costs and upward-rank priorities.
#[derive(Clone, Debug, Default)]
pub struct TaskGraph {
    preds: Vec<u32>,
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    priority: Vec<f64>,
}

impl TaskGraph {
    /// Builds the graph from each task's predecessor list and cost. Predecessors must be listed
    /// before use (the caller guarantees acyclicity; tasks are given in a topological order).
    pub fn new(preds: &[Vec<u32>], cost: &[f64]) -> Self {
        let mut g = Self::with_priorities(preds, Vec::new());
        // Upward rank, computed in reverse topological order (tasks are topologically ordered).
        let n = preds.len();
        let mut priority = vec![0f64; n];
        for t in (0..n).rev() {
            let best = g
                .successors(t)
                .iter()
                .map(|&s| priority[s as usize])
                .fold(0.0, f64::max);
            priority[t] = cost.get(t).copied().unwrap_or(0.0) + best;
        }
        g.priority = priority;
        g
    }

    /// Builds the graph from each task's predecessor list with the given priorities (e.g. the
    /// upward ranks in a larger graph this one is part of); missing ones are 0.
    pub fn with_priorities(preds: &[Vec<u32>], mut priority: Vec<f64>) -> Self {
        let n = preds.len();
        priority.resize(n, 0.0);
        let mut succ_start = vec![0u32; n + 1];
        for ps in preds {
            for &p in ps {
                succ_start[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            succ_start[i + 1] += succ_start[i];
        }
        let mut fill = succ_start.clone();
        let mut succ = vec![0u32; succ_start[n] as usize];
        for (t, ps) in preds.iter().enumerate() {
            for &p in ps {
                succ[fill[p as usize] as usize] = t as u32;
                fill[p as usize] += 1;
            }
        }
        TaskGraph {
            preds: preds.iter().map(|p| p.len() as u32).collect(),
            succ_start,
            succ,
            priority,
        }
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.preds.len()
    }
    /// True when there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.preds.is_empty()
    }
    /// The upward rank of task `t` (its priority).
    pub fn priority(&self, t: usize) -> f64 {
        self.priority[t]
    }
    /// The critical path: the largest upward rank (in cost units).
    pub fn critical_path(&self) -> f64 {
        self.priority.iter().copied().fold(0.0, f64::max)
    }
    fn successors(&self, t: usize) -> &[u32] {
        &self.succ[self.succ_start[t] as usize..self.succ_start[t + 1] as usize]
    }
}

#[derive(PartialEq)]
struct Ready(f64, u32);
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ready {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Higher priority first; ties broken by lower task index (earlier in topological order).
        self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
    }
}

/// Timing of one scheduled run.
#[derive(Clone, Debug, Default)]
pub struct RunTiming {
    /// Wall-clock seconds.
    pub wall: f64,
    /// Sum over workers of seconds spent inside tasks.
    pub busy: f64,
    /// Worker threads used.
    pub threads: usize,
}

impl RunTiming {
    /// busy / (wall × threads): 1.0 means every worker was busy all the time.
    pub fn efficiency(&self) -> f64 {
        if self.wall > 0.0 && self.threads > 0 {
            self.busy / (self.wall * self.threads as f64)
        } else {
            0.0
        }
    }
}

/// Runs every task of `g` once, on `threads` workers, calling `exec(t)` for task `t` only after all its
/// predecessors finished. `tick(done)` is called from the calling thread about every `tick_every` while
/// the run is in progress (for progress bars).
pub fn run(
    g: &TaskGraph,
    threads: usize,
    exec: &(dyn Fn(usize) -> Result<(), CircuitError> + Sync),
    tick_every: Duration,
    tick: &mut dyn FnMut(usize),
) -> Result<RunTiming, CircuitError> {
    run_pumped(
        g,
        threads,
        &|t, _| exec(t),
        &|_| 1,
        None,
        None,
        tick_every,
        tick,
    )
}

/// [`run`] where a task may use more than its own worker: `wide(t)` is the most threads task `t`
/// can use (1 for most), and `exec(t, lanes)` runs it on `lanes` threads — its own and `lanes − 1`
/// of the idle workers' (workers neither running a task nor wanted by another ready task), which it
/// holds until it ends: no worker starts a task while the lanes in use fill every worker, so the
/// threads running never exceed `threads`. A task started while every worker is busy or other
/// tasks wait gets one lane.
pub fn run_wide(
    g: &TaskGraph,
    threads: usize,
    exec: &(dyn Fn(usize, usize) -> Result<(), CircuitError> + Sync),
    wide: &(dyn Fn(usize) -> usize + Sync),
    tick_every: Duration,
    tick: &mut dyn FnMut(usize),
) -> Result<RunTiming, CircuitError> {
    run_pumped(g, threads, exec, wide, None, None, tick_every, tick)
}

/// Tasks a worker may run together in one call ([`run_batched`]): gate bootstraps, which share
/// their reads of the bootstrapping key when run as a batch.
pub struct Batching<'a> {
    /// Most tasks in one batch (1: none are batched).
    pub max: usize,
    /// Whether task `t` may join a batch.
    pub batchable: &'a (dyn Fn(usize) -> bool + Sync),
    /// Runs the tasks of a batch (two or more, independent: all were ready at once).
    pub exec: &'a (dyn Fn(&[usize]) -> Result<(), CircuitError> + Sync),
}

/// [`run_wide`] where a worker that takes a batchable task also takes the next ready ones while they
/// are batchable, up to `batching.max` in all, and runs them in one call of `batching.exec`. It
/// takes them in priority order, only from the surplus of ready tasks over the workers free to take
/// them (a task another worker would start at once is never held back in a batch), and never waits
/// for a task to become ready.
pub fn run_batched(
    g: &TaskGraph,
    threads: usize,
    exec: &(dyn Fn(usize, usize) -> Result<(), CircuitError> + Sync),
    wide: &(dyn Fn(usize) -> usize + Sync),
    batching: &Batching<'_>,
    tick_every: Duration,
    tick: &mut dyn FnMut(usize),
) -> Result<RunTiming, CircuitError> {
    run_pumped(
        g,
        threads,
        exec,
        wide,
        Some(batching),
        None,
        tick_every,
        tick,
    )
}

/// The ready tasks and the lanes (worker threads) the running tasks hold.
struct Queue {
    heap: BinaryHeap<Ready>,
    held: usize,
}

/// What a [`Pump`] did in one call.
pub(crate) struct Pumped {
    /// Tasks one of whose outside events happened (a task listed k times had k of them).
    pub(crate) released: Vec<u32>,
    /// True when nothing is outstanding: it will release nothing more and has nothing left to do.
    pub(crate) idle: bool,
}

/// Events from outside the graph, pumped by the calling thread of [`run_pumped`].
pub(crate) struct Pump<'a> {
    /// Per task: the outside events it waits for besides its predecessors.
    pub(crate) external: &'a [u32],
    /// How long the calling thread sleeps at most between two calls of `poll`.
    pub(crate) every: Duration,
    /// Called with the tasks finished since the last call (first with none, before any task runs).
    pub(crate) poll: &'a mut dyn FnMut(&[u32]) -> Result<Pumped, CircuitError>,
}

/// [`run_wide`], where tasks may also wait for outside events: the calling thread calls the pump's
/// `poll` at the start, after tasks finish and at least every `pump.every`, releases the tasks it
/// reports, and returns once every task is done and the pump is idle. With `batching`, workers run
/// ready batchable tasks together as [`run_batched`] says.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_pumped(
    g: &TaskGraph,
    threads: usize,
    exec: &(dyn Fn(usize, usize) -> Result<(), CircuitError> + Sync),
    wide: &(dyn Fn(usize) -> usize + Sync),
    batching: Option<&Batching<'_>>,
    mut pump: Option<Pump<'_>>,
    tick_every: Duration,
    tick: &mut dyn FnMut(usize),
) -> Result<RunTiming, CircuitError> {
    let n = g.len();
    let start = Instant::now();
    let threads = threads.max(1);
    let external = |t: usize| {
        pump.as_ref()
            .and_then(|p| p.external.get(t))
            .copied()
            .unwrap_or(0)
    };
    let remaining: Vec<AtomicU32> = (0..n)
        .map(|t| AtomicU32::new(g.preds[t] + external(t)))
        .collect();
    let heap: Mutex<Queue> = Mutex::new(Queue {
        heap: (0..n)
            .filter(|&t| g.preds[t] + external(t) == 0)
            .map(|t| Ready(g.priority[t], t as u32))
            .collect(),
        held: 0,
    });
    let pumping = pump.is_some();
    // Tasks finished since the pump's last call.
    let finished: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    let cv = Condvar::new();
    // The calling thread waits on its own condition variable so that it never steals a worker wake-up.
    let cv_done = Condvar::new();
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<CircuitError>> = Mutex::new(None);
    let busy_ns = AtomicUsize::new(0);

    let worker = || {
        let mut ready = Vec::new();
        // The tasks this worker runs now: one, or a batch.
        let mut group: Vec<usize> = Vec::new();
        loop {
            let lanes = {
                let mut h = lock(&heap);
                loop {
                    if failed.load(Ordering::Acquire) || done.load(Ordering::Acquire) == n {
                        return;
                    }
                    if h.held < threads {
                        if let Some(Ready(_, t)) = h.heap.pop() {
                            let t = t as usize;
                            // Spare lanes: workers neither running a task nor wanted by a ready one.
                            let spare = (threads - h.held - 1).saturating_sub(h.heap.len());
                            let lanes = 1 + wide(t).saturating_sub(1).min(spare);
                            h.held += lanes;
                            group.clear();
                            group.push(t);
                            if let Some(bt) = batching.filter(|bt| lanes == 1 && (bt.batchable)(t))
                            {
                                // Only the ready tasks beyond those the free workers will take.
                                while group.len() < bt.max
                                    && h.heap.len() > threads.saturating_sub(h.held)
                                {
                                    match h.heap.peek() {
                                        Some(&Ready(_, u)) if (bt.batchable)(u as usize) => {
                                            h.heap.pop();
                                            group.push(u as usize);
                                        }
                                        _ => break,
                                    }
                                }
                            }
                            break lanes;
                        }
                    }
                    h = cv.wait(h).unwrap_or_else(|e| e.into_inner());
                }
            };
            let task = group[0];
            let t0 = Instant::now();
            let outcome = match catch_unwind(AssertUnwindSafe(|| match (group.len(), batching) {
                (2.., Some(bt)) => (bt.exec)(&group),
                _ => exec(task, lanes),
            })) {
                Ok(r) => r,
                Err(_) => Err(CircuitError::Backend(format!("task {task} panicked"))),
            };
            if let Err(e) = outcome {
                let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(e);
                drop(slot);
                failed.store(true, Ordering::Release);
                let _h = lock(&heap);
                cv.notify_all();
                cv_done.notify_all();
                return;
            }
            busy_ns.fetch_add(t0.elapsed().as_nanos() as usize, Ordering::Relaxed);
            if pumping {
                lock(&finished).extend(group.iter().map(|&t| t as u32));
            }
            ready.clear();
            for &task in &group {
                for &s in g.successors(task) {
                    if remaining[s as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                        ready.push(Ready(g.priority[s as usize], s));
                    }
                }
            }
            // The lanes go back before the tasks count as done (a worker seeing every task done
            // finds none held).
            let mut h = lock(&heap);
            h.held -= lanes;
            let now_done = done.fetch_add(group.len(), Ordering::AcqRel) + group.len();
            // Lanes lent to this task free workers for tasks already waiting.
            let k = ready.len() + if lanes > 1 { h.heap.len() } else { 0 };
            if k > 0 || now_done == n || pumping {
                h.heap.extend(ready.drain(..));
                if now_done == n {
                    cv.notify_all();
                    cv_done.notify_all();
                } else {
                    if k > 1 {
                        cv.notify_all();
                    } else if k == 1 {
                        cv.notify_one();
                    }
                    if pumping {
                        cv_done.notify_all();
                    }
                }
            }
        }
    };
    let fail = |e: CircuitError| {
        lock(&first_error).get_or_insert(e);
        failed.store(true, Ordering::Release);
        let _h = lock(&heap);
        cv.notify_all();
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(worker)).collect();
        // The calling thread pumps outside events (if any) and reports progress; it sleeps between.
        let wait = pump
            .as_ref()
            .map_or(tick_every, |p| p.every.min(tick_every));
        let mut last_tick = Instant::now();
        let mut batch = Vec::new();
        loop {
            let mut idle = true;
            if let Some(p) = pump.as_mut() {
                std::mem::swap(&mut *lock(&finished), &mut batch);
                match (p.poll)(&batch) {
                    Ok(out) => {
                        idle = out.idle;
                        let mut h = lock(&heap);
                        let mut woke = 0;
                        for t in out.released {
                            let left = remaining
                                .get(t as usize)
                                .map(|r| r.fetch_sub(1, Ordering::AcqRel));
                            if left == Some(1) {
                                h.heap.push(Ready(g.priority[t as usize], t));
                                woke += 1;
                            }
                        }
                        if woke > 0 {
                            cv.notify_all();
                        }
                    }
                    Err(e) => fail(e),
                }
                batch.clear();
            }
            let all_done = done.load(Ordering::Acquire) == n;
            if failed.load(Ordering::Acquire) || (all_done && idle) {
                break;
            }
            let h = lock(&heap);
            // Finished tasks not pumped yet are handled at once; else sleep until a task finishes.
            if !pumping || lock(&finished).is_empty() {
                let _ = cv_done
                    .wait_timeout(h, wait)
                    .unwrap_or_else(|e| e.into_inner());
            }
            if last_tick.elapsed() >= tick_every {
                tick(done.load(Ordering::Acquire));
                last_tick = Instant::now();
            }
        }
        for h in handles {
            let _ = h.join();
        }
    });
    if failed.load(Ordering::Acquire) {
        let e = first_error.into_inner().unwrap_or_else(|e| e.into_inner());
        return Err(e.unwrap_or_else(|| CircuitError::Backend("evaluation failed".into())));
    }
    Ok(RunTiming {
        wall: start.elapsed().as_secs_f64(),
        busy: busy_ns.load(Ordering::Relaxed) as f64 * 1e-9,
        threads,
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as M;

    #[test]
    fn respects_dependencies_and_ranks() {
        // Diamond 0 -> {1,2} -> 3, plus an independent chain 4 -> 5.
        let preds = vec![vec![], vec![0], vec![0], vec![1, 2], vec![], vec![4]];
        let cost = vec![1.0, 5.0, 1.0, 1.0, 1.0, 1.0];
        let g = TaskGraph::new(&preds, &cost);
        assert_eq!(g.priority(0), 7.0);
        assert_eq!(g.critical_path(), 7.0);
        for threads in [1, 2, 4] {
            let log = M::new(Vec::new());
            let exec = |t: usize| {
                log.lock().unwrap().push(t);
                Ok(())
            };
            run(&g, threads, &exec, Duration::from_millis(50), &mut |_| {}).unwrap();
            let log = log.into_inner().unwrap();
            assert_eq!(log.len(), 6);
            let pos = |t: usize| log.iter().position(|&x| x == t).unwrap();
            for (t, ps) in preds.iter().enumerate() {
                for &p in ps {
                    assert!(pos(p as usize) < pos(t), "{log:?}");
                }
            }
            if threads == 1 {
                // Highest rank first: 0 (7), then 1 (6) before 2 (2) and before the chain 4 (2).
                assert_eq!(&log[..2], &[0, 1]);
            }
        }
    }

    /// A task waiting for an outside event runs only after the pump releases it, and the run lasts
    /// until the pump is idle, even after the last task.
    #[test]
    fn outside_events_release_tasks_and_the_pump_ends_the_run() {
        // 0 -> 1, and 2 waits for one outside event, which the pump reports once 1 has finished.
        let g = TaskGraph::new(&[vec![], vec![0], vec![]], &[1.0, 1.0, 5.0]);
        for threads in [1, 2] {
            let log = M::new(Vec::new());
            let exec = |t: usize| {
                log.lock().unwrap().push(t);
                Ok(())
            };
            let (mut seen, mut released, mut after) = (Vec::new(), false, 0);
            let mut poll = |fin: &[u32]| -> Result<Pumped, CircuitError> {
                seen.extend_from_slice(fin);
                let mut out = Vec::new();
                if !released && seen.contains(&1) {
                    released = true;
                    out.push(2);
                }
                if seen.len() == 3 {
                    after += 1;
                }
                Ok(Pumped {
                    released: out,
                    idle: after >= 3,
                })
            };
            let pump = Pump {
                external: &[0, 0, 1],
                every: Duration::from_millis(1),
                poll: &mut poll,
            };
            run_pumped(
                &g,
                threads,
                &|t, _| exec(t),
                &|_| 1,
                None,
                Some(pump),
                Duration::from_millis(50),
                &mut |_| {},
            )
            .unwrap();
            assert_eq!(
                log.into_inner().unwrap(),
                vec![0, 1, 2],
                "2 waits for its event"
            );
            assert_eq!(after, 3, "the run waits for the pump to be idle");
        }
    }

    /// A wide task takes the idle workers that no ready task wants, and holds them: the lanes in
    /// use never exceed the workers.
    #[test]
    fn a_wide_task_takes_the_idle_workers() {
        // 0 (wide) alone, then 1 (wide) and 2 (narrow) together, then 3 (wide) alone.
        let preds = vec![vec![], vec![0], vec![0], vec![1, 2]];
        let g = TaskGraph::new(&preds, &[1.0, 2.0, 1.0, 1.0]);
        for threads in [1usize, 2, 3, 4] {
            let lanes_of = M::new(vec![0usize; 4]);
            let (in_use, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let exec = |t: usize, lanes: usize| {
                let now = in_use.fetch_add(lanes, Ordering::SeqCst) + lanes;
                most.fetch_max(now, Ordering::SeqCst);
                lanes_of.lock().unwrap()[t] = lanes;
                std::thread::sleep(Duration::from_millis(20));
                in_use.fetch_sub(lanes, Ordering::SeqCst);
                Ok(())
            };
            let wide = |t: usize| if t == 2 { 1 } else { 8 };
            run_wide(
                &g,
                threads,
                &exec,
                &wide,
                Duration::from_millis(50),
                &mut |_| {},
            )
            .unwrap();
            let lanes = lanes_of.into_inner().unwrap();
            // 1 and 2 ready together: 1 gets the workers but the one 2 wants (whichever starts
            // first); 2 gets one.
            let pair = (threads.max(2) - 1).max(1);
            assert_eq!(lanes, vec![threads, pair, 1, threads], "{threads} threads");
            assert!(most.load(Ordering::SeqCst) <= threads, "{threads} threads");
        }
    }

    /// Batches: ready batchable tasks beyond the free workers run together, in priority order, up
    /// to the batch size, never with a task that depends on another of the batch nor with a
    /// non-batchable one; every task runs once, after its predecessors.
    #[test]
    fn ready_batchable_tasks_run_in_batches() {
        // 0 -> {1..=6} -> 7; 4 is not batchable; 1..=6 have falling priorities.
        let mut preds: Vec<Vec<u32>> = vec![vec![]];
        preds.extend((1..=6).map(|_| vec![0]));
        preds.push((1..=6).collect());
        let cost = [1.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 1.0];
        let g = TaskGraph::new(&preds, &cost);
        for threads in [1usize, 2, 3] {
            let log = M::new(Vec::<Vec<usize>>::new());
            let exec = |t: usize, _| {
                log.lock().unwrap().push(vec![t]);
                Ok(())
            };
            let exec_batch = |ts: &[usize]| {
                log.lock().unwrap().push(ts.to_vec());
                Ok(())
            };
            let batching = Batching {
                max: 3,
                batchable: &|t| t != 4,
                exec: &exec_batch,
            };
            run_batched(
                &g,
                threads,
                &exec,
                &|_| 1,
                &batching,
                Duration::from_millis(50),
                &mut |_| {},
            )
            .unwrap();
            let log = log.into_inner().unwrap();
            let mut all: Vec<usize> = log.iter().flatten().copied().collect();
            all.sort();
            assert_eq!(all, (0..8).collect::<Vec<_>>(), "{log:?}");
            let pos = |t: usize| log.iter().position(|b| b.contains(&t)).unwrap();
            for (t, ps) in preds.iter().enumerate() {
                for &p in ps {
                    assert!(pos(p as usize) < pos(t), "{log:?}");
                }
            }
            for b in &log {
                assert!(b.len() <= 3, "{log:?}");
                if b.len() > 1 {
                    assert!(!b.contains(&4), "{log:?}");
                    assert!(b.windows(2).all(|w| w[0] < w[1]), "priority order: {log:?}");
                }
            }
            if threads == 1 {
                // One worker: 0, then 1–3 together (4 is next and not batchable), 4, 5–6, 7.
                let want: Vec<Vec<usize>> =
                    vec![vec![0], vec![1, 2, 3], vec![4], vec![5, 6], vec![7]];
                assert_eq!(log, want);
            }
        }
    }

    #[test]
    fn panic_in_task_is_an_error() {
        let g = TaskGraph::new(&[vec![], vec![0], vec![]], &[1.0, 1.0, 1.0]);
        let r = run(
            &g,
            2,
            &|t| {
                if t == 1 {
                    panic!("boom")
                }
                Ok(())
            },
            Duration::from_millis(10),
            &mut |_| {},
        );
        assert!(r.is_err());
    }
}
