//! What the session keeps of a terminal, read from the `pty` module: its last working
//! directory, what it ran, and the end of its output as plain text. Also the one rule by
//! which the sidecar finds the terminals an opaque workspace document refers to.

use serde_json::Value;

use super::{
    TerminalRecord, MAX_RECORDS, MAX_TEXT_BYTES, SCROLLBACK_TAIL_BYTES, SCROLLBACK_TAIL_LINES,
    SCROLLBACK_TAIL_RAW_BYTES,
};
use crate::pty::{Terminal, TerminalId};

/// The terminals `doc` refers to, in document order, each once, at most [`MAX_RECORDS`]:
/// every string value of a member named `terminalId`, at any depth, that is a terminal id
/// (protocol §4 `PUT /api/workspace`). Everything else in the document is opaque, so the
/// rule holds across the document's versions.
pub(super) fn referenced_ids(doc: &Value) -> Vec<TerminalId> {
    fn walk(v: &Value, out: &mut Vec<TerminalId>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "terminalId" {
                        if let Some(id) = v.as_str().and_then(|s| s.parse::<TerminalId>().ok()) {
                            if !out.contains(&id) && out.len() < MAX_RECORDS {
                                out.push(id);
                            }
                        }
                    }
                    walk(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, &mut out);
    out
}

/// A record of `term` now. What a dead terminal can no longer tell (its working directory)
/// comes from `previous`, the record last taken of it, else from where it started. The text
/// of its output is read again only when output came since `previous` was taken (at stream
/// offset `previous_end`): reading it is the costly part of a save.
pub(super) fn record(term: &Terminal, previous: Option<(&TerminalRecord, u64)>) -> (TerminalRecord, u64) {
    let end = term.output_bytes();
    let info = term.info();
    let cwd = info.cwd_now.or_else(|| previous.map(|(p, _)| p.cwd.clone())).unwrap_or(info.cwd);
    let running = info.shell.running.and_then(|r| r.command);
    let scrollback = match previous {
        Some((p, at)) if at == end => p.scrollback.clone(),
        _ => tail(&term.output_tail_text(SCROLLBACK_TAIL_RAW_BYTES, SCROLLBACK_TAIL_LINES)),
    };
    let record = TerminalRecord {
        cwd: cut(&cwd, MAX_TEXT_BYTES).to_string(),
        command: first_args(&info.command),
        running: running.map(|r| cut(&r, MAX_TEXT_BYTES).to_string()),
        scrollback,
    };
    (record, end)
}

/// The last lines of `lines` joined with `\n`: at most [`SCROLLBACK_TAIL_LINES`] lines and
/// [`SCROLLBACK_TAIL_BYTES`] bytes, whole lines only (so it starts at a line, and so at a
/// character boundary; a screen's text holds no escape sequences). Trailing empty
/// lines are dropped; a single line longer than the bound keeps its end.
pub(super) fn tail(lines: &[String]) -> String {
    let end = lines.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
    let lines = &lines[..end];
    let mut start = end;
    let mut bytes = 0usize;
    while start > 0 && end - start < SCROLLBACK_TAIL_LINES {
        let add = lines[start - 1].len() + usize::from(start < end);
        if bytes + add > SCROLLBACK_TAIL_BYTES {
            break;
        }
        bytes += add;
        start -= 1;
    }
    if start == end && end > 0 {
        // One line over the bound on its own: its end, cut at a character boundary.
        let last = &lines[end - 1];
        let mut from = last.len() - SCROLLBACK_TAIL_BYTES.min(last.len());
        while !last.is_char_boundary(from) {
            from += 1;
        }
        return last[from..].to_string();
    }
    lines[start..].join("\n")
}

/// The first arguments of `argv` that fit in [`MAX_TEXT_BYTES`] together (the first one cut
/// to fit when it alone does not).
fn first_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut left = MAX_TEXT_BYTES;
    for a in argv {
        if a.len() > left {
            if out.is_empty() {
                out.push(cut(a, left).to_string());
            }
            break;
        }
        left -= a.len();
        out.push(a.clone());
    }
    out
}

/// `s` cut to at most `max` bytes at a character boundary.
pub(super) fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_found_at_any_depth_once_in_order() {
        let v1 = json!({"version":1,"panes":{"p1":{"terminalId":"t3"},"p2":{"kind":"browser","url":"http://x/"},"p3":{"terminalId":"t1","kept":["t9"]}}});
        assert_eq!(referenced_ids(&v1), ["t3".parse().unwrap(), "t1".parse::<TerminalId>().unwrap()]);
        let v2 = json!({"version":2,"workspaces":[{"panes":{"p1":{"terminalId":"t2"}}},{"panes":{"p7":{"terminalId":"t2"},"p8":{"terminalId":"t5"}}}]});
        assert_eq!(referenced_ids(&v2), ["t2".parse().unwrap(), "t5".parse::<TerminalId>().unwrap()]);
        let odd = json!({"terminalId":"x1","a":[{"terminalId":7},{"terminalId":"t01"}],"b":"t4"});
        assert!(referenced_ids(&odd).is_empty());
        let many: Vec<Value> = (1..=MAX_RECORDS as u64 + 10).map(|n| json!({"terminalId": format!("t{n}")})).collect();
        assert_eq!(referenced_ids(&Value::Array(many)).len(), MAX_RECORDS);
    }

    #[test]
    fn tail_keeps_whole_last_lines_within_both_bounds() {
        let lines: Vec<String> = (0..3000).map(|i| format!("line {i}")).chain(["".into(), "".into()]).collect();
        let t = tail(&lines);
        assert_eq!(t.lines().count(), SCROLLBACK_TAIL_LINES);
        assert!(t.starts_with("line 2000\n") && t.ends_with("line 2999"), "{}", &t[..20]);
        let wide: Vec<String> = (0..200).map(|i| format!("{i:04}{}", "é".repeat(300))).collect();
        let t = tail(&wide);
        assert!(t.len() <= SCROLLBACK_TAIL_BYTES);
        assert!(t.ends_with(&wide[199]) && t.lines().next().unwrap().len() == wide[0].len());
        let huge = vec!["€".repeat(SCROLLBACK_TAIL_BYTES)];
        let t = tail(&huge);
        assert!(t.len() <= SCROLLBACK_TAIL_BYTES && t.len() > SCROLLBACK_TAIL_BYTES - 3 && t.chars().all(|c| c == '€'));
        assert_eq!(tail(&[]), "");
        assert_eq!(cut("aé", 2), "a");
    }
}
