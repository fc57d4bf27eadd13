//! Linux: `openat`, `getdents64`, `statx` and `unlinkat` through `rustix`.
//!
//! No `unsafe` code: `rustix`'s API is safe (its own `unsafe` lies within it), and this
//! module does not lift the crate's `#![deny(unsafe_code)]`.

use super::{Attributes, DEFAULT_DIR_BUF, FileType, Metadata, RawEntry, StatMask, is_dot};
use rustix::fs::{self as rfs, AtFlags, CWD, Mode, OFlags, RawDir, StatxFlags};
use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

mod copy;
pub use copy::{File, copy_data, copy_data_counted, reflink, umask};

/// An open directory: an owned file descriptor opened with `O_DIRECTORY | O_CLOEXEC`.
/// Closed when dropped.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

/// A reusable buffer for [`Dir::read_entries`]: entries are decoded in place, so one
/// buffer serves every directory a thread reads.
pub struct DirBuf {
    buf: Vec<MaybeUninit<u8>>,
}

impl DirBuf {
    /// A buffer of [`DEFAULT_DIR_BUF`] bytes.
    pub fn new() -> DirBuf {
        DirBuf::with_capacity(DEFAULT_DIR_BUF)
    }

    /// A buffer of `size` bytes (at least 1 KiB, so that any entry fits).
    pub fn with_capacity(size: usize) -> DirBuf {
        let mut buf = Vec::with_capacity(size.max(1024));
        buf.resize(size.max(1024), MaybeUninit::uninit());
        DirBuf { buf }
    }
}

impl Default for DirBuf {
    fn default() -> Self {
        DirBuf::new()
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

fn cvt(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl Dir {
    /// Opens the directory at `path` (relative to the working directory), following a
    /// symbolic link there.
    ///
    /// # Errors
    ///
    /// The system's error when `path` cannot be opened as a directory: it does not exist
    /// (`NotFound`), is not a directory (`NotADirectory`), or may not be read
    /// (`PermissionDenied`).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let fd = rfs::openat(CWD, path, DIR_FLAGS, Mode::empty()).map_err(cvt)?;
        Ok(Dir { fd })
    }

    /// Opens the directory at `path` (following a symbolic link there) only to work
    /// relative to it, as the parent of the entries it names (`O_PATH`): search
    /// permission on the way is enough, read permission on it is not asked, and its
    /// entries cannot be read through the handle ([`Dir::read_entries`] fails); every
    /// `*_at` call works. A directory its user may search and write but not read (mode
    /// 0300) is so the parent of what is removed from it.
    ///
    /// # Errors
    ///
    /// The system's error when `path` cannot be reached as a directory: it does not
    /// exist (`NotFound`), is not a directory (`NotADirectory`, also for a component on
    /// the way), or a directory on the way may not be searched (`PermissionDenied`).
    pub fn open_search_only(path: &Path) -> io::Result<Dir> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rfs::openat(CWD, path, flags, Mode::empty()).map_err(cvt)?;
        Ok(Dir { fd })
    }

    /// Opens the directory at `path`, failing (`ELOOP` or `ENOTDIR`) if its last
    /// component is a symbolic link.
    ///
    /// # Errors
    ///
    /// As [`Dir::open`], and an error when the last component of `path` is a symbolic link
    /// (or on Windows a junction), which is not followed.
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        let fd =
            rfs::openat(CWD, path, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty()).map_err(cvt)?;
        Ok(Dir { fd })
    }

    /// Opens the subdirectory `name` of this directory. A symbolic link is not followed:
    /// it fails with `ELOOP` or `ENOTDIR`.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened as a directory: it does not exist
    /// (`NotFound`), is not a directory, is a symbolic link (or on Windows a junction),
    /// which is not followed, or may not be read (`PermissionDenied`).
    pub fn open_at(&self, name: &CStr) -> io::Result<Dir> {
        let fd = rfs::openat(&self.fd, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())
            .map_err(cvt)?;
        Ok(Dir { fd })
    }

    /// Opens the subdirectory `name`, following it if it is a symbolic link.
    ///
    /// # Errors
    ///
    /// The system's error when `name`, or what it leads to, cannot be opened as a
    /// directory: it does not exist (`NotFound`, a dangling link too), is not a directory,
    /// or may not be read (`PermissionDenied`).
    pub fn open_at_follow(&self, name: &CStr) -> io::Result<Dir> {
        let fd = rfs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()).map_err(cvt)?;
        Ok(Dir { fd })
    }

    /// Reads the whole regular file `name` of this directory (a symbolic link there is
    /// not followed; a pipe there does not block).
    ///
    /// A read that returns less than asked for is taken as the end of the file, as it is
    /// for regular files: a small file costs `openat`, one `read` and `close` (std's
    /// `read_to_end` adds a `statx`, an `lseek` and a last `read` of nothing).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or read: it does not exist
    /// (`NotFound`), is a symbolic link (not followed) or a directory, or may not be read
    /// (`PermissionDenied`).
    pub fn read_file_at(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let fd = rfs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(cvt)?;
        let mut out = Vec::with_capacity(4096);
        loop {
            if out.len() == out.capacity() {
                out.reserve(out.len());
            }
            let want = out.capacity() - out.len();
            match rustix::io::read(&fd, rustix::buffer::spare_capacity(&mut out)) {
                Ok(n) if n < want => return Ok(out),
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(cvt(e)),
            }
        }
    }

    /// A second handle to the same open directory (`dup`).
    ///
    /// # Errors
    ///
    /// The system's error when no handle can be made (too many open: `EMFILE` on Unix).
    pub fn try_clone(&self) -> io::Result<Dir> {
        let fd = rustix::io::fcntl_dupfd_cloexec(&self.fd, 0).map_err(cvt)?;
        Ok(Dir { fd })
    }

    /// Opens the directory at the relative path `rel` below this one in one call. Without
    /// `follow`, no component may be a symbolic link (`openat2` with
    /// `RESOLVE_NO_SYMLINKS`; where the kernel lacks it, one component at a time with
    /// `O_NOFOLLOW`); with `follow`, links are followed.
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
        match rfs::openat2(
            &self.fd,
            rel,
            DIR_FLAGS | OFlags::NOFOLLOW,
            Mode::empty(),
            rfs::ResolveFlags::NO_SYMLINKS,
        ) {
            Ok(fd) => Ok(Dir { fd }),
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
                let mut cur: Option<Dir> = None;
                for comp in rel
                    .to_bytes()
                    .split(|&b| b == b'/')
                    .filter(|c| !c.is_empty())
                {
                    let name = std::ffi::CString::new(comp)
                        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
                    cur = Some(cur.as_ref().unwrap_or(self).open_at(&name)?);
                }
                cur.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
            }
            Err(e) => Err(cvt(e)),
        }
    }

    /// Reads every entry of the directory (but `.` and `..`) into `buf` with
    /// `getdents64`, calling `f` for each; nothing is allocated per entry. The read
    /// position is not rewound: call it once per opened directory.
    ///
    /// # Errors
    ///
    /// The system's error when the directory cannot be read (an I/O error, a directory
    /// removed meanwhile, a handle that may not read it); some entries may have been given
    /// to `f` before it.
    pub fn read_entries<F>(&self, buf: &mut DirBuf, f: F) -> io::Result<()>
    where
        F: FnMut(RawEntry<'_>),
    {
        self.read_some_entries(buf, usize::MAX, f).map(|_| ())
    }

    /// Reads the directory's entries (but `.` and `..`) as [`Dir::read_entries`] does,
    /// but stops once at least `at_least` have been given to `f` and the last batch
    /// read is used up: `Ok(true)` then says that entries may remain, for the next call
    /// to read on from there (a huge directory in bounded memory). `Ok(false)`: the end.
    ///
    /// ```no_run
    /// # fn main() -> std::io::Result<()> {
    /// let dir = ftw::sys::Dir::open(std::path::Path::new("/usr/lib"))?;
    /// let mut buf = ftw::sys::DirBuf::with_capacity(64 * 1024);
    /// let mut n = 0;
    /// while dir.read_some_entries(&mut buf, 10_000, |_| n += 1)? {
    ///     // At least 10,000 more entries since the last look, or the end.
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Dir::read_entries`].
    pub fn read_some_entries<F>(
        &self,
        buf: &mut DirBuf,
        at_least: usize,
        mut f: F,
    ) -> io::Result<bool>
    where
        F: FnMut(RawEntry<'_>),
    {
        let mut raw = RawDir::new(&self.fd, &mut buf.buf);
        let mut given = 0usize;
        loop {
            // Only between batches: what is left of one would be lost with the buffer.
            if given >= at_least && raw.is_buffer_empty() {
                return Ok(true);
            }
            let Some(item) = raw.next() else {
                return Ok(false);
            };
            let e = item.map_err(cvt)?;
            let name = e.file_name();
            if is_dot(name.to_bytes()) {
                continue;
            }
            given += 1;
            f(RawEntry {
                name,
                file_type: file_type_of(e.file_type()),
                ino: e.ino(),
            });
        }
    }

    /// Metadata of the entry `name` of this directory (`statx` relative to it, with
    /// `AT_STATX_DONT_SYNC` and only the fields in `mask`; `fstatat` where `statx` is
    /// missing). With `follow`, a symbolic link is followed.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist (`NotFound`;
    /// with `follow`, a dangling link too), or this directory may not be searched
    /// (`PermissionDenied`).
    pub fn stat_at(&self, name: &CStr, mask: StatMask, follow: bool) -> io::Result<Metadata> {
        let flags = if follow {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        stat_impl(self.fd.as_fd(), name, flags, mask)
    }

    /// Whether this process may read, write and search the entry `name` (a symbolic link
    /// itself, never followed), by its effective ids and capabilities (`faccessat2` with
    /// `AT_EACCESS`): what root may do without a change of mode, it may; on a read-only
    /// file system, whether it may read and search. Where the kernel lacks `faccessat2`
    /// (before Linux 5.8) or a sandbox refuses it, the owner's bits tell (root: yes).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn may_change_at(&self, name: &CStr) -> io::Result<bool> {
        let all = rfs::Access::READ_OK | rfs::Access::WRITE_OK | rfs::Access::EXEC_OK;
        let flags = AtFlags::EACCESS | AtFlags::SYMLINK_NOFOLLOW;
        match rfs::accessat(&self.fd, name, all, flags) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::ACCESS) => Ok(false),
            // A read-only file system answers W_OK before the mode is asked: the mode
            // answers for read and search, and a change of it fails in turn (EROFS), to
            // be told rather than the refusal to read that follows.
            Err(rustix::io::Errno::ROFS) => {
                let rx = rfs::Access::READ_OK | rfs::Access::EXEC_OK;
                match rfs::accessat(&self.fd, name, rx, flags) {
                    Ok(()) => Ok(true),
                    Err(rustix::io::Errno::ACCESS) => Ok(false),
                    Err(e) => Err(cvt(e)),
                }
            }
            // No faccessat2 (rustix cannot stand in for it with AT_SYMLINK_NOFOLLOW), or
            // refused by a seccomp filter; EPERM is also an immutable entry's answer to
            // W_OK, whose change of mode is refused in turn.
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
                if rustix::process::geteuid().is_root() {
                    return Ok(true);
                }
                let m = self.stat_at(name, StatMask::MODE, false)?;
                Ok(m.mode & 0o700 == 0o700)
            }
            Err(e) => Err(cvt(e)),
        }
    }

    /// Whether this process may remove entries of this directory (and add some): write
    /// and search permission by its effective ids and capabilities (`faccessat` of `.`
    /// relative to the handle, `AT_EACCESS`), which a read-only file system and an
    /// immutable directory refuse too. Where the system cannot answer (a set-user-id
    /// process, whose check takes `faccessat2`, before Linux 5.8), the mode's bits for
    /// this process's ids and the immutable flag tell.
    ///
    /// # Errors
    ///
    /// The refusal, as an `unlinkat` in this directory would meet it: `EACCES`
    /// (`PermissionDenied`) for want of permission, `EPERM` for an immutable directory,
    /// `EROFS` on a read-only file system.
    pub fn may_write(&self) -> io::Result<()> {
        let wx = rfs::Access::WRITE_OK | rfs::Access::EXEC_OK;
        match rfs::accessat(&self.fd, c".", wx, AtFlags::EACCESS) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::NOSYS) => {
                let m = self.stat(StatMask::MODE | StatMask::OWNER)?;
                if m.attributes.immutable {
                    return Err(cvt(rustix::io::Errno::PERM));
                }
                let uid = rustix::process::geteuid();
                if uid.is_root() {
                    return Ok(());
                }
                let gid = rustix::process::getegid();
                let in_group = gid.as_raw() == m.gid
                    || rustix::process::getgroups()
                        .is_ok_and(|g| g.iter().any(|g| g.as_raw() == m.gid));
                let bits = if uid.as_raw() == m.uid {
                    m.mode >> 6
                } else if in_group {
                    m.mode >> 3
                } else {
                    m.mode
                };
                match bits & 0o3 == 0o3 {
                    true => Ok(()),
                    false => Err(cvt(rustix::io::Errno::ACCESS)),
                }
            }
            Err(e) => Err(cvt(e)),
        }
    }

    /// Whether the entry `name` of this directory is the root of a mount (`statx`'s
    /// `STATX_ATTR_MOUNT_ROOT`, Linux 5.8 on; `false` where the kernel does not say): a
    /// bind mount of the same file system too, which its device does not tell.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn is_mount_root_at(&self, name: &CStr) -> io::Result<bool> {
        let flags = AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT | AtFlags::STATX_DONT_SYNC;
        let st = rfs::statx(self.fd.as_fd(), name, flags, StatxFlags::TYPE).map_err(cvt)?;
        let root = rfs::StatxAttributes::MOUNT_ROOT;
        Ok(st.stx_attributes_mask.contains(root) && st.stx_attributes.contains(root))
    }

    /// Metadata of this directory itself.
    ///
    /// # Errors
    ///
    /// The system's error when the handle's metadata cannot be read (an I/O error of the
    /// file system).
    pub fn stat(&self, mask: StatMask) -> io::Result<Metadata> {
        stat_impl(self.fd.as_fd(), c"", AtFlags::EMPTY_PATH, mask)
    }

    /// Whether the file system holding this directory is known to give, in each
    /// directory entry, the inode number `stat` gives for it (`d_ino == st_ino`): ext2/3/4,
    /// XFS, Btrfs and tmpfs (`fstatfs`). Where it may not (overlayfs, FUSE, network file
    /// systems), `false`.
    ///
    /// ```
    /// let dir = ftw::sys::Dir::open(std::path::Path::new("/proc"))?;
    /// assert!(!dir.entry_inodes_exact(), "procfs is not among them");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn entry_inodes_exact(&self) -> bool {
        const EXT: i64 = 0xEF53;
        const XFS: i64 = 0x5846_5342;
        const BTRFS: i64 = 0x9123_683E;
        const TMPFS: i64 = 0x0102_1994;
        // f_type's width differs between targets.
        #[allow(clippy::unnecessary_cast)]
        rfs::fstatfs(&self.fd).is_ok_and(|s| matches!(s.f_type as i64, EXT | XFS | BTRFS | TMPFS))
    }

    /// Removes the non-directory entry `name` of this directory (`unlinkat`).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be removed: it does not exist (`NotFound`), is
    /// a directory, or this directory is not writable (`PermissionDenied`).
    pub fn unlink_at(&self, name: &CStr) -> io::Result<()> {
        rfs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(cvt)
    }

    /// Removes the empty subdirectory `name` (`unlinkat` with `AT_REMOVEDIR`).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be removed: it does not exist (`NotFound`), is
    /// not empty (`DirectoryNotEmpty`), is not a directory (`NotADirectory`), or this
    /// directory is not writable (`PermissionDenied`).
    pub fn remove_dir_at(&self, name: &CStr) -> io::Result<()> {
        rfs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(cvt)
    }

    /// The target of the symbolic link `name` of this directory (`readlinkat`), as bytes.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be read as a link: it does not exist
    /// (`NotFound`), or is not a symbolic link (`InvalidInput` on Unix).
    pub fn read_link_at(&self, name: &CStr) -> io::Result<Vec<u8>> {
        rfs::readlinkat(&self.fd, name, Vec::new())
            .map(|t| t.into_bytes())
            .map_err(cvt)
    }

    /// Sets this directory's permission bits (`fchmod` on the handle: the directory
    /// opened, whatever its path leads to now).
    ///
    /// # Errors
    ///
    /// The system's error when the mode may not be changed: not the owner
    /// (`PermissionDenied`), a read-only file system.
    pub fn set_permissions(&self, mode: u32) -> io::Result<()> {
        rfs::fchmod(&self.fd, Mode::from_raw_mode(mode & 0o7777)).map_err(cvt)
    }

    /// Sets the permission bits of the subdirectory `name`, which need not be readable
    /// nor searchable (mode 0000): never through a symbolic link. The directory is
    /// pinned by an `O_PATH|O_NOFOLLOW` handle, checked to be a directory, and changed
    /// through that handle's `/proc/self/fd` link (`fchmod` refuses an `O_PATH` handle),
    /// so a name swapped for a link meanwhile changes nothing else. Without `/proc`, it
    /// fails (`Unsupported`, saying so).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or its mode changed: it does not
    /// exist (`NotFound`), is not a directory (`NotADirectory`), is a symbolic link, or may
    /// not be changed (`PermissionDenied`).
    pub fn set_dir_permissions_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&self.fd, name, flags, Mode::empty()).map_err(cvt)?;
        let st = rfs::fstat(&fd).map_err(cvt)?;
        if rfs::FileType::from_raw_mode(st.st_mode) != rfs::FileType::Directory {
            return Err(io::Error::from(io::ErrorKind::NotADirectory));
        }
        let link = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
        match rfs::chmod(link, Mode::from_raw_mode(mode & 0o7777)) {
            // The handle is open: only a missing /proc makes its link missing.
            Err(rustix::io::Errno::NOENT) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "/proc is not mounted, and the mode of a directory that cannot be read \
                 is changed through it",
            )),
            r => r.map_err(cvt),
        }
    }
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Metadata of the file at `path` (relative to the working directory); with `follow`,
/// a symbolic link there is followed.
///
/// # Errors
///
/// The system's error when `path` cannot be asked about: it does not exist (`NotFound`;
/// with `follow`, a dangling link too), a component is not a directory or may not be
/// searched; `InvalidInput` for a path with a NUL byte.
pub fn stat_path(path: &Path, mask: StatMask, follow: bool) -> io::Result<Metadata> {
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    stat_impl(CWD, &c, flags, mask)
}

fn stat_impl(
    fd: BorrowedFd<'_>,
    name: &CStr,
    flags: AtFlags,
    mask: StatMask,
) -> io::Result<Metadata> {
    let mut want = StatxFlags::TYPE | StatxFlags::INO;
    if mask.contains(StatMask::SIZE) {
        want |= StatxFlags::SIZE;
    }
    if mask.contains(StatMask::BLOCKS) {
        want |= StatxFlags::BLOCKS;
    }
    if mask.contains(StatMask::NLINK) {
        want |= StatxFlags::NLINK;
    }
    if mask.contains(StatMask::MODE) {
        want |= StatxFlags::MODE;
    }
    if mask.contains(StatMask::MTIME) {
        want |= StatxFlags::MTIME;
    }
    if mask.contains(StatMask::OWNER) {
        want |= StatxFlags::UID | StatxFlags::GID;
    }
    if mask.contains(StatMask::TIMES) {
        want |= StatxFlags::ATIME | StatxFlags::CTIME;
    }
    match rfs::statx(fd, name, flags | AtFlags::STATX_DONT_SYNC, want) {
        Ok(st) => Ok(Metadata {
            file_type: Some(FileType::from_mode(u32::from(st.stx_mode))),
            dev: rfs::makedev(st.stx_dev_major, st.stx_dev_minor),
            ino: st.stx_ino,
            size: st.stx_size,
            blocks: st.stx_blocks,
            nlink: u64::from(st.stx_nlink),
            mode: u32::from(st.stx_mode),
            mtime: st.stx_mtime.tv_sec,
            mtime_nsec: st.stx_mtime.tv_nsec,
            uid: st.stx_uid,
            gid: st.stx_gid,
            rdev: rfs::makedev(st.stx_rdev_major, st.stx_rdev_minor),
            atime: st.stx_atime.tv_sec,
            atime_nsec: st.stx_atime.tv_nsec,
            ctime: st.stx_ctime.tv_sec,
            ctime_nsec: st.stx_ctime.tv_nsec,
            attributes: attributes_of(st.stx_attributes, st.stx_attributes_mask),
        }),
        // No statx (old kernels, some sandboxes): the classic call answers the same.
        Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
            let st = rfs::statat(fd, name, flags).map_err(cvt)?;
            #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
            Ok(Metadata {
                file_type: Some(FileType::from_mode(st.st_mode as u32)),
                dev: st.st_dev as u64,
                ino: st.st_ino as u64,
                size: st.st_size as u64,
                blocks: st.st_blocks as u64,
                nlink: st.st_nlink as u64,
                mode: st.st_mode as u32,
                mtime: st.st_mtime as i64,
                mtime_nsec: st.st_mtime_nsec as u32,
                uid: st.st_uid,
                gid: st.st_gid,
                rdev: st.st_rdev as u64,
                atime: st.st_atime as i64,
                atime_nsec: st.st_atime_nsec as u32,
                ctime: st.st_ctime as i64,
                ctime_nsec: st.st_ctime_nsec as u32,
                // Not told without statx.
                attributes: Attributes::default(),
            })
        }
        Err(e) => Err(cvt(e)),
    }
}

/// The flags `statx` told (`attributes`), among those it says it knows of (`known`).
fn attributes_of(attributes: rfs::StatxAttributes, known: rfs::StatxAttributes) -> Attributes {
    let has = |a: rfs::StatxAttributes| known.contains(a) && attributes.contains(a);
    Attributes {
        immutable: has(rfs::StatxAttributes::IMMUTABLE),
        append_only: has(rfs::StatxAttributes::APPEND),
        mount_root: has(rfs::StatxAttributes::MOUNT_ROOT),
    }
}

fn file_type_of(t: rfs::FileType) -> FileType {
    match t {
        rfs::FileType::RegularFile => FileType::File,
        rfs::FileType::Directory => FileType::Dir,
        rfs::FileType::Symlink => FileType::Symlink,
        rfs::FileType::BlockDevice => FileType::BlockDevice,
        rfs::FileType::CharacterDevice => FileType::CharDevice,
        rfs::FileType::Fifo => FileType::Fifo,
        rfs::FileType::Socket => FileType::Socket,
        _ => FileType::Unknown,
    }
}

/// The effective user id of this process, which the system checks permissions by
/// (`None` where there is none: Windows, and the portable build).
pub fn effective_uid() -> Option<u32> {
    Some(rustix::process::geteuid().as_raw())
}

/// The soft limit on open file descriptors (`RLIMIT_NOFILE`), if there is one.
pub fn fd_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// How many file descriptors this process has open (the entries of `/proc/self/fd`,
/// less the one that reads them); `None` where `/proc` is not mounted.
pub(crate) fn open_fds() -> Option<usize> {
    let n = std::fs::read_dir("/proc/self/fd").ok()?.count();
    Some(n.saturating_sub(1))
}

/// The address space this process may still map under its limit (`ulimit -v`,
/// `RLIMIT_AS`), in bytes; `None` when there is no limit (or it cannot be read).
///
/// ```
/// if let Some(room) = ftw::sys::address_space_room() {
///     println!("{room} bytes of address space left");
/// }
/// ```
pub fn address_space_room() -> Option<u64> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::As).current?;
    // "VmSize:    123456 kB": the address space mapped now.
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(limit.saturating_sub(kib * 1024))
}

/// CPU time used so far by every thread of this process (user and system).
pub fn process_cpu_time() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
