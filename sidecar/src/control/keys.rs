//! Key names (`enter`, `ctrl+c`, `alt+left`, `f5`) to the bytes a terminal sends for them
//! (xterm's encoding: ctlseqs "PC-Style Function Keys"), for `send --key`.

use super::error::ControlError;

/// Longest key name accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 32;

/// The cursor-key mode of the program (DECCKM): arrows and Home/End are `ESC O x` in
/// application mode, `ESC [ x` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorKeys {
    /// `ESC [ A` (the default).
    Normal,
    /// `ESC O A` (set by `CSI ? 1 h`, e.g. by vim, less, readline in some setups).
    Application,
}

/// The bytes for key name `name` (case-insensitive; modifiers `ctrl+`, `alt+`, `shift+`
/// in any order). Errors with `bad_key` naming the key.
pub fn key_bytes(name: &str, mode: CursorKeys) -> Result<Vec<u8>, ControlError> {
    let bad = || ControlError::BadKey(format!("unknown key '{name}' (see 'ph send --help' for key names)"));
    if name.is_empty() || name.len() > MAX_KEY_BYTES {
        return Err(bad());
    }
    let lower = name.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('+').collect();
    // "ctrl++" would split into an empty last part: that key is '+'.
    if lower.ends_with("++") {
        parts.truncate(parts.len() - 2);
        parts.push("+");
    }
    let key = parts.pop().filter(|k| !k.is_empty()).ok_or_else(bad)?;
    let (mut ctrl, mut alt, mut shift) = (false, false, false);
    for m in parts {
        match m {
            "ctrl" | "control" | "c" => ctrl = true,
            "alt" | "meta" | "m" => alt = true,
            "shift" | "s" => shift = true,
            _ => return Err(bad()),
        }
    }
    // xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
    let modp = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let csi_letter = |c: char| -> Vec<u8> {
        if modp > 1 {
            format!("\x1b[1;{modp}{c}").into_bytes()
        } else if mode == CursorKeys::Application {
            format!("\x1bO{c}").into_bytes()
        } else {
            format!("\x1b[{c}").into_bytes()
        }
    };
    let tilde = |n: u8| -> Vec<u8> {
        if modp > 1 {
            format!("\x1b[{n};{modp}~").into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        }
    };
    let ss3_f = |c: char| -> Vec<u8> {
        if modp > 1 {
            format!("\x1b[1;{modp}{c}").into_bytes()
        } else {
            format!("\x1bO{c}").into_bytes()
        }
    };
    let named: Option<Vec<u8>> = match key {
        "up" => Some(csi_letter('A')),
        "down" => Some(csi_letter('B')),
        "right" => Some(csi_letter('C')),
        "left" => Some(csi_letter('D')),
        "home" => Some(csi_letter('H')),
        "end" => Some(csi_letter('F')),
        "insert" | "ins" => Some(tilde(2)),
        "delete" | "del" => Some(tilde(3)),
        "pageup" | "pgup" => Some(tilde(5)),
        "pagedown" | "pgdn" => Some(tilde(6)),
        "f1" => Some(ss3_f('P')),
        "f2" => Some(ss3_f('Q')),
        "f3" => Some(ss3_f('R')),
        "f4" => Some(ss3_f('S')),
        "f5" => Some(tilde(15)),
        "f6" => Some(tilde(17)),
        "f7" => Some(tilde(18)),
        "f8" => Some(tilde(19)),
        "f9" => Some(tilde(20)),
        "f10" => Some(tilde(21)),
        "f11" => Some(tilde(23)),
        "f12" => Some(tilde(24)),
        _ => None,
    };
    if let Some(b) = named {
        return Ok(b);
    }
    let mut out: Vec<u8> = match key {
        "enter" | "return" | "cr" => vec![b'\r'],
        "tab" if shift => b"\x1b[Z".to_vec(),
        "tab" => vec![b'\t'],
        "esc" | "escape" => vec![0x1b],
        "backspace" | "bs" => vec![if ctrl { 0x08 } else { 0x7f }],
        "space" => vec![if ctrl { 0 } else { b' ' }],
        k if k.chars().count() == 1 => {
            let c = k.chars().next().ok_or_else(bad)?;
            if ctrl {
                ctrl_byte(c).map(|b| vec![b]).ok_or_else(bad)?
            } else {
                let c = if shift { c.to_ascii_uppercase() } else { c };
                c.to_string().into_bytes()
            }
        }
        _ => return Err(bad()),
    };
    if alt {
        out.insert(0, 0x1b);
    }
    Ok(out)
}

/// The control byte for Ctrl + `c` (a letter, or one of `@[\]^_` and `space`/`?`).
fn ctrl_byte(c: char) -> Option<u8> {
    match c {
        'a'..='z' => Some(c as u8 - b'a' + 1),
        '@' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '/' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, want: &[u8]) {
        assert_eq!(key_bytes(name, CursorKeys::Normal).unwrap(), want, "{name}");
    }

    #[test]
    fn key_table() {
        check("enter", b"\r");
        check("Enter", b"\r");
        check("tab", b"\t");
        check("shift+tab", b"\x1b[Z");
        check("esc", b"\x1b");
        check("backspace", b"\x7f");
        check("ctrl+c", b"\x03");
        check("CTRL+D", b"\x04");
        check("ctrl+z", b"\x1a");
        check("ctrl+[", b"\x1b");
        check("ctrl+space", b"\0");
        check("alt+x", b"\x1bx");
        check("alt+ctrl+c", b"\x1b\x03");
        check("up", b"\x1b[A");
        check("left", b"\x1b[D");
        check("ctrl+left", b"\x1b[1;5D");
        check("shift+up", b"\x1b[1;2A");
        check("home", b"\x1b[H");
        check("delete", b"\x1b[3~");
        check("pageup", b"\x1b[5~");
        check("f1", b"\x1bOP");
        check("f5", b"\x1b[15~");
        check("ctrl+f5", b"\x1b[15;5~");
        check("q", b"q");
        check("shift+q", b"Q");
        check("é", "é".as_bytes());
    }

    #[test]
    fn application_cursor_mode_changes_unmodified_arrows_only() {
        assert_eq!(key_bytes("up", CursorKeys::Application).unwrap(), b"\x1bOA");
        assert_eq!(key_bytes("ctrl+up", CursorKeys::Application).unwrap(), b"\x1b[1;5A");
    }

    #[test]
    fn unknown_keys_are_refused_by_name() {
        for bad in ["", "hyper+x", "enterr", "ctrl+", "ctrl+é", &"x".repeat(40)] {
            let e = key_bytes(bad, CursorKeys::Normal).unwrap_err();
            assert_eq!(e.status_and_code().1, "bad_key", "{bad}");
        }
    }
}
