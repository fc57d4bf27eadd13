//! Names and paths in UTF-16: a name relative to a directory, a directory's path and an
//! entry's, the final path of a handle, and the `\\?\` (verbatim) form of a path given
//! to ftw, whose names the system then takes as written, and a path opened by it; and a
//! link's target, read by its path.

use super::{Dir, SHARE_ALL, invalid_name, last_error};
use crate::sys::names::wide;
use crate::sys::os_to_bytes;
use std::ffi::{CStr, OsString};
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::{AsRawHandle, BorrowedHandle};
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem as fs;

/// Whether `b` separates components in a relative name: `/` (ftw's separator) or `\`
/// (below a verbatim root), which no Windows name holds.
pub(super) fn is_sep(b: &u8) -> bool {
    *b == b'/' || *b == b'\\'
}

/// A name relative to a directory, in UTF-16: components split at `/` or `\` and
/// joined with `\`; `.` components left out.
pub(super) fn rel_wide(name: &CStr) -> io::Result<Vec<u16>> {
    let mut out = Vec::with_capacity(name.to_bytes().len() + 1);
    for comp in name
        .to_bytes()
        .split(is_sep)
        .filter(|c| !c.is_empty() && *c != b".")
    {
        if !out.is_empty() {
            out.push(u16::from(b'\\'));
        }
        wide(comp, &mut out)?;
    }
    if out.is_empty() {
        return Err(invalid_name());
    }
    Ok(out)
}

/// One name of a directory's entries, in UTF-16: no Windows name holds a `\\`, but a
/// Unix name seen through wine may (`a\\b`), which the system would take for the path
/// `b` in `a`: such a name is an error, not another entry. `/` separates components, as
/// in [`rel_wide`].
pub(super) fn one_name(name: &CStr) -> io::Result<Vec<u16>> {
    if name.to_bytes().contains(&b'\\') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a name holding '\\', which the system reads as a path (no Windows name holds \
             one)",
        ));
    }
    rel_wide(name)
}

/// The final path of an open handle, `\\?\` form (`GetFinalPathNameByHandleW`).
pub(super) fn final_path(h: BorrowedHandle<'_>) -> io::Result<Vec<u16>> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: `buf` is a live, writable buffer of the length given; `h` is open.
        let n = unsafe {
            fs::GetFinalPathNameByHandleW(
                h.as_raw_handle(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                fs::VOLUME_NAME_DOS,
            )
        } as usize;
        if n == 0 {
            return Err(last_error());
        }
        if n < buf.len() {
            buf.truncate(n);
            return Ok(buf);
        }
        buf.resize(n + 1, 0);
    }
}

/// `path` joined with `name` (a relative name, `\`-separated) and NUL-terminated.
pub(super) fn join_nul(path: &[u16], name: &[u16]) -> Vec<u16> {
    let mut p = Vec::with_capacity(path.len() + name.len() + 2);
    p.extend_from_slice(path);
    if p.last() != Some(&u16::from(b'\\')) {
        p.push(u16::from(b'\\'));
    }
    p.extend_from_slice(name);
    p.push(0);
    p
}

/// A path in the `\\?\` form (no `MAX_PATH`, no `.`/`..` or `/` processing by the
/// system), NUL-terminated.
///
/// Only what the path starts from is made absolute by the system (`GetFullPathNameW`:
/// the current directory, a drive's current directory, the current drive's root); its
/// components are then taken as they are written, `.` left out and `..` going up one
/// (as the system would): the system's own processing of a whole path would strip a
/// name's trailing dots and spaces (`x.` would be `x`) and make a device of `CON`,
/// `NUL` or `aux.txt`, which are names of files like any other below a directory.
pub(super) fn verbatim(path: &Path) -> io::Result<Vec<u16>> {
    use std::path::{Component, Prefix};
    let bs = u16::from(b'\\');
    let w: Vec<u16> = path.as_os_str().encode_wide().collect();
    if w.starts_with(&[bs, bs, u16::from(b'?'), bs]) {
        let mut out = w;
        out.push(0);
        return Ok(out);
    }
    let mut comps = path.components().peekable();
    let base = match comps.peek() {
        Some(Component::Prefix(p)) => match p.kind() {
            Prefix::UNC(..) | Prefix::Disk(_) => {
                let mut start = std::path::PathBuf::from(p.as_os_str());
                comps.next();
                if let Some(Component::RootDir) = comps.peek() {
                    start.push("\\");
                    comps.next();
                }
                start
            }
            // `\\.\` device paths and the verbatim ones (`\\?\`, handled above) are
            // the system's to read.
            _ => return verbatim_of_absolute(&std::path::absolute(path)?),
        },
        Some(Component::RootDir) => {
            comps.next();
            std::path::PathBuf::from("\\")
        }
        Some(_) => std::path::PathBuf::from("."),
        // An empty path: the system's error.
        None => std::path::absolute(path)?,
    };
    let mut out = verbatim_of_absolute(&std::path::absolute(&base)?)?;
    out.pop();
    while out.last() == Some(&bs) {
        out.pop();
    }
    // `..` never goes above the root of what the path starts from (`\\?\X:`,
    // `\\?\UNC\server\share`).
    let top = root_len(&out);
    for c in comps {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let cut = out[top..]
                    .iter()
                    .rposition(|&u| u == bs)
                    .map_or(top, |i| top + i);
                out.truncate(cut);
            }
            Component::Normal(n) => {
                out.push(bs);
                out.extend(n.encode_wide());
            }
            Component::Prefix(_) | Component::RootDir => return Err(invalid_name()),
        }
    }
    // A trailing separator stays: `file\\` names no file (not a directory).
    let trailing = matches!(w.last(), Some(&u) if u == bs || u == u16::from(b'/'));
    if out.len() == top || (trailing && out.last() != Some(&bs)) {
        out.push(bs);
    }
    out.push(0);
    Ok(out)
}

/// The length of the root of a `\\?\` path without its trailing `\`: `\\?\X:` or
/// `\\?\UNC\server\share` (what `..` does not go above).
fn root_len(v: &[u16]) -> usize {
    let bs = u16::from(b'\\');
    let unc: Vec<u16> = "\\\\?\\UNC\\".encode_utf16().collect();
    if v.starts_with(&unc) {
        // Past the server and the share.
        let mut seps = v[unc.len()..]
            .iter()
            .enumerate()
            .filter(|&(_, &u)| u == bs)
            .map(|(i, _)| unc.len() + i);
        return seps.nth(1).unwrap_or(v.len());
    }
    v.iter()
        .enumerate()
        .skip(4)
        .find(|&(_, &u)| u == bs)
        .map_or(v.len(), |(i, _)| i)
}

/// An absolute path (as `std::path::absolute` gives it) in the `\\?\` form,
/// NUL-terminated.
fn verbatim_of_absolute(abs: &Path) -> io::Result<Vec<u16>> {
    let w: Vec<u16> = abs.as_os_str().encode_wide().collect();
    let bs = u16::from(b'\\');
    let mut out = Vec::with_capacity(w.len() + 9);
    if w.starts_with(&[bs, bs, u16::from(b'?'), bs]) {
        out.extend_from_slice(&w);
    } else if w.starts_with(&[bs, bs]) {
        out.extend("\\\\?\\UNC\\".encode_utf16());
        out.extend_from_slice(&w[2..]);
    } else {
        out.extend("\\\\?\\".encode_utf16());
        out.extend_from_slice(&w);
    }
    out.push(0);
    Ok(out)
}

impl Dir {
    /// The path of the entry `name` of this directory (for the copy's fallback on
    /// `std::fs`).
    pub(in crate::sys) fn entry(&self, name: &CStr) -> io::Result<std::path::PathBuf> {
        Ok(self.entry_path(name)?.into())
    }

    /// This directory's own path.
    pub(in crate::sys) fn own_path(&self) -> std::path::PathBuf {
        let end = self
            .path
            .iter()
            .position(|&u| u == 0)
            .unwrap_or(self.path.len());
        OsString::from_wide(&self.path[..end]).into()
    }

    fn entry_path(&self, name: &CStr) -> io::Result<OsString> {
        let mut p = join_nul(&self.path, &rel_wide(name)?);
        p.pop();
        Ok(OsString::from_wide(&p))
    }

    /// The target of the link `name` of this directory, as bytes (by path: std reads
    /// the reparse data).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be read as a link: it does not exist
    /// (`NotFound`), or is not a symbolic link (`InvalidInput` on Unix).
    pub fn read_link_at(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let target = std::fs::read_link(self.entry_path(name)?)?;
        Ok(os_to_bytes(target.as_os_str()))
    }
}

/// Opens `path` with `CreateFileW` (through std) for `access`, with backup semantics
/// (which directories need), following a link only with `follow`. The path is given in
/// its [`verbatim`] form: its names are taken as written.
pub(super) fn open_path(path: &Path, access: u32, follow: bool) -> io::Result<std::fs::File> {
    let mut flags = fs::FILE_FLAG_BACKUP_SEMANTICS;
    if !follow {
        flags |= fs::FILE_FLAG_OPEN_REPARSE_POINT;
    }
    let mut v = verbatim(path)?;
    v.pop();
    std::fs::OpenOptions::new()
        .access_mode(access)
        .share_mode(SHARE_ALL)
        .custom_flags(flags)
        .open(OsString::from_wide(&v))
}
