//! The information classes of an open handle: a fixed-size record read with
//! `GetFileInformationByHandleEx` ([`query_info`]) or written with
//! `SetFileInformationByHandle` ([`set_info`]), and the attributes and reparse tag
//! ([`attribute_tag`]) and what they say ([`is_link`], [`type_of`]), which opening,
//! listing, metadata and removal all ask.

use super::last_error;
#[cfg(test)]
use super::seam;
use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle};

use crate::sys::FileType;
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::SystemServices::{
    IO_REPARSE_TAG_MOUNT_POINT, IO_REPARSE_TAG_SYMLINK,
};

/// What `GetFileInformationByHandleEx` tells of an open handle in the fixed-size record
/// `T` of information class `class`.
///
/// # Safety
///
/// `class` must be the class whose record is a `T` (`FileBasicInfo` and
/// `FILE_BASIC_INFO`, ...): the call writes that record, of that size, into a `T`.
pub(super) unsafe fn query_info<T: Default>(
    h: BorrowedHandle<'_>,
    class: fs::FILE_INFO_BY_HANDLE_CLASS,
) -> io::Result<T> {
    let mut info = T::default();
    // SAFETY: `info` is a live, writable `T` of the size given, which the caller says is
    // the record of `class`; `h` is open.
    let ok = unsafe {
        fs::GetFileInformationByHandleEx(
            h.as_raw_handle(),
            class,
            (&raw mut info).cast(),
            size_of::<T>() as u32,
        )
    };
    if ok == 0 {
        return Err(last_error());
    }
    Ok(info)
}

/// Sets the record `info` of class `class` on an open handle
/// (`SetFileInformationByHandle`); the error is the thread's last one.
///
/// # Safety
///
/// `class` must be the class whose record is a `T` (`FileBasicInfo` and
/// `FILE_BASIC_INFO`, ...), and `h` open with the access that class needs.
pub(super) unsafe fn set_info<T>(
    h: BorrowedHandle<'_>,
    class: fs::FILE_INFO_BY_HANDLE_CLASS,
    info: &T,
) -> io::Result<()> {
    // SAFETY: `info` is a live `T` of the size given, which the caller says is the
    // record of `class`; `h` is open.
    let ok = unsafe {
        fs::SetFileInformationByHandle(
            h.as_raw_handle(),
            class,
            (&raw const *info).cast(),
            size_of::<T>() as u32,
        )
    };
    if ok == 0 {
        return Err(last_error());
    }
    Ok(())
}

/// The attributes and reparse tag of an open handle (`FileAttributeTagInfo`).
pub(super) fn attribute_tag(h: BorrowedHandle<'_>) -> io::Result<(u32, u32)> {
    count!(handle_queries);
    // SAFETY: FileAttributeTagInfo's record is a FILE_ATTRIBUTE_TAG_INFO.
    let info: fs::FILE_ATTRIBUTE_TAG_INFO = unsafe { query_info(h, fs::FileAttributeTagInfo)? };
    Ok((info.FileAttributes, info.ReparseTag))
}

/// Whether attributes and a reparse tag are those of a link: a symbolic link or a
/// junction (mount point). Other reparse points (deduplicated, cloud and WSL files)
/// are the files or directories they stand for.
///
/// A reparse point of tag 0, which Windows never makes, is a link too: wine 8 lists a
/// Unix symbolic link so (the attribute, no tag), while opening it gives what it leads
/// to, with no reparse point; followed, a link to a directory outside the tree would be
/// walked, and removed by `ftw rm`, and one to an ancestor walked forever.
pub(super) fn is_link(attrs: u32, tag: u32) -> bool {
    attrs & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0
        && (tag == IO_REPARSE_TAG_SYMLINK || tag == IO_REPARSE_TAG_MOUNT_POINT || tag == 0)
}

pub(in crate::sys) fn type_of(attrs: u32, tag: u32) -> FileType {
    if is_link(attrs, tag) {
        FileType::Symlink
    } else if attrs & fs::FILE_ATTRIBUTE_DIRECTORY != 0 {
        FileType::Dir
    } else {
        FileType::File
    }
}
