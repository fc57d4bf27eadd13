//! Output in large chunks through one handle: one `write` per chunk, not per line.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd;

/// A chunked writer on standard output. Paths are appended as bytes; a `write` is made
/// when the chunk is full (128 KiB, or 4 KiB on a terminal so that a person sees
/// progress) and at the end.
pub struct Output {
    out: File,
    buf: Vec<u8>,
    chunk: usize,
}

/// What ended the output early.
pub enum Closed {
    /// The reader went away (`ftw find | head`): not an error.
    Pipe,
    /// Any other write failure.
    Failed(io::Error),
}

impl Output {
    /// Standard output, written through a handle of its own (no line buffering).
    pub fn stdout() -> io::Result<Output> {
        let stdout = io::stdout();
        let chunk = if stdout.is_terminal() {
            4 << 10
        } else {
            128 << 10
        };
        let out = File::from(stdout.as_fd().try_clone_to_owned()?);
        Ok(Output {
            out,
            buf: Vec::with_capacity(chunk + 8192),
            chunk,
        })
    }

    /// The buffer to append one record to; call [`Output::end_record`] after.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Writes the chunk out if it is full.
    #[inline]
    pub fn end_record(&mut self) -> Result<(), Closed> {
        if self.buf.len() >= self.chunk {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Writes out whatever is buffered.
    pub fn flush(&mut self) -> Result<(), Closed> {
        let res = self.out.write_all(&self.buf);
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
