//! The kept tree in ncdu's JSON export format (version 1.2), which `ncdu -f FILE` and
//! `gdu -f FILE` browse: `[1,2,{metadata},[{root}, children...]]`, a directory being
//! an array whose first element describes it, a file an object.

use ftw::sys::FileType;
use ftw::usage::{DiskUsage, UsageNode};
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes the first root of `usage` (the format has one) to `file`, `-` meaning
/// standard output. A directory cut below the kept depth carries, as its own size, what
/// its uncounted contents add, so that the sizes add up to the totals.
pub fn write(file: &Path, usage: &DiskUsage) -> io::Result<()> {
    let Some(root) = usage.roots.first() else {
        return Err(io::Error::other("nothing to export"));
    };
    if usage.roots.len() > 1 {
        crate::msg::warn("the export holds one tree: only the first PATH is written to it");
    }
    let out: Box<dyn Write> = if file.as_os_str() == "-" {
        Box::new(crate::output::Stdout)
    } else {
        Box::new(std::fs::File::create(file)?)
    };
    let mut w = BufWriter::with_capacity(128 << 10, out);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    write!(
        w,
        "[1,2,{{\"progname\":\"ftw\",\"progver\":\"{}\",\"timestamp\":{now}}}",
        env!("CARGO_PKG_VERSION")
    )?;
    let name = root_name(&root.name);
    // (node, the next child to write, the device of its parent)
    let mut stack: Vec<(&UsageNode, usize)> = Vec::new();
    w.write_all(b",")?;
    open_node(&mut w, root, &name, None)?;
    if root.is_dir() {
        stack.push((root, 0));
    }
    while let Some((node, next)) = stack.last_mut() {
        let node: &UsageNode = node;
        match node.children.get(*next) {
            Some(child) => {
                *next += 1;
                w.write_all(b",")?;
                open_node(&mut w, child, &child.name, Some(node.dev))?;
                if child.is_dir() {
                    stack.push((child, 0));
                }
            }
            None => {
                w.write_all(b"]")?;
                stack.pop();
            }
        }
    }
    w.write_all(b"]\n")?;
    w.flush()
}

/// The root's name as ncdu writes it: its absolute path.
fn root_name(given: &[u8]) -> Vec<u8> {
    let path = crate::os::os(given);
    match std::fs::canonicalize(Path::new(&path)) {
        Ok(p) => crate::os::bytes(p.as_os_str()).into_owned(),
        Err(_) => given.to_vec(),
    }
}

/// Writes a file's object, or opens a directory's array with its own object.
fn open_node(
    w: &mut impl Write,
    node: &UsageNode,
    name: &[u8],
    parent_dev: Option<u64>,
) -> io::Result<()> {
    let (asize, dsize) = if node.is_dir() {
        // What the kept children do not account for: the directory's own blocks, and
        // everything below it that was counted but not kept. A further name of a file
        // counted elsewhere accounts for nothing here.
        let counted = node.children.iter().filter(|c| c.counted);
        let (a, d) = counted.fold((0u64, 0u64), |(a, d), c| {
            (
                a.saturating_add(c.total.apparent),
                d.saturating_add(c.total.bytes),
            )
        });
        (
            node.total.apparent.saturating_sub(a),
            node.total.bytes.saturating_sub(d),
        )
    } else {
        (node.total.apparent, node.total.bytes)
    };
    if node.is_dir() {
        w.write_all(b"[")?;
    }
    w.write_all(b"{\"name\":")?;
    json_string(w, name)?;
    write!(w, ",\"asize\":{asize},\"dsize\":{dsize}")?;
    if parent_dev != Some(node.dev) {
        write!(w, ",\"dev\":{}", node.dev)?;
    }
    write!(w, ",\"ino\":{}", node.ino)?;
    if !node.is_dir() && node.nlink > 1 {
        write!(w, ",\"hlnkc\":true,\"nlink\":{}", node.nlink)?;
    }
    if !matches!(node.file_type, FileType::File | FileType::Dir) {
        w.write_all(b",\"notreg\":true")?;
    }
    w.write_all(b"}")
}

/// A name as a JSON string: UTF-8 as it is, `"` `\` and control characters escaped,
/// and each byte that is not UTF-8 as `\u00XX` (valid JSON whatever the name).
pub fn json_string(w: &mut impl Write, name: &[u8]) -> io::Result<()> {
    w.write_all(b"\"")?;
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => w.write_all(b"\\\"")?,
                '\\' => w.write_all(b"\\\\")?,
                '\n' => w.write_all(b"\\n")?,
                '\t' => w.write_all(b"\\t")?,
                '\r' => w.write_all(b"\\r")?,
                // The other controls (C0, DEL, C1) and the line separators and
                // bidirectional controls as \uXXXX: the same string once read, and
                // nothing that a terminal would obey (`ftw du -o -` on one).
                c if c.is_control() || crate::term::unsafe_format_char(c) => {
                    write!(w, "\\u{:04x}", c as u32)?
                }
                c => {
                    let mut buf = [0u8; 4];
                    w.write_all(c.encode_utf8(&mut buf).as_bytes())?;
                }
            }
        }
        for b in chunk.invalid() {
            write!(w, "\\u{:04x}", b)?;
        }
    }
    w.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_valid_json() {
        let mut v = Vec::new();
        super::json_string(&mut v, b"a\"b\\c\nd\xffe\x01\xc3\xa9").unwrap();
        assert_eq!(v, b"\"a\\\"b\\\\c\\nd\\u00ffe\\u0001\xc3\xa9\"");
    }
}
