//! Which paths are refused before anything is removed ([`check_path`], [`Refusal`]),
//! and how a path given is cut into its components.

use crate::sys::{self, FileType, StatMask};
use std::fmt;
use std::path::Path;

/// Why a path is refused by [`check_path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path is the root directory (or resolves to it).
    Root,
    /// The path's last component is `.` or `..`.
    Dot,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Root => "it is the root directory",
            Refusal::Dot => "refusing to remove '.' or '..'",
        })
    }
}

/// Whether `path` may be removed while the root is preserved: not the root directory
/// (`/`, `//`, `/..`, or anything that resolves to it, such as a bind mount of it; a
/// symbolic link to it is only a link, removable), and not a path whose last component
/// is `.` or `..`.
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
/// assert_eq!(check_path("/nonexistent/ftw-doc"), Ok(()));
/// ```
pub fn check_path<P: AsRef<Path>>(path: P) -> Result<(), Refusal> {
    let bytes = crate::walk::path_to_bytes(path.as_ref());
    let trimmed = trim_slashes(&bytes);
    if trimmed.is_empty() && !bytes.is_empty() {
        return Err(Refusal::Root);
    }
    let last = trimmed.rsplit(|&b| is_sep(b)).next().unwrap_or(b"");
    if last == b"." || last == b".." {
        return Err(Refusal::Dot);
    }
    // On Windows every drive (`D:\`) and share (`\\server\share\`) has a root, and
    // `/` is only the current drive's.
    #[cfg(windows)]
    if path.as_ref().has_root() && path.as_ref().parent().is_none() {
        return Err(Refusal::Root);
    }
    // `X:` alone is drive X's current directory: `.` there.
    if drive_relative(&bytes).is_some_and(|rest| rest.is_empty()) {
        return Err(Refusal::Dot);
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
