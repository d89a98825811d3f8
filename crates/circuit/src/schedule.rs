//! The list scheduler: runs a task DAG on N worker threads, always starting the ready task with the
//! highest priority (HEFT upward rank: a task's cost plus the largest rank among its successors, so the
//! critical path moves first — Iyokan's `--sched ranku`, VSP paper seed 000). Dependents are released by
//! atomic counters; idle workers sleep on a condition variable (no busy waiting). A panicking task stops
//! the run and is reported as an error instead of deadlocking the other workers.

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
        let n = preds.len();
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
        // Upward rank, computed in reverse topological order (tasks are topologically ordered).
        let mut priority = vec![0f64; n];
        for t in (0..n).rev() {
            let best = succ[succ_start[t] as usize..succ_start[t + 1] as usize]
                .iter()
                .map(|&s| priority[s as usize])
                .fold(0.0, f64::max);
            priority[t] = cost.get(t).copied().unwrap_or(0.0) + best;
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
    let n = g.len();
    let start = Instant::now();
    let threads = threads.max(1);
    if n == 0 {
        return Ok(RunTiming {
            wall: 0.0,
            busy: 0.0,
            threads,
        });
    }
    let remaining: Vec<AtomicU32> = g.preds.iter().map(|&p| AtomicU32::new(p)).collect();
    let heap: Mutex<BinaryHeap<Ready>> = Mutex::new(
        (0..n)
            .filter(|&t| g.preds[t] == 0)
            .map(|t| Ready(g.priority[t], t as u32))
            .collect(),
    );
    let cv = Condvar::new();
    // The calling thread waits on its own condition variable so that it never steals a worker wake-up.
    let cv_done = Condvar::new();
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<CircuitError>> = Mutex::new(None);
    let busy_ns = AtomicUsize::new(0);

    let worker = || {
        let mut ready = Vec::new();
        loop {
            let task = {
                let mut h = lock(&heap);
                loop {
                    if failed.load(Ordering::Acquire) || done.load(Ordering::Acquire) == n {
                        return;
                    }
                    if let Some(Ready(_, t)) = h.pop() {
                        break t as usize;
                    }
                    h = cv.wait(h).unwrap_or_else(|e| e.into_inner());
                }
            };
            let t0 = Instant::now();
            let outcome = match catch_unwind(AssertUnwindSafe(|| exec(task))) {
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
            ready.clear();
            for &s in g.successors(task) {
                if remaining[s as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                    ready.push(Ready(g.priority[s as usize], s));
                }
            }
            let finished = done.fetch_add(1, Ordering::AcqRel) + 1;
            if !ready.is_empty() || finished == n {
                let mut h = lock(&heap);
                let k = ready.len();
                h.extend(ready.drain(..));
                if finished == n {
                    cv.notify_all();
                    cv_done.notify_all();
                } else if k > 1 {
                    cv.notify_all();
                } else {
                    cv.notify_one();
                }
            }
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(worker)).collect();
        // The calling thread only reports progress; it sleeps between reports.
        let mut h = lock(&heap);
        while done.load(Ordering::Acquire) < n && !failed.load(Ordering::Acquire) {
            let (g2, _) = cv_done
                .wait_timeout(h, tick_every)
                .unwrap_or_else(|e| e.into_inner());
            h = g2;
            drop(h);
            tick(done.load(Ordering::Acquire));
            h = lock(&heap);
        }
        drop(h);
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
