//! Forgiving parsing: find's spellings (`-maxdepth 1`, `-name x`) answered with ftw's,
//! and a negative number given to an option told plainly, both as usage errors (exit
//! status 2), where clap would suggest `-- -1`.

use crate::term::shell_word;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

/// A usage error of `ftw COMMAND`: the message, then where to read more.
/// The words of the command line that it quotes are shown with their control and
/// bidirectional characters escaped (`\x1b`), never raw: the message is one line, and
/// moves nothing on the screen. Its backslashes stay as they are (a suggested regex).
fn usage_error(command: &str, message: &str) -> ExitCode {
    let mut shown = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() || crate::term::unsafe_format_char(c) {
            let mut bytes = [0; 4];
            shown.push_str(&crate::term::escape(c.encode_utf8(&mut bytes).as_bytes()));
        } else {
            shown.push(c);
        }
    }
    let _ = write!(
        std::io::stderr(),
        "ftw {command}: {shown}\nTry 'ftw {command} --help' for more information.\n"
    );
    ExitCode::from(2)
}

/// The subcommand named on the command line and where its arguments start.
fn subcommand<'a>(command: &clap::Command, args: &'a [OsString]) -> Option<(&'a str, usize)> {
    let i = args
        .iter()
        .skip(1)
        .position(|a| !a.as_encoded_bytes().starts_with(b"-"))?
        + 1;
    let name = args[i].to_str()?;
    command.find_subcommand(name)?;
    Some((name, i + 1))
}

/// ftw's glob for find's `-path` pattern, whose `*` crosses '/' where ftw's stays in a
/// name: a component `*` becomes `**`, one like `*.c` becomes `**/*.c`.
fn path_glob(pattern: Option<&str>) -> String {
    let Some(pattern) = pattern else {
        return "X".into();
    };
    let parts: Vec<String> = pattern
        .split('/')
        .map(|c| match c {
            "*" => "**".to_string(),
            c if c.starts_with('*') && !c.starts_with("**") => format!("**/{c}"),
            c => c.to_string(),
        })
        .collect();
    shell_word(&parts.join("/"))
}

/// ftw's spelling of find's `-size N` (find: 512-byte blocks unless c, w, k, M or G).
fn size(n: &str) -> String {
    let (sign, rest) = match n.strip_prefix(['+', '-']) {
        Some(r) => (&n[..1], r),
        None => ("", n),
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let unit = &rest[digits.len()..];
    let value: u64 = digits.parse().unwrap_or(0);
    match unit {
        "c" => format!("{sign}{value}"),
        "w" => format!("{sign}{}", value * 2),
        "k" => format!("{sign}{value}ki"),
        "M" => format!("{sign}{value}mi"),
        "G" => format!("{sign}{value}gi"),
        _ => format!("{sign}{}", value * 512),
    }
}

/// ftw's spelling of find's `-mtime N` (days) or `-mmin N` (minutes).
fn time(n: &str, unit: &str) -> String {
    match (n.strip_prefix('+'), n.strip_prefix('-')) {
        (Some(n), _) => format!("--changed-before {n}{unit}"),
        (_, Some(n)) => format!("--changed-within {n}{unit}"),
        _ => {
            let more = n.parse::<u64>().map_or(0, |n| n + 1);
            format!("--changed-before {n}{unit} --changed-within {more}{unit}")
        }
    }
}

/// What ftw says for find's option `word` in `command`, with its value if it takes one
/// (`None` for the value when it is missing). `None` when ftw has no answer for it.
fn answer(command: &str, word: &str, value: Option<&str>) -> Option<(bool, String)> {
    let v = || value.map_or("X".to_string(), shell_word);
    let with_value = match (command, word) {
        ("find" | "du", "-maxdepth") => format!("--max-depth {}", value.unwrap_or("N")),
        ("find", "-mindepth") => format!("--min-depth {}", value.unwrap_or("N")),
        ("find", "-name") => format!("-g {}", v()),
        ("find", "-iname") => format!("-i -g {}", v()),
        ("find", "-path" | "-wholename") => format!("-p -g {}", path_glob(value)),
        ("find", "-ipath" | "-iwholename") => format!("-i -p -g {}", path_glob(value)),
        ("find", "-regex") => format!(
            "-p -n {}",
            shell_word(&format!("^{}$", value.unwrap_or("X")))
        ),
        ("find", "-iregex") => format!(
            "-i -p -n {}",
            shell_word(&format!("^{}$", value.unwrap_or("X")))
        ),
        ("find", "-type") => format!("-t {}", value.unwrap_or("f")),
        ("find", "-size") => format!("-S {}", size(value.unwrap_or("+1k"))),
        ("find", "-mtime") => time(value.unwrap_or("-1"), "d"),
        ("find", "-mmin") => time(value.unwrap_or("-10"), "min"),
        ("find", "-printf") => format!("--format {}", v()),
        _ => String::new(),
    };
    if !with_value.is_empty() {
        return Some((true, with_value));
    }
    let alone = match (command, word) {
        ("find", "-print0") => "-0",
        ("find" | "rm", "-xdev" | "-mount") => "--one-file-system",
        ("du", "-xdev" | "-mount") => "-x",
        ("find", "-follow") => "-L",
        ("find", "-empty") => "-t e",
        ("find", "-executable") => "-t x",
        ("find", "-ls") => "-l",
        ("find", "-prune") => "--prune",
        ("find", "-delete") => "-X rm -- (or 'ftw rm PATH' for whole trees)",
        _ => return None,
    };
    Some((false, alone.to_string()))
}

/// The words of find's expression language (GNU find 4.9's manual: its operators,
/// options, tests and actions), besides those [`answer`] gives an ftw spelling for.
/// Each is refused wherever it stands outside a value, so that none is read as a
/// cluster of ftw's short options (`-newer` is `-n ewer`, `-xtype` `-x type`) or as a
/// path. With each, what ftw offers nearest to it, if anything.
const FIND_WORDS: &[(&str, &str)] = &[
    // Operators.
    ("!", OPERATORS),
    ("(", OPERATORS),
    (")", OPERATORS),
    (",", OPERATORS),
    ("-not", OPERATORS),
    ("-a", OPERATORS),
    ("-and", OPERATORS),
    ("-o", OPERATORS),
    ("-or", OPERATORS),
    // Options.
    ("-daystart", ""),
    ("-depth", "ftw find prints a directory before its contents"),
    ("-files0-from", ""),
    ("-ignore_readdir_race", LEAVE_OUT_RACE),
    ("-noignore_readdir_race", LEAVE_OUT_RACE),
    (
        "-noleaf",
        "leave it out: ftw never counts on a directory's link count",
    ),
    ("-regextype", "-n takes Rust regex syntax only"),
    ("-warn", ""),
    ("-nowarn", ""),
    ("-help", "did you mean --help?"),
    // Options before the paths.
    (
        "-H",
        "ftw find follows a root that is a link always, and -L follows every link",
    ),
    (
        "-P",
        "leave it out: below its roots, ftw find follows no link unless -L is given",
    ),
    ("-D", ""),
    ("-version", "did you mean --version?"),
    // Tests.
    ("-amin", ""),
    ("-anewer", ""),
    ("-atime", ""),
    ("-cmin", ""),
    ("-cnewer", ""),
    ("-context", ""),
    ("-ctime", ""),
    ("-false", ""),
    ("-fstype", ""),
    ("-gid", OWNER),
    ("-group", OWNER),
    ("-ilname", ""),
    ("-inum", ""),
    ("-links", ""),
    ("-lname", ""),
    ("-newer", NEWER),
    ("-nogroup", OWNER),
    ("-nouser", OWNER),
    ("-perm", "-t x selects executable files"),
    ("-readable", ""),
    ("-samefile", ""),
    ("-true", "leave it out: ftw find prints each path"),
    ("-uid", OWNER),
    ("-used", ""),
    ("-user", OWNER),
    ("-writable", ""),
    ("-xtype", "-L -t TYPE types what links lead to"),
    // Actions.
    ("-fls", "-l > FILE"),
    ("-fprint", "> FILE"),
    ("-fprint0", "-0 > FILE"),
    ("-fprintf", "--format TEMPLATE > FILE"),
    ("-quit", "--max-results 1"),
];

/// The hint for find's operators.
const OPERATORS: &str = "ftw find has no operators: several -n, -g, -F, -e or -t select any \
                         of them, different filters all of them; -E GLOB leaves entries out";
/// The hint for find's tests of owners.
const OWNER: &str = "--format '%u %g %p\\n' shows owners";
/// The hint for `-newer` and its kin.
const NEWER: &str = "--changed-within WHEN and --changed-before WHEN take a duration or a date";
/// The hint for the readdir-race options.
const LEAVE_OUT_RACE: &str =
    "leave it out: an entry gone before ftw reaches it is reported, and the walk goes on";

/// What ftw says of `word` if it is a word of find's language that [`answer`] has no
/// spelling for: the nearest ftw offers (empty when there is nothing near).
fn find_word(word: &str) -> Option<&'static str> {
    if let Some(&(_, hint)) = FIND_WORDS.iter().find(|(w, _)| *w == word) {
        return Some(hint);
    }
    // -O0 to -O3, find's levels of optimisation.
    if let Some(level) = word.strip_prefix("-O") {
        if !level.is_empty() && level.bytes().all(|b| b.is_ascii_digit()) {
            return Some("leave it out: ftw find has no levels of optimisation");
        }
    }
    // -newerXY: X one of a, B, c, m; Y one of those or t.
    let xy = word.strip_prefix("-newer")?.as_bytes();
    (xy.len() == 2 && b"aBcm".contains(&xy[0]) && b"aBcmt".contains(&xy[1])).then_some(NEWER)
}

/// The refusal of find's `word` in `command`, with `hint` if there is one.
fn refuse_find_word(command: &str, word: &str, hint: &str) -> ExitCode {
    let path = if word.starts_with('-') {
        format!("./{word}")
    } else {
        format!("./{}", shell_word(word))
    };
    let near = if hint.is_empty() {
        "ftw find has no equivalent".to_string()
    } else {
        hint.to_string()
    };
    usage_error(
        command,
        &format!(
            "'{word}' is find's word, not ftw's: {near} \
             (a path so named: {path}, or after --)"
        ),
    )
}

/// The option of `sub` that the long option `--name` (without `=`) names.
fn long_option<'a>(sub: &'a clap::Command, name: &str) -> Option<&'a clap::Arg> {
    sub.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
    })
}

/// What an option word of `sub` takes after it.
enum Takes {
    /// Nothing: a flag, a cluster of flags, a value glued to it (`-d2`,
    /// `--max-depth=2`), or not an option.
    Nothing,
    /// The next word, as its value (`-d`, `-Ld`, `--max-depth`).
    Next,
    /// The words up to `;` (or all the rest), as a command: `-x`, `-X`, and a cluster
    /// ending with one (`-Lx`).
    Command,
    /// A value glued to this option, in a cluster (`-xtype` is `-x type`).
    Glued(char),
}

/// What `word` takes after it as an option of `sub`.
fn takes(sub: &clap::Command, word: &str) -> Takes {
    let takes_values = |a: &clap::Arg| a.get_action().takes_values();
    let command = |a: &clap::Arg| a.get_num_args().is_some_and(|n| n.max_values() > 1);
    if let Some(long) = word.strip_prefix("--") {
        return match long_option(sub, long) {
            _ if long.contains('=') => Takes::Nothing,
            Some(a) if command(a) => Takes::Command,
            Some(a) if takes_values(a) => Takes::Next,
            _ => Takes::Nothing,
        };
    }
    let Some(shorts) = word.strip_prefix('-') else {
        return Takes::Nothing;
    };
    for (i, c) in shorts.char_indices() {
        let Some(arg) = sub.get_arguments().find(|a| a.get_short() == Some(c)) else {
            return Takes::Nothing;
        };
        if takes_values(arg) {
            return match (shorts.len() == i + c.len_utf8(), command(arg)) {
                (true, true) => Takes::Command,
                (true, false) => Takes::Next,
                (false, _) => Takes::Glued(c),
            };
        }
    }
    Takes::Nothing
}

/// Answers find's spellings of options with ftw's (`-maxdepth 1`: "did you mean
/// --max-depth 1?"), and refuses every other word of find's expression language
/// (`-newer`, `-not`, `!`), as a usage error; `None` when there are none. The values of
/// ftw's options (`-g '-*'`), words after `--`, and the command of `-x`/`-X` (up to its
/// `;`) are not looked at.
pub fn find_style(command: &clap::Command, args: &[OsString]) -> Option<ExitCode> {
    let (name, start) = subcommand(command, args)?;
    let sub = command.find_subcommand(name)?;
    let find = name == "find";
    let mut i = start;
    while i < args.len() {
        // find's words are ASCII: a word that is not UTF-8 is looked at all the same,
        // its other bytes as U+FFFD (so '-xtype\xff' is refused too).
        let word = args[i].to_string_lossy();
        let word = word.as_ref();
        if word == "--" {
            return None;
        }
        // find's word with a value glued by '=' ('-name=x', '-newer=stamp'): find
        // refuses it, and ftw would read it as a cluster ('-n ame=x', '-e xec=rm').
        if let Some((head, value)) = word
            .split_once('=')
            .filter(|(h, _)| find && h.len() > 1 && h.starts_with('-') && !h.starts_with("--"))
        {
            let spelling = answer(name, head, Some(value))
                .map(|(_, ftw)| ftw)
                .or_else(|| {
                    matches!(head, "-exec" | "-execdir" | "-ok" | "-okdir")
                        .then(|| "-x CMD ';' or -X CMD".to_string())
                });
            if let Some(ftw) = spelling {
                return Some(usage_error(
                    name,
                    &format!("'{word}' is find's spelling, with '=': did you mean {ftw}?"),
                ));
            }
            if let Some(hint) = find_word(head) {
                return Some(refuse_find_word(name, word, hint));
            }
            if head == "-print" {
                return Some(refuse_find_word(
                    name,
                    word,
                    "leave it out: ftw find prints each path",
                ));
            }
        }
        if find && matches!(word, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let words: Vec<String> = args[i + 1..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .take_while(|a| a != ";" && a != "+")
                .collect();
            let end = args.get(i + 1 + words.len()).and_then(|a| a.to_str());
            let cmd: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
            let cmd = if cmd.is_empty() {
                "CMD".to_string()
            } else {
                cmd.join(" ")
            };
            let ftw = if end == Some("+") {
                format!("-X {cmd}")
            } else {
                format!("-x {cmd} ';'")
            };
            return Some(usage_error(
                name,
                &format!("'{word}' is find's spelling: did you mean {ftw}?"),
            ));
        }
        if find && word == "-print" {
            return Some(usage_error(
                name,
                "'-print' is find's spelling: leave it out: ftw find prints each path",
            ));
        }
        if let Some((takes_value, ftw)) = answer(name, word, None) {
            let value = args.get(i + 1).and_then(|a| a.to_str());
            let ftw = if takes_value {
                answer(name, word, value).map_or(ftw, |(_, s)| s)
            } else {
                ftw
            };
            return Some(usage_error(
                name,
                &format!("'{word}' is find's spelling: did you mean {ftw}?"),
            ));
        }
        if find {
            if let Some(hint) = find_word(word) {
                return Some(refuse_find_word(name, word, hint));
            }
            if let Some(option) = ["--exec=", "--exec-batch="]
                .into_iter()
                .find(|o| word.starts_with(o))
            {
                return Some(glued_command(word, &option[..option.len() - 1]));
            }
        }
        match takes(sub, word) {
            Takes::Nothing => i += 1,
            Takes::Next => i += 2,
            Takes::Command => {
                // The command's words, up to ';'. In find's, '{} +' ends the command
                // (-exec CMD {} +): here it would be two more arguments, and the words
                // after it the command's too ('-X rm {} + -not -name x' would run
                // 'rm PATHS + -not -name x'), so it is refused.
                let option = word;
                i += 1;
                while i < args.len() && args[i] != ";" {
                    if find && args[i] == "+" && args[i - 1] == "{}" {
                        return Some(usage_error(
                            name,
                            &format!(
                                "'{{}} +' ends find's -exec; {option} takes CMD up to ';' \
                                 (or to the end): leave out '+' ('-X CMD' runs CMD with \
                                 all the paths)"
                            ),
                        ));
                    }
                    i += 1;
                }
                i += 1;
            }
            Takes::Glued(c @ ('x' | 'X')) if find => {
                return Some(glued_command(word, &format!("-{c}")));
            }
            // Elsewhere, a word of find's would be an option with its value glued
            // ('ftw du -or' would write to a file 'r').
            Takes::Glued(c) => match find_word(word) {
                Some(_) => {
                    let hint = format!("-{c} takes a value: write it apart ('-{c} VALUE')");
                    return Some(refuse_find_word(name, word, &hint));
                }
                None => i += 1,
            },
        }
    }
    None
}

/// The refusal of a command glued to `option` in `word` (`-xtype`, `--exec=rm`).
fn glued_command(word: &str, option: &str) -> ExitCode {
    usage_error(
        "find",
        &format!(
            "'{word}': {option} takes its command as words of their own \
             ('{option} CMD ARG...'), never glued to it"
        ),
    )
}

/// Whether `word` is a negative number (`-1`, `-20`).
fn negative(word: &str) -> bool {
    word.len() > 1 && word[1..].bytes().all(|b| b.is_ascii_digit()) && word.starts_with('-')
}

/// Whether `word` is an option of `sub` whose value is the next word (`-d`, `-Ld`,
/// `--max-depth`).
fn takes_next(sub: &clap::Command, word: &str) -> bool {
    matches!(takes(sub, word), Takes::Next)
}

/// A parse error: a negative number given to an option is told plainly; anything else
/// as clap tells it.
pub fn clap_error(command: &clap::Command, args: &[OsString], e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        if let Some((name, start)) = subcommand(command, args) {
            let sub = command.find_subcommand(name).expect("a subcommand named");
            let words: Vec<&str> = args[start..]
                .iter()
                .map(|a| a.to_str().unwrap_or(""))
                .take_while(|&a| a != "--")
                .collect();
            if name == "du" {
                if let Some(code) = crate::du::ambiguous(sub, &words) {
                    return code;
                }
            }
            // '--max-depth=-1'
            for word in &words {
                if let Some((option, value)) = word.split_once('=') {
                    if option.starts_with("--") && negative(value) && takes_next(sub, option) {
                        return usage_error(
                            name,
                            &format!(
                                "{word}: a negative number; {option} takes a number of 0 or more"
                            ),
                        );
                    }
                }
            }
            for pair in words.windows(2) {
                if negative(pair[1]) && takes_next(sub, pair[0]) {
                    return usage_error(
                        name,
                        &format!(
                            "{} {}: a negative number; {} takes a number of 0 or more",
                            pair[0], pair[1], pair[0]
                        ),
                    );
                }
            }
        }
    }
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        // Written as the rest of the output is, a closed or failing standard output
        // reported (clap would say nothing and exit 0).
        use std::io::IsTerminal;
        let styled = e.render();
        let mut text = if crate::term::When::Auto.colors(std::io::stdout().is_terminal()) {
            styled.ansi().to_string()
        } else {
            styled.to_string()
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        return match crate::output::Stdout.write_all(text.as_bytes()) {
            Err(e) if crate::output::report_error(&e) => ExitCode::from(1),
            _ => ExitCode::SUCCESS,
        };
    }
    e.exit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_values_in_ftw_spelling() {
        assert_eq!(size("+10k"), "+10ki");
        assert_eq!(size("-1M"), "-1mi");
        assert_eq!(size("100c"), "100");
        assert_eq!(size("3"), "1536");
        assert_eq!(time("-2", "d"), "--changed-within 2d");
        assert_eq!(time("+7", "d"), "--changed-before 7d");
        assert_eq!(time("3", "d"), "--changed-before 3d --changed-within 4d");
        assert_eq!(path_glob(Some("*/src/*.c")), "'**/src/**/*.c'");
        assert_eq!(path_glob(Some("./a/b")), "./a/b");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert!(negative("-1") && negative("-20") && !negative("-") && !negative("-x1"));
    }
}
