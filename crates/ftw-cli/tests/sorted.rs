//! The sorted walk and its read-ahead at the limits: chains deep enough that memory
//! growing faster than the depth would show, a stack of 256 KiB, and no thread to spare.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A chain made by [`chain`], removed without recursion when the test ends, failed or
/// not (the temporary directory's own removal recurses, and would overflow the stack).
struct Chain<'a>(&'a Path);

impl Chain<'_> {
    fn new(root: &Path, levels: usize) -> Chain<'_> {
        chain(root, levels, "d", 0);
        Chain(root)
    }
}

impl Drop for Chain<'_> {
    fn drop(&mut self) {
        remove_chain(self.0, "d");
    }
}

#[test]
fn a_sorted_walk_of_twenty_thousand_levels_matches_find_in_little_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let _chain = Chain::new(root, 20_000);
    // After the chain in sorted order: a directory whose listing (about 1 MB) keeps ftw
    // writing, and so alive, while its peak memory is read.
    std::fs::create_dir(root.join("z")).unwrap();
    for i in 0..5000 {
        std::fs::File::create(root.join(format!("z/{i:0>200}"))).unwrap();
    }
    let mut find = Command::new("find");
    find.arg(root).args(["-mindepth", "1", "-print0"]);
    let (theirs, fcode, ferr) = fingerprint(&mut find);
    assert_eq!(fcode, 0, "find failed: {ferr}");
    assert_eq!(theirs.0, 20_000 + 1 + 5000);
    let root_len = root.as_os_str().len();
    let after_chain = root.join("z").as_os_str().as_bytes().to_vec();
    for j in ["4", "0"] {
        let mut cmd = Command::new(ftw_bin());
        cmd.args(["find", "-0", "--sort", "-j", j]).arg(root);
        let mut count = 0usize;
        let mut peak = None;
        let (ours, code, err) = fingerprint_with(&mut cmd, |rec, pid| {
            // The chain first, one level after another, then `z`.
            if count < 20_000 {
                assert_eq!(
                    rec.len(),
                    root_len + 2 * (count + 1),
                    "-j {j}: out of order"
                );
            } else if count == 20_000 {
                assert_eq!(rec, after_chain, "-j {j}: out of order");
                peak = Some(peak_rss_kib(pid));
            }
            count += 1;
        });
        assert_eq!(code, 0, "ftw --sort -j {j} failed: {err}");
        assert_eq!(
            ours, theirs,
            "ftw --sort -j {j}: the listing differs from find's"
        );
        let peak = peak.expect("the chain was listed");
        eprintln!("peak RSS of ftw find --sort -j {j} on 20000 levels: {peak} KiB");
        assert!(
            peak < 32 * 1024,
            "ftw find --sort -j {j} grew to {peak} KiB on a chain of 20000 levels"
        );
    }
}

#[test]
fn a_sorted_walk_of_a_hundred_thousand_levels_lists_completely_on_a_small_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let _chain = Chain::new(root, 100_000);
    // The whole chain is walked; only its two deepest levels are printed.
    let (theirs, fr) = gnu_find(root, &[], &["-mindepth", "99999"]);
    assert_eq!(fr.code, 0, "find failed: {}", fr.stderr);
    assert_eq!(theirs.len(), 2);
    for j in ["4", "0"] {
        let args = format!("--sort -j {j} --min-depth 99999");
        let mut cmd = ftw_find_under("-s 256", &args, root);
        let r = run_within(&mut cmd, Duration::from_secs(300));
        assert_eq!(r.code, 0, "ftw --sort -j {j} failed: {}", r.stderr);
        assert_eq!(r.stderr, "");
        assert_same(
            &format!("100000 levels, --sort -j {j}, ulimit -s 256"),
            &records(&r.stdout),
            &theirs,
        );
    }
}

#[test]
fn a_sorted_walk_with_no_thread_to_spare_lists_everything() {
    // The limit on processes binds any user but root, whom the tests run as: ftw runs as
    // nobody, allowed no thread (1) or one (2) besides its own.
    if !is_root() {
        println!("skipped: not root");
        return;
    }
    let u = Unprivileged::new("ftw-nproc");
    for i in 0..20 {
        for j in 0..5 {
            std::fs::create_dir_all(u.root.join(format!("d{i}/e{j}/f"))).unwrap();
        }
        std::fs::write(u.root.join(format!("d{i}/file")), b"").unwrap();
    }
    let (theirs, _) = gnu_find(&u.root, &[], &["-mindepth", "1"]);
    for n in [1, 2] {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -u {n} && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
                 -- \"$0\" find -0 --sort -j 4 \"$1\""
            ))
            .arg(&u.bin)
            .arg(&u.root);
        let r = run_within(&mut cmd, Duration::from_secs(60));
        if Unprivileged::cannot_switch(&r) {
            println!("skipped: cannot run as nobody: {}", r.stderr);
            return;
        }
        assert_eq!(r.code, 0, "ulimit -u {n}: {}", r.stderr);
        // One warning at most, saying what happened.
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert!(lines.len() <= 1, "ulimit -u {n}: {}", r.stderr);
        for l in lines {
            assert!(
                l.starts_with("ftw: warning: cannot start a thread: "),
                "{l}"
            );
        }
        assert_same(
            &format!("ulimit -u {n}, --sort -j 4"),
            &records(&r.stdout),
            &theirs,
        );
    }
}
