//! `ftw rm` as a user runs it: every kind of entry and odd names, links never followed,
//! the refusals, rm's spellings, deep chains under a small descriptor limit, a huge
//! directory, a mount point with --one-file-system, a read-only tree with --chmod.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

fn ftw_rm(args: &[&str], paths: &[&Path]) -> Run {
    let mut c = Command::new(ftw_bin());
    c.arg("rm").args(args).args(paths);
    run(&mut c)
}

/// Where the tests run as root, makes `path` and all below it nobody's (the user the
/// permission tests run ftw as).
fn give_to_nobody(path: &Path) {
    if is_root() {
        let out = Command::new("chown")
            .args(["-R", "-h", "65534:65534"])
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success(), "chown: {out:?}");
    }
}

/// Every path below `root` with its type, size, mode, link target and content hash, as
/// `find -printf` and `cksum` see them: equal before and after means untouched.
fn state(root: &Path) -> Vec<u8> {
    let out = Command::new("find")
        .arg(root)
        .args(["-printf", "%P %y %s %m %l\\0"])
        .output()
        .unwrap();
    let mut recs = records(&out.stdout);
    let files = Command::new("find")
        .arg(root)
        .args(["-type", "f", "-exec", "cksum", "{}", "+"])
        .output()
        .unwrap();
    recs.push(files.stdout);
    recs.concat()
}

/// The odd tree of the listing tests, plus a fifo, a socket, links and a hard link to
/// files outside.
fn every_kind(root: &Path, outside: &Path) {
    std::fs::create_dir_all(root).unwrap();
    odd_tree(root);
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("file"), b"outside").unwrap();
    std::fs::write(outside.join("dir/inner"), b"inner").unwrap();
    symlink(outside.join("file"), root.join("to-outside-file")).unwrap();
    symlink(outside.join("dir"), root.join("plain/to-outside-dir")).unwrap();
    std::fs::hard_link(outside.join("file"), root.join("hard-link")).unwrap();
    let made = Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let _ = std::os::unix::net::UnixListener::bind(root.join("socket")).unwrap();
}

#[test]
fn everything_inside_goes_and_nothing_outside() {
    for threads in ["1", "0", "8"] {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
        every_kind(&root, &outside);
        let before = state(&outside);
        // What -v prints is what find lists, the root included, each directory after
        // its contents.
        let (want, _) = gnu_find(&root, &[], &[]);
        let r = ftw_rm(&["-v", "-j", threads], &[&root]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "-j{threads}");
        assert!(std::fs::symlink_metadata(&root).is_err(), "-j{threads}");
        assert_eq!(state(&outside), before, "-j{threads}: outside changed");
        // Names hold newlines: -v prints them as they are, so split on the known paths.
        let printed = String::from_utf8_lossy(&r.stdout).into_owned();
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut rest: &[u8] = &r.stdout;
        while !rest.is_empty() {
            let next = want
                .iter()
                .filter(|w| rest.starts_with(w) && rest.get(w.len()) == Some(&b'\n'))
                .max_by_key(|w| w.len())
                .unwrap_or_else(|| panic!("-j{threads}: unexpected output {printed:?}"));
            got.push(next.clone());
            rest = &rest[next.len() + 1..];
        }
        for (i, path) in got.iter().enumerate() {
            let mut prefix = path.clone();
            prefix.push(b'/');
            assert!(
                !got[i + 1..].iter().any(|later| later.starts_with(&prefix)),
                "-j{threads}: a directory printed before its contents"
            );
        }
        got.sort();
        assert_same("ftw rm -v against find", &got, &want);
    }
}

#[test]
fn a_dry_run_changes_nothing_and_lists_what_would_go() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
    every_kind(&root, &outside);
    let before = state(tmp.path());
    let (want, _) = gnu_find(&root, &[], &[]);
    for args in [&["-n"][..], &["--dry-run", "-j", "1"]] {
        let r = ftw_rm(args, &[&root]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        assert_eq!(state(tmp.path()), before, "{args:?} changed the tree");
        // Lines, minus the names' own newlines: the count is what find counts.
        let newlines_in_names: usize = want
            .iter()
            .map(|w| w.iter().filter(|&&b| b == b'\n').count())
            .sum();
        let lines = r.stdout.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(lines - newlines_in_names, want.len(), "{args:?}");
    }
}

#[test]
fn links_given_are_removed_not_followed_and_link_slash_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    std::fs::create_dir_all(target.join("sub")).unwrap();
    std::fs::write(target.join("sub/keep"), b"x").unwrap();
    let link = tmp.path().join("link");
    symlink(&target, &link).unwrap();
    let before = state(&target);

    let slashed = Path::new(OsStr::from_bytes(
        &[link.as_os_str().as_bytes(), b"/"].concat(),
    ))
    .to_path_buf();
    for args in [&[][..], &["-f"], &["-rf"]] {
        let r = ftw_rm(args, &[&slashed]);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
        assert!(std::fs::symlink_metadata(&link).is_ok());
        assert_eq!(state(&target), before);
    }
    let r = ftw_rm(&[], &[&link]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(std::fs::symlink_metadata(&link).is_err());
    assert_eq!(state(&target), before);
}

/// What is below `top`, each entry as `find -printf '%P %y %m %l'` tells it (path
/// relative to `top`, type, mode, link target), sorted.
fn listing(top: &Path) -> Vec<String> {
    let out = Command::new("find")
        .arg(top)
        .args(["-mindepth", "1", "-printf", "%P %y %m %l\\n"])
        .output()
        .unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// A run, and what it left of its tree ([`listing`]).
type Left = (Run, Vec<String>);

/// Runs `args` in `dir` with GNU rm (`rm`) and with `ftw rm` (`ftw`), on two copies of
/// the same tree made by `make` under `dir/gnu` and `dir/ftw`, where they are run; gives
/// both runs and both trees as left ([`listing`]).
fn beside_gnu(dir: &Path, make: &dyn Fn(&Path), gnu: &[&str], ours: &[&str]) -> (Left, Left) {
    let (g, f) = (dir.join("gnu"), dir.join("ftw"));
    for top in [&g, &f] {
        let _ = std::fs::remove_dir_all(top);
        std::fs::create_dir_all(top).unwrap();
        make(top);
    }
    let r = run(Command::new("rm").current_dir(&g).args(gnu));
    let o = run(Command::new(ftw_bin()).current_dir(&f).arg("rm").args(ours));
    ((r, listing(&g)), (o, listing(&f)))
}

#[test]
fn dots_are_refused_always_and_the_other_paths_go() {
    // POSIX: a PATH whose last component is '.' or '..' is refused, with or without
    // --no-preserve-root; the other PATHs are removed all the same (exit 1), as GNU rm
    // does.
    let tmp = tempfile::tempdir().unwrap();
    let make = |top: &Path| {
        for d in ["keep/a", "build/sub", "x/y"] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        std::fs::write(top.join("keep/a/f"), b"x").unwrap();
        std::fs::write(top.join("build/sub/f"), b"x").unwrap();
    };
    for bad in [
        ".",
        "..",
        "./",
        ".//",
        "./.",
        "keep/..",
        "keep/../",
        "keep/a/.",
        "keep/.",
        "keep/./",
        "keep/..//",
        "x/y/../.",
        "./..",
    ] {
        for guard in [&[][..], &["--no-preserve-root"]] {
            let mut args = vec!["-rf"];
            args.extend_from_slice(guard);
            args.extend(["build", bad]);
            let ((gnu, gnu_left), (ours, left)) = beside_gnu(tmp.path(), &make, &args, &args);
            let what = format!("{args:?}: ftw: {} rm: {}", ours.stderr, gnu.stderr);
            assert_eq!((ours.code, gnu.code), (1, 1), "{what}");
            assert_eq!(left, gnu_left, "{what}");
            let refusal = format!("ftw: {bad}: refusing to remove '.' or '..' directory");
            assert!(ours.stderr.starts_with(&refusal), "{what}");
            assert_eq!(ours.stderr.lines().count(), 1, "{what}");
        }
    }
    // What the guard says of '/' is tested on the library's check (ftw::remove), never
    // by running 'ftw rm /'.
}

#[test]
fn missing_paths_fail_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    let there = tmp.path().join("there");
    std::fs::create_dir(&there).unwrap();
    let r = ftw_rm(&[], &[&missing, &there]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("missing: No such file or directory"),
        "{}",
        r.stderr
    );
    assert!(!there.exists(), "the other path is still removed");
    std::fs::create_dir(&there).unwrap();
    let r = ftw_rm(&["-f"], &[&missing, &there]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(!there.exists());
    // An empty PATH is missing, as for rm (not a usage error), shown as ''.
    std::fs::create_dir(&there).unwrap();
    let r = ftw_rm(&[], &[Path::new(""), &there]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "ftw: '': No such file or directory\n")
    );
    assert!(!there.exists());
    let r = ftw_rm(&["-f"], &[Path::new("")]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn force_ignores_a_path_through_a_file_as_gnu_rm_does() {
    // ENOTDIR is 'missing' for rm -f: 'file/x', 'file/', a link to a file named with a
    // slash, a dangling link so named; without -f, each is an error.
    let tmp = tempfile::tempdir().unwrap();
    let make = |top: &Path| {
        std::fs::write(top.join("file"), b"x").unwrap();
        symlink("file", top.join("link")).unwrap();
        symlink("nowhere", top.join("dangling")).unwrap();
        symlink("loop", top.join("loop")).unwrap();
        std::fs::create_dir(top.join("gone")).unwrap();
    };
    for path in [
        "file/x",
        "file/x/y",
        "file/",
        "link/",
        "dangling/",
        "loop/",
        "nowhere/x",
    ] {
        for force in [true, false] {
            let args = match force {
                true => vec!["-rf", path, "gone"],
                false => vec!["-r", path, "gone"],
            };
            let ((gnu, gnu_left), (ours, left)) = beside_gnu(tmp.path(), &make, &args, &args);
            let what = format!("{args:?}: ftw: {} rm: {}", ours.stderr, gnu.stderr);
            assert_eq!(ours.code, gnu.code, "{what}");
            assert_eq!(ours.code, if force { 0 } else { 1 }, "{what}");
            assert_eq!(left, gnu_left, "{what}");
            assert_eq!(ours.stderr.is_empty(), force, "{what}");
            if !force {
                // The system's words, as rm's: 'file/: Not a directory', not a paraphrase.
                let gnu_reason = gnu.stderr.rsplit(": ").next().unwrap_or_default();
                let ours_reason = ours.stderr.rsplit(": ").next().unwrap_or_default();
                assert_eq!(ours_reason, gnu_reason, "{what}");
                assert!(ours.stderr.starts_with(&format!("ftw: {path}: ")), "{what}");
            }
        }
    }
}

#[test]
fn rm_spellings_work_and_prompting_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("d");
    for args in [
        &["-r"][..],
        &["-R"],
        &["--recursive"],
        &["-rf"],
        &["-fr"],
        &["-Rfv"],
        &["--force", "--verbose"],
        &["--preserve-root"],
        &["--no-preserve-root"],
        &["--one-file-system"],
        &["-q", "--"],
    ] {
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/f"), b"x").unwrap();
        let r = ftw_rm(args, &[&d]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        assert!(!d.exists(), "{args:?}");
    }
    std::fs::create_dir_all(&d).unwrap();
    for args in [
        &["-i"][..],
        &["-I"],
        &["--interactive"],
        &["--interactive=always"],
        &["--interactive=once"],
        &["--interactive=yes"],
        &["--interactive=a"],
        &["--interactive=never", "-i"],
        &["-f", "-i"],
        &["-fI"],
    ] {
        let r = ftw_rm(args, &[&d]);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains("never prompts"), "{}", r.stderr);
        assert!(d.exists());
    }
    for args in [&["--interactive=maybe"][..], &["--interactive="]] {
        let r = ftw_rm(args, &[&d]);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains("invalid argument"), "{}", r.stderr);
        assert!(r.stderr.contains("'--interactive'"), "{}", r.stderr);
        assert!(d.exists());
    }
    // What ftw does, said as rm says it: accepted. The last prompting option counts,
    // and -f cancels those before it, as for rm.
    for args in [
        &["--interactive=never"][..],
        &["--interactive=no"],
        &["--interactive=none"],
        &["--interactive=n"],
        &["-i", "--interactive=never"],
        &["-i", "-f"],
        &["-if"],
        &["--interactive=always", "-f"],
    ] {
        std::fs::create_dir_all(&d).unwrap();
        let r = ftw_rm(args, &[&d]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        assert!(!d.exists(), "{args:?}");
    }
    let r = ftw_rm(&[], &[]);
    assert_eq!(r.code, 2, "a PATH is required");
    // Without PATH, -f is nothing to do, as for rm -f: a script's empty list goes on.
    for args in [&["-f"][..], &["-rf"], &["-i", "-f"]] {
        let gnu = run(Command::new("rm").args(args));
        let r = ftw_rm(args, &[]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        assert_eq!(gnu.code, 0, "{args:?}: {}", gnu.stderr);
    }
    let r = ftw_rm(&["--interactive=never"], &[]);
    assert_eq!(r.code, 2, "a PATH is required without -f");
}

#[test]
fn a_100000_level_chain_goes_under_ulimit_n_32() {
    // 20,000 levels serially: ext4 itself grows slower per level on deeper chains (GNU
    // rm too; BENCHMARKS.md), and the test runs on whatever /tmp is.
    for (threads, levels) in [("0", 100_000), ("1", 20_000)] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("chain");
        std::fs::create_dir(&root).unwrap();
        let made = chain(&root, levels, "d", 10);
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -n 32 && exec \"$0\" rm -v -j \"$1\" \"$2\" | wc -l")
            .arg(ftw_bin())
            .arg(threads)
            .arg(&root);
        let r = run(&mut c);
        assert_eq!(r.stderr, "", "-j{threads}");
        let lines: usize = String::from_utf8_lossy(&r.stdout).trim().parse().unwrap();
        assert_eq!(lines, made + 1, "-j{threads}");
        assert!(!root.exists(), "-j{threads}");
    }
}

#[test]
fn trees_go_under_ulimit_n_7_and_8() {
    // The standard streams and -v's own copy of standard output leave three (or four)
    // descriptors: the handle budget follows the descriptors free, not only the limit
    // (whose default floor of 4 handles, beside the path's parent, did not fit). Without
    // -v, 6 is enough.
    for limit in ["7", "8"] {
        for threads in ["0", "1", "64"] {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("tree");
            let mut made = 0;
            for d in 0..8 {
                let sub = root.join(format!("d{d}/e/f"));
                std::fs::create_dir_all(&sub).unwrap();
                for f in 0..20 {
                    std::fs::write(sub.join(format!("x{f}")), b"x").unwrap();
                    std::fs::write(root.join(format!("d{d}/y{f}")), b"x").unwrap();
                }
                made += 3 + 40;
            }
            made += chain(&root.join("d0"), 500, "c", 10);
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("ulimit -n \"$1\" && exec \"$0\" rm -v -j \"$2\" \"$3\" | wc -l")
                .arg(ftw_bin())
                .arg(limit)
                .arg(threads)
                .arg(&root);
            let r = run(&mut c);
            let what = format!("ulimit -n {limit}, -j {threads}");
            assert_eq!(r.stderr, "", "{what}");
            let lines: usize = String::from_utf8_lossy(&r.stdout).trim().parse().unwrap();
            assert_eq!(lines, made + 1, "{what}");
            assert!(!root.exists(), "{what}");
        }
    }
}

#[test]
fn a_directory_of_100000_files_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("flat");
    std::fs::create_dir(&root).unwrap();
    for i in 0..100_000 {
        std::fs::File::create(root.join(format!("file-{i}"))).unwrap();
    }
    let r = ftw_rm(&[], &[&root]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(!root.exists());
}

/// A bind mount of the same file system has the same device: --one-file-system still
/// leaves it (the kernel marks a mount's root), and what it shows, which lives outside
/// the tree, stays.
#[test]
fn one_file_system_leaves_a_bind_mount_of_the_same_file_system() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(root.join("a/bm")).unwrap();
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("sub/precious"), b"keep").unwrap();
    std::fs::write(root.join("a/x"), b"x").unwrap();
    let script = "mount --bind \"$2\" \"$1/a/bm\" || exit 97
        \"$0\" rm --one-file-system \"$1\"; echo \"rc=$?\"
        umount \"$1/a/bm\"";
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(ftw_bin())
        .arg(&root)
        .arg(&outside);
    let r = run(&mut c);
    if r.code == 97 || r.stderr.contains("unshare:") {
        eprintln!(
            "skipped: cannot bind-mount in a private mount namespace here: {}",
            r.stderr.trim()
        );
        return;
    }
    assert_eq!(String::from_utf8_lossy(&r.stdout), "rc=1\n", "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "ftw: {}: a mount point: not removed\n",
            root.join("a/bm").display()
        )
    );
    assert_eq!(
        std::fs::read(outside.join("sub/precious")).unwrap(),
        b"keep"
    );
    assert!(!root.join("a/x").exists() && root.join("a/bm").is_dir());
}

#[test]
fn one_file_system_leaves_a_mount_point_and_its_ancestors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    std::fs::create_dir_all(root.join("a/mnt")).unwrap();
    std::fs::create_dir_all(root.join("b/c")).unwrap();
    std::fs::write(root.join("b/c/f"), b"x").unwrap();
    std::fs::write(root.join("a/g"), b"x").unwrap();
    // In a private mount namespace, so that the mount goes with the test.
    let script = "mount -t tmpfs ftw-test \"$1/a/mnt\" || exit 97
        echo kept > \"$1/a/mnt/inside\"
        \"$0\" rm --one-file-system \"$1\"; echo \"rc=$?\"
        cat \"$1/a/mnt/inside\"
        umount \"$1/a/mnt\"";
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(ftw_bin())
        .arg(&root);
    let r = run(&mut c);
    if r.code == 97 || r.stderr.contains("unshare:") {
        eprintln!(
            "skipped: cannot mount a tmpfs in a private mount namespace here: {}",
            r.stderr.trim()
        );
        return;
    }
    let out = String::from_utf8_lossy(&r.stdout);
    assert_eq!(out, "rc=1\nkept\n", "{}", r.stderr);
    let mnt = root.join("a/mnt");
    assert_eq!(
        r.stderr,
        format!(
            "ftw: {}: on another file system: not removed\n",
            mnt.display()
        )
    );
    // The mount point and its ancestors stay; everything else went.
    assert!(mnt.is_dir() && !root.join("b").exists() && !root.join("a/g").exists());
}

#[test]
fn a_read_only_tree_fails_naming_the_directory_unless_chmod() {
    use std::os::unix::fs::PermissionsExt;
    let place = Unprivileged::new("ftw-rm-ro");
    let (root, bin) = (&place.root, &place.bin);
    let ro = root.join("mod/pkg@v1");
    std::fs::create_dir_all(ro.join("sub")).unwrap();
    std::fs::write(ro.join("sub/file.go"), b"package x").unwrap();
    std::fs::write(ro.join("go.mod"), b"module x").unwrap();
    // Directories that cannot be read at all (0000, below one that cannot either) or
    // only searched and written (0300), and a link to a directory outside whose mode
    // must stay as it is.
    let locked = root.join("mod/locked");
    std::fs::create_dir_all(locked.join("inner/deeper")).unwrap();
    std::fs::write(locked.join("inner/deeper/f"), b"f").unwrap();
    std::fs::write(locked.join("g"), b"g").unwrap();
    let wx = root.join("mod/wx");
    std::fs::create_dir_all(wx.join("d")).unwrap();
    std::fs::write(wx.join("d/h"), b"h").unwrap();
    let outside = root.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep"), b"keep").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("mod/out-link")).unwrap();
    std::os::unix::fs::symlink(&outside, locked.join("inner/out-link")).unwrap();
    // The tree is the unprivileged user's own, as Go's cache is its user's.
    give_to_nobody(root);
    for d in [&ro.join("sub"), &ro] {
        set_mode(d, 0o555);
    }
    set_mode(&outside, 0o500);
    set_mode(&locked.join("inner"), 0o000);
    set_mode(&locked, 0o000);
    set_mode(&wx, 0o300);
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
    let top = root.join("mod");
    let mut c = as_user(bin);
    c.arg("rm").arg(&top);
    let r = run(&mut c);
    if Unprivileged::cannot_switch(&r) {
        eprintln!("skipped: cannot run as an unprivileged user: {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    let named = format!("its directory {} is not writable", ro.join("sub").display());
    assert!(r.stderr.contains(&named), "{}", r.stderr);
    for d in [&locked, &wx] {
        let named = format!("{}: Permission denied", d.display());
        assert!(r.stderr.contains(&named), "{named}: {}", r.stderr);
    }
    assert!(r.stderr.contains("--chmod"), "{}", r.stderr);
    assert!(ro.join("sub/file.go").exists());

    // A dry run changes no mode, even with --chmod; it foresees the removal that
    // follows (exit 0), the directories that cannot be read told as removed without
    // what they hold (a warning says so).
    let mut c = as_user(bin);
    c.args(["rm", "-n", "--chmod"]).arg(&top);
    let r = run(&mut c);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!((mode(&locked), mode(&wx), mode(&ro)), (0, 0o300, 0o555));
    for d in [&locked, &wx] {
        let said = format!(
            "ftw: warning: {}: cannot be read until --chmod",
            d.display()
        );
        assert!(r.stderr.contains(&said), "{said}: {}", r.stderr);
        let listed = String::from_utf8_lossy(&r.stdout);
        assert!(listed.lines().any(|l| l == d.to_str().unwrap()), "{listed}");
    }
    assert_eq!(r.stderr.lines().count(), 2, "{}", r.stderr);

    let mut c = as_user(bin);
    c.args(["rm", "--chmod"]).arg(&top);
    let r = run(&mut c);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(!top.exists() && root.exists());
    // Nothing outside changed: what the links led to, its mode, the tree's parent.
    assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"keep");
    assert_eq!(mode(&outside), 0o500);
}

/// Makes `cmd` run where `faccessat2` (439 on every architecture) fails with `errno`,
/// as on Linux before 5.8 (`ENOSYS`) or under a seccomp profile that predates it
/// (`EPERM`): a seccomp filter, installed in the child before it runs the program.
#[cfg(target_os = "linux")]
fn without_faccessat2(cmd: &mut Command, errno: u32) {
    use std::os::unix::process::CommandExt;
    let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    // BPF_LD|BPF_W|BPF_ABS of the syscall's number, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K.
    let filter = [
        op(0x20, 0, 0, 0),
        op(0x15, 0, 1, 439),
        op(0x06, 0, 0, libc::SECCOMP_RET_ERRNO | errno),
        op(0x06, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: between fork and exec only prctl is called, which allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(target_os = "linux")]
#[test]
fn chmod_opens_up_where_the_kernel_lacks_faccessat2() {
    // Dir::may_change_at asks faccessat2; where it is missing (ENOSYS) or refused by a
    // sandbox (EPERM), the owner's bits tell, as before: --chmod still opens up.
    let place = Unprivileged::new("ftw-rm-chmod-nofaccessat2");
    let w = place.root.join("w");
    for errno in [libc::ENOSYS, libc::EPERM] {
        unreadable_tree(&w, 2);
        give_to_nobody(&place.root);
        let mut c = as_user(&place.bin);
        c.args(["rm", "--chmod"]).arg(&w);
        without_faccessat2(&mut c, errno as u32);
        let r = run(&mut c);
        if Unprivileged::cannot_switch(&r) {
            eprintln!("skipped: cannot run as an unprivileged user: {}", r.stderr);
            return;
        }
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (0, ""),
            "faccessat2: errno {errno}"
        );
        assert!(!w.exists());
    }
}

#[test]
fn chmod_on_a_read_only_file_system_says_so() {
    // On a file system mounted read-only, faccessat2's W_OK answers EROFS before the
    // mode is asked: an unreadable directory there is still one --chmod would change,
    // and its failure to (EROFS) is told, not the 'Permission denied' it leads to, as
    // on a read-only bind mount. A tmpfs mounted read-only in a mount namespace of its
    // own (which takes root to make; skipped with a message elsewhere).
    if !is_root() {
        eprintln!("skipped: mounting a tmpfs takes root");
        return;
    }
    let place = Unprivileged::new("ftw-rm-chmod-rofs");
    let w = place.root.join("w");
    std::fs::create_dir_all(w.join("ro")).unwrap();
    let script = "mount -t tmpfs -o size=1m tmpfs \"$1/ro\" || exit 97
        mkdir -p \"$1/ro/z/q\" && touch \"$1/ro/z/q/f\" && chown -R 65534:65534 \"$1\" &&
        chmod 0000 \"$1/ro/z\" && mount -o remount,ro \"$1/ro\" || exit 98
        setpriv --reuid=65534 --regid=65534 --clear-groups -- \"$0\" rm --chmod \"$1\"
        echo \"rc=$?\"";
    let r = run(Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(&place.bin)
        .arg(&w));
    if r.code == 97 || r.stderr.contains("unshare:") || r.stderr.contains("setpriv:") {
        eprintln!(
            "skipped: cannot mount a tmpfs in a private mount namespace here: {}",
            r.stderr.trim()
        );
        return;
    }
    assert_eq!(String::from_utf8_lossy(&r.stdout), "rc=1\n", "{}", r.stderr);
    let z = w.join("ro/z");
    assert!(
        r.stderr.contains(&format!(
            "{}: cannot give it owner read, write and search (--chmod): Read-only file system",
            z.display()
        )),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("Permission denied"), "{}", r.stderr);
}

/// Directories `w/dN/x/y` (N from 1 to `n`) that their owner can neither read nor (but
/// for `x`) search: `dN` and `y` mode 0000, `x` 0300, a file in each `y`.
fn unreadable_tree(w: &Path, n: usize) {
    for i in 1..=n {
        let d = w.join(format!("d{i}"));
        std::fs::create_dir_all(d.join("x/y")).unwrap();
        std::fs::write(d.join("x/y/f"), b"f").unwrap();
        set_mode(&d.join("x/y"), 0o000);
        set_mode(&d.join("x"), 0o300);
        set_mode(&d, 0o000);
    }
}

#[test]
fn chmod_says_why_it_could_not_change_a_mode() {
    // Changing a directory that cannot be read takes one descriptor more (an O_PATH
    // handle) and /proc: without them, the reason is told, not the refusal it leads to.
    // Run as nobody where the tests run as root, whom modes do not stop (root's removal
    // changes no mode, so it needs neither).
    let place = Unprivileged::new("ftw-rm-chmod");
    let w = place.root.join("w");
    unreadable_tree(&w, 10);
    let own = |p: &Path| {
        give_to_nobody(p);
    };
    own(&place.root);
    // `sh -c SCRIPT BIN W` as the test's user (setpriv first where the tests are root).
    let shell = |script: &str, prefix: &[&str]| {
        let mut c = Command::new(prefix.first().copied().unwrap_or("sh"));
        c.args(prefix.iter().skip(1));
        if !prefix.is_empty() {
            c.arg("sh");
        }
        c.arg("-c").arg(script).arg(&place.bin).arg(&w);
        c
    };
    let nobody: &[&str] = if is_root() {
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]
    } else {
        &[]
    };
    let r = run(&mut shell(
        "ulimit -n 6 && exec \"$0\" rm -j1 --chmod \"$1\"",
        nobody,
    ));
    if Unprivileged::cannot_switch(&r) {
        eprintln!("skipped: cannot run as an unprivileged user: {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.is_empty());
    for l in r.stderr.lines() {
        assert!(
            l.contains("(--chmod): Too many open files"),
            "ulimit -n 6: {}",
            r.stderr
        );
    }
    let r = run(&mut shell(
        "ulimit -n 16 && exec \"$0\" rm --chmod \"$1\"",
        nobody,
    ));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "ulimit -n 16");
    assert!(!w.exists());

    // In a mount namespace of its own, without /proc (which takes root to make).
    unreadable_tree(&w, 2);
    own(&place.root);
    let script = "umount -l /proc || exit 97
        setpriv --reuid=65534 --regid=65534 --clear-groups -- \"$0\" rm --chmod \"$1\"
        echo \"rc=$?\"";
    let r = run(&mut shell(
        script,
        &["unshare", "--mount", "--propagation", "private"],
    ));
    if r.code == 97 || r.stderr.contains("unshare:") || r.stderr.contains("setpriv:") {
        eprintln!(
            "skipped the part without /proc: cannot unmount it in a private mount namespace here: {}",
            r.stderr.trim()
        );
        let mut c = as_user(&place.bin);
        c.args(["rm", "--chmod"]).arg(&w);
        let r = run(&mut c);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        return;
    }
    assert_eq!(String::from_utf8_lossy(&r.stdout), "rc=1\n", "{}", r.stderr);
    assert!(
        r.stderr.contains("(--chmod): /proc is not mounted"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("Permission denied"), "{}", r.stderr);
}

#[test]
fn empty_directories_that_cannot_be_read_go_as_with_rm_rf() {
    // rmdir asks only the parent's permission: an empty directory of mode 0000, the
    // user's own or another's, goes with `rm -rf`, and a full one stays, reported.
    // The same trees are given to GNU rm and to ftw, as nobody where the tests are root.
    for threads in ["1", "0"] {
        unreadable_against_rm_rf(threads);
    }
}

fn unreadable_against_rm_rf(threads: &str) {
    let place = Unprivileged::new("ftw-rm-unreadable");
    let make = |top: &Path| {
        for d in [
            "mine0",
            "theirs0",
            "sub/deeper/e0",
            "sub/full0/x",
            "full-theirs/y",
        ] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        std::fs::write(top.join("sub/f"), b"f").unwrap();
        std::fs::create_dir_all(top.join("alone0")).unwrap();
    };
    let (a, b) = (place.root.join("a"), place.root.join("b"));
    for top in [&a, &b] {
        make(&top.join("t"));
        give_to_nobody(top);
        if is_root() {
            // Another user's: root's, whom the test's user is not.
            for d in ["t/theirs0", "t/full-theirs"] {
                std::os::unix::fs::chown(top.join(d), Some(0), Some(0)).unwrap();
            }
        }
        for d in [
            "mine0",
            "theirs0",
            "sub/deeper/e0",
            "sub/full0",
            "full-theirs",
            "alone0",
        ] {
            set_mode(&top.join("t").join(d), 0o000);
        }
    }
    let gnu = {
        let mut c = if is_root() {
            as_nobody(Path::new("rm"))
        } else {
            Command::new("rm")
        };
        c.arg("-rf").arg(a.join("t")).arg(a.join("t/alone0"));
        run(&mut c)
    };
    if Unprivileged::cannot_switch(&gnu) {
        eprintln!(
            "skipped: cannot run as an unprivileged user: {}",
            gnu.stderr
        );
        return;
    }
    // alone0 is also given as a PATH of its own, before its tree.
    let mut c = as_user(&place.bin);
    c.args(["rm", "-j", threads])
        .arg(b.join("t/alone0"))
        .arg(b.join("t"));
    let ours = run(&mut c);
    let left = |top: &Path| {
        let out = Command::new("find")
            .arg(top)
            .arg("-mindepth")
            .arg("1")
            .output()
            .unwrap();
        let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l[top.as_os_str().len()..].to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        ours.code, gnu.code,
        "ftw: {} rm: {}",
        ours.stderr, gnu.stderr
    );
    assert_eq!(left(&b), left(&a), "ftw: {}", ours.stderr);
    assert!(left(&b).contains(&"/t/sub/full0".to_string()));
    assert!(!left(&b).contains(&"/t/mine0".to_string()));
    for full in ["t/sub/full0", "t/full-theirs"] {
        let named = format!("{}: Permission denied", b.join(full).display());
        assert!(ours.stderr.contains(&named), "{named}: {}", ours.stderr);
    }
    let errors = ours
        .stderr
        .lines()
        .filter(|l| !l.starts_with("ftw: warning:"));
    assert_eq!(errors.count(), 2, "{}", ours.stderr);
    for top in [&a, &b] {
        for d in ["t/sub/full0", "t/full-theirs"] {
            set_mode(&top.join(d), 0o755);
        }
    }
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir(&root).unwrap();
    for i in 0..20_000 {
        std::fs::File::create(root.join(format!("f{i}"))).unwrap();
    }
    let r = ftw_rm(&["-j", "1"], &[&root]);
    assert_eq!((r.code, r.stderr.as_str(), r.stdout.len()), (0, "", 0));
}

#[test]
fn an_immutable_file_is_not_blamed_on_its_directory() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    let (a, imm) = (root.join("a"), root.join("a/imm"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(root.join("b")).unwrap();
    std::fs::write(&imm, b"x").unwrap();
    std::fs::write(root.join("b/f"), b"x").unwrap();
    let chattr = |flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(&imm)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !chattr("+i") {
        eprintln!("skipped: chattr +i is not possible here");
        return;
    }
    struct Unset<F: Fn(&str) -> bool>(F);
    impl<F: Fn(&str) -> bool> Drop for Unset<F> {
        fn drop(&mut self) {
            (self.0)("-i");
        }
    }
    let _unset = Unset(chattr);
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o555)).unwrap();
    for args in [&[][..], &["--chmod"]] {
        let r = ftw_rm(args, &[&root]);
        // EPERM said as it is: not "its directory is not writable", no --chmod hint,
        // and --chmod changes no mode for it.
        let expected = format!("ftw: {}: Operation not permitted\n", imm.display());
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, expected.as_str()),
            "{args:?}"
        );
        assert!(imm.exists() && !root.join("b").exists(), "{args:?}");
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o555, "{args:?}");
    }
}

/// The directory named in "its directory ... is not writable" is escaped as the error's
/// own path is: a newline, a byte that is not UTF-8 (kept, not turned into U+FFFD).
#[test]
fn the_read_only_directory_in_a_message_is_escaped() {
    let place = Unprivileged::new("ftw-rm-ro-odd");
    let (root, bin) = (&place.root, &place.bin);
    let ro = root.join(OsStr::from_bytes(b"odd\nname\xff"));
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("f"), b"x").unwrap();
    if is_root() {
        for p in [root, &ro, &ro.join("f")] {
            std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
        }
    }
    set_mode(&ro, 0o555);
    let mut c = as_user(bin);
    c.arg("rm").arg(&ro);
    let r = run(&mut c);
    if Unprivileged::cannot_switch(&r) {
        eprintln!("skipped: cannot run as an unprivileged user: {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    let shown = format!("{}/odd\\nname\\xff", root.display());
    let named = format!("its directory {shown} is not writable");
    assert!(r.stderr.contains(&named), "{}", r.stderr);
    assert!(!r.stderr.contains('\u{fffd}'), "{}", r.stderr);
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.contains("not writable"))
            .count(),
        1
    );
    set_mode(&ro, 0o755);
}

/// Under a small limit on address space (`ulimit -v`), workers that would not fit are
/// not started (a warning says how many run): the removal ends, complete, instead of
/// aborting when an allocation fails.
#[test]
fn a_small_address_space_limit_starts_fewer_workers_and_removes_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    for d in 0..200 {
        let dir = root.join(format!("d{d}/e"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..5 {
            std::fs::write(dir.join(format!("f{f}")), b"x").unwrap();
        }
    }
    let r = run(Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 30000 && exec \"$0\" rm -j 16 \"$1\"")
        .arg(ftw_bin())
        .arg(&root));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!root.exists());
    assert!(
        r.stderr.is_empty() || r.stderr.contains("too little address space"),
        "{}",
        r.stderr
    );
}

/// GNU `rm -rf PATH` and `ftw rm PATH` as the test's user (nobody where the tests run
/// as root), each on its own copy of a tree made by `make` in `place`: both runs, and
/// what is left of each tree (`find -printf %P`, sorted). `None` where the user cannot
/// be switched to.
fn as_user_beside_gnu(
    place: &Unprivileged,
    make: &dyn Fn(&Path),
    path: &str,
) -> Option<(Left, Left)> {
    let (a, b) = (place.root.join("gnu"), place.root.join("ftw"));
    for top in [&a, &b] {
        std::fs::create_dir_all(top).unwrap();
        make(top);
    }
    let mut c = as_user(Path::new("rm"));
    c.current_dir(&a).args(["-rf", path]);
    let gnu = run(&mut c);
    if Unprivileged::cannot_switch(&gnu) {
        eprintln!(
            "skipped: cannot run as an unprivileged user: {}",
            gnu.stderr
        );
        return None;
    }
    let mut c = as_user(&place.bin);
    c.current_dir(&b).args(["rm", path]);
    let ours = run(&mut c);
    let (gl, ol) = (listing(&a), listing(&b));
    for top in [&a, &b] {
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+rwx")
            .arg(top)
            .status();
        let _ = std::fs::remove_dir_all(top);
    }
    Some(((gnu, gl), (ours, ol)))
}

#[test]
fn what_a_directory_holds_goes_even_where_it_cannot_go_itself() {
    // Never give up: where a directory cannot itself be removed (its parent is not
    // writable by this user), what it holds is removed all the same, as rm -rf removes
    // it, and the error names the directory. A parent that may be searched but not
    // read (mode 0100, 0300) is enough to reach it: it is never read.
    let place = Unprivileged::new("ftw-rm-never-give-up");
    for parent_mode in [0o100, 0o300, 0o500, 0o555, 0o700] {
        for path in ["p/d", "p/d/", "p"] {
            let make = |top: &Path| {
                let d = top.join("p/d");
                std::fs::create_dir_all(d.join("e/deeper")).unwrap();
                for f in ["f1", "e/f2", "e/deeper/f3"] {
                    std::fs::write(d.join(f), b"x").unwrap();
                }
                std::fs::write(top.join("p/top"), b"x").unwrap();
                give_to_nobody(top);
                set_mode(&top.join("p"), parent_mode);
            };
            let Some(((gnu, gnu_left), (ours, left))) = as_user_beside_gnu(&place, &make, path)
            else {
                return;
            };
            let what = format!(
                "{path} in a parent of mode {parent_mode:o}: ftw: {} rm: {}",
                ours.stderr, gnu.stderr
            );
            assert_eq!(left, gnu_left, "{what}");
            assert_eq!(ours.code, gnu.code, "{what}");
            if path.starts_with("p/d") && parent_mode & 0o200 == 0 {
                assert!(left.iter().any(|l| l.starts_with("p/d d")), "{what}");
                assert!(!left.iter().any(|l| l.starts_with("p/d/")), "{what}");
                assert!(ours.stderr.starts_with("ftw: p/d"), "{what}");
                assert!(ours.stderr.contains("Permission denied"), "{what}");
            }
        }
    }
}

/// `ftw rm -n ARGS PATHS` then `ftw rm -v ARGS PATHS` as the test's user: both runs.
/// The dry run's note on a directory it cannot read (which the removal removes if it
/// is empty) is taken out of its messages, which are otherwise the removal's.
fn dry_then_real(place: &Unprivileged, args: &[&str], paths: &[&Path]) -> Option<(Run, Run)> {
    let go = |first: &str| {
        let mut c = as_user(&place.bin);
        c.arg("rm").arg(first).args(args).args(paths);
        run(&mut c)
    };
    let mut dry = go("-n");
    if Unprivileged::cannot_switch(&dry) {
        eprintln!(
            "skipped: cannot run as an unprivileged user: {}",
            dry.stderr
        );
        return None;
    }
    dry.stderr = dry.stderr.replace(
        ": it cannot be read (a removal removes it only if it is empty)",
        "",
    );
    let real = go("-v");
    Some((dry, real))
}

#[test]
fn a_dry_run_foresees_what_the_removal_fails_on() {
    // What a real run fails on, the dry run reports as the real run reports it, and
    // exits as it would: a directory its user cannot write (another user's, a
    // read-only one), another user's file in a sticky directory, a directory it cannot
    // read, immutable and append-only files (chattr, where the file system has it). It
    // prints what the real run removes.
    let place = Unprivileged::new("ftw-rm-dry-foresees");
    let t = place.root.join("t");
    let chattr = |flag: &str, p: &Path| {
        Command::new("chattr")
            .arg(flag)
            .arg(p)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    for threads in ["1", "0"] {
        for d in ["theirs", "ro", "sticky", "locked", "free/sub", "flags/app"] {
            std::fs::create_dir_all(t.join(d)).unwrap();
        }
        for f in [
            "theirs/f",
            "ro/f",
            "sticky/mine",
            "sticky/theirs",
            "locked/f",
            "free/sub/f",
            "free/g",
            "flags/imm",
            "flags/app/f",
        ] {
            std::fs::write(t.join(f), b"x").unwrap();
        }
        give_to_nobody(&place.root);
        if is_root() {
            for p in ["theirs", "sticky", "sticky/theirs", "locked"] {
                std::os::unix::fs::chown(t.join(p), Some(0), Some(0)).unwrap();
            }
        }
        set_mode(&t.join("sticky"), 0o1777);
        set_mode(&t.join("ro"), 0o555);
        set_mode(&t.join("locked"), 0o000);
        let flags = chattr("+i", &t.join("flags/imm")) && chattr("+a", &t.join("flags/app"));
        if !flags {
            // Not here: the rest of the tree still says something.
            let _ = std::fs::remove_dir_all(t.join("flags"));
        }
        let r = dry_then_real(&place, &["-j", threads], &[&t]);
        if flags {
            chattr("-i", &t.join("flags/imm"));
            chattr("-a", &t.join("flags/app"));
        }
        let Some((dry, real)) = r else { return };
        let what = format!("-j{threads}: dry run: {} real: {}", dry.stderr, real.stderr);
        assert_eq!((dry.code, real.code), (1, 1), "{what}");
        let sorted = |s: &[u8]| {
            let mut v: Vec<String> = String::from_utf8_lossy(s)
                .lines()
                .map(String::from)
                .collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&dry.stdout), sorted(&real.stdout), "{what}");
        assert_eq!(
            sorted(dry.stderr.as_bytes()),
            sorted(real.stderr.as_bytes()),
            "{what}"
        );
        let mut failed = vec!["ro/f", "locked"];
        if is_root() {
            failed.extend(["theirs/f", "sticky/theirs"]);
        }
        if flags {
            failed.extend(["flags/imm", "flags/app/f"]);
        }
        for f in failed {
            let named = format!("ftw: {}: ", t.join(f).display());
            assert!(dry.stderr.contains(&named), "{named}: {what}");
        }
        assert!(!t.join("free").exists() && !t.join("sticky/mine").exists());
        set_mode(&t.join("ro"), 0o755);
        set_mode(&t.join("locked"), 0o755);
        std::fs::remove_dir_all(&t).unwrap();
    }
}

#[test]
fn a_dry_run_foresees_a_mount_point() {
    // A PATH that is a mount point is emptied and its removal fails (EBUSY), as one
    // inside a tree does: the dry run says so, and exits 1 as the removal does. In a
    // private mount namespace (which takes root to make; skipped with a message
    // elsewhere).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    std::fs::create_dir_all(root.join("mnt")).unwrap();
    let script = "mount -t tmpfs ftw-test \"$1/mnt\" || exit 97
        for p in \"$1/mnt\" \"$1\"; do
            echo in > \"$1/mnt/inside\"
            \"$0\" rm -n \"$p\"; echo \"dry=$?\"
            \"$0\" rm -v \"$p\"; echo \"real=$?\"
        done
        umount \"$1/mnt\"";
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(ftw_bin())
        .arg(&root);
    let r = run(&mut c);
    if r.code == 97 || r.stderr.contains("unshare:") {
        eprintln!(
            "skipped: cannot mount a tmpfs in a private mount namespace here: {}",
            r.stderr.trim()
        );
        return;
    }
    let (mnt, inside) = (root.join("mnt"), root.join("mnt/inside"));
    let (mnt, inside) = (mnt.display(), inside.display());
    let each = format!("{inside}\ndry=1\n{inside}\nreal=1\n");
    assert_eq!(String::from_utf8_lossy(&r.stdout), each.repeat(2));
    let busy = format!("ftw: {mnt}: Device or resource busy\n");
    assert_eq!(r.stderr, busy.repeat(4));
}
