//! Forgiving parsing: find's spellings (`-maxdepth 1`, `-name x`) answered with ftw's,
//! and a negative number given to an option told plainly, both as usage errors (exit
//! status 2), where clap would suggest `-- -1`.

use crate::term::shell_word;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

/// A usage error of `ftw COMMAND`: the message, then where to read more.
fn usage_error(command: &str, message: &str) -> ExitCode {
    let _ = write!(
        std::io::stderr(),
        "ftw {command}: {message}\nTry 'ftw {command} --help' for more information.\n"
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

/// Answers find's spellings of options with ftw's (`-maxdepth 1`: "did you mean
/// --max-depth 1?"), as a usage error; `None` when there are none. Words after `--`,
/// and the command of `-x`/`-X` (up to its `;`), are not looked at.
pub fn find_style(command: &clap::Command, args: &[OsString]) -> Option<ExitCode> {
    let (name, start) = subcommand(command, args)?;
    let mut i = start;
    while i < args.len() {
        let Some(word) = args[i].to_str() else {
            i += 1;
            continue;
        };
        if word == "--" {
            return None;
        }
        if name == "find" && matches!(word, "-x" | "-X" | "--exec" | "--exec-batch") {
            // The command's words, up to ';'.
            i += 1;
            while i < args.len() && args[i] != ";" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if name == "find" && matches!(word, "-exec" | "-execdir" | "-ok" | "-okdir") {
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
        if name == "find" && word == "-print" {
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
        i += 1;
    }
    None
}

/// Whether `word` is a negative number (`-1`, `-20`).
fn negative(word: &str) -> bool {
    word.len() > 1 && word[1..].bytes().all(|b| b.is_ascii_digit()) && word.starts_with('-')
}

/// The option of `sub` that `word` names (`-d`, `--max-depth`), if it takes a value.
fn value_option<'a>(sub: &'a clap::Command, word: &str) -> Option<&'a clap::Arg> {
    let arg = if let Some(long) = word.strip_prefix("--") {
        sub.get_arguments().find(|a| {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|v| v.contains(&long))
        })
    } else {
        let mut chars = word.strip_prefix('-')?.chars();
        let short = chars.next_back()?;
        sub.get_arguments().find(|a| a.get_short() == Some(short))
    }?;
    arg.get_action().takes_values().then_some(arg)
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
            // '--max-depth=-1'
            for word in &words {
                if let Some((option, value)) = word.split_once('=') {
                    if option.starts_with("--")
                        && negative(value)
                        && value_option(sub, option).is_some()
                    {
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
                if negative(pair[1]) && value_option(sub, pair[0]).is_some() {
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
