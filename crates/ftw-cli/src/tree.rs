//! The tree view of `ftw du`: the largest entries, biggest first, each with its size,
//! a bar and its share of its root, fitted to the terminal. Names are escaped: a
//! control byte or a byte that is not UTF-8 never reaches the terminal raw.

use crate::output::{Closed, Output};
use crate::size::Format;
use crate::term::{Names, escape};
use ftw::usage::{DiskUsage, Totals, UsageNode};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How the tree is drawn.
pub struct View<'a, F> {
    /// Entries shown, the roots included.
    pub lines: usize,
    /// The width to fit.
    pub columns: usize,
    /// ANSI colours.
    pub color: bool,
    /// The names' colours (`LS_COLORS`, by type).
    pub names: &'a Names,
    /// The figure shown.
    pub measure: F,
    /// How sizes are written.
    pub format: Format,
}

const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Picks the `lines` largest nodes, each with its ancestors: from the roots, the
/// largest node met so far is taken next and its children become candidates.
fn select<'a, F: Fn(&Totals) -> u64>(
    usage: &'a DiskUsage,
    lines: usize,
    measure: &F,
) -> HashSet<*const UsageNode> {
    let mut heap = BinaryHeap::new();
    let mut seq = 0usize;
    let mut all: Vec<&'a UsageNode> = Vec::new();
    for r in &usage.roots {
        heap.push((measure(&r.total), Reverse(seq), all.len()));
        all.push(r);
        seq += 1;
    }
    let mut chosen = HashSet::new();
    while let Some((_, _, i)) = heap.pop() {
        if chosen.len() >= lines.max(usage.roots.len()) {
            break;
        }
        let node = all[i];
        chosen.insert(node as *const UsageNode);
        for c in &node.children {
            heap.push((measure(&c.total), Reverse(seq), all.len()));
            all.push(c);
            seq += 1;
        }
    }
    chosen
}

/// A bar of `width` cells filled to `share` (0 to 1), in eighths of a cell.
fn bar(share: f64, width: usize) -> String {
    const PARTS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (share.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let mut s: String = "█".repeat(eighths / 8);
    let mut used = eighths / 8;
    if eighths % 8 > 0 {
        s.push(PARTS[eighths % 8 - 1]);
        used += 1;
    }
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    s
}

/// The columns `s` takes on a terminal (a CJK character two, a combining mark none).
fn width_of(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Cuts `s` to at most `width` columns, ending with `…` when cut (never inside a wide
/// character: a cut one leaves a column of padding instead).
fn fit(s: &str, width: usize) -> String {
    if width_of(s) <= width {
        return s.to_string();
    }
    let room = width.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// One line to draw.
struct Line<'a> {
    node: &'a UsageNode,
    prefix: String,
    /// Its share of its root, 0 to 1.
    share: f64,
}

/// The shares of `node`'s children, given its own `share`: each child's part of the
/// node's value, or of their sum where that is more (a total past `u64::MAX` stays
/// there, and its children may add up to more): never more, together, than the node's.
fn shares<F: Fn(&Totals) -> u64>(node: &UsageNode, share: f64, measure: &F) -> Vec<f64> {
    let sum: u128 = node
        .children
        .iter()
        .map(|c| u128::from(measure(&c.total)))
        .sum();
    let whole = sum.max(u128::from(measure(&node.total)));
    node.children
        .iter()
        .map(|c| {
            if whole == 0 {
                0.0
            } else {
                share * (measure(&c.total) as f64 / whole as f64)
            }
        })
        .collect()
}

/// Prints the tree of each root.
pub fn print<F: Fn(&Totals) -> u64>(
    out: &mut Output,
    usage: &DiskUsage,
    view: &View<'_, F>,
) -> Result<(), Closed> {
    let measure = &view.measure;
    let chosen = select(usage, view.lines, measure);
    // Pre-order, children biggest first, only the chosen ones.
    let mut lines: Vec<Line<'_>> = Vec::new();
    for root in &usage.roots {
        let whole = if measure(&root.total) == 0 { 0.0 } else { 1.0 };
        // (node, its share, its prefix, its prefix for its children)
        let mut stack: Vec<(&UsageNode, f64, String, String)> =
            vec![(root, whole, String::new(), String::new())];
        while let Some((node, share, prefix, child_prefix)) = stack.pop() {
            lines.push(Line {
                node,
                prefix,
                share,
            });
            let mut kids: Vec<(&UsageNode, f64)> = node
                .children
                .iter()
                .zip(shares(node, share, measure))
                .filter(|(c, _)| chosen.contains(&(*c as *const UsageNode)))
                .collect();
            kids.sort_by(|(a, _), (b, _)| {
                measure(&b.total)
                    .cmp(&measure(&a.total))
                    .then_with(|| a.name.cmp(&b.name))
            });
            let n = kids.len();
            for (i, (k, share)) in kids.into_iter().enumerate().rev() {
                let last = i + 1 == n;
                let p = format!("{child_prefix}{}", if last { "└─ " } else { "├─ " });
                let cp = format!("{child_prefix}{}", if last { "   " } else { "│  " });
                stack.push((k, share, p, cp));
            }
        }
    }
    let sizes: Vec<String> = lines
        .iter()
        .map(|l| view.format.show(measure(&l.node.total)))
        .collect();
    let size_w = sizes.iter().map(|s| width_of(s)).max().unwrap_or(4).max(4);
    let columns = view.columns.max(20);
    // size, space, name, space, │bar│, space, percent
    let bar_w = (columns / 5).clamp(8, 40);
    let mut name_w = columns.saturating_sub(size_w + 1 + 1 + bar_w + 2 + 1 + 4 + 1);
    let show_bar = name_w >= 12;
    if !show_bar {
        name_w = columns.saturating_sub(size_w + 1 + 1 + 4 + 1).max(8);
    }
    // No wider than the longest name needs: on a wide terminal the bars stay by the
    // names.
    let longest = lines
        .iter()
        .map(|l| width_of(&l.prefix) + width_of(&escape(&l.node.name)))
        .max()
        .unwrap_or(0);
    name_w = name_w.min(longest.max(20));
    for (line, size) in lines.iter().zip(&sizes) {
        let share = line.share;
        let name = escape(&line.node.name);
        let label = fit(&name, name_w.saturating_sub(width_of(&line.prefix)).max(4));
        let pad = name_w.saturating_sub(width_of(&line.prefix) + width_of(&label));
        let mut s = String::with_capacity(columns * 3);
        s.push_str(&format!("{size:>size_w$} "));
        if view.color {
            s.push_str(DIM);
            s.push_str(&line.prefix);
            s.push_str(RESET);
            let mut painted = Vec::new();
            view.names
                .paint(&label, line.node.file_type, &line.node.name, &mut painted);
            s.push_str(&String::from_utf8_lossy(&painted));
        } else {
            s.push_str(&line.prefix);
            s.push_str(&label);
        }
        s.extend(std::iter::repeat_n(' ', pad));
        if show_bar {
            s.push_str(" │");
            if view.color {
                s.push_str(GREEN);
            }
            s.push_str(&bar(share, bar_w));
            if view.color {
                s.push_str(RESET);
            }
            s.push('│');
        }
        s.push_str(&format!(" {:>3}%\n", (share * 100.0).round() as u64));
        out.buf().extend_from_slice(s.as_bytes());
        out.end_record()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_are_fitted_by_columns() {
        assert_eq!(fit("漢字漢字", 8), "漢字漢字");
        assert_eq!(fit("漢字漢字", 7), "漢字漢…");
        // A wide character that would pass the edge is left out whole.
        assert_eq!(fit("漢字漢字", 6), "漢字…");
        assert_eq!(fit("ab漢字", 4), "ab…");
        assert_eq!(width_of("漢字x"), 5);
    }

    #[test]
    fn bars_fill_in_eighths() {
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(1.0, 2), "██");
        assert_eq!(bar(0.0, 3), "   ");
        assert_eq!(bar(0.5, 1), "▌");
        assert_eq!(bar(1.0 / 16.0, 1), "▏");
    }
}
