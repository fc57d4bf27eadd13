//! The removal of one path given by the caller: checked, its parent opened, then
//! unlinked, or walked by a [`Remover`] and removed.

use super::policy::{Refusal, check_path, drive_relative, is_sep, names_dot, trim_slashes};
use super::predict::{self, Room};
use super::remover::{Gone, Remover, Shared, root_dev};
use super::writable::{open_up, read_only, refused_by_mode};
use crate::sys::{self, Dir, FileType, Metadata, StatMask};
use crate::tree_error::not_a_directory;
use crate::walk::{Error, bytes_to_path};
use std::ffi::CString;
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

/// Removes one path given by the caller.
pub(super) fn remove_path(shared: &Shared<'_>, path: &Path) {
    let opts = shared.opts;
    let given = crate::walk::path_to_bytes(path);
    let err = |e: io::Error| shared.error(Error::io(path.to_path_buf(), 0, e));
    let refuse = |r: Refusal| err(io::Error::new(ErrorKind::InvalidInput, r));
    // `.` and `..` whatever the options, as POSIX asks of rm; the root directory while
    // it is preserved.
    if names_dot(&given) {
        return refuse(Refusal::Dot);
    }
    if opts.preserve_root {
        if let Err(r) = check_path(path) {
            return refuse(r);
        }
    }
    // What `rm -f` says nothing of: a path that does not exist, or leads through
    // something that is not a directory (`file/x`).
    let missing = |e: &io::Error| {
        opts.ignore_missing && matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
    };
    if given.is_empty() {
        // No such file (ENOENT, said as the system says it), as for rm: never the
        // current directory.
        if !opts.ignore_missing {
            err(io::Error::from_raw_os_error(2));
        }
        return;
    }
    let trimmed = trim_slashes(&given);
    let slash = trimmed.len() < given.len();
    let (parent, name): (&[u8], &[u8]) = match trimmed.iter().rposition(|&b| is_sep(b)) {
        Some(0) => (b"/", &trimmed[1..]),
        // A drive's root (`C:\`) keeps its separator: `C:` is the drive's current
        // directory.
        Some(i) if cfg!(windows) && trimmed[i - 1] == b':' => (&trimmed[..=i], &trimmed[i + 1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        // `X:name`: `name` in drive X's current directory (not a stream `name` of a
        // file `X` here).
        None if drive_relative(trimmed).is_some() => (&trimmed[..2], &trimmed[2..]),
        None => (b".", trimmed),
    };
    if name.is_empty() {
        // The root directory, allowed by the caller: what is inside it.
        match Dir::open(path) {
            Ok(dir) => {
                let dev = root_dev(shared, &dir);
                // Opened again by its path, whose links may have changed meanwhile: it
                // must be the same directory (known by its identity).
                let id = dir.stat(StatMask::ID).map(|m| (m.dev, m.ino));
                let reopen = || {
                    let d = Dir::open(path)?;
                    match (&id, d.stat(StatMask::ID)) {
                        (Ok(id), Ok(m)) if *id == (m.dev, m.ino) => Ok(d),
                        _ => Err(io::Error::other("replaced while it was being emptied")),
                    }
                };
                shared.walk(
                    dir,
                    trimmed_or_root(&given),
                    dev,
                    opts.threads,
                    false,
                    &reopen,
                );
            }
            Err(e) => err(e),
        }
        return;
    }
    let Ok(c_name) = CString::new(name) else {
        return err(io::Error::new(
            ErrorKind::InvalidInput,
            "a NUL byte in the path",
        ));
    };
    // Only searched, never read: a parent its user may write and search but not read
    // (mode 0300) still has its entries removed, as rm removes them.
    let parent_dir = match Dir::open_search_only(&bytes_to_path(parent.to_vec())) {
        Ok(d) => d,
        Err(e) if missing(&e) => return,
        Err(e) => return err(e),
    };
    let mask = if opts.dry_run {
        predict::ASK
    } else {
        StatMask::TYPE
    };
    let meta = match parent_dir.stat_at(&c_name, mask, false) {
        Ok(m) => m,
        Err(e) if missing(&e) => return,
        Err(e) => return err(e),
    };
    // In a dry run: whether the path's own removal would be refused (its parent is
    // outside the tree, never made writable).
    let foresee = |meta: Option<&Metadata>| Room::of(&parent_dir, false).removal(meta);
    let shown = &given[..trimmed.len()];
    match meta.file_type() {
        FileType::Dir => {}
        FileType::Symlink if slash => {
            // `link/` is what the link leads to: a directory outside the tree, refused;
            // anything else (a file, nothing, a loop) is no directory, as the system
            // says of an unlink of `link/` (ENOTDIR, which rm -f ignores).
            return match parent_dir.stat_at(&c_name, StatMask::TYPE, true) {
                Ok(m) if m.file_type() == FileType::Dir => err(io::Error::new(
                    ErrorKind::InvalidInput,
                    "a symbolic link named with a trailing '/': not removing what it leads \
                     to (name it without the '/' to remove the link itself)",
                )),
                _ if opts.ignore_missing => {}
                _ => err(not_a_directory()),
            };
        }
        _ if slash => {
            if !opts.ignore_missing {
                err(not_a_directory());
            }
            return;
        }
        file_type => {
            if opts.dry_run {
                return match foresee(Some(&meta)) {
                    Ok(()) => shared.removed(shown, file_type),
                    Err(e) => err(read_only(e, parent)),
                };
            }
            match parent_dir.unlink_at(&c_name) {
                Ok(()) => shared.removed(shown, file_type),
                Err(e) if e.kind() == ErrorKind::NotFound => shared.removed(shown, file_type),
                Err(e) => err(read_only(e, parent)),
            }
            return;
        }
    }
    let mut opened = parent_dir.open_at(&c_name);
    if let Err(e) = &opened {
        // The PATH itself is inside the tree: with --chmod, a PATH that cannot be read
        // is given the permissions its removal takes (its parent is left as it is).
        if refused_by_mode(e) && opts.make_writable && !opts.dry_run {
            if let Err(e) = open_up(&parent_dir, &c_name) {
                return err(e);
            }
            opened = parent_dir.open_at(&c_name);
        }
    }
    let dir = match opened {
        Ok(d) => d,
        Err(e) if e.kind() == ErrorKind::NotFound && opts.ignore_missing => return,
        // A dry run cannot read it: with --chmod, the removal would give it the
        // permissions it lacks (then remove it, its contents not seen here); without,
        // it is reported, as the removal reports it unless it is empty.
        Err(e) if refused_by_mode(&e) && opts.dry_run => {
            if !(opts.make_writable && predict::opened_up(&meta)) {
                return err(predict::unreadable(&e));
            }
            return match foresee(Some(&meta)) {
                Ok(()) => {
                    shared.not_read(shown);
                    shared.removed(shown, FileType::Dir);
                }
                Err(e) => err(read_only(e, parent)),
            };
        }
        // A PATH that cannot be read may be empty: then removed, as `rm -rf` does.
        Err(e) if refused_by_mode(&e) => {
            return match parent_dir.remove_dir_at(&c_name) {
                Ok(()) => shared.removed(shown, FileType::Dir),
                Err(_) => err(e),
            };
        }
        Err(e) => return err(e),
    };
    if opts.preserve_root {
        // Checked again on the handle: the path may have changed since.
        let root = sys::stat_path(Path::new("/"), StatMask::ID, true);
        if let (Ok(r), Ok(d)) = (root, dir.stat(StatMask::ID)) {
            if (r.dev, r.ino) == (d.dev, d.ino) {
                return refuse(Refusal::Root);
            }
        }
    }
    let dev = root_dev(shared, &dir);
    let reopen = || parent_dir.open_at(&c_name);
    if !shared.walk(dir, shown, dev, opts.threads, false, &reopen) {
        return;
    }
    if opts.dry_run {
        return match foresee(Some(&meta)) {
            Ok(()) => shared.removed(shown, FileType::Dir),
            Err(e) => err(read_only(e, parent)),
        };
    }
    // The path's parent is outside the tree: never made writable.
    let unused = AtomicBool::new(false);
    let none = Mutex::new(Vec::new());
    let mut remover = Remover::new(shared, &unused, &none, dev, false);
    match remover.remove_dir(&parent_dir, &c_name, shown, false) {
        Ok(()) => shared.removed(shown, FileType::Dir),
        Err(Gone::Reported) => {}
        Err(Gone::Failed(e)) => err(read_only(e, parent)),
    }
}

/// The path of the root directory (`/`, `//`; on Windows a drive's, `C:\`), as it is
/// shown.
fn trimmed_or_root(given: &[u8]) -> &[u8] {
    match trim_slashes(given) {
        b"" => b"/",
        t => t,
    }
}
