//! Random trees (proptest), listed by `ftw find` and GNU find: the same sets of paths.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
enum Kind {
    File,
    Dir,
    /// A symbolic link to this many levels up and then the given path.
    Link(usize, Vec<Vec<u8>>),
}

fn component() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Short names that collide often, so trees nest.
        prop::sample::select(vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"c d".to_vec(),
            b"\xff".to_vec(),
            b"n\nl".to_vec()
        ]),
        // Any bytes but NUL and '/', of any length up to 255.
        prop::collection::vec(
            any::<u8>().prop_map(|b| if b == 0 || b == b'/' { b'_' } else { b }),
            1..255
        )
        .prop_filter("not . or ..", |n| n != b"." && n != b".."),
    ]
}

fn entry() -> impl Strategy<Value = (Vec<Vec<u8>>, Kind)> {
    let kind = prop_oneof![
        3 => Just(Kind::File),
        3 => Just(Kind::Dir),
        1 => (0usize..3, prop::collection::vec(component(), 0..3)).prop_map(|(up, to)| Kind::Link(up, to)),
    ];
    (prop::collection::vec(component(), 1..5), kind)
}

fn build(root: &Path, entries: &[(Vec<Vec<u8>>, Kind)]) {
    build_entries(
        root,
        entries.iter().map(|(comps, kind)| {
            let made = match kind {
                Kind::File => Made::File(1),
                Kind::Dir => Made::Dir,
                Kind::Link(up, to) => {
                    // Never above the tree's root: with -L the walk would leave the tree.
                    let mut target = PathBuf::new();
                    for _ in 0..(*up).min(comps.len() - 1) {
                        target.push("..");
                    }
                    for c in to {
                        target.push(p(c));
                    }
                    if target.as_os_str().is_empty() {
                        target.push(".");
                    }
                    Made::Link(target)
                }
            };
            (&comps[..], made)
        }),
    );
}

/// Whether `find -L` lists at most `limit` entries under `root` (it is stopped past
/// that).
fn lists_at_most(root: &Path, limit: usize) -> bool {
    use std::io::Read;
    let mut child = std::process::Command::new("find")
        .arg("-L")
        .arg(root)
        .arg("-print0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut seen = 0;
    let fits = loop {
        match out.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => {
                seen += buf[..n].iter().filter(|&&b| b == 0).count();
                if seen > limit {
                    break false;
                }
            }
            Err(_) => break true,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    fits
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_list_like_find(
        entries in prop::collection::vec(entry(), 0..60),
        follow in any::<bool>(),
        max_depth in prop::option::of(0usize..5),
        threads in prop::sample::select(vec!["1", "2", "8", "0"]),
        sort in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        build(tmp.path(), &entries);
        let mut find_opts = vec![if follow { "-L" } else { "-H" }];
        let mut find_tests = vec!["-mindepth", "1"];
        let mut args = vec!["-j", threads];
        if sort {
            args.push("--sort");
        }
        if follow {
            args.push("-L");
        }
        let md;
        if let Some(d) = max_depth {
            md = d.to_string();
            find_tests.extend(["-maxdepth", md.as_str()]);
            args.extend(["--max-depth", md.as_str()]);
        }
        find_opts.retain(|o| !o.is_empty());
        // Links to directories that hold links to directories multiply the paths that
        // -L lists (not a loop: find and ftw both walk them all): a rare tree lists
        // millions, which neither the test's memory nor its time can hold.
        prop_assume!(!follow || lists_at_most(tmp.path(), 200_000));
        let (theirs, fr) = gnu_find(tmp.path(), &find_opts, &find_tests);
        let (ours, r) = ftw_find(tmp.path(), &args);
        if ours != theirs {
            let only_ours: Vec<_> = ours.iter().filter(|r| !theirs.contains(r)).cloned().collect();
            let only_theirs: Vec<_> = theirs.iter().filter(|r| !ours.contains(r)).cloned().collect();
            prop_assert!(false, "ftw {:?} differs from find\nonly ftw:\n{}\nonly find:\n{}", args, show(&only_ours), show(&only_theirs));
        }
        if sort {
            // The sorted order is the serial walk's, byte for byte, whatever the threads.
            let mut serial_args = args.clone();
            serial_args[1] = "1";
            let mut cmd = std::process::Command::new(ftw_bin());
            cmd.args(["find", "-0"]).args(&serial_args).arg(tmp.path());
            let serial = run(&mut cmd);
            let mut cmd = std::process::Command::new(ftw_bin());
            cmd.args(["find", "-0"]).args(&args).arg(tmp.path());
            let parallel = run(&mut cmd);
            prop_assert!(serial.stdout == parallel.stdout, "--sort with -j {} differs from -j 1", threads);
        }
        let (errors, code) = find_expectation(&fr);
        prop_assert_eq!(r.code, code, "ftw stderr {:?}, find stderr {:?}", r.stderr, fr.stderr);
        prop_assert_eq!(error_count(&r.stderr), errors, "ftw stderr {:?}, find stderr {:?}", r.stderr, fr.stderr);
    }
}
