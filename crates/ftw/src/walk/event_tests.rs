//! Events, as a property over random trees: in every walker (serial, sorted, parallel),
//! under small handle budgets, with skips, stops and directories that cannot be opened,
//! every directory entered is left exactly once, after everything below it; states and
//! handles are those of the right directories. And two visitors built on events alone:
//! one that removes a tree, one that adds up its sizes.

use super::node::UNOPENABLE;
use super::*;
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::{MetadataExt, symlink};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Enter {
        path: Vec<u8>,
        parent: Option<Vec<u8>>,
    },
    Entry {
        path: Vec<u8>,
        state: Option<Vec<u8>>,
    },
    Error {
        path: Vec<u8>,
    },
    Leave {
        path: Vec<u8>,
        state: Vec<u8>,
    },
    /// Something the visitor found wrong (a handle of the wrong directory...).
    Bad(String),
}

/// What a recorder does besides recording.
#[derive(Clone, Copy)]
struct Plan {
    /// Skip directories named `skip`.
    skip: bool,
    /// Stop after this many entries (all workers together).
    stop_after: Option<usize>,
    /// Check that handles are given, and are the directories they stand for.
    check_handles: bool,
}

#[derive(Clone)]
struct Rec<'a> {
    log: &'a Mutex<Vec<Ev>>,
    seen: &'a AtomicUsize,
    plan: Plan,
}

fn id_of_path(path: &[u8]) -> Option<(u64, u64)> {
    let m = std::fs::metadata(bytes_to_path(path.to_vec())).ok()?;
    Some((m.dev(), m.ino()))
}

fn id_of_dir(dir: &crate::sys::Dir) -> Option<(u64, u64)> {
    dir.stat(crate::sys::StatMask::TYPE)
        .ok()
        .map(|m| (m.dev, m.ino))
}

fn parent_of(path: &[u8]) -> Vec<u8> {
    let i = path.iter().rposition(|&b| b == b'/').expect("below a root");
    path[..i].to_vec()
}

impl Rec<'_> {
    fn push(&self, ev: Ev) {
        self.log.lock().unwrap().push(ev);
    }

    /// Checks that `dir` is the directory at `path` (when handles are checked).
    fn check_dir(&self, what: &str, dir: Option<&crate::sys::Dir>, path: &[u8]) {
        if !self.plan.check_handles {
            return;
        }
        let ok = match dir {
            Some(d) => id_of_dir(d).is_some() && id_of_dir(d) == id_of_path(path),
            None => false,
        };
        if !ok {
            self.push(Ev::Bad(format!(
                "{what}: handle {} for {}",
                if dir.is_some() {
                    "of another directory"
                } else {
                    "missing"
                },
                String::from_utf8_lossy(path)
            )));
        }
    }
}

impl Visitor for Rec<'_> {
    type State = Vec<u8>;

    fn enter(&mut self, d: &DirEvent<'_>, parent: Option<&Vec<u8>>) -> Vec<u8> {
        self.check_dir("enter", d.dir(), d.path());
        if d.depth() > 0 {
            if let Some(parent) = d.parent_dir() {
                self.check_dir("enter's parent", Some(parent), &parent_of(d.path()));
            }
            let name = d.c_name().map(|c| c.to_bytes().to_vec());
            let want = d.path().rsplit(|&b| b == b'/').next().map(<[u8]>::to_vec);
            if name != want {
                self.push(Ev::Bad(format!("enter: name {name:?} for {:?}", d.path())));
            }
        }
        self.push(Ev::Enter {
            path: d.path().to_vec(),
            parent: parent.cloned(),
        });
        d.path().to_vec()
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&Vec<u8>>) -> Control {
        let e = match item {
            Ok(e) => e,
            Err(err) => {
                self.push(Ev::Error {
                    path: path_to_bytes(err.path()),
                });
                return Control::Continue;
            }
        };
        let mut path = Vec::new();
        e.write_path(&mut path);
        if e.depth() > 0 {
            self.check_dir("entry", e.dir(), e.parent_path());
            if e.c_name().map(|c| c.to_bytes()) != Some(e.name()) {
                self.push(Ev::Bad(format!("entry: c_name of {path:?}")));
            }
        }
        self.push(Ev::Entry {
            path,
            state: dir.cloned(),
        });
        let n = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        if self.plan.stop_after.is_some_and(|k| n >= k) {
            return Control::Stop;
        }
        if self.plan.skip && e.name() == b"skip" {
            return Control::Skip;
        }
        Control::Continue
    }

    fn leave(&mut self, d: &DirEvent<'_>, state: Vec<u8>, parent: Option<&Vec<u8>>) {
        if parent.cloned() != (d.depth() > 0).then(|| parent_of(d.path())) {
            self.push(Ev::Bad(format!(
                "leave: parent state {parent:?} for {:?}",
                d.path()
            )));
        }
        self.check_dir("leave", d.dir(), d.path());
        if d.depth() > 0 {
            self.check_dir("leave's parent", d.parent_dir(), &parent_of(d.path()));
        }
        self.push(Ev::Leave {
            path: d.path().to_vec(),
            state,
        });
    }
}

fn below(path: &[u8], dir: &[u8]) -> bool {
    path.len() > dir.len() && path.starts_with(dir) && path[dir.len()] == b'/'
}

/// Checks the order of a walk's events; returns the paths reported as entries.
fn check_order(log: &[Ev], root: &[u8], stopped: bool) -> BTreeSet<String> {
    let mut entered: HashMap<&[u8], usize> = HashMap::new();
    let mut left: HashMap<&[u8], usize> = HashMap::new();
    let mut entries = BTreeSet::new();
    for (i, ev) in log.iter().enumerate() {
        match ev {
            Ev::Bad(msg) => panic!("{msg}"),
            Ev::Enter { path, parent } => {
                assert!(entered.insert(path, i).is_none(), "entered twice: {path:?}");
                let want = (path.as_slice() != root).then(|| parent_of(path));
                assert_eq!(parent, &want, "parent state on entering {path:?}");
            }
            Ev::Leave { path, state } => {
                assert!(
                    entered.contains_key(path.as_slice()),
                    "left, never entered: {path:?}"
                );
                assert!(left.insert(path, i).is_none(), "left twice: {path:?}");
                assert_eq!(state, path, "state given back on leaving");
            }
            Ev::Entry { path, state } => {
                entries.insert(String::from_utf8_lossy(path).into_owned());
                let want = (path.as_slice() != root).then(|| parent_of(path));
                assert_eq!(state, &want, "state of the directory of {path:?}");
            }
            Ev::Error { .. } => {}
        }
    }
    if !stopped {
        for path in entered.keys() {
            assert!(left.contains_key(path), "entered, never left: {path:?}");
        }
    }
    // Everything below a directory happens between its entering and its leaving.
    for (i, ev) in log.iter().enumerate() {
        let path = match ev {
            Ev::Enter { path, .. } | Ev::Leave { path, .. } | Ev::Entry { path, .. } => path,
            Ev::Error { .. } | Ev::Bad(_) => continue,
        };
        for (dir, &at) in &entered {
            if below(path, dir) {
                assert!(at < i, "{path:?} seen before {dir:?} was entered");
                if let Some(&out) = left.get(dir) {
                    assert!(i < out, "{path:?} seen after {dir:?} was left");
                }
            }
        }
    }
    entries
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Serial,
    Sorted,
    Parallel,
}

fn run(mode: Mode, b: WalkBuilder, plan: Plan) -> Vec<Ev> {
    let log = Mutex::new(Vec::new());
    let seen = AtomicUsize::new(0);
    let rec = Rec {
        log: &log,
        seen: &seen,
        plan,
    };
    match mode {
        Mode::Serial => b.threads(1).build().visit_events(&mut rec.clone()),
        Mode::Sorted => b
            .sort(true)
            .threads(3)
            .build()
            .visit_events(&mut rec.clone()),
        Mode::Parallel => {
            b.threads(8).build_parallel().visit_events(|| rec.clone());
        }
    }
    log.into_inner().unwrap()
}

/// What a walk that follows no link and skips nothing must report: every entry, but
/// nothing below a directory that cannot be opened.
fn expected(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![root.to_path_buf()];
    out.insert(root.to_string_lossy().into_owned());
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            out.insert(e.path().to_string_lossy().into_owned());
            let name = e.file_name();
            if e.file_type().unwrap().is_dir()
                && !path_to_bytes(Path::new(&name)).starts_with(UNOPENABLE)
            {
                todo.push(e.path());
            }
        }
    }
    out
}

fn component() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a",
        "b",
        "c d",
        "skip",
        "ftw-test-unopenable",
        "\u{e9}",
    ])
}

fn build(root: &Path, entries: &[(Vec<&str>, u8)]) {
    for (comps, kind) in entries {
        let mut path = root.to_path_buf();
        for c in &comps[..comps.len() - 1] {
            path.push(c);
        }
        if std::fs::create_dir_all(&path).is_err() {
            continue;
        }
        path.push(comps.last().unwrap());
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        let _ = match kind {
            0 | 1 => std::fs::write(&path, b"x"),
            2 | 3 => std::fs::create_dir(&path),
            // A link to the root: followed, it is a loop to report.
            4 => symlink(root, &path),
            _ => symlink("a", &path),
        };
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_directory_entered_is_left_once_after_all_below_it(
        entries in prop::collection::vec((prop::collection::vec(component(), 1..6), 0u8..6), 1..40),
        stop_after in 1usize..30,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("t");
        std::fs::create_dir(&root).unwrap();
        build(&root, &entries);
        let root_bytes = path_to_bytes(&root);
        let want = expected(&root);
        for mode in [Mode::Serial, Mode::Sorted, Mode::Parallel] {
            for budget in [6, 64] {
                for keep in [false, true] {
                    let b = || WalkBuilder::new(&root).fd_budget(budget).keep_handles(keep);
                    let plan = Plan { skip: false, stop_after: None, check_handles: keep };
                    let what = format!("{mode:?}, budget {budget}, keep_handles {keep}");
                    // Everything.
                    let log = run(mode, b(), plan);
                    let got = check_order(&log, &root_bytes, false);
                    prop_assert_eq!(&got, &want, "{}", what);
                    // Following links: loops are reported, the order holds.
                    let log = run(mode, b().follow_links(true), plan);
                    check_order(&log, &root_bytes, false);
                    // Skipping: nothing below a skipped directory.
                    let log = run(mode, b(), Plan { skip: true, ..plan });
                    let got = check_order(&log, &root_bytes, false);
                    for p in &got {
                        let skipped_above = p
                            .split('/')
                            .rev()
                            .skip(1)
                            .any(|c| c == "skip");
                        prop_assert!(!skipped_above, "{}: {:?} below a skipped directory", what, p);
                    }
                    // Stopping: what was left was entered, and left once.
                    let log = run(mode, b(), Plan { stop_after: Some(stop_after), ..plan });
                    let got = check_order(&log, &root_bytes, true);
                    if mode != Mode::Parallel {
                        prop_assert!(got.len() <= stop_after, "{}: went on after a stop", what);
                    }
                }
            }
        }
    }
}

/// A tree with a bit of everything: wide directories, a comb, a deep chain. Returns the
/// number of entries made below `root`.
fn mixed_tree(root: &Path, chain: usize) -> usize {
    for i in 0..20 {
        let d = root.join(format!("wide/d{i}"));
        std::fs::create_dir_all(&d).unwrap();
        for j in 0..30 {
            std::fs::write(d.join(format!("f{j}")), vec![b'x'; i * 100 + j]).unwrap();
        }
    }
    let mut comb = root.join("comb");
    for i in 0..100 {
        std::fs::create_dir_all(comb.join("b")).unwrap();
        std::fs::write(comb.join("b/f"), vec![b'y'; i]).unwrap();
        symlink("b/f", comb.join("link")).unwrap();
        comb.push("a");
    }
    std::fs::create_dir_all(&comb).unwrap();
    // The chain is made relative to handles: its paths outgrow PATH_MAX.
    use rustix::fs::{self as rfs, CWD, Mode, OFlags};
    let dir_flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
    let mut dir = rfs::openat(CWD, root, dir_flags, Mode::empty()).unwrap();
    for _ in 0..chain {
        rfs::mkdirat(&dir, c"n", Mode::from_raw_mode(0o755)).unwrap();
        let f = rfs::openat(
            &dir,
            c"file",
            OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&f, b"chain").unwrap();
        dir = rfs::openat(&dir, c"n", dir_flags, Mode::empty()).unwrap();
    }
    // wide, its 20 directories of 30 files; comb, its 100 levels of a, b, b/f and link;
    // the chain's directory and file a level.
    (1 + 20 + 600) + (1 + 100 * 4) + 2 * chain
}

/// Removes what it walks: each entry that is not a directory on entry, each directory
/// on leaving (through its parent's handle). Counts what it removed and what failed.
#[derive(Clone)]
struct Remover<'a> {
    removed: &'a AtomicUsize,
    failed: &'a Mutex<Vec<String>>,
    /// The walk closes each directory's handle before leaving it
    /// ([`WalkBuilder::close_before_leave`]); else it gives it on leaving.
    closed: bool,
}

impl Remover<'_> {
    fn fail(&self, what: String) {
        self.failed.lock().unwrap().push(what);
    }
}

impl Visitor for Remover<'_> {
    type State = ();

    fn enter(&mut self, _: &DirEvent<'_>, _: Option<&()>) {}

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, _: Option<&()>) -> Control {
        match item {
            Err(e) => self.fail(e.to_string()),
            Ok(e) if e.is_dir() || e.depth() == 0 => {}
            Ok(e) => match (e.dir(), e.c_name()) {
                (Some(dir), Some(name)) => match dir.unlink_at(name) {
                    Ok(()) => {
                        self.removed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(err) => self.fail(format!("unlink {:?}: {err}", e.path())),
                },
                _ => self.fail(format!("no handle for {:?}", e.path())),
            },
        }
        Control::Continue
    }

    fn leave(&mut self, d: &DirEvent<'_>, _: (), _: Option<&()>) {
        if d.dir().is_some() == self.closed {
            let open = if self.closed { "open" } else { "closed" };
            self.fail(format!("{:?} left with its handle {open}", d.to_path_buf()));
        }
        if d.depth() == 0 {
            return;
        }
        match (d.parent_dir(), d.c_name()) {
            (Some(parent), Some(name)) => match parent.remove_dir_at(name) {
                Ok(()) => {
                    self.removed.fetch_add(1, Ordering::Relaxed);
                }
                Err(err) => self.fail(format!("rmdir {:?}: {err}", d.to_path_buf())),
            },
            _ => self.fail(format!("no parent handle for {:?}", d.to_path_buf())),
        }
    }
}

/// The body of [`a_tree_is_removed_with_events_alone_under_ulimit_n_32`], run in a
/// child process with the open-file limit lowered; `FTW_TEST_TREE` names the tree.
#[test]
#[ignore = "run by a_tree_is_removed_with_events_alone_under_ulimit_n_32"]
fn remove_with_events_child() {
    let Some(root) = std::env::var_os("FTW_TEST_TREE") else {
        return;
    };
    let threads: usize = std::env::var("FTW_TEST_THREADS").unwrap().parse().unwrap();
    let closed = std::env::var_os("FTW_TEST_CLOSE").is_some();
    let removed = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let rm = Remover {
        removed: &removed,
        failed: &failed,
        closed,
    };
    let b = WalkBuilder::new(&root)
        .keep_handles(true)
        .close_before_leave(closed);
    if threads == 1 {
        b.threads(1).build().visit_events(&mut rm.clone());
    } else {
        b.threads(threads)
            .build_parallel()
            .visit_events(|| rm.clone());
    }
    let failed = failed.into_inner().unwrap();
    assert!(
        failed.is_empty(),
        "{} failures: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
    println!("removed {}", removed.into_inner());
    println!("opened {}", super::node::OPENED.load(Ordering::Relaxed));
}

#[test]
fn a_tree_is_removed_with_events_alone_under_ulimit_n_32() {
    for (threads, closed) in [(1, false), (8, false), (1, true), (8, true)] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("t");
        std::fs::create_dir(&root).unwrap();
        // The portable backend works by paths: a chain past PATH_MAX is beyond it.
        let chain = if cfg!(ftw_portable) { 100 } else { 3000 };
        let total = mixed_tree(&root, chain);
        let mut child = std::process::Command::new("sh");
        if closed {
            child.env("FTW_TEST_CLOSE", "1");
        }
        let out = child
            .arg("-c")
            .arg("ulimit -n 32 && exec \"$0\" \"$@\"")
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "walk::event_tests::remove_with_events_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("FTW_TEST_TREE", &root)
            .env("FTW_TEST_THREADS", threads.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "-j {threads} closed {closed}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("removed {total}")),
            "-j {threads}: {stdout}"
        );
        // The chain is opened, and had back for its leaves, a bounded number of times a
        // level, however deep: reopening from an ancestor each time would cost its
        // depth (some 4.5 million opens here). In parallel under this budget (8
        // handles, 3 to share), the comb's levels may have to open from an older
        // ancestor while others hold the shared handles: its 100 levels, at most 100
        // components each.
        let opened: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("opened "))
            .and_then(|n| n.parse().ok())
            .expect("the count of directories opened");
        let dirs = (1 + 20 + 1 + 200 + chain) as u64;
        let comb = if threads == 1 { 0 } else { 100 * 100 };
        assert!(
            opened <= 4 * dirs + comb,
            "-j {threads}: {opened} opens for {dirs} directories"
        );
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "-j {threads}");
    }
}

/// Adds up apparent sizes: each entry's (not following links) on entry, each
/// directory's own on entering, folded into the parent's total on leaving.
#[derive(Clone)]
struct Sizes<'a> {
    total: &'a AtomicU64,
}

use std::sync::atomic::AtomicU64;

impl Visitor for Sizes<'_> {
    type State = AtomicU64;

    fn enter(&mut self, d: &DirEvent<'_>, _: Option<&AtomicU64>) -> AtomicU64 {
        let own = d
            .dir()
            .expect("kept")
            .stat(crate::sys::StatMask::SIZE)
            .unwrap();
        AtomicU64::new(own.size)
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&AtomicU64>) -> Control {
        let e = item.expect("readable");
        if let (Some(d), Some(name), Some(total), false) = (e.dir(), e.c_name(), dir, e.is_dir()) {
            let m = d.stat_at(name, crate::sys::StatMask::SIZE, false).unwrap();
            total.fetch_add(m.size, Ordering::Relaxed);
        }
        Control::Continue
    }

    fn leave(&mut self, _: &DirEvent<'_>, total: AtomicU64, parent: Option<&AtomicU64>) {
        // Into the parent's total; the root's is the grand total.
        match parent {
            Some(up) => up.fetch_add(total.into_inner(), Ordering::Relaxed),
            None => self.total.fetch_add(total.into_inner(), Ordering::Relaxed),
        };
    }
}

#[test]
fn sizes_summed_on_leaving_equal_du_apparent_total() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir(&root).unwrap();
    mixed_tree(&root, 200);
    let du = std::process::Command::new("du")
        .arg("-sb")
        .arg(&root)
        .output()
        .expect("du runs");
    let du: u64 = String::from_utf8_lossy(&du.stdout)
        .split('\t')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    for mode in [Mode::Serial, Mode::Sorted, Mode::Parallel] {
        for budget in [8, 1024] {
            let total = AtomicU64::new(0);
            let sizes = Sizes { total: &total };
            let b = WalkBuilder::new(&root).keep_handles(true).fd_budget(budget);
            match mode {
                Mode::Serial => b.threads(1).build().visit_events(&mut sizes.clone()),
                Mode::Sorted => b.sort(true).build().visit_events(&mut sizes.clone()),
                Mode::Parallel => {
                    b.threads(4).build_parallel().visit_events(|| sizes.clone());
                }
            }
            assert_eq!(total.into_inner(), du, "{mode:?}, budget {budget}");
        }
    }
}

#[test]
fn filter_entry_applies_in_every_walker() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for d in ["keep/a", "keep/node_modules/x", "node_modules/y", "other"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("keep/a/f"), b"").unwrap();
    let filtered = |b: WalkBuilder| b.min_depth(1).filter_entry(|e| e.name() != b"node_modules");
    let mut want: Vec<PathBuf> = ["keep", "keep/a", "keep/a/f", "other"]
        .iter()
        .map(|p| root.join(p))
        .collect();
    want.sort();
    for (what, mut got) in [
        (
            "serial",
            filtered(WalkBuilder::new(root).threads(1))
                .build()
                .map(|e| e.unwrap().into_path())
                .collect::<Vec<_>>(),
        ),
        (
            "sorted",
            filtered(WalkBuilder::new(root).sort(true).threads(4))
                .build()
                .map(|e| e.unwrap().into_path())
                .collect(),
        ),
        ("parallel", {
            let got = Mutex::new(Vec::new());
            filtered(WalkBuilder::new(root).threads(4))
                .build_parallel()
                .visit(|| {
                    |e: Result<&Entry<'_>, Error>| {
                        got.lock().unwrap().push(e.unwrap().path());
                        Control::Continue
                    }
                });
            got.into_inner().unwrap()
        }),
    ] {
        got.sort();
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn a_directory_read_in_parts_is_walked_as_if_read_whole() {
    // A huge directory is read a part at a time, each handed out before the next is
    // read: here parts of a few entries, in a directory of files and subdirectories
    // (with subdirectories of their own), with and without handles kept, the first
    // subdirectory first or not, with fewer handles than directories. Every entry is
    // reported once, in its directory, between its entering and its leaving; the
    // totals summed on leaving are du's; and removal through the handles empties it.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("wide");
    std::fs::create_dir(&root).unwrap();
    for i in 0..400 {
        if i % 5 == 0 {
            let sub = root.join(format!("d{i:03}"));
            std::fs::create_dir_all(sub.join("inner")).unwrap();
            std::fs::write(sub.join("inner/f"), b"xyz").unwrap();
            std::fs::write(sub.join("g"), vec![b'x'; i]).unwrap();
        } else {
            std::fs::write(root.join(format!("f{i:03}")), vec![b'y'; i]).unwrap();
        }
    }
    let rootb = root.as_os_str().as_encoded_bytes().to_vec();
    let want = expected(&root);
    let du: u64 = String::from_utf8_lossy(
        &std::process::Command::new("du")
            .arg("-sb")
            .arg(&root)
            .output()
            .expect("du runs")
            .stdout,
    )
    .split('\t')
    .next()
    .unwrap()
    .parse()
    .unwrap();
    for part in [1, 7, 64, 1000] {
        for first in [false, true] {
            for (keep, budget) in [(false, 1024), (true, 1024), (true, 8)] {
                let mut b = WalkBuilder::new(&root)
                    .first_subdirectory_first(first)
                    .keep_handles(keep)
                    .fd_budget(budget);
                b.opts.hooks.part = part;
                let plan = Plan {
                    skip: false,
                    stop_after: None,
                    check_handles: keep,
                };
                let log = run(Mode::Parallel, b, plan);
                let entries = check_order(&log, &rootb, false);
                assert_eq!(
                    entries, want,
                    "part {part}, first {first}, keep {keep}, budget {budget}"
                );
                let total = AtomicU64::new(0);
                let sizes = Sizes { total: &total };
                let mut b = WalkBuilder::new(&root).keep_handles(true).threads(3);
                b.opts.hooks.part = part;
                b.build_parallel().visit_events(|| sizes.clone());
                assert_eq!(total.into_inner(), du, "part {part}");
            }
        }
    }
    // Removed as it is read, a part at a time (as GNU rm removes a huge directory).
    let removed = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let rm = Remover {
        removed: &removed,
        failed: &failed,
        closed: false,
    };
    let mut b = WalkBuilder::new(&root).keep_handles(true).threads(3);
    b.opts.hooks.part = 5;
    b.build_parallel().visit_events(|| rm.clone());
    assert!(failed.into_inner().unwrap().is_empty());
    assert_eq!(removed.into_inner(), want.len() - 1);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

#[test]
fn a_stop_ends_the_reading_of_a_directory_whose_parts_are_handed_out() {
    // A visitor that stops at the first entry (find --max-results 1): the worker that
    // reads a huge directory, its parts handed out, reads no further once the walk is
    // stopped (it read on to the end: some 30 parts here, at 100 ms each).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("wide");
    std::fs::create_dir(&root).unwrap();
    for i in 0..1200 {
        std::fs::write(root.join(format!("f{i:03}")), b"").unwrap();
    }
    for threads in [2, 4] {
        let mut b = WalkBuilder::new(&root)
            .keep_handles(true)
            .buffer_size(512)
            .threads(threads);
        b.opts.hooks.part = 10;
        b.opts.hooks.read_delay = std::time::Duration::from_millis(100);
        let seen = AtomicUsize::new(0);
        let start = std::time::Instant::now();
        b.build_parallel().visit(|| {
            |e: Result<&Entry<'_>, Error>| {
                if e.unwrap().depth() == 0 {
                    return Control::Continue;
                }
                seen.fetch_add(1, Ordering::SeqCst);
                Control::Stop
            }
        });
        let took = start.elapsed();
        assert!(seen.into_inner() >= 1);
        assert!(
            took < std::time::Duration::from_millis(1500),
            "{threads} threads: the walk went on for {took:?} after its stop"
        );
    }
}
