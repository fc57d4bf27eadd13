//! Tests of the Windows backend, run under wine here (`.ci/windows/runner.sh`) and on a
//! Windows host as they are. Calls are counted per thread through [`seam`], so each
//! test walks serially (`threads(1)`: on the calling thread).

use super::seam::{self, Counts};
use super::windows::parse_batch;
use super::*;
use crate::walk::WalkBuilder;
use std::ffi::{CString, OsString};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::path::Path;
use windows_sys::Win32::Storage::FileSystem as fs;

fn files(dir: &Path, n: usize, size: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        std::fs::write(dir.join(format!("file-{i:05}")), vec![b'x'; size]).unwrap();
    }
}

/// Walks `root` serially on this thread and returns the paths listed and the calls
/// made.
fn walk_counted(root: &Path) -> (usize, Counts) {
    seam::take();
    let n = WalkBuilder::new(root)
        .min_depth(1)
        .threads(1)
        .build()
        .inspect(|e| assert!(e.is_ok(), "{e:?}"))
        .count();
    (n, seam::take())
}

#[test]
fn listing_costs_an_open_and_one_or_two_batch_reads_a_directory_and_nothing_an_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let small = tmp.path().join("small");
    let big = tmp.path().join("big");
    for r in [&small, &big] {
        files(&r.join("a"), 3, 1);
        std::fs::create_dir_all(r.join("b/c")).unwrap();
    }
    // A hundred times the entries in one directory: still no call per entry, only
    // a batch read per 64 KiB of records (about 500 of these).
    files(&big.join("a"), 1500, 1);

    let (n_small, c_small) = walk_counted(&small);
    let (n_big, c_big) = walk_counted(&big);
    assert_eq!((n_small, n_big), (3 + 3, 1500 + 3));
    for (c, dirs) in [(c_small, 4), (c_big, 4)] {
        // The root (CreateFileW through std) and each subdirectory (NtCreateFile).
        assert_eq!(c.dir_opens, dirs, "{c:?}");
        // Listing asks nothing per entry: no stat, either way.
        assert_eq!((c.attr_calls, c.stat_opens), (0, 0), "{c:?}");
        // The root's type check; a link check a directory where the system lacks
        // OBJ_DONT_REPARSE.
        assert!(c.handle_queries <= 1 + dirs, "{c:?}");
        assert_eq!((c.delete_opens, c.dispositions), (0, 0), "{c:?}");
    }
    // A small directory: one batch with every entry, one that says there are no more.
    assert_eq!(c_small.batch_reads, 4 * 2, "{c_small:?}");
    // 1500 entries of 128 bytes in 64 KiB batches: 3 batches and the last call.
    assert_eq!(c_big.batch_reads, 3 * 2 + 4, "{c_big:?}");
    assert_eq!(c_big.handle_queries, c_small.handle_queries);
}

#[test]
fn a_chain_of_300_directories_longer_than_1000_characters_is_walked_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = tmp.path().join("chain");
    for i in 0..300 {
        p.push(format!("level-{i:03}"));
    }
    assert!(p.as_os_str().len() > 1000 + 300 * 4);
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("bottom"), b"deep").unwrap();
    let (n, c) = walk_counted(&tmp.path().join("chain"));
    assert_eq!(n, 301);
    assert_eq!(c.dir_opens, 301, "{c:?}");
    // The bottom file's path, as the walk gives it, leads to it.
    let bottom = WalkBuilder::new(tmp.path().join("chain"))
        .threads(1)
        .build()
        .map(|e| e.unwrap().into_path())
        .find(|p| p.ends_with("bottom"))
        .unwrap();
    assert_eq!(std::fs::read(&bottom).unwrap(), b"deep");
    assert!(bottom.as_os_str().len() > 2000);
    let m = stat_path(&bottom, StatMask::SIZE, false).unwrap();
    assert_eq!((m.file_type(), m.size), (FileType::File, 4));

    let s = crate::remove_tree(
        tmp.path().join("chain"),
        &crate::RemoveOptions::new().threads(1),
    );
    assert_eq!(s.removed, 302, "{s:?}");
    assert!(!tmp.path().join("chain").exists());
}

/// Entries of every kind the test can make: a file, an empty one, a read-only one, a
/// hidden one, a directory, a non-ASCII name.
fn kinds(root: &Path) -> Vec<&'static CStr> {
    std::fs::write(root.join("file"), vec![1u8; 5000]).unwrap();
    std::fs::write(root.join("empty"), b"").unwrap();
    std::fs::write(root.join("read-only"), b"ro").unwrap();
    let mut p = std::fs::metadata(root.join("read-only"))
        .unwrap()
        .permissions();
    p.set_readonly(true);
    std::fs::set_permissions(root.join("read-only"), p).unwrap();
    std::fs::write(root.join(".hidden"), b"h").unwrap();
    std::fs::create_dir(root.join("dir")).unwrap();
    std::fs::write(root.join("Grüße, 日本"), b"utf").unwrap();
    vec![
        c"file",
        c"empty",
        c"read-only",
        c".hidden",
        c"dir",
        c"Gr\xc3\xbc\xc3\x9fe, \xe6\x97\xa5\xe6\x9c\xac",
    ]
}

#[test]
fn stat_gives_equal_metadata_by_attributes_and_by_handle() {
    let tmp = tempfile::tempdir().unwrap();
    let names = kinds(tmp.path());
    let dir = Dir::open(tmp.path()).unwrap();
    let masks = [
        StatMask::TYPE,
        StatMask::SIZE,
        StatMask::MODE | StatMask::MTIME,
        StatMask::SIZE | StatMask::OWNER,
        StatMask::ID,
        StatMask::ALL,
    ];
    for name in &names {
        for mask in masks {
            seam::take();
            let fast = dir.stat_at(name, mask, false).unwrap();
            let c_fast = seam::take();
            seam::FORCE_HANDLE_STAT.set(true);
            let slow = dir.stat_at(name, mask, false);
            let path = tmp.path().join(name.to_str().unwrap());
            let slow_path = stat_path(&path, mask, false);
            seam::FORCE_HANDLE_STAT.set(false);
            let c_slow = seam::take();
            let fast_path = stat_path(&path, mask, false).unwrap();
            assert_eq!(fast, slow.unwrap(), "{name:?} {mask:?}");
            assert_eq!(fast, slow_path.unwrap(), "{name:?} {mask:?}");
            assert_eq!(fast, fast_path, "{name:?} {mask:?}");
            // The handle way was taken when forced; the attribute way alone otherwise,
            // unless the mask asks what only a handle tells.
            assert_eq!((c_slow.attr_calls, c_slow.stat_opens), (0, 2), "{mask:?}");
            let needs_handle = mask.contains(StatMask::ID) || mask.contains(StatMask::NLINK);
            let want = if needs_handle { (0, 1) } else { (1, 0) };
            assert_eq!((c_fast.attr_calls, c_fast.stat_opens), want, "{mask:?}");
        }
    }
    let f = dir.stat_at(c"file", StatMask::ALL, false).unwrap();
    assert_eq!((f.file_type(), f.size, f.nlink), (FileType::File, 5000, 1));
    assert_eq!(f.mode, 0o100644);
    assert!(f.ino != 0 && f.blocks >= 5000 / 512, "{f:?}");
    let ro = dir.stat_at(c"read-only", StatMask::MODE, false).unwrap();
    assert_eq!(ro.mode, 0o100444);
    let d = dir.stat_at(c"dir", StatMask::ALL, false).unwrap();
    assert_eq!((d.file_type(), d.mode), (FileType::Dir, 0o040755));
    // The handle of the directory itself says the same as a stat of it by name.
    let sub = dir.open_at(c"dir").unwrap();
    assert_eq!(sub.stat(StatMask::ALL).unwrap(), d);
    // Missing: NotFound either way.
    for force in [false, true] {
        seam::FORCE_HANDLE_STAT.set(force);
        let e = dir.stat_at(c"missing", StatMask::SIZE, false).unwrap_err();
        seam::FORCE_HANDLE_STAT.set(false);
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}

/// Where `GetFileInformationByHandle` fails (wine, for a file whose Unix path passes
/// `PATH_MAX`), the queries of one class each give the same metadata; the volume's
/// serial number, which wine does not tell there either, is the directory's.
#[test]
fn stat_by_one_class_a_query_gives_what_the_handle_call_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let names = kinds(tmp.path());
    let root = Dir::open(tmp.path()).unwrap();
    let masks = [
        StatMask::TYPE,
        StatMask::SIZE,
        StatMask::MODE | StatMask::MTIME,
        StatMask::BLOCKS | StatMask::NLINK,
        StatMask::ID,
        StatMask::ALL,
    ];
    // Before anything told the root's volume, the classes' way asks for it.
    seam::FORCE_CLASS_QUERIES.set(true);
    let by_classes = root.stat(StatMask::ID);
    seam::FORCE_CLASS_QUERIES.set(false);
    assert_eq!(by_classes.unwrap(), root.stat(StatMask::ID).unwrap());
    // Opened relative to the root: the root's volume, told by the stat above.
    let dir = root.open_at(c"dir").unwrap();
    for mask in masks {
        let want = dir.stat(mask).unwrap();
        seam::FORCE_CLASS_QUERIES.set(true);
        seam::FORCE_HANDLE_STAT.set(true);
        let got = dir.stat(mask);
        let entries: Vec<_> = names
            .iter()
            .map(|n| root.stat_at(n, mask, false).unwrap())
            .collect();
        seam::FORCE_HANDLE_STAT.set(false);
        seam::FORCE_CLASS_QUERIES.set(false);
        assert_eq!(got.unwrap(), want, "{mask:?}");
        for (n, got) in names.iter().zip(entries) {
            assert_eq!(got, root.stat_at(n, mask, false).unwrap(), "{n:?} {mask:?}");
        }
    }
    // A followed entry may be on another volume: the system must tell it, and does.
    seam::FORCE_CLASS_QUERIES.set(true);
    seam::FORCE_HANDLE_STAT.set(true);
    let followed = root.stat_at(c"file", StatMask::ID, true);
    seam::FORCE_HANDLE_STAT.set(false);
    seam::FORCE_CLASS_QUERIES.set(false);
    assert_eq!(
        followed.unwrap(),
        root.stat_at(c"file", StatMask::ID, true).unwrap()
    );
}

#[test]
fn a_listing_gives_types_and_the_file_ids_stat_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let names = kinds(tmp.path());
    let dir = Dir::open(tmp.path()).unwrap();
    let mut buf = DirBuf::with_capacity(1024);
    let mut seen = Vec::new();
    dir.read_entries(&mut buf, |e| {
        seen.push((e.name().to_owned(), e.file_type(), e.ino()))
    })
    .unwrap();
    seen.sort();
    let mut want: Vec<_> = names
        .iter()
        .map(|n| {
            let m = dir.stat_at(n, StatMask::ID, false).unwrap();
            (CString::from(*n), m.file_type(), m.ino)
        })
        .collect();
    want.sort();
    assert_eq!(seen, want);
    // Read again: the listing restarts.
    let mut again = 0;
    dir.read_entries(&mut buf, |_| again += 1).unwrap();
    assert_eq!(again, names.len());
}

#[test]
fn links_and_junctions_are_links_other_reparse_points_what_they_stand_for() {
    use super::windows::type_of;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_DIRECTORY as D, FILE_ATTRIBUTE_REPARSE_POINT as R,
    };
    use windows_sys::Win32::System::SystemServices::{
        IO_REPARSE_TAG_DEDUP, IO_REPARSE_TAG_MOUNT_POINT, IO_REPARSE_TAG_SYMLINK,
    };
    assert_eq!(
        type_of(D | R, IO_REPARSE_TAG_MOUNT_POINT),
        FileType::Symlink
    );
    assert_eq!(type_of(D | R, IO_REPARSE_TAG_SYMLINK), FileType::Symlink);
    assert_eq!(type_of(R, IO_REPARSE_TAG_SYMLINK), FileType::Symlink);
    assert_eq!(type_of(R, IO_REPARSE_TAG_DEDUP), FileType::File);
    assert_eq!(type_of(D | R, IO_REPARSE_TAG_DEDUP), FileType::Dir);
    // Without the reparse attribute the field is the extended attributes' size.
    assert_eq!(type_of(D, IO_REPARSE_TAG_SYMLINK), FileType::Dir);
    assert_eq!(type_of(0, IO_REPARSE_TAG_SYMLINK), FileType::File);
}

#[test]
fn removal_by_posix_and_by_classic_disposition_leaves_nothing() {
    for classic in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tree");
        kinds(
            &std::fs::create_dir_all(&root)
                .map(|()| root.clone())
                .unwrap(),
        );
        files(&root.join("dir/sub"), 50, 10);
        let p = std::fs::metadata(root.join("read-only"))
            .unwrap()
            .permissions();
        assert!(p.readonly());
        seam::FORCE_CLASSIC_DELETE.set(classic);
        seam::take();
        let s = crate::remove_tree(&root, &crate::RemoveOptions::new().threads(1));
        let c = seam::take();
        seam::FORCE_CLASSIC_DELETE.set(false);
        assert_eq!(
            (s.removed, s.error_count),
            (6 + 1 + 50 + 1, 0),
            "classic {classic}: {s:?}"
        );
        assert!(!root.exists(), "classic {classic}");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        // One open for deletion an entry (a second for the read-only file where the
        // classic disposition refuses it), no query: the type comes from the listing
        // and the open's options.
        assert!(c.delete_opens >= 58 && c.delete_opens <= 60, "{c:?}");
        // One disposition an entry (two for the read-only file, the classic way; two
        // for the first entry where POSIX semantics turn out missing).
        assert!(c.dispositions >= 58 && c.dispositions <= 60, "{c:?}");
        // The few queries are the root's checks (stat_path of the path given, the
        // open of the root), none per entry.
        assert!(c.handle_queries <= c.stat_opens + 2, "{c:?}");
        // The classic way asks before each disposition whether the file has a name to
        // be removed by (the POSIX way never: where it works, it is not used); under
        // wine, also each directory opened its own (checked to be the one named), and
        // the root.
        assert!(c.name_queries <= c.dispositions + c.dir_opens + 1, "{c:?}");
        if classic {
            assert!(c.name_queries >= 57, "{c:?}");
        }
    }
}

#[test]
fn a_file_open_elsewhere_is_removed_or_reported() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("busy"), b"x").unwrap();
    std::fs::write(tmp.path().join("shared"), b"x").unwrap();
    let dir = Dir::open(tmp.path()).unwrap();
    // Open without FILE_SHARE_DELETE: a sharing violation, retried a bounded time,
    // then reported.
    let busy = {
        use std::os::windows::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .share_mode(1) // FILE_SHARE_READ only
            .open(tmp.path().join("busy"))
            .unwrap()
    };
    let t = std::time::Instant::now();
    let e = dir.unlink_at(c"busy").unwrap_err();
    assert!(t.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(e.raw_os_error(), Some(32), "{e:?}"); // ERROR_SHARING_VIOLATION
    drop(busy);
    dir.unlink_at(c"busy").unwrap();
    assert!(!tmp.path().join("busy").exists());
    // Open with FILE_SHARE_DELETE, as most programs open files: removed.
    let shared = std::fs::File::open(tmp.path().join("shared")).unwrap();
    dir.unlink_at(c"shared").unwrap();
    drop(shared);
    assert!(!tmp.path().join("shared").exists());
}

#[test]
fn disk_usage_adds_the_sizes_of_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let sizes = [0usize, 1, 511, 512, 4096, 10_000, 123_457];
    for (i, s) in sizes.iter().enumerate() {
        let d = tmp.path().join(format!("d{}", i % 3));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("f{i}")), vec![0u8; *s]).unwrap();
    }
    for threads in [1, 0] {
        let u = crate::disk_usage(&[tmp.path()], &crate::UsageOptions::new().threads(threads));
        assert_eq!(u.errors, 0);
        let root = &u.roots[0];
        assert_eq!(root.total.apparent, sizes.iter().sum::<usize>() as u64);
        // The root, three directories, the files.
        assert_eq!(root.total.inodes, 1 + 3 + sizes.len() as u64);
    }
}

#[test]
fn names_with_unpaired_surrogates_come_back_escaped_and_open_again() {
    // Pure: the escape and its inverse.
    let odd = OsString::from_wide(&[0x61, 0xd800, 0x62, 0xdc00, 0xd83d, 0xde00]);
    let bytes = os_to_bytes(&odd);
    assert_eq!(bytes, "a\\u{d800}b\\u{dc00}\u{1f600}".as_bytes());
    assert_eq!(bytes_to_os(&bytes), odd);
    // Text that only looks like an escape is left alone.
    for s in ["\\u{0041}", "\\u{D800}", "\\u{d800", "\\u{e000}", "a\\b"] {
        assert_eq!(bytes_to_os(s.as_bytes()), OsString::from(s), "{s}");
    }
    // On disk, where the file system keeps such a name (NTFS does; wine maps names
    // to UTF-8 Unix names and may refuse it).
    let tmp = tempfile::tempdir().unwrap();
    let name = OsString::from_wide(&[0x78, 0xd800]);
    if std::fs::write(tmp.path().join(&name), b"odd").is_err()
        || std::fs::read_dir(tmp.path())
            .unwrap()
            .any(|e| e.unwrap().file_name() != name)
    {
        eprintln!("this file system keeps no unpaired surrogate: the on-disk part is skipped");
        return;
    }
    let dir = Dir::open(tmp.path()).unwrap();
    let mut buf = DirBuf::new();
    let mut listed = Vec::new();
    dir.read_entries(&mut buf, |e| listed.push(e.name().to_owned()))
        .unwrap();
    assert_eq!(listed, vec![CString::new("x\\u{d800}").unwrap()]);
    let m = dir.stat_at(&listed[0], StatMask::SIZE, false).unwrap();
    assert_eq!(m.size, 3);
    dir.unlink_at(&listed[0]).unwrap();
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn every_drive_root_is_refused_as_a_root() {
    use crate::remove::{Refusal, check_path};
    for root in ["C:\\", "Z:\\", "Z:/", "\\\\?\\C:\\", "/", "\\"] {
        assert_eq!(check_path(root), Err(Refusal::Root), "{root}");
    }
    for ok in ["Z:\\tmp", "C:\\windows\\temp\\ftw-none"] {
        assert_eq!(check_path(ok), Ok(()), "{ok}");
    }
    assert_eq!(check_path("Z:\\tmp\\.."), Err(Refusal::Dot));
}

/// A FILE_ID_BOTH_DIR_INFO record: `next`, attributes, file id and `name`, with the
/// name length given as `name_len` (the true one unless a test lies).
fn record(next: u32, attrs: u32, ino: u64, name: &str, name_len: Option<u32>) -> Vec<u8> {
    use std::mem::offset_of;
    use windows_sys::Win32::Storage::FileSystem::FILE_ID_BOTH_DIR_INFO as Info;
    let units: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut r = vec![0u8; offset_of!(Info, FileName)];
    let put = |r: &mut Vec<u8>, at: usize, b: &[u8]| r[at..at + b.len()].copy_from_slice(b);
    put(
        &mut r,
        offset_of!(Info, NextEntryOffset),
        &next.to_le_bytes(),
    );
    put(
        &mut r,
        offset_of!(Info, FileAttributes),
        &attrs.to_le_bytes(),
    );
    put(&mut r, offset_of!(Info, FileId), &ino.to_le_bytes());
    let len = name_len.unwrap_or(units.len() as u32);
    put(&mut r, offset_of!(Info, FileNameLength), &len.to_le_bytes());
    r.extend_from_slice(&units);
    r
}

fn parsed(bytes: &[u8]) -> (Vec<(String, u64)>, Option<io::ErrorKind>) {
    let mut out = Vec::new();
    let r = parse_batch(bytes, |r| {
        out.push((
            String::from_utf16(&r.name_units().collect::<Vec<_>>()).unwrap(),
            r.ino,
        ));
        Ok(())
    });
    (out, r.err().map(|e| e.kind()))
}

#[test]
fn a_batch_is_parsed_within_its_buffer_and_a_malformed_record_is_an_error() {
    let header = record(0, 0, 0, "", None).len();
    let dir = fs::FILE_ATTRIBUTE_DIRECTORY;
    // Two good records, the first padded to 8 bytes, then stale bytes after the last.
    let first = record(0, dir, 7, "caf\u{e9}", None);
    let step = first.len().next_multiple_of(8);
    let mut good = record(step as u32, dir, 7, "caf\u{e9}", None);
    good.resize(step, 0xAA);
    good.extend(record(0, 0, 9, "b", None));
    good.extend([0xAA; 100]);
    assert_eq!(
        parsed(&good),
        (vec![("caf\u{e9}".into(), 7), ("b".into(), 9)], None)
    );

    let bad = io::ErrorKind::InvalidData;
    let one = record(0, 0, 1, "a", None);
    // NextEntryOffset past the end of the buffer: the first record, then the error.
    let mut past = record(4096, 0, 1, "a", None);
    past.resize(64 + header, 0);
    assert_eq!(parsed(&past), (vec![("a".into(), 1)], Some(bad)));
    // A next record whose header is cut by the end of the buffer.
    let mut cut = record(step as u32, 0, 1, "a", None);
    cut.resize(step + header - 1, 0);
    assert_eq!(parsed(&cut), (vec![("a".into(), 1)], Some(bad)));
    // FileNameLength past the end of the buffer, or huge (no overflow).
    for len in [200, u32::MAX] {
        assert_eq!(
            parsed(&record(0, 0, 1, "a", Some(len))),
            (vec![], Some(bad))
        );
    }
    // An odd FileNameLength.
    assert_eq!(parsed(&record(0, 0, 1, "ab", Some(3))), (vec![], Some(bad)));
    // NextEntryOffset inside the record's own name (records would overlap).
    let mut overlap = record(header as u32 + 1, 0, 1, "abcd", None);
    overlap.extend(&one);
    assert_eq!(parsed(&overlap), (vec![], Some(bad)));
    // A buffer smaller than a header.
    assert_eq!(parsed(&one[..header - 1]), (vec![], Some(bad)));
}

#[test]
fn a_listing_gives_the_metadata_the_handle_way_gives_but_the_volume_and_link_count() {
    let tmp = tempfile::tempdir().unwrap();
    let names = kinds(tmp.path());
    files(&tmp.path().join("sized"), 3, 5000);
    let dir = Dir::open(tmp.path()).unwrap();
    let mut buf = DirBuf::new();
    let mut listed = Vec::new();
    dir.read_entries(&mut buf, |e| {
        listed.push((e.name().to_owned(), e.metadata().expect("told on Windows")))
    })
    .unwrap();
    assert_eq!(listed.len(), names.len() + 1);
    let ask = StatMask::ID | StatMask::SIZE | StatMask::BLOCKS | StatMask::MODE | StatMask::MTIME;
    for (name, m) in listed {
        let want = dir.stat_at(&name, ask, false).unwrap();
        assert_eq!((m.dev, m.nlink), (0, 0), "{name:?}");
        assert_eq!(m, Metadata { dev: 0, ..want }, "{name:?}");
    }
}

#[test]
fn disk_usage_takes_files_from_the_listing_and_counts_each_file_id_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("du");
    files(&root.join("a"), 300, 1000);
    files(&root.join("b"), 200, 10);
    // A second name of a file: counted once, wherever met.
    std::fs::hard_link(root.join("a/file-00000"), root.join("b/link")).unwrap();
    for count_links in [false, true] {
        seam::take();
        let opts = crate::UsageOptions::new()
            .threads(1)
            .count_links(count_links);
        let u = crate::disk_usage(&[&root], &opts);
        let c = seam::take();
        assert_eq!(u.errors, 0);
        let t = u.roots[0].total;
        let links = u64::from(count_links);
        assert_eq!(t.apparent, 300 * 1000 + 200 * 10 + links * 1000);
        assert_eq!(t.inodes, 1 + 2 + 500 + links);
        // Per directory: its open, its batch reads, the query of the directory itself
        // (its size and id, from its handle); for the root also the stat of its path
        // (one open and query) and a second open; per file, nothing: 503 entries,
        // about ten calls.
        assert_eq!((c.attr_calls, c.stat_opens), (0, 1), "{c:?}");
        assert!(c.dir_opens <= 4 && c.batch_reads == 6, "{c:?}");
        assert!(c.handle_queries <= 4 * 3, "{c:?}");
    }
}
