//! The information classes of an open handle: a fixed-size record read with
//! `GetFileInformationByHandleEx` ([`query_info`]) or written with
//! `SetFileInformationByHandle` ([`set_info`]), and the attributes and reparse tag
//! ([`attribute_tag`]), which opening, metadata and removal all ask.

use super::last_error;
#[cfg(test)]
use super::seam;
use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle};

use windows_sys::Win32::Storage::FileSystem as fs;

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
