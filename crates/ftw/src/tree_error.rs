//! [`TreeError`]: how a whole-tree operation that went on past its errors failed, as
//! one error.

use crate::walk::Error;
use std::fmt;
use std::io;
use std::path::Path;

/// The errors of a whole-tree operation ([`remove_dir_all`](crate::remove_dir_all),
/// [`dir_size`](crate::dir_size), [`Summary::into_result`](crate::remove::Summary::into_result))
/// as one error: the first met, and how many there were in all. Such an operation goes
/// on past an error, so the others were still met and counted.
///
/// It converts into an [`io::Error`] of the first error's kind, so `?` works in a
/// function that returns [`io::Result`].
///
/// ```
/// fn size(path: &std::path::Path) -> std::io::Result<u64> {
///     let summary = ftw::remove_tree(path, &ftw::RemoveOptions::new().dry_run(true));
///     let counts = summary.into_result()?; // a TreeError becomes an io::Error
///     Ok(counts.removed)
/// }
/// let err = size("/nonexistent/ftw-doc".as_ref()).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// ```
#[derive(Debug)]
pub struct TreeError {
    first: Option<Error>,
    count: u64,
}

impl TreeError {
    /// An error of `count` errors (at least 1) whose first is `first`, if it was kept.
    pub(crate) fn new(first: Option<Error>, count: u64) -> TreeError {
        TreeError {
            first,
            count: count.max(1),
        }
    }

    /// The first error met, with its path. `None` when the errors were told to a
    /// [`Report`](crate::remove::Report) and not kept.
    pub fn first(&self) -> Option<&Error> {
        self.first.as_ref()
    }

    /// Takes the first error out (see [`TreeError::first`]).
    pub fn into_first(self) -> Option<Error> {
        self.first
    }

    /// How many errors there were in all (at least 1).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The kind of the first error ([`io::ErrorKind::Other`] when it was not kept).
    pub fn kind(&self) -> io::ErrorKind {
        self.first
            .as_ref()
            .map_or(io::ErrorKind::Other, |e| e.io_error().kind())
    }
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let more = self.count - 1;
        match &self.first {
            Some(e) if more == 0 => write!(f, "{e}"),
            Some(e) if more == 1 => write!(f, "{e} (and 1 more error)"),
            Some(e) => write!(f, "{e} (and {more} more errors)"),
            None if self.count == 1 => f.write_str("1 error (told to the report)"),
            None => write!(f, "{} errors (told to the report)", self.count),
        }
    }
}

impl std::error::Error for TreeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.first.as_ref().map(|e| e as _)
    }
}

impl From<TreeError> for io::Error {
    fn from(e: TreeError) -> io::Error {
        io::Error::new(e.kind(), e)
    }
}

/// The error `err` of the path a whole-tree operation was given, as that operation's
/// other errors are: of `err`'s kind, its message naming the path, its inner error a
/// [`TreeError`] of one.
pub(crate) fn path_error(path: &Path, err: io::Error) -> io::Error {
    TreeError::new(Some(Error::io(path.to_path_buf(), 0, err)), 1).into()
}

/// `ENOTDIR`, said as the system says it ("Not a directory") where it has the number.
pub(crate) fn not_a_directory() -> io::Error {
    #[cfg(unix)]
    return io::Error::from_raw_os_error(20);
    #[cfg(not(unix))]
    io::Error::from(io::ErrorKind::NotADirectory)
}

/// A copy of `e` (an [`Error`] is not `Clone`: its `io::Error` is copied by its OS error
/// code, or else by its kind and message).
pub(crate) fn copy_error(e: &Error) -> Error {
    if let Some(ancestor) = e.loop_ancestor() {
        return Error::fs_loop(e.path().to_owned(), e.depth(), ancestor.to_owned());
    }
    let io = e.io_error();
    let io = match io.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(io.kind(), io.to_string()),
    };
    Error::io(e.path().to_owned(), e.depth(), io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_the_first_error_and_how_many_more() {
        let e = |n| {
            let first = Error::io("p".into(), 0, io::Error::from(io::ErrorKind::NotFound));
            TreeError::new(Some(first), n)
        };
        let one = e(1);
        assert!(one.to_string().starts_with("p: "), "{one}");
        assert!(!one.to_string().contains("more"), "{one}");
        assert!(e(2).to_string().ends_with("(and 1 more error)"), "{}", e(2));
        assert!(
            e(5).to_string().ends_with("(and 4 more errors)"),
            "{}",
            e(5)
        );
        assert_eq!(io::Error::from(e(5)).kind(), io::ErrorKind::NotFound);
        let told = TreeError::new(None, 3);
        assert_eq!(told.to_string(), "3 errors (told to the report)");
        assert_eq!(io::Error::from(told).kind(), io::ErrorKind::Other);
    }

    #[test]
    fn a_copy_keeps_the_os_error_and_the_loop() {
        let e = Error::io("p".into(), 2, io::Error::from_raw_os_error(13));
        let c = copy_error(&e);
        assert_eq!((c.path(), c.depth()), (e.path(), 2));
        assert_eq!(c.io_error().raw_os_error(), Some(13));
        let l = Error::fs_loop("l".into(), 1, "a".into());
        assert_eq!(
            copy_error(&l).loop_ancestor(),
            Some(std::path::Path::new("a"))
        );
    }
}
