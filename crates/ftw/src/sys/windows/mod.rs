//! Windows: directory handles opened relative to their parent with `NtCreateFile`,
//! read in batches with `GetFileInformationByHandleEx`, removed with POSIX-semantics
//! dispositions; `windows-sys` bindings. The crate's only `unsafe` code outside
//! `linux.rs` (which has none: rustix is safe) is here, each block with its SAFETY.
//!
//! Calls, by design (counted through [`seam`] in the tests):
//! - opening a subdirectory: one `NtCreateFile` relative to the parent's handle, with
//!   `OBJ_DONT_REPARSE` so that a link or junction fails to open instead of being
//!   followed. Where the system refuses that flag (before Windows 10 1607; wine 8),
//!   `FILE_OPEN_REPARSE_POINT` opens the entry itself and one
//!   `GetFileInformationByHandleEx(FileAttributeTagInfo)` tells whether it is a link
//!   (which is then closed and refused);
//! - listing: `GetFileInformationByHandleEx(FileIdBothDirectoryRestartInfo)` into the
//!   reused [`DirBuf`] (64 KiB: several hundred entries a call), then
//!   `FileIdBothDirectoryInfo` until `ERROR_NO_MORE_FILES`: one or two calls for most
//!   directories, none per entry. Each record carries attributes, reparse tag (in
//!   `EaSize` when the reparse attribute is set), sizes, times and the file id;
//! - `stat_at`: `GetFileAttributesExW` on the directory's path and the name, where that
//!   answers (type, size, time, read-only bit; not a link, whose reparse tag it does
//!   not give, and not the file id, link count or allocation); otherwise, or when it
//!   fails (a sharing violation, a locked system file, access denied), the handle way:
//!   `NtCreateFile` relative to the directory's handle (`FILE_READ_ATTRIBUTES` only),
//!   `GetFileInformationByHandle`, and the tag or the allocation when asked; where that
//!   call fails (wine past `PATH_MAX`: see `stat_by_classes`), a query of one class
//!   for each field asked. Every way gives equal [`Metadata`]: the fields not asked for
//!   are zero each way;
//! - removal: `NtCreateFile(DELETE)` relative to the directory with
//!   `FILE_OPEN_REPARSE_POINT` (a link or junction is removed, never followed) and
//!   `SetFileInformationByHandle(FileDispositionInfoEx)` with `DELETE |
//!   POSIX_SEMANTICS | IGNORE_READONLY_ATTRIBUTE`; where that class is missing (FAT,
//!   Windows before 10 1709, wine 8) the classic `FileDispositionInfo`, clearing a
//!   read-only attribute first, after one `GetFileInformationByHandleEx(FileNameInfo)`
//!   that the system has a name to remove the file by (see `file_name`: wine has none
//!   past `PATH_MAX`, and would say yes and remove nothing). A sharing violation is
//!   retried a bounded number of times, as is a directory whose children's classic
//!   (deferred) deletions are not done yet.
//!
//! `GetFileAttributesExW` takes a path: the directory's path as it was reached (the
//! root's final path, then each name joined), so an ancestor renamed while ftw works
//! sends it elsewhere: to nothing (the call fails, and the handle way answers, relative
//! to the directory actually open), or to another entry of that name put in its place,
//! whose attributes it then gives (a race the handle-based calls do not have: open,
//! listing and removal never go by path). Reading a link's target and setting the
//! read-only attribute go by that path too.
//!
//! Under wine 8 (where the tests run): `OBJ_DONT_REPARSE` is taken; there is no
//! `FileDispositionInfoEx` (the classic way is used after the first try); Unix
//! symbolic links are shown as what they lead to, and `CreateSymbolicLinkW` says yes
//! and makes nothing, so the link paths here are tested on reparse tags only. Wine
//! lists a Unix link to a directory as a reparse point of no tag, one to a file as
//! that file (its file id too), and none that leads nowhere; it opens a link as what
//! it leads to whatever the flags (`FILE_OPEN_REPARSE_POINT`, `OBJ_DONT_REPARSE`), and
//! the classic disposition then removes that. So, under wine only ([`under_wine`]),
//! each directory opened and each entry given the classic disposition is checked by
//! its `FileNameInfo` to be the entry named (one query more a directory), and what
//! cannot be told (wine's names leave out trailing dots and spaces: `d.\x` is
//! `d\x`) is reported, not removed. A link whose target the run removed first can no
//! longer be opened, and counts as gone: its directory is then reported not empty.
//! A Unix name holding `\` (no Windows name does) is an error, never the path to
//! another entry.
//!
//! Names are UTF-16 on Windows and UTF-8 bytes in ftw (see [`super::os_to_bytes`]
//! for the one escape: unpaired surrogates).
//!
//! One file for each part: `open.rs` (opening, relative to a handle or by path),
//! `listing.rs` (batches into [`DirBuf`]), `stat.rs` (types and metadata),
//! `delete.rs` (dispositions), `paths.rs` (names, paths and their `\\?\` form),
//! `wine.rs` (wine's workarounds), `info.rs` (a handle's information classes),
//! `perms.rs` (the read-only attribute), `process.rs` (limits and CPU time) and
//! `seam.rs` (the tests' seam); here, [`Dir`] and what they all share.
//!
//! [`Metadata`]: crate::sys::Metadata
//! [`under_wine`]: wine::under_wine

use std::io;
use std::os::windows::io::{AsHandle, BorrowedHandle, OwnedHandle};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use windows_sys::Win32::Foundation::{NTSTATUS, RtlNtStatusToDosError};
use windows_sys::Win32::Storage::FileSystem as fs;

#[cfg(test)]
pub(crate) mod seam;

macro_rules! count {
    ($field:ident) => {
        #[cfg(test)]
        seam::bump(|c| c.$field += 1);
    };
}

mod delete;
mod info;
mod listing;
mod open;
mod paths;
mod perms;
mod process;
mod stat;
mod wine;

#[cfg(test)]
pub(super) use info::type_of;
pub use listing::DirBuf;
#[cfg(test)]
pub(super) use listing::parse_batch;
pub(crate) use process::open_fds;
pub use process::{address_space_room, effective_uid, fd_limit, process_cpu_time};
pub use stat::stat_path;
use wine::WineName;

/// An open directory: a handle with list, traverse and read-attribute access, the
/// directory's path as it was reached (`\\?\` form), which only the path-based calls
/// (`GetFileAttributesExW`, reading a link's target, permissions) use, and its volume's
/// serial number once known (see [`Dir::dev`]).
///
/// Under wine, also the name the system gives the open directory (see [`under_wine`]),
/// once asked.
///
/// [`under_wine`]: wine::under_wine
#[derive(Debug)]
pub struct Dir {
    handle: OwnedHandle,
    path: Vec<u16>,
    dev: AtomicU64,
    name: OnceLock<WineName>,
}

const SHARE_ALL: u32 = fs::FILE_SHARE_READ | fs::FILE_SHARE_WRITE | fs::FILE_SHARE_DELETE;
const DIR_ACCESS: u32 =
    fs::FILE_LIST_DIRECTORY | fs::FILE_TRAVERSE | fs::FILE_READ_ATTRIBUTES | fs::SYNCHRONIZE;
const ERROR_DIRECTORY: i32 = 267;

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

fn nt_error(status: NTSTATUS) -> io::Error {
    // SAFETY: a pure function of its argument.
    let code = unsafe { RtlNtStatusToDosError(status) };
    io::Error::from_raw_os_error(code as i32)
}

pub(super) fn invalid_name() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a valid name")
}

fn not_a_dir() -> io::Error {
    io::Error::from_raw_os_error(ERROR_DIRECTORY)
}

/// A volume serial number not known (yet): [`Dir::dev`] before anything told it. Never
/// a serial number (they have 32 bits).
const UNKNOWN_DEV: u64 = u64::MAX;

impl Dir {
    /// The serial number of this directory's volume where known: told by the system
    /// when this directory's metadata was last asked (with [`Dir::stat`]), or, for a
    /// directory opened relative to its parent without following a link, the parent's
    /// when it was opened (a volume is mounted at a junction, which [`Dir::open_at`]
    /// does not follow). For the handles the system will not tell it for (under wine,
    /// past `PATH_MAX`: see `stat_by_classes`).
    fn dev(&self) -> u64 {
        self.dev.load(Ordering::Relaxed)
    }
}

impl AsHandle for Dir {
    fn as_handle(&self) -> BorrowedHandle<'_> {
        self.handle.as_handle()
    }
}
