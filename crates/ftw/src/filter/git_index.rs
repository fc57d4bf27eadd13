//! The paths git tracks: the entries' paths of a git index (`$GIT_DIR/index`, versions 2
//! to 4), nothing else of them. A file that an ignore rule ignores is listed all the
//! same when git tracks it, and an ignored directory is entered when git tracks a path
//! below it: the index is read only when an ignored entry is met (see
//! [`super::Ignore`]), once per repository.
//!
//! The file is read whole, once (not mapped: a file changed under a map is undefined
//! behaviour, which the crate's `deny(unsafe_code)` keeps out); only the paths are kept,
//! in git's order (their bytes), for binary searches. A split index (`link`
//! extension) adds the paths of its shared index; the entries it marks deleted are
//! still taken as tracked.

use std::cmp::Ordering;
use std::path::Path;

/// The paths of an index, sorted by their bytes.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// Every path, one after the other.
    bytes: Vec<u8>,
    /// Where each path ends in `bytes`.
    ends: Vec<usize>,
}

impl Index {
    /// The paths of the index file `path` (object ids of `hash_len` bytes: 20 for SHA-1,
    /// 32 for SHA-256); `None` if it cannot be read or is not an index.
    pub(super) fn read(path: &Path, hash_len: usize) -> Option<Index> {
        let data = std::fs::read(path).ok()?;
        let mut index = Index::default();
        let link = index.add(&data, hash_len)?;
        if let Some(shared) = link {
            let name: String = shared.iter().map(|b| format!("{b:02x}")).collect();
            let shared_path = path.with_file_name(format!("sharedindex.{name}"));
            if let Ok(data) = std::fs::read(shared_path) {
                index.add(&data, hash_len);
            }
        }
        index.sort();
        Some(index)
    }

    /// Adds the paths of the index `data`; returns the shared index's id if it is split.
    fn add(&mut self, data: &[u8], hash_len: usize) -> Option<Option<Vec<u8>>> {
        let be32 = |at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
        };
        if data.get(..4)? != b"DIRC" {
            return None;
        }
        let version = be32(4)?;
        if !(2..=4).contains(&version) {
            return None;
        }
        let count = be32(8)? as usize;
        let mut pos = 12;
        let mut prev: Vec<u8> = Vec::new();
        self.ends.reserve(count);
        for _ in 0..count {
            // ctime, mtime, dev, ino, mode, uid, gid, size: 40 bytes; the id; the flags.
            let flags_at = pos + 40 + hash_len;
            let flags = u16::from_be_bytes(data.get(flags_at..flags_at + 2)?.try_into().ok()?);
            let mut name_at = flags_at + 2;
            if version >= 3 && flags & 0x4000 != 0 {
                name_at += 2;
            }
            if version == 4 {
                // The number of bytes to take off the previous path, then the rest.
                let (strip, used) = varint(data.get(name_at..)?)?;
                name_at += used;
                let len = data.get(name_at..)?.iter().position(|&b| b == 0)?;
                prev.truncate(prev.len().checked_sub(strip)?);
                prev.extend_from_slice(&data[name_at..name_at + len]);
                self.push(&prev);
                pos = name_at + len + 1;
            } else {
                let len = match flags & 0xfff {
                    0xfff => data.get(name_at..)?.iter().position(|&b| b == 0)?,
                    n => n as usize,
                };
                self.push(data.get(name_at..name_at + len)?);
                // Padded with 1 to 8 NULs to a multiple of 8 bytes.
                pos += (name_at - pos + len + 8) & !7;
            }
        }
        // Extensions, up to the checksum: a split index names its shared index.
        while pos + 8 + hash_len <= data.len() {
            let sig = &data[pos..pos + 4];
            let size = be32(pos + 4)? as usize;
            if sig == b"link" {
                return Some(Some(data.get(pos + 8..pos + 8 + hash_len)?.to_vec()));
            }
            pos += 8 + size;
        }
        Some(None)
    }

    fn push(&mut self, path: &[u8]) {
        self.bytes.extend_from_slice(path);
        self.ends.push(self.bytes.len());
    }

    fn path(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// Sorts the paths, unless they are sorted (as git writes them).
    fn sort(&mut self) {
        if (1..self.ends.len()).all(|i| self.path(i - 1) <= self.path(i)) {
            return;
        }
        let mut paths: Vec<Vec<u8>> = (0..self.ends.len())
            .map(|i| self.path(i).to_vec())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        *self = Index::default();
        for p in &paths {
            self.push(p);
        }
    }

    /// The index of the first path not below `key` in `cmp`'s order.
    fn first(&self, cmp: impl Fn(&[u8]) -> Ordering) -> usize {
        let (mut lo, mut hi) = (0, self.ends.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cmp(self.path(mid)) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Whether `path` (relative to the work tree's top) is tracked: a file, a link, or a
    /// repository within (a submodule).
    pub(super) fn contains(&self, path: &[u8]) -> bool {
        let i = self.first(|p| p.cmp(path));
        i < self.ends.len() && self.path(i) == path
    }

    /// Whether a tracked path lies below the directory `dir`.
    pub(super) fn has_below(&self, dir: &[u8]) -> bool {
        let below = |p: &[u8]| p.iter().cmp(dir.iter().chain(b"/"));
        let i = self.first(below);
        i < self.ends.len() && {
            let p = self.path(i);
            p.len() > dir.len() && p.starts_with(dir) && p[dir.len()] == b'/'
        }
    }

    /// How many paths there are.
    #[cfg(all(test, unix))]
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }
}

/// git's varint of index version 4 (as its offsets are encoded): the value and the
/// bytes it took.
fn varint(data: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *data.first()?;
    let mut val = (c & 0x7f) as usize;
    while c & 0x80 != 0 {
        i += 1;
        c = *data.get(i)?;
        val = val.checked_add(1)?.checked_mul(128)? + (c & 0x7f) as usize;
    }
    Some((val, i + 1))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::process::Command;

    /// Indexes of each version, written by git itself, read back.
    #[test]
    fn every_version_git_writes_is_read() {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipped: no git");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        let git = |args: &[&str]| {
            Command::new("git")
                .current_dir(repo)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", repo)
                .args(args)
                .status()
                .unwrap()
                .success()
        };
        assert!(git(&["init", "-q"]));
        // (Longer than the 12 bits of an entry's length is longer than PATH_MAX.)
        let long = vec!["l".repeat(200); 10].join("/");
        let paths = ["a.b", "a-c", "a/b/c", "dir/x", "dir/y z", &long];
        for p in &paths {
            let p = repo.join(p);
            if p.exists() {
                continue;
            }
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        for version in ["2", "3", "4"] {
            assert!(git(&["add", "-A"]));
            assert!(git(&["update-index", "--index-version", version]));
            let index = Index::read(&repo.join(".git/index"), 20).unwrap();
            assert_eq!(index.len(), 6, "v{version}");
            assert!(
                index.contains(b"a.b")
                    && index.contains(b"a/b/c")
                    && index.contains(long.as_bytes())
            );
            assert!(!index.contains(b"a/b") && !index.contains(b"dir"));
            assert!(index.has_below(b"a") && index.has_below(b"a/b") && index.has_below(b"dir"));
            assert!(
                !index.has_below(b"a.b") && !index.has_below(b"di") && !index.has_below(b"dir/x")
            );
        }
    }
}
