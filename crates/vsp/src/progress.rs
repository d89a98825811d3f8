//! Progress reporting for long steps: key generation, encryption and each encrypted cycle.
//! `--quiet` turns it off. On a terminal these are bars; when stderr is not a terminal (a logged
//! run) the spinners are silent and a cycle run prints one line per finished cycle with its time
//! and the ETA, so a log is not silent for minutes.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
pub use vsp_platform::files::text::{fmt_bytes, fmt_secs};
use vsp_platform::server::Watch;
use vsp_platform::RunProgress;
use vsp_server::client::Follower;
use vsp_server::JobStatus;

/// A progress bar on the terminal, a line per finished cycle (stderr is not a terminal), or
/// nothing (quiet). Dropping it clears the bar.
pub enum Bar {
    None,
    Lines,
    Drawn(ProgressBar),
}

impl Bar {
    /// `bar` drawn on stderr in `template`, redrawn every `tick_ms`.
    fn drawn(bar: ProgressBar, style: Result<ProgressStyle, impl Sized>, tick_ms: u64) -> Bar {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(style.unwrap_or_else(|_| ProgressStyle::default_bar()));
        bar.enable_steady_tick(Duration::from_millis(tick_ms));
        Bar::Drawn(bar)
    }

    /// A spinner with a message, for a step of unknown length.
    pub fn spinner(quiet: bool, msg: &str) -> Bar {
        if quiet {
            return Bar::None;
        }
        let style = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]");
        let bar = ProgressBar::new_spinner().with_message(msg.to_string());
        Bar::drawn(bar, style, 120)
    }

    /// A bar over the cycles of an encrypted run.
    pub fn cycles(quiet: bool, total: u64) -> Bar {
        if quiet {
            return Bar::None;
        }
        if !std::io::stderr().is_terminal() {
            return Bar::Lines;
        }
        let style = ProgressStyle::with_template("cycle {pos}/{len} [{bar:30}] {msg}")
            .map(|s| s.progress_chars("=> "));
        Bar::drawn(ProgressBar::new(total), style, 250)
    }

    /// Updates the cycle bar (or prints the line of a finished cycle) from a run's progress.
    pub fn cycle(&self, p: &RunProgress<'_>) {
        let e = p.engine;
        match self {
            Bar::Lines => p.finished_line().into_iter().for_each(|l| eprintln!("{l}")),
            Bar::Drawn(_) => {
                let gates =
                    (e.tasks_total > 0).then_some((e.tasks_done as u64, e.tasks_total as u64));
                self.show(p.done, p.seconds_per_cycle(), p.eta(), gates);
            }
            Bar::None => {}
        }
    }

    /// The terminal bar at `done` cycles: gates of the current cycle, rate, ETA.
    fn show(&self, done: u64, per_cycle: Option<f64>, eta: Option<f64>, gates: Option<(u64, u64)>) {
        let Bar::Drawn(bar) = self else { return };
        bar.set_position(done);
        let gates = gates.map(|(d, t)| format!("gates {d}/{t}"));
        let rate = per_cycle.map(|s| format!("{s:.1} s/cycle"));
        let eta = eta.map(|s| format!("ETA {}", fmt_secs(s)));
        let [gates, rate, eta] = [gates, rate, eta].map(Option::unwrap_or_default);
        bar.set_message(format!("{gates}  {rate}  {eta}"));
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Bar::Drawn(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// What a command shows: spinners, the cycle bar and notes on stderr (none when quiet), warnings,
/// and the lines of its report on stdout.
pub struct Shown {
    quiet: bool,
    bar: Option<Bar>,
    step: Option<Bar>,
    /// A followed job's budget (its bar's length) and the cycles last shown between cycles.
    job: (Option<u64>, Option<u64>),
}

impl Shown {
    pub fn new(quiet: bool) -> Shown {
        Shown {
            quiet,
            bar: None,
            step: None,
            job: (None, None),
        }
    }

    /// A command's closing note (stderr, unless quiet), as its handler ends.
    pub fn end(&mut self, line: impl std::fmt::Display) -> anyhow::Result<()> {
        self.note(&line.to_string());
        Ok(())
    }
}

impl Watch for Shown {
    fn running(&mut self, cycles: u64) {
        self.bar = Some(Bar::cycles(self.quiet, cycles));
    }
    fn cycle(&mut self, p: &RunProgress<'_>) {
        if let Some(b) = &self.bar {
            b.cycle(p);
        }
    }
    fn ran(&mut self) {
        self.bar = None;
    }
    fn warn(&mut self, message: &str) {
        eprintln!("{message}");
    }
    fn note(&mut self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }
    fn step(&mut self, what: &str) {
        self.step = Some(Bar::spinner(self.quiet, what));
    }
    fn step_done(&mut self) {
        self.step = None;
    }
    fn say(&mut self, line: &str) {
        println!("{line}");
    }
}

/// A remote job's statuses (`vsp remote submit --wait`, `watch`) on `vsp run`'s cycle bar: a new
/// bar when the job's budget grows, one line per finished cycle off a terminal.
impl Follower for Shown {
    fn status(&mut self, s: &JobStatus) {
        let (done, total) = (s.cycles_done, s.cycles);
        if self.job.0.replace(total) != Some(total) {
            self.running(total);
        }
        // Between cycles (no gate count), one report per cycle.
        if s.gates.is_none() && self.job.1.replace(done) == Some(done) {
            return;
        }
        match &self.bar {
            Some(Bar::Lines) if s.gates.is_none() => eprintln!("{}", s.progress_line()),
            Some(bar) => bar.show(done, s.seconds_per_cycle, s.eta_seconds, s.gates),
            None => {}
        }
    }
}
