//! Linux: what a copy needs, relative to directory handles: `mkdirat`, files made with
//! `openat(O_CREAT | O_EXCL | O_NOFOLLOW)`, `symlinkat`, `linkat`, `mknodat`; data moved
//! in the kernel (`FICLONE`, `copy_file_range`, holes found with `SEEK_DATA` and
//! `SEEK_HOLE`), `read`/`write` only where those are refused; and metadata set on the
//! open file (`fchmod`, `fchown`, `futimens`, `fsetxattr`) or, for what cannot be
//! opened (links, fifos, devices), relative to its directory without following a link.

use super::{Dir, cvt};
use crate::sys::{DataCopy, FileTimes, Metadata, Reflink, Sparse, StatMask};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, SeekFrom, Timespec, Timestamps};
use rustix::io::Errno;
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// An open file that is not a directory: a source opened for reading
/// ([`Dir::open_file_at`]) or a destination made or opened for writing
/// ([`Dir::create_file_at`], [`Dir::open_file_write_at`]). Closed when dropped.
#[derive(Debug)]
pub struct File {
    fd: OwnedFd,
}

impl AsFd for File {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

const RD: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOCTTY)
    .union(OFlags::NONBLOCK);

fn timestamps(t: &FileTimes) -> Timestamps {
    Timestamps {
        last_access: Timespec {
            tv_sec: t.accessed.0,
            tv_nsec: t.accessed.1.into(),
        },
        last_modification: Timespec {
            tv_sec: t.modified.0,
            tv_nsec: t.modified.1.into(),
        },
    }
}

fn ids(uid: Option<u32>, gid: Option<u32>) -> (Option<rfs::Uid>, Option<rfs::Gid>) {
    (uid.map(rfs::Uid::from_raw), gid.map(rfs::Gid::from_raw))
}

impl Dir {
    /// Makes the directory `name` in this one (`mkdirat`) with the permission bits
    /// `mode`, less the process's umask.
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`, a link there too, never
    /// followed), this directory may not be written (`PermissionDenied`), no space.
    pub fn make_dir_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        rfs::mkdirat(self, name, Mode::from_raw_mode(mode & 0o7777)).map_err(cvt)
    }

    /// Makes the regular file `name` in this one and opens it for writing
    /// (`openat(O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY)`): never a file that was there,
    /// never through a link. Its mode is `mode` less the umask.
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`), this directory may not be
    /// written (`PermissionDenied`), no space, too many open files.
    pub fn create_file_at(&self, name: &CStr, mode: u32) -> io::Result<File> {
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let fd = rfs::openat(self, name, flags, Mode::from_raw_mode(mode & 0o7777)).map_err(cvt)?;
        Ok(File { fd })
    }

    /// Opens the existing regular file `name` for writing, emptied (`O_TRUNC`), never
    /// through a link: the destination of a copy that overwrites.
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), is a link (`ELOOP`), a
    /// directory, or may not be written (`PermissionDenied`).
    pub fn open_file_write_at(&self, name: &CStr) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = rfs::openat(self, name, flags, Mode::empty()).map_err(cvt)?;
        Ok(File { fd })
    }

    /// Opens the file `name` for reading, without following a link unless `follow`,
    /// and without blocking on a fifo (`O_NONBLOCK`).
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), is a link and `follow` is
    /// not set (`ELOOP`), or may not be read (`PermissionDenied`).
    pub fn open_file_at(&self, name: &CStr, follow: bool) -> io::Result<File> {
        let flags = if follow { RD } else { RD | OFlags::NOFOLLOW };
        let fd = rfs::openat(self, name, flags, Mode::empty()).map_err(cvt)?;
        Ok(File { fd })
    }

    /// Makes the symbolic link `name` in this one, leading to `target` (`symlinkat`).
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`), this directory may not be
    /// written (`PermissionDenied`), the file system has no links.
    pub fn symlink_at(&self, target: &CStr, name: &CStr) -> io::Result<()> {
        rfs::symlinkat(target, self, name).map_err(cvt)
    }

    /// Makes `to_name` in `to` another name of the file `name` of this directory
    /// (`linkat`); with `follow`, of what a link there leads to.
    ///
    /// # Errors
    ///
    /// The system's error: `to_name` exists (`AlreadyExists`), `name` does not
    /// (`NotFound`), the two are on different file systems (`CrossesDevices`), the file
    /// may not be linked (`EPERM`: a directory, protected links), or has too many links.
    pub fn hard_link_at(
        &self,
        name: &CStr,
        to: &Dir,
        to_name: &CStr,
        follow: bool,
    ) -> io::Result<()> {
        let flags = if follow {
            AtFlags::SYMLINK_FOLLOW
        } else {
            AtFlags::empty()
        };
        rfs::linkat(self, name, to, to_name, flags).map_err(cvt)
    }

    /// Makes the fifo, socket or device `name` (`mknodat`): `mode` holds its type and
    /// permission bits (less the umask), `rdev` the device it stands for.
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`), a device made without the
    /// privilege (`EPERM`), this directory may not be written (`PermissionDenied`), a
    /// mode of no such type (`InvalidInput`).
    pub fn make_node_at(&self, name: &CStr, mode: u32, rdev: u64) -> io::Result<()> {
        let kind = rfs::FileType::from_raw_mode(mode);
        rfs::mknodat(self, name, kind, Mode::from_raw_mode(mode & 0o7777), rdev).map_err(cvt)
    }

    /// Sets the owner and group of the entry `name` (`fchownat` with
    /// `AT_SYMLINK_NOFOLLOW`: a link's own); `None` leaves one as it is.
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), the change is not allowed
    /// (`EPERM`: not root, or a group this process is not in).
    pub fn set_owner_at(&self, name: &CStr, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        let (u, g) = ids(uid, gid);
        rfs::chownat(self, name, u, g, AtFlags::SYMLINK_NOFOLLOW).map_err(cvt)
    }

    /// Sets the times of the entry `name` to the nanosecond (`utimensat` with
    /// `AT_SYMLINK_NOFOLLOW`: a link's own).
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), not its owner
    /// (`EPERM`), a read-only file system.
    pub fn set_times_at(&self, name: &CStr, times: &FileTimes) -> io::Result<()> {
        rfs::utimensat(self, name, &timestamps(times), AtFlags::SYMLINK_NOFOLLOW).map_err(cvt)
    }

    /// Sets the permission bits of the entry `name`, which is not a symbolic link: it is
    /// pinned by an `O_PATH | O_NOFOLLOW` handle and changed through that handle, so a
    /// link put in its place is never followed (`fchmodat2` with `AT_SYMLINK_NOFOLLOW`
    /// would do the same from Linux 6.6). For entries that are not opened to be copied:
    /// fifos, sockets, devices.
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), is a symbolic link
    /// (`InvalidInput`), not its owner (`EPERM`); `Unsupported` without `/proc`.
    pub fn set_mode_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(self, name, flags, Mode::empty()).map_err(cvt)?;
        let st = rfs::fstat(&fd).map_err(cvt)?;
        if rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::Symlink {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a symbolic link has no mode of its own",
            ));
        }
        let link = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
        match rfs::chmod(link, Mode::from_raw_mode(mode & 0o7777)) {
            Err(Errno::NOENT) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "/proc is not mounted, and the mode of an entry that is not opened is \
                 changed through it",
            )),
            r => r.map_err(cvt),
        }
    }

    /// Sets the owner and group of this directory (`fchown`); `None` leaves one as it is.
    ///
    /// # Errors
    ///
    /// The system's error: the change is not allowed (`EPERM`).
    pub fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        let (u, g) = ids(uid, gid);
        rfs::fchown(self, u, g).map_err(cvt)
    }

    /// Sets the times of this directory to the nanosecond (`futimens`).
    ///
    /// # Errors
    ///
    /// The system's error: not its owner (`EPERM`), a read-only file system.
    pub fn set_times(&self, times: &FileTimes) -> io::Result<()> {
        rfs::futimens(self, &timestamps(times)).map_err(cvt)
    }

    /// The names of this directory's extended attributes, each followed by a NUL
    /// (`flistxattr`); empty where the file system has none.
    ///
    /// # Errors
    ///
    /// The system's error: the file system does not support them (`Unsupported`).
    pub fn xattr_names(&self) -> io::Result<Vec<u8>> {
        list_xattrs(self.as_fd())
    }

    /// The value of this directory's extended attribute `name` (`fgetxattr`).
    ///
    /// # Errors
    ///
    /// The system's error: no such attribute (`ENODATA`), not allowed to read it.
    pub fn xattr(&self, name: &CStr) -> io::Result<Vec<u8>> {
        get_xattr(self.as_fd(), name)
    }

    /// Sets this directory's extended attribute `name` (`fsetxattr`).
    ///
    /// # Errors
    ///
    /// The system's error: not supported by the file system (`Unsupported`), not
    /// allowed (`EPERM`: a `trusted.*` name without the privilege), no space.
    pub fn set_xattr(&self, name: &CStr, value: &[u8]) -> io::Result<()> {
        set_xattr(self.as_fd(), name, value)
    }

    /// The names of the extended attributes of the entry `name` of this directory, each
    /// followed by a NUL (`llistxattr`; `listxattr` with `follow`): for what is not
    /// opened to be copied (links, fifos, sockets, devices). A symbolic link cannot be
    /// opened, so the entry is reached by a path through this handle
    /// (`/proc/self/fd/N/name`), its last component never followed without `follow`.
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`); `Unsupported` without
    /// `/proc` or where the file system has no extended attributes.
    pub fn xattr_names_at(&self, name: &CStr, follow: bool) -> io::Result<Vec<u8>> {
        let path = self.proc_path(name)?;
        sized_read(
            || {
                let n = if follow {
                    rfs::listxattr_query(path.as_c_str())
                } else {
                    rfs::llistxattr_query(path.as_c_str())
                };
                n.map_err(|e| proc_err(e, &path))
            },
            |buf| {
                if follow {
                    rfs::listxattr(path.as_c_str(), buf)
                } else {
                    rfs::llistxattr(path.as_c_str(), buf)
                }
            },
        )
    }

    /// The value of the extended attribute `attr` of the entry `name` (`lgetxattr`;
    /// `getxattr` with `follow`), reached as [`Dir::xattr_names_at`] says.
    ///
    /// # Errors
    ///
    /// The system's error: no such attribute (`ENODATA`), not allowed to read it;
    /// `Unsupported` without `/proc`.
    pub fn xattr_at(&self, name: &CStr, attr: &CStr, follow: bool) -> io::Result<Vec<u8>> {
        let path = self.proc_path(name)?;
        sized_read(
            || {
                let n = if follow {
                    rfs::getxattr_query(path.as_c_str(), attr)
                } else {
                    rfs::lgetxattr_query(path.as_c_str(), attr)
                };
                n.map_err(|e| proc_err(e, &path))
            },
            |buf| {
                if follow {
                    rfs::getxattr(path.as_c_str(), attr, buf)
                } else {
                    rfs::lgetxattr(path.as_c_str(), attr, buf)
                }
            },
        )
    }

    /// Sets the extended attribute `attr` of the entry `name` of this directory, a
    /// symbolic link's own (`lsetxattr`), reached as [`Dir::xattr_names_at`] says: a
    /// link put in its place is never followed.
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), not allowed (`EPERM`:
    /// a `user.*` name on a link or a fifo, a `trusted.*` name without the privilege),
    /// not supported (`Unsupported`, also without `/proc`), no space.
    pub fn set_xattr_at(&self, name: &CStr, attr: &CStr, value: &[u8]) -> io::Result<()> {
        let path = self.proc_path(name)?;
        rfs::lsetxattr(path.as_c_str(), attr, value, rfs::XattrFlags::empty())
            .map_err(|e| proc_err(e, &path))
    }

    /// `/proc/self/fd/N/name`: the entry `name` of this directory by a path that
    /// resolves through this handle (`name` is one component: it has no `/`).
    fn proc_path(&self, name: &CStr) -> io::Result<std::ffi::CString> {
        let bytes = name.to_bytes();
        if bytes.is_empty() || bytes.contains(&b'/') {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let fd = std::os::fd::AsRawFd::as_raw_fd(&self.as_fd());
        let mut path = format!("/proc/self/fd/{fd}/").into_bytes();
        path.extend_from_slice(bytes);
        std::ffi::CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }
}

/// Set once `openat2` is found missing (`ENOSYS`, Linux before 5.6, or refused by a
/// sandbox): [`Dir::open_dir_beneath`] then opens one name at a time.
static NO_OPENAT2: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Dir {
    /// Opens the directory at `path`, names separated by `/`, below this one, never
    /// leaving it and never following a link on the way: `openat2` with
    /// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (one call however
    /// deep), or, where the kernel has no `openat2`, one `openat(O_NOFOLLOW)` per name.
    /// A directory of the path swapped for a link while it is resolved fails the call;
    /// a directory moved into its place is the caller's to notice (by its identity).
    ///
    /// # Errors
    ///
    /// The system's error: a name on the way does not exist (`NotFound`), is not a
    /// directory, is a link (`ELOOP`, or `EXDEV` for `..` or an absolute path, which
    /// would leave this directory: `InvalidInput` without `openat2`).
    pub fn open_dir_beneath(&self, path: &CStr) -> io::Result<Dir> {
        use std::sync::atomic::Ordering;
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            let how = rfs::ResolveFlags::BENEATH
                | rfs::ResolveFlags::NO_SYMLINKS
                | rfs::ResolveFlags::NO_MAGICLINKS;
            // EAGAIN: a rename elsewhere raced the lookup; asked again a few times.
            for _ in 0..4 {
                let flags = super::DIR_FLAGS | OFlags::NOFOLLOW;
                match rfs::openat2(self, path, flags, Mode::empty(), how) {
                    Ok(fd) => return Ok(Dir { fd }),
                    Err(Errno::AGAIN) => continue,
                    Err(Errno::NOSYS | Errno::PERM) => {
                        NO_OPENAT2.store(true, Ordering::Relaxed);
                        break;
                    }
                    Err(e) => return Err(cvt(e)),
                }
            }
        }
        self.open_dir_by_names(path)
    }

    /// [`Dir::open_dir_beneath`] without `openat2`: `openat(O_NOFOLLOW)` for each name.
    fn open_dir_by_names(&self, path: &CStr) -> io::Result<Dir> {
        crate::sys::open_by_names(self, path, Dir::open_at)
    }
}

/// An error of a call through `/proc/self/fd/N/name`: where `/proc` is not mounted
/// (`/proc/self/fd` itself missing), `Unsupported`.
fn proc_err(e: Errno, path: &CStr) -> io::Error {
    if e == Errno::NOENT && !std::path::Path::new("/proc/self/fd").exists() {
        let _ = path;
        return io::Error::new(
            io::ErrorKind::Unsupported,
            "/proc is not mounted, and the extended attributes of an entry that is not \
             opened are reached through it",
        );
    }
    cvt(e)
}

impl File {
    /// Metadata of the open file (`statx` on the handle).
    ///
    /// # Errors
    ///
    /// The system's error (an I/O error of the file system).
    pub fn stat(&self, mask: StatMask) -> io::Result<Metadata> {
        super::stat_impl(self.fd.as_fd(), c"", AtFlags::EMPTY_PATH, mask)
    }

    /// Sets the permission bits (`fchmod`), set-user-ID, set-group-ID and sticky bits
    /// included.
    ///
    /// # Errors
    ///
    /// The system's error: not the owner (`EPERM`), a read-only file system.
    pub fn set_permissions(&self, mode: u32) -> io::Result<()> {
        rfs::fchmod(&self.fd, Mode::from_raw_mode(mode & 0o7777)).map_err(cvt)
    }

    /// Sets the owner and group (`fchown`); `None` leaves one as it is.
    ///
    /// # Errors
    ///
    /// The system's error: the change is not allowed (`EPERM`).
    pub fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        let (u, g) = ids(uid, gid);
        rfs::fchown(&self.fd, u, g).map_err(cvt)
    }

    /// Sets the times to the nanosecond (`futimens`).
    ///
    /// # Errors
    ///
    /// The system's error: not the owner (`EPERM`), a read-only file system.
    pub fn set_times(&self, times: &FileTimes) -> io::Result<()> {
        rfs::futimens(&self.fd, &timestamps(times)).map_err(cvt)
    }

    /// Sets the size (`ftruncate`): what lies past it is cut off, what it adds is a hole.
    ///
    /// # Errors
    ///
    /// The system's error: no space, a file too large for the file system.
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        rfs::ftruncate(&self.fd, len).map_err(cvt)
    }

    /// The names of the file's extended attributes, each followed by a NUL
    /// (`flistxattr`).
    ///
    /// # Errors
    ///
    /// The system's error: the file system does not support them (`Unsupported`).
    pub fn xattr_names(&self) -> io::Result<Vec<u8>> {
        list_xattrs(self.fd.as_fd())
    }

    /// The value of the extended attribute `name` (`fgetxattr`).
    ///
    /// # Errors
    ///
    /// The system's error: no such attribute (`ENODATA`), not allowed to read it.
    pub fn xattr(&self, name: &CStr) -> io::Result<Vec<u8>> {
        get_xattr(self.fd.as_fd(), name)
    }

    /// Sets the extended attribute `name` (`fsetxattr`).
    ///
    /// # Errors
    ///
    /// The system's error: not supported by the file system (`Unsupported`), not
    /// allowed (`EPERM`), no space.
    pub fn set_xattr(&self, name: &CStr, value: &[u8]) -> io::Result<()> {
        set_xattr(self.fd.as_fd(), name, value)
    }
}

fn list_xattrs(fd: BorrowedFd<'_>) -> io::Result<Vec<u8>> {
    sized_read(
        || match rfs::flistxattr_query(fd) {
            // No extended attributes here: none to list.
            Err(Errno::OPNOTSUPP) => Ok(0),
            n => n.map_err(cvt),
        },
        |buf| rfs::flistxattr(fd, buf),
    )
}

fn get_xattr(fd: BorrowedFd<'_>, name: &CStr) -> io::Result<Vec<u8>> {
    sized_read(
        || rfs::fgetxattr_query(fd, name).map_err(cvt),
        |buf| rfs::fgetxattr(fd, name, buf),
    )
}

/// A list of extended attributes' names or an attribute's value, in two calls: its
/// size (`query`; 0: nothing to read), then into a buffer of that size (`read`); asked
/// again where it grew in between (`ERANGE`).
fn sized_read(
    query: impl Fn() -> io::Result<usize>,
    read: impl Fn(&mut [u8]) -> rustix::io::Result<usize>,
) -> io::Result<Vec<u8>> {
    loop {
        let n = query()?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; n];
        match read(&mut buf[..]) {
            Ok(len) => {
                buf.truncate(len);
                return Ok(buf);
            }
            // Grown meanwhile: ask its size again.
            Err(Errno::RANGE) => continue,
            Err(e) => return Err(cvt(e)),
        }
    }
}

fn set_xattr(fd: BorrowedFd<'_>, name: &CStr, value: &[u8]) -> io::Result<()> {
    rfs::fsetxattr(fd, name, value, rfs::XattrFlags::empty()).map_err(cvt)
}

/// Makes the empty file `dst` share every block of `src` (`FICLONE`): a copy with no
/// data moved, where the file system can (Btrfs, XFS, bcachefs).
///
/// # Errors
///
/// The system's refusal: `EOPNOTSUPP` or `EINVAL` (the file system cannot),
/// `EXDEV` (two file systems); any other error of the call.
pub fn reflink(src: &File, dst: &File) -> io::Result<()> {
    rfs::ioctl_ficlone(&dst.fd, &src.fd).map_err(cvt)
}

/// The biggest piece `copy_file_range` is asked for at once: small enough for a
/// progress display to move while a large file is copied, large enough that the
/// calls cost nothing beside the data (the kernel caps a call at about 2 GiB anyway).
const PIECE: usize = 64 << 20;

/// The buffer of the read/write fallback.
const BUF: usize = 256 * 1024;

/// Copies the data of `src` (`size` bytes, as its `statx` said; 0 for a file that
/// says 0 but may hold data, as in `/proc`, which is then read to its end) into the
/// empty file `dst`, from offset 0 on both, as `how` says:
///
/// - reflink: `FICLONE` first (the whole file shares its blocks, no data moves) with
///   [`Reflink::Auto`] and [`Reflink::Always`] (which fails where it is refused);
/// - sparse: with [`Sparse::Auto`], a file with fewer blocks than its size asks for
///   is copied extent by extent (`SEEK_DATA`, `SEEK_HOLE`), its holes left holes and
///   its size set by `ftruncate`; [`Sparse::Always`] also leaves a hole for each run
///   of zeros read (read/write); [`Sparse::Never`] writes every byte;
/// - data: `copy_file_range` (a reflink or server-side copy where the file system can),
///   `read`/`write` where it is refused (`EXDEV`, `EINVAL`, `ENOSYS`, `EOPNOTSUPP`,
///   `EPERM` in a sandbox), or where a file's reported size is 0.
///
/// Returns the bytes copied (the file's size).
///
/// # Errors
///
/// The system's error for a read or a write (`EIO`, no space), or, with
/// [`Reflink::Always`], the refusal of `FICLONE`.
pub fn copy_data(
    src: &File,
    dst: &File,
    size: u64,
    blocks: u64,
    how: &DataCopy,
) -> io::Result<u64> {
    copy_data_counted(src, dst, size, blocks, how, &AtomicU64::new(0))
}

/// [`copy_data`], adding to `moved` as the data moves (each piece of at most
/// 64 MiB; a hole when the copy passes it), for a progress display: once it returns,
/// it has added the bytes it returns, no more (less on an error).
///
/// # Errors
///
/// As [`copy_data`].
pub fn copy_data_counted(
    src: &File,
    dst: &File,
    size: u64,
    blocks: u64,
    how: &DataCopy,
    moved: &AtomicU64,
) -> io::Result<u64> {
    let mut m = Moved { to: moved, sum: 0 };
    let n = copy_counted(src, dst, size, blocks, how, &mut m)?;
    if n > m.sum {
        m.add(n - m.sum);
    }
    Ok(n)
}

/// Bytes moved so far: added to a shared counter as they move.
struct Moved<'a> {
    to: &'a AtomicU64,
    sum: u64,
}

impl Moved<'_> {
    fn add(&mut self, n: u64) {
        self.sum += n;
        self.to.fetch_add(n, Ordering::Relaxed);
    }
}

fn copy_counted(
    src: &File,
    dst: &File,
    size: u64,
    blocks: u64,
    how: &DataCopy,
    m: &mut Moved<'_>,
) -> io::Result<u64> {
    if how.reflink != Reflink::Never && size > 0 {
        match rfs::ioctl_ficlone(&dst.fd, &src.fd) {
            Ok(()) => return Ok(size),
            Err(e) if how.reflink == Reflink::Always => return Err(cvt(e)),
            Err(_) => {}
        }
    }
    if size == 0 {
        // /proc and the like: a size of 0 says nothing; read to the end.
        return read_write(src, dst, 0, u64::MAX, false, m);
    }
    match how.sparse {
        Sparse::Always => {
            let end = read_write(src, dst, 0, u64::MAX, true, m)?;
            dst.set_len(end)?;
            Ok(end)
        }
        Sparse::Auto if blocks.saturating_mul(512) < size => copy_extents(src, dst, size, m),
        _ => copy_range(src, dst, 0, size, m),
    }
}

/// Copies the data extents of `src` below `size` (found with `SEEK_DATA` and
/// `SEEK_HOLE`), leaving its holes holes, and sets the size.
fn copy_extents(src: &File, dst: &File, size: u64, m: &mut Moved<'_>) -> io::Result<u64> {
    let mut pos = 0u64;
    while pos < size {
        let data = match rfs::seek(&src.fd, SeekFrom::Data(pos)) {
            Ok(d) => d,
            // No data past `pos`: the rest is a hole.
            Err(Errno::NXIO) => break,
            // No SEEK_DATA here: every byte.
            Err(Errno::INVAL) | Err(Errno::OPNOTSUPP) if pos == 0 => {
                return copy_range(src, dst, 0, size, m);
            }
            Err(e) => return Err(cvt(e)),
        };
        if data >= size {
            break;
        }
        let hole = rfs::seek(&src.fd, SeekFrom::Hole(data))
            .map_err(cvt)?
            .min(size);
        copy_range(src, dst, data, hole - data, m)?;
        pos = hole;
    }
    dst.set_len(size)?;
    Ok(size)
}

/// Copies `len` bytes at `off` in `src` to the same offset in `dst`: `copy_file_range`,
/// or `read`/`write` where it is refused. A file that ends sooner (truncated meanwhile)
/// ends the copy.
fn copy_range(src: &File, dst: &File, off: u64, len: u64, m: &mut Moved<'_>) -> io::Result<u64> {
    let (mut off_in, mut off_out) = (off, off);
    let end = off + len;
    while off_in < end {
        let want = usize::try_from(end - off_in).unwrap_or(PIECE).min(PIECE);
        match rfs::copy_file_range(
            &src.fd,
            Some(&mut off_in),
            &dst.fd,
            Some(&mut off_out),
            want,
        ) {
            Ok(0) => break,
            Ok(n) => m.add(n as u64),
            Err(Errno::INTR) => {}
            Err(Errno::XDEV | Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP | Errno::PERM)
            | Err(Errno::BADF | Errno::TXTBSY) => {
                let done = read_write(src, dst, off_in, end - off_in, false, m)?;
                return Ok(off_in - off + done);
            }
            Err(e) => return Err(cvt(e)),
        }
    }
    Ok(off_in - off)
}

/// Copies up to `len` bytes from offset `off` by `read` and `write` (`pread`,
/// `pwrite`); with `holes`, a block of zeros is skipped (a hole, once the size is
/// set). Returns the bytes read (the end of the file, when it came first).
fn read_write(
    src: &File,
    dst: &File,
    off: u64,
    len: u64,
    holes: bool,
    m: &mut Moved<'_>,
) -> io::Result<u64> {
    let mut buf = vec![0u8; BUF];
    let mut pos = off;
    let end = off.saturating_add(len);
    while pos < end {
        let want = usize::try_from(end - pos).unwrap_or(BUF).min(BUF);
        let n = match rustix::io::pread(&src.fd, &mut buf[..want], pos) {
            Ok(0) => break,
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            // A file of /proc that does not read at an offset: read in sequence.
            Err(Errno::SPIPE) if pos == 0 => return stream(src, dst, &mut buf, m),
            Err(e) => return Err(cvt(e)),
        };
        if holes {
            write_data_at(dst, &buf[..n], pos)?;
        } else {
            write_all_at(dst, &buf[..n], pos)?;
        }
        m.add(n as u64);
        pos += n as u64;
    }
    Ok(pos - off)
}

/// Copies what `read` gives until its end, by `read` and `write`.
fn stream(src: &File, dst: &File, buf: &mut [u8], m: &mut Moved<'_>) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let n = match rustix::io::read(&src.fd, &mut *buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(cvt(e)),
        };
        write_all_at(dst, &buf[..n], total)?;
        m.add(n as u64);
        total += n as u64;
    }
}

/// The unit in which [`Sparse::Always`] finds zeros to leave as holes: a block of the
/// usual file systems.
const HOLE_BLOCK: usize = 4096;

/// Writes the blocks of `data` (at `at`) that are not all zeros: the others are left
/// as holes.
fn write_data_at(dst: &File, data: &[u8], at: u64) -> io::Result<()> {
    let mut start = None;
    let mut i = 0;
    while i < data.len() {
        let end = (i + HOLE_BLOCK).min(data.len());
        let zeros = data[i..end].iter().all(|&b| b == 0);
        match (zeros, start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                write_all_at(dst, &data[s..i], at + s as u64)?;
                start = None;
            }
            _ => {}
        }
        i = end;
    }
    if let Some(s) = start {
        write_all_at(dst, &data[s..], at + s as u64)?;
    }
    Ok(())
}

fn write_all_at(dst: &File, mut data: &[u8], mut at: u64) -> io::Result<()> {
    while !data.is_empty() {
        match rustix::io::pwrite(&dst.fd, data, at) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => {
                data = &data[n..];
                at += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(cvt(e)),
        }
    }
    Ok(())
}

/// The process's file mode creation mask, read from `/proc/self/status` (Linux 4.7
/// on) so that no other thread sees it changed; where that does not say, set and
/// restored (`umask`).
pub fn umask() -> u32 {
    let from_proc = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let v = s.lines().find_map(|l| l.strip_prefix("Umask:"))?;
            u32::from_str_radix(v.trim(), 8).ok()
        });
    from_proc.unwrap_or_else(|| {
        let old = rustix::process::umask(Mode::from_raw_mode(0o022));
        rustix::process::umask(old);
        old.bits()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileExt, MetadataExt};

    fn blocks(p: &std::path::Path) -> u64 {
        std::fs::metadata(p).unwrap().blocks()
    }

    #[test]
    fn holes_are_kept_and_data_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        let f = std::fs::File::create(&src).unwrap();
        // A hole at the start, data in the middle, a hole at the end.
        f.write_all_at(&[7u8; 4096], 1 << 20).unwrap();
        f.set_len(3 << 20).unwrap();
        drop(f);
        let dir = Dir::open(tmp.path()).unwrap();
        for (name, sparse) in [
            (c"auto", Sparse::Auto),
            (c"never", Sparse::Never),
            (c"always", Sparse::Always),
        ] {
            let s = dir.open_file_at(c"src", false).unwrap();
            let m = s.stat(StatMask::SIZE | StatMask::BLOCKS).unwrap();
            let d = dir.create_file_at(name, 0o600).unwrap();
            let how = DataCopy {
                reflink: Reflink::Never,
                sparse,
            };
            assert_eq!(copy_data(&s, &d, m.size, m.blocks, &how).unwrap(), 3 << 20);
            let copy = tmp.path().join(name.to_str().unwrap());
            assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&src).unwrap());
            if sparse == Sparse::Never {
                assert!(blocks(&copy) >= (3 << 20) / 512, "{name:?}: holes filled");
            } else {
                assert_eq!(blocks(&copy), blocks(&src), "{name:?}: holes kept");
            }
        }
    }

    #[test]
    fn open_dir_beneath_never_leaves_the_directory_nor_follows_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("top/a/b/c")).unwrap();
        std::fs::create_dir(tmp.path().join("outside")).unwrap();
        std::os::unix::fs::symlink("a", tmp.path().join("top/link")).unwrap();
        std::os::unix::fs::symlink("../outside", tmp.path().join("top/a/out")).unwrap();
        let top = Dir::open(&tmp.path().join("top")).unwrap();
        let id = |d: &Dir| {
            let m = d.stat(StatMask::ID).unwrap();
            (m.dev, m.ino)
        };
        let want = id(&Dir::open(&tmp.path().join("top/a/b/c")).unwrap());
        for open in [Dir::open_dir_beneath, Dir::open_dir_by_names] {
            assert_eq!(id(&open(&top, c"a/b/c").unwrap()), want);
            assert_eq!(id(&open(&top, c"a//b/./c/").unwrap()), want);
            for bad in [
                c"link/b",
                c"a/out",
                c"../top/a",
                c"a/../../outside",
                c"/tmp",
            ] {
                assert!(open(&top, bad).is_err(), "{bad:?} was opened");
            }
        }
    }

    #[test]
    fn copy_of_a_proc_file_reads_it_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let proc_dir = Dir::open(std::path::Path::new("/proc/self")).unwrap();
        let s = proc_dir.open_file_at(c"status", false).unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        let d = dir.create_file_at(c"status", 0o600).unwrap();
        let n = copy_data(&s, &d, 0, 0, &DataCopy::default()).unwrap();
        assert!(n > 100, "{n} bytes");
    }

    #[test]
    fn copy_entries_made_relative_to_the_handle_never_through_links() {
        let tmp = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/nonexistent", tmp.path().join("l")).unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        assert_eq!(
            dir.create_file_at(c"l", 0o600).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(dir.open_file_write_at(c"l").is_err());
        dir.make_dir_at(c"d", 0o700).unwrap();
        dir.symlink_at(c"d", c"l2").unwrap();
        assert!(dir.set_mode_at(c"l2", 0o777).is_err());
        dir.make_node_at(c"p", 0o010644, 0).unwrap();
        dir.set_mode_at(c"p", 0o640).unwrap();
        let m = dir.stat_at(c"p", StatMask::MODE, false).unwrap();
        assert_eq!(m.mode, 0o010640);
        let t = FileTimes {
            accessed: (1, 2),
            modified: (1_000_000_000, 123_456_789),
        };
        dir.set_times_at(c"l2", &t).unwrap();
        let m = dir.stat_at(c"l2", StatMask::MTIME, false).unwrap();
        assert_eq!((m.mtime, m.mtime_nsec), t.modified);
        dir.hard_link_at(c"p", &dir, c"p2", false).unwrap();
        let m = dir.stat_at(c"p2", StatMask::NLINK, false).unwrap();
        assert_eq!(m.nlink, 2);
        let f = dir.create_file_at(c"f", 0o600).unwrap();
        match f.set_xattr(c"user.ftw", b"v") {
            Ok(()) => {
                assert_eq!(f.xattr_names().unwrap(), b"user.ftw\0");
                assert_eq!(f.xattr(c"user.ftw").unwrap(), b"v");
            }
            Err(e) => eprintln!("no user.* xattrs here ({e}): not checked"),
        }
        assert!(umask() <= 0o777);
    }
}
