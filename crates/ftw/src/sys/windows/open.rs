//! Opening directories and files: relative to a parent's handle with `NtCreateFile`
//! (a link or junction refused with `OBJ_DONT_REPARSE`, or, where the system lacks that
//! flag, opened itself and told by its tag), and by path with `CreateFileW` for the
//! directories a walk starts from.

use super::info::attribute_tag;
use super::info::is_link;
use super::paths::{final_path, is_sep, join_nul, one_name, open_path, rel_wide};
#[cfg(test)]
use super::seam;
use super::wine::{WineName, under_wine};
use super::{DIR_ACCESS, Dir, SHARE_ALL, UNKNOWN_DEV, invalid_name, not_a_dir, nt_error};
use std::ffi::{CStr, OsString};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_OPEN, FILE_OPEN_FOR_BACKUP_INTENT,
    FILE_OPEN_REPARSE_POINT, FILE_SYNCHRONOUS_IO_NONALERT, NtCreateFile,
};
use windows_sys::Win32::Foundation::{
    self as wf, HANDLE, NTSTATUS, OBJ_CASE_INSENSITIVE, OBJ_DONT_REPARSE, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

/// Whether the system took `OBJ_DONT_REPARSE`: 0 not known yet, 1 yes, 2 no.
static DONT_REPARSE: AtomicU8 = AtomicU8::new(0);

/// `NtCreateFile` of `name` relative to `root`: one component (or a relative path with
/// `\`) in UTF-16.
pub(super) fn nt_open(
    root: BorrowedHandle<'_>,
    name: &[u16],
    access: u32,
    options: u32,
    dont_reparse: bool,
) -> Result<OwnedHandle, NTSTATUS> {
    let bytes = u16::try_from(name.len() * 2).map_err(|_| wf::STATUS_NAME_TOO_LONG)?;
    let us = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: name.as_ptr().cast_mut(),
    };
    let attrs = OBJECT_ATTRIBUTES {
        Length: size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: root.as_raw_handle(),
        ObjectName: &us,
        Attributes: OBJ_CASE_INSENSITIVE | if dont_reparse { OBJ_DONT_REPARSE } else { 0 },
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    let mut handle: HANDLE = std::ptr::null_mut();
    let mut iosb = IO_STATUS_BLOCK::default();
    // SAFETY: every pointer is to a live local for the duration of the call (`us`
    // points into `name`, borrowed for the call); `root` is an open handle borrowed
    // for the call; no EA buffer.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            access,
            &attrs,
            &mut iosb,
            std::ptr::null(),
            0,
            SHARE_ALL,
            FILE_OPEN,
            options | FILE_SYNCHRONOUS_IO_NONALERT | FILE_OPEN_FOR_BACKUP_INTENT,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(status);
    }
    // SAFETY: NtCreateFile succeeded: `handle` is a new handle that nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// Opens `name` relative to `root` without following a link or junction at its last
/// component (links on the way cannot occur: `name` is one component). `Ok(None)` when
/// `name` is such a link. With `OBJ_DONT_REPARSE` this is one call; where the system
/// lacks that flag, the link itself is opened (`FILE_OPEN_REPARSE_POINT`) and its tag
/// asked.
fn open_no_link(
    root: BorrowedHandle<'_>,
    name: &[u16],
    access: u32,
    options: u32,
) -> io::Result<Option<OwnedHandle>> {
    if DONT_REPARSE.load(Ordering::Relaxed) != 2 {
        match nt_open(root, name, access, options, true) {
            Ok(h) => {
                DONT_REPARSE.store(1, Ordering::Relaxed);
                return Ok(Some(h));
            }
            Err(wf::STATUS_REPARSE_POINT_ENCOUNTERED) => return Ok(None),
            Err(wf::STATUS_INVALID_PARAMETER) if DONT_REPARSE.load(Ordering::Relaxed) == 0 => {
                DONT_REPARSE.store(2, Ordering::Relaxed);
            }
            Err(s) => return Err(nt_error(s)),
        }
    }
    let h =
        nt_open(root, name, access, options | FILE_OPEN_REPARSE_POINT, false).map_err(nt_error)?;
    let (attrs, tag) = attribute_tag(h.as_handle())?;
    Ok((!is_link(attrs, tag)).then_some(h))
}

fn open_dir_path(path: &Path, follow: bool) -> io::Result<Dir> {
    count!(dir_opens);
    let file = open_path(path, DIR_ACCESS, follow)?;
    let (attrs, tag) = attribute_tag(file.as_handle())?;
    if attrs & fs::FILE_ATTRIBUTE_DIRECTORY == 0 || (!follow && is_link(attrs, tag)) {
        return Err(not_a_dir());
    }
    let handle = OwnedHandle::from(file);
    let path = final_path(handle.as_handle())?;
    Ok(Dir {
        handle,
        path,
        dev: AtomicU64::new(UNKNOWN_DEV),
        name: OnceLock::new(),
    })
}

impl Dir {
    /// Opens the directory at `path` (relative to the working directory), following a
    /// link or junction there.
    ///
    /// # Errors
    ///
    /// The system's error when `path` cannot be opened as a directory: it does not exist
    /// (`NotFound`), is not a directory (`NotADirectory`), or may not be read
    /// (`PermissionDenied`).
    pub fn open(path: &Path) -> io::Result<Dir> {
        open_dir_path(path, true)
    }

    /// Opens the directory at `path` only to work relative to it: here as
    /// [`Dir::open`].
    ///
    /// # Errors
    ///
    /// As [`Dir::open`].
    pub fn open_search_only(path: &Path) -> io::Result<Dir> {
        Dir::open(path)
    }

    /// Opens the directory at `path`, failing (`ERROR_DIRECTORY`, "not a directory")
    /// if its last component is a link or junction.
    ///
    /// # Errors
    ///
    /// As [`Dir::open`], and an error when the last component of `path` is a symbolic link
    /// (or on Windows a junction), which is not followed.
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        open_dir_path(path, false)
    }

    /// The subdirectory `name` opened as `handle`; `same_volume`: not through a link or
    /// junction, so on this directory's volume (whose serial number it then takes, if
    /// known).
    fn child(&self, name: &[u16], handle: OwnedHandle, same_volume: bool) -> Dir {
        self.child_named(name, handle, same_volume, OnceLock::new())
    }

    fn child_named(
        &self,
        name: &[u16],
        handle: OwnedHandle,
        same_volume: bool,
        named: OnceLock<WineName>,
    ) -> Dir {
        let mut path = join_nul(&self.path, name);
        path.pop();
        let dev = if same_volume {
            self.dev.load(Ordering::Relaxed)
        } else {
            UNKNOWN_DEV
        };
        Dir {
            handle,
            path,
            dev: AtomicU64::new(dev),
            name: named,
        }
    }

    /// Opens the subdirectory `name` of this directory, relative to its handle
    /// (`NtCreateFile` with `RootDirectory`): a link or junction is not followed: it
    /// fails with `ERROR_DIRECTORY` ("not a directory"). `..` is the parent of this
    /// directory's path (the system has no `..` relative to a handle).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened as a directory: it does not exist
    /// (`NotFound`), is not a directory, is a symbolic link (or on Windows a junction),
    /// which is not followed, or may not be read (`PermissionDenied`).
    pub fn open_at(&self, name: &CStr) -> io::Result<Dir> {
        if name.to_bytes() == b".." {
            return self.open_parent();
        }
        let w = one_name(name)?;
        count!(dir_opens);
        match open_no_link(self.handle.as_handle(), &w, DIR_ACCESS, FILE_DIRECTORY_FILE)? {
            Some(h) if under_wine() => {
                // Wine opens a Unix symbolic link as what it leads to, whatever the
                // flags: the directory opened must be the one named here.
                let named = OnceLock::new();
                let _ = named.set(
                    self.named_child(h.as_handle(), &w)
                        .map_err(|()| not_a_dir())?,
                );
                Ok(self.child_named(&w, h, true, named))
            }
            Some(h) => Ok(self.child(&w, h, true)),
            None => Err(not_a_dir()),
        }
    }

    fn open_parent(&self) -> io::Result<Dir> {
        let bs = u16::from(b'\\');
        let cut = self.path.iter().rposition(|&c| c == bs).unwrap_or(0);
        let parent = OsString::from_wide(&self.path[..cut.max(7)]);
        Dir::open(Path::new(&parent))
    }

    /// Opens the subdirectory `name`, following it if it is a link or junction.
    ///
    /// # Errors
    ///
    /// The system's error when `name`, or what it leads to, cannot be opened as a
    /// directory: it does not exist (`NotFound`, a dangling link too), is not a directory,
    /// or may not be read (`PermissionDenied`).
    pub fn open_at_follow(&self, name: &CStr) -> io::Result<Dir> {
        if name.to_bytes() == b".." {
            return self.open_parent();
        }
        let w = rel_wide(name)?;
        count!(dir_opens);
        let h = nt_open(
            self.handle.as_handle(),
            &w,
            DIR_ACCESS,
            FILE_DIRECTORY_FILE,
            false,
        )
        .map_err(nt_error)?;
        Ok(self.child(&w, h, false))
    }

    /// Reads the whole regular file `name` of this directory (a link there is not
    /// followed).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or read: it does not exist
    /// (`NotFound`), is a symbolic link (not followed) or a directory, or may not be read
    /// (`PermissionDenied`).
    pub fn read_file_at(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let w = one_name(name)?;
        let h = open_no_link(
            self.handle.as_handle(),
            &w,
            fs::FILE_READ_DATA | fs::FILE_READ_ATTRIBUTES | fs::SYNCHRONIZE,
            FILE_NON_DIRECTORY_FILE,
        )?
        .ok_or_else(|| io::Error::other("a symbolic link"))?;
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(h), &mut out)?;
        Ok(out)
    }

    /// A second handle to the same open directory (`DuplicateHandle`).
    ///
    /// # Errors
    ///
    /// The system's error when no handle can be made (too many open: `EMFILE` on Unix).
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            handle: self.handle.try_clone()?,
            path: self.path.clone(),
            dev: AtomicU64::new(self.dev()),
            name: self.name.clone(),
        })
    }

    /// Opens the directory at the relative path `rel` (components separated by `/` or `\`)
    /// below this one. Without `follow`, no component may be a link or junction (one
    /// component at a time, each relative to the last); with `follow`, in one call.
    ///
    /// # Errors
    ///
    /// As [`Dir::open_at`] (or, with `follow`, [`Dir::open_at_follow`]) for the first
    /// component that cannot be opened: one that does not exist, is not a directory, or
    /// without `follow` is a symbolic link; `InvalidInput` for a path with no component.
    pub fn open_beneath(&self, rel: &CStr, follow: bool) -> io::Result<Dir> {
        if follow {
            return self.open_at_follow(rel);
        }
        let mut cur: Option<Dir> = None;
        let mut name = Vec::new();
        for comp in rel.to_bytes().split(is_sep).filter(|c| !c.is_empty()) {
            name.clear();
            name.extend_from_slice(comp);
            name.push(0);
            let c = CStr::from_bytes_with_nul(&name).map_err(|_| invalid_name())?;
            cur = Some(cur.as_ref().unwrap_or(self).open_at(c)?);
        }
        cur.ok_or_else(invalid_name)
    }
}
