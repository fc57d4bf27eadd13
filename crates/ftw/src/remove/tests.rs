//! Tests of tree removal: every kind of entry, links never followed (also while a
//! directory is swapped for a link during the removal), removers racing each other, a
//! directory that keeps filling, dry runs.

use super::remover::REFILLS;
use super::*;
use crate::sys::FileType;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

fn p(bytes: &[u8]) -> PathBuf {
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// Every file below `root` (links not followed) with its content, or its link target.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let value = if meta.is_dir() {
                todo.push(path.clone());
                b"<dir>".to_vec()
            } else if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .as_os_str()
                    .as_bytes()
                    .to_vec()
            } else if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                b"<special>".to_vec()
            };
            out.insert(path, value);
        }
    }
    out
}

/// A tree with every kind of entry and odd names, whose links and hard links lead to
/// `outside`. Returns how many entries it holds, the root included.
fn every_kind(root: &Path, outside: &Path) -> u64 {
    let mk = |rel: &[u8]| std::fs::create_dir_all(root.join(p(rel))).unwrap();
    let file = |rel: &[u8]| std::fs::write(root.join(p(rel)), b"data").unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("file"), b"outside").unwrap();
    std::fs::write(outside.join("dir/inner"), b"inner").unwrap();
    mk(b"a/b/c");
    mk(b"empty");
    mk(b"with space/new\nline");
    mk(b"bad-\xff\xfe");
    file(b"a/f");
    file(b"a/b/c/g");
    file(b"with space/new\nline/h");
    file(b"bad-\xff\xfe/\xc3\x28");
    file(&[b'n'; 255]);
    symlink(outside.join("file"), root.join("to-outside-file")).unwrap();
    symlink(outside.join("dir"), root.join("to-outside-dir")).unwrap();
    symlink(outside.join("dir"), root.join("a/b/deep-to-outside-dir")).unwrap();
    symlink("a/f", root.join("to-inside-file")).unwrap();
    symlink("a", root.join("to-inside-dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    std::fs::hard_link(outside.join("file"), root.join("hard-link")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from(0o644),
        0,
    )
    .unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(root.join("socket")).unwrap();
    // root, a, a/b, a/b/c, empty, with space, new\nline, bad: 8 directories; 5 files,
    // 6 links, a hard link, a fifo, a socket.
    8 + 5 + 6 + 1 + 1 + 1
}

#[test]
fn every_kind_of_entry_is_removed_and_nothing_outside() {
    for threads in [1, 0, 8] {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
        let made = every_kind(&root, &outside);
        let before = snapshot(&outside);
        let summary = remove_tree(&root, &RemoveOptions::new().threads(threads));
        assert!(
            summary.errors.is_empty(),
            "-j{threads}: {:?}",
            summary.errors
        );
        assert_eq!(summary.removed, made, "-j{threads}");
        assert!(!root.exists() && std::fs::symlink_metadata(&root).is_err());
        assert_eq!(snapshot(&outside), before, "-j{threads}: outside changed");
    }
}

#[test]
fn a_link_given_is_removed_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"x").unwrap();
    let link = tmp.path().join("link");
    symlink(&target, &link).unwrap();

    // With a trailing slash (the directory it leads to): refused, nothing removed.
    let mut slashed = link.clone().into_os_string();
    slashed.push("/");
    let s = remove_tree(&slashed, &RemoveOptions::new());
    assert_eq!(s.errors.len(), 1);
    assert!(
        s.errors[0].reason().contains("symbolic link"),
        "{}",
        s.errors[0]
    );
    assert!(link.exists() && target.join("keep").exists());

    let s = remove_tree(&link, &RemoveOptions::new());
    assert!(s.errors.is_empty() && s.removed == 1);
    assert!(std::fs::symlink_metadata(&link).is_err());
    assert!(target.join("keep").exists());
}

#[test]
fn missing_paths_are_errors_unless_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing/deeper");
    let s = remove_tree(&missing, &RemoveOptions::new());
    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].io_error().kind(), ErrorKind::NotFound);
    let s = remove_tree(&missing, &RemoveOptions::new().ignore_missing(true));
    assert_eq!((s.errors.len(), s.removed), (0, 0));
    // An empty path is missing too (as for rm), even with the guard off: never the
    // current directory.
    for guard in [true, false] {
        let opts = RemoveOptions::new().preserve_root(guard);
        let s = remove_tree("", &opts);
        assert_eq!(s.errors.len(), 1);
        assert_eq!(s.errors[0].io_error().kind(), ErrorKind::NotFound);
        let s = remove_tree("", &opts.ignore_missing(true));
        assert_eq!((s.errors.len(), s.removed), (0, 0));
    }
}

#[test]
fn the_guard_refuses_the_root_and_dots() {
    assert_eq!(check_path("/"), Err(Refusal::Root));
    assert_eq!(check_path("//"), Err(Refusal::Root));
    assert_eq!(check_path("/."), Err(Refusal::Dot));
    assert_eq!(check_path("/.."), Err(Refusal::Dot));
    assert_eq!(check_path("../"), Err(Refusal::Dot));
    assert_eq!(check_path("x/./"), Err(Refusal::Dot));
    let tmp = tempfile::tempdir().unwrap();
    // A link to the root is a link: removable, and only the link goes.
    let link = tmp.path().join("root-link");
    symlink("/", &link).unwrap();
    assert_eq!(check_path(&link), Ok(()));
    assert_eq!(check_path(tmp.path().join("x")), Ok(()));
    // The same directory as the root under another name (here, a path through a link
    // to it) is refused.
    let mut via = link.into_os_string();
    via.push("/usr/..");
    assert_eq!(check_path(&via), Err(Refusal::Dot));
    let root_again = tmp.path().join("root-link/");
    assert_eq!(check_path(&root_again), Err(Refusal::Root));
    // remove_tree refuses them too, removing nothing.
    let s = remove_tree(tmp.path().join("."), &RemoveOptions::new());
    assert_eq!(s.errors.len(), 1);
    assert!(tmp.path().join("root-link").exists());
}

#[test]
fn dots_are_refused_even_with_the_guard_off() {
    // POSIX: '.' and '..' as the last component, in any spelling, are never removed;
    // the guard (preserve_root) is about the root directory only.
    let tmp = tempfile::tempdir().unwrap();
    let x = tmp.path().join("x");
    std::fs::create_dir_all(x.join("y/z")).unwrap();
    std::fs::write(x.join("y/f"), b"f").unwrap();
    let before = snapshot(tmp.path());
    for dots in [
        "x/..", "x/.", "x/./", "x/..//", "x/y/..", "x/y/./.", "x/y/../.",
    ] {
        for guard in [true, false] {
            let opts = RemoveOptions::new().preserve_root(guard);
            let s = remove_tree(tmp.path().join(dots), &opts);
            assert_eq!((s.error_count, s.removed), (1, 0), "{dots}");
            let err = s.errors[0].io_error();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{dots}");
            let refusal = err.get_ref().and_then(|e| e.downcast_ref::<Refusal>());
            assert_eq!(refusal, Some(&Refusal::Dot), "{dots}");
            assert_eq!(
                snapshot(tmp.path()),
                before,
                "{dots}: something was removed"
            );
        }
    }
}

#[test]
fn a_path_through_a_file_is_missing_when_missing_paths_are_ignored() {
    // ENOTDIR, as rm -f ignores it: 'file/x', 'file/x/y', 'file/'.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    symlink(&file, tmp.path().join("link")).unwrap();
    symlink("nowhere", tmp.path().join("dangling-link")).unwrap();
    symlink("loop", tmp.path().join("loop")).unwrap();
    for path in [
        "file/x",
        "file/x/y",
        "file/",
        "link/",
        "dangling-link/",
        "loop/",
    ] {
        let p = tmp.path().join(path);
        let s = remove_tree(&p, &RemoveOptions::new());
        assert_eq!(s.error_count, 1, "{path}");
        let kind = s.errors[0].io_error().kind();
        assert_eq!(kind, ErrorKind::NotADirectory, "{path}");
        let s = remove_tree(&p, &RemoveOptions::new().ignore_missing(true));
        assert_eq!((s.error_count, s.removed), (0, 0), "{path}");
    }
    assert!(file.exists() && tmp.path().join("link").exists());
}

#[test]
fn a_parent_that_can_be_searched_but_not_read_is_enough() {
    // The path's parent is opened only to be searched: mode 0300 (write and search,
    // no read) lets its entries go, as rm removes them. Root reads it anyway: the
    // test says something only for another user, and passes for root.
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    std::fs::create_dir_all(p.join("d/e")).unwrap();
    std::fs::write(p.join("d/e/f"), b"f").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o300)).unwrap();
    let s = remove_tree(p.join("d"), &RemoveOptions::new());
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!((s.error_count, s.removed), (0, 3));
    assert!(!p.join("d").exists());
}

/// Sets (`+i`, `+a`) or clears an inode flag with chattr; false where the file system
/// or the user cannot.
#[cfg(all(target_os = "linux", not(ftw_portable)))]
fn chattr(flag: &str, path: &Path) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(path)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(all(target_os = "linux", not(ftw_portable)))]
#[test]
fn a_dry_run_foresees_immutable_and_append_only_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir_all(root.join("imm-dir")).unwrap();
    std::fs::create_dir_all(root.join("app-dir")).unwrap();
    std::fs::create_dir_all(root.join("free/sub")).unwrap();
    for f in ["imm", "app", "imm-dir/in", "app-dir/in", "free/sub/f"] {
        std::fs::write(root.join(f), b"x").unwrap();
    }
    let flagged = [
        ("+i", "imm"),
        ("+a", "app"),
        ("+i", "imm-dir"),
        ("+a", "app-dir"),
    ];
    let mut set: Vec<(&str, &str)> = Vec::new();
    for (flag, name) in flagged {
        if !chattr(flag, &root.join(name)) {
            for (flag, name) in set {
                chattr(&flag.replace('+', "-"), &root.join(name));
            }
            eprintln!("skipped: chattr {flag} is not possible here");
            return;
        }
        set.push((flag, name));
    }
    let (dry, real) = (
        RemoveOptions::new().threads(1).dry_run(true),
        RemoveOptions::new().threads(1),
    );
    let failed = |s: &Summary| {
        let mut v: Vec<(PathBuf, Option<i32>)> = s
            .errors
            .iter()
            .map(|e| (e.path().to_path_buf(), e.io_error().raw_os_error()))
            .collect();
        v.sort();
        v
    };
    let foreseen = remove_tree(&root, &dry);
    assert!(root.join("free/sub/f").exists());
    let done = remove_tree(&root, &real);
    for (flag, name) in flagged {
        chattr(&flag.replace('+', "-"), &root.join(name));
    }
    // Each immutable or append-only file, and each entry of such a directory: EPERM.
    assert_eq!(failed(&foreseen), failed(&done));
    assert_eq!(foreseen.error_count, 4, "{:?}", foreseen.errors);
    assert_eq!(foreseen.removed, done.removed);
    assert!(!root.join("free").exists());
}

#[test]
fn a_directory_swapped_for_a_link_never_leads_outside() {
    use std::sync::atomic::AtomicBool;
    for round in 0..12 {
        let threads = [1, 0, 4][round % 3];
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
        std::fs::create_dir_all(outside.join("sub")).unwrap();
        for i in 0..50 {
            std::fs::write(outside.join(format!("o{i}")), b"keep").unwrap();
            std::fs::write(outside.join(format!("sub/o{i}")), b"keep").unwrap();
        }
        let before = snapshot(&outside);
        for d in 0..60 {
            let s = root.join(format!("d{d}/s"));
            std::fs::create_dir_all(s.join("t")).unwrap();
            for f in 0..20 {
                std::fs::write(s.join(format!("f{f}")), b"x").unwrap();
                std::fs::write(s.join(format!("t/f{f}")), b"x").unwrap();
            }
        }
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            // The attacker: swaps each `dN/s` (and `dN/s/t`) for a link to `outside`
            // and back, again and again, while the removal runs.
            scope.spawn(|| {
                let mut n = 0u64;
                while !done.load(Ordering::Relaxed) {
                    n += 1;
                    let d = root.join(format!("d{}", n % 60));
                    let (s, hold) = if n % 2 == 0 {
                        (d.join("s"), d.join("s.held"))
                    } else {
                        (d.join("s/t"), d.join("t.held"))
                    };
                    if std::fs::rename(&s, &hold).is_ok() {
                        let _ = symlink(&outside, &s);
                        std::thread::yield_now();
                        let _ = std::fs::remove_file(&s);
                        let _ = std::fs::rename(&hold, &s);
                    }
                }
            });
            let opts = RemoveOptions::new().threads(threads);
            let _ = remove_tree(&root, &opts);
            done.store(true, Ordering::Relaxed);
        });
        assert_eq!(snapshot(&outside), before, "round {round}: outside changed");
        // What the attacker kept back from the removal goes now.
        let s = remove_tree(&root, &RemoveOptions::new().ignore_missing(true));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(snapshot(&outside), before);
    }
}

#[test]
fn removers_racing_each_other_report_no_error() {
    for threads in [1, 3] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tree");
        for d in 0..40 {
            let dir = root.join(format!("d{d}/e/f"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..50 {
                std::fs::write(dir.join(format!("f{f}")), b"x").unwrap();
                std::fs::write(root.join(format!("d{d}/g{f}")), b"x").unwrap();
            }
        }
        let opts = RemoveOptions::new().threads(threads).ignore_missing(true);
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| remove_tree(&root, &opts));
            let b = scope.spawn(|| remove_tree(&root, &opts));
            (a.join().unwrap(), b.join().unwrap())
        });
        assert!(a.errors.is_empty(), "{:?}", a.errors);
        assert!(b.errors.is_empty(), "{:?}", b.errors);
        assert!(!root.exists());
    }
}

/// Puts a file back into `dir` each time a file of it is removed, `times` times.
struct Refill {
    dir: PathBuf,
    times: std::sync::atomic::AtomicUsize,
}

impl Report for Refill {
    fn wants_paths(&self) -> bool {
        true
    }
    fn removed(&self, path: &[u8], file_type: FileType) {
        let path = p(path);
        if file_type != FileType::Dir && path.parent() == Some(&self.dir) {
            let left = self.times.load(Ordering::Relaxed);
            if left > 0 {
                self.times.store(left - 1, Ordering::Relaxed);
                std::fs::write(self.dir.join(format!("again{left}")), b"x").unwrap();
            }
        }
    }
}

#[test]
fn a_directory_that_keeps_filling_is_read_again_then_reported() {
    for (times, gone) in [(REFILLS, true), (REFILLS + 1, false), (1000, false)] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tree");
        let dir = root.join("busy");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), b"x").unwrap();
        let refill = Arc::new(Refill {
            dir: dir.clone(),
            times: times.into(),
        });
        let errors = Arc::new(Mutex::new(Vec::new()));
        struct Both(Arc<Refill>, Arc<Mutex<Vec<Error>>>);
        impl Report for Both {
            fn wants_paths(&self) -> bool {
                true
            }
            fn removed(&self, path: &[u8], t: FileType) {
                self.0.removed(path, t)
            }
            fn error(&self, e: Error) {
                self.1.lock().unwrap().push(e)
            }
        }
        let opts = RemoveOptions::new()
            .threads(1)
            .report(Arc::new(Both(refill.clone(), errors.clone())));
        let s = remove_tree(&root, &opts);
        let errors = errors.lock().unwrap();
        if gone {
            assert!(errors.is_empty(), "{times}: {errors:?}");
            assert!(!root.exists());
        } else {
            assert_eq!(errors.len(), 1, "{times}: {errors:?}");
            assert_eq!(errors[0].path(), dir);
            assert_eq!(errors[0].io_error().kind(), ErrorKind::DirectoryNotEmpty);
            assert!(root.exists() && dir.exists());
        }
        assert_eq!(s.error_count, errors.len() as u64);
    }
}

#[test]
fn a_dry_run_removes_nothing_and_tells_everything_in_order() {
    #[derive(Default)]
    struct Log(Mutex<Vec<Vec<u8>>>);
    impl Report for Log {
        fn wants_paths(&self) -> bool {
            true
        }
        fn removed(&self, path: &[u8], _: FileType) {
            self.0.lock().unwrap().push(path.to_vec());
        }
    }
    for threads in [1, 4] {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
        let made = every_kind(&root, &outside);
        let before = snapshot(tmp.path());
        let log = Arc::new(Log::default());
        let opts = RemoveOptions::new()
            .threads(threads)
            .dry_run(true)
            .count_bytes(true)
            .report(log.clone());
        let s = remove_tree(&root, &opts);
        assert_eq!(snapshot(tmp.path()), before, "a dry run changed the tree");
        assert_eq!((s.removed, s.error_count), (made, 0));
        // Five files of 4 bytes, the socket and fifo empty; links count their own size:
        // the hard link shares the outside file's 7.
        let links: u64 = ["to-outside-file", "to-outside-dir", "to-inside-file"]
            .iter()
            .chain(&["to-inside-dir", "dangling"])
            .map(|l| std::fs::symlink_metadata(root.join(l)).unwrap().len())
            .sum::<u64>()
            + std::fs::symlink_metadata(root.join("a/b/deep-to-outside-dir"))
                .unwrap()
                .len();
        assert_eq!(s.bytes, 5 * 4 + 7 + links);
        let log = log.0.lock().unwrap();
        assert_eq!(log.len() as u64, made);
        // Each directory comes after everything in it.
        for (i, path) in log.iter().enumerate() {
            let mut prefix = path.clone();
            prefix.push(b'/');
            assert!(
                !log[i + 1..].iter().any(|later| later.starts_with(&prefix)),
                "{} before its contents",
                String::from_utf8_lossy(path)
            );
        }
        assert_eq!(log.last().unwrap().as_slice(), root.as_os_str().as_bytes());
    }
}

#[cfg(all(target_os = "linux", not(ftw_portable)))]
#[test]
fn a_deep_chain_goes_with_a_handful_of_handles() {
    for threads in [1, 4] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("chain");
        std::fs::create_dir(&root).unwrap();
        let mut dir = Dir::open(&root).unwrap();
        for _ in 0..5_000 {
            rustix::fs::mkdirat(&dir, "d", rustix::fs::Mode::from(0o755)).unwrap();
            rustix::fs::openat(
                &dir,
                "f",
                rustix::fs::OFlags::CREATE | rustix::fs::OFlags::WRONLY,
                rustix::fs::Mode::from(0o644),
            )
            .unwrap();
            dir = dir.open_at(c"d").unwrap();
        }
        drop(dir);
        let opts = RemoveOptions::new().threads(threads).fd_budget(6);
        let s = remove_tree(&root, &opts);
        assert!(s.errors.is_empty(), "{:?}", &s.errors[..1]);
        assert_eq!(s.removed, 10_001);
        assert!(!root.exists());
    }
}

#[test]
fn contents_of_an_open_directory_go_and_it_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    let root = tmp.path().join("tree");
    let made = every_kind(&root, &outside);
    let before = snapshot(&outside);
    let dir = Dir::open(&root).unwrap();
    // A handle already read to its end works as well.
    dir.read_entries(&mut crate::sys::DirBuf::new(), |_| {})
        .unwrap();
    let s = remove_dir_contents(&dir, &RemoveOptions::new().threads(2));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.removed, made - 1);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    assert_eq!(snapshot(&outside), before);
}

/// When the file `tree/busy/f` is removed, moves `tree/busy` out of the tree (to
/// `moved`, where a file is then put) and makes a new `tree/busy` with a file in it.
struct MoveOut {
    busy: PathBuf,
    moved: PathBuf,
    done: AtomicBool,
}

impl Report for MoveOut {
    fn wants_paths(&self) -> bool {
        true
    }
    fn removed(&self, path: &[u8], _: FileType) {
        if p(path) == self.busy.join("f") && !self.done.swap(true, Ordering::Relaxed) {
            std::fs::rename(&self.busy, &self.moved).unwrap();
            std::fs::write(self.moved.join("victim"), b"keep").unwrap();
            std::fs::create_dir(&self.busy).unwrap();
            std::fs::write(self.busy.join("new"), b"x").unwrap();
        }
    }
}

#[test]
fn a_directory_moved_out_of_the_tree_is_not_read_again_there() {
    for threads in [1, 2] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tree");
        let busy = root.join("busy");
        std::fs::create_dir_all(&busy).unwrap();
        std::fs::write(busy.join("f"), b"x").unwrap();
        let moved = tmp.path().join("moved");
        let report = Arc::new(MoveOut {
            busy,
            moved: moved.clone(),
            done: AtomicBool::new(false),
        });
        let opts = RemoveOptions::new().threads(threads).report(report.clone());
        let s = remove_tree(&root, &opts);
        assert!(report.done.load(Ordering::Relaxed));
        // What filled the name inside the tree went; what was put into the directory
        // moved out stays.
        assert_eq!(s.error_count, 0, "{threads}");
        assert!(!root.exists(), "{threads}");
        assert_eq!(
            std::fs::read(moved.join("victim")).unwrap(),
            b"keep",
            "{threads}"
        );
    }
}
