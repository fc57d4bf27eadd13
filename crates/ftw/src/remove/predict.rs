//! What a dry run foresees of the removal: whether the system would refuse to remove an
//! entry, asked without removing anything, by the rules `unlinkat` follows. A
//! directory's own answer ([`Room`]) is asked once for all its entries; an entry's, from
//! its metadata (one `statx`, whose attributes tell its inode flags).

use super::writable::refused_by_mode;
use crate::sys::{self, Dir, FileType, Metadata, StatMask};
use std::io;

/// `EPERM`, `EACCES` and `EBUSY`: the same numbers on every Unix (never made on Windows,
/// where no directory refuses here and no flag is told).
const EPERM: i32 = 1;
const EACCES: i32 = 13;
const EBUSY: i32 = 16;

/// What the metadata of an entry to remove is asked with: its mode (the type, and a
/// directory's sticky bit) and owner; the inode flags come with any answer.
pub(super) const ASK: StatMask = StatMask::MODE.union(StatMask::OWNER);

/// What this process may remove in one directory.
#[derive(Debug)]
pub(super) struct Room {
    /// Why no entry of it may be removed (the errno `unlinkat` would meet), if none may.
    refused: Option<i32>,
    /// Its owner, when its sticky bit is set: then only an entry's owner, the
    /// directory's or root removes the entry.
    sticky_owner: Option<u32>,
    /// This process's effective user id, where there is one.
    euid: Option<u32>,
}

impl Room {
    /// `dir`'s answer. With `make_writable`, a refusal by its mode (`EACCES`) is no
    /// refusal where this process owns it: the removal gives it owner write and search
    /// first ([`RemoveOptions::make_writable`](super::RemoveOptions::make_writable)).
    pub(super) fn of(dir: &Dir, make_writable: bool) -> Room {
        let euid = sys::effective_uid();
        let meta = dir.stat(ASK).ok();
        let owned = meta.is_some_and(|m| Some(m.uid) == euid);
        // In the kernel's order: a read-only file system, the permission (an immutable
        // directory refuses it too), then an append-only directory.
        let mut refused = match dir.may_write() {
            Ok(()) => None,
            Err(e) if refused_by_mode(&e) && make_writable && owned => None,
            Err(e) => Some(e.raw_os_error().unwrap_or(EACCES)),
        };
        if meta.is_some_and(|m| m.attributes.append_only || m.attributes.immutable) {
            refused = refused.or(Some(EPERM));
        }
        let sticky_owner = meta.filter(|m| m.mode & 0o1000 != 0).map(|m| m.uid);
        Room {
            refused,
            sticky_owner,
            euid,
        }
    }

    /// Whether the entry of this directory whose metadata is `meta` (asked with
    /// [`ASK`], not following a link; `None` where it could not be asked) would be
    /// removed; a directory, once emptied.
    ///
    /// # Errors
    ///
    /// The error the removal would meet: this directory's refusal; `EPERM` for an
    /// immutable or append-only entry, or another user's in a sticky directory; `EBUSY`
    /// for a directory that is a mount point.
    pub(super) fn removal(&self, meta: Option<&Metadata>) -> io::Result<()> {
        let err = io::Error::from_raw_os_error;
        if let Some(code) = self.refused {
            return Err(err(code));
        }
        let Some(m) = meta else { return Ok(()) };
        if m.attributes.immutable || m.attributes.append_only {
            return Err(err(EPERM));
        }
        if let (Some(owner), Some(euid)) = (self.sticky_owner, self.euid) {
            if euid != 0 && euid != owner && euid != m.uid {
                return Err(err(EPERM));
            }
        }
        if m.file_type() == FileType::Dir && m.attributes.mount_root {
            return Err(err(EBUSY));
        }
        Ok(())
    }
}

/// Whether the removal, with [`RemoveOptions::make_writable`], would give the
/// directory whose metadata is `meta` (asked with [`ASK`]) the owner read and search it
/// lacks before reading it: it is this process's own (root, whom modes do not stop,
/// changes none). A dry run, which changes nothing, cannot read what it holds.
///
/// [`RemoveOptions::make_writable`]: super::RemoveOptions::make_writable
pub(super) fn opened_up(meta: &Metadata) -> bool {
    let euid = sys::effective_uid();
    meta.file_type() == FileType::Dir
        && euid.is_some_and(|u| u != 0 && u == meta.uid)
        && meta.mode & 0o500 != 0o500
}

/// The error a dry run reports for a directory it cannot read (`err`, the refusal to
/// open it): the removal reports it too, unless it is empty, which cannot be seen
/// without reading it.
pub(super) fn unreadable(err: &io::Error) -> io::Error {
    io::Error::new(
        err.kind(),
        format!(
            "{}: it cannot be read (a removal removes it only if it is empty)",
            crate::walk::describe(err)
        ),
    )
}
