//! Disk usage: the totals of whole trees (allocated bytes, apparent bytes, entries),
//! kept per directory down to a depth, as `du` counts them.
//!
//! One walk per root on the parallel walker ([`crate::walk::ParallelWalk`]), with
//! events: each directory's state holds its totals; each non-directory entry is asked
//! one `statx`, relative to its directory's handle, for its type, size, blocks, link
//! count and inode only; each directory's own blocks come from the handle the walk
//! opened anyway; a directory's totals are folded into its parent's when it is left.
//! Directories deeper than [`UsageOptions::max_depth`] are folded into their ancestors
//! and not kept, so memory follows the kept depth, not the tree's size.
//!
//! Hard links are counted once per (device, inode), across all the roots of a run,
//! as `du` does: only entries with more than one link are remembered (every entry when
//! several roots are given or links are followed, where one file may be met twice),
//! unless [`UsageOptions::count_links`] says to count every link.
//!
//! ```
//! use ftw::usage::{UsageOptions, disk_usage};
//!
//! let tmp = tempfile::tempdir()?;
//! std::fs::create_dir(tmp.path().join("a"))?;
//! std::fs::write(tmp.path().join("a/f"), vec![1u8; 10_000])?;
//! std::fs::hard_link(tmp.path().join("a/f"), tmp.path().join("g"))?;
//! let usage = disk_usage(&[tmp.path()], &UsageOptions::new().max_depth(1));
//! let root = &usage.roots[0];
//! // The file's 10,000 bytes are counted once, though it has two names.
//! assert_eq!(root.total.apparent, 10_000);
//! assert_eq!(root.total.inodes, 3); // the root, a, and the file
//! assert_eq!(root.children.len(), 1); // a (files are kept only when asked)
//! assert_eq!(usage.errors, 0);
//! # Ok::<(), std::io::Error>(())
//! ```

mod counter;
mod cycles;
mod links;
mod options;
mod order;
mod progress;
mod times;
mod totals;
mod tree;

pub use options::{Listed, UsageOptions};
pub use progress::UsageProgress;
pub use times::{Stamp, TimeOf};
pub use totals::Totals;
pub use tree::{DiskUsage, UsageNode};

use crate::sys;
use crate::walk::{Error, WalkBuilder};
use counter::{Counter, Run};
use links::Seen;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The size of the tree at `path` in bytes, as `du -sb` of coreutils 9.2 and later
/// gives it (9.1 and earlier also add each directory's own size): the apparent sizes
/// (`st_size`) of the files and symbolic links in it, each file counted once however
/// many hard links it has in the tree; directories and other files add 0; links are
/// not followed, so a `path` that is a link counts as the link (name it with a trailing
/// slash to count what it leads to), and a `path` that is a file gives its size. This is
/// what the files hold, not what they take on disk: for that (`du -s`, allocated blocks,
/// with sparse files and file system overhead) use [`disk_usage`] and
/// [`Totals::bytes`]. Counted in parallel, one `statx` per entry.
///
/// # Errors
///
/// If some of the tree could not be read (a directory without permission, `path`
/// missing), an error of the first one's kind whose message names its path and says how
/// many there were (its inner error is a [`TreeError`](crate::TreeError): see
/// [`std::io::Error::get_ref`]). No partial size is given: for that, use
/// [`disk_usage`], which counts what it can and the errors.
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("a"))?;
/// std::fs::write(tmp.path().join("a/f"), vec![1u8; 1000])?;
/// std::fs::hard_link(tmp.path().join("a/f"), tmp.path().join("g"))?; // counted once
/// std::fs::write(tmp.path().join("h"), vec![1u8; 234])?;
/// assert_eq!(ftw::dir_size(tmp.path())?, 1234);
///
/// let err = ftw::dir_size(tmp.path().join("missing")).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn dir_size<P: AsRef<Path>>(path: P) -> std::io::Result<u64> {
    let first: Arc<Mutex<Option<Error>>> = Arc::default();
    let sink = first.clone();
    let opts = UsageOptions::new().max_depth(0).on_error(move |e| {
        let mut first = sink.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(crate::tree_error::copy_error(e));
        }
    });
    let usage = disk_usage(&[path], &opts);
    if usage.errors > 0 {
        let first = first.lock().unwrap_or_else(|e| e.into_inner()).take();
        return Err(crate::TreeError::new(first, usage.errors).into());
    }
    Ok(usage.total.apparent)
}

/// Counts the disk usage of each of `roots`, in order, with hard links counted once
/// across all of them (see the [module](self)).
///
/// A root that is not a directory is counted as a single file; a root that is a
/// symbolic link counts as the link unless links are followed (or it is written with a
/// trailing slash). A directory that cannot be read counts its own size, and an error.
///
/// ```
/// use ftw::usage::{UsageOptions, disk_usage};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("a/b"))?;
/// std::fs::write(tmp.path().join("a/b/deep"), vec![0u8; 5000])?;
/// std::fs::write(tmp.path().join("top"), b"hello")?;
/// let opts = UsageOptions::new().max_depth(1).keep_files(true);
/// let usage = disk_usage(&[tmp.path()], &opts);
/// let root = &usage.roots[0];
/// assert_eq!(root.total.apparent, 5005);
/// let mut names: Vec<_> = root.children.iter().map(|c| c.name.clone()).collect();
/// names.sort();
/// assert_eq!(names, vec![b"a".to_vec(), b"top".to_vec()]);
/// // a/b is below the kept depth: folded into a, not kept.
/// let a = root.children.iter().find(|c| c.name == b"a").unwrap();
/// assert!(a.children.is_empty());
/// assert_eq!(a.total.apparent, 5000);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn disk_usage<P: AsRef<Path>>(roots: &[P], options: &UsageOptions) -> DiskUsage {
    let run = Run {
        opts: options,
        seen: Seen::new(),
        hash_all: roots.len() > 1 || options.follow_links,
        ask: counter::ASK.union(options.latest.map_or(sys::StatMask::TYPE, |t| t.mask())),
        errors: AtomicU64::new(0),
        result: Mutex::new(None),
        stopped: std::sync::atomic::AtomicBool::new(false),
        // Where directories are not all remembered, those that are their own
        // ancestors are found by their identity.
        live: (roots.len() <= 1 && !options.follow_links).then(cycles::Live::new),
        // A serial walk tells its lines in du's order already.
        order: (options.stream.is_some() && options.threads != 1).then(order::Order::default),
        // Where a directory below a root is told, a file met twice counts where du
        // counts it: at its first name in du's order.
        defer: options.stream.is_some()
            && options.threads != 1
            && !options.count_links
            && options.max_depth > 0,
        met: links::Met::new(),
    };
    let mut usage = DiskUsage::default();
    for root in roots {
        if run.stopped.load(Relaxed) {
            break;
        }
        // Trailing slashes cut down to one, as du writes the root (`dir//` is `dir/`,
        // and its entries `dir/name`).
        let mut name = crate::walk::path_to_bytes(root.as_ref());
        while name.len() > 1 && name.ends_with(b"//") {
            name.pop();
        }
        let root_buf = crate::walk::bytes_to_path(name.clone());
        let root = root_buf.as_path();
        if run.excluded(&name) {
            continue;
        }
        let follow = options.follow_links || options.follow_roots;
        let m = match sys::stat_path(root, run.ask, follow) {
            Ok(m) => m,
            Err(e) => {
                run.error(&Error::io(root.to_path_buf(), 0, e));
                continue;
            }
        };
        if !run.first_time(&m) {
            continue;
        }
        if !m.file_type().is_dir() {
            let node = UsageNode::file(name, &m);
            run.tell(&Listed {
                path: &node.name,
                depth: 0,
                file_type: node.file_type,
                total: node.total,
                own: node.own,
                latest: options.latest.map(|t| t.of(&m)),
                own_latest: options.latest.map(|t| t.of(&m)),
            });
            if let Some(p) = &options.progress {
                p.entries.fetch_add(1, Relaxed);
                p.bytes.fetch_add(node.total.bytes, Relaxed);
            }
            usage.total += node.total;
            usage.roots.push(node);
            continue;
        }
        // Entries' inode numbers are trusted where the file system is known to give
        // st_ino there, links are not followed (a link's entry is the link's inode) and
        // each link is not counted anyway.
        let exact = !options.follow_links
            && !options.count_links
            && sys::Dir::open(root).is_ok_and(|d| d.entry_inodes_exact());
        let counter = || Counter {
            run: &run,
            root_dev: m.dev,
            exact_dev: exact.then_some(m.dev),
            path: Vec::new(),
            entries: 0,
            bytes: 0,
        };
        let walk = WalkBuilder::new(root)
            .follow_links(options.follow_links)
            .same_file_system(options.same_file_system)
            // Told in du's order: what a worker does next is what is told next. With
            // nothing told below the roots (-s), no order to keep: a huge directory's
            // parts are then shared among the workers.
            .first_subdirectory_first(run.order.is_some() && options.max_depth > 0);
        // With one thread, du's order: depth first, each directory's entries as read,
        // a subdirectory walked where it is met.
        let _ = walk.threads(options.threads).run(counter);
        let node = run
            .result
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            // Not entered (it could not be read): its own size, as du counts it.
            .unwrap_or_else(|| {
                let node = UsageNode::file(name, &m);
                run.tell(&Listed {
                    path: &node.name,
                    depth: 0,
                    file_type: node.file_type,
                    total: node.total,
                    own: node.own,
                    latest: options.latest.map(|t| t.of(&m)),
                    own_latest: options.latest.map(|t| t.of(&m)),
                });
                node
            });
        let mut node = node;
        // What the files counted in du's order added, after the workers' sums.
        if let Some(adj) = run.order.as_ref().and_then(|o| o.root_adjust()) {
            node.total += adj.total;
            node.own += adj.own;
        }
        usage.total += node.total;
        usage.roots.push(node);
    }
    usage.errors = run.errors.into_inner();
    usage
}

// The tests build trees with symbolic links and count blocks as Unix does; the Windows
// backend's du is tested in sys/windows_tests.rs.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::sys::FileType;

    fn tree() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        std::fs::create_dir_all(r.join("a/b/c")).unwrap();
        std::fs::create_dir_all(r.join("d")).unwrap();
        std::fs::write(r.join("a/f"), vec![1u8; 3000]).unwrap();
        std::fs::write(r.join("a/b/c/g"), vec![1u8; 9000]).unwrap();
        std::fs::hard_link(r.join("a/f"), r.join("d/f2")).unwrap();
        std::fs::hard_link(r.join("a/f"), r.join("a/b/f3")).unwrap();
        std::os::unix::fs::symlink("a/f", r.join("link")).unwrap();
        std::fs::File::create(r.join("sparse"))
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        tmp
    }

    fn blocks(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).unwrap().blocks() * 512
    }

    #[test]
    fn usage_counts_hard_links_once_and_links_as_themselves() {
        let tmp = tree();
        let r = tmp.path();
        for threads in [1, 2, 0] {
            let u = disk_usage(&[r], &UsageOptions::new().threads(threads));
            let root = &u.roots[0];
            assert_eq!(u.errors, 0);
            // root, a, a/b, a/b/c, d, f (3 links), g, link, sparse
            assert_eq!(root.total.inodes, 9);
            assert_eq!(root.total.apparent, 3000 + 9000 + 3 + (1 << 30));
            let expect: u64 = [
                "", "a", "a/b", "a/b/c", "d", "a/f", "a/b/c/g", "link", "sparse",
            ]
            .iter()
            .map(|p| blocks(&r.join(p)))
            .sum();
            assert_eq!(root.total.bytes, expect);
            let l = disk_usage(&[r], &UsageOptions::new().count_links(true));
            assert_eq!(l.roots[0].total.inodes, 11);
            assert_eq!(l.roots[0].total.apparent, root.total.apparent + 6000);
        }
    }

    #[test]
    fn usage_keeps_the_asked_depth_and_folds_the_rest() {
        let tmp = tree();
        let r = tmp.path();
        let u = disk_usage(&[r], &UsageOptions::new().max_depth(0));
        assert!(u.roots[0].children.is_empty());
        let all = disk_usage(&[r], &UsageOptions::new());
        assert_eq!(u.roots[0].total, all.roots[0].total);
        let a = all.roots[0]
            .children
            .iter()
            .find(|c| c.name == b"a")
            .unwrap();
        let b = &a.children[0];
        assert_eq!(b.name, b"b");
        // -S: a's own is a itself and a/f, without b; but a/f has links in a/b and d,
        // and is counted where the walk meets it first (in a/b when a lists b before
        // f, in d when a worker gets there first): once, in a, b or d.
        let d = all.roots[0]
            .children
            .iter()
            .find(|c| c.name == b"d")
            .unwrap();
        assert_eq!(a.own.inodes + b.own.inodes + d.own.inodes, 3 + 1);
        assert_eq!(a.total.inodes, a.own.inodes + b.total.inodes);
        let files = disk_usage(
            &[r],
            &UsageOptions::new()
                .max_depth(1)
                .keep_files(true)
                .keep_largest(1),
        );
        assert_eq!(files.roots[0].children.len(), 1, "the largest entry alone");
        assert_eq!(files.roots[0].children[0].name, b"a");
    }

    #[test]
    fn usage_counts_a_file_once_across_roots() {
        let tmp = tree();
        let r = tmp.path();
        let u = disk_usage(
            &[r.join("a"), r.join("d"), r.join("a/b")],
            &UsageOptions::new(),
        );
        // d/f2 is a/f, met first under a; a/b was counted within a.
        assert_eq!(u.roots.len(), 2);
        assert_eq!(u.roots[1].total.inodes, 1);
        assert_eq!(u.total.inodes, u.roots[0].total.inodes + 1);
    }

    #[test]
    fn usage_roots_that_are_files_links_or_missing() {
        let tmp = tree();
        let r = tmp.path();
        let errors = Arc::new(AtomicU64::new(0));
        let seen = errors.clone();
        let opts = UsageOptions::new().on_error(move |_| {
            seen.fetch_add(1, Relaxed);
        });
        let u = disk_usage(&[r.join("link"), r.join("missing"), r.join("a/f")], &opts);
        assert_eq!(u.errors, 1);
        assert_eq!(errors.load(Relaxed), 1);
        assert_eq!(u.roots[0].file_type, FileType::Symlink);
        assert_eq!(u.roots[0].total.apparent, 3);
        assert_eq!(u.roots[1].total.apparent, 3000);
        let followed = disk_usage(&[r.join("link")], &UsageOptions::new().follow_links(true));
        assert_eq!(followed.roots[0].total.apparent, 3000);
    }

    #[test]
    fn usage_excludes_paths() {
        let tmp = tree();
        let r = tmp.path();
        let u = disk_usage(
            &[r],
            &UsageOptions::new().exclude(|p: &[u8]| p.ends_with(b"/a")),
        );
        // Without a: root, d, d/f2, link, sparse.
        assert_eq!(u.roots[0].total.inodes, 5);
    }
}
