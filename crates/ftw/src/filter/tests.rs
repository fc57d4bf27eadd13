//! Filters on a small tree: each test against the entries it must keep.

use super::*;
use crate::walk::{Control, WalkBuilder};
use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;

fn kept(root: &std::path::Path, filter: &Filter, threads: usize) -> BTreeSet<Vec<u8>> {
    let mut out = BTreeSet::new();
    let mut scratch = Vec::new();
    let mut walk = WalkBuilder::new(root)
        .min_depth(1)
        .keep_handles(filter.needs_metadata())
        .threads(threads)
        .build();
    walk.visit(|item| {
        let e = item.unwrap();
        if filter.matches(e, &mut scratch) {
            out.insert(e.name().to_vec());
        }
        Control::Continue
    });
    out
}

fn names(list: &[&str]) -> BTreeSet<Vec<u8>> {
    list.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn each_test_keeps_what_it_should() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    std::fs::create_dir_all(r.join("dir/empty-dir")).unwrap();
    std::fs::write(r.join("dir/big.RS"), vec![0u8; 5000]).unwrap();
    std::fs::write(r.join("small.rs"), b"x").unwrap();
    std::fs::write(r.join("empty-file"), b"").unwrap();
    std::fs::write(r.join("a.tar.gz"), b"xx").unwrap();
    std::fs::write(r.join("run.sh"), b"#!/bin/sh").unwrap();
    std::fs::set_permissions(r.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("small.rs", r.join("link")).unwrap();
    let old = std::fs::File::options()
        .write(true)
        .open(r.join("small.rs"))
        .unwrap();
    old.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
        .unwrap();

    let types = |ts: &[&str]| {
        let mut t = Types::default();
        for x in ts {
            t.add(x).unwrap();
        }
        Filter::new().types(t)
    };
    assert_eq!(kept(r, &types(&["d"]), 1), names(&["dir", "empty-dir"]));
    assert_eq!(kept(r, &types(&["l"]), 1), names(&["link"]));
    assert_eq!(kept(r, &types(&["x"]), 1), names(&["run.sh"]));
    assert_eq!(
        kept(r, &types(&["e"]), 1),
        names(&["empty-dir", "empty-file"])
    );
    assert_eq!(kept(r, &types(&["e", "d"]), 1), names(&["empty-dir"]));
    let ext = Filter::new().extension("rs").extension(".tar.gz");
    assert_eq!(kept(r, &ext, 1), names(&["big.RS", "small.rs", "a.tar.gz"]));
    let big = Filter::new().size("+4k".parse().unwrap());
    assert_eq!(kept(r, &big, 1), names(&["big.RS"]));
    let tiny = Filter::new().size("-2b".parse().unwrap());
    assert_eq!(
        kept(r, &tiny, 1),
        names(&["small.rs", "empty-file", "a.tar.gz"])
    );
    let before = Filter::new().changed_before(Time {
        secs: 2_000_000,
        nanos: 0,
    });
    assert_eq!(kept(r, &before, 1), names(&["small.rs"]));
    let recent = Filter::new().changed_within(Time {
        secs: 2_000_000,
        nanos: 0,
    });
    assert!(!kept(r, &recent, 1).contains(b"small.rs".as_slice()));
    assert!(kept(r, &recent, 1).contains(b"big.RS".as_slice()));
    let glob = Patterns::new(&[(PatternKind::Glob, "*.rs".into())], Case::Smart, false).unwrap();
    let both = types(&["f"]).patterns(glob).size("+2".parse().unwrap());
    // Threads change nothing.
    for threads in [1, 4] {
        assert_eq!(kept(r, &both, threads), names(&["big.RS"]));
    }
}

#[test]
fn simple_exclusion_globs_match_as_the_glob_matcher_does() {
    let globs = [
        ".git",
        "*.o",
        "*~",
        ".#*",
        "*.tar.gz",
        "node_modules",
        "{arch}",
        "*.{c,h}",
        "{.git,CVS}",
        ".#{a,b}*",
        "*{~,.bak}",
        "{a*,b}",
        "{a,}",
        "\\{x\\}",
        "a?c",
        "[ab]*",
        "*.",
        "x*y",
    ];
    let names: &[&[u8]] = &[
        b".git",
        b"x.o",
        b".o",
        b"o",
        b"file~",
        b"~",
        b".#lock",
        b".#",
        b"a.tar.gz",
        b"tar.gz",
        b"node_modules",
        b"node_modules2",
        b"arch",
        b"{arch}",
        b"x.c",
        b"x.h",
        b"x.{c,h}",
        b"CVS",
        b".#a1",
        b".#c",
        b"old.bak",
        b"{x}",
        b"x",
        b"abc",
        b"bx",
        b"cz",
        b"name.",
        b"xzzy",
        b"x.O",
        b"\xff.o",
    ];
    let fast = Excludes::new(&globs.map(String::from)).unwrap();
    for g in globs {
        let one = Excludes::new(&[g.to_string()]).unwrap();
        let reference = globset::GlobBuilder::new(g)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .unwrap()
            .compile_matcher();
        for name in names {
            let want = reference.is_match(std::path::Path::new(std::ffi::OsStr::from_bytes(name)));
            assert_eq!(
                one.is_match_name(name),
                want,
                "{g} on {:?}",
                String::from_utf8_lossy(name)
            );
        }
    }
    for name in names {
        let any = globs
            .iter()
            .any(|g| Excludes::new(&[g.to_string()]).unwrap().is_match_name(name));
        assert_eq!(fast.is_match_name(name), any);
    }
}

/// `git_ignore` on the builder: the same entries from the pull iterator, the callback
/// walk, and the parallel walk; an ignore file that cannot be read is an error in the
/// walk's stream, and the walk goes on.
#[test]
fn git_ignore_is_a_builder_option_of_every_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src/gen")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::write(root.join("src/.gitignore"), "gen/\n").unwrap();
    for f in [
        "a.log",
        "src/lib.rs",
        "src/gen/x.rs",
        "target/debug/bin",
        "README",
    ] {
        std::fs::write(root.join(f), "").unwrap();
    }
    std::os::unix::fs::symlink(".ignore", root.join("src/.ignore")).unwrap();
    let want: BTreeSet<Vec<u8>> = [
        ".gitignore",
        "README",
        "src",
        "src/.gitignore",
        "src/.ignore",
        "src/lib.rs",
    ]
    .iter()
    .map(|p| p.as_bytes().to_vec())
    .collect();
    let rel = |p: &std::path::Path| {
        p.strip_prefix(root)
            .unwrap()
            .as_os_str()
            .as_bytes()
            .to_vec()
    };
    let builder = || WalkBuilder::new(root).min_depth(1).git_ignore(true);

    let (mut pulled, mut errors) = (BTreeSet::new(), Vec::new());
    for item in builder().sort(true) {
        match item {
            Ok(e) => drop(pulled.insert(rel(e.path()))),
            Err(e) => errors.push(e),
        }
    }
    assert_eq!(pulled, want);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].is_ignore_file(), "{}", errors[0]);
    assert_eq!(errors[0].path(), root.join("src/.ignore"));
    assert!(
        errors[0].reason().starts_with("ignore file: "),
        "{}",
        errors[0]
    );

    for threads in [1, 3] {
        let seen = std::sync::Mutex::new((BTreeSet::new(), 0));
        builder().threads(threads).run_entries(|| {
            |item: Result<&crate::walk::Entry<'_>, crate::walk::Error>| {
                let mut seen = seen.lock().unwrap();
                match item {
                    Ok(e) => drop(seen.0.insert(rel(&e.path()))),
                    Err(e) => {
                        assert!(e.is_ignore_file(), "{e}");
                        seen.1 += 1;
                    }
                }
                Control::Continue
            }
        });
        let (got, errors) = seen.into_inner().unwrap();
        assert_eq!((got, errors), (want.clone(), 1), "-j{threads}");
    }
    // Off again: everything.
    assert_eq!(builder().git_ignore(false).into_iter().count(), 13);
}

#[test]
fn a_glob_ending_with_a_slash_excludes_directories_only() {
    // As in a .gitignore: `x/` and `/top/` leave files of those names, and a link to a
    // directory unless links are followed; without the slash, both go.
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    std::fs::create_dir_all(r.join("a/x/in")).unwrap();
    std::fs::create_dir_all(r.join("top/y")).unwrap();
    std::fs::create_dir_all(r.join("b")).unwrap();
    std::fs::write(r.join("b/x"), b"").unwrap();
    std::fs::write(r.join("a/top"), b"").unwrap();
    std::os::unix::fs::symlink("../a/x", r.join("b/linkx")).unwrap();
    let kept = |globs: &[&str], follow: bool| -> BTreeSet<String> {
        let ex = Excludes::new(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>()).unwrap();
        let mut scratch = Vec::new();
        let mut out = BTreeSet::new();
        let mut walk = WalkBuilder::new(r).follow_links(follow).sort(true).build();
        while let Some(e) = walk.next_entry() {
            let e = e.unwrap();
            let (excluded, dir) = (ex.is_match(&e, &mut scratch), e.is_dir());
            let p = e
                .path()
                .strip_prefix(r)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if excluded {
                if dir {
                    walk.skip_current_dir();
                }
                continue;
            }
            if !p.is_empty() {
                out.insert(p);
            }
        }
        out
    };
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        kept(&["x/", "/top/"], false),
        set(&["a", "a/top", "b", "b/linkx", "b/x"])
    );
    assert_eq!(
        kept(&["x", "/top"], false),
        set(&["a", "a/top", "b", "b/linkx"])
    );
    // Followed, the link is a directory: left out with what it leads to.
    assert!(!kept(&["linkx/"], true).contains("b/linkx"));
    assert!(kept(&["linkx/"], false).contains("b/linkx"));
    // Where the type is not known (a path alone), `x/` counts as `x`.
    let ex = Excludes::new(&["x/".to_string(), "a/y/".to_string()]).unwrap();
    assert!(ex.is_match_name(b"x") && ex.is_match_path(b"./b/a/y"));
    assert!(!ex.is_match_name(b"y") && !ex.is_match_path(b"./b/x"));
}
