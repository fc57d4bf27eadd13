//! Output in large chunks through one handle: one `write` per chunk, not per line, and
//! nothing held back for long.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// How long a record may wait in a buffer while more come slowly (a cold disk): the
/// next record to come after that takes it out with it, and the writer thread writes
/// what it holds when no batch came for that long. `ftw find | head -1` gets its line
/// promptly, and a person watching sees progress.
pub const LATENCY: Duration = Duration::from_millis(20);

/// Tells when buffered records have waited long enough: started by the first record
/// after an empty buffer, looked at on each record (the vDSO clock, some 20 ns: about
/// 2 % of a warm serial walk's time).
#[derive(Default)]
pub struct Age {
    since: Option<Instant>,
}

impl Age {
    /// Counts one record added to a buffer; says whether the buffer is due to go out.
    #[inline]
    pub fn record(&mut self) -> bool {
        let now = Instant::now();
        match self.since {
            None => {
                self.since = Some(now);
                false
            }
            Some(since) => now.duration_since(since) >= LATENCY,
        }
    }

    /// The buffer went out.
    pub fn reset(&mut self) {
        self.since = None;
    }
}

/// The error of a write to a closed standard output: `EBADF`.
fn closed_error() -> io::Error {
    #[cfg(target_os = "linux")]
    return io::Error::from_raw_os_error(9); // EBADF
    #[cfg(not(target_os = "linux"))]
    return io::Error::other("Bad file descriptor");
}

/// Whether standard output was closed when ftw started.
pub fn stdout_closed_at_start() -> bool {
    crate::process::stdout_closed_at_start()
}

/// Standard output for what is written whole or through a `BufWriter` (an export,
/// `--generate`, the help, the output of `-x`'s commands): writes fail with "Bad file
/// descriptor" when it was closed when ftw started, as [`Output`]'s do.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if stdout_closed_at_start() && !buf.is_empty() {
            return Err(closed_error());
        }
        io::stdout().lock().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if stdout_closed_at_start() && !buf.is_empty() {
            return Err(closed_error());
        }
        let mut out = io::stdout().lock();
        out.write_all(buf)?;
        out.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().lock().flush()
    }
}

/// Reports a failed write to standard output (`ftw: standard output: REASON`); a reader
/// gone away (`EPIPE`) is not reported. Says whether it was reported (an error).
pub fn report_error(e: &io::Error) -> bool {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return false;
    }
    crate::msg::report(b"standard output", &crate::msg::describe(e));
    true
}

/// A chunked writer on standard output. Paths are appended as bytes; a `write` is made
/// when the chunk is full (128 KiB, or 4 KiB on a terminal), when records have waited
/// [`LATENCY`], and at the end.
pub struct Output {
    /// `None` when standard output was closed: the first write fails with `EBADF`.
    out: Option<File>,
    buf: Vec<u8>,
    chunk: usize,
    age: Age,
}

/// What ended the output early.
pub enum Closed {
    /// The reader went away (`ftw find | head`): not an error.
    Pipe,
    /// Any other write failure.
    Failed(io::Error),
}

impl Output {
    /// Standard output, written through a handle of its own (no line buffering). When
    /// it was closed, writes fail with "Bad file descriptor", as they would in C; a run
    /// that writes nothing does not fail.
    pub fn stdout() -> io::Result<Output> {
        let stdout = io::stdout();
        if crate::process::stdout_closed_at_start() {
            return Ok(Output::with(None, 4 << 10));
        }
        let chunk = if stdout.is_terminal() {
            4 << 10
        } else {
            128 << 10
        };
        #[cfg(unix)]
        let own = std::os::fd::AsFd::as_fd(&stdout).try_clone_to_owned()?;
        #[cfg(windows)]
        let own = std::os::windows::io::AsHandle::as_handle(&stdout).try_clone_to_owned()?;
        Ok(Output::new(File::from(own), chunk))
    }

    /// Output to `out` in chunks of `chunk` bytes.
    pub fn new(out: File, chunk: usize) -> Output {
        Output::with(Some(out), chunk)
    }

    fn with(out: Option<File>, chunk: usize) -> Output {
        Output {
            out,
            buf: Vec::with_capacity(chunk + 8192),
            chunk,
            age: Age::default(),
        }
    }

    /// The size of a full chunk.
    pub fn chunk(&self) -> usize {
        self.chunk
    }

    /// The buffer to append one record to; call [`Output::end_record`] after.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Writes the chunk out if it is full or has waited long enough.
    #[inline]
    pub fn end_record(&mut self) -> Result<(), Closed> {
        if self.age.record() || self.buf.len() >= self.chunk {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Writes out whatever is buffered.
    pub fn flush(&mut self) -> Result<(), Closed> {
        self.age.reset();
        if self.buf.is_empty() {
            return Ok(());
        }
        let res = match &mut self.out {
            Some(out) => out.write_all(&self.buf),
            None => Err(closed_error()),
        };
        self.buf.clear();
        res.map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                Closed::Pipe
            } else {
                Closed::Failed(e)
            }
        })
    }
}

// A non-blocking pipe (rustix) watches the writer.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Whether `r` has bytes to read now (it is non-blocking).
    fn readable(r: &mut std::io::PipeReader) -> usize {
        let mut buf = [0u8; 4096];
        r.read(&mut buf).unwrap_or(0)
    }

    #[test]
    fn records_that_trickle_in_go_out_after_the_latency() {
        let (mut r, w) = std::io::pipe().unwrap();
        rustix::fs::fcntl_setfl(&r, rustix::fs::OFlags::NONBLOCK).unwrap();
        let mut out = Output::new(File::from(std::os::fd::OwnedFd::from(w)), 128 << 10);
        for _ in 0..3 {
            out.buf().extend_from_slice(b"a/b\n");
            assert!(out.end_record().is_ok());
        }
        assert_eq!(readable(&mut r), 0, "a few fresh records wait for more");
        std::thread::sleep(LATENCY * 2);
        // The next record finds the first ones late.
        out.buf().extend_from_slice(b"a/c\n");
        assert!(out.end_record().is_ok());
        assert!(readable(&mut r) > 0, "records that waited went out");
    }
}
