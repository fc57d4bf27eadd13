//! The per-directory routine every walker shares: read one directory into a compact
//! listing (one arena of names, one array of records), sort it if asked, and find out
//! the type of each entry with the cheapest call that answers.

use super::Options;
use crate::sys::{Dir, DirBuf, FileType, StatMask};
use std::ffi::CStr;
use std::io::{self, ErrorKind::NotADirectory, ErrorKind::NotFound};

/// One entry of a [`Listing`]: where its name lies in the arena, its type and inode.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    start: u32,
    len: u32,
    pub(crate) file_type: FileType,
    /// A symbolic link that was followed ([`Listing::resolve_all`]).
    pub(crate) followed_link: bool,
    /// Index into the listing's targets (a directory's identity, with links followed) or
    /// errors, or `NONE`.
    aux: u32,
    is_error: bool,
    /// With `is_error`: the entry is reported all the same, its type unknown, and the
    /// error after it (the directory told no type, and asking failed).
    listed: bool,
    pub(crate) ino: u64,
    /// The metadata the listing gave (Windows: [`crate::sys::RawEntry::metadata`]).
    #[cfg(windows)]
    pub(crate) meta: Option<crate::sys::Metadata>,
}

const NONE: u32 = u32::MAX;

/// From how many entries [`Listing::order_by_inode`] sorts.
const INODE_ORDER_FROM: usize = 10_000;

/// How many entries of a directory an unsorted parallel walk reads before it hands
/// them out and reads on ([`Listing::read_some`]): a directory of millions of entries
/// is walked in the memory of this many (about 45 bytes each), as GNU's fts reads at
/// most 100,000 at a time.
pub(crate) const PART: usize = 32_768;

/// The entries of one directory, read in one go: names side by side in one buffer
/// (each followed by a NUL, so it can be passed to the kernel as it is).
#[derive(Default, Debug)]
pub(crate) struct Listing {
    names: Vec<u8>,
    pub(crate) items: Vec<Item>,
    targets: Vec<(u64, u64)>,
    errors: Vec<Option<io::Error>>,
}

/// What [`Listing::resolved`] says of an item that could be typed: its final type,
/// whether it is a followed link, and for a directory when links are followed, its
/// (device, inode).
pub(crate) type Typed = (FileType, bool, Option<(u64, u64)>);

impl Listing {
    /// Empties the listing, keeping its memory for the next directory.
    pub(crate) fn clear(&mut self) {
        self.names.clear();
        self.items.clear();
        self.targets.clear();
        self.errors.clear();
    }

    /// Gives every entry its final type (see [`resolve`]): afterwards the directory's
    /// handle is needed only to open subdirectories. With `dir_ids`, every directory's
    /// (device, inode) is asked for too (links are followed, or mount points matter).
    pub(crate) fn resolve_all(&mut self, dir: &Dir, follow_links: bool, dir_ids: bool) {
        let dir_ids = dir_ids || follow_links;
        for i in 0..self.items.len() {
            let item = self.items[i];
            let needs = item.file_type == FileType::Unknown
                || (dir_ids && item.file_type == FileType::Dir)
                || (follow_links && item.file_type == FileType::Symlink);
            if !needs {
                continue;
            }
            match resolve(dir, self, &item, follow_links, dir_ids) {
                Resolved::Entry {
                    file_type,
                    followed_link,
                    target,
                } => {
                    let it = &mut self.items[i];
                    it.file_type = file_type;
                    it.followed_link = followed_link;
                    if let Some(t) = target {
                        it.aux = self.targets.len() as u32;
                        self.targets.push(t);
                    }
                }
                Resolved::Error(e) => {
                    let it = &mut self.items[i];
                    it.is_error = true;
                    // A name read from the directory is reported even when its type
                    // cannot be found (as find does): in a directory that can be read but
                    // not searched, every name, where the file system tells no types.
                    it.listed = it.file_type == FileType::Unknown;
                    it.aux = self.errors.len() as u32;
                    self.errors.push(Some(e));
                }
            }
        }
    }

    /// Reads `dir` whole into this (empty) listing as the serial walk and its read-ahead
    /// do: sorted if the walk sorts, every type resolved. On an error part way, what was
    /// read is kept and the error returned.
    pub(crate) fn fill(&mut self, dir: &Dir, buf: &mut DirBuf, opts: &Options) -> io::Result<()> {
        opts.hooks.pause();
        let res = self.read(dir, buf, opts.hooks.forget_types());
        if opts.sort {
            self.sort();
        } else {
            self.order_by_inode(opts);
        }
        self.resolve_all(dir, opts.follow_links, opts.same_file_system);
        res
    }

    /// Whether finding `item`'s type failed and it is not reported (only its error).
    pub(crate) fn is_error(&self, item: &Item) -> bool {
        item.is_error && !item.listed
    }

    /// The (device, inode) [`Listing::resolve_all`] found for `item`, if it asked.
    pub(crate) fn id(&self, item: &Item) -> Option<(u64, u64)> {
        (!item.is_error && item.aux != NONE).then(|| self.targets[item.aux as usize])
    }

    /// What [`Listing::resolve_all`] found for `item` (an error is handed out once). An
    /// entry reported despite an error is typed [`FileType::Unknown`]: its error is
    /// [`Listing::take_error`]'s.
    pub(crate) fn resolved(&mut self, item: &Item) -> io::Result<Typed> {
        if self.is_error(item) {
            let e = self.errors[item.aux as usize].take();
            return Err(e.unwrap_or_else(|| io::Error::other("error already reported")));
        }
        Ok((item.file_type, item.followed_link, self.id(item)))
    }

    /// The error found for an entry reported all the same, its type unknown (handed out
    /// once): to report after the entry.
    pub(crate) fn take_error(&mut self, item: &Item) -> Option<io::Error> {
        if item.is_error && item.listed {
            self.errors[item.aux as usize].take()
        } else {
            None
        }
    }

    /// Reads every entry of `dir` into this (empty) listing. With `forget_types`, every
    /// type is recorded as unknown, as some file systems report it (tests use this).
    pub(crate) fn read(
        &mut self,
        dir: &Dir,
        buf: &mut DirBuf,
        forget_types: bool,
    ) -> io::Result<()> {
        self.read_some(dir, buf, forget_types, usize::MAX)
            .map(|_| ())
    }

    /// Reads entries of `dir` into this listing, adding to what it holds, until at least
    /// `at_least` more are read (see [`Dir::read_some_entries`]): `Ok(true)` when
    /// entries may remain, to read on with the next call.
    pub(crate) fn read_some(
        &mut self,
        dir: &Dir,
        buf: &mut DirBuf,
        forget_types: bool,
        at_least: usize,
    ) -> io::Result<bool> {
        let names = &mut self.names;
        let items = &mut self.items;
        let mut too_big = false;
        let res = dir.read_some_entries(buf, at_least, |e| {
            // Offsets are 32-bit: past 4 GiB of names the rest of the directory is left
            // out and reported.
            if names.len() + 256 >= u32::MAX as usize {
                too_big = true;
                return;
            }
            let name = e.name().to_bytes_with_nul();
            let start = names.len();
            names.extend_from_slice(name);
            items.push(Item {
                start: start as u32,
                len: (name.len() - 1) as u32,
                file_type: if forget_types {
                    FileType::Unknown
                } else {
                    e.file_type()
                },
                followed_link: false,
                aux: NONE,
                is_error: false,
                listed: false,
                ino: e.ino(),
                #[cfg(windows)]
                meta: e.metadata(),
            });
        });
        if too_big {
            return Err(io::Error::other(
                "directory too large: names past 4 GiB left out",
            ));
        }
        res
    }

    /// With [`Options::inode_order`], a large directory's entries in inode order (as GNU
    /// rm's fts does from 10,000 entries): on ext4 and the like, removing or stat'ing
    /// them in that order touches the inode table in sequence.
    pub(crate) fn order_by_inode(&mut self, opts: &Options) {
        if opts.inode_order && self.items.len() >= INODE_ORDER_FROM {
            self.items.sort_unstable_by_key(|i| i.ino);
        }
    }

    /// Sorts the entries by their name's bytes.
    pub(crate) fn sort(&mut self) {
        let names = &self.names;
        self.items.sort_unstable_by(|a, b| {
            names[a.start as usize..(a.start + a.len) as usize]
                .cmp(&names[b.start as usize..(b.start + b.len) as usize])
        });
    }

    /// Whether an entry is named `name`.
    pub(crate) fn contains(&self, name: &[u8]) -> bool {
        self.items.iter().any(|i| self.name(i) == name)
    }

    /// The name of `item`, without its NUL.
    pub(crate) fn name(&self, item: &Item) -> &[u8] {
        &self.names[item.start as usize..(item.start + item.len) as usize]
    }

    /// The name of `item` followed by its NUL.
    pub(crate) fn name_with_nul(&self, item: &Item) -> &[u8] {
        &self.names[item.start as usize..=(item.start + item.len) as usize]
    }

    /// The name of `item` as a C string, ready for the kernel.
    pub(crate) fn c_name(&self, item: &Item) -> &CStr {
        let bytes = &self.names[item.start as usize..=(item.start + item.len) as usize];
        // The arena stores each name followed by exactly one NUL, and a directory
        // entry's name holds no NUL of its own.
        CStr::from_bytes_with_nul(bytes).expect("listing names are NUL-terminated")
    }

    /// How many entries are directories (after [`Listing::resolve_all`]), counted up to
    /// `most`.
    pub(crate) fn dirs_up_to(&self, most: usize) -> usize {
        self.items
            .iter()
            .filter(|i| i.file_type == FileType::Dir && !self.is_error(i))
            .take(most)
            .count()
    }

    /// The index of the last entry that is a directory (after [`Listing::resolve_all`]),
    /// if any: past it, the directory's handle is no longer needed.
    pub(crate) fn last_dir(&self) -> Option<usize> {
        self.items
            .iter()
            .rposition(|i| i.file_type == FileType::Dir && !i.is_error)
    }
}

/// What an entry turned out to be once its type is known.
enum Resolved {
    /// A usable entry: its type (the target's, for a followed link), whether it is a
    /// followed link, and for a followed link to a directory the target's identity.
    Entry {
        file_type: FileType,
        followed_link: bool,
        target: Option<(u64, u64)>,
    },
    /// Asking about it failed (it vanished, or a link loops).
    Error(io::Error),
}

/// Finds the type of `item` in `dir`: from `d_type` where the directory told it, from a
/// `statx` asking for the type alone where it did not, and by following a symbolic link
/// when `follow_links` is set (a dangling link stays a link). With `dir_ids`, a
/// directory's identity is asked for too: to detect loops, or to see a mount point
/// before opening it.
fn resolve(dir: &Dir, list: &Listing, item: &Item, follow_links: bool, dir_ids: bool) -> Resolved {
    let mut file_type = item.file_type;
    if file_type == FileType::Unknown {
        match dir.stat_at(list.c_name(item), StatMask::TYPE, false) {
            Ok(m) => file_type = m.file_type(),
            Err(e) => return Resolved::Error(e),
        }
    }
    // Following links, a directory may be one being walked already (reached again
    // through a link higher up): its identity is needed before it is reported.
    if dir_ids && file_type == FileType::Dir {
        return match dir.stat_at(list.c_name(item), StatMask::TYPE | StatMask::ID, false) {
            Ok(m) => Resolved::Entry {
                file_type: m.file_type(),
                followed_link: false,
                target: m.file_type().is_dir().then_some((m.dev, m.ino)),
            },
            // The directory said it is one (a directory that can be read but not
            // searched): it is listed, and opening it will tell what fails.
            Err(_) if item.file_type == FileType::Dir => Resolved::Entry {
                file_type,
                followed_link: false,
                target: None,
            },
            Err(e) => Resolved::Error(e),
        };
    }
    if file_type == FileType::Symlink && follow_links {
        return match dir.stat_at(list.c_name(item), StatMask::TYPE | StatMask::ID, true) {
            Ok(m) => Resolved::Entry {
                file_type: m.file_type(),
                followed_link: true,
                target: m.file_type().is_dir().then_some((m.dev, m.ino)),
            },
            // A dangling link (or one through a file) is listed as the link itself.
            Err(e) if matches!(e.kind(), NotFound | NotADirectory) => Resolved::Entry {
                file_type: FileType::Symlink,
                followed_link: false,
                target: None,
            },
            Err(e) => Resolved::Error(e),
        };
    }
    Resolved::Entry {
        file_type,
        followed_link: false,
        target: None,
    }
}
