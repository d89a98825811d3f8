//! Progress reporting for long steps: key generation, encryption and each encrypted cycle.
//! `--quiet` (or a non-terminal stderr) turns the bars off; the final lines are still printed.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use vsp_circuit::Progress;

/// A progress bar, or nothing when quiet.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A spinner with a message, for a step of unknown length.
    pub fn spinner(quiet: bool, msg: &str) -> Bar {
        if quiet {
            return Bar { bar: None };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(msg.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Bar { bar: Some(bar) }
    }

    /// A bar over the cycles of an encrypted run.
    pub fn cycles(quiet: bool, total: u64) -> Bar {
        if quiet {
            return Bar { bar: None };
        }
        let bar = ProgressBar::new(total);
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("cycle {pos}/{len} [{bar:30}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Bar { bar: Some(bar) }
    }

    /// Updates the cycle bar from the engine's progress report.
    pub fn cycle(&self, done: u64, total: u64, p: &Progress, elapsed: f64) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(done);
        let per_cycle = if done > 0 {
            Some(elapsed / done as f64)
        } else {
            p.mean_cycle_seconds
        };
        let eta = per_cycle.map(|s| s * total.saturating_sub(done) as f64);
        let gates = if p.tasks_total > 0 {
            format!("gates {}/{}", p.tasks_done, p.tasks_total)
        } else {
            String::new()
        };
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

/// `93 s` → `1m33s`.
pub fn fmt_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `12345678` → `11.8 MiB`.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b} B")
    }
}
