//! The three common tasks through the public API alone, each checked against a
//! reference made with `std::fs`: listing a tree (`for entry in WalkBuilder::new(p)`),
//! its size (`dir_size`), and removing it (`remove_dir_all`).
#![cfg(unix)]

use ftw::WalkBuilder;
use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

/// A small deterministic generator (xorshift), so that a failure can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Names a walk could get wrong: spaces, a newline, a leading dash or dot, non-UTF-8
/// bytes, multi-byte characters, glob and shell characters, a long name.
fn odd_name(rng: &mut Rng, i: usize) -> OsString {
    let base: Vec<u8> = match rng.below(10) {
        0 => b"with space".to_vec(),
        1 => b"new\nline".to_vec(),
        2 => b"-dash".to_vec(),
        3 => b".hidden".to_vec(),
        4 => vec![b'b', 0xff, 0xfe, b'x'], // not UTF-8
        5 => "caf\u{e9} \u{1f600}".as_bytes().to_vec(),
        6 => b"*?[glob]\\".to_vec(),
        7 => vec![b'l'; 200],
        8 => b"$(shell)'\"".to_vec(),
        _ => b"plain".to_vec(),
    };
    let mut name = base;
    name.extend_from_slice(format!("-{i}").as_bytes());
    OsString::from_vec(name)
}

/// Makes a tree of about `n` entries below `root` (which must exist): directories
/// several levels deep, empty ones, files of assorted sizes, hard links between files,
/// symbolic links to files, to directories inside and to `outside`, and dangling.
fn make_tree(root: &Path, outside: &Path, n: usize, seed: u64) {
    let mut rng = Rng(seed);
    let mut dirs = vec![root.to_path_buf()];
    let mut files: Vec<PathBuf> = Vec::new();
    for i in 0..n {
        let parent = dirs[rng.below(dirs.len() as u64) as usize].clone();
        let path = parent.join(odd_name(&mut rng, i));
        match rng.below(10) {
            0..=2 => {
                std::fs::create_dir(&path).unwrap();
                dirs.push(path);
            }
            3..=6 => {
                let len = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(100),
                    2 => rng.below(10_000),
                    _ => rng.below(200_000),
                };
                std::fs::write(&path, vec![b'x'; len as usize]).unwrap();
                files.push(path);
            }
            7 if !files.is_empty() => {
                let target = &files[rng.below(files.len() as u64) as usize];
                std::fs::hard_link(target, &path).unwrap();
            }
            8 => {
                let target = match rng.below(4) {
                    0 => outside.to_path_buf(),
                    1 => dirs[rng.below(dirs.len() as u64) as usize].clone(),
                    2 => PathBuf::from("dangling/nowhere"),
                    _ => PathBuf::from("../relative"),
                };
                symlink(target, &path).unwrap();
            }
            _ => {
                std::fs::create_dir(&path).unwrap();
                dirs.push(path);
            }
        }
    }
}

/// A directory outside the tree, with something in it, that links point to.
fn make_outside(base: &Path) -> PathBuf {
    let outside = base.join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("keep"), b"keep me").unwrap();
    std::fs::write(outside.join("sub/deep"), b"and me").unwrap();
    outside
}

/// What is in a tree, by path, as `std::fs` sees it: (is a directory, is a link).
fn std_listing(root: &Path) -> BTreeMap<PathBuf, (bool, bool)> {
    let mut out = BTreeMap::new();
    let meta = std::fs::symlink_metadata(root).unwrap();
    out.insert(
        root.to_path_buf(),
        (meta.is_dir(), meta.file_type().is_symlink()),
    );
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let t = entry.file_type().unwrap();
            out.insert(entry.path(), (t.is_dir(), t.is_symlink()));
            if t.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out
}

/// The apparent size of a tree as `du -sb` counts it, with `std::fs`: files and links
/// by their length, directories 0, each (device, inode) once.
fn std_size(root: &Path) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        } else if meta.is_file() || meta.file_type().is_symlink() {
            total += meta.len();
        }
    }
    total
}

/// Every file below `dir` with its content (following nothing).
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std_listing(dir)
        .into_iter()
        .filter(|(_, (is_dir, is_link))| !is_dir && !is_link)
        .map(|(p, _)| {
            let data = std::fs::read(&p).unwrap();
            (p, data)
        })
        .collect()
}

#[test]
fn walk_lists_what_std_fs_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let root = tmp.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    make_tree(&root, &outside, 400, 0x9e37_79b9_7f4a_7c15);

    let mut listed = BTreeMap::new();
    for entry in WalkBuilder::new(&root) {
        let entry = entry.unwrap();
        let kind = (entry.is_dir(), entry.path_is_symlink());
        let again = listed.insert(entry.path().to_path_buf(), kind);
        assert_eq!(again, None, "listed twice: {:?}", entry.path());
    }
    let reference = std_listing(&root);
    assert!(reference.len() > 300, "{}", reference.len());
    assert_eq!(listed, reference);

    // The same through the parallel walker, with the same entries.
    let parallel = std::sync::Mutex::new(BTreeMap::new());
    WalkBuilder::new(&root)
        .threads(3)
        .build_parallel()
        .visit(|| {
            |item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>| {
                let e = item.unwrap();
                let kind = (e.is_dir(), e.path_is_symlink());
                parallel.lock().unwrap().insert(e.path(), kind);
                ftw::walk::Control::Continue
            }
        });
    assert_eq!(parallel.into_inner().unwrap(), reference);
}

#[test]
fn dir_size_is_the_apparent_size_with_hard_links_once() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let root = tmp.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    make_tree(&root, &outside, 400, 0x2545_f491_4f6c_dd1d);
    // A file linked from outside the tree counts in it once too.
    std::fs::hard_link(outside.join("keep"), root.join("linked from outside")).unwrap();

    let expected = std_size(&root);
    assert!(expected > 100_000, "{expected}");
    assert_eq!(ftw::dir_size(&root).unwrap(), expected);

    // A file is its size; a link is the link, not what it leads to.
    assert_eq!(ftw::dir_size(outside.join("keep")).unwrap(), 7);
    let link = tmp.path().join("link");
    symlink(&outside, &link).unwrap();
    let link_len = std::fs::symlink_metadata(&link).unwrap().len();
    assert_eq!(ftw::dir_size(&link).unwrap(), link_len);

    let err = ftw::dir_size(tmp.path().join("missing")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn remove_dir_all_removes_the_tree_and_nothing_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let root = tmp.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    make_tree(&root, &outside, 400, 0xdead_beef_cafe_f00d);
    symlink(&outside, root.join("to outside")).unwrap();
    std::fs::hard_link(outside.join("keep"), root.join("hard link")).unwrap();
    let before = contents(&outside);

    ftw::remove_dir_all(&root).unwrap();
    assert_eq!(
        std::fs::symlink_metadata(&root).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(contents(&outside), before);
    // Nothing but the outside directory is left beside it.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![OsString::from("outside")]);
}

#[test]
fn remove_dir_all_decides_as_std_does() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let before = contents(&outside);

    // A link to a directory: the link goes, what it leads to stays.
    let removers: [fn(&Path) -> std::io::Result<()>; 2] =
        [|p| std::fs::remove_dir_all(p), |p| ftw::remove_dir_all(p)];
    for (i, remove) in removers.iter().enumerate() {
        let link = tmp.path().join(format!("link{i}"));
        symlink(&outside, &link).unwrap();
        remove(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).is_err());
        assert_eq!(contents(&outside), before);
    }

    // A missing path, and a file: the same kinds of error as std's.
    let missing = tmp.path().join("missing");
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    for path in [&missing, &file] {
        let ours = ftw::remove_dir_all(path).unwrap_err();
        let std = std::fs::remove_dir_all(path).unwrap_err();
        assert_eq!(ours.kind(), std.kind(), "{path:?}: {ours} / {std}");
    }
    assert_eq!(
        ftw::remove_dir_all(&missing).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert!(file.exists());
}

#[test]
fn remove_errors_are_all_counted_and_the_first_kept() {
    // Errors past the cap of kept errors are counted all the same: paths that do not
    // exist, one error each.
    let tmp = tempfile::tempdir().unwrap();
    let opts = ftw::RemoveOptions::new().threads(1);
    let n = ftw::remove::KEPT_ERRORS + 5;
    let mut total = 0;
    let mut kept = 0;
    for i in 0..n {
        let s = ftw::remove_tree(tmp.path().join(format!("missing{i}")), &opts);
        total += s.error_count;
        kept += s.errors.len();
        let err = s.into_result().unwrap_err();
        assert_eq!((err.count(), err.kind()), (1, ErrorKind::NotFound));
    }
    assert_eq!((total, kept), (n as u64, n));

    // One summary over many errors: a read-only directory's entries.
    if is_root() {
        return; // root removes from a read-only directory
    }
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    for i in 0..n {
        std::fs::write(ro.join(format!("f{i}")), b"x").unwrap();
    }
    set_mode(&ro, 0o555);
    let s = ftw::remove_tree(&ro, &opts);
    set_mode(&ro, 0o755);
    assert_eq!(s.error_count, n as u64);
    assert_eq!(s.errors.len(), ftw::remove::KEPT_ERRORS);
    let err = s.into_result().unwrap_err();
    assert_eq!(err.count(), n as u64);
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    let shown = err.to_string();
    assert!(
        shown.ends_with(&format!("(and {} more errors)", n - 1)),
        "{shown}"
    );
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), ErrorKind::PermissionDenied);
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether this runs as root (who may write to a read-only directory).
fn is_root() -> bool {
    let probe = tempfile::tempdir().unwrap();
    set_mode(probe.path(), 0o555);
    let root = std::fs::write(probe.path().join("probe"), b"").is_ok();
    set_mode(probe.path(), 0o755);
    root
}
