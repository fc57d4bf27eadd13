//! Removal: an entry opened for deletion relative to its directory (a link or junction
//! itself, never followed) and given the POSIX-semantics delete disposition, or the
//! classic one where the system lacks it (a read-only attribute cleared first); a
//! sharing violation retried a bounded number of times.

use super::info::is_link;
use super::info::{attribute_tag, query_info, set_info};
use super::open::nt_open;
use super::paths::one_name;
#[cfg(test)]
use super::seam;
use super::wine::{opened_elsewhere, under_wine};
use super::{Dir, nt_error};
use std::ffi::CStr;
use std::io;
use std::os::windows::io::{AsHandle, BorrowedHandle};
use std::sync::atomic::{AtomicU8, Ordering};

use windows_sys::Wdk::Storage::FileSystem::{
    FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_OPEN_REPARSE_POINT,
};
use windows_sys::Win32::Foundation::{self as wf, NTSTATUS};
use windows_sys::Win32::Storage::FileSystem as fs;

/// Whether `FileDispositionInfoEx` worked: 0 not known yet, 1 yes, 2 never (the
/// classic disposition is then used without trying it again: on systems before
/// Windows 10 1709, on wine 8, and for a process whose first removals were on a file
/// system without it, such as FAT).
static POSIX_DELETE: AtomicU8 = AtomicU8::new(0);

/// How many times a sharing violation is retried (waits of 1, 2, 4, ... ms).
const SHARING_RETRIES: u32 = 6;

fn is_sharing_violation(s: NTSTATUS) -> bool {
    s == wf::STATUS_SHARING_VIOLATION
}

/// Sets the delete disposition on `h`: POSIX semantics (the name goes at once, even
/// while others hold the file open) ignoring the read-only attribute; where the system
/// or the file system lacks that class (wine 8 answers it with an error too), the
/// classic disposition (the name goes when the last handle closes). `Err` with
/// `ERROR_ACCESS_DENIED` from the classic way may mean a read-only file: the caller
/// then clears the attribute and tries again.
/// `check` is asked before the classic disposition (which removes by the name the
/// system has for the file, at its last close): whether the file is the entry named.
fn dispose(
    h: BorrowedHandle<'_>,
    check: impl FnOnce(BorrowedHandle<'_>) -> io::Result<()>,
) -> io::Result<()> {
    #[cfg(test)]
    let posix = !seam::force_classic_delete();
    #[cfg(not(test))]
    let posix = true;
    if posix && POSIX_DELETE.load(Ordering::Relaxed) != 2 {
        count!(dispositions);
        let info = fs::FILE_DISPOSITION_INFO_EX {
            Flags: fs::FILE_DISPOSITION_FLAG_DELETE
                | fs::FILE_DISPOSITION_FLAG_POSIX_SEMANTICS
                | fs::FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE,
        };
        // SAFETY: FileDispositionInfoEx's record is a FILE_DISPOSITION_INFO_EX; `h` is
        // open with DELETE access.
        let e = match unsafe { set_info(h, fs::FileDispositionInfoEx, &info) } {
            Ok(()) => {
                POSIX_DELETE.store(1, Ordering::Relaxed);
                return Ok(());
            }
            Err(e) => e.raw_os_error().unwrap_or(0) as u32,
        };
        // Not supported here: fall back (for good, once it never worked). Anything else
        // is the answer.
        if POSIX_DELETE.load(Ordering::Relaxed) == 0
            && matches!(
                e,
                wf::ERROR_INVALID_PARAMETER
                    | wf::ERROR_NOT_SUPPORTED
                    | wf::ERROR_INVALID_FUNCTION
                    | wf::ERROR_CALL_NOT_IMPLEMENTED
            )
        {
            POSIX_DELETE.store(2, Ordering::Relaxed);
        }
        if !matches!(
            e,
            wf::ERROR_INVALID_PARAMETER
                | wf::ERROR_NOT_SUPPORTED
                | wf::ERROR_INVALID_FUNCTION
                | wf::ERROR_CALL_NOT_IMPLEMENTED
        ) {
            return Err(io::Error::from_raw_os_error(e as i32));
        }
    }
    check(h)?;
    count!(dispositions);
    let info = fs::FILE_DISPOSITION_INFO { DeleteFile: true };
    // SAFETY: FileDispositionInfo's record is a FILE_DISPOSITION_INFO; `h` is open
    // with DELETE access.
    unsafe { set_info(h, fs::FileDispositionInfo, &info) }
}

/// Clears the read-only attribute of an open handle (for the classic disposition,
/// which refuses read-only files).
fn clear_readonly(h: BorrowedHandle<'_>) -> io::Result<()> {
    // SAFETY: FileBasicInfo's record is a FILE_BASIC_INFO.
    let mut info: fs::FILE_BASIC_INFO = unsafe { query_info(h, fs::FileBasicInfo)? };
    if info.FileAttributes & fs::FILE_ATTRIBUTE_READONLY == 0 {
        return Err(io::Error::from_raw_os_error(wf::ERROR_ACCESS_DENIED as i32));
    }
    info.FileAttributes &= !fs::FILE_ATTRIBUTE_READONLY;
    if info.FileAttributes == 0 {
        info.FileAttributes = fs::FILE_ATTRIBUTE_NORMAL;
    }
    // Times of zero are left as they are.
    (
        info.CreationTime,
        info.LastAccessTime,
        info.LastWriteTime,
        info.ChangeTime,
    ) = (0, 0, 0, 0);
    // SAFETY: as above, for writing; `h` has FILE_WRITE_ATTRIBUTES access.
    unsafe { set_info(h, fs::FileBasicInfo, &info) }
}

impl Dir {
    /// Removes `name` (relative to this directory's handle): opened for deletion with
    /// `FILE_OPEN_REPARSE_POINT` (a link or junction is removed, never followed) and
    /// given the delete disposition. `dir` says which kind it must be.
    fn remove_at(&self, name: &CStr, dir: bool) -> io::Result<()> {
        let w = one_name(name)?;
        let options = FILE_OPEN_REPARSE_POINT
            | if dir {
                FILE_DIRECTORY_FILE
            } else {
                FILE_NON_DIRECTORY_FILE
            };
        let mut tries = 0;
        let mut with_write_attrs = false;
        loop {
            count!(delete_opens);
            let access = fs::DELETE
                | fs::FILE_READ_ATTRIBUTES
                | fs::SYNCHRONIZE
                | if with_write_attrs {
                    fs::FILE_WRITE_ATTRIBUTES
                } else {
                    0
                };
            let h = match nt_open(self.handle.as_handle(), &w, access, options, false) {
                Ok(h) => h,
                Err(wf::STATUS_FILE_IS_A_DIRECTORY) if !dir => {
                    // A directory is not unlinked, but a link or junction to one (a
                    // directory with a reparse point) is.
                    let h = nt_open(
                        self.handle.as_handle(),
                        &w,
                        access,
                        FILE_OPEN_REPARSE_POINT,
                        false,
                    )
                    .map_err(nt_error)?;
                    let (attrs, tag) = attribute_tag(h.as_handle())?;
                    if !is_link(attrs, tag) {
                        // Under wine, a Unix symbolic link to a directory opens as that
                        // directory: not one that came in the entry's place.
                        if under_wine()
                            && !self.named_child(h.as_handle(), &w).is_ok_and(|n| n.exact)
                        {
                            return Err(opened_elsewhere());
                        }
                        return Err(io::Error::from(io::ErrorKind::IsADirectory));
                    }
                    h
                }
                Err(s) if is_sharing_violation(s) && tries < SHARING_RETRIES => {
                    std::thread::sleep(std::time::Duration::from_millis(1 << tries));
                    tries += 1;
                    continue;
                }
                Err(s) => return Err(nt_error(s)),
            };

            match dispose(h.as_handle(), |h| self.check_named(h, &w)) {
                Ok(()) => return Ok(()),
                Err(e)
                    if e.raw_os_error() == Some(wf::ERROR_ACCESS_DENIED as i32)
                        && !with_write_attrs =>
                {
                    // The classic disposition refuses a read-only file: clear the
                    // attribute (reopened with the right to) and try again.
                    with_write_attrs = true;
                    drop(h);
                    let h = nt_open(
                        self.handle.as_handle(),
                        &w,
                        access | fs::FILE_WRITE_ATTRIBUTES,
                        options,
                        false,
                    )
                    .map_err(nt_error)?;
                    if clear_readonly(h.as_handle()).is_err() {
                        return Err(e);
                    }
                    continue;
                }
                Err(e)
                    if e.raw_os_error() == Some(wf::ERROR_DIR_NOT_EMPTY as i32)
                        && POSIX_DELETE.load(Ordering::Relaxed) == 2
                        && tries < SHARING_RETRIES =>
                {
                    // With the classic disposition, entries removed a moment ago stay
                    // until their last handle closes: wait for them, a bounded time.
                    std::thread::sleep(std::time::Duration::from_millis(1 << tries));
                    tries += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Removes the non-directory entry `name` of this directory (a link or junction
    /// included, itself).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be removed: it does not exist (`NotFound`), is
    /// a directory, or this directory is not writable (`PermissionDenied`).
    pub fn unlink_at(&self, name: &CStr) -> io::Result<()> {
        self.remove_at(name, false)
    }

    /// Removes the empty subdirectory `name`.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be removed: it does not exist (`NotFound`), is
    /// not empty (`DirectoryNotEmpty`), is not a directory (`NotADirectory`), or this
    /// directory is not writable (`PermissionDenied`).
    pub fn remove_dir_at(&self, name: &CStr) -> io::Result<()> {
        self.remove_at(name, true)
    }
}
