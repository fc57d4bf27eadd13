use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A failure on one path during a walk: the walk goes on with the rest.
///
/// ```
/// let mut errors = 0;
/// for item in ftw::walk::WalkBuilder::new("/nonexistent/ftw-doc").build() {
///     let err = item.unwrap_err();
///     assert_eq!(err.path(), std::path::Path::new("/nonexistent/ftw-doc"));
///     assert_eq!(err.io_error().kind(), std::io::ErrorKind::NotFound);
///     errors += 1;
/// }
/// assert_eq!(errors, 1);
/// ```
#[derive(Debug)]
pub struct Error {
    path: PathBuf,
    depth: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Io(io::Error),
    Loop {
        ancestor: PathBuf,
        io: io::Error,
    },
    /// An ignore file that could not be read or parsed (the walk goes on without it).
    IgnoreFile(io::Error),
}

impl Error {
    pub(crate) fn io(path: PathBuf, depth: usize, err: io::Error) -> Error {
        Error {
            path,
            depth,
            kind: Kind::Io(err),
        }
    }

    pub(crate) fn fs_loop(path: PathBuf, depth: usize, ancestor: PathBuf) -> Error {
        Error {
            path,
            depth,
            kind: Kind::Loop {
                ancestor,
                io: io::Error::other("file system loop detected"),
            },
        }
    }

    pub(crate) fn ignore_file(path: PathBuf, depth: usize, reason: String) -> Error {
        Error {
            path,
            depth,
            kind: Kind::IgnoreFile(io::Error::other(reason)),
        }
    }

    /// Whether this is about an ignore file that could not be read or parsed (with
    /// [`WalkBuilder::git_ignore`](super::WalkBuilder::git_ignore)): the walk went on
    /// without its rules.
    pub fn is_ignore_file(&self) -> bool {
        matches!(self.kind, Kind::IgnoreFile(_))
    }

    /// The path the failure is about.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The depth of that path below its root (0 for the root itself).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// For a symbolic link that leads back to a directory being walked (with
    /// `follow_links`): that directory.
    pub fn loop_ancestor(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Loop { ancestor, .. } => Some(ancestor),
            Kind::Io(_) | Kind::IgnoreFile(_) => None,
        }
    }

    /// The underlying error.
    pub fn io_error(&self) -> &io::Error {
        match &self.kind {
            Kind::Io(e) | Kind::Loop { io: e, .. } | Kind::IgnoreFile(e) => e,
        }
    }

    /// The reason alone, as a person reads it: "Permission denied", not
    /// "Permission denied (os error 13)".
    pub fn reason(&self) -> String {
        match &self.kind {
            Kind::Loop { ancestor, .. } => format!(
                "file system loop detected: it leads back to {}",
                ancestor.display()
            ),
            Kind::Io(e) => describe(e),
            Kind::IgnoreFile(e) => format!("ignore file: {}", describe(e)),
        }
    }
}

/// An `io::Error` as a person reads it, without the "(os error N)" tail: the library's
/// own messages ([`Error::reason`], removal's and ignore files' errors) use it.
pub(crate) fn describe(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.io_error())
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = e.io_error().kind();
        io::Error::new(kind, e)
    }
}
