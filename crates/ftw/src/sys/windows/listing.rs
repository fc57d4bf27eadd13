//! Directory listing: the reused [`DirBuf`], filled in batches by
//! `GetFileInformationByHandleEx` (`FileIdBothDirectoryInfo`), whose
//! `FILE_ID_BOTH_DIR_INFO` records are read without trusting them ([`parse_batch`]).

use super::info::type_of;
#[cfg(test)]
use super::seam;
use super::stat::{Raw, metadata};
use super::{Dir, last_error};
use crate::sys::names::push_utf8;
use crate::sys::{RawEntry, StatMask, is_dot};
use std::ffi::CStr;
use std::io;
use std::os::windows::io::AsRawHandle;

use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Storage::FileSystem as fs;

/// A reusable buffer for [`Dir::read_entries`]: the records of one batch (8-byte
/// aligned, as the system wants them) and the current name in UTF-8.
pub struct DirBuf {
    buf: Vec<u64>,
    name: Vec<u8>,
}

impl DirBuf {
    /// A buffer of [`crate::sys::DEFAULT_DIR_BUF`] bytes.
    pub fn new() -> DirBuf {
        DirBuf::with_capacity(crate::sys::DEFAULT_DIR_BUF)
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

/// The fields a batch record gives, as [`crate::sys::RawEntry::metadata`] has them (`dev`
/// and `nlink` left 0: a record tells neither).
const LISTED: StatMask = StatMask::ID
    .union(StatMask::SIZE)
    .union(StatMask::BLOCKS)
    .union(StatMask::MODE)
    .union(StatMask::MTIME);

/// One `FILE_ID_BOTH_DIR_INFO` record of a batch, its fields read (little-endian, at
/// any alignment) from within the buffer.
#[derive(Clone, Copy, Debug)]
pub(in crate::sys) struct Record<'b> {
    pub(in crate::sys) attrs: u32,
    /// The reparse tag, in place of the extended attributes' size, when the reparse
    /// attribute is set.
    pub(in crate::sys) tag: u32,
    pub(in crate::sys) ino: u64,
    /// `EndOfFile`, `AllocationSize` and `LastWriteTime`.
    pub(in crate::sys) size: u64,
    pub(in crate::sys) alloc: u64,
    pub(in crate::sys) mtime: i64,
    /// The name, UTF-16 little-endian (`FileNameLength` bytes).
    pub(in crate::sys) name: &'b [u8],
}

impl Record<'_> {
    pub(in crate::sys) fn name_units(&self) -> impl Iterator<Item = u16> + '_ {
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
pub(in crate::sys) fn parse_batch<'b>(
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
    /// Reads the directory's entries as [`Dir::read_entries`] does; on this system always
    /// every one of them, whatever `at_least`, so it gives `Ok(false)` (the end). On
    /// Linux a huge directory is read in parts.
    ///
    /// # Errors
    ///
    /// As [`Dir::read_entries`].
    pub fn read_some_entries<F>(&self, buf: &mut DirBuf, at_least: usize, f: F) -> io::Result<bool>
    where
        F: FnMut(RawEntry<'_>),
    {
        // Read whole here: the listing is not read in parts on this system.
        let _ = at_least;
        self.read_entries(buf, f).map(|()| false)
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
}
