//! Progress reporting for long steps: key generation, encryption and each encrypted cycle.
//! `--quiet` turns it off. On a terminal these are bars; when stderr is not a terminal (a logged
//! run) the spinners are silent and a cycle run prints one line per finished cycle with its time
//! and the ETA, so a log is not silent for minutes.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
pub use vsp_platform::files::text::{fmt_bytes, fmt_secs};
use vsp_platform::RunProgress;
use vsp_server::JobStatus;

/// A progress bar, per-cycle lines, or nothing when quiet.
pub struct Bar {
    bar: Option<ProgressBar>,
    /// Print a line per finished cycle (stderr is not a terminal).
    lines: bool,
}

impl Bar {
    /// A spinner with a message, for a step of unknown length.
    pub fn spinner(quiet: bool, msg: &str) -> Bar {
        if quiet {
            return Bar::none();
        }
        let bar = ProgressBar::new_spinner();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(msg.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Bar {
            bar: Some(bar),
            lines: false,
        }
    }

    fn none() -> Bar {
        Bar {
            bar: None,
            lines: false,
        }
    }

    /// A bar over the cycles of an encrypted run.
    pub fn cycles(quiet: bool, total: u64) -> Bar {
        if quiet {
            return Bar::none();
        }
        if !std::io::stderr().is_terminal() {
            return Bar {
                bar: None,
                lines: true,
            };
        }
        let bar = ProgressBar::new(total);
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("cycle {pos}/{len} [{bar:30}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Bar {
            bar: Some(bar),
            lines: false,
        }
    }

    /// Updates the cycle bar (or prints the line of a finished cycle) from a run's progress.
    pub fn cycle(&self, p: &RunProgress<'_>) {
        let per_cycle = p.seconds_per_cycle();
        let eta = p.eta();
        if self.lines {
            if p.engine.cycle_finished {
                eprintln!(
                    "cycle {}/{} done in {:.1} s ({:.1} s/cycle, ETA {})",
                    p.done,
                    p.total,
                    p.engine.cycle_seconds,
                    per_cycle.unwrap_or(p.engine.cycle_seconds),
                    fmt_secs(eta.unwrap_or(0.0))
                );
            }
            return;
        }
        let e = p.engine;
        let gates = (e.tasks_total > 0).then_some((e.tasks_done as u64, e.tasks_total as u64));
        self.show(p.done, per_cycle, eta, gates);
    }

    /// The terminal bar at `done` cycles: gates of the current cycle, rate, ETA.
    fn show(&self, done: u64, per_cycle: Option<f64>, eta: Option<f64>, gates: Option<(u64, u64)>) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(done);
        let gates = gates
            .map(|(d, t)| format!("gates {d}/{t}"))
            .unwrap_or_default();
        let rate = per_cycle
            .map(|s| format!("{s:.1} s/cycle"))
            .unwrap_or_default();
        let eta = eta
            .map(|s| format!("ETA {}", fmt_secs(s)))
            .unwrap_or_default();
        bar.set_message(format!("{gates}  {rate}  {eta}"));
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The cycle bar of `vsp run` driven by a remote job's statuses (`vsp remote submit --wait`,
/// `watch`): a new bar when the job's budget grows, one line per finished cycle off a terminal.
pub struct JobBar {
    quiet: bool,
    bar: Option<(Bar, u64)>,
    shown: Option<u64>,
}

impl JobBar {
    pub fn new(quiet: bool) -> JobBar {
        JobBar {
            quiet,
            bar: None,
            shown: None,
        }
    }

    pub fn show(&mut self, s: &JobStatus) {
        let (done, total, per_cycle, eta) =
            (s.cycles_done, s.cycles, s.seconds_per_cycle, s.eta_seconds);
        if self.bar.as_ref().is_none_or(|(_, t)| *t != total) {
            self.bar = Some((Bar::cycles(self.quiet, total), total));
        }
        // Between cycles (no gate count), one report per cycle.
        if s.gates.is_none() && self.shown.replace(done) == Some(done) {
            return;
        }
        let Some((bar, _)) = &self.bar else { return };
        if !bar.lines {
            bar.show(done, per_cycle, eta, s.gates);
        } else if s.gates.is_none() {
            let rate = per_cycle
                .map(|s| format!(" ({s:.1} s/cycle, ETA {})", fmt_secs(eta.unwrap_or(0.0))))
                .unwrap_or_default();
            eprintln!("cycle {done}/{total}{rate}");
        }
    }
}

/// What a command shows: spinners, the cycle bar and notes on stderr (none when quiet), warnings,
/// and the lines of its report on stdout.
pub struct Shown {
    quiet: bool,
    bar: Option<Bar>,
    step: Option<Bar>,
}

impl Shown {
    pub fn new(quiet: bool) -> Shown {
        Shown {
            quiet,
            bar: None,
            step: None,
        }
    }
    pub fn quiet(&self) -> bool {
        self.quiet
    }
    /// A command's closing note (stderr, unless quiet), as its handler ends.
    pub fn end(&mut self, line: &str) -> anyhow::Result<()> {
        vsp_platform::server::Watch::note(self, line);
        Ok(())
    }
}

impl vsp_platform::server::Watch for Shown {
    fn load_keys(
        &mut self,
        path: &std::path::Path,
    ) -> vsp_platform::Result<std::sync::Arc<vsp_platform::ServerKeys>> {
        let t = std::time::Instant::now();
        let msg = "loading the evaluation key (regenerating masks from seeds)";
        let bar = Bar::spinner(self.quiet, msg);
        let keys = vsp_platform::ServerKeys::load(path)?;
        bar.finish();
        if !self.quiet {
            let secs = fmt_secs(t.elapsed().as_secs_f64());
            eprintln!("evaluation key ready in {secs}");
        }
        Ok(std::sync::Arc::new(keys))
    }
    fn running(&mut self, cycles: u64) {
        self.bar = Some(Bar::cycles(self.quiet, cycles));
    }
    fn cycle(&mut self, p: &RunProgress<'_>) {
        if let Some(b) = &self.bar {
            b.cycle(p);
        }
    }
    fn ran(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
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
        if let Some(b) = self.step.take() {
            b.finish();
        }
    }
    fn say(&mut self, line: &str) {
        println!("{line}");
    }
}
