//! A directory in a walk, as every walker handles it: a root started, a child opened
//! relative to its parent's handle (a symbolic link followed only when asked), a
//! reopening checked against the identity recorded before, a loop through a followed
//! link found, and a shared handle counted against the budget. The serial walk, the
//! parallel walk and the sorted walk's read-ahead all go through here.

use super::Options;
use crate::sys::{self, Dir, FileType, StatMask};
use std::ffi::CStr;
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory's identity: (device, inode).
pub(crate) type Id = (u64, u64);

/// What starting a root found.
pub(crate) enum RootStart {
    /// A directory, open; its identity when the walk needs it ([`Options::wants_ids`]).
    Dir(Dir, Option<Id>),
    /// Not a directory (or a dangling link): a single entry of this type.
    Single(FileType),
    /// It exists (of this type) but cannot be opened: it is listed, then the error
    /// reported, as find does.
    Unreadable(FileType, io::Error),
    /// Nothing to list: the error alone.
    Failed(io::Error),
}

/// Opens a root, following a symbolic link there (roots are always followed); a root
/// given open (`dir`) is taken as it is. Also says whether the root was reached through
/// a link, followed: a directory is first opened without following one (no call more
/// than a plain open), and only where that fails is the path asked what it is.
pub(crate) fn start_root(root: &Path, dir: Option<Dir>, opts: &Options) -> (RootStart, bool) {
    let given = match dir {
        Some(dir) => Ok(dir),
        None => Dir::open_nofollow(root),
    };
    if let Ok(dir) = given {
        return (opened_root(dir, opts), false);
    }
    let own = sys::stat_path(root, StatMask::TYPE, false).map(|m| m.file_type());
    match own {
        // Neither a directory nor a link: a single entry, as it is.
        Ok(t) if t != FileType::Dir && t != FileType::Symlink => (RootStart::Single(t), false),
        own => {
            let start = follow_root(root, opts);
            let via_link = own.is_ok_and(|t| t == FileType::Symlink)
                && !matches!(
                    start,
                    RootStart::Single(FileType::Symlink) | RootStart::Failed(_)
                );
            (start, via_link)
        }
    }
}

/// A root opened as a directory: its identity too when the walk needs it.
fn opened_root(dir: Dir, opts: &Options) -> RootStart {
    if !opts.wants_ids() {
        return RootStart::Dir(dir, None);
    }
    match identify(&dir) {
        Ok(id) => RootStart::Dir(dir, Some(id)),
        Err(e) => RootStart::Failed(e),
    }
}

/// Starts a root by its path, a link there followed.
fn follow_root(root: &Path, opts: &Options) -> RootStart {
    match Dir::open(root) {
        Ok(dir) => opened_root(dir, opts),
        // Not a directory, or a dangling link: a root that is a single entry.
        Err(e) if matches!(e.kind(), ErrorKind::NotADirectory | ErrorKind::NotFound) => {
            let follow = e.kind() == ErrorKind::NotADirectory;
            match sys::stat_path(root, StatMask::TYPE, follow) {
                Ok(m) => RootStart::Single(m.file_type()),
                Err(_) => RootStart::Failed(e),
            }
        }
        Err(e) => match sys::stat_path(root, StatMask::TYPE, true) {
            Ok(m) => RootStart::Unreadable(m.file_type(), e),
            Err(_) => RootStart::Failed(e),
        },
    }
}

/// The identity of an open directory.
pub(crate) fn identify(dir: &Dir) -> io::Result<Id> {
    let m = dir.stat(StatMask::ID)?;
    Ok((m.dev, m.ino))
}

/// Fails unless `dir` is the directory of identity `expect`: one moved or replaced
/// since it was seen is reported, never listed in the other's place.
pub(crate) fn check(dir: &Dir, expect: Option<Id>) -> io::Result<()> {
    match expect {
        Some(id) if identify(dir)? != id => {
            Err(io::Error::other("directory replaced during the walk"))
        }
        _ => Ok(()),
    }
}

/// Directories opened below a root so far, in this process: the crate's tests count
/// them to see that a walk opens each directory a bounded number of times.
#[cfg(test)]
pub(crate) static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Directories named so cannot be opened in the crate's tests (see [`open_child`]).
#[cfg(test)]
pub(crate) const UNOPENABLE: &[u8] = b"ftw-test-unopenable";

/// Opens the subdirectory `name` of `parent`: a symbolic link is followed only when the
/// entry was one the walk follows (`via_link`). With `want_id`, its identity too.
pub(crate) fn open_child(
    parent: &Dir,
    name: &CStr,
    via_link: bool,
    want_id: bool,
) -> io::Result<(Dir, Option<Id>)> {
    // The crate's tests stand for a directory that cannot be opened (which chmod does
    // not make when they run as root) by this name.
    #[cfg(test)]
    if name.to_bytes().starts_with(UNOPENABLE) {
        return Err(io::Error::from_raw_os_error(13));
    }
    #[cfg(test)]
    OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = if via_link {
        parent.open_at_follow(name)?
    } else {
        parent.open_at(name)?
    };
    let id = if want_id { Some(identify(&dir)?) } else { None };
    Ok((dir, id))
}

/// Opens a directory again from an open ancestor, one component at a time (each
/// `(name, via_link)`), and checks that the last is the directory of identity `expect`.
pub(crate) fn reopen<'a>(
    from: &Dir,
    components: impl IntoIterator<Item = (&'a [u8], bool)>,
    expect: Option<Id>,
) -> io::Result<Dir> {
    let mut cur: Option<Dir> = None;
    let mut name = Vec::with_capacity(256);
    for (component, via_link) in components {
        name.clear();
        name.extend_from_slice(component);
        name.push(0);
        let c = CStr::from_bytes_with_nul(&name)
            .map_err(|_| io::Error::from(ErrorKind::InvalidInput))?;
        let (d, _) = open_child(cur.as_ref().unwrap_or(from), c, via_link, false)?;
        cur = Some(d);
    }
    let dir = cur.ok_or_else(|| io::Error::from(ErrorKind::InvalidInput))?;
    check(&dir, expect)?;
    Ok(dir)
}

/// Opens the parent of an open directory (`..`), if it is the directory of identity
/// `expect`: climbing back costs one call a level, where reopening from the root would
/// cost the depth. `None` when `..` is another directory (the child was reached through
/// a link, or moved); the caller then reopens it from an ancestor.
pub(crate) fn open_parent(child: &Dir, expect: Id) -> Option<Dir> {
    #[cfg(test)]
    OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = child.open_at(c"..").ok()?;
    (identify(&dir).ok()? == expect).then_some(dir)
}

/// The first of `ancestors` (an identity and what to report of it) that is `target`: a
/// followed link that leads back to a directory being walked.
pub(crate) fn find_loop<T>(
    mut ancestors: impl Iterator<Item = (Option<Id>, T)>,
    target: Id,
) -> Option<T> {
    ancestors.find_map(|(id, what)| (id == Some(target)).then_some(what))
}

/// A directory handle shared by the jobs of its subdirectories; counted against the
/// walk's handle budget while it lives.
pub(crate) struct Handle {
    pub(crate) dir: Dir,
    open: Arc<AtomicUsize>,
}

impl Handle {
    /// Shares `dir` if fewer than `limit` handles are shared now (`force`: regardless).
    pub(crate) fn share(
        dir: Dir,
        open: &Arc<AtomicUsize>,
        limit: usize,
        force: bool,
    ) -> Result<Arc<Handle>, Dir> {
        if open.fetch_add(1, Ordering::Relaxed) < limit || force {
            Ok(Arc::new(Handle {
                dir,
                open: open.clone(),
            }))
        } else {
            open.fetch_sub(1, Ordering::Relaxed);
            Err(dir)
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}
