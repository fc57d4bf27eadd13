//! The result: the tree of kept entries ([`UsageNode`]), the roots' [`DiskUsage`], and
//! the cut to the largest entries.

use super::Totals;
#[cfg(doc)]
use super::{UsageOptions, disk_usage};
use crate::sys::{FileType, Metadata};

/// A file or directory kept in the result. Dropped without recursion, however deep.
///
/// ```
/// use ftw::usage::{UsageOptions, disk_usage};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("a/b"))?;
/// std::fs::write(tmp.path().join("a/b/f"), vec![1u8; 100])?;
/// let root = &disk_usage(&[tmp.path()], &UsageOptions::new()).roots[0];
/// let a = &root.children[0];
/// assert_eq!((a.name.as_slice(), a.is_dir()), (&b"a"[..], true));
/// assert_eq!(a.total.inodes, 3); // a, b and f
/// assert_eq!(a.own.inodes, 1); // a alone: b is a subdirectory (du -S)
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageNode {
    /// Its name in its directory; for a root, its path as given.
    pub name: Vec<u8>,
    /// Its type ([`FileType::Dir`] for a directory).
    pub file_type: FileType,
    /// Everything at and below it, counted once.
    pub total: Totals,
    /// The directory itself and its non-directory entries, without its subdirectories
    /// (`du -S`); for a file, its total.
    pub own: Totals,
    /// Its own `st_size`.
    pub size: u64,
    /// Its device.
    pub dev: u64,
    /// Its inode number.
    pub ino: u64,
    /// Its link count.
    pub nlink: u64,
    /// `false` for a further name of a file counted under another name, kept with
    /// [`UsageOptions::keep_every_name`]: its totals are the file's, but were not
    /// added to its directory's (nor should they be added again).
    pub counted: bool,
    /// The entries kept below it: in the walk's order with one thread (files as met,
    /// a directory once left, which a serial walk does before going on), else as the
    /// workers happened to finish them.
    pub children: Vec<UsageNode>,
}

impl Drop for UsageNode {
    fn drop(&mut self) {
        let mut below = std::mem::take(&mut self.children);
        while let Some(mut c) = below.pop() {
            below.append(&mut c.children);
        }
    }
}

impl UsageNode {
    pub(super) fn file(name: Vec<u8>, m: &Metadata) -> UsageNode {
        let t = Totals::of(m);
        UsageNode {
            name,
            file_type: m.file_type(),
            total: t,
            own: t,
            size: m.size,
            dev: m.dev,
            ino: m.ino,
            nlink: m.nlink,
            counted: true,
            children: Vec::new(),
        }
    }

    /// Whether this is a directory.
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Dir
    }
}

/// What [`disk_usage`] found: it goes on past an error, so check
/// [`DiskUsage::errors`] (each error is told to [`UsageOptions::on_error`]; none is
/// kept here).
///
/// ```
/// use ftw::usage::{UsageOptions, disk_usage};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("a"))?;
/// std::fs::write(tmp.path().join("a/f"), vec![1u8; 100])?;
/// std::fs::hard_link(tmp.path().join("a/f"), tmp.path().join("g"))?;
/// // g is a/f: counted under a, not again as a root (as du -c does).
/// let usage = disk_usage(&[tmp.path().join("a"), tmp.path().join("g")], &UsageOptions::new());
/// assert_eq!(usage.roots.len(), 1);
/// assert_eq!(usage.total.apparent, 100);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "some of the tree may not have been counted: see its `errors`"]
pub struct DiskUsage {
    /// One node a root, in the order given; a root that could not be read at all, or
    /// that was met already (given twice, or inside an earlier root), has none.
    pub roots: Vec<UsageNode>,
    /// The roots' totals added up (`du -c`).
    pub total: Totals,
    /// Errors met (each told to [`UsageOptions::on_error`]): when not 0, the totals
    /// miss what could not be read.
    pub errors: u64,
}

/// Keeps the `n` largest nodes of the trees `children` (and, as they are no larger,
/// their ancestors come first on ties): level by level, so that a node is looked at
/// after its parent, without recursion.
pub(super) fn keep_largest(children: &mut Vec<UsageNode>, n: usize) {
    let mut sizes = Vec::new();
    let mut stack: Vec<&UsageNode> = children.iter().collect();
    while let Some(c) = stack.pop() {
        sizes.push(c.total.bytes);
        stack.extend(c.children.iter());
    }
    if sizes.len() <= n {
        return;
    }
    if n == 0 {
        children.clear();
        return;
    }
    let (_, &mut cut, _) = sizes.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
    let mut ties = n - sizes.iter().filter(|&&s| s > cut).count();
    let mut queue = std::collections::VecDeque::from([children]);
    while let Some(v) = queue.pop_front() {
        v.retain(|c| {
            c.total.bytes > cut
                || (c.total.bytes == cut && ties > 0 && {
                    ties -= 1;
                    true
                })
        });
        for c in v {
            queue.push_back(&mut c.children);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_keeps_the_largest_files() {
        let mk = |name: &str, bytes: u64| UsageNode {
            name: name.as_bytes().to_vec(),
            file_type: FileType::File,
            total: Totals {
                bytes,
                apparent: 0,
                inodes: 1,
            },
            own: Totals::default(),
            size: 0,
            dev: 0,
            ino: 0,
            nlink: 1,
            counted: true,
            children: Vec::new(),
        };
        let mut v = vec![mk("a", 1), mk("b", 5), mk("c", 5), mk("d", 9), mk("e", 2)];
        let mut dir = mk("x", 5);
        dir.file_type = FileType::Dir;
        dir.children = vec![mk("y", 5), mk("z", 1)];
        v.push(dir);
        keep_largest(&mut v, 3);
        let names: Vec<_> = v.iter().map(|c| c.name.clone()).collect();
        // d (9), then two of the 5s: b and c come before x, whose child y never fits.
        assert_eq!(names, vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
        let mut deep = mk("top", 7);
        let mut cur = &mut deep;
        for i in 0..200_000 {
            cur.children.push(mk(&i.to_string(), 7));
            cur = &mut cur.children[0];
        }
        let mut v = vec![deep];
        keep_largest(&mut v, 2);
        assert_eq!(
            v[0].children[0].children.len(),
            0,
            "a chain cut at 2, without recursion"
        );
    }
}
