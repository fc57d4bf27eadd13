//! A progress line on standard error, for the commands that take a while (`ftw rm`,
//! `ftw du`): shown only when standard error is a terminal, redrawn a few times a
//! second by a thread of its own from counters the work updates, and wiped before any
//! other message and at the end, so that nothing of it is left in the terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether a progress line may be on the terminal now: [`crate::report`] and
/// [`crate::warn`] then wipe it first, so that their line stands alone.
static SHOWN: AtomicBool = AtomicBool::new(false);

/// Wipes the current terminal line (carriage return, erase to its end).
pub const WIPE: &[u8] = b"\r\x1b[K";

/// How long a run goes before the line first appears: a quick run shows none.
const FIRST: Duration = Duration::from_millis(300);
/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(200);

/// Bytes to write before a message on standard error: the wipe when a progress line
/// may be on the terminal, nothing otherwise.
pub fn before_message() -> &'static [u8] {
    if SHOWN.load(Ordering::Relaxed) {
        WIPE
    } else {
        b""
    }
}

/// A running progress line; [`Progress::finish`] (or dropping it) ends it.
pub struct Progress {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts a line when `wanted` and standard error is a terminal; `text` makes its
    /// content from the time elapsed (it reads the work's counters). When no thread can
    /// be started, there is simply no line.
    pub fn start<F>(wanted: bool, text: F) -> Progress
    where
        F: Fn(Duration) -> String + Send + 'static,
    {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress { stop, thread: None };
        }
        let shared = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("ftw-progress".into())
            .spawn(move || tick(&shared, text))
            .ok();
        Progress { stop, thread }
    }

    /// Ends the line and wipes it.
    pub fn finish(mut self) {
        self.end();
    }

    fn end(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        let _ = thread.join();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.end();
    }
}

/// The progress thread: waits [`FIRST`], then redraws every [`EVERY`] until told to
/// stop, then wipes its line.
fn tick<F: Fn(Duration) -> String>(stop: &(Mutex<bool>, Condvar), text: F) {
    let start = Instant::now();
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut wait = FIRST;
    loop {
        let (guard, _) = wake
            .wait_timeout_while(stopped, wait, |s| !*s)
            .unwrap_or_else(|e| e.into_inner());
        stopped = guard;
        if *stopped {
            break;
        }
        wait = EVERY;
        let mut line = WIPE.to_vec();
        line.extend_from_slice(text(start.elapsed()).as_bytes());
        let mut err = std::io::stderr().lock();
        SHOWN.store(true, Ordering::Relaxed);
        let _ = err.write_all(&line);
    }
    if SHOWN.swap(false, Ordering::Relaxed) {
        let _ = std::io::stderr().lock().write_all(WIPE);
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
        assert!(p.thread.is_none());
        p.finish();
        assert!(before_message().is_empty());
    }
}
