//! Walks with events: besides each entry, a visitor sees each directory *entered* (its
//! handle open, its listing read) and *left* (after all of its descendants), with a
//! state of its own per directory.

use super::listing::Listing;
use super::{Control, Entry, Error};
use crate::sys::Dir;
use std::ffi::CStr;
use std::path::PathBuf;

/// A visitor of a walk with events ([`Walk::visit_events`](super::Walk::visit_events),
/// [`ParallelWalk::visit_events`](super::ParallelWalk::visit_events)).
///
/// For each directory the walk opens, in every walker, serial, sorted or parallel:
///
/// 1. [`Visitor::entry`] sees it first as an entry of its parent (for a root: at depth
///    0, if `min_depth` is 0); [`Control::Skip`] there keeps it from being opened;
/// 2. [`Visitor::enter`] sees it opened and read, and makes its *state* from its
///    parent's state;
/// 3. [`Visitor::entry`] sees each of its entries, with its state (and each
///    subdirectory goes through 1 to 4);
/// 4. [`Visitor::leave`] gets its state back, after every directory below it was left,
///    exactly once, beside its parent's state.
///
/// A directory that could not be opened is reported as an error and neither entered
/// nor left. Directories at `max_depth` are not opened. After [`Control::Stop`], no
/// event follows. In a parallel walk each worker has its own visitor: a directory may be
/// entered on one worker and left on another (whichever finished its last child), and
/// its state is shared, not copied, with the workers reading below it.
///
/// A visitor that removes a tree (files on entry, directories on leave):
///
/// ```
/// use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
///
/// struct Remove;
/// impl Visitor for Remove {
///     type State = ();
///     fn enter(&mut self, _: &DirEvent<'_>, _: Option<&()>) {}
///     fn entry(&mut self, item: Result<&Entry<'_>, Error>, _: Option<&()>) -> Control {
///         let e = item.expect("readable");
///         if let (Some(dir), Some(name)) = (e.dir(), e.c_name()) {
///             if !e.is_dir() {
///                 dir.unlink_at(name).expect("unlinked");
///             }
///         }
///         Control::Continue
///     }
///     fn leave(&mut self, d: &DirEvent<'_>, _: (), _: Option<&()>) {
///         if let (Some(parent), Some(name)) = (d.parent_dir(), d.c_name()) {
///             parent.remove_dir_at(name).expect("removed");
///         }
///     }
/// }
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("t/a/b"))?;
/// std::fs::write(tmp.path().join("t/a/b/f"), b"x")?;
/// WalkBuilder::new(tmp.path().join("t"))
///     .keep_handles(true)
///     .build()
///     .visit_events(&mut Remove);
/// // Everything below the root is gone; the root is left for its caller to remove.
/// assert_eq!(std::fs::read_dir(tmp.path().join("t"))?.count(), 0);
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait Visitor {
    /// What the visitor keeps for each directory while it is walked: made on entering,
    /// read by its entries and its subdirectories' `enter`, given back on leaving.
    type State;

    /// A directory was opened and read. `parent` is its parent's state (`None` for a
    /// root); the value returned is this directory's state.
    fn enter(&mut self, dir: &DirEvent<'_>, parent: Option<&Self::State>) -> Self::State;

    /// An entry, or an error, of the directory whose state is `dir` (`None` for a root
    /// and the errors about it). Says whether to go on, skip the entry (a directory is
    /// then not opened), or stop the walk.
    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&Self::State>) -> Control;

    /// A directory is done: every entry below it was seen and every directory below it
    /// left. Gets back its state, and sees its parent's (`None` for a root), to fold a
    /// total into it.
    fn leave(&mut self, dir: &DirEvent<'_>, state: Self::State, parent: Option<&Self::State>);

    /// Whether this visitor works through its entries' directory handles
    /// ([`Entry::dir`]), so that [`WalkBuilder::run`](super::WalkBuilder::run) keeps
    /// them in a serial walk ([`WalkBuilder::keep_handles`](super::WalkBuilder::keep_handles)).
    /// `false` by default.
    fn wants_handles(&self) -> bool {
        false
    }
}

/// A directory being entered or left.
#[derive(Clone, Copy, Debug)]
pub struct DirEvent<'a> {
    pub(crate) path: &'a [u8],
    /// The name followed by its NUL.
    pub(crate) name: Option<&'a [u8]>,
    pub(crate) depth: usize,
    pub(crate) dir: Option<&'a Dir>,
    pub(crate) parent: Option<&'a Dir>,
    /// On entering: the directory's listing, just read.
    pub(crate) listing: Option<&'a Listing>,
}

impl<'a> DirEvent<'a> {
    /// The directory's path, as the walk built it from its root.
    pub fn path(&self) -> &'a [u8] {
        self.path
    }

    /// The path, allocated.
    pub fn to_path_buf(&self) -> PathBuf {
        super::bytes_to_path(self.path.to_vec())
    }

    /// Its name in its parent, ready for the kernel; `None` for a root.
    pub fn c_name(&self) -> Option<&'a CStr> {
        self.name.and_then(|n| CStr::from_bytes_with_nul(n).ok())
    }

    /// The depth below the root (0 for a root).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The directory's own handle. Always given when the walk keeps handles
    /// ([`WalkBuilder::keep_handles`](super::WalkBuilder::keep_handles)), reopened and
    /// checked if it had to be closed; otherwise given where it happens to be open.
    pub fn dir(&self) -> Option<&'a Dir> {
        self.dir
    }

    /// On entering, whether the directory holds an entry named `name`, from the listing
    /// just read (no system call: a visitor looks for a file it would otherwise try to
    /// open in every directory); `None` on leaving.
    pub fn has_entry(&self, name: &[u8]) -> Option<bool> {
        self.listing.map(|l| l.contains(name))
    }

    /// The parent directory's handle; `None` for a root. On leaving, on the same terms
    /// as [`DirEvent::dir`]; on entering, where it happens to be open (the walk may
    /// have opened the directory from an older ancestor).
    pub fn parent_dir(&self) -> Option<&'a Dir> {
        self.parent
    }
}

/// A visitor of entries alone, as a [`Visitor`] with no state: what
/// [`Walk::visit`](super::Walk::visit) and [`ParallelWalk::visit`](super::ParallelWalk::visit)
/// run on.
pub(crate) struct Entries<F>(pub(crate) F);

impl<F> Visitor for Entries<F>
where
    F: FnMut(Result<&Entry<'_>, Error>) -> Control,
{
    type State = ();

    #[inline]
    fn enter(&mut self, _: &DirEvent<'_>, _: Option<&()>) {}

    #[inline]
    fn entry(&mut self, item: Result<&Entry<'_>, Error>, _: Option<&()>) -> Control {
        (self.0)(item)
    }

    #[inline]
    fn leave(&mut self, _: &DirEvent<'_>, _: (), _: Option<&()>) {}
}
