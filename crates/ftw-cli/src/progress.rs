//! A progress line on standard error, for the commands that take a while (`ftw rm`,
//! `ftw du`), drawn by `indicatif`: shown only when standard error is a terminal and
//! the run has lasted a moment, redrawn a few times a second from counters the work
//! updates, taken off before any other message and wiped at the end, so that nothing
//! of it is left in the terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

/// The line on the terminal now, if any: [`crate::report`] and [`crate::warn`] write
/// their messages through [`write_message`], which takes it off the terminal first,
/// so that their line stands alone.
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// How long a run goes before the line first appears: a quick run shows none.
const FIRST: Duration = Duration::from_millis(300);
/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(200);

/// Writes `message` (whole lines) to standard error, with the progress line, if one
/// is shown, taken off the terminal first and drawn again after it.
pub fn write_message(message: &[u8]) {
    let write = || {
        let _ = std::io::stderr().lock().write_all(message);
    };
    match &*SHOWN.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// A running progress line; [`Progress::finish`] (or dropping it) ends it.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts a line when `wanted` and standard error is a terminal; `text` makes its
    /// content from the time elapsed (it reads the work's counters). The line is drawn
    /// by `indicatif`'s own thread; a line that cannot be drawn is simply not there.
    pub fn start<F>(wanted: bool, text: F) -> Progress
    where
        F: Fn(Duration) -> String + Send + Sync + 'static,
    {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let text = std::sync::Arc::new(text);
        let line = move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let elapsed = state.elapsed();
            if elapsed >= FIRST {
                let _ = w.write_str(&text(elapsed));
            }
        };
        let Ok(style) = ProgressStyle::with_template("{line}") else {
            return Progress { bar: None };
        };
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(style.with_key("line", line));
        bar.enable_steady_tick(EVERY);
        *SHOWN.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        Progress { bar: Some(bar) }
    }

    /// Ends the line and wipes it.
    pub fn finish(mut self) {
        self.end();
    }

    fn end(&mut self) {
        let Some(bar) = self.bar.take() else {
            return;
        };
        SHOWN.lock().unwrap_or_else(|e| e.into_inner()).take();
        bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.end();
    }
}

/// A count made short for the line: `950`, `12.3k`, `4.56M`.
pub fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2}M", n as f64 / 1e6),
        _ => format!("{:.2}G", n as f64 / 1e9),
    }
}

/// A rate per second over `elapsed`, made short as [`count`] does.
pub fn rate(n: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        return "-".into();
    }
    count((n as f64 / secs) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_short() {
        assert_eq!(count(950), "950");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(count(4_560_000), "4.56M");
        assert_eq!(count(7_000_000_000), "7.00G");
        assert_eq!(rate(1000, Duration::from_millis(500)), "2.0k");
    }

    #[test]
    fn no_line_when_not_wanted() {
        let p = Progress::start(false, |_| "x".into());
        assert!(p.bar.is_none());
        p.finish();
        assert!(SHOWN.lock().unwrap().is_none());
    }
}
