//! What a removal tells while it runs: [`Report`] (errors, entries removed) and
//! [`Progress`] (counts for a display).

use crate::sys::FileType;
use crate::walk::Error;
use std::sync::atomic::{AtomicU64, Ordering};

/// Told of a removal's errors, and of the entries it removes, as they happen: from
/// several threads at once in a parallel removal.
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Default)]
/// struct Log(Mutex<Vec<Vec<u8>>>);
/// impl ftw::remove::Report for Log {
///     fn wants_paths(&self) -> bool {
///         true
///     }
///     fn removed(&self, path: &[u8], _: ftw::sys::FileType) {
///         self.0.lock().unwrap().push(path.to_vec());
///     }
/// }
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("t"))?;
/// std::fs::write(tmp.path().join("t/f"), b"x")?;
/// let log = Arc::new(Log::default());
/// let t = tmp.path().join("t");
/// ftw::remove_tree(&t, &ftw::RemoveOptions::new().report(log.clone())).into_result()?;
/// let f = t.join("f");
/// let expected: Vec<&[u8]> = vec![f.to_str().unwrap().as_bytes(), t.to_str().unwrap().as_bytes()];
/// assert_eq!(*log.0.lock().unwrap(), expected); // a directory after its entries
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait Report: Send + Sync {
    /// Whether [`Report::removed`] is wanted: each path is then built, which costs.
    fn wants_paths(&self) -> bool {
        false
    }

    /// An entry was removed (or, in a dry run, would be): a directory after everything
    /// in it.
    fn removed(&self, path: &[u8], file_type: FileType) {
        let _ = (path, file_type);
    }

    /// An entry could not be removed; the directories holding it are kept, without an
    /// error of their own.
    fn error(&self, error: Error) {
        let _ = error;
    }

    /// In a dry run with [`RemoveOptions::make_writable`]: the directory `path`, which
    /// cannot be read, would be given the permissions it lacks and then emptied; it is
    /// told as removed, but what it holds could be neither listed nor checked (the
    /// change that would let it be read is not made).
    ///
    /// [`RemoveOptions::make_writable`]: super::RemoveOptions::make_writable
    fn not_read(&self, path: &[u8]) {
        let _ = path;
    }
}

/// Counts that a removal updates while it runs (in batches, not per entry), for a
/// progress display.
#[derive(Debug, Default)]
pub struct Progress {
    pub(super) removed: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) errors: AtomicU64,
}

impl Progress {
    /// Entries removed so far.
    pub fn removed(&self) -> u64 {
        self.removed.load(Ordering::Relaxed)
    }

    /// Bytes of the files removed so far (with [`RemoveOptions::count_bytes`]).
    ///
    /// [`RemoveOptions::count_bytes`]: super::RemoveOptions::count_bytes
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Errors so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}
