//! The parallel walk under stress: a tree changing while it is walked, a reader that
//! does not keep up, early exits.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[test]
fn walks_stay_correct_while_entries_come_and_go() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // Entries that exist throughout.
    let mut stable = Vec::new();
    for d in 0..40 {
        let dir = root.join(format!("stable{d}"));
        std::fs::create_dir(&dir).unwrap();
        stable.push(dir.clone());
        for f in 0..25 {
            let file = dir.join(format!("f{f}"));
            std::fs::write(&file, b"").unwrap();
            stable.push(file);
        }
    }
    // Directories another thread fills and empties all the time.
    for c in 0..8 {
        std::fs::create_dir(root.join(format!("churn{c}"))).unwrap();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0u64;
            while !done.load(Ordering::Relaxed) {
                let c = root.join(format!("churn{}", i % 8));
                let d = c.join(format!("d{}", i % 13));
                let _ = std::fs::create_dir_all(d.join("sub/deeper"));
                let _ = std::fs::write(d.join("sub/file"), b"x");
                let _ = std::fs::write(c.join(format!("file{}", i % 17)), b"x");
                if i % 3 == 0 {
                    let _ = std::fs::remove_dir_all(c.join(format!("d{}", (i + 5) % 13)));
                    let _ = std::fs::remove_file(c.join(format!("file{}", (i + 7) % 17)));
                }
                i += 1;
            }
        });
        let variants: [&[&str]; 4] = [&["-j", "2"], &["-j", "8"], &[], &["--sort"]];
        for rep in 0..20 {
            let args = variants[rep % variants.len()];
            let mut cmd = Command::new(ftw_bin());
            cmd.args(["find", "-0"]).args(args).arg(root);
            let r = run_within(&mut cmd, Duration::from_secs(60));
            assert!(
                matches!(r.code, 0 | 1),
                "ftw {args:?} ended with {}: {}",
                r.code,
                r.stderr
            );
            let (out, err) = (r.stdout, r.stderr);
            let listed = records(&out);
            for s in &stable {
                let want = s.as_os_str().as_encoded_bytes().to_vec();
                assert!(
                    listed.binary_search(&want).is_ok(),
                    "ftw {args:?} missed {}",
                    s.display()
                );
            }
            for line in err.lines() {
                let path = line
                    .strip_prefix("ftw: ")
                    .unwrap_or_else(|| panic!("not an ftw error: {line}"));
                assert!(
                    path.starts_with(root.to_str().unwrap()),
                    "an error names its path: {line}"
                );
                assert!(
                    line.contains("churn"),
                    "only the changing part fails: {line}"
                );
            }
        }
        done.store(true, Ordering::Relaxed);
    });
}

/// A small tree whose listing with `-L` is huge: `levels` levels, each a directory of
/// `fan` links with long names to the next level. Returns the count of paths.
fn fan_out(root: &Path, levels: usize, fan: usize) -> usize {
    for l in 0..=levels {
        std::fs::create_dir(root.join(format!("L{l}"))).unwrap();
    }
    for l in 0..levels {
        for i in 0..fan {
            let name = format!("{i}-{}", "n".repeat(240));
            symlink(format!("../L{}", l + 1), root.join(format!("L{l}/{name}"))).unwrap();
        }
    }
    std::fs::write(root.join(format!("L{levels}/leaf")), b"").unwrap();
    (1..=levels).map(|k| fan.pow(k as u32)).sum::<usize>() + fan.pow(levels as u32)
}

#[test]
fn a_reader_that_does_not_keep_up_does_not_grow_the_process() {
    let tmp = tempfile::tempdir().unwrap();
    // 10^5 paths of about 1.2 KiB: ~130 MB of output.
    let paths = fan_out(tmp.path(), 5, 10);
    assert!(paths > 100_000);
    for args in [&["-j", "4"][..], &[][..], &["--sort"][..]] {
        let mut child = Command::new(ftw_bin())
            .args(["find", "-L"])
            .args(args)
            .arg(tmp.path().join("L0"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut first = vec![0u8; 4096];
        out.read_exact(&mut first).unwrap();
        // Time enough for a producer without backpressure to hold the whole listing.
        std::thread::sleep(Duration::from_secs(2));
        let peak = peak_rss_kib(child.id());
        eprintln!("peak RSS of ftw find -L {args:?} with a sleeping reader: {peak} KiB");
        drop(out);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            peak < 48 * 1024,
            "ftw find -L {args:?} grew to {peak} KiB while its reader slept (the listing is ~130 MB)"
        );
    }
}

#[test]
fn max_results_prints_exactly_n_and_stops_early() {
    let tmp = tempfile::tempdir().unwrap();
    fan_out(tmp.path(), 5, 10);
    for args in [&["-j", "1"][..], &["-j", "4"][..], &[][..], &["--sort"][..]] {
        let mut cmd = Command::new(ftw_bin());
        cmd.args(["find", "-L", "-0", "--max-results", "7"])
            .args(args)
            .arg(tmp.path().join("L0"));
        let r = run_within(&mut cmd, Duration::from_secs(60));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let out = r.stdout;
        assert_eq!(out.iter().filter(|&&b| b == 0).count(), 7, "{args:?}");
        assert!(out.ends_with(b"\0"));
    }
    let r = ftw(&[
        "find".as_ref(),
        "--max-results".as_ref(),
        "0".as_ref(),
        tmp.path().as_os_str(),
    ]);
    assert_eq!((r.code, r.stdout.len()), (0, 0));
}

#[test]
fn closed_pipe_stops_every_worker() {
    let tmp = tempfile::tempdir().unwrap();
    fan_out(tmp.path(), 5, 10);
    for args in [&["-j", "4"][..], &[][..], &["--sort"][..]] {
        let mut cmd = Command::new(ftw_bin());
        cmd.args(["find", "-L"])
            .args(args)
            .arg(tmp.path().join("L0"));
        let (status, err) = close_after_first_bytes(&mut cmd);
        assert!(status.success(), "{args:?}: {status:?} {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

#[test]
fn max_results_never_cuts_a_name_holding_a_newline() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..50 {
        std::fs::write(tmp.path().join(format!("a{i}\nb")), b"").unwrap();
        std::fs::write(tmp.path().join(format!("c{i}")), b"").unwrap();
    }
    for j in ["1", "2", "0"] {
        for n in [1usize, 3, 60] {
            let r = ftw(&[
                "find".as_ref(),
                "-j".as_ref(),
                j.as_ref(),
                "--max-results".as_ref(),
                n.to_string().as_ref(),
                tmp.path().as_os_str(),
            ]);
            assert_eq!(r.code, 0);
            // Every printed path exists: split on the root's prefix, not on newlines.
            let text = String::from_utf8(r.stdout).unwrap();
            let prefix = format!("{}/", tmp.path().display());
            let paths: Vec<&str> = text.split(&prefix).filter(|s| !s.is_empty()).collect();
            assert_eq!(paths.len(), n, "-j {j} --max-results {n}: {text:?}");
            for p in paths {
                let name = p.strip_suffix('\n').expect("each path ends with a newline");
                assert!(
                    tmp.path().join(name).exists(),
                    "-j {j}: printed a cut name {name:?}"
                );
            }
        }
    }
}

#[test]
fn many_threads_asked_under_a_small_fd_limit_list_everything() {
    // Wide enough that many workers have directories to hold open at once: 32 or 64
    // workers, each with handles of its own, ran out under `ulimit -n 40` (the cap on
    // threads itself is tested in the library).
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..100 {
        for j in 0..20 {
            for k in 0..3 {
                std::fs::create_dir_all(tmp.path().join(format!("d{i}/e{j}/f{k}"))).unwrap();
            }
        }
    }
    let (theirs, _) = gnu_find(tmp.path(), &[], &["-mindepth", "1"]);
    assert_eq!(theirs.len(), 100 + 100 * 20 * 4);
    for args in ["-j 32", "-j 64", "", "--sort -j 32", "--sort"] {
        let r = run(&mut ftw_find_under("-n 40", args, tmp.path()));
        assert_eq!(r.code, 0, "{args}: {}", r.stderr);
        assert_same(
            &format!("ulimit -n 40, {args}"),
            &records(&r.stdout),
            &theirs,
        );
    }
}

#[test]
fn a_huge_directory_is_walked_in_parts_in_bounded_memory() {
    // 400,000 entries in one directory (a few of them directories): read a part at a
    // time, the listing is find's in the memory of a part, du -a's lines are du's in
    // du's order, and rm removes it all.
    let n = 400_000;
    let shm = Path::new("/dev/shm");
    let roomy = rustix::fs::statvfs(shm).is_ok_and(|v| v.f_favail > 2 * n as u64);
    let tmp = if roomy {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let root = tmp.path().join("huge");
    std::fs::create_dir(&root).unwrap();
    std::thread::scope(|s| {
        for half in 0..2 {
            let root = &root;
            s.spawn(move || {
                for i in (half..n).step_by(2) {
                    let p = root.join(format!("entry-{i:07}"));
                    if i % 10_000 == 0 {
                        std::fs::create_dir(&p).unwrap();
                        std::fs::write(p.join("inside"), b"x").unwrap();
                    } else {
                        std::fs::File::create(p).unwrap();
                    }
                }
            });
        }
    });
    let (mut theirs, fr) = gnu_find(&root, &[], &["-mindepth", "1"]);
    assert_eq!(fr.code, 0, "{}", fr.stderr);
    theirs.sort();
    let (status, out, peak) =
        with_peak_rss(Command::new(ftw_bin()).args(["find", "-0"]).arg(&root));
    assert!(status.success());
    let mut ours = records(&out);
    ours.sort();
    assert_same("ftw find of a huge directory", &ours, &theirs);
    eprintln!("peak RSS of ftw find over {n} entries in one directory: {peak} KiB");
    // Read whole, the listing alone (names and records) would be about 18 MiB.
    assert!(peak > 0 && peak < 12 * 1024, "{peak} KiB");
    let du = Command::new("du").arg("-a").arg(&root).output().unwrap();
    let (status, ours, peak) = with_peak_rss(Command::new(ftw_bin()).args(["du", "-a"]).arg(&root));
    assert!(status.success());
    if ours != du.stdout {
        let (a, b) = (
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&du.stdout),
        );
        let at = a.lines().zip(b.lines()).position(|(x, y)| x != y);
        let show = |t: &str| -> Vec<String> {
            let from = at.unwrap_or(0).saturating_sub(2);
            t.lines().skip(from).take(5).map(str::to_owned).collect()
        };
        panic!(
            "ftw du -a differs from du -a at line {at:?}: {:?} against {:?}",
            show(&a),
            show(&b)
        );
    }
    // Not bounded by a part yet: du's lines after a subdirectory wait for it, and
    // here cost about half of what the whole listing did (18-22 MiB against 32).
    eprintln!("peak RSS of ftw du -a over {n} entries in one directory: {peak} KiB");
    let r = ftw(&[OsStr::new("rm"), root.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!root.exists());
}
