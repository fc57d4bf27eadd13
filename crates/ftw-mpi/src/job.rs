//! A directory job: what a rank needs to open one directory and list it.

use ftw::sys::{Dir, StatMask};
use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Parent handles held by waiting jobs on this rank (see [`Held`]).
static HELD: AtomicUsize = AtomicUsize::new(0);

/// At most this many parent handles are kept for waiting jobs (and, for `rm`, for the
/// directories whose subdirectories are not yet removed): a quarter of the descriptors
/// the process may open, at least 256 and at most 65,536. Past it a job opens its
/// directory below its root's handle, as one that moved between ranks does.
pub(crate) fn held_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let limit = ftw::sys::fd_limit().unwrap_or(1024);
        usize::try_from(limit / 4)
            .unwrap_or(usize::MAX)
            .clamp(256, 1 << 16)
    })
}

/// A directory's handle shared by the jobs of its subdirectories on the rank that read
/// it (never sent: a job that moves opens its directory below its root).
#[derive(Debug)]
pub struct Held(Dir);

impl Held {
    /// Shares a copy of `dir` for the jobs of its subdirectories; `None` when the
    /// rank's budget of such handles is spent (or the handle cannot be copied).
    pub fn share(dir: &Dir) -> Option<Arc<Held>> {
        if HELD.fetch_add(1, Ordering::Relaxed) >= held_budget() {
            HELD.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        match dir.try_clone() {
            Ok(d) => Some(Arc::new(Held(d))),
            Err(_) => {
                HELD.fetch_sub(1, Ordering::Relaxed);
                None
            }
        }
    }
}

impl Held {
    /// The directory's handle.
    pub fn dir(&self) -> &Dir {
        &self.0
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One directory to list: its root, its path, its depth and its identity.
#[derive(Debug, Clone)]
pub struct Job {
    /// The index of its root among the PATHs.
    pub root: u32,
    /// Its depth below the root (0: the root itself).
    pub depth: u32,
    /// Its device and inode, as the rank that found it saw them (0 for a root).
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
    /// Its path as printed: the root as given, then the names below it.
    pub path: Vec<u8>,
    /// Where, in `path`, the part below the root starts.
    pub rel: u32,
    /// Its parent's handle, where the job was found on this rank and the budget allowed.
    pub parent: Option<Arc<Held>>,
    /// What the [`Work`](crate::Work) carries with the job (sent with it when it moves):
    /// empty for `find`; `du`'s place of the directory in du's order and its own size.
    pub data: Vec<u8>,
}

impl Job {
    /// The job of root number `root`, at `path`.
    pub fn root(root: u32, path: &[u8]) -> Job {
        Job {
            root,
            depth: 0,
            dev: 0,
            ino: 0,
            path: path.to_vec(),
            rel: path.len() as u32,
            parent: None,
            data: Vec::new(),
        }
    }

    /// The job of this job's subdirectory `name`, of identity (`dev`, `ino`).
    pub fn child(&self, name: &[u8], dev: u64, ino: u64, parent: Option<Arc<Held>>) -> Job {
        let mut path = Vec::with_capacity(self.path.len() + 1 + name.len());
        path.extend_from_slice(&self.path);
        if !path.is_empty() && !path.ends_with(b"/") {
            path.push(b'/');
        }
        let rel = if self.depth == 0 {
            path.len() as u32
        } else {
            self.rel
        };
        path.extend_from_slice(name);
        Job {
            root: self.root,
            depth: self.depth + 1,
            dev,
            ino,
            path,
            rel,
            parent,
            data: Vec::new(),
        }
    }

    /// The path below the root (empty for a root).
    pub fn below_root(&self) -> &[u8] {
        &self.path[self.rel as usize..]
    }

    /// Opens the job's directory: from its parent's handle where the job holds it, else
    /// below its root's handle (`root`), never through a link; either way checked to be
    /// the directory listed.
    pub(crate) fn open(&self, root: Option<&Dir>) -> io::Result<Dir> {
        let below = self.below_root();
        let dir = match (&self.parent, root) {
            (Some(parent), _) => {
                let name = below.rsplit(|&b| b == b'/').next().unwrap_or(below);
                parent.0.open_at(&cstring(name)?)?
            }
            (None, Some(root)) => match root.open_beneath(&cstring(below)?, false) {
                // Longer than the kernel takes in one call: a component at a time.
                Err(e) if e.raw_os_error() == Some(36) => {
                    let mut cur: Option<Dir> = None;
                    for name in below.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
                        cur = Some(cur.as_ref().unwrap_or(root).open_at(&cstring(name)?)?);
                    }
                    cur.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?
                }
                other => other?,
            },
            (None, None) => {
                return Err(io::Error::other(
                    "its root could not be opened on this rank",
                ));
            }
        };
        let id = dir.stat(StatMask::ID)?;
        if (id.dev, id.ino) != (self.dev, self.ino) {
            return Err(io::Error::other(Replaced));
        }
        Ok(dir)
    }

    /// Appends the job's record for a message: root, depth, identity, `rel`, the path
    /// and the data (each with its length first).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.root.to_le_bytes());
        out.extend_from_slice(&self.depth.to_le_bytes());
        out.extend_from_slice(&self.dev.to_le_bytes());
        out.extend_from_slice(&self.ino.to_le_bytes());
        out.extend_from_slice(&self.rel.to_le_bytes());
        out.extend_from_slice(&(self.path.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.path);
        out.extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.data);
    }

    /// The jobs of a message made by [`Job::encode`] (`None` if it is cut short).
    pub(crate) fn decode_all(mut msg: &[u8]) -> Option<Vec<Job>> {
        let mut jobs = Vec::new();
        while !msg.is_empty() {
            let u32_at = |m: &[u8], i: usize| -> Option<u32> {
                Some(u32::from_le_bytes(m.get(i..i + 4)?.try_into().ok()?))
            };
            let u64_at = |m: &[u8], i: usize| -> Option<u64> {
                Some(u64::from_le_bytes(m.get(i..i + 8)?.try_into().ok()?))
            };
            let len = u32_at(msg, 28)? as usize;
            let path = msg.get(32..32 + len)?.to_vec();
            let dlen = u32_at(msg, 32 + len)? as usize;
            let data = msg.get(36 + len..36 + len + dlen)?.to_vec();
            jobs.push(Job {
                root: u32_at(msg, 0)?,
                depth: u32_at(msg, 4)?,
                dev: u64_at(msg, 8)?,
                ino: u64_at(msg, 16)?,
                rel: u32_at(msg, 24)?,
                path,
                parent: None,
                data,
            });
            msg = &msg[36 + len + dlen..];
        }
        Some(jobs)
    }
}

/// Why a job's directory was not entered: what its path leads to now is not the
/// directory listed (it was replaced during the walk). The inner error of the
/// [`io::Error`] that [`Ctx::open`](crate::Ctx::open) returns then (kind `Other`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced;

impl std::fmt::Display for Replaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not the directory listed (replaced during the walk): not entered")
    }
}

impl std::error::Error for Replaced {}

impl Replaced {
    /// Whether `e` is this error.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|i| i.is::<Replaced>())
    }
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_survive_their_message() {
        let root = Job::root(3, b"./r");
        let a = root.child(b"a\nb\xff", 7, 9, None);
        let mut b = a.child(b"c", 7, 10, None);
        b.data = b"\x00key".to_vec();
        assert_eq!(b.path, b"./r/a\nb\xff/c");
        assert_eq!(b.below_root(), b"a\nb\xff/c");
        let mut msg = Vec::new();
        root.encode(&mut msg);
        b.encode(&mut msg);
        let back = Job::decode_all(&msg).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(
            (back[1].root, back[1].depth, back[1].dev, back[1].ino),
            (3, 2, 7, 10)
        );
        assert_eq!(back[1].path, b.path);
        assert_eq!(back[1].below_root(), b"a\nb\xff/c");
        assert_eq!(back[1].data, b"\x00key");
        assert!(back[0].data.is_empty());
        assert!(Job::decode_all(&msg[..msg.len() - 1]).is_none());
    }

    #[test]
    fn a_root_of_slash_adds_no_separator() {
        let c = Job::root(0, b"/").child(b"usr", 1, 2, None);
        assert_eq!(c.path, b"/usr");
        assert_eq!(c.below_root(), b"usr");
    }
}
