//! The one decision made for each entry, by every walker: the serial walk, the parallel
//! walk and the sorted walk's read-ahead all call here, so that what is reported and
//! what is entered never depends on which of them runs.
//!
//! For a listed entry ([`decide`]): its type as the listing resolved it (or the error
//! that stands in its place), the error to tell after it, a loop through a followed
//! link, the walk's filter, the minimum depth (whether to report it) and whether to
//! enter it ([`enters`]: a directory, above the maximum depth, on the root's file
//! system). For a root ([`root`]): it is opened, typed, filtered and reported the
//! same way.

use super::listing::{Item, Listing};
use super::node::{self, Id, RootStart};
use super::{Entry, Error, Filter, Options, bytes_to_path, join};
use crate::sys::{Dir, FileType};
use std::path::Path;

/// Where an entry was listed.
pub(super) struct Place<'a> {
    /// The path of the directory holding it.
    pub(super) parent: &'a [u8],
    /// The entry's own depth (its directory's plus one).
    pub(super) depth: usize,
    /// The directory's handle, where the walker has it at hand.
    pub(super) dir: Option<&'a Dir>,
    /// The device of the walk's root (for `same_file_system`).
    pub(super) root_dev: u64,
}

/// What the walk does with a listed entry.
pub(super) enum Decision {
    /// Report this error in the entry's place: its type could not be found, or it is a
    /// followed link back to a directory being walked. It is not entered.
    Error(Error),
    /// The filter left it out: neither reported nor entered. `late`: see [`Kept`].
    Dropped { late: Option<Error> },
    /// The entry stands.
    Kept(Kept),
}

/// An entry that stands: reported or not, entered or not.
pub(super) struct Kept {
    pub(super) file_type: FileType,
    pub(super) followed_link: bool,
    /// Deep enough to report (`min_depth`).
    pub(super) report: bool,
    /// To enter (unless the visitor says to skip it).
    pub(super) enter: bool,
    /// Reported after the entry (even one not reported): it was listed, but its type
    /// could not be found.
    pub(super) late: Option<Error>,
}

/// Decides for the listed `item` of `list`, found at `at`. `ancestor` tells, for the
/// identity of a directory a followed link leads to, the length of the path of the
/// directory being walked that has it, if any: a loop.
pub(super) fn decide(
    opts: &Options,
    filter: Option<&Filter>,
    list: &mut Listing,
    item: &Item,
    at: &Place<'_>,
    ancestor: impl FnOnce(Id) -> Option<usize>,
) -> Decision {
    let depth = at.depth;
    let path = |list: &Listing| join(at.parent, list.name(item));
    let (file_type, followed_link, target) = match list.resolved(item) {
        Ok(typed) => typed,
        Err(e) => return Decision::Error(Error::io(path(list), depth, e)),
    };
    let late = list
        .take_error(item)
        .map(|e| Error::io(path(list), depth, e));
    if let Some(len) = target.filter(|_| opts.follow_links).and_then(ancestor) {
        let ancestor = bytes_to_path(at.parent[..len].to_vec());
        return Decision::Error(Error::fs_loop(path(list), depth, ancestor));
    }
    if let Some(keep) = filter {
        if !keep(&Entry::listed(at, list, item, file_type, followed_link)) {
            return Decision::Dropped { late };
        }
    }
    Decision::Kept(Kept {
        file_type,
        followed_link,
        report: depth >= opts.min_depth,
        enter: enters(opts, file_type, depth, target, at.root_dev),
        late,
    })
}

/// Whether an entry at `depth` of type `file_type` (for a directory, of identity
/// `id` where known), below a root on device `root_dev`, is to be entered: a directory
/// above the maximum depth, and not a mount point the walk does not cross.
pub(super) fn enters(
    opts: &Options,
    file_type: FileType,
    depth: usize,
    id: Option<Id>,
    root_dev: u64,
) -> bool {
    file_type == FileType::Dir && depth < opts.max_depth && !opts.off_fs(id, root_dev)
}

/// What the walk does with a root.
pub(super) enum RootDecision {
    /// The filter left it out: nothing is reported, nothing entered.
    Dropped,
    /// Nothing to report but this error (it could not be found, or is not to be
    /// reported and cannot be read).
    Failed(Error),
    /// The root stands: reported if `report`, then `error` told (it exists but cannot
    /// be read), and its handle and identity given if it is to be entered.
    Kept {
        file_type: FileType,
        /// The root was reached through a symbolic link, followed.
        followed_link: bool,
        report: bool,
        error: Option<Error>,
        enter: Option<(Dir, Option<Id>)>,
    },
}

/// Opens, types and filters the root `root` (its path's bytes `path`; its handle
/// `given` when the caller opened it), and decides whether to report and enter it.
pub(super) fn root(
    opts: &Options,
    filter: Option<&Filter>,
    root: &Path,
    path: &[u8],
    given: Option<Dir>,
) -> RootDecision {
    let (start, followed_link) = node::start_root(root, given, opts);
    let (file_type, enter, error) = match start {
        RootStart::Dir(dir, id) => (FileType::Dir, Some((dir, id)), None),
        RootStart::Single(file_type) => (file_type, None, None),
        RootStart::Unreadable(file_type, e) => (file_type, None, Some(e)),
        RootStart::Failed(e) => {
            return RootDecision::Failed(Error::io(root.to_path_buf(), 0, e));
        }
    };
    if filter.is_some_and(|keep| !keep(&Entry::root(path, file_type, followed_link))) {
        return RootDecision::Dropped;
    }
    let error = error.map(|e| Error::io(root.to_path_buf(), 0, e));
    let report = opts.min_depth <= opts.root_depth;
    match error {
        Some(e) if !report => RootDecision::Failed(e),
        error => RootDecision::Kept {
            file_type,
            followed_link,
            report,
            error,
            enter: enter.filter(|_| opts.max_depth > opts.root_depth),
        },
    }
}

impl<'a> Entry<'a> {
    /// The listed `item` of `list`, found at `at`, of its final type.
    #[inline]
    pub(super) fn listed(
        at: &Place<'a>,
        list: &'a Listing,
        item: &Item,
        file_type: FileType,
        followed_link: bool,
    ) -> Entry<'a> {
        Entry {
            parent: at.parent,
            name: list.name(item),
            depth: at.depth,
            file_type,
            followed_link,
            ino: item.ino,
            #[cfg(windows)]
            meta: item.meta,
            dir: at.dir,
            c_name: Some(list.name_with_nul(item)),
            known: None,
        }
    }
}
