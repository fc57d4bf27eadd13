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
//!   call fails (wine past `PATH_MAX`: see [`stat_by_classes`]), a query of one class
//!   for each field asked. Every way gives equal [`Metadata`]: the fields not asked for
//!   are zero each way;
//! - removal: `NtCreateFile(DELETE)` relative to the directory with
//!   `FILE_OPEN_REPARSE_POINT` (a link or junction is removed, never followed) and
//!   `SetFileInformationByHandle(FileDispositionInfoEx)` with `DELETE |
//!   POSIX_SEMANTICS | IGNORE_READONLY_ATTRIBUTE`; where that class is missing (FAT,
//!   Windows before 10 1709, wine 8) the classic `FileDispositionInfo`, clearing a
//!   read-only attribute first, after one `GetFileInformationByHandleEx(FileNameInfo)`
//!   that the system has a name to remove the file by (see [`file_name`]: wine has none
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

use super::names::{push_utf8, wide};
use super::{FileType, Metadata, RawEntry, StatMask, is_dot, os_to_bytes};
use std::ffi::{CStr, OsString};
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    FILE_DIRECTORY_FILE, FILE_INTERNAL_INFORMATION, FILE_NON_DIRECTORY_FILE, FILE_OPEN,
    FILE_OPEN_FOR_BACKUP_INTENT, FILE_OPEN_REPARSE_POINT, FILE_SYNCHRONOUS_IO_NONALERT,
    FileInternalInformation, NtCreateFile, NtQueryInformationFile,
};
use windows_sys::Win32::Foundation::{
    self as wf, GetLastError, HANDLE, NTSTATUS, OBJ_CASE_INSENSITIVE, OBJ_DONT_REPARSE,
    RtlNtStatusToDosError, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;
use windows_sys::Win32::System::SystemServices::{
    IO_REPARSE_TAG_MOUNT_POINT, IO_REPARSE_TAG_SYMLINK,
};

/// The fault seam and call counters of the crate's tests: per thread, so that a test
/// counts only its own calls.
#[cfg(test)]
pub(crate) mod seam {
    use std::cell::Cell;

    thread_local! {
        /// When set, `stat_at` and `stat_path` skip `GetFileAttributesExW` and take the
        /// handle-based way, as when that call fails.
        pub(crate) static FORCE_HANDLE_STAT: Cell<bool> = const { Cell::new(false) };
        /// When set, the POSIX disposition is skipped for the classic one.
        pub(crate) static FORCE_CLASSIC_DELETE: Cell<bool> = const { Cell::new(false) };
        /// When set, the handle way of `stat` skips `GetFileInformationByHandle` for
        /// the queries of one class each, as when that call fails.
        pub(crate) static FORCE_CLASS_QUERIES: Cell<bool> = const { Cell::new(false) };
        static COUNTS: Cell<Counts> = const { Cell::new(Counts::ZERO) };
    }

    /// Calls made by this thread, by kind.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct Counts {
        /// `NtCreateFile` / `CreateFileW` opens of a directory.
        pub(crate) dir_opens: u64,
        /// `GetFileInformationByHandleEx` directory batch reads.
        pub(crate) batch_reads: u64,
        /// `GetFileAttributesExW` calls.
        pub(crate) attr_calls: u64,
        /// Opens of an entry for its metadata (the handle way of `stat_at`).
        pub(crate) stat_opens: u64,
        /// Queries on a handle (`GetFileInformationByHandle(Ex)` for metadata or a tag).
        pub(crate) handle_queries: u64,
        /// Opens for deletion.
        pub(crate) delete_opens: u64,
        /// `SetFileInformationByHandle` disposition calls.
        pub(crate) dispositions: u64,
        /// `FileNameInfo` queries before a classic disposition.
        pub(crate) name_queries: u64,
    }

    impl Counts {
        const ZERO: Counts = Counts {
            dir_opens: 0,
            batch_reads: 0,
            attr_calls: 0,
            stat_opens: 0,
            handle_queries: 0,
            delete_opens: 0,
            dispositions: 0,
            name_queries: 0,
        };
    }

    pub(crate) fn bump(f: impl FnOnce(&mut Counts)) {
        COUNTS.with(|c| {
            let mut v = c.get();
            f(&mut v);
            c.set(v);
        });
    }

    /// This thread's counts so far, reset to zero.
    pub(crate) fn take() -> Counts {
        COUNTS.with(|c| c.replace(Counts::ZERO))
    }

    pub(crate) fn force_handle_stat() -> bool {
        FORCE_HANDLE_STAT.with(Cell::get)
    }

    pub(crate) fn force_classic_delete() -> bool {
        FORCE_CLASSIC_DELETE.with(Cell::get)
    }

    pub(crate) fn force_class_queries() -> bool {
        FORCE_CLASS_QUERIES.with(Cell::get)
    }
}

macro_rules! count {
    ($field:ident) => {
        #[cfg(test)]
        seam::bump(|c| c.$field += 1);
    };
}

/// An open directory: a handle with list, traverse and read-attribute access, the
/// directory's path as it was reached (`\\?\` form), which only the path-based calls
/// (`GetFileAttributesExW`, reading a link's target, permissions) use, and its volume's
/// serial number once known (see [`Dir::dev`]).
///
/// Under wine, also the name the system gives the open directory (see [`under_wine`]),
/// once asked.
#[derive(Debug)]
pub struct Dir {
    handle: OwnedHandle,
    path: Vec<u16>,
    dev: AtomicU64,
    name: OnceLock<WineName>,
}

/// What wine calls an open directory (see [`Dir::own_name`]).
#[derive(Clone, Debug)]
struct WineName {
    name: Named,
    /// Whether `name` is the directory's and no other's: wine leaves trailing dots and
    /// spaces out of its names (`d.` is `d`), so that another directory may have it.
    exact: bool,
}

/// The name the system gives an open file (`FileNameInfo`: its path on its volume).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Named {
    /// The system has none (wine past `PATH_MAX`).
    Nameless,
    /// It would not say (another error).
    Unknown,
    Name(Vec<u16>),
}

/// A reusable buffer for [`Dir::read_entries`]: the records of one batch (8-byte
/// aligned, as the system wants them) and the current name in UTF-8.
pub struct DirBuf {
    buf: Vec<u64>,
    name: Vec<u8>,
}

impl DirBuf {
    /// A buffer of [`super::DEFAULT_DIR_BUF`] bytes.
    pub fn new() -> DirBuf {
        DirBuf::with_capacity(super::DEFAULT_DIR_BUF)
    }

    /// A buffer of `size` bytes (at least 1 KiB, so that any entry fits; at most what a
    /// `u32` length says).
    pub fn with_capacity(size: usize) -> DirBuf {
        let size = size.clamp(1024, 1 << 30);
        DirBuf {
            buf: vec![0; size.div_ceil(8)],
            name: Vec::with_capacity(256),
        }
    }
}

impl Default for DirBuf {
    fn default() -> Self {
        DirBuf::new()
    }
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

/// Whether the system took `OBJ_DONT_REPARSE`: 0 not known yet, 1 yes, 2 no.
static DONT_REPARSE: AtomicU8 = AtomicU8::new(0);

/// `NtCreateFile` of `name` relative to `root`: one component (or a relative path with
/// `\`) in UTF-16.
fn nt_open(
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

/// What `GetFileInformationByHandleEx` tells of an open handle in the fixed-size record
/// `T` of information class `class`.
///
/// # Safety
///
/// `class` must be the class whose record is a `T` (`FileBasicInfo` and
/// `FILE_BASIC_INFO`, ...): the call writes that record, of that size, into a `T`.
unsafe fn query_info<T: Default>(
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
unsafe fn set_info<T>(
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
fn attribute_tag(h: BorrowedHandle<'_>) -> io::Result<(u32, u32)> {
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
fn is_link(attrs: u32, tag: u32) -> bool {
    attrs & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0
        && (tag == IO_REPARSE_TAG_SYMLINK || tag == IO_REPARSE_TAG_MOUNT_POINT || tag == 0)
}

pub(super) fn type_of(attrs: u32, tag: u32) -> FileType {
    if is_link(attrs, tag) {
        FileType::Symlink
    } else if attrs & fs::FILE_ATTRIBUTE_DIRECTORY != 0 {
        FileType::Dir
    } else {
        FileType::File
    }
}

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

fn filetime(t: wf::FILETIME) -> i64 {
    ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) as i64
}

/// What both ways of `stat` know, before the mask is applied.
struct Raw {
    attrs: u32,
    tag: u32,
    dev: u64,
    ino: u64,
    size: u64,
    alloc: u64,
    nlink: u64,
    mtime: i64,
}

/// [`Metadata`] from what the system said, with exactly the fields `mask` asks for
/// (and the type): both ways of `stat` go through here, so they agree.
fn metadata(r: &Raw, mask: StatMask) -> Metadata {
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

/// The fields a batch record gives, as [`super::RawEntry::metadata`] has them (`dev`
/// and `nlink` left 0: a record tells neither).
const LISTED: StatMask = StatMask::ID
    .union(StatMask::SIZE)
    .union(StatMask::BLOCKS)
    .union(StatMask::MODE)
    .union(StatMask::MTIME);

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

/// A volume serial number not known (yet): [`Dir::dev`] before anything told it. Never
/// a serial number (they have 32 bits).
const UNKNOWN_DEV: u64 = u64::MAX;

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

/// Whether `b` separates components in a relative name: `/` (ftw's separator) or `\`
/// (below a verbatim root), which no Windows name holds.
fn is_sep(b: &u8) -> bool {
    *b == b'/' || *b == b'\\'
}

/// A name relative to a directory, in UTF-16: components split at `/` or `\` and
/// joined with `\`; `.` components left out.
fn rel_wide(name: &CStr) -> io::Result<Vec<u16>> {
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
fn one_name(name: &CStr) -> io::Result<Vec<u16>> {
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
fn final_path(h: BorrowedHandle<'_>) -> io::Result<Vec<u16>> {
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
fn join_nul(path: &[u16], name: &[u16]) -> Vec<u16> {
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
fn verbatim(path: &Path) -> io::Result<Vec<u16>> {
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

/// Opens `path` with `CreateFileW` (through std) for `access`, with backup semantics
/// (which directories need), following a link only with `follow`. The path is given in
/// its [`verbatim`] form: its names are taken as written.
fn open_path(path: &Path, access: u32, follow: bool) -> io::Result<std::fs::File> {
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

/// Whether this process runs under wine (its ntdll exports `wine_get_version`). Wine 8
/// shows a Unix symbolic link as a reparse point of no tag when listing, but opens it as
/// what it leads to whatever the flags (`FILE_OPEN_REPARSE_POINT`, `OBJ_DONT_REPARSE`),
/// and its classic disposition then removes that: there, each directory opened and
/// each entry removed is checked to be the one named (see [`Dir::check_named`]).
fn under_wine() -> bool {
    static WINE: OnceLock<bool> = OnceLock::new();
    *WINE.get_or_init(|| {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
        let ntdll: Vec<u16> = "ntdll.dll\0".encode_utf16().collect();
        // SAFETY: both strings are NUL-terminated and live for the calls; ntdll is
        // loaded in every process, and the module handle is not freed (nor owned).
        unsafe {
            let module = GetModuleHandleW(ntdll.as_ptr());
            !module.is_null()
                && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
        }
    })
}

/// The name the system gives the file of an open handle (`FileNameInfo`: its path on
/// its volume, `\dir\name`). [`Named::Nameless`] when it answers "invalid handle":
/// wine has no name for a file whose Unix path is longer than `PATH_MAX` (4,096 bytes
/// on Linux), and removes a file at the close of its last handle by that name: given
/// the classic disposition, such a file says yes and stays.
fn file_name(h: BorrowedHandle<'_>) -> Named {
    count!(name_queries);
    let mut buf = vec![0u32; 130];
    loop {
        // SAFETY: `buf` is a live, writable, 4-byte aligned buffer of the size given,
        // where a FILE_NAME_INFO (two u32-aligned fields) and a name fit; `h` is open.
        let ok = unsafe {
            fs::GetFileInformationByHandleEx(
                h.as_raw_handle(),
                fs::FileNameInfo,
                buf.as_mut_ptr().cast(),
                (buf.len() * 4) as u32,
            )
        };
        // SAFETY: reads this thread's last-error value.
        let e = if ok == 0 {
            unsafe { GetLastError() }
        } else {
            0
        };
        let len = buf[0] as usize / 2;
        match e {
            0 if len <= (buf.len() - 1) * 2 => {
                let units = buf[1..].iter().flat_map(|w| [*w as u16, (*w >> 16) as u16]);
                return Named::Name(units.take(len).collect());
            }
            wf::ERROR_MORE_DATA if len > (buf.len() - 1) * 2 && buf.len() < 1 << 16 => {
                buf.resize(len.div_ceil(2) + 1, 0);
            }
            wf::ERROR_INVALID_HANDLE => return Named::Nameless,
            _ => return Named::Unknown,
        }
    }
}

/// The error for an entry that the system opened as another file: under wine, a Unix
/// symbolic link (see [`under_wine`]).
fn opened_elsewhere() -> io::Error {
    io::Error::other(
        "not removed: the system opens another file by this name (under wine, a Unix \
         symbolic link is opened as what it leads to, which would be removed in its place)",
    )
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

/// One `FILE_ID_BOTH_DIR_INFO` record of a batch, its fields read (little-endian, at
/// any alignment) from within the buffer.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record<'b> {
    pub(super) attrs: u32,
    /// The reparse tag, in place of the extended attributes' size, when the reparse
    /// attribute is set.
    pub(super) tag: u32,
    pub(super) ino: u64,
    /// `EndOfFile`, `AllocationSize` and `LastWriteTime`.
    pub(super) size: u64,
    pub(super) alloc: u64,
    pub(super) mtime: i64,
    /// The name, UTF-16 little-endian (`FileNameLength` bytes).
    pub(super) name: &'b [u8],
}

impl Record<'_> {
    pub(super) fn name_units(&self) -> impl Iterator<Item = u16> + '_ {
        self.name
            .chunks_exact(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
    }
}

fn malformed() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "a malformed directory record from the file system",
    )
}

/// Calls `f` for each record of one batch as `GetFileInformationByHandleEx` filled
/// `bytes`. Nothing is trusted: each record's header and name must lie within `bytes`
/// (`FileNameLength` even), and `NextEntryOffset`, when not zero (the last record), must
/// step past the record's name and stay within `bytes`; otherwise the batch is an
/// `InvalidData` error (from the record that breaks the rule on; those before it were
/// given to `f`), never a read out of bounds or a loop.
pub(super) fn parse_batch<'b>(
    bytes: &'b [u8],
    mut f: impl FnMut(Record<'b>) -> io::Result<()>,
) -> io::Result<()> {
    use std::mem::offset_of;
    use windows_sys::Win32::Storage::FileSystem::FILE_ID_BOTH_DIR_INFO as Info;
    let u32_at = |at: usize| -> io::Result<u32> {
        let b = bytes.get(at..at + 4).ok_or_else(malformed)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap()))
    };
    let u64_at = |at: usize| -> io::Result<u64> {
        let b = bytes.get(at..at + 8).ok_or_else(malformed)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap()))
    };
    let header = offset_of!(Info, FileName);
    let mut at = 0usize;
    loop {
        if bytes.len().saturating_sub(at) < header {
            return Err(malformed());
        }
        let next = u32_at(at + offset_of!(Info, NextEntryOffset))? as usize;
        let name_len = u32_at(at + offset_of!(Info, FileNameLength))? as usize;
        let name_at = at + header;
        let name = bytes
            .get(name_at..name_at.checked_add(name_len).ok_or_else(malformed)?)
            .ok_or_else(malformed)?;
        if name_len % 2 != 0 || (next != 0 && next < header + name_len) {
            return Err(malformed());
        }
        f(Record {
            attrs: u32_at(at + offset_of!(Info, FileAttributes))?,
            tag: u32_at(at + offset_of!(Info, EaSize))?,
            ino: u64_at(at + offset_of!(Info, FileId))?,
            size: u64_at(at + offset_of!(Info, EndOfFile))?,
            alloc: u64_at(at + offset_of!(Info, AllocationSize))?,
            mtime: u64_at(at + offset_of!(Info, LastWriteTime))? as i64,
            name,
        })?;
        if next == 0 {
            return Ok(());
        }
        at += next;
    }
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

    /// The serial number of this directory's volume where known: told by the system
    /// when this directory's metadata was last asked (with [`Dir::stat`]), or, for a
    /// directory opened relative to its parent without following a link, the parent's
    /// when it was opened (a volume is mounted at a junction, which [`Dir::open_at`]
    /// does not follow). For the handles the system will not tell it for (under wine,
    /// past `PATH_MAX`: see [`stat_by_classes`]).
    fn dev(&self) -> u64 {
        self.dev.load(Ordering::Relaxed)
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

    /// What wine calls this open directory (see [`file_name`]), asked once. For a
    /// directory opened by path, the name is exact when the directory it names, opened
    /// by it, is this one (the same file id); a subdirectory's is set when it is
    /// opened ([`Dir::named_child`]).
    fn own_name(&self) -> &WineName {
        self.name.get_or_init(|| {
            let name = file_name(self.handle.as_handle());
            let exact = match &name {
                Named::Name(n) => {
                    let mut p: Vec<u16> = self.path.iter().take(6).copied().collect();
                    p.extend_from_slice(n);
                    let id = |h: BorrowedHandle<'_>| {
                        // SAFETY: FileIdInfo's record is a FILE_ID_INFO.
                        unsafe { query_info::<fs::FILE_ID_INFO>(h, fs::FileIdInfo) }
                            .ok()
                            .map(|i| (i.VolumeSerialNumber, i.FileId.Identifier))
                    };
                    let again = open_path(Path::new(&OsString::from_wide(&p)), DIR_ACCESS, true);
                    let mine = id(self.handle.as_handle());
                    again.is_ok_and(|f| mine.is_some() && id(f.as_handle()) == mine)
                }
                _ => false,
            };
            WineName { name, exact }
        })
    }

    /// What wine calls `h`, opened as this directory's entry `w`: `Err` if the system
    /// names another file (a Unix symbolic link's target). The name is exact where this
    /// directory's is and it is this directory's name, `\\` and `w`, `w` ending in no
    /// dot or space (which wine would leave out). Where the names cannot be compared
    /// (not exact, or not known), the entry's is taken as it is, not exact; except that
    /// an entry with a name below a directory with none (past wine's `PATH_MAX`, a
    /// longer path) is another file.
    fn named_child(&self, h: BorrowedHandle<'_>, w: &[u16]) -> Result<WineName, ()> {
        let got = file_name(h);
        let dir = self.own_name();
        let exact = match (&dir.name, &got) {
            (Named::Name(d), Named::Name(n)) if dir.exact => {
                let bs = u16::from(b'\\');
                let mut want = d.clone();
                if want.last() != Some(&bs) {
                    want.push(bs);
                }
                want.extend_from_slice(w);
                let clean =
                    !matches!(w.last(), Some(&u) if u == u16::from(b'.') || u == u16::from(b' '));
                if *n == want && clean {
                    true
                } else if clean {
                    return Err(());
                } else {
                    false
                }
            }
            (Named::Nameless, Named::Name(_)) => return Err(()),
            _ => false,
        };
        Ok(WineName { name: got, exact })
    }

    /// Whether `h`, opened for deletion as this directory's entry `w`, can be given the
    /// classic disposition, which removes by the name the system has for the file: it
    /// must have one (see [`file_name`]) and, under wine, be the entry's, exactly.
    fn check_named(&self, h: BorrowedHandle<'_>, w: &[u16]) -> io::Result<()> {
        let named = if under_wine() {
            let n = self.named_child(h, w).map_err(|()| opened_elsewhere())?;
            if !n.exact && n.name != Named::Nameless {
                return Err(io::Error::other(
                    "not removed: under wine, whose names leave out a name's trailing dots \
                     and spaces (here or in a directory above), it cannot be told from a \
                     Unix symbolic link's target, which would be removed in its place",
                ));
            }
            n.name
        } else {
            file_name(h)
        };
        if named == Named::Nameless {
            return Err(io::Error::other(
                "not removed: the system has no name for it to remove it by (under wine: \
                 its Unix path is longer than PATH_MAX)",
            ));
        }
        Ok(())
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

    /// Reads every entry of the directory (but `.` and `..`) into `buf` with
    /// `GetFileInformationByHandleEx` (`FileIdBothDirectoryRestartInfo`, then
    /// `FileIdBothDirectoryInfo` until no more), calling `f` for each; nothing is
    /// allocated per entry. The first call restarts the listing, so it can be read
    /// again.
    ///
    /// # Errors
    ///
    /// The system's error when the directory cannot be read (an I/O error, a directory
    /// removed meanwhile, a handle that may not read it); some entries may have been given
    /// to `f` before it.
    pub fn read_entries<F>(&self, buf: &mut DirBuf, mut f: F) -> io::Result<()>
    where
        F: FnMut(RawEntry<'_>),
    {
        let mut class = fs::FileIdBothDirectoryRestartInfo;
        loop {
            count!(batch_reads);
            let len = buf.buf.len() * 8;
            // SAFETY: `buf.buf` is a live, writable, 8-byte aligned buffer of `len`
            // bytes; the handle is an open directory with list access.
            let ok = unsafe {
                fs::GetFileInformationByHandleEx(
                    self.handle.as_raw_handle(),
                    class,
                    buf.buf.as_mut_ptr().cast(),
                    len as u32,
                )
            };
            if ok == 0 {
                let e = last_error();
                if e.raw_os_error() == Some(wf::ERROR_NO_MORE_FILES as i32) {
                    return Ok(());
                }
                return Err(e);
            }
            class = fs::FileIdBothDirectoryInfo;
            // SAFETY: the same buffer viewed as bytes: u64 has no padding and any byte
            // value is a valid u8; the view lives while `buf.buf` is not touched (the
            // parsing below only reads it and writes `buf.name`, another field).
            let bytes: &[u8] =
                unsafe { std::slice::from_raw_parts(buf.buf.as_ptr().cast::<u8>(), len) };
            let name = &mut buf.name;
            parse_batch(bytes, |r| {
                name.clear();
                push_utf8(r.name_units(), name);
                if !is_dot(name) {
                    name.push(0);
                    let name = CStr::from_bytes_with_nul(name)
                        .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
                    let raw = Raw {
                        attrs: r.attrs,
                        tag: r.tag,
                        dev: 0,
                        ino: r.ino,
                        size: r.size,
                        alloc: r.alloc,
                        nlink: 0,
                        mtime: r.mtime,
                    };
                    f(RawEntry {
                        name,
                        file_type: type_of(r.attrs, r.tag),
                        ino: r.ino,
                        meta: Some(metadata(&raw, LISTED)),
                    });
                }
                Ok(())
            })?;
        }
    }

    /// Whether this process may read, write and search the entry `name`: Windows has no
    /// Unix modes to change (yes).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn may_change_at(&self, _name: &CStr) -> io::Result<bool> {
        Ok(true)
    }

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

    /// Sets this directory's read-only attribute: set when `mode` has no owner write.
    ///
    /// # Errors
    ///
    /// The system's error when the mode may not be changed: not the owner
    /// (`PermissionDenied`), a read-only file system.
    pub fn set_permissions(&self, mode: u32) -> io::Result<()> {
        let path = OsString::from_wide(&self.path);
        let mut p = std::fs::metadata(&path)?.permissions();
        p.set_readonly(mode & 0o200 == 0);
        std::fs::set_permissions(&path, p)
    }

    /// Unix permission bits of a subdirectory: nothing to set on Windows, where a
    /// directory's attributes do not keep its entries (`Unsupported`).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or its mode changed: it does not
    /// exist (`NotFound`), is not a directory (`NotADirectory`), is a symbolic link, or may
    /// not be changed (`PermissionDenied`).
    pub fn set_dir_permissions_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        let _ = (name, mode);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

impl AsHandle for Dir {
    fn as_handle(&self) -> BorrowedHandle<'_> {
        self.handle.as_handle()
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

/// The limit on open handles: Windows has none that matters (16 million).
pub fn fd_limit() -> Option<u64> {
    None
}

/// How many handles this process has open: not counted here, where [`fd_limit`] sets
/// no limit to compare them with.
pub(crate) fn open_fds() -> Option<usize> {
    None
}

/// The address space this process may still map under a limit: no such limit here.
pub fn address_space_room() -> Option<u64> {
    None
}

/// CPU time used so far by every thread of this process (`GetProcessTimes`).
pub fn process_cpu_time() -> std::time::Duration {
    let zero = wf::FILETIME::default();
    let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
    // SAFETY: four live FILETIMEs to write; the pseudo-handle of this process.
    let ok = unsafe {
        windows_sys::Win32::System::Threading::GetProcessTimes(
            windows_sys::Win32::System::Threading::GetCurrentProcess(),
            &mut c,
            &mut e,
            &mut k,
            &mut u,
        )
    };
    if ok == 0 {
        return std::time::Duration::ZERO;
    }
    let ticks = filetime(k) as u64 + filetime(u) as u64;
    std::time::Duration::from_nanos(ticks.saturating_mul(100))
}
