//! The one module that talks to the operating system.
//!
//! Everything above `sys` works through an owned directory handle, [`Dir`], and names
//! relative to it: a directory is opened relative to its parent ([`Dir::open_at`]), its
//! entries are read into a caller-owned [`DirBuf`] with no allocation per entry
//! ([`Dir::read_entries`]), metadata is asked for relative to the directory with only the
//! fields needed ([`Dir::stat_at`]), and entries are removed relative to it
//! ([`Dir::unlink_at`], [`Dir::remove_dir_at`]). No full path is ever resolved from the
//! root, so depth and `PATH_MAX` are no obstacle.
//!
//! On Linux this is a thin layer over `rustix` (`openat`, `getdents64`, `statx`,
//! `unlinkat`; for a copy `mkdirat`, `copy_file_range`, `FICLONE` and the rest in
//! `linux/copy.rs`), through its safe API only: `linux.rs` has no `unsafe` code. On
//! Windows, `windows.rs` does the same through `windows-sys` (`NtCreateFile` relative
//! to the parent's handle, batch reads with `GetFileInformationByHandleEx`,
//! `GetFileAttributesExW` with a handle-based fallback, POSIX-semantics deletion):
//! raw bindings, called in `unsafe` blocks, each with its SAFETY comment. That module
//! is the crate's only `unsafe` code: it alone lifts the crate's
//! `#![deny(unsafe_code)]`, so the compiler holds every other module to it. Every
//! other target compiles a portable fallback on `std::fs` with the same API; it is
//! correct but not fast.
//!
//! Only what a walk, a removal, a disk-usage count or a copy needs is here: nothing runs
//! before `main` in a program that links the crate, and no process-wide setting (a
//! resource limit, a standard descriptor) is changed by it.
//!
//! Names are bytes: exactly the bytes on disk on Unix; on Windows, the UTF-16 names as
//! UTF-8, an unpaired surrogate escaped as the text `\u{d800}` ([`os_to_bytes`]).
//!
//! # Example
//!
//! ```
//! use ftw::sys::{Dir, DirBuf, FileType};
//!
//! let tmp = tempfile::tempdir()?;
//! std::fs::create_dir(tmp.path().join("sub"))?;
//! std::fs::write(tmp.path().join("sub/file"), b"x")?;
//!
//! let root = Dir::open(tmp.path())?;
//! let sub = root.open_at(c"sub")?;
//! let mut buf = DirBuf::new();
//! let mut names = Vec::new();
//! sub.read_entries(&mut buf, |e| names.push((e.name().to_bytes().to_vec(), e.file_type())))?;
//! assert_eq!(names, vec![(b"file".to_vec(), FileType::File)]);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::CStr;

// `--cfg ftw_portable` builds the portable fallback on Linux too, so that it can be
// checked and tested here: RUSTFLAGS="--cfg ftw_portable" cargo test -p ftw
#[cfg(all(target_os = "linux", not(ftw_portable)))]
mod linux;
#[cfg(all(target_os = "linux", not(ftw_portable)))]
pub use linux::*;

// Copying where there is no native backend for it: std::fs, by path.
#[cfg(any(not(target_os = "linux"), ftw_portable))]
mod std_copy;
#[cfg(any(not(target_os = "linux"), ftw_portable))]
pub use std_copy::{File, copy_data, copy_data_counted, reflink, umask};

#[cfg(windows)]
mod names;
#[cfg(all(windows, not(ftw_portable)))]
#[allow(unsafe_code)]
mod windows;
#[cfg(all(windows, not(ftw_portable), test))]
pub(crate) use windows::seam;
#[cfg(all(windows, not(ftw_portable)))]
pub use windows::*;
#[cfg(all(windows, not(ftw_portable), test))]
mod windows_tests;

#[cfg(any(not(any(target_os = "linux", windows)), ftw_portable))]
mod portable;
#[cfg(any(not(any(target_os = "linux", windows)), ftw_portable))]
pub use portable::*;

/// A path or name as the bytes ftw works with: on Unix, exactly its bytes; on Windows,
/// its UTF-16 as UTF-8, an unpaired surrogate written as the text `\u{d800}` (four
/// lower-case hex digits), which [`bytes_to_os`] reads back. No Windows name holds a
/// `\`, so a name so escaped opens the same file again; in a whole path, where `\` is
/// also the separator, a component spelled `u{d800}` after a `\` would be misread
/// (ftw joins the paths it makes with `/`). Elsewhere, lossily.
///
/// ```
/// let p = std::ffi::OsStr::new("dir/caf\u{e9}");
/// assert_eq!(ftw::sys::os_to_bytes(p), "dir/caf\u{e9}".as_bytes());
/// assert_eq!(ftw::sys::bytes_to_os(&ftw::sys::os_to_bytes(p)), p);
/// ```
pub fn os_to_bytes(s: &std::ffi::OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        s.as_bytes().to_vec()
    }
    #[cfg(windows)]
    {
        names::os_to_bytes(s)
    }
    #[cfg(not(any(unix, windows)))]
    {
        s.to_string_lossy().into_owned().into_bytes()
    }
}

/// The inverse of [`os_to_bytes`] (off Unix, bytes that are no UTF-8 are replaced).
pub fn bytes_to_os(b: &[u8]) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::ffi::OsString::from_vec(b.to_vec())
    }
    #[cfg(windows)]
    {
        names::bytes_to_os(b)
    }
    #[cfg(not(any(unix, windows)))]
    {
        std::ffi::OsString::from(String::from_utf8_lossy(b).into_owned())
    }
}

/// The size of a [`DirBuf`] made by [`DirBuf::new`]: 64 KiB, enough for most
/// directories in one `getdents64` call.
pub const DEFAULT_DIR_BUF: usize = 64 * 1024;

/// The type of a file, as a directory entry (`d_type`) or `stat` tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A block device.
    BlockDevice,
    /// A character device.
    CharDevice,
    /// A named pipe.
    Fifo,
    /// A socket.
    Socket,
    /// The file system did not say (`DT_UNKNOWN`): ask [`Dir::stat_at`].
    Unknown,
}

impl FileType {
    /// Every type, in a fixed order: a type's place in it is a small number to store it
    /// by (as records sent between processes do).
    ///
    /// ```
    /// use ftw::sys::FileType;
    /// let n = FileType::ALL.iter().position(|&t| t == FileType::Fifo).unwrap();
    /// assert_eq!(FileType::ALL[n], FileType::Fifo);
    /// ```
    pub const ALL: [FileType; 8] = [
        FileType::File,
        FileType::Dir,
        FileType::Symlink,
        FileType::BlockDevice,
        FileType::CharDevice,
        FileType::Fifo,
        FileType::Socket,
        FileType::Unknown,
    ];

    /// The type encoded in the `S_IFMT` bits of a `st_mode`.
    ///
    /// ```
    /// use ftw::sys::FileType;
    /// assert_eq!(FileType::from_mode(0o040755), FileType::Dir);
    /// assert_eq!(FileType::from_mode(0o100644), FileType::File);
    /// ```
    pub fn from_mode(mode: u32) -> FileType {
        match mode & 0o170000 {
            0o100000 => FileType::File,
            0o040000 => FileType::Dir,
            0o120000 => FileType::Symlink,
            0o060000 => FileType::BlockDevice,
            0o020000 => FileType::CharDevice,
            0o010000 => FileType::Fifo,
            0o140000 => FileType::Socket,
            _ => FileType::Unknown,
        }
    }

    /// Whether this is [`FileType::Dir`].
    pub fn is_dir(self) -> bool {
        self == FileType::Dir
    }

    /// Whether this is [`FileType::Symlink`].
    pub fn is_symlink(self) -> bool {
        self == FileType::Symlink
    }
}

/// Which fields [`Dir::stat_at`] must fill. The kernel may skip the work for the others
/// (`statx` mask); the file type is always filled. Device and inode are filled on
/// Linux always, on Windows only with [`StatMask::ID`] (or the fields that need a
/// handle anyway): ask for it where the identity matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct StatMask(u8);

impl StatMask {
    /// The type only (and device and inode where they come free, as on Linux): the
    /// cheapest question.
    pub const TYPE: StatMask = StatMask(0);
    /// Also the device and inode: the file's identity. On Windows (volume serial number
    /// and file id) they need a handle; on Linux they always come.
    pub const ID: StatMask = StatMask(64);
    /// Also the size in bytes.
    pub const SIZE: StatMask = StatMask(1);
    /// Also the allocated blocks (512-byte units).
    pub const BLOCKS: StatMask = StatMask(2);
    /// Also the link count.
    pub const NLINK: StatMask = StatMask(4);
    /// Also the permission bits.
    pub const MODE: StatMask = StatMask(8);
    /// Also the time of the last modification.
    pub const MTIME: StatMask = StatMask(16);
    /// Also the owner and group.
    pub const OWNER: StatMask = StatMask(32);
    /// Also the times of the last access and of the last change of status (Unix; not
    /// filled on Windows).
    pub const TIMES: StatMask = StatMask(128);
    /// Every field of [`Metadata`].
    pub const ALL: StatMask = StatMask(255);

    /// Both masks' fields (as `|`, in a `const`).
    ///
    /// ```
    /// use ftw::sys::StatMask;
    /// const ASK: StatMask = StatMask::SIZE.union(StatMask::BLOCKS);
    /// assert_eq!(ASK, StatMask::SIZE | StatMask::BLOCKS);
    /// ```
    pub const fn union(self, other: StatMask) -> StatMask {
        StatMask(self.0 | other.0)
    }

    /// Whether every field of `other` is in `self`.
    pub fn contains(self, other: StatMask) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for StatMask {
    type Output = StatMask;
    fn bitor(self, rhs: StatMask) -> StatMask {
        StatMask(self.0 | rhs.0)
    }
}

/// What [`Dir::stat_at`] and [`Dir::stat`] return. Fields not asked for in the
/// [`StatMask`] may be zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Metadata {
    /// The file's type.
    pub file_type: Option<FileType>,
    /// The device the file is on (Windows: the volume serial number; with
    /// [`StatMask::ID`]).
    pub dev: u64,
    /// The inode number (Windows: the file id; with [`StatMask::ID`]).
    pub ino: u64,
    /// Size in bytes (with [`StatMask::SIZE`]).
    pub size: u64,
    /// Allocated 512-byte blocks (with [`StatMask::BLOCKS`]).
    pub blocks: u64,
    /// Hard link count (with [`StatMask::NLINK`]).
    pub nlink: u64,
    /// Permission and type bits (with [`StatMask::MODE`]).
    pub mode: u32,
    /// The last modification, in seconds since the Unix epoch (with
    /// [`StatMask::MTIME`]).
    pub mtime: i64,
    /// The nanoseconds of the last modification (with [`StatMask::MTIME`]).
    pub mtime_nsec: u32,
    /// The owner's user id (with [`StatMask::OWNER`]).
    pub uid: u32,
    /// The group id (with [`StatMask::OWNER`]).
    pub gid: u32,
    /// For a device file, the device it stands for (as `dev`: the system's `dev_t`).
    pub rdev: u64,
    /// The last access, in seconds since the Unix epoch (with [`StatMask::TIMES`]).
    pub atime: i64,
    /// The nanoseconds of the last access (with [`StatMask::TIMES`]).
    pub atime_nsec: u32,
    /// The last change of status (ctime), in seconds since the Unix epoch (with
    /// [`StatMask::TIMES`]).
    pub ctime: i64,
    /// The nanoseconds of the last change of status (with [`StatMask::TIMES`]).
    pub ctime_nsec: u32,
    /// The inode flags that bear on a removal (whatever the mask: they come with every
    /// answer where the system gives them).
    pub attributes: Attributes,
}

/// The flags of a file that bear on its removal, as the system tells them with its
/// metadata: on Linux, `statx`'s `stx_attributes` (no call more), where the file system
/// fills them in (ext4, XFS, Btrfs, tmpfs and more); all `false` where it does not say
/// (the flags are then not known, not absent), and on other systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Attributes {
    /// The file may not be changed, renamed nor removed, not even by root (`chattr +i`,
    /// `STATX_ATTR_IMMUTABLE`); a directory so marked keeps its entries too.
    pub immutable: bool,
    /// The file may only be appended to (`chattr +a`, `STATX_ATTR_APPEND`): it may not
    /// be removed, and a directory so marked keeps its entries.
    pub append_only: bool,
    /// The file is the root of a mount (`STATX_ATTR_MOUNT_ROOT`, Linux 5.8 on): a
    /// directory that cannot be removed while it is mounted (`EBUSY`).
    pub mount_root: bool,
}

impl Metadata {
    /// The file type, [`FileType::Unknown`] when the system did not say.
    pub fn file_type(&self) -> FileType {
        self.file_type.unwrap_or(FileType::Unknown)
    }
}

/// One entry read from a directory by [`Dir::read_entries`]: it borrows the read buffer,
/// so nothing is allocated for it.
#[derive(Clone, Copy, Debug)]
pub struct RawEntry<'a> {
    name: &'a CStr,
    file_type: FileType,
    ino: u64,
    /// What the listing's record told (Windows only: see [`RawEntry::metadata`]).
    #[cfg(windows)]
    meta: Option<Metadata>,
}

impl<'a> RawEntry<'a> {
    /// The entry's name, exactly the bytes on disk (never `.` or `..`).
    pub fn name(&self) -> &'a CStr {
        self.name
    }

    /// The type the directory entry tells (`d_type`); [`FileType::Unknown`] where the
    /// file system does not fill it in.
    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// The inode number (`d_ino`).
    pub fn ino(&self) -> u64 {
        self.ino
    }

    /// The entry's metadata as the directory listing gave it, where the system's
    /// listing carries it: on Windows, each batch record's size, allocation
    /// ([`Metadata::blocks`]), attributes ([`Metadata::mode`]), time of last write
    /// and file id ([`Metadata::ino`]), equal to what [`Dir::stat_at`] gives for them,
    /// with no call per entry; but `dev` and `nlink` are 0 there (a record tells
    /// neither the volume nor the link count). `None` elsewhere: Linux's `getdents64`
    /// gives only the type and the inode.
    pub fn metadata(&self) -> Option<Metadata> {
        #[cfg(windows)]
        return self.meta;
        #[cfg(not(windows))]
        None
    }
}

/// Whether [`RawEntry::metadata`] (where there is one) holds every field of `mask` as
/// [`Dir::stat_at`] gives it, the entry not followed: on Windows, every field but the
/// identity (a record tells no volume) and the link count; elsewhere there is none.
pub fn listing_answers(mask: StatMask) -> bool {
    cfg!(windows)
        && !mask.contains(StatMask::ID)
        && !mask.contains(StatMask::NLINK)
        && !mask.contains(StatMask::TIMES)
}

/// The times a copy sets on a file: last access and last modification, each in
/// seconds since the Unix epoch and nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileTimes {
    /// The last access: seconds and nanoseconds.
    pub accessed: (i64, u32),
    /// The last modification: seconds and nanoseconds.
    pub modified: (i64, u32),
}

impl FileTimes {
    /// The access and modification times of `m` (asked for with [`StatMask::TIMES`]
    /// and [`StatMask::MTIME`]).
    pub fn of(m: &Metadata) -> FileTimes {
        FileTimes {
            accessed: (m.atime, m.atime_nsec),
            modified: (m.mtime, m.mtime_nsec),
        }
    }
}

/// Whether [`copy_data`] first asks the file system to share the source's blocks
/// (`FICLONE`), as `cp --reflink` says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reflink {
    /// Where the file system can (Btrfs, XFS, bcachefs), else copy (GNU cp 9's default).
    #[default]
    Auto,
    /// Only by sharing blocks: a file system that cannot is an error.
    Always,
    /// Never: the data is copied.
    Never,
}

/// How [`copy_data`] treats holes, as `cp --sparse` says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sparse {
    /// A file with fewer blocks than its size needs has its holes kept (found with
    /// `SEEK_DATA`/`SEEK_HOLE`); others are copied whole.
    #[default]
    Auto,
    /// Holes kept, and each block of zeros read made a hole too.
    Always,
    /// Every byte written: holes become allocated zeros.
    Never,
}

/// How [`copy_data`] moves a file's data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataCopy {
    /// Whether to share blocks first.
    pub reflink: Reflink,
    /// What becomes of holes.
    pub sparse: Sparse,
}

/// Whether `name` is `.` or `..`.
fn is_dot(name: &[u8]) -> bool {
    name == b"." || name == b".."
}

/// Opens `path` below `start` one name at a time with `open_at` (which never follows a
/// link): empty names and `.` skipped; `..` and an absolute path refused, so that the
/// directory opened is always below `start`. The fallback of each backend's
/// `Dir::open_dir_beneath`.
fn open_by_names<D>(
    start: &D,
    path: &CStr,
    open_at: impl Fn(&D, &CStr) -> std::io::Result<D>,
) -> std::io::Result<D> {
    let bytes = path.to_bytes();
    if bytes.starts_with(b"/") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an absolute path is not below a directory",
        ));
    }
    let mut dir: Option<D> = None;
    for name in bytes.split(|&b| b == b'/') {
        if name.is_empty() || name == b"." {
            continue;
        }
        if name == b".." {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "'..' would leave the directory",
            ));
        }
        let name = std::ffi::CString::new(name).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        let next = open_at(dir.as_ref().unwrap_or(start), &name)?;
        dir = Some(next);
    }
    match dir {
        Some(d) => Ok(d),
        None => open_at(start, c"."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_entries_relative_to_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("empty")).unwrap();
        std::fs::create_dir(tmp.path().join("full")).unwrap();
        std::fs::write(tmp.path().join("full/f"), b"x").unwrap();
        std::fs::write(tmp.path().join("file"), b"x").unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.unlink_at(c"file").unwrap();
        assert!(!tmp.path().join("file").exists());
        dir.remove_dir_at(c"empty").unwrap();
        assert!(!tmp.path().join("empty").exists());
        // A directory is not unlinked, a full one not removed, a file not rmdir'd.
        assert!(dir.unlink_at(c"full").is_err());
        assert!(dir.remove_dir_at(c"full").is_err());
        let full = dir.open_at(c"full").unwrap();
        assert!(full.remove_dir_at(c"f").is_err());
        full.unlink_at(c"f").unwrap();
        // Closed first: where Windows lacks POSIX deletion (wine 8), a directory
        // removed while open stays until its last handle closes.
        drop(full);
        dir.remove_dir_at(c"full").unwrap();
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn stat_at_answers_with_the_fields_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), vec![7u8; 5000]).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("f", tmp.path().join("l")).unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        let m = dir
            .stat_at(c"f", StatMask::SIZE | StatMask::NLINK | StatMask::ID, false)
            .unwrap();
        assert_eq!((m.file_type(), m.size, m.nlink), (FileType::File, 5000, 1));
        #[cfg(unix)]
        {
            let l = dir.stat_at(c"l", StatMask::TYPE, false).unwrap();
            assert_eq!(l.file_type(), FileType::Symlink);
            let t = dir.stat_at(c"l", StatMask::ID, true).unwrap();
            assert_eq!((t.file_type(), t.ino), (FileType::File, m.ino));
        }
        assert_eq!(
            dir.stat_at(c"missing", StatMask::TYPE, false)
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::NotFound
        );
        assert_eq!(dir.stat(StatMask::TYPE).unwrap().file_type(), FileType::Dir);
    }

    /// Makes `link` a symbolic link to the directory `a`; false where the system
    /// cannot (Windows without the privilege; wine 8 says yes and makes nothing).
    fn dir_link(root: &std::path::Path) -> bool {
        #[cfg(unix)]
        let made = std::os::unix::fs::symlink("a", root.join("link")).is_ok();
        #[cfg(windows)]
        let made = std::os::windows::fs::symlink_dir("a", root.join("link")).is_ok();
        made && std::fs::symlink_metadata(root.join("link")).is_ok_and(|m| m.is_symlink())
    }

    #[test]
    fn open_at_does_not_follow_links_and_open_at_follow_does() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        assert!(dir.open_beneath(c"a/b", false).is_ok());
        if !dir_link(tmp.path()) {
            // Links can always be made on Unix.
            #[cfg(unix)]
            panic!("no symbolic link made");
            #[cfg(not(unix))]
            {
                eprintln!("no symbolic links here: the rest of the test is skipped");
                return;
            }
        }
        assert!(dir.open_at(c"link").is_err());
        assert!(dir.open_at_follow(c"link").is_ok());
        assert!(dir.open_beneath(c"a/b", false).is_ok());
        assert!(
            dir.open_beneath(c"link/b", false).is_err(),
            "no link on the way"
        );
        assert!(dir.open_beneath(c"link/b", true).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn set_dir_permissions_at_changes_an_unreadable_directory_never_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let mode = |name: &str| {
            let m = std::fs::symlink_metadata(tmp.path().join(name)).unwrap();
            m.permissions().mode() & 0o7777
        };
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        std::fs::create_dir(tmp.path().join("target")).unwrap();
        std::fs::write(tmp.path().join("f"), b"x").unwrap();
        std::os::unix::fs::symlink("target", tmp.path().join("l")).unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.set_dir_permissions_at(c"d", 0o000).unwrap();
        assert_eq!(mode("d"), 0o000);
        // From mode 0000 (no read, no search) back to one that can be read.
        dir.set_dir_permissions_at(c"d", 0o700).unwrap();
        assert_eq!(mode("d"), 0o700);
        let before = mode("target");
        assert!(dir.set_dir_permissions_at(c"l", 0o000).is_err());
        assert_eq!(mode("target"), before, "a link is not followed");
        let before = mode("f");
        assert!(dir.set_dir_permissions_at(c"f", 0o000).is_err());
        assert_eq!(mode("f"), before, "a file is not a directory");
    }
}
