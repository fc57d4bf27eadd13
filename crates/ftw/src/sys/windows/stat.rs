//! Metadata: the type a file's attributes and reparse tag tell (a link or not), and
//! [`Metadata`] by path (`GetFileAttributesExW`) or from an open handle
//! (`GetFileInformationByHandle`, or one information class for each field asked), each
//! way with exactly the fields asked for.

use super::info::{attribute_tag, query_info, type_of};
use super::open::nt_open;
use super::paths::open_path;
use super::paths::{join_nul, one_name, verbatim};
#[cfg(test)]
use super::seam;
use super::{Dir, UNKNOWN_DEV, last_error, nt_error};
use crate::sys::{FileType, Metadata, StatMask};
use std::ffi::CStr;
use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};
use std::path::Path;
use std::sync::atomic::Ordering;

use windows_sys::Wdk::Storage::FileSystem::{
    FILE_INTERNAL_INFORMATION, FILE_OPEN_REPARSE_POINT, FileInternalInformation,
    NtQueryInformationFile,
};
use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

/// The permission bits ftw shows for Windows attributes: owner write unless read-only,
/// as `ls` on Cygwin would; a link is `0o777`.
fn mode_of(t: FileType, attrs: u32) -> u32 {
    let ro = attrs & fs::FILE_ATTRIBUTE_READONLY != 0;
    match t {
        FileType::Dir => 0o040000 | if ro { 0o555 } else { 0o755 },
        FileType::Symlink => 0o120777,
        _ => 0o100000 | if ro { 0o444 } else { 0o644 },
    }
}

/// A FILETIME (100 ns since 1601) as Unix seconds and nanoseconds.
fn unix_time(ft: i64) -> (i64, u32) {
    const EPOCH_DIFF: i64 = 11_644_473_600;
    let secs = ft.div_euclid(10_000_000) - EPOCH_DIFF;
    let nsec = (ft.rem_euclid(10_000_000) * 100) as u32;
    (secs, nsec)
}

pub(super) fn filetime(t: wf::FILETIME) -> i64 {
    ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) as i64
}

/// What both ways of `stat` know, before the mask is applied.
pub(super) struct Raw {
    pub(super) attrs: u32,
    pub(super) tag: u32,
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) size: u64,
    pub(super) alloc: u64,
    pub(super) nlink: u64,
    pub(super) mtime: i64,
}

/// [`Metadata`] from what the system said, with exactly the fields `mask` asks for
/// (and the type): both ways of `stat` go through here, so they agree.
pub(super) fn metadata(r: &Raw, mask: StatMask) -> Metadata {
    let t = type_of(r.attrs, r.tag);
    let mut m = Metadata {
        file_type: Some(t),
        ..Metadata::default()
    };
    if mask.contains(StatMask::ID) {
        (m.dev, m.ino) = (r.dev, r.ino);
    }
    if mask.contains(StatMask::SIZE) {
        m.size = r.size;
    }
    if mask.contains(StatMask::BLOCKS) {
        m.blocks = r.alloc.div_ceil(512);
    }
    if mask.contains(StatMask::NLINK) {
        m.nlink = r.nlink;
    }
    if mask.contains(StatMask::MODE) {
        m.mode = mode_of(t, r.attrs);
    }
    if mask.contains(StatMask::MTIME) {
        (m.mtime, m.mtime_nsec) = unix_time(r.mtime);
    }
    m
}

/// Whether `GetFileAttributesExW` can answer `mask`: it gives no file id, link count or
/// allocation.
fn attributes_answer(mask: StatMask) -> bool {
    #[cfg(test)]
    if seam::force_handle_stat() {
        return false;
    }
    !mask.contains(StatMask::ID)
        && !mask.contains(StatMask::NLINK)
        && !mask.contains(StatMask::BLOCKS)
}

/// `GetFileAttributesExW` of a NUL-terminated path. `Err` when it fails (the handle
/// way then answers, or reports the error) or the entry is a reparse point (whose tag
/// it does not give): `Err(true)` for the latter.
fn stat_by_attributes(path: &[u16], mask: StatMask) -> Result<Metadata, bool> {
    count!(attr_calls);
    let mut data = fs::WIN32_FILE_ATTRIBUTE_DATA::default();
    // SAFETY: `path` is NUL-terminated (the callers push the NUL) and `data` is a live
    // WIN32_FILE_ATTRIBUTE_DATA, what GetFileExInfoStandard writes.
    let ok = unsafe {
        fs::GetFileAttributesExW(
            path.as_ptr(),
            fs::GetFileExInfoStandard,
            (&raw mut data).cast(),
        )
    };
    if ok == 0 {
        return Err(false);
    }
    if data.dwFileAttributes & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(true);
    }
    let raw = Raw {
        attrs: data.dwFileAttributes,
        tag: 0,
        dev: 0,
        ino: 0,
        size: (u64::from(data.nFileSizeHigh) << 32) | u64::from(data.nFileSizeLow),
        alloc: 0,
        nlink: 0,
        mtime: filetime(data.ftLastWriteTime),
    };
    Ok(metadata(&raw, mask))
}

/// Metadata of an open handle: `GetFileInformationByHandle`, and the reparse tag or the
/// allocation where needed; where that call fails, the queries of one class each
/// ([`stat_by_classes`]).
/// With `reparse_by_path`, the entry's path was found a reparse point: if the handle
/// (opened on the entry itself) then shows none, or one of no tag, it is a Unix link
/// under wine (see [`is_link`]), and a link it is.
/// `dev` is the volume's serial number where the caller knows it ([`UNKNOWN_DEV`] if
/// not): the classes' way, which the system may not answer with one, takes it. Returns
/// the metadata and the serial number the system told, if it told one.
fn stat_handle(
    h: BorrowedHandle<'_>,
    mask: StatMask,
    reparse_by_path: bool,
    dev: u64,
) -> io::Result<(Metadata, Option<u64>)> {
    count!(handle_queries);
    let mut info = fs::BY_HANDLE_FILE_INFORMATION::default();
    #[cfg(test)]
    let skip = seam::force_class_queries();
    #[cfg(not(test))]
    let skip = false;
    // SAFETY: `info` is a live BY_HANDLE_FILE_INFORMATION; `h` is open.
    if skip || unsafe { fs::GetFileInformationByHandle(h.as_raw_handle(), &mut info) } == 0 {
        return stat_by_classes(h, mask, reparse_by_path, dev);
    }
    let mut raw = Raw {
        attrs: info.dwFileAttributes,
        tag: 0,
        dev: u64::from(info.dwVolumeSerialNumber),
        ino: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        size: (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow),
        alloc: 0,
        nlink: u64::from(info.nNumberOfLinks),
        mtime: filetime(info.ftLastWriteTime),
    };
    if raw.attrs & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        raw.tag = attribute_tag(h)?.1;
    } else if reparse_by_path {
        (raw.attrs, raw.tag) = (raw.attrs | fs::FILE_ATTRIBUTE_REPARSE_POINT, 0);
    }
    if mask.contains(StatMask::BLOCKS) {
        count!(handle_queries);
        // SAFETY: FileStandardInfo's record is a FILE_STANDARD_INFO.
        let std_info: fs::FILE_STANDARD_INFO = unsafe { query_info(h, fs::FileStandardInfo)? };
        raw.alloc = std_info.AllocationSize as u64;
    }
    Ok((metadata(&raw, mask), Some(raw.dev)))
}

/// [`stat_handle`]'s way where `GetFileInformationByHandle` fails: a query of one class
/// for each part of `mask`, on the handle alone. Wine answers that call with the file's
/// Unix name, and has none for a file whose Unix path is longer than `PATH_MAX` (4,096
/// bytes on Linux: "Invalid handle"), while these classes it answers from the open file;
/// so does Windows, where this way gives what the call gives.
///
/// The attributes and reparse tag (`FileAttributeTagInfo`), or attributes and time
/// (`FileBasicInfo`); size, allocation and link count (`FileStandardInfo`); the file id
/// (`FileInternalInformation`, as `GetFileInformationByHandle` has it). The volume's
/// serial number is `dev` where the caller knows it (the entry's directory's, for an
/// entry not followed: on its volume), else asked (`GetVolumeInformationByHandleW`),
/// which wine cannot answer past `PATH_MAX` either: that is then the error, never a
/// serial number made up.
fn stat_by_classes(
    h: BorrowedHandle<'_>,
    mask: StatMask,
    reparse_by_path: bool,
    dev: u64,
) -> io::Result<(Metadata, Option<u64>)> {
    let mut raw = Raw {
        attrs: 0,
        tag: 0,
        dev: 0,
        ino: 0,
        size: 0,
        alloc: 0,
        nlink: 0,
        mtime: 0,
    };
    let mut tag = None;
    if mask.contains(StatMask::MTIME) {
        count!(handle_queries);
        // SAFETY: FileBasicInfo's record is a FILE_BASIC_INFO.
        let basic: fs::FILE_BASIC_INFO = unsafe { query_info(h, fs::FileBasicInfo)? };
        (raw.attrs, raw.mtime) = (basic.FileAttributes, basic.LastWriteTime);
    } else {
        let (attrs, t) = attribute_tag(h)?;
        (raw.attrs, tag) = (attrs, Some(t));
    }
    if raw.attrs & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        raw.tag = match tag {
            Some(t) => t,
            None => attribute_tag(h)?.1,
        };
    } else if reparse_by_path {
        (raw.attrs, raw.tag) = (raw.attrs | fs::FILE_ATTRIBUTE_REPARSE_POINT, 0);
    }
    if mask.contains(StatMask::SIZE)
        || mask.contains(StatMask::BLOCKS)
        || mask.contains(StatMask::NLINK)
    {
        count!(handle_queries);
        // SAFETY: FileStandardInfo's record is a FILE_STANDARD_INFO.
        let std_info: fs::FILE_STANDARD_INFO = unsafe { query_info(h, fs::FileStandardInfo)? };
        raw.size = std_info.EndOfFile as u64;
        raw.alloc = std_info.AllocationSize as u64;
        raw.nlink = u64::from(std_info.NumberOfLinks);
    }
    let mut told = None;
    if mask.contains(StatMask::ID) {
        count!(handle_queries);
        let mut internal = FILE_INTERNAL_INFORMATION::default();
        let mut iosb = IO_STATUS_BLOCK::default();
        // SAFETY: `internal` is a live, writable FILE_INTERNAL_INFORMATION of the size
        // given, the record of FileInternalInformation; `iosb` is live; `h` is open.
        let status = unsafe {
            NtQueryInformationFile(
                h.as_raw_handle(),
                &mut iosb,
                (&raw mut internal).cast(),
                size_of::<FILE_INTERNAL_INFORMATION>() as u32,
                FileInternalInformation,
            )
        };
        if status < 0 {
            return Err(nt_error(status));
        }
        raw.ino = internal.IndexNumber as u64;
        raw.dev = if dev != UNKNOWN_DEV {
            dev
        } else {
            let serial = volume_serial(h).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("the system does not tell its volume: {e}"),
                )
            })?;
            told = Some(serial);
            serial
        };
    }
    Ok((metadata(&raw, mask), told))
}

/// The serial number of the volume of an open handle (`GetVolumeInformationByHandleW`).
fn volume_serial(h: BorrowedHandle<'_>) -> io::Result<u64> {
    count!(handle_queries);
    let mut serial = 0u32;
    // SAFETY: `serial` is a live, writable u32; the other outputs are not asked for
    // (null, of length 0); `h` is open.
    let ok = unsafe {
        fs::GetVolumeInformationByHandleW(
            h.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            &mut serial,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    if ok == 0 {
        return Err(last_error());
    }
    Ok(u64::from(serial))
}

impl Dir {
    /// Whether the entry `name` is the root of a mount: not told here (`false`); the
    /// device of its metadata tells another file system.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn is_mount_root_at(&self, _name: &CStr) -> io::Result<bool> {
        Ok(false)
    }

    /// Metadata of the entry `name` of this directory; with `follow`, a link is
    /// followed. `GetFileAttributesExW` answers where it can (see the module's notes),
    /// else the entry is opened relative to this directory's handle.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist (`NotFound`;
    /// with `follow`, a dangling link too), or this directory may not be searched
    /// (`PermissionDenied`).
    pub fn stat_at(&self, name: &CStr, mask: StatMask, follow: bool) -> io::Result<Metadata> {
        let w = one_name(name)?;
        let mut reparse = false;
        if attributes_answer(mask) {
            match stat_by_attributes(&join_nul(&self.path, &w), mask) {
                Ok(m) => return Ok(m),
                Err(r) => reparse = r && !follow,
            }
        }
        count!(stat_opens);
        let options = if follow { 0 } else { FILE_OPEN_REPARSE_POINT };
        let h = nt_open(
            self.handle.as_handle(),
            &w,
            fs::FILE_READ_ATTRIBUTES | fs::SYNCHRONIZE,
            options,
            false,
        )
        .map_err(nt_error)?;
        // The entry itself (not followed) is on this directory's volume.
        let dev = if follow { UNKNOWN_DEV } else { self.dev() };
        Ok(stat_handle(h.as_handle(), mask, reparse, dev)?.0)
    }

    /// Metadata of this directory itself (from its handle).
    ///
    /// # Errors
    ///
    /// The system's error when the handle's metadata cannot be read (an I/O error of the
    /// file system).
    pub fn stat(&self, mask: StatMask) -> io::Result<Metadata> {
        let (m, told) = stat_handle(self.handle.as_handle(), mask, false, self.dev())?;
        if let Some(dev) = told {
            self.dev.store(dev, Ordering::Relaxed);
        }
        Ok(m)
    }

    /// Whether the file ids in this directory's listing are those `stat` gives: on
    /// NTFS, yes (the 64-bit file reference number both ways).
    pub fn entry_inodes_exact(&self) -> bool {
        let mut name = [0u16; 32];
        // SAFETY: `name` is a live, writable buffer of the length given; the other
        // outputs are not asked for (null); the handle is open.
        let ok = unsafe {
            fs::GetVolumeInformationByHandleW(
                self.handle.as_raw_handle(),
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                name.as_mut_ptr(),
                name.len() as u32,
            )
        };
        ok != 0 && name.starts_with(&"NTFS\0".encode_utf16().collect::<Vec<_>>())
    }
}

/// Metadata of the file at `path` (relative to the working directory); with `follow`,
/// a link there is followed. `GetFileAttributesExW` first, as [`Dir::stat_at`].
///
/// # Errors
///
/// The system's error when `path` cannot be asked about: it does not exist (`NotFound`;
/// with `follow`, a dangling link too), a component is not a directory or may not be
/// searched; `InvalidInput` for a path with a NUL byte.
pub fn stat_path(path: &Path, mask: StatMask, follow: bool) -> io::Result<Metadata> {
    let mut reparse = false;
    if attributes_answer(mask) {
        match stat_by_attributes(&verbatim(path)?, mask) {
            Ok(m) => return Ok(m),
            Err(r) => reparse = r && !follow,
        }
    }
    count!(stat_opens);
    let file = open_path(path, fs::FILE_READ_ATTRIBUTES, follow)?;
    Ok(stat_handle(file.as_handle(), mask, reparse, UNKNOWN_DEV)?.0)
}
