//! Permissions and removal: a directory whose mode refuses a removal (`EACCES`), told
//! apart from `EPERM` ([`DirNotWritable`]), and the owner permissions given with
//! [`RemoveOptions::make_writable`] ([`open_up`]).
//!
//! [`RemoveOptions::make_writable`]: super::RemoveOptions::make_writable

use crate::sys::{Dir, FileType, StatMask};
use crate::walk::bytes_to_path;
use std::ffi::CStr;
use std::fmt;
use std::io::{self, ErrorKind};
use std::path::Path;

/// With [`RemoveOptions::make_writable`]: gives the directory `name` of `parent`, about
/// to be read, the owner permissions its removal takes (read, write and search) where
/// this process lacks them, so that a directory of mode 0000 or 0300 can be emptied
/// too. One `faccessat2` per directory (root, whom modes do not stop, changes nothing).
/// Where the change is refused (another user's directory) or the entry changed
/// meanwhile, the walk's own open of the directory tells what it finds; any other
/// failure (no descriptor left, no `/proc`) is returned, to be reported in place of the
/// refusal it leads to.
///
/// [`RemoveOptions::make_writable`]: super::RemoveOptions::make_writable
pub(super) fn open_up(parent: &Dir, name: &CStr) -> io::Result<()> {
    if parent.may_change_at(name).unwrap_or(true) {
        return Ok(());
    }
    let Ok(m) = parent.stat_at(name, StatMask::MODE, false) else {
        return Ok(());
    };
    // With owner read, write and search already, no mode of its owner's would help.
    if m.file_type() != FileType::Dir || m.mode & 0o700 == 0o700 {
        return Ok(());
    }
    match parent.set_dir_permissions_at(name, m.mode | 0o700) {
        Err(e)
            if !matches!(
                e.kind(),
                ErrorKind::NotFound | ErrorKind::PermissionDenied | ErrorKind::NotADirectory
            ) =>
        {
            let why = crate::walk::describe(&e);
            Err(io::Error::new(
                e.kind(),
                format!("cannot give it owner read, write and search (--chmod): {why}"),
            ))
        }
        _ => Ok(()),
    }
}

/// Whether `err` is `EACCES`: the directory's mode refused (which write permission
/// may cure), not `EPERM` (an immutable or append-only file, a sticky directory), which
/// Rust calls `PermissionDenied` as well.
pub(super) fn refused_by_mode(err: &io::Error) -> bool {
    err.kind() == ErrorKind::PermissionDenied && err.raw_os_error() != Some(EPERM)
}

/// `EPERM`, the same number on every Unix.
const EPERM: i32 = 1;

/// A refusal to remove an entry (`EACCES`) said with the directory that refused it.
pub(super) fn read_only(err: io::Error, dir: &[u8]) -> io::Error {
    if !refused_by_mode(&err) {
        return err;
    }
    io::Error::new(
        ErrorKind::PermissionDenied,
        DirNotWritable {
            dir: bytes_to_path(dir.to_vec()),
            source: err,
        },
    )
}

/// Why an entry was not removed: its directory's mode refused it (`EACCES`; `--chmod`
/// in the CLI, [`RemoveOptions::make_writable`] here, adds the write permission). It is the
/// inner error of the [`io::Error`] that reports the entry, so that a front end can
/// show the directory's path its own way (escaped on a terminal, say):
///
/// ```
/// use ftw::remove::DirNotWritable;
/// fn shown(err: &std::io::Error) -> String {
///     match err.get_ref().and_then(|e| e.downcast_ref::<DirNotWritable>()) {
///         Some(d) => format!("its directory {:?} is not writable", d.dir()),
///         None => err.to_string(),
///     }
/// }
/// # let _ = shown;
/// ```
///
/// [`RemoveOptions::make_writable`]: super::RemoveOptions::make_writable
#[derive(Debug)]
pub struct DirNotWritable {
    dir: std::path::PathBuf,
    source: io::Error,
}

impl DirNotWritable {
    /// The directory whose mode refused the removal.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The system's error (`EACCES`, "Permission denied").
    pub fn io_error(&self) -> &io::Error {
        &self.source
    }
}

impl fmt::Display for DirNotWritable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: its directory {} is not writable",
            crate::walk::describe(&self.source),
            self.dir.display()
        )
    }
}

impl std::error::Error for DirNotWritable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}
