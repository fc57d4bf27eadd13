//! Walker tests that reach inside: forced `DT_UNKNOWN`, the handle budget, reopening.

use super::*;
use crate::sys::FileType;
use std::os::unix::fs::symlink;

fn listing(b: WalkBuilder) -> Vec<(PathBuf, FileType, usize)> {
    let mut v: Vec<_> = b
        .build()
        .map(|e| {
            let e = e.expect("no errors in this tree");
            (e.path().to_path_buf(), e.file_type(), e.depth())
        })
        .collect();
    v.sort();
    v
}

fn sample_tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    std::fs::create_dir_all(r.join("a/b/c")).unwrap();
    std::fs::create_dir_all(r.join("d")).unwrap();
    std::fs::write(r.join("a/file"), b"x").unwrap();
    std::fs::write(r.join("a/b/c/deep"), b"x").unwrap();
    symlink("a", r.join("link-dir")).unwrap();
    symlink("a/file", r.join("link-file")).unwrap();
    symlink("missing", r.join("dangling")).unwrap();
    tmp
}

#[test]
fn unknown_d_type_is_resolved_by_stat_with_the_same_result() {
    let tmp = sample_tree();
    for follow in [false, true] {
        let normal = listing(WalkBuilder::new(tmp.path()).follow_links(follow));
        let mut forced = WalkBuilder::new(tmp.path()).follow_links(follow);
        forced.opts.hooks.forget_types = true;
        let forced = listing(forced);
        assert_eq!(normal, forced, "follow_links({follow})");
        // And the types are the real ones, not Unknown.
        let ty = |name: &str| forced.iter().find(|(p, _, _)| p.ends_with(name)).unwrap().1;
        assert_eq!(ty("a/b"), FileType::Dir);
        assert_eq!(ty("a/file"), FileType::File);
        assert_eq!(ty("dangling"), FileType::Symlink);
        assert_eq!(
            ty("link-dir"),
            if follow {
                FileType::Dir
            } else {
                FileType::Symlink
            }
        );
        assert!(forced.iter().all(|(_, t, _)| *t != FileType::Unknown));
    }
}

/// A comb: a chain of `depth` directories `a`, each level also holding a directory
/// `b` with a file, visited after `a` in sorted order, so every level's handle is
/// wanted again after its subtree.
fn comb(depth: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = tmp.path().to_path_buf();
    for _ in 0..depth {
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("b/f"), b"").unwrap();
        dir.push("a");
        std::fs::create_dir(&dir).unwrap();
    }
    tmp
}

#[test]
fn handle_budget_is_kept_and_the_listing_is_complete() {
    let tmp = comb(60);
    let full = listing(WalkBuilder::new(tmp.path()).sort(true));
    assert_eq!(full.len(), 1 + 60 * 3);
    for budget in [3, 4, 8] {
        for forget_types in [false, true] {
            let mut b = WalkBuilder::new(tmp.path()).sort(true).fd_budget(budget);
            b.opts.hooks.forget_types = forget_types;
            let mut walk = b.build();
            let mut seen = Vec::new();
            let mut most = 0;
            while let Some(e) = walk.next_entry() {
                let e = e.expect("no errors");
                seen.push((e.path(), e.file_type(), e.depth()));
                most = most.max(walk.open_handles());
            }
            assert!(most <= budget, "budget {budget}: {most} handles were open");
            seen.sort();
            assert_eq!(seen, full, "budget {budget}");
        }
    }
}

// The portable backend's handles are paths: a kept one follows a rename too.
#[cfg(not(ftw_portable))]
#[test]
fn a_directory_replaced_while_its_handle_was_closed_is_reported() {
    let tmp = comb(12);
    let mut walk = WalkBuilder::new(tmp.path()).sort(true).fd_budget(3).build();
    let mut errors = Vec::new();
    let mut swapped = false;
    let mut after_swap = Vec::new();
    while let Some(item) = walk.next_entry() {
        match item {
            Ok(e) => {
                let path = e.path();
                if swapped {
                    after_swap.push(path.clone());
                }
                // Deep in the first chain, swap the top-level `a` for another directory.
                if !swapped && e.depth() == 10 {
                    let top = tmp.path().join("a");
                    std::fs::rename(&top, tmp.path().join("moved")).unwrap();
                    // An impostor of the same shape: only the identity check tells.
                    let mut dir = top.clone();
                    for _ in 0..11 {
                        std::fs::create_dir_all(dir.join("b")).unwrap();
                        std::fs::write(dir.join("b/f"), b"").unwrap();
                        std::fs::write(dir.join("b/impostor"), b"").unwrap();
                        dir.push("a");
                    }
                    std::fs::create_dir_all(&dir).unwrap();
                    swapped = true;
                }
            }
            Err(e) => errors.push(e),
        }
    }
    assert!(swapped);
    // The walk goes on in the directories it entered (climbing back through `..`,
    // checked), now under `moved`, or reports the swap where it must reopen one by
    // name; it never lists the impostor's entries as the old tree's.
    for e in &errors {
        assert!(e.path().starts_with(tmp.path()), "{e}");
        assert!(
            e.to_string().contains("directory replaced during the walk"),
            "{e}"
        );
    }
    assert!(
        !after_swap.iter().any(|p| p.ends_with("impostor")),
        "listed the impostor: {after_swap:?}"
    );
}

#[test]
fn skip_prunes_before_opening_and_stop_ends() {
    let tmp = sample_tree();
    let mut names = Vec::new();
    WalkBuilder::new(tmp.path()).sort(true).build().visit(|e| {
        let e = e.unwrap();
        names.push(e.path());
        if e.name() == b"a" {
            Control::Skip
        } else if e.name() == b"dangling" {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    let rel: Vec<_> = names
        .iter()
        .map(|p| p.strip_prefix(tmp.path()).unwrap().to_path_buf())
        .collect();
    assert_eq!(
        rel,
        vec![
            PathBuf::from(""),
            PathBuf::from("a"),
            PathBuf::from("d"),
            PathBuf::from("dangling")
        ]
    );
}

#[test]
fn loop_through_a_link_is_reported_once_and_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("x/y")).unwrap();
    symlink("../..", tmp.path().join("x/y/back")).unwrap();
    let mut errors = Vec::new();
    let mut count = 0;
    for item in WalkBuilder::new(tmp.path()).follow_links(true).build() {
        match item {
            Ok(_) => count += 1,
            Err(e) => errors.push(e),
        }
    }
    assert_eq!(count, 3, "root, x, x/y");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path(), tmp.path().join("x/y/back"));
    assert_eq!(errors[0].loop_ancestor(), Some(tmp.path()));
}

#[test]
fn a_panicking_visitor_ends_the_parallel_walk_with_its_panic() {
    let tmp = comb(20);
    let result = std::panic::catch_unwind(|| {
        WalkBuilder::new(tmp.path())
            .threads(2)
            .build_parallel()
            .visit(|| |_: Result<&Entry<'_>, Error>| -> Control { panic!("visitor failed") });
    });
    assert!(
        result.is_err(),
        "the panic reaches the caller (and nothing hangs)"
    );
}

/// A bushy tree: 6 directories of 4 subdirectories, each with files and a short chain
/// below it, a link back up to the root and a link to a sibling.
fn bushy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    for d in 0..6 {
        for s in 0..4 {
            let sub = r.join(format!("d{d}/s{s}"));
            std::fs::create_dir_all(sub.join("x/y/z")).unwrap();
            for f in 0..3 {
                std::fs::write(sub.join(format!("f{f}")), b"").unwrap();
            }
        }
        symlink("../..", r.join(format!("d{d}/s0/up"))).unwrap();
        symlink("../d0", r.join(format!("d{d}/side"))).unwrap();
    }
    tmp
}

/// Entries (paths, depths) or error paths, in the order the walk gave them, skipping
/// every directory named `skip`. Checks that a walk reading ahead leaves no read behind
/// (every one was taken by the walker or forgotten when skipped).
fn in_order(b: WalkBuilder, skip: &[u8]) -> Vec<(PathBuf, usize, bool)> {
    in_order_held(b, skip, None)
}

/// As [`in_order`], but when `held` is given the walker waits at the root's first
/// entry until `held` is set (by a worker that has read ahead), so that a test of what
/// is read ahead does not depend on whether the workers were scheduled in time.
fn in_order_held(
    b: WalkBuilder,
    skip: &[u8],
    held: Option<&std::sync::atomic::AtomicBool>,
) -> Vec<(PathBuf, usize, bool)> {
    let mut v = Vec::new();
    let mut walk = b.build();
    while let Some(item) = walk.next_entry() {
        match item {
            Ok(e) => {
                if let (Some(flag), 1) = (held, v.len()) {
                    wait_for(flag);
                }
                v.push((e.path().to_path_buf(), e.depth(), true));
                if e.name() == skip {
                    walk.skip_current_dir();
                }
            }
            Err(e) => v.push((e.path().to_path_buf(), e.depth(), false)),
        }
    }
    if let Some(ahead) = &walk.ahead {
        assert_eq!(ahead.left_over(), (0, 0), "reads left over, entries held");
    }
    v
}

#[test]
fn reading_ahead_changes_nothing_the_walk_reports_whatever_its_window() {
    let tmp = bushy();
    for follow in [false, true] {
        for skip in [&b""[..], b"s1", b"x"] {
            let serial = in_order(
                WalkBuilder::new(tmp.path())
                    .sort(true)
                    .follow_links(follow)
                    .threads(1),
                skip,
            );
            assert!(serial.len() > 100, "{}", serial.len());
            // Windows of one directory or one entry make the workers wait for the walker
            // at nearly every step; the default never does in a tree this size.
            for window in [(1, 1), (2, 1 << 20), (3, 5), (16, 40), ahead::WINDOW] {
                for threads in [2, 3, 5] {
                    let mut b = WalkBuilder::new(tmp.path())
                        .sort(true)
                        .follow_links(follow)
                        .threads(threads);
                    b.opts.hooks.ahead_window = window;
                    assert_eq!(
                        in_order(b, skip),
                        serial,
                        "follow {follow}, skip {skip:?}, window {window:?}, {threads} threads"
                    );
                }
            }
        }
    }
}

#[test]
fn reading_ahead_with_a_filter_reads_nothing_the_filter_leaves_out() {
    // The filter leaves out every directory named `x` (and so all below it) and the
    // files named `f1`: the workers must read ahead (the walk has more than one
    // thread) and never a directory the walker would not enter.
    let tmp = bushy();
    let keep = |e: &Entry<'_>| e.name() != b"x" && e.name() != b"f1";
    for follow in [false, true] {
        let serial = in_order(
            WalkBuilder::new(tmp.path())
                .sort(true)
                .follow_links(follow)
                .threads(1)
                .filter_entry(keep),
            b"",
        );
        assert!(serial.len() > 50, "{}", serial.len());
        assert!(
            !serial.iter().any(|(p, ..)| p.ends_with("x/y")),
            "{serial:?}"
        );
        for window in [(2, 1 << 20), (16, 40), ahead::WINDOW] {
            let read = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let mut b = WalkBuilder::new(tmp.path())
                .sort(true)
                .follow_links(follow)
                .threads(3)
                .filter_entry(keep);
            b.opts.hooks.ahead_window = window;
            let seen = read.clone();
            let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = started.clone();
            b.opts.hooks.ahead_fault = Some(Fault(std::sync::Arc::new(move |path: &[u8]| {
                seen.lock().unwrap().push(path.to_vec());
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            })));
            let mut walk = b.build();
            let mut v = Vec::new();
            while let Some(item) = walk.next_entry() {
                match item {
                    Ok(e) => {
                        // Hold the walker at the root's first entry until a worker reads.
                        if v.len() == 1 {
                            wait_for(&started);
                        }
                        v.push((e.path().to_path_buf(), e.depth(), true));
                    }
                    Err(e) => v.push((e.path().to_path_buf(), e.depth(), false)),
                }
            }
            assert_eq!(v, serial, "follow {follow}, window {window:?}");
            let read = read.lock().unwrap();
            assert!(!read.is_empty(), "nothing was read ahead");
            assert!(
                !read
                    .iter()
                    .any(|p| p.split(|&b| b == b'/').any(|c| c == b"x")),
                "read ahead below a directory left out: {:?}",
                read.iter()
                    .map(|p| String::from_utf8_lossy(p))
                    .collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn reading_ahead_beside_ignore_rules_reads_nothing_they_leave_out() {
    // Ignore files at several depths (one of them unreadable: a link to itself), made into rules by the workers as the walker would make them: the
    // walk reports what a walk on one thread reports, errors in the same places, and no
    // directory the rules leave out is read.
    let tmp = bushy();
    let r = tmp.path();
    std::fs::write(r.join(".ignore"), "x/\n").unwrap();
    std::fs::write(r.join("d1/.ignore"), "f1\ns2/\n").unwrap();
    std::fs::write(r.join("d2/s3/.ignore"), "!x/\nz\n").unwrap();
    symlink(".ignore", r.join("d4/.ignore")).unwrap();
    let rules = || crate::filter::Ignore::new(crate::filter::IgnoreOptions::default());
    for follow in [false, true] {
        let walk = |threads| {
            WalkBuilder::new(r)
                .sort(true)
                .follow_links(follow)
                .threads(threads)
                .ignore_rules(rules())
        };
        let serial = in_order(walk(1), b"");
        assert!(
            serial.iter().any(|(p, ..)| p.ends_with("d2/s3/x/y")),
            "{serial:?}"
        );
        assert!(!serial.iter().any(|(p, ..)| p.ends_with("d2/s3/x/y/z")));
        assert!(!serial.iter().any(|(p, ..)| p.ends_with("d1/s2")));
        assert!(
            serial
                .iter()
                .any(|(p, _, ok)| !ok && p.ends_with("d4/.ignore"))
        );
        for window in [(2, 1 << 20), (16, 40), ahead::WINDOW] {
            let read = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let mut b = walk(3);
            b.opts.hooks.ahead_window = window;
            let seen = read.clone();
            let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = started.clone();
            b.opts.hooks.ahead_fault = Some(Fault(std::sync::Arc::new(move |path: &[u8]| {
                seen.lock().unwrap().push(path.to_vec());
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            })));
            assert_eq!(
                in_order_held(b, b"", Some(&started)),
                serial,
                "follow {follow}, window {window:?}"
            );
            let read = read.lock().unwrap();
            assert!(!read.is_empty(), "nothing was read ahead");
            let left_out = |p: &&Vec<u8>| {
                let p = String::from_utf8_lossy(p);
                (p.contains("x") && !p.starts_with("d2/s3/x")) || p.starts_with("d1/s2")
            };
            assert!(
                !read.iter().any(|p| left_out(&p)),
                "read ahead below a directory left out: {:?}",
                read.iter()
                    .filter(left_out)
                    .map(|p| String::from_utf8_lossy(p))
                    .collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn reading_ahead_with_kept_handles_gives_every_entry_its_directory() {
    // Every entry below the root comes with its directory's handle, through which it
    // is found by name, in the order of the serial walk.
    let tmp = bushy();
    let walk = |threads: usize| {
        let mut v = Vec::new();
        let mut walk = WalkBuilder::new(tmp.path())
            .sort(true)
            .keep_handles(true)
            .threads(threads)
            .build();
        let workers = walk.threads();
        while let Some(item) = walk.next_entry() {
            let e = item.expect("no errors in this tree");
            if e.depth() > 0 {
                let dir = e.dir().expect("a kept handle");
                let m = dir
                    .stat_at(e.c_name().unwrap(), crate::sys::StatMask::TYPE, false)
                    .expect("found through its directory's handle");
                let own = if e.path_is_symlink() {
                    FileType::Symlink
                } else {
                    e.file_type()
                };
                assert_eq!(m.file_type(), own, "{}", e.path().display());
            }
            v.push((e.path(), e.depth()));
        }
        (v, workers)
    };
    let (serial, _) = walk(1);
    assert!(serial.len() > 100, "{}", serial.len());
    for threads in [2, 4] {
        let (ahead, workers) = walk(threads);
        assert_eq!(workers, threads, "read ahead on {threads} threads");
        assert_eq!(ahead, serial, "{threads} threads");
    }
}

#[test]
fn reading_ahead_with_a_small_handle_budget_changes_nothing() {
    let tmp = comb(40);
    let serial = in_order(WalkBuilder::new(tmp.path()).sort(true).threads(1), b"");
    for budget in [4, 6, 9] {
        let mut b = WalkBuilder::new(tmp.path())
            .sort(true)
            .threads(3)
            .fd_budget(budget);
        b.opts.hooks.ahead_window = (8, 1 << 20);
        assert_eq!(in_order(b, b""), serial, "budget {budget}");
    }
}

/// A tree of 200 directories, each with a file.
fn two_hundred_dirs() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..20 {
        for j in 0..10 {
            let d = tmp.path().join(format!("{i:02}/{j}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("f"), b"").unwrap();
        }
    }
    tmp
}

#[test]
fn workers_are_added_when_reads_wait() {
    let tmp = two_hundred_dirs();
    let cores = pool::cores();
    let max = Budget::from_limit().max_io_threads();
    if cores >= max {
        println!("skipped: {cores} cores, no room to grow below {max} threads");
        return;
    }
    // The pool: each read waits 2 ms, as on a cold disk.
    let count = |delay_ms: u64| {
        let mut b = WalkBuilder::new(tmp.path());
        b.opts.hooks.read_delay = std::time::Duration::from_millis(delay_ms);
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let stats = b.build_parallel().visit(|| {
            |item: Result<&Entry<'_>, Error>| {
                item.expect("readable");
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Control::Continue
            }
        });
        (seen.into_inner(), stats.threads)
    };
    let (seen, threads) = count(2);
    assert_eq!(seen, 1 + 20 + 200 + 200);
    assert!(threads > cores, "{threads} threads on {cores} cores");
    // The sorted walk's read-ahead, the same way, and with the same listing.
    let serial = in_order(WalkBuilder::new(tmp.path()).sort(true).threads(1), b"");
    let mut b = WalkBuilder::new(tmp.path()).sort(true).threads(0);
    b.opts.hooks.read_delay = std::time::Duration::from_millis(2);
    let mut walk = b.build();
    let mut listed = Vec::new();
    while let Some(item) = walk.next_entry() {
        let e = item.expect("readable");
        listed.push((e.path().to_path_buf(), e.depth(), true));
    }
    assert_eq!(listed, serial);
    let workers = walk.ahead.as_ref().expect("reads ahead").workers();
    assert!(workers > cores - 1, "{workers} workers on {cores} cores");
}

#[test]
fn threads_asked_beyond_the_handle_budget_are_capped() {
    let tmp = two_hundred_dirs();
    // Each worker holds handles of its own: 32 of them would need far more than 12.
    for (asked, cap) in [
        (32, Budget::new(12).max_threads()),
        (0, Budget::new(12).max_io_threads()),
    ] {
        let stats = WalkBuilder::new(tmp.path())
            .threads(asked)
            .fd_budget(12)
            .build_parallel()
            .visit(|| |_: Result<&Entry<'_>, Error>| Control::Continue);
        assert!(
            stats.threads <= cap,
            "{} threads for {asked}",
            stats.threads
        );
    }
    // The sorted walk's read-ahead: half the budget is the walker's, and of the rest one
    // handle is the root's and each worker needs two (its own and one to share).
    let walk = WalkBuilder::new(tmp.path())
        .sort(true)
        .threads(32)
        .fd_budget(12)
        .build();
    let workers = walk.ahead.as_ref().expect("reads ahead").workers();
    assert_eq!(workers, 2);
}

// The portable backend's handles are paths: a kept one follows a rename too.
#[cfg(not(ftw_portable))]
#[test]
fn a_directory_replaced_before_a_parallel_job_reopens_it_is_reported() {
    // With a budget this small only the root's handle is kept (and a directory's with
    // a single subdirectory, not `a`'s), so the job of `a/b` opens `a` again from the
    // root: by then `a` is an impostor of the same shape.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("a/b/c")).unwrap();
    std::fs::create_dir_all(root.join("a/b2")).unwrap();
    let swapped = std::sync::atomic::AtomicBool::new(false);
    let seen = std::sync::Mutex::new(Vec::new());
    let errors = std::sync::Mutex::new(Vec::new());
    WalkBuilder::new(root)
        .threads(1)
        .fd_budget(4)
        .build_parallel()
        .visit(|| {
            |item: Result<&Entry<'_>, Error>| {
                match item {
                    Ok(e) => {
                        let path = e.path();
                        if path == root.join("a/b")
                            && !swapped.swap(true, std::sync::atomic::Ordering::Relaxed)
                        {
                            std::fs::rename(root.join("a"), root.join("moved")).unwrap();
                            std::fs::create_dir_all(root.join("a/b/impostor")).unwrap();
                        }
                        seen.lock().unwrap().push(path);
                    }
                    Err(e) => errors.lock().unwrap().push(e.to_string()),
                }
                Control::Continue
            }
        });
    assert!(swapped.into_inner());
    let seen = seen.into_inner().unwrap();
    let errors = errors.into_inner().unwrap();
    assert!(
        !seen.iter().any(|p| p.ends_with("impostor")),
        "listed the impostor: {seen:?}"
    );
    // `a/b`, and `a/b2` too if it was not read before the swap.
    assert!((1..=2).contains(&errors.len()), "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("directory replaced during the walk")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("a/b:")), "{errors:?}");
}

/// What a walk reports: each entry's path and type, or an error's text; sorted.
type Report = Vec<Result<(PathBuf, FileType), String>>;

/// Runs the walk `make` sets up in every way: serial, sorted with read-ahead, and in
/// parallel on one and on two threads. Returns what each reported, named.
fn every_walk(make: impl Fn() -> WalkBuilder) -> Vec<(&'static str, Report)> {
    let own = |e: &Entry<'_>| (e.path(), e.file_type());
    let mut out = Vec::new();
    for (name, threads, sort) in [("serial", 1, false), ("sorted, reading ahead", 2, true)] {
        let mut v: Report = make()
            .sort(sort)
            .threads(threads)
            .build()
            .map(|item| {
                item.map(|e| (e.file_type(), e.into_path()))
                    .map(|(t, p)| (p, t))
            })
            .map(|item| item.map_err(|e| e.to_string()))
            .collect();
        v.sort();
        out.push((name, v));
    }
    for (name, threads) in [("parallel, 1 thread", 1), ("parallel, 2 threads", 2)] {
        let seen = std::sync::Mutex::new(Report::new());
        make().threads(threads).build_parallel().visit(|| {
            |item: Result<&Entry<'_>, Error>| {
                seen.lock()
                    .unwrap()
                    .push(item.map(own).map_err(|e| e.to_string()));
                Control::Continue
            }
        });
        let mut v = seen.into_inner().unwrap();
        v.sort();
        out.push((name, v));
    }
    out
}

/// A root that is not a directory is one entry, with no error, however the walk runs;
/// so is a dangling link given as a root. Errors are told by their kind, so that this
/// holds on the portable backend too (`--cfg ftw_portable`).
#[test]
fn a_file_root_is_listed_once_with_no_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let dangling = tmp.path().join("dangling");
    symlink("missing", &dangling).unwrap();
    for (root, file_type) in [(&file, FileType::File), (&dangling, FileType::Symlink)] {
        for (how, report) in every_walk(|| WalkBuilder::new(root)) {
            assert_eq!(report, vec![Ok((root.clone(), file_type))], "{how}");
        }
        for (how, report) in every_walk(|| WalkBuilder::new(root).min_depth(1)) {
            assert_eq!(report, vec![], "{how}, min_depth 1");
        }
    }
    let missing = tmp.path().join("missing");
    for (how, report) in every_walk(|| WalkBuilder::new(&missing)) {
        assert_eq!(report.len(), 1, "{how}: {report:?}");
        assert!(report[0].is_err(), "{how}: {report:?}");
    }
}

/// Runs the test `name` of this binary again as the unprivileged user nobody, through
/// util-linux's setpriv, when the tests run as root (whom no permission stops); returns
/// whether it did (then the caller is done: the run's failure fails the test). Skips,
/// saying why, where the switch cannot be made.
fn rerun_as_nobody(name: &str) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let probe = tempfile::tempdir().unwrap();
    if std::fs::metadata(probe.path()).unwrap().uid() != 0 {
        return false;
    }
    // A copy of this binary that nobody may run, in a directory nobody may enter.
    let place = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let bin = place.path().join("tests");
    std::fs::copy(std::env::current_exe().unwrap(), &bin).unwrap();
    for p in [place.path(), bin.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let test = format!("{}::{name}", module_path!().split_once("::").unwrap().1);
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&bin)
        .args(["--exact", &test, "--test-threads=1", "--nocapture"])
        .output();
    let out = match out {
        Ok(out) if !String::from_utf8_lossy(&out.stderr).contains("setpriv:") => out,
        Ok(out) => {
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            eprintln!("skipped: cannot run as an unprivileged user: {err}");
            return true;
        }
        Err(e) => {
            eprintln!("skipped: cannot run setpriv: {e}");
            return true;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "as nobody: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Where the file system tells no types, a directory that can be read but not searched
/// (mode 400) still has every name reported, each followed by its error (its type cannot
/// be asked for), as find does; however the walk runs.
#[test]
fn names_in_a_directory_that_cannot_be_searched_are_reported_with_their_errors() {
    if rerun_as_nobody(
        "names_in_a_directory_that_cannot_be_searched_are_reported_with_their_errors",
    ) {
        return;
    }
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("r");
    let names: [&[u8]; 3] = [b"f", b"s", b"not utf-8 \xff"];
    std::fs::create_dir_all(r.join("s/inner")).unwrap();
    std::fs::write(r.join("f"), b"x").unwrap();
    std::fs::write(r.join(std::ffi::OsStr::from_bytes(names[2])), b"x").unwrap();
    std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o400)).unwrap();
    let mut want: Report = vec![
        Ok((tmp.path().to_path_buf(), FileType::Dir)),
        Ok((r.clone(), FileType::Dir)),
    ];
    for name in names {
        let path = join(&path_to_bytes(&r), name);
        want.push(Err(format!("{}: Permission denied", path.display())));
        want.push(Ok((path, FileType::Unknown)));
    }
    want.sort();
    let reports = every_walk(|| {
        let mut b = WalkBuilder::new(tmp.path());
        b.opts.hooks.forget_types = true;
        b
    });
    // In walk order, each error comes right after its entry.
    let mut b = WalkBuilder::new(tmp.path()).sort(true);
    b.opts.hooks.forget_types = true;
    let in_order: Vec<_> = b
        .build()
        .map(|item| item.map_err(|e| e.to_string()))
        .collect();
    std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o700)).unwrap();
    for (how, report) in reports {
        assert_eq!(report, want, "{how}");
    }
    assert_eq!(in_order.len(), 8, "{in_order:?}");
    for pair in in_order[2..].chunks(2) {
        let entry = pair[0].as_ref().expect("an entry first");
        let err = pair[1].as_ref().expect_err("then its error");
        assert_eq!(
            err,
            &format!("{}: Permission denied", entry.path().display())
        );
    }
}

/// Waits (up to 30 s) until `flag` is set by a read-ahead worker.
fn wait_for(flag: &std::sync::atomic::AtomicBool) {
    let start = std::time::Instant::now();
    while !flag.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "no worker reached the directory"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn a_directory_replaced_while_it_is_read_ahead_is_never_listed_in_its_place() {
    // `a/b` is read ahead from `a` opened again by path (no handle is shared): by then
    // `a` is an impostor of the same shape. Neither the worker nor the walker, opening
    // `a/b` after it, may list the impostor's `b` as the old tree's.
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::create_dir_all(root.join("a/b/c")).unwrap();
    std::fs::write(root.join("a/b/old"), b"").unwrap();
    std::fs::create_dir(root.join("z")).unwrap();
    let swapped = std::sync::Arc::new(AtomicBool::new(false));
    let mut b = WalkBuilder::new(&root).sort(true).threads(2);
    b.opts.hooks.ahead_share = false;
    let (r, s) = (root.clone(), swapped.clone());
    b.opts.hooks.ahead_fault = Some(Fault(std::sync::Arc::new(move |path: &[u8]| {
        if path == b"a/b" && !s.load(Ordering::SeqCst) {
            std::fs::rename(r.join("a"), r.join("moved")).unwrap();
            std::fs::create_dir_all(r.join("a/b/impostor")).unwrap();
            s.store(true, Ordering::SeqCst);
        }
    })));
    let mut walk = b.build();
    let (mut seen, mut errors) = (Vec::new(), Vec::new());
    while let Some(item) = walk.next_entry() {
        match item {
            Ok(e) => {
                let path = e.path();
                // Hold the walker at `a` until a worker has read ahead below it.
                if path == root.join("a") {
                    wait_for(&swapped);
                }
                seen.push(path);
            }
            Err(e) => errors.push(e),
        }
    }
    assert!(
        !seen.iter().any(|p| p.ends_with("impostor")),
        "listed the impostor: {seen:?}"
    );
    assert!(seen.contains(&root.join("z")), "{seen:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].path(), root.join("a/b"));
    assert!(
        errors[0]
            .to_string()
            .contains("directory replaced during the walk"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_read_ahead_worker_that_panics_ends_in_an_error_for_its_directory() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = bushy();
    let root = tmp.path().to_path_buf();
    let serial = in_order(WalkBuilder::new(&root).sort(true).threads(1), b"");
    let reached = std::sync::Arc::new(AtomicBool::new(false));
    let mut b = WalkBuilder::new(&root).sort(true).threads(3);
    let r = reached.clone();
    b.opts.hooks.ahead_fault = Some(Fault(std::sync::Arc::new(move |path: &[u8]| {
        if path == b"d1/s2" {
            r.store(true, Ordering::SeqCst);
            panic!("a broken read");
        }
    })));
    // The walk runs on a thread of its own: a hang fails the test instead of stalling it.
    let (tx, rx) = std::sync::mpsc::channel();
    let hold_at = root.join("d1");
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let mut walk = b.build();
        while let Some(item) = walk.next_entry() {
            match item {
                Ok(e) => {
                    if e.path() == hold_at {
                        wait_for(&reached);
                    }
                    v.push((e.path().to_path_buf(), e.depth(), true));
                }
                Err(e) => {
                    assert!(e.to_string().contains("a broken read"), "{e}");
                    v.push((e.path().to_path_buf(), e.depth(), false));
                }
            }
        }
        let _ = tx.send(v);
    });
    let listed = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the walk ends");
    // Everything but what lies below `d1/s2`, which is reported once as an error.
    let broken = root.join("d1/s2");
    let mut want: Vec<_> = serial
        .into_iter()
        .filter(|(p, _, _)| !p.starts_with(&broken) || p == &broken)
        .collect();
    let at = want.iter().position(|(p, _, _)| p == &broken).unwrap();
    want.insert(at + 1, (broken, 2, false));
    assert_eq!(listed, want);
}

#[test]
fn read_ahead_workers_that_cannot_be_started_change_nothing() {
    let tmp = bushy();
    let serial = in_order(WalkBuilder::new(tmp.path()).sort(true).threads(1), b"");
    for (threads, limit) in [(4, 0), (4, 1), (2, 0)] {
        let builder = || {
            let mut b = WalkBuilder::new(tmp.path()).sort(true).threads(threads);
            b.opts.hooks.ahead_spawn_limit = limit;
            b
        };
        let walk = builder().build();
        let ahead = walk.ahead.as_ref().expect("reads ahead");
        assert_eq!(ahead.workers(), limit);
        assert!(ahead.spawn_error().is_some());
        assert_eq!(
            in_order(builder(), b""),
            serial,
            "{threads} threads, {limit}"
        );
    }
}

#[test]
fn inode_order_lists_a_large_directory_by_inode_and_completely() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..12_000 {
        std::fs::File::create(tmp.path().join(format!("f{i}"))).unwrap();
    }
    std::fs::create_dir(tmp.path().join("small")).unwrap();
    for i in 0..10 {
        std::fs::File::create(tmp.path().join(format!("small/g{i}"))).unwrap();
    }
    for threads in [1, 3] {
        let mut top = Vec::new();
        let mut all = 0;
        let walk = WalkBuilder::new(tmp.path())
            .min_depth(1)
            .inode_order(true)
            .threads(threads);
        for e in walk.build() {
            let e = e.unwrap();
            all += 1;
            if e.depth() == 1 {
                top.push(e.ino());
            }
        }
        assert_eq!(all, 12_000 + 1 + 10, "-j{threads}");
        assert!(top.is_sorted(), "-j{threads}: not in inode order");
        // Unsorted by inode, as the file system lists them (a hash order on ext4 and
        // tmpfs's reverse creation order): the option is what sorted them.
        let plain: Vec<u64> = WalkBuilder::new(tmp.path())
            .min_depth(1)
            .max_depth(1)
            .build()
            .map(|e| e.unwrap().ino())
            .collect();
        assert!(
            !plain.is_sorted(),
            "the file system lists in inode order already"
        );
    }
    let mut seen = 0;
    let parallel = WalkBuilder::new(tmp.path())
        .min_depth(1)
        .inode_order(true)
        .threads(2);
    let inos = std::sync::Mutex::new(Vec::new());
    parallel.build_parallel().visit(|| {
        |item: Result<&Entry<'_>, Error>| {
            let e = item.unwrap();
            if e.depth() == 1 {
                inos.lock().unwrap().push(e.ino());
            }
            Control::Continue
        }
    });
    let inos = inos.into_inner().unwrap();
    seen += inos.len();
    assert!(inos.is_sorted(), "parallel: not in inode order");
    assert_eq!(seen, 12_001);
}
