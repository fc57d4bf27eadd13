//! `ftw cp` against GNU `cp` on the same trees: each case is prepared twice, identically,
//! then GNU cp runs in one and ftw cp in the other with the same arguments, and the two
//! results are compared whole: names (bytes), types, contents, mode, owner, mtime to the
//! nanosecond, link targets, hard-link groups, allocated blocks and extended
//! attributes (a walk through handles, so depth is no obstacle), and, where rsync is
//! installed, `rsync -naHAX --checksum --itemize-changes`, which must print nothing.
#![cfg(unix)]

mod common;

use common::*;
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

/// Whether the listing compares times: a copy that does not keep them gives each
/// entry the time it was made.
#[derive(Clone, Copy, PartialEq)]
enum Times {
    Kept,
    Ignored,
}

/// One line per entry below `root` (its own attributes left out): path, type, mode,
/// owner, size, contents' checksum or link target, blocks, xattrs, mtime (with
/// `Times::Kept`), and the first path of its inode where it has several names.
fn listing(root: &Path, times: Times) -> Vec<String> {
    let top = rfs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut inodes: HashMap<(u64, u64), Vec<u8>> = HashMap::new();
    // Depth first through handles: (directory handle, its path).
    let mut stack: Vec<(OwnedFd, Vec<u8>)> = vec![(top, Vec::new())];
    while let Some((dir, path)) = stack.pop() {
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut buf = Vec::with_capacity(8192);
        let mut raw = rfs::RawDir::new(&dir, buf.spare_capacity_mut());
        while let Some(e) = raw.next() {
            let name = e.unwrap().file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(name);
            }
        }
        names.sort();
        for name in names {
            let mut rel = path.clone();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(&name);
            let st = rfs::statat(&dir, name.as_slice(), AtFlags::SYMLINK_NOFOLLOW).unwrap();
            let kind = rfs::FileType::from_raw_mode(st.st_mode);
            let mut what = format!("{kind:?}");
            let mut xattrs = String::new();
            match kind {
                rfs::FileType::Directory => {
                    let sub = rfs::openat(
                        &dir,
                        name.as_slice(),
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    );
                    match sub {
                        Ok(sub) => {
                            xattrs = xattrs_of(&sub);
                            stack.push((sub, rel.clone()));
                        }
                        Err(e) => what.push_str(&format!(" unreadable {e}")),
                    }
                }
                rfs::FileType::RegularFile => {
                    let f = rfs::openat(
                        &dir,
                        name.as_slice(),
                        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .unwrap();
                    let (mut sum, mut len) = (0u64, 0u64);
                    let mut b = vec![0u8; 65536];
                    loop {
                        let n = rustix::io::read(&f, &mut b[..]).unwrap();
                        if n == 0 {
                            break;
                        }
                        for &x in &b[..n] {
                            sum = sum.wrapping_mul(31).wrapping_add(u64::from(x));
                        }
                        len += n as u64;
                    }
                    xattrs = xattrs_of(&f);
                    what.push_str(&format!(" {len} {sum:x} blocks={}", st.st_blocks));
                }
                rfs::FileType::Symlink => {
                    let t = rfs::readlinkat(&dir, name.as_slice(), Vec::new()).unwrap();
                    what.push_str(&format!(" -> {}", t.to_bytes().escape_ascii()));
                }
                _ => what.push_str(&format!(" rdev={}", st.st_rdev)),
            }
            if st.st_nlink > 1 && kind != rfs::FileType::Directory {
                let first = inodes
                    .entry((st.st_dev, st.st_ino))
                    .or_insert_with(|| rel.clone());
                what.push_str(&format!(" first={}", first.escape_ascii()));
            }
            // A time the test set is in 2009; one the system set during the run is
            // only said to be recent (GNU cp and ftw cp run moments apart).
            let mtime = match times {
                Times::Kept if st.st_mtime > RECENT => " mtime=recent".to_string(),
                Times::Kept => format!(" mtime={}.{:09}", st.st_mtime, st.st_mtime_nsec),
                Times::Ignored => String::new(),
            };
            out.push(format!(
                "{} {what} mode={:o} owner={}:{}{mtime}{xattrs}",
                rel.escape_ascii(),
                st.st_mode,
                st.st_uid,
                st.st_gid,
            ));
        }
    }
    out
}

/// Times before this (2020) were set by the tests.
const RECENT: i64 = 1_577_836_800;

/// Sets the times of everything below `root` (links' own too) to one time in 2009,
/// to the nanosecond, directories after their contents.
fn fix_times(root: &Path) {
    let t = rfs::Timestamps {
        last_access: rfs::Timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 1,
        },
        last_modification: rfs::Timespec {
            tv_sec: 1_234_567_890,
            tv_nsec: 123_456_789,
        },
    };
    // Every entry, parents before children; then set in reverse.
    let mut all = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd {
                let e = e.unwrap();
                all.push(e.path());
                if e.file_type().unwrap().is_dir() {
                    todo.push(e.path());
                }
            }
        }
    }
    for e in all.iter().rev() {
        rfs::utimensat(rfs::CWD, e, &t, AtFlags::SYMLINK_NOFOLLOW).unwrap();
    }
}

fn xattrs_of(fd: &OwnedFd) -> String {
    let mut names = vec![0u8; 4096];
    let Ok(n) = rfs::flistxattr(fd, &mut names[..]) else {
        return String::new();
    };
    let mut out = String::new();
    for name in names[..n].split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let mut v = vec![0u8; 4096];
        let len = rfs::fgetxattr(fd, name, &mut v[..]).unwrap_or(0);
        out.push_str(&format!(
            " {}={}",
            name.escape_ascii(),
            v[..len].escape_ascii()
        ));
    }
    out
}

/// Asserts two listings equal, showing the first lines that differ.
fn assert_listings(what: &str, gnu: &[String], ours: &[String]) {
    if gnu == ours {
        return;
    }
    let only_gnu: Vec<_> = gnu.iter().filter(|l| !ours.contains(l)).take(8).collect();
    let only_ours: Vec<_> = ours.iter().filter(|l| !gnu.contains(l)).take(8).collect();
    panic!(
        "{what}: the copies differ\nGNU cp only:\n{}\nftw cp only:\n{}",
        only_gnu
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        only_ours
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    );
}

/// Whether rsync is here to check the copies a second way (.ci/run installs it).
fn rsync() -> bool {
    Command::new("rsync").arg("--version").output().is_ok()
}

/// `rsync -naHAX --checksum --itemize-changes A/ B/` prints nothing.
fn rsync_same(a: &Path, b: &Path) {
    if !rsync() {
        eprintln!("rsync is not installed: the second check is skipped");
        return;
    }
    let slash = |p: &Path| {
        let mut s = p.as_os_str().to_owned();
        s.push("/");
        s
    };
    let r = run(Command::new("rsync")
        .args(["-naHAX", "--checksum", "--itemize-changes"])
        .arg(slash(a))
        .arg(slash(b)));
    // rsync without ACL support says so and checks the rest.
    let stderr: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.contains("ACLs are not supported"))
        .collect();
    assert!(
        r.stdout.is_empty() && stderr.is_empty(),
        "rsync finds differences between {a:?} and {b:?}:\n{}{}",
        String::from_utf8_lossy(&r.stdout),
        stderr.join("\n")
    );
}

/// Two identical sandboxes made by `setup`: GNU cp runs in `gnu`, ftw cp in `ftw`, with
/// the same arguments, from inside them.
struct Both {
    _tmp: tempfile::TempDir,
    gnu: std::path::PathBuf,
    ftw: std::path::PathBuf,
}

impl Both {
    fn new(setup: impl Fn(&Path)) -> Both {
        let tmp = tempfile::tempdir().unwrap();
        let gnu = tmp.path().join("gnu");
        let ftw = tmp.path().join("ftw");
        for d in [&gnu, &ftw] {
            std::fs::create_dir(d).unwrap();
            setup(d);
            fix_times(d);
        }
        Both {
            _tmp: tmp,
            gnu,
            ftw,
        }
    }

    /// Runs `cp ARGS` and `ftw cp EXTRA ARGS`; asserts the same exit status (and
    /// silence where GNU is silent), and returns ftw's run.
    fn run(&self, args: &[&str], extra: &[&str]) -> Run {
        self.run_with(args, extra, |p| Command::new(p), &ftw_bin())
    }

    /// As [`Both::run`], each command made by `command` (as another user, say), ftw
    /// being the binary `bin`.
    fn run_with(
        &self,
        args: &[&str],
        extra: &[&str],
        command: impl Fn(&Path) -> Command,
        bin: &Path,
    ) -> Run {
        let g = run(command(Path::new("cp")).args(args).current_dir(&self.gnu));
        let o = run(command(bin)
            .arg("cp")
            .args(extra)
            .args(args)
            .current_dir(&self.ftw));
        assert_eq!(
            g.code, o.code,
            "cp {args:?}: GNU's status {} ({}), ftw's {} ({})",
            g.code, g.stderr, o.code, o.stderr
        );
        if g.stderr.is_empty() {
            assert!(o.stderr.is_empty(), "ftw cp {args:?}: {}", o.stderr);
        }
        o
    }

    fn same(&self, what: &str, times: Times) {
        assert_listings(what, &listing(&self.gnu, times), &listing(&self.ftw, times));
    }
}

/// Whether the file system of `dir` keeps `user.*` extended attributes.
fn user_xattrs(dir: &Path) -> bool {
    let probe = dir.join(".xattr-probe");
    std::fs::write(&probe, b"").unwrap();
    let f = rfs::open(&probe, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).unwrap();
    let ok = rfs::fsetxattr(&f, "user.probe", b"1", rfs::XattrFlags::empty()).is_ok();
    std::fs::remove_file(&probe).unwrap();
    ok
}

fn set_xattr(path: &Path, name: &str, value: &[u8]) {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let f = rfs::open(path, flags, Mode::empty()).unwrap();
    rfs::fsetxattr(&f, name, value, rfs::XattrFlags::empty()).unwrap();
}

fn mkfifo(path: &Path) {
    rfs::mknodat(rfs::CWD, path, rfs::FileType::Fifo, Mode::from(0o640), 0).unwrap();
}

/// Two sources with everything `cp -a` keeps: odd names, links of every kind, hard
/// links within and across them, sparse files, empty files, fifos, modes
/// 0000 (as root), 0555, 1777, 2755, setuid, and `user.*` attributes where the file
/// system keeps them.
fn hostile(root: &Path) {
    let s1 = root.join("s1");
    let s2 = root.join("s2");
    std::fs::create_dir(&s1).unwrap();
    std::fs::create_dir(&s2).unwrap();
    odd_tree(&s1);
    symlink("/etc/passwd", s1.join("absolute")).unwrap();
    std::fs::write(s1.join("empty-file"), b"").unwrap();
    std::fs::hard_link(s1.join("plain/a.txt"), s1.join("plain/sub/a-again")).unwrap();
    std::fs::hard_link(s1.join("plain/a.txt"), s2.join("a-from-s1")).unwrap();
    std::fs::write(s2.join("own"), b"s2").unwrap();
    std::fs::hard_link(s2.join("own"), s2.join("own2")).unwrap();
    // Sparse: holes at the start, in the middle, at the end.
    for (name, data_at, len) in [
        ("hole-start", 3u64 << 20, 4u64 << 20),
        ("hole-middle", 0, 4 << 20),
        ("hole-end", 0, 8 << 20),
    ] {
        let f = std::fs::File::create(s1.join(name)).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[1u8; 65536], data_at).unwrap();
        if name == "hole-middle" {
            std::os::unix::fs::FileExt::write_all_at(&f, &[2u8; 65536], (4 << 20) - 65536).unwrap();
        }
        f.set_len(len).unwrap();
    }
    mkfifo(&s1.join("fifo"));
    for (name, mode) in [("ro", 0o555), ("tmp", 0o1777), ("sgid", 0o2755)] {
        std::fs::create_dir(s1.join(name)).unwrap();
        std::fs::write(s1.join(name).join("inside"), name).unwrap();
        set_mode(&s1.join(name), mode);
    }
    std::fs::write(s1.join("setuid"), b"#!/bin/sh\n").unwrap();
    set_mode(&s1.join("setuid"), 0o4755);
    if is_root() {
        std::fs::create_dir(s1.join("closed")).unwrap();
        std::fs::write(s1.join("closed/secret"), b"s").unwrap();
        set_mode(&s1.join("closed"), 0o000);
        std::fs::write(s1.join("other-owner"), b"o").unwrap();
        rfs::chown(
            s1.join("other-owner"),
            Some(rfs::Uid::from_raw(1234)),
            Some(rfs::Gid::from_raw(5678)),
        )
        .unwrap();
    }
    rfs::mknodat(
        rfs::CWD,
        s1.join("socket"),
        rfs::FileType::Socket,
        Mode::from(0o600),
        0,
    )
    .unwrap();
    if is_root() {
        // /dev/null's numbers: a character device made again only by root.
        let null = rfs::makedev(1, 3);
        rfs::mknodat(
            rfs::CWD,
            s1.join("null"),
            rfs::FileType::CharacterDevice,
            Mode::from(0o620),
            null,
        )
        .unwrap();
        rfs::mknodat(
            rfs::CWD,
            s1.join("block"),
            rfs::FileType::BlockDevice,
            Mode::from(0o600),
            rfs::makedev(7, 200),
        )
        .unwrap();
    }
    // A POSIX ACL (user 1234 may read), as the kernel keeps it: the extended attribute
    // system.posix_acl_access (version 2; entries of tag, permissions, id).
    let mut acl = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (1u16, 6u16, u32::MAX),
        (2, 4, 1234),
        (4, 4, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 4, u32::MAX),
    ] {
        acl.extend(tag.to_le_bytes());
        acl.extend(perm.to_le_bytes());
        acl.extend(id.to_le_bytes());
    }
    std::fs::write(s1.join("with-acl"), b"acl").unwrap();
    let f = rfs::open(
        s1.join("with-acl"),
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    if let Err(e) = rfs::fsetxattr(
        &f,
        "system.posix_acl_access",
        &acl,
        rfs::XattrFlags::empty(),
    ) {
        eprintln!("no POSIX ACLs on {root:?} ({e}): not among the checks");
    }
    if user_xattrs(root) {
        set_xattr(&s1.join("plain/a.txt"), "user.note", b"hello\0world");
        set_xattr(&s1.join("plain"), "user.dir", b"d");
        set_xattr(&s1.join("empty-file"), "user.empty", b"");
    } else {
        eprintln!("no user.* extended attributes on {root:?}: not among the checks");
    }
}

#[test]
fn cp_a_is_gnu_cp_a_on_a_hostile_tree_serial_and_parallel() {
    for threads in ["1", "4"] {
        let both = Both::new(|d| {
            hostile(d);
            std::fs::create_dir(d.join("out")).unwrap();
        });
        both.run(&["-a", "s1", "s2", "out"], &["-j", threads]);
        both.same(&format!("cp -a, -j{threads}"), Times::Kept);
        for s in ["s1", "s2"] {
            rsync_same(&both.gnu.join("out").join(s), &both.ftw.join("out").join(s));
        }
        // The hard link across the sources is one inode in the copy.
        let ino = |p: &str| {
            std::fs::metadata(both.ftw.join(p)).map(|m| {
                use std::os::unix::fs::MetadataExt;
                m.ino()
            })
        };
        assert_eq!(
            ino("out/s1/plain/a.txt").unwrap(),
            ino("out/s2/a-from-s1").unwrap()
        );
    }
}

#[test]
fn cp_a_copies_a_deep_chain_under_a_small_limit_of_handles() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    chain(&src, 3000, "d", 7);
    for threads in ["1", "2"] {
        let dst = tmp.path().join(format!("dst{threads}"));
        let r = run(Command::new("sh")
            .arg("-c")
            .arg("ulimit -n 64 && exec \"$0\" cp -a -j \"$1\" \"$2\" \"$3\"")
            .arg(ftw_bin())
            .arg(threads)
            .arg(&src)
            .arg(&dst));
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "-j{threads}");
        assert_listings(
            &format!("a 3,000-level chain, -j{threads}"),
            &listing(&src, Times::Kept),
            &listing(&dst, Times::Kept),
        );
    }
}

#[test]
fn cp_a_of_many_hard_linked_directories_under_a_small_limit_of_handles_ends() {
    // 3,000 directories, each with a hard link to a file of another: the links' first
    // copies' directories are opened again while a small budget of handles closes
    // others. A worker leaving a directory once held its handle's lock while closing
    // others' handles, and two workers waited on each other for ever (8 runs in 8 hung
    // on this tree).
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let n = 3000;
    for i in 0..n {
        let d = src.join(format!("a{}/b{i}", i % 50));
        std::fs::create_dir_all(&d).unwrap();
        for j in 0..3 {
            std::fs::write(d.join(format!("f{j}")), b"x").unwrap();
        }
    }
    for i in 0..n {
        let t = (i * 7919) % n;
        std::fs::hard_link(
            src.join(format!("a{}/b{t}/f0", t % 50)),
            src.join(format!("a{}/b{i}/l{i}", i % 50)),
        )
        .unwrap();
    }
    for round in 0..4 {
        let dst = tmp.path().join(format!("dst{round}"));
        let r = run_within(
            Command::new("sh")
                .arg("-c")
                .arg("ulimit -n 48 && exec \"$0\" cp -a -j8 \"$1\" \"$2\"")
                .arg(ftw_bin())
                .arg(&src)
                .arg(&dst),
            std::time::Duration::from_secs(120),
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "round {round}");
        rsync_same(&src, &dst);
        std::fs::remove_dir_all(&dst).unwrap();
    }
}

#[test]
fn cp_as_nobody_keeps_no_owner_and_says_nothing() {
    let u = Unprivileged::new("ftw-cp-nobody");
    std::fs::create_dir_all(u.root.join("src/sub")).unwrap();
    std::fs::write(u.root.join("src/sub/f"), b"x").unwrap();
    std::fs::write(u.root.join("src/setuid"), b"x").unwrap();
    set_mode(&u.root.join("src/setuid"), 0o4755);
    std::fs::create_dir(u.root.join("out")).unwrap();
    set_mode(&u.root.join("out"), 0o777);
    let r = run(as_user(&u.bin)
        .args(["cp", "-a"])
        .arg(u.root.join("src"))
        .arg(u.root.join("out/ours")));
    if Unprivileged::cannot_switch(&r) {
        eprintln!("cannot switch users (setpriv): skipped");
        return;
    }
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let g = run(as_user(Path::new("cp"))
        .args(["-a"])
        .arg(u.root.join("src"))
        .arg(u.root.join("out/gnu")));
    assert_eq!((g.code, g.stderr.as_str()), (0, ""));
    assert_listings(
        "cp -a as another user",
        &listing(&u.root.join("out/gnu"), Times::Kept),
        &listing(&u.root.join("out/ours"), Times::Kept),
    );
}

#[test]
fn cp_refuses_a_directory_into_itself_and_a_file_onto_itself() {
    // GNU cp makes what it can and refuses the copy's own directory when it meets it
    // (its copy of the rest stops short there, where ftw goes on: not compared).
    for (args, made) in [
        (["-a", "a", "a/b"], "a/b/a/b"),
        (["-a", "a", "a/b/c"], "a/b/c/b"),
    ] {
        let both = Both::new(|d| {
            std::fs::create_dir_all(d.join("a/b")).unwrap();
            std::fs::write(d.join("a/f"), b"x").unwrap();
        });
        let r = both.run(&args, &[]);
        assert!(r.stderr.contains("into itself"), "{}", r.stderr);
        assert!(both.ftw.join(made).is_dir());
        let copy = both.ftw.join(made.trim_end_matches("/b"));
        let again = copy.join(made.trim_start_matches("a/").trim_end_matches("/b"));
        assert!(!again.exists(), "{again:?}: copied into itself");
    }
    let both = Both::new(|d| {
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("a/f"), b"x").unwrap();
    });
    let r = both.run(&["a/f", "a/f"], &[]);
    assert!(r.stderr.contains("same file"), "{}", r.stderr);
    both.same("a file onto itself", Times::Kept);
}

/// A source and a destination that already holds some of it, older and newer.
fn overlapping(d: &Path) {
    std::fs::create_dir_all(d.join("src/sub")).unwrap();
    std::fs::create_dir_all(d.join("dst/src/sub")).unwrap();
    for (p, data, secs) in [
        ("src/new", "new", 2_000_000_000),
        ("src/sub/older-in-dst", "src", 2_000_000_000),
        ("src/sub/newer-in-dst", "src", 1_000_000_000),
        ("dst/src/sub/older-in-dst", "dst", 1_000_000_000),
        ("dst/src/sub/newer-in-dst", "dst", 2_000_000_000),
        ("dst/src/only-in-dst", "dst", 1_000_000_000),
    ] {
        std::fs::write(d.join(p), data).unwrap();
        let t = rfs::Timestamps {
            last_access: rfs::Timespec {
                tv_sec: secs,
                tv_nsec: 0,
            },
            last_modification: rfs::Timespec {
                tv_sec: secs,
                tv_nsec: 0,
            },
        };
        rfs::utimensat(rfs::CWD, d.join(p), &t, AtFlags::empty()).unwrap();
    }
}

#[test]
fn cp_merges_into_an_existing_tree_and_n_and_update_keep_what_they_say() {
    for args in [
        &["-a", "src", "dst"][..],
        &["-a", "-n", "src", "dst"],
        &["-a", "--update", "src", "dst"],
        &["-r", "src", "dst"],
        &["-aT", "src", "dst/src"],
        &["-a", "-t", "dst", "src"],
    ] {
        let both = Both::new(overlapping);
        both.run(args, &[]);
        let times = if args.contains(&"-r") {
            Times::Ignored
        } else {
            Times::Kept
        };
        both.same(&format!("cp {args:?}"), times);
    }
}

#[test]
fn cp_l_links_and_l_p_h_decide_about_links() {
    let setup = |d: &Path| {
        std::fs::create_dir_all(d.join("src/real")).unwrap();
        std::fs::write(d.join("src/real/f"), b"f").unwrap();
        symlink("real", d.join("src/to-dir")).unwrap();
        symlink("real/f", d.join("src/to-file")).unwrap();
        symlink("nowhere", d.join("src/dangling")).unwrap();
        symlink("src", d.join("link-to-src")).unwrap();
    };
    for args in [
        &["-al", "src", "out"][..],
        &["-rL", "src", "out"],
        &["-rP", "src", "out"],
        &["-rH", "link-to-src", "out"],
        &["-rP", "link-to-src", "out"],
        &["-rL", "link-to-src", "out"],
    ] {
        let both = Both::new(setup);
        both.run(args, &[]);
        let times = if args[0].contains('a') {
            Times::Kept
        } else {
            Times::Ignored
        };
        both.same(&format!("cp {args:?}"), times);
    }
}

#[test]
fn cp_parents_and_target_directory_put_copies_where_gnu_does() {
    let setup = |d: &Path| {
        std::fs::create_dir_all(d.join("a/b/c")).unwrap();
        std::fs::write(d.join("a/b/c/f"), b"f").unwrap();
        std::fs::write(d.join("g"), b"g").unwrap();
        std::fs::create_dir(d.join("out")).unwrap();
    };
    for args in [
        &["-a", "--parents", "a/b/c/f", "out"][..],
        &["-a", "--parents", "a/b", "out"],
        &["-a", "-t", "out", "a", "g"],
        &["-a", "a", "g", "out"],
        &["-a", "a", "g", "missing"],
        &["-a", "-T", "a", "out"],
        &["-a", "g", "newname"],
        &["-a", "a/.", "out"],
        &["-a", "a/", "out"],
        &["-a", "a/.", "fresh"],
        &["-a", "a", "fresh/"],
        &["-a", "g", "fresh/"],
    ] {
        let both = Both::new(setup);
        both.run(args, &[]);
        both.same(&format!("cp {args:?}"), Times::Kept);
    }
}

#[test]
fn cp_refuses_backups_prompts_and_contexts() {
    for args in [
        &["-b", "a", "b"][..],
        &["-i", "a", "b"],
        &["--backup=t", "a", "b"],
        &["-Z", "a", "b"],
    ] {
        let r = ftw(&[&["cp"], args]
            .concat()
            .iter()
            .map(OsStr::new)
            .collect::<Vec<_>>());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("not supported"), "{}", r.stderr);
    }
    // GNU's abbreviations of long options.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f"), b"x").unwrap();
    let r = run(Command::new(ftw_bin())
        .args(["cp", "--no-preserve=mode", "--parent", "--verb", "f", "out"])
        .current_dir(tmp.path()));
    assert_eq!(
        r.code, 1,
        "--parents with a DEST that is no directory: {}",
        r.stderr
    );
    std::fs::create_dir(tmp.path().join("out")).unwrap();
    let r = run(Command::new(ftw_bin())
        .args(["cp", "--parent", "--verb", "f", "out"])
        .current_dir(tmp.path()));
    assert_eq!(
        (r.code, r.stdout.as_slice()),
        (0, &b"'f' -> 'out/f'\n"[..]),
        "{}",
        r.stderr
    );
}

#[test]
fn cp_never_writes_through_a_link_swapped_in_for_a_destination_directory() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for i in 0..40 {
        for j in 0..10 {
            let d = src.join(format!("d{i}/e{j}"));
            std::fs::create_dir_all(&d).unwrap();
            for k in 0..10 {
                std::fs::write(d.join(format!("f{k}")), b"x").unwrap();
            }
        }
    }
    // At least 4 rounds, and more (up to 40) until one copy met a link: on a busy
    // machine the racing thread may not be scheduled while a copy runs.
    let mut met = 0;
    for round in 0..40 {
        if round >= 4 && met > 0 {
            break;
        }
        let dst = tmp.path().join(format!("dst{round}"));
        let done = Arc::new(AtomicBool::new(false));
        let racer = {
            let (dst, outside, done) = (dst.clone(), outside.clone(), done.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !done.load(Ordering::Relaxed) {
                    for i in 0..40 {
                        for sub in [format!("d{i}"), format!("d{i}/e{}", n % 10)] {
                            let d = dst.join(&sub);
                            let moved = dst.join(format!("moved-{n}"));
                            if std::fs::rename(&d, &moved).is_ok() {
                                let _ = symlink(&outside, &d);
                            }
                            n += 1;
                        }
                    }
                }
            })
        };
        let threads = if round % 2 == 0 { "1" } else { "2" };
        // A small limit of handles, so that the copy must open its directories again.
        let r = run(Command::new("sh")
            .arg("-c")
            .arg("ulimit -n 24 && exec \"$0\" cp -a -j \"$1\" \"$2\" \"$3\"")
            .arg(ftw_bin())
            .arg(threads)
            .arg(&src)
            .arg(&dst));
        done.store(true, Ordering::Relaxed);
        racer.join().unwrap();
        assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
        met += usize::from(r.code == 1);
        let found: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert!(found.is_empty(), "written outside DEST: {found:?}");
    }
    // The race was run: some copy met a link where it had made a directory.
    assert!(
        met > 0,
        "no copy met a swapped link: the test raced nothing"
    );
}

#[test]
fn cp_a_copies_a_directory_of_100_000_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let dir = rfs::open(
        &src,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    for i in 0..100_000 {
        let name = format!("file-{i}");
        if i % 1000 == 0 {
            rfs::mkdirat(&dir, name.as_str(), Mode::from(0o750)).unwrap();
        } else {
            let flags = OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC;
            let f = rfs::openat(&dir, name.as_str(), flags, Mode::from(0o640)).unwrap();
            if i % 7 == 0 {
                rustix::io::write(&f, name.as_bytes()).unwrap();
            }
        }
    }
    drop(dir);
    fix_times(&src);
    let dst = tmp.path().join("dst");
    let r = run(Command::new(ftw_bin())
        .args(["cp", "-a"])
        .arg(&src)
        .arg(&dst));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_listings(
        "a directory of 100,000 entries",
        &listing(&src, Times::Kept),
        &listing(&dst, Times::Kept),
    );
}

#[test]
fn cp_r_and_cp_rp_are_gnu_cps_on_a_hostile_tree() {
    for (args, times) in [
        (&["-r"][..], Times::Ignored),
        (&["-rp"], Times::Kept),
        (&["-rd"], Times::Ignored),
        (&["-al"], Times::Kept),
        (&["-a", "--no-preserve=mode,ownership"], Times::Kept),
        (
            &["-a", "--preserve=xattr", "--no-preserve=timestamps"],
            Times::Ignored,
        ),
    ] {
        for threads in ["-j1", "-j3"] {
            let both = Both::new(|d| {
                hostile(d);
                std::fs::create_dir(d.join("out")).unwrap();
            });
            let all: Vec<&str> = args.iter().copied().chain(["s1", "s2", "out"]).collect();
            both.run(&all, &[threads]);
            both.same(&format!("cp {args:?} {threads}"), times);
            // Again over the copy: files replaced in place, links made again.
            both.run(&all, &[threads]);
            both.same(&format!("cp {args:?} {threads}, twice"), times);
        }
    }
}

#[test]
fn cp_a_as_nobody_is_gnu_cp_a_as_nobody_on_a_hostile_tree() {
    if !is_root() {
        eprintln!("not root: no other user to become; skipped");
        return;
    }
    let both = Both::new(|d| {
        hostile(d);
        std::fs::create_dir(d.join("out")).unwrap();
        set_mode(&d.join("out"), 0o777);
        set_mode(d, 0o755);
    });
    set_mode(both.gnu.parent().unwrap(), 0o755);
    let bin = both.gnu.parent().unwrap().join("ftw-bin");
    std::fs::copy(ftw_bin(), &bin).unwrap();
    set_mode(&bin, 0o755);
    for (args, threads) in [(&["-a"][..], "-j1"), (&["-rp"], "-j2")] {
        let all: Vec<&str> = args.iter().copied().chain(["s1", "s2", "out"]).collect();
        let r = both.run_with(&all, &[threads], as_nobody, &bin);
        if Unprivileged::cannot_switch(&r) {
            eprintln!("cannot switch users (setpriv): skipped");
            return;
        }
        both.same(&format!("cp {args:?} {threads} as nobody"), Times::Kept);
    }
}

/// `getfattr -R -d -h -m- .` in `dir` (every name space, links not followed), sorted
/// by path, or `None` where getfattr is not installed.
fn getfattr(dir: &Path) -> Option<Vec<String>> {
    let r = Command::new("getfattr")
        .args(["-R", "-d", "-h", "-m-", "--absolute-names", "."])
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&r.stdout).into_owned();
    let mut blocks: Vec<String> = text
        .split("\n\n")
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect();
    blocks.sort();
    Some(blocks)
}

#[test]
fn cp_a_copies_the_extended_attributes_of_links_fifos_sockets_and_devices() {
    if !is_root() {
        eprintln!("not root: trusted.* attributes (the only ones a link can have) need it");
        return;
    }
    let both = Both::new(|d| {
        let s = d.join("s");
        std::fs::create_dir(&s).unwrap();
        symlink("nowhere", s.join("link")).unwrap();
        symlink("fifo", s.join("to-fifo")).unwrap();
        mkfifo(&s.join("fifo"));
        rfs::mknodat(
            rfs::CWD,
            s.join("sock"),
            rfs::FileType::Socket,
            Mode::from(0o600),
            0,
        )
        .unwrap();
        let null = rfs::makedev(1, 3);
        rfs::mknodat(
            rfs::CWD,
            s.join("null"),
            rfs::FileType::CharacterDevice,
            Mode::from(0o600),
            null,
        )
        .unwrap();
        for name in ["link", "to-fifo", "fifo", "sock", "null"] {
            rfs::lsetxattr(
                s.join(name),
                format!("trusted.{name}").as_str(),
                name.as_bytes(),
                rfs::XattrFlags::empty(),
            )
            .unwrap();
        }
    });
    let Some(before) = getfattr(&both.gnu.join("s")) else {
        eprintln!("getfattr is not installed: skipped");
        return;
    };
    assert_eq!(before.len(), 5, "{before:?}");
    for args in [
        &["-a", "s", "a"][..],
        &["-a", "s", "a"],
        &["-r", "--preserve=xattr", "s", "x"],
        &["-rL", "--preserve=xattr", "s", "l"],
        &["-r", "s", "none"],
    ] {
        both.run(args, &[]);
        let dst = args.last().unwrap();
        let gnu = getfattr(&both.gnu.join(dst)).unwrap();
        let ours = getfattr(&both.ftw.join(dst)).unwrap();
        assert_eq!(gnu, ours, "cp {args:?}: getfattr -d -h differs");
        if args[0] != "-r" || args.len() > 3 {
            assert!(gnu.len() >= 4, "cp {args:?} kept no attributes: {gnu:?}");
        }
    }
}

/// GNU find's line for each entry below `root`: depth, type, mode, size, mtime (ns),
/// in its order (a chain has one entry per depth, and the file beside it).
fn chain_listing(root: &Path) -> Vec<u8> {
    let r = run(Command::new("find").arg(root).args([
        "-mindepth",
        "1",
        "-printf",
        "%d %y %m %s %T@\\n",
    ]));
    assert_eq!(r.code, 0, "find: {}", r.stderr);
    let mut lines: Vec<&[u8]> = r.stdout.split(|&b| b == b'\n').collect();
    lines.sort();
    lines.join(&b'\n')
}

/// Runs `cmd`, watching its peak resident memory (`VmHWM`) until it ends.
fn run_watching_memory(cmd: &mut Command) -> (Run, u64) {
    use std::io::Read;
    let mut child = spawn_piped(cmd);
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let outs = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let mut peak = 0;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        // The process, then whatever `sh` exec'd as it: the same pid.
        if let Ok(st) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            if let Some(v) = st
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
            {
                peak = peak.max(v);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let r = Run {
        code: status.code().unwrap_or(-1),
        stdout: outs.join().unwrap(),
        stderr: errs.join().unwrap(),
    };
    (r, peak)
}

#[test]
fn cp_a_copies_a_100_000_level_chain_in_bounded_memory_under_every_limit() {
    const LEVELS: usize = 100_000;
    let u = Unprivileged::new("ftw-cp-deep");
    let src = u.root.join("src");
    std::fs::create_dir(&src).unwrap();
    chain(&src, LEVELS, "d", 7);
    let out = u.root.join("out");
    std::fs::create_dir(&out).unwrap();
    set_mode(&out, 0o777);
    let expected = chain_listing(&src);
    // As the user runs it: 64 handles. Memory: 32 MiB and about 1 KiB a level at most.
    let dst = out.join("dst");
    let (r, peak) = run_watching_memory(
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -n 64 && exec \"$0\" cp -a \"$1\" \"$2\"")
            .arg(&u.bin)
            .arg(&src)
            .arg(&dst),
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "ulimit -n 64");
    let bound = 32 * 1024 + LEVELS as u64;
    assert!(peak < bound, "peak RSS {peak} KiB, above {bound} KiB");
    eprintln!("a {LEVELS}-level chain under ulimit -n 64: peak RSS {peak} KiB");
    assert!(
        chain_listing(&dst) == expected,
        "the copy of the chain differs"
    );
    let rm = run(Command::new(ftw_bin()).arg("rm").arg(&dst));
    assert_eq!(rm.code, 0, "{}", rm.stderr);
    // As nobody, no thread to spare (`ulimit -u 1` binds all but root), a 64 KiB
    // stack, 64 handles, 512 MiB of address space: slower, never aborted.
    if is_root() {
        let r = run(Command::new("bash")
            .arg("-c")
            .arg(
                "ulimit -u 1 && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
                 -- prlimit --stack=65536: --nofile=64 --as=536870912 \
                 -- \"$0\" cp -a \"$1\" \"$2\"",
            )
            .arg(&u.bin)
            .arg(&src)
            .arg(&dst)
            .env_clear()
            .env("PATH", "/usr/bin:/bin"));
        if Unprivileged::cannot_switch(&r) {
            eprintln!("cannot switch users (setpriv, prlimit): that part skipped");
        } else {
            assert_eq!(r.code, 0, "as nobody, ulimit -u 1 -s 64 -v: {}", r.stderr);
            // Owners are not kept by nobody: compared without them (find's %m, no %u).
            assert!(
                chain_listing(&dst) == expected,
                "the copy of the chain as nobody differs"
            );
        }
    }
    let rm = run(Command::new(ftw_bin()).arg("rm").arg(&u.root));
    assert_eq!(rm.code, 0, "{}", rm.stderr);
}

/// A tmpfs mounted at a path for as long as it lives (unmounted, lazily, when
/// dropped).
struct Mounted(std::path::PathBuf);

impl Mounted {
    /// `None` where mounting is not permitted (not root, a container without the
    /// capability).
    fn tmpfs(at: &Path) -> Option<Mounted> {
        let r = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m", "ftw-test"])
            .arg(at)
            .output()
            .ok()?;
        r.status.success().then(|| Mounted(at.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn cp_x_makes_a_mount_point_empty_and_does_not_enter_it_as_gnu_cp() {
    let both = Both::new(|d| {
        std::fs::create_dir_all(d.join("src/sub/mnt")).unwrap();
        std::fs::write(d.join("src/sub/f"), b"f").unwrap();
        set_mode(&d.join("src/sub/mnt"), 0o750);
    });
    let mut mounts = Vec::new();
    for side in [&both.gnu, &both.ftw] {
        let at = side.join("src/sub/mnt");
        let Some(m) = Mounted::tmpfs(&at) else {
            eprintln!("mount is not permitted here: skipped");
            return;
        };
        mounts.push(m);
        std::fs::create_dir(at.join("inner")).unwrap();
        std::fs::write(at.join("inner/g"), b"g").unwrap();
        std::fs::write(at.join("top"), b"t").unwrap();
        set_mode(&at, 0o1777);
        fix_times(&side.join("src"));
    }
    for (args, entered) in [
        (&["-ax", "src", "x"][..], false),
        (&["-rx", "src", "rx"], false),
        (&["-a", "src", "all"], true),
    ] {
        for threads in ["-j1", "-j2"] {
            both.run(args, &[threads]);
            let dst = args.last().unwrap();
            let times = if args[0] == "-rx" {
                Times::Ignored
            } else {
                Times::Kept
            };
            assert_listings(
                &format!("cp {args:?} {threads}"),
                &listing(&both.gnu.join(dst), times),
                &listing(&both.ftw.join(dst), times),
            );
            let inside = both.ftw.join(dst).join("sub/mnt/top");
            assert_eq!(inside.exists(), entered, "cp {args:?} {threads}");
            assert!(both.ftw.join(dst).join("sub/mnt").is_dir());
            let rm = run(Command::new(ftw_bin()).arg("rm").arg(both.ftw.join(dst)));
            assert_eq!(rm.code, 0);
            let rm = run(Command::new(ftw_bin()).arg("rm").arg(both.gnu.join(dst)));
            assert_eq!(rm.code, 0);
        }
    }
    drop(mounts);
}

#[test]
fn cp_attributes_only_makes_files_without_data_as_gnu_cp() {
    let setup = |d: &Path| {
        hostile(d);
        std::fs::create_dir_all(d.join("out/s1")).unwrap();
        // An existing file keeps its contents; its attributes are the source's. (Not
        // one of a hard link's names: which name comes first, made or kept, is the
        // order of the walk, GNU cp's too.)
        std::fs::write(d.join("out/s1/setuid"), b"longer than the source").unwrap();
        std::fs::write(d.join("out/s1/empty-file"), b"was here").unwrap();
    };
    for args in [
        &["-a", "--attributes-only", "s1", "s2", "out"][..],
        &["-r", "--attributes-only", "s1", "s2", "out"],
        &["-p", "--attributes-only", "s1/setuid", "out/setuid-copy"],
    ] {
        for threads in ["-j1", "-j2"] {
            let both = Both::new(setup);
            both.run(args, &[threads]);
            let times = if args[0] == "-r" {
                Times::Ignored
            } else {
                Times::Kept
            };
            both.same(&format!("cp {args:?} {threads}"), times);
        }
    }
}

#[test]
fn cp_v_quotes_names_as_gnu_cp_v() {
    let names: &[&[u8]] = &[
        b"plain",
        b"a b",
        b"it's",
        b"it's$x",
        b"'",
        b"x\"y",
        b"new\nline",
        b"\nlead",
        b"tab\tx",
        b"bad\xff",
        "\u{e9}t\u{e9}".as_bytes(),
        b"a$b*",
    ];
    let both = Both::new(|d| {
        std::fs::create_dir_all(d.join("src/sub")).unwrap();
        std::fs::create_dir(d.join("out")).unwrap();
        for n in names {
            std::fs::write(d.join("src/sub").join(OsStr::from_bytes(n)), b"x").unwrap();
        }
    });
    for args in [&["-v", "-j1"][..], &["-v", "-j1", "-a"]] {
        let g = run(Command::new("cp")
            .args(&args[..1])
            .args(&args[2..])
            .args(["-r", "src", "out"])
            .env("LC_ALL", "C.UTF-8")
            .current_dir(&both.gnu));
        let o = run(Command::new(ftw_bin())
            .arg("cp")
            .args(args)
            .args(["-r", "src", "out"])
            .env("LC_ALL", "C.UTF-8")
            .current_dir(&both.ftw));
        assert_eq!((g.code, o.code), (0, 0), "{} {}", g.stderr, o.stderr);
        let sorted = |b: &[u8]| {
            let mut l: Vec<Vec<u8>> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
            l.sort();
            l
        };
        assert_eq!(
            String::from_utf8_lossy(&sorted(&o.stdout).join(&b'\n')),
            String::from_utf8_lossy(&sorted(&g.stdout).join(&b'\n')),
            "cp {args:?}: -v lines differ"
        );
    }
}

#[test]
fn cp_l_onto_existing_files_u_remove_destination_and_strip_trailing_slashes_as_gnu_cp() {
    let setup = |d: &Path| {
        std::fs::create_dir_all(d.join("src/sub")).unwrap();
        std::fs::create_dir_all(d.join("out/src/sub")).unwrap();
        std::fs::write(d.join("src/f"), b"new").unwrap();
        std::fs::write(d.join("src/sub/g"), b"new").unwrap();
        // An existing copy older than its source, one linked to the source already,
        // one with another name (a hard link) outside.
        std::fs::write(d.join("out/src/f"), b"old").unwrap();
        std::fs::hard_link(d.join("src/sub/g"), d.join("out/src/sub/g")).unwrap();
        std::fs::write(d.join("out/h"), b"old").unwrap();
        std::fs::hard_link(d.join("out/h"), d.join("out/h-too")).unwrap();
    };
    for args in [
        &["-l", "src/f", "out/src/f"][..],
        &["-rl", "src", "out"],
        &["-rlf", "src", "out"],
        &["-rl", "--remove-destination", "src", "out"],
        &["-rlu", "src", "out"],
        &["-rln", "src", "out"],
        &["-l", "src/f", "out/h"],
        &["src/f", "out/h"],
        &["--remove-destination", "src/f", "out/h"],
        &["-u", "src/f", "out/h"],
        &["-r", "--strip-trailing-slashes", "src///", "out/stripped"],
        &["-r", "--strip-trailing-slashes", "src/", "out"],
    ] {
        let both = Both::new(setup);
        // The copy's times against the sources' (fixed in 2009): newer, then older.
        let r = both.run(args, &[]);
        both.same(&format!("cp {args:?}"), Times::Ignored);
        if args[0] == "-l" && args[2] == "out/src/f" {
            assert!(r.stderr.contains("File exists"), "{}", r.stderr);
        }
    }
}
