//! What a removal did, once it is done: [`Summary`], and [`Counts`] as a `Result`.

use crate::TreeError;
use crate::walk::Error;
use std::io;

/// How many errors a [`Summary`] keeps in [`Summary::errors`] when no [`Report`] takes
/// them: the first ones met. Every error is counted all the same
/// ([`Summary::error_count`]).
///
/// [`Report`]: super::Report
pub const KEPT_ERRORS: usize = 100;

/// What a removal did: it goes on past an error, so a removal that failed somewhere
/// still says what it removed. [`Summary::into_result`] makes it a `Result`.
#[derive(Debug, Default)]
#[must_use = "a removal may have failed: see its `error_count`, or `into_result()`"]
pub struct Summary {
    /// Entries removed (in a dry run: that would be), the path itself included; an entry
    /// that something else removed meanwhile counts.
    pub removed: u64,
    /// The sizes of the files removed, with [`RemoveOptions::count_bytes`].
    ///
    /// [`RemoveOptions::count_bytes`]: super::RemoveOptions::count_bytes
    pub bytes: u64,
    /// How many entries could not be removed (their directories not counted): every
    /// error, whether kept in [`Summary::errors`], told to a [`Report`], or past the cap.
    ///
    /// [`Report`]: super::Report
    pub error_count: u64,
    /// The errors, when no [`Report`] took them: the first [`KEPT_ERRORS`] (100) met, in
    /// the order met; those past the cap are only counted ([`Summary::error_count`]).
    ///
    /// [`Report`]: super::Report
    pub errors: Vec<Error>,
    /// The first failure to start a worker thread, and the threads the removal went on
    /// with (it went on all the same).
    pub thread_error: Option<(io::Error, usize)>,
}

impl Summary {
    /// `Ok` with what was removed when there was no error, else the first error kept
    /// and how many there were.
    ///
    /// # Errors
    ///
    /// A [`TreeError`] when [`Summary::error_count`] is not 0: its first error is the
    /// first of [`Summary::errors`] (`None` if a [`Report`] took them), its count
    /// [`Summary::error_count`]. A failure to start a worker thread
    /// ([`Summary::thread_error`]) is no error: the removal went on with fewer.
    ///
    /// ```
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("t"))?;
    /// std::fs::write(tmp.path().join("t/f"), b"x")?;
    /// let opts = ftw::RemoveOptions::new().count_bytes(true);
    /// let counts = ftw::remove_tree(tmp.path().join("t"), &opts).into_result()?;
    /// assert_eq!((counts.removed, counts.bytes), (2, 1));
    ///
    /// let err = ftw::remove_tree(tmp.path().join("t"), &opts).into_result().unwrap_err();
    /// assert_eq!((err.count(), err.kind()), (1, std::io::ErrorKind::NotFound));
    /// assert_eq!(err.first().unwrap().path(), tmp.path().join("t"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`Report`]: super::Report
    pub fn into_result(self) -> Result<Counts, TreeError> {
        if self.error_count == 0 {
            return Ok(Counts {
                removed: self.removed,
                bytes: self.bytes,
            });
        }
        let first = self.errors.into_iter().next();
        Err(TreeError::new(first, self.error_count))
    }
}

/// What a removal without errors removed ([`Summary::into_result`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Entries removed, the path itself included (see [`Summary::removed`]).
    pub removed: u64,
    /// The sizes of the files removed, with [`RemoveOptions::count_bytes`].
    ///
    /// [`RemoveOptions::count_bytes`]: super::RemoveOptions::count_bytes
    pub bytes: u64,
}
