//! What ignore rules need of git's configuration, read from the files git reads, in
//! its order (a later setting wins): the system's (`GIT_CONFIG_SYSTEM`, else
//! `/etc/gitconfig`; none with `GIT_CONFIG_NOSYSTEM`), the user's (`GIT_CONFIG_GLOBAL`,
//! else `$XDG_CONFIG_HOME/git/config` or `~/.config/git/config`, then `~/.gitconfig`),
//! the repository's (`$GIT_DIR/config`), and the environment's
//! (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`). `include.path` is
//! followed, and `includeIf` where its condition is `gitdir:`, `gitdir/i:` or
//! `onbranch:` and holds for the repository (`hasconfig:` is never taken). A
//! `GIT_CONFIG_GLOBAL` or `GIT_CONFIG_SYSTEM` set, even empty, replaces the files of its
//! level, as in git (empty: none).
//!
//! Only three settings are read: `core.excludesFile` (by default
//! `$XDG_CONFIG_HOME/git/ignore`, or `~/.config/git/ignore`), `core.ignoreCase`, and
//! `extensions.objectFormat` (the length of the object ids in the index).

use std::path::{Path, PathBuf};

/// The settings read (see the [module](self)).
#[derive(Clone, Debug, Default)]
pub(super) struct GitConfig {
    /// `core.excludesFile`, `~/` expanded; relative to the work tree's top if relative.
    excludes_file: Option<PathBuf>,
    /// `core.ignoreCase`.
    pub(super) ignore_case: bool,
    /// `extensions.objectFormat = sha256`.
    pub(super) sha256: bool,
    /// Whether the system's and the user's files are read (by [`GitConfig::user`]).
    user: bool,
    /// The git directory whose settings these are, for `includeIf`'s conditions.
    git_dir: Option<PathBuf>,
}

impl GitConfig {
    /// The system's and the user's settings.
    pub(super) fn user() -> GitConfig {
        let mut c = GitConfig {
            user: true,
            ..GitConfig::default()
        };
        c.read_user();
        c
    }

    /// The system's and the user's files, read into these settings.
    fn read_user(&mut self) {
        let no_system = std::env::var("GIT_CONFIG_NOSYSTEM").is_ok_and(|v| parse_bool(Some(&v)));
        if !no_system {
            let system = std::env::var_os("GIT_CONFIG_SYSTEM")
                .map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from);
            self.read_file(&system, 0);
        }
        match std::env::var_os("GIT_CONFIG_GLOBAL") {
            Some(global) => self.read_file(Path::new(&global), 0),
            None => {
                if let Some(xdg) = xdg_config("config") {
                    self.read_file(&xdg, 0);
                }
                if let Some(home) = home() {
                    self.read_file(&home.join(".gitconfig"), 0);
                }
            }
        }
    }

    /// These settings as the repository whose git directory is `git_dir` (if any) sees
    /// them: the system's and the user's read again with its `includeIf`s, then its
    /// own (from its common directory, for a linked work tree), then the environment's.
    pub(super) fn with_repo(&self, git_dir: Option<&Path>) -> GitConfig {
        let mut c = GitConfig {
            user: self.user,
            git_dir: git_dir.map(Path::to_path_buf),
            ..GitConfig::default()
        };
        if c.user {
            c.read_user();
        }
        if let Some(d) = git_dir {
            c.read_file(&common_dir(d).join("config"), 0);
        }
        c.read_env();
        c
    }

    /// The excludes file, for a work tree whose top is `top` (a relative setting is
    /// relative to it, as git reads it from there).
    pub(super) fn excludes_path(&self, top: Option<&Path>) -> Option<PathBuf> {
        match &self.excludes_file {
            Some(p) if p.as_os_str().is_empty() => None,
            Some(p) if p.is_relative() => Some(top.map_or_else(|| p.clone(), |t| t.join(p))),
            Some(p) => Some(p.clone()),
            None => xdg_config("ignore"),
        }
    }

    fn read_env(&mut self) {
        let Some(count) = std::env::var("GIT_CONFIG_COUNT")
            .ok()
            .and_then(|n| n.trim().parse::<usize>().ok())
        else {
            return;
        };
        for i in 0..count {
            let Ok(key) = std::env::var(format!("GIT_CONFIG_KEY_{i}")) else {
                continue;
            };
            let value = std::env::var(format!("GIT_CONFIG_VALUE_{i}")).ok();
            // section.key, or section.subsection.key (none of ours).
            let (Some(first), Some(last)) = (key.find('.'), key.rfind('.')) else {
                continue;
            };
            if first == last {
                self.set(
                    &key[..first].to_ascii_lowercase(),
                    &key[last + 1..],
                    value.as_deref(),
                    None,
                    0,
                );
            }
        }
    }

    /// Reads the configuration file `path`, if there is one (`depth`: includes followed).
    fn read_file(&mut self, path: &Path, depth: u8) {
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut section = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                c if c.is_whitespace() => {}
                '#' | ';' => skip_line(&mut chars),
                '[' => {
                    // `[name]`, `[name "subsection"]`: the name lower-cased, then its
                    // subsection after a '"', as written (`\"` and `\\` read).
                    section.clear();
                    let mut sub = None::<String>;
                    let mut quoted = false;
                    while let Some(c) = chars.next() {
                        match (c, sub.as_mut()) {
                            (']', _) if !quoted => break,
                            ('"', Some(_)) => quoted = !quoted,
                            ('\\', Some(s)) if quoted => s.extend(chars.next()),
                            (c, Some(s)) if quoted => s.push(c),
                            (_, Some(_)) => {}
                            ('"' | ' ' | '\t', None) => {
                                sub = Some(String::new());
                                quoted = c == '"';
                            }
                            (c, None) => section.push(c.to_ascii_lowercase()),
                        }
                    }
                    if let Some(sub) = sub {
                        section.push('"');
                        section.push_str(&sub);
                    }
                }
                c if c.is_ascii_alphabetic() => {
                    let mut key = String::from(c);
                    while let Some(&c) = chars.peek() {
                        if c.is_ascii_alphanumeric() || c == '-' {
                            key.push(c);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    while chars.next_if(|&c| c == ' ' || c == '\t').is_some() {}
                    let value = if chars.next_if_eq(&'=').is_some() {
                        Some(value(&mut chars))
                    } else {
                        skip_line(&mut chars);
                        None
                    };
                    self.set(&section, &key, value.as_deref(), path.parent(), depth);
                }
                _ => skip_line(&mut chars),
            }
        }
    }

    fn set(
        &mut self,
        section: &str,
        key: &str,
        value: Option<&str>,
        dir: Option<&Path>,
        depth: u8,
    ) {
        let key = key.to_ascii_lowercase();
        match (section, key.as_str()) {
            ("core", "excludesfile") => {
                if let Some(v) = value {
                    self.excludes_file = Some(expand(v));
                }
            }
            ("core", "ignorecase") => self.ignore_case = parse_bool(value),
            ("extensions", "objectformat") => {
                self.sha256 = value.is_some_and(|v| v.eq_ignore_ascii_case("sha256"));
            }
            ("include", "path") if depth < 10 => {
                if let Some(v) = value {
                    self.include(v, dir, depth);
                }
            }
            (s, "path") if depth < 10 => {
                if let (Some(condition), Some(v)) = (s.strip_prefix("includeif\""), value) {
                    if self.condition_holds(condition, dir) {
                        self.include(v, dir, depth);
                    }
                }
            }
            _ => {}
        }
    }

    /// Reads the file an include names, relative to `dir` (the including file's).
    fn include(&mut self, v: &str, dir: Option<&Path>, depth: u8) {
        let p = expand(v);
        let p = match dir {
            Some(d) if p.is_relative() => d.join(p),
            _ => p,
        };
        self.read_file(&p, depth + 1);
    }

    /// Whether `includeIf`'s `condition` holds for the repository, as git tells it;
    /// `dir` is the directory of the file it is written in.
    fn condition_holds(&self, condition: &str, dir: Option<&Path>) -> bool {
        let Some(git_dir) = &self.git_dir else {
            return false;
        };
        let (pattern, icase) = if let Some(p) = condition.strip_prefix("gitdir:") {
            (p, false)
        } else if let Some(p) = condition.strip_prefix("gitdir/i:") {
            (p, true)
        } else if let Some(p) = condition.strip_prefix("onbranch:") {
            let head = std::fs::read(git_dir.join("HEAD")).unwrap_or_default();
            let Some(branch) = head.trim_ascii().strip_prefix(b"ref: refs/heads/") else {
                return false;
            };
            let mut pattern = p.to_string();
            if pattern.ends_with('/') {
                pattern.push_str("**");
            }
            return wildmatch(&pattern, &String::from_utf8_lossy(branch), false);
        } else {
            return false;
        };
        // git's pattern: '~/' the home, './' the including file's directory, a relative
        // one preceded by '**/', one ending in '/' followed by '**'.
        let mut pattern = if let Some(rest) = pattern.strip_prefix("~/") {
            match home() {
                Some(h) => format!("{}/{rest}", h.to_string_lossy().trim_end_matches('/')),
                None => return false,
            }
        } else if let Some(rest) = pattern.strip_prefix("./") {
            let Some(d) = dir.and_then(|d| std::fs::canonicalize(d).ok()) else {
                return false;
            };
            format!("{}/{rest}", d.to_string_lossy().trim_end_matches('/'))
        } else if Path::new(pattern).is_absolute() {
            pattern.to_string()
        } else {
            format!("**/{pattern}")
        };
        if pattern.ends_with('/') {
            pattern.push_str("**");
        }
        // The git directory's real path, then its absolute path.
        let real = std::fs::canonicalize(git_dir).ok();
        let absolute = std::path::absolute(git_dir).ok();
        [real, absolute]
            .into_iter()
            .flatten()
            .any(|d| wildmatch(&pattern, &d.to_string_lossy(), icase))
    }
}

/// The directory a git directory shares with the repository's other work trees (its
/// `commondir`: the main one's git directory, for a linked work tree), where the
/// configuration and `info/exclude` are.
pub(super) fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read(git_dir.join("commondir")) {
        Ok(r) => git_dir.join(crate::walk::bytes_to_path(r.trim_ascii().to_vec())),
        Err(_) => git_dir.to_path_buf(),
    }
}

/// git's wildmatch with `WM_PATHNAME`: `*` and `?` stay in a component, `**` crosses.
fn wildmatch(pattern: &str, text: &str, icase: bool) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(icase)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(text))
}

fn skip_line(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if c == '\n' {
            break;
        }
    }
}

/// A value after `=`, to the end of its line (or of its continued lines): quotes and
/// escapes read, a comment and the blanks around the value dropped.
fn value(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut out = String::new();
    let mut blanks = 0;
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '\n' => break,
            '\\' => {
                let e = match chars.next() {
                    Some('\n') => continue,
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    Some(c) => c,
                    None => break,
                };
                out.extend(std::iter::repeat_n(' ', std::mem::take(&mut blanks)));
                out.push(e);
            }
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => {
                skip_line(chars);
                break;
            }
            ' ' | '\t' | '\r' if !quoted => {
                if !out.is_empty() {
                    blanks += 1;
                }
            }
            c => {
                out.extend(std::iter::repeat_n(' ', std::mem::take(&mut blanks)));
                out.push(c);
            }
        }
    }
    out
}

/// git's booleans: a key alone is true; `true`, `yes`, `on`, and numbers other than 0.
fn parse_bool(v: Option<&str>) -> bool {
    match v.map(|v| v.trim().to_ascii_lowercase()) {
        None => true,
        Some(v) => match v.as_str() {
            "true" | "yes" | "on" => true,
            "false" | "no" | "off" | "" => false,
            n => n.parse::<i64>().is_ok_and(|n| n != 0),
        },
    }
}

/// A path setting with `~/` read as the home directory, `~user/` as the user's.
fn expand(v: &str) -> PathBuf {
    let Some(rest) = v.strip_prefix('~') else {
        return PathBuf::from(v);
    };
    let (user, rest) = rest.split_once('/').unwrap_or((rest, ""));
    let home = if user.is_empty() {
        home()
    } else {
        home_of(user)
    };
    match home {
        Some(h) if rest.is_empty() => h,
        Some(h) => h.join(rest),
        None => PathBuf::from(v),
    }
}

/// The home directory of `user`, from `/etc/passwd`.
fn home_of(user: &str) -> Option<PathBuf> {
    let passwd = std::fs::read("/etc/passwd").ok()?;
    passwd.split(|&b| b == b'\n').find_map(|line| {
        let fields: Vec<&[u8]> = line.split(|&b| b == b':').collect();
        (fields.len() >= 6 && fields[0] == user.as_bytes())
            .then(|| crate::walk::bytes_to_path(fields[5].to_vec()))
    })
}

fn home() -> Option<PathBuf> {
    #[cfg(windows)]
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    #[cfg(not(windows))]
    let home = std::env::var_os("HOME");
    home.filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// `$XDG_CONFIG_HOME/git/NAME`, or `~/.config/git/NAME`.
fn xdg_config(name: &str) -> Option<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => Some(PathBuf::from(x).join("git").join(name)),
        None => home().map(|h| h.join(".config/git").join(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> GitConfig {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("config");
        std::fs::write(&p, text).unwrap();
        let mut c = GitConfig::default();
        c.read_file(&p, 0);
        c
    }

    #[test]
    fn values_are_read_as_git_reads_them() {
        let c = parsed(
            "[user]\n\tname = x\n[Core]\n\tignoreCase\n  ExcludesFile = \"/a b/#x\" ; note\n",
        );
        assert!(c.ignore_case);
        assert_eq!(c.excludes_file, Some(PathBuf::from("/a b/#x")));
        let c = parsed("[core \"sub\"]\nexcludesfile = /no\n[core] ignorecase = false\n");
        assert!(!c.ignore_case);
        assert_eq!(c.excludes_file, None);
        let c =
            parsed("[core]\nexcludesfile = /a\\\n/b  # c\n[extensions]\nobjectformat = sha256\n");
        assert_eq!(c.excludes_file, Some(PathBuf::from("/a/b")));
        assert!(c.sha256);
        // A subsection is kept as written, its escapes read; a condition that does not
        // hold (no repository here) includes nothing.
        let tmp = tempfile::tempdir().unwrap();
        let inc = tmp.path().join("inc");
        std::fs::write(&inc, "[core]\nignorecase\n").unwrap();
        let c = parsed(&format!(
            "[includeIf \"gitdir:/x\\\"y]/\"]\npath = {}\n[core]\nexcludesfile = /e\n",
            inc.display()
        ));
        assert!(!c.ignore_case);
        assert_eq!(c.excludes_file, Some(PathBuf::from("/e")));
    }

    #[test]
    fn tilde_is_a_home() {
        assert_eq!(expand("/a/~b"), PathBuf::from("/a/~b"));
        if let Some(h) = home_of("root") {
            assert_eq!(expand("~root/x"), h.join("x"));
            assert_eq!(expand("~root"), h);
        }
        assert_eq!(
            expand("~no-such-user-here/x"),
            PathBuf::from("~no-such-user-here/x")
        );
    }
}
