//! Which paths are refused before anything is removed ([`check_path`], [`Refusal`]),
//! and how a path given is cut into its components.

use crate::sys::{self, FileType, StatMask};
use std::fmt;
use std::path::Path;

/// Why a path is refused by [`check_path`], and by a removal: the inner error of the
/// [`std::io::Error`] (kind `InvalidInput`) that reports the path, so that a front end
/// can tell a refusal from a failure ([`std::io::Error::get_ref`]).
///
/// ```
/// use ftw::remove::Refusal;
/// let summary = ftw::remove_tree("a/..", &ftw::RemoveOptions::new().preserve_root(false));
/// let err = summary.errors[0].io_error();
/// let refusal = err.get_ref().and_then(|e| e.downcast_ref::<Refusal>());
/// assert_eq!(refusal, Some(&Refusal::Dot));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path is the root directory (or resolves to it): refused while the root is
    /// preserved ([`RemoveOptions::preserve_root`](super::RemoveOptions::preserve_root)).
    Root,
    /// The path's last component is `.` or `..` (trailing slashes aside): refused
    /// always, as POSIX asks of `rm`.
    Dot,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Root => "refusing to remove the root directory",
            Refusal::Dot => "refusing to remove '.' or '..' directory",
        })
    }
}

impl std::error::Error for Refusal {}

/// Whether `path` names `.` or `..`: its last component, trailing separators aside, is
/// one of them (`.`, `..`, `x/..`, `./.`, `x/./`); on Windows, a drive alone (`X:`, that
/// drive's current directory) too.
pub(super) fn names_dot(path: &[u8]) -> bool {
    let trimmed = trim_slashes(path);
    let last = trimmed.rsplit(|&b| is_sep(b)).next().unwrap_or(b"");
    (!trimmed.is_empty() && (last == b"." || last == b".."))
        || drive_relative(path).is_some_and(|rest| rest.is_empty())
}

/// Whether `path` may be removed while the root is preserved: not the root directory
/// (`/`, `//`, or anything that resolves to it, such as a bind mount of it; a symbolic
/// link to it is only a link, removable), and not a path whose last component is `.`
/// or `..` (`/..` too). A removal refuses the root only with
/// [`RemoveOptions::preserve_root`], and `.` and `..` whatever the options.
///
/// # Errors
///
/// The [`Refusal`]: [`Refusal::Root`] for the root directory (or what resolves to it),
/// [`Refusal::Dot`] for a last component `.` or `..`. A path that does not exist or cannot
/// be asked about is not refused here (its removal says why it fails).
///
/// ```
/// use ftw::remove::{Refusal, check_path};
/// assert_eq!(check_path("/"), Err(Refusal::Root));
/// assert_eq!(check_path("///"), Err(Refusal::Root));
/// assert_eq!(check_path("."), Err(Refusal::Dot));
/// assert_eq!(check_path("a/.."), Err(Refusal::Dot));
/// assert_eq!(check_path("./"), Err(Refusal::Dot));
/// assert_eq!(check_path("/.."), Err(Refusal::Dot));
/// assert_eq!(check_path("/nonexistent/ftw-doc"), Ok(()));
/// ```
///
/// [`RemoveOptions::preserve_root`]: super::RemoveOptions::preserve_root
pub fn check_path<P: AsRef<Path>>(path: P) -> Result<(), Refusal> {
    let bytes = crate::walk::path_to_bytes(path.as_ref());
    let trimmed = trim_slashes(&bytes);
    if trimmed.is_empty() && !bytes.is_empty() {
        return Err(Refusal::Root);
    }
    if names_dot(&bytes) {
        return Err(Refusal::Dot);
    }
    // On Windows every drive (`D:\`) and share (`\\server\share\`) has a root, and
    // `/` is only the current drive's.
    #[cfg(windows)]
    if path.as_ref().has_root() && path.as_ref().parent().is_none() {
        return Err(Refusal::Root);
    }
    // Without a trailing slash, a link is only a link; with one, what it leads to.
    let root = sys::stat_path(Path::new("/"), StatMask::ID, true);
    let this = match trimmed.len() < bytes.len() {
        true => sys::stat_path(path.as_ref(), StatMask::ID, true),
        false => sys::stat_path(path.as_ref(), StatMask::ID, false),
    };
    match (root, this) {
        (Ok(r), Ok(t)) if t.file_type() == FileType::Dir && (r.dev, r.ino) == (t.dev, t.ino) => {
            Err(Refusal::Root)
        }
        _ => Ok(()),
    }
}

/// `path` without its trailing slashes (`/` alone becomes empty).
pub(super) fn trim_slashes(path: &[u8]) -> &[u8] {
    let end = path.iter().rposition(|&b| !is_sep(b)).map_or(0, |i| i + 1);
    &path[..end]
}

/// On Windows, what follows the drive of a drive-relative path (`X:` and no separator
/// after it: relative to drive X's current directory); `None` for any other path, and
/// everywhere else.
pub(super) fn drive_relative(path: &[u8]) -> Option<&[u8]> {
    match path {
        [d, b':', rest @ ..] if cfg!(windows) && d.is_ascii_alphabetic() => {
            (!rest.first().copied().is_some_and(is_sep)).then_some(rest)
        }
        _ => None,
    }
}

/// Whether `b` separates path components: `/`, and on Windows `\` too.
pub(super) fn is_sep(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}
