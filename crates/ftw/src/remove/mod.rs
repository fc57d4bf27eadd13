//! Removal of whole trees through directory handles: a [`Visitor`] of the walker that
//! unlinks each non-directory as its entry is seen and removes each directory when it
//! is left, relative to the handles the walk keeps.
//!
//! - Every call is relative to an open directory: a subdirectory is opened with
//!   `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)`, an entry removed with
//!   `unlinkat(dir, name)`. A symbolic link is removed, never followed, whether it is
//!   the path given or inside the tree, and a directory swapped for a link while the
//!   removal runs is not entered: nothing outside the tree is touched.
//! - The entry's `d_type` says file or directory (a `statx` only where the file system
//!   does not say), so no call is made that is expected to fail.
//! - No recursion and a bounded number of open handles, whatever the depth
//!   ([`WalkBuilder::keep_handles`]).
//! - In parallel, each directory is a job of the walker's work-stealing pool, and the
//!   job that finishes a directory's last child removes it.
//! - Another process removing the same tree is no error: an entry already gone counts
//!   as removed. A directory that fills again while it is removed is read again, a
//!   bounded number of times, then reported.
//!
//! ```
//! let tmp = tempfile::tempdir()?;
//! let tree = tmp.path().join("tree");
//! std::fs::create_dir_all(tree.join("a/b"))?;
//! std::fs::write(tree.join("a/b/file"), b"data")?;
//! std::fs::write(tree.join("top"), b"data")?;
//!
//! let summary = ftw::remove_tree(&tree, &ftw::RemoveOptions::new());
//! assert!(summary.errors.is_empty());
//! assert_eq!(summary.removed, 5); // top, a/b/file, a/b, a and the tree itself
//! assert!(!tree.exists());
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! [`Visitor`]: crate::walk::Visitor
//! [`WalkBuilder::keep_handles`]: crate::walk::WalkBuilder::keep_handles

mod options;
mod path;
mod policy;
mod predict;
mod remover;
mod report;
mod summary;
mod writable;

pub use options::RemoveOptions;
pub use policy::{Refusal, check_path};
pub use report::{Progress, Report};
pub use summary::{Counts, KEPT_ERRORS, Summary};
pub use writable::DirNotWritable;

use crate::sys::Dir;
use crate::tree_error::{not_a_directory, path_error};
use crate::walk::Error;
use path::remove_path;
use remover::{Shared, root_dev};
use std::io;
use std::path::Path;

/// Removes a directory and everything in it, as [`std::fs::remove_dir_all`] does, but
/// in parallel and through directory handles (see the [module](self)): nothing outside
/// the tree is touched, even if a directory inside it is replaced by a symbolic link
/// while the removal runs.
///
/// The same contract as std's: a path that is a symbolic link is removed itself, not
/// what it leads to; a path that does not exist is an error of kind
/// [`NotFound`](io::ErrorKind::NotFound); a path that is neither a directory nor a link
/// is an error of kind [`NotADirectory`](io::ErrorKind::NotADirectory) (use
/// [`std::fs::remove_file`]); an entry removed by someone else meanwhile is no error. It
/// goes on past an error, removing all it can. It is stricter where std's would
/// remove what is outside the path or fail half-way: the root directory, a path ending
/// in `.` or `..`, and a link named with a trailing slash are refused before anything
/// is removed ([`RemoveOptions::preserve_root`], [`check_path`]). For threads, file
/// systems, permissions or progress, use [`remove_tree`] with [`RemoveOptions`].
///
/// # Errors
///
/// The path's own error, of the kind std's gives (no such file, not a directory,
/// permission denied); otherwise, if some entries could not be removed, an error of
/// the first one's kind. Either way its message names the path, and says how many
/// errors there were (its inner error is a [`TreeError`]: see [`io::Error::get_ref`]).
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// let tree = tmp.path().join("tree");
/// std::fs::create_dir_all(tree.join("a/b"))?;
/// std::fs::write(tree.join("a/b/file"), b"data")?;
/// ftw::remove_dir_all(&tree)?;
/// assert!(!tree.exists());
///
/// let err = ftw::remove_dir_all(&tree).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// assert!(err.to_string().starts_with(&format!("{}: ", tree.display())));
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// [`TreeError`]: crate::TreeError
pub fn remove_dir_all<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    // The path's own errors of the kinds std's gives (the same `lstat` first), named.
    let meta = std::fs::symlink_metadata(path).map_err(|e| path_error(path, e))?;
    if !meta.is_dir() && !meta.file_type().is_symlink() {
        return Err(path_error(path, not_a_directory()));
    }
    remove_tree(path, &RemoveOptions::new())
        .into_result()
        .map(drop)
        .map_err(io::Error::from)
}

/// Removes `path` and, if it is a directory, everything below it. A symbolic link is
/// removed, not followed (named with a trailing slash, it is refused: the slash asks
/// for the directory it leads to, which is not inside the tree). Errors are reported
/// with their paths (to the [`Report`] if one is set, else in the summary) and the
/// rest is still removed. See the [module](self) for how.
pub fn remove_tree<P: AsRef<Path>>(path: P, options: &RemoveOptions) -> Summary {
    let shared = Shared::new(options);
    remove_path(&shared, path.as_ref());
    shared.summary()
}

/// Removes everything inside the open directory `dir`, but not `dir` itself. Paths in
/// errors and reports begin with `.`.
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("sub"))?;
/// std::fs::write(tmp.path().join("sub/f"), b"x")?;
/// let dir = ftw::sys::Dir::open(tmp.path())?;
/// let summary = ftw::remove_dir_contents(&dir, &ftw::RemoveOptions::new());
/// assert_eq!((summary.removed, summary.error_count), (2, 0));
/// assert_eq!(std::fs::read_dir(tmp.path())?.count(), 0);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn remove_dir_contents(dir: &Dir, options: &RemoveOptions) -> Summary {
    let shared = Shared::new(options);
    // A new open of the directory (not a copy of the handle, which would share its
    // read position).
    match dir.open_at(c".") {
        Ok(own) => {
            let root_dev = root_dev(&shared, &own);
            let reopen = || dir.open_at(c".");
            shared.walk(own, b".", root_dev, options.threads, false, &reopen);
        }
        Err(e) => shared.error(Error::io(".".into(), 0, e)),
    }
    shared.summary()
}

// These tests build trees with Unix calls (symlink, modes, fifos, rustix); the
// Windows backend has its own in sys/windows_tests.rs.
#[cfg(all(test, unix))]
mod tests;
