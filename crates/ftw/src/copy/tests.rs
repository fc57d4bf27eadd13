use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::PathBuf;

/// What a copy must keep of one entry: type, mode, owner, times (mtime in ns),
/// size, contents or target, and the hard-link group (by the first path of its inode).
fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut inodes: HashMap<u64, PathBuf> = HashMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let full = root.join(&rel);
        let m = std::fs::symlink_metadata(&full).unwrap();
        let what = if m.is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(&full)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            for n in names.into_iter().rev() {
                stack.push(rel.join(n));
            }
            String::from("dir")
        } else if m.file_type().is_symlink() {
            format!("link {:?}", std::fs::read_link(&full).unwrap())
        } else if m.is_file() {
            let first = inodes.entry(m.ino()).or_insert_with(|| rel.clone());
            format!(
                "file {} {:x} first={:?}",
                m.size(),
                std::fs::read(&full)
                    .unwrap()
                    .iter()
                    .map(|&b| b as u64)
                    .sum::<u64>(),
                first
            )
        } else {
            format!("other {:o}", m.mode() & 0o170000)
        };
        // A link's mtime is its own (which the portable build, on std::fs, cannot
        // set); its mode is always 0777.
        let link = m.file_type().is_symlink();
        let (secs, nsec) = match cfg!(ftw_portable) && link {
            true => (0, 0),
            false => (m.mtime(), m.mtime_nsec()),
        };
        out.push(format!(
            "{rel:?} {what} mode={:o} owner={}:{} mtime={}.{} blocks={}",
            m.mode(),
            m.uid(),
            m.gid(),
            secs,
            nsec,
            // The portable build keeps no holes.
            if m.is_file() && !cfg!(ftw_portable) {
                m.blocks()
            } else {
                0
            }
        ));
    }
    out
}

fn tree(root: &Path) {
    std::fs::create_dir_all(root.join("a/b/c")).unwrap();
    std::fs::write(root.join("a/f"), b"hello").unwrap();
    std::fs::write(root.join("a/b/empty"), b"").unwrap();
    std::fs::hard_link(root.join("a/f"), root.join("a/b/c/f2")).unwrap();
    symlink("../f", root.join("a/b/rel")).unwrap();
    symlink("/nonexistent/x", root.join("dangling")).unwrap();
    symlink("a", root.join("to_dir")).unwrap();
    let sparse = std::fs::File::create(root.join("sparse")).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, b"data", 1 << 20).unwrap();
    sparse.set_len(4 << 20).unwrap();
    // The portable build (std::fs) makes no fifos.
    #[cfg(not(ftw_portable))]
    sys::Dir::open(root)
        .unwrap()
        .make_node_at(c"fifo", 0o010640, 0)
        .unwrap();
    std::fs::create_dir(root.join("ro")).unwrap();
    std::fs::write(root.join("ro/x"), b"x").unwrap();
    std::fs::set_permissions(root.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::create_dir(root.join("sticky")).unwrap();
    std::fs::set_permissions(root.join("sticky"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::set_permissions(root.join("a/f"), std::fs::Permissions::from_mode(0o4751)).unwrap();
    // Times set last, on every entry, to ones the copy cannot make by chance.
    let dir = sys::Dir::open(root).unwrap();
    let names: &[&CStr] = match cfg!(ftw_portable) {
        true => &[c"sparse"],
        false => &[c"dangling", c"to_dir", c"sparse"],
    };
    for name in names {
        let t = FileTimes {
            accessed: (1_000, 5),
            modified: (1_234_567_890, 987_654_321),
        };
        dir.set_times_at(name, &t).unwrap();
    }
}

#[test]
fn copy_archive_keeps_everything_serial_and_parallel() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    tree(&src);
    for threads in [1, 2, 0] {
        let dst = tmp.path().join(format!("dst{threads}"));
        let s = copy_tree(&src, &dst, &CopyOptions::archive().threads(threads));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(listing(&src), listing(&dst), "threads {threads}");
        let (a, b) = (
            std::fs::metadata(dst.join("a/f")).unwrap(),
            std::fs::metadata(dst.join("a/b/c/f2")).unwrap(),
        );
        assert_eq!(a.ino(), b.ino(), "one copy per inode");
    }
}

#[test]
fn copy_without_preserve_gives_the_mode_less_the_umask_and_copies_each_link_name() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    tree(&src);
    let dst = tmp.path().join("dst");
    let s = copy_tree(&src, &dst, &CopyOptions::new().threads(1));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let umask = sys::umask();
    let mode = |p: &str| std::fs::symlink_metadata(dst.join(p)).unwrap().mode() & 0o7777;
    assert_eq!(mode("a/f"), 0o751 & !umask);
    assert_eq!(mode("ro"), 0o555 & !umask);
    let (a, b) = (
        std::fs::metadata(dst.join("a/f")).unwrap(),
        std::fs::metadata(dst.join("a/b/c/f2")).unwrap(),
    );
    assert_ne!(a.ino(), b.ino(), "-R without links: two copies");
    assert_eq!(
        std::fs::read_link(dst.join("a/b/rel")).unwrap(),
        Path::new("../f")
    );
}

#[test]
fn copy_trees_links_a_file_across_sources() {
    let tmp = tempfile::tempdir().unwrap();
    for d in ["s1", "s2", "dst"] {
        std::fs::create_dir(tmp.path().join(d)).unwrap();
    }
    std::fs::write(tmp.path().join("s1/f"), b"x").unwrap();
    std::fs::hard_link(tmp.path().join("s1/f"), tmp.path().join("s2/g")).unwrap();
    let t = |p: &str| tmp.path().join(p);
    for threads in [1, 2] {
        let _ = std::fs::remove_dir_all(t("dst"));
        let pairs = [(t("s1"), t("dst/s1")), (t("s2"), t("dst/s2"))];
        std::fs::create_dir(t("dst")).unwrap();
        let s = copy_trees(pairs, &CopyOptions::archive().threads(threads));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let ino = |p: &str| std::fs::metadata(t(p)).unwrap().ino();
        assert_eq!(ino("dst/s1/f"), ino("dst/s2/g"));
    }
}

#[test]
fn copy_into_itself_refuses_the_copy_itself_as_gnu_cp_does() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    std::fs::create_dir_all(a.join("b")).unwrap();
    std::fs::write(a.join("f"), b"x").unwrap();
    for threads in [1, 2] {
        let _ = std::fs::remove_dir_all(a.join("b/c"));
        let s = copy_tree(&a, a.join("b/c"), &CopyOptions::new().threads(threads));
        assert_eq!(s.error_count, 1);
        assert!(
            s.errors[0].reason().contains("into itself"),
            "{}",
            s.errors[0]
        );
        assert_eq!(s.errors[0].path(), a);
        assert!(a.join("b/c/b").is_dir() && a.join("b/c/f").is_file());
        assert!(!a.join("b/c/b/c").exists(), "never into the copy itself");
    }
    assert!(into_itself(&a, &a.join("b/c")));
    assert!(into_itself(&a, &a));
}

#[test]
fn copy_of_a_deep_chain_within_a_small_budget_of_handles() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    // 300 levels, each with a file after the subdirectory in name order.
    let mut d = sys::Dir::open(&src).unwrap();
    for _ in 0..300 {
        d.make_dir_at(c"d", 0o755).unwrap();
        drop(d.create_file_at(c"z", 0o644).unwrap());
        d = d.open_at(c"d").unwrap();
    }
    drop(d);
    for threads in [1, 2] {
        let dst = tmp.path().join(format!("dst{threads}"));
        let opts = CopyOptions::archive().threads(threads).fd_budget(8);
        let s = copy_tree(&src, &dst, &opts);
        assert!(s.errors.is_empty(), "{:?}", s.errors.first());
        assert_eq!(s.copied, 601);
        assert_eq!(listing(&src), listing(&dst));
    }
}

#[test]
fn copy_over_an_existing_tree_merges_and_update_decides() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p);
    std::fs::create_dir_all(t("src/d")).unwrap();
    std::fs::create_dir_all(t("dst/d")).unwrap();
    std::fs::write(t("src/d/f"), b"new").unwrap();
    std::fs::write(t("dst/d/f"), b"old").unwrap();
    std::fs::write(t("dst/d/keep"), b"k").unwrap();
    let none = CopyOptions::new().update(Update::None);
    assert!(copy_tree(t("src"), t("dst"), &none).errors.is_empty());
    assert_eq!(std::fs::read(t("dst/d/f")).unwrap(), b"old");
    assert!(
        copy_tree(t("src"), t("dst"), &CopyOptions::new())
            .errors
            .is_empty()
    );
    assert_eq!(std::fs::read(t("dst/d/f")).unwrap(), b"new");
    assert_eq!(std::fs::read(t("dst/d/keep")).unwrap(), b"k");
    // A link in the destination is replaced, never written through.
    std::fs::remove_file(t("dst/d/f")).unwrap();
    std::fs::write(t("outside"), b"outside").unwrap();
    symlink(t("outside"), t("dst/d/f")).unwrap();
    assert!(
        copy_tree(t("src"), t("dst"), &CopyOptions::new())
            .errors
            .is_empty()
    );
    assert_eq!(std::fs::read(t("outside")).unwrap(), b"outside");
    assert_eq!(std::fs::read(t("dst/d/f")).unwrap(), b"new");
    // A file onto itself.
    let s = copy_tree(t("src/d/f"), t("src/d/f"), &CopyOptions::new());
    assert_eq!(s.error_count, 1);
}

#[test]
fn copy_dir_all_copies_and_says_what_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    tree(&src);
    copy_dir_all(&src, tmp.path().join("dst")).unwrap();
    assert_eq!(std::fs::read(tmp.path().join("dst/a/f")).unwrap(), b"hello");
    let err = copy_dir_all(src.join("a/f"), tmp.path().join("x")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotADirectory);
}

#[test]
fn split_finds_the_parent_and_the_last_name() {
    let name = |p: &str| split(Path::new(p)).map(|(d, n)| (d, n.into_string().unwrap()));
    assert_eq!(name("a/b/"), Some((PathBuf::from("a"), "b".into())));
    assert_eq!(name("/x"), Some((PathBuf::from("/"), "x".into())));
    assert_eq!(name("x"), Some((PathBuf::from("."), "x".into())));
    assert_eq!(name("a/.."), None);
    assert_eq!(name("/"), None);
    // `\` is a name's byte here (Linux), a separator on Windows (the same code, built
    // for Windows, is tested under wine by tests/windows.rs).
    assert_eq!(name("a\\b"), Some((PathBuf::from("."), "a\\b".into())));
}
