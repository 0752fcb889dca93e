//! Key names for `press` (`Enter`, `Tab`, `ArrowDown`, `a`, `Control+a`, `Shift+Tab`) as the
//! `Input.dispatchKeyEvent` fields Chromium needs for a trusted key press.

use crate::viewer::keys::virtual_key_code;

/// One key press: DOM `key` and `code`, the text it types, CDP modifier bits, and the
/// Windows virtual key code.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyPress {
    /// DOM `key` (`Enter`, `a`).
    pub key: String,
    /// DOM `code` (`Enter`, `KeyA`; "" when unknown).
    pub code: String,
    /// The text the key types ("" for none, `\r` for Enter).
    pub text: String,
    /// Alt 1, Control 2, Meta 4, Shift 8.
    pub modifiers: i64,
    /// The Windows virtual key code.
    pub vk: i64,
}

const NAMED: &[(&str, &str, &str)] = &[
    ("Enter", "Enter", "\r"),
    ("Tab", "Tab", ""),
    ("Escape", "Escape", ""),
    ("Backspace", "Backspace", ""),
    ("Delete", "Delete", ""),
    ("ArrowUp", "ArrowUp", ""),
    ("ArrowDown", "ArrowDown", ""),
    ("ArrowLeft", "ArrowLeft", ""),
    ("ArrowRight", "ArrowRight", ""),
    ("Home", "Home", ""),
    ("End", "End", ""),
    ("PageUp", "PageUp", ""),
    ("PageDown", "PageDown", ""),
    ("Insert", "Insert", ""),
    (" ", "Space", " "),
];

/// Aliases accepted for key names (any case), as `ph send` spells them.
const ALIASES: &[(&str, &str)] = &[
    ("esc", "Escape"),
    ("return", "Enter"),
    ("space", " "),
    ("up", "ArrowUp"),
    ("down", "ArrowDown"),
    ("left", "ArrowLeft"),
    ("right", "ArrowRight"),
    ("del", "Delete"),
];

/// The code of a single character key on a US layout ("" when none).
fn char_code(c: char) -> String {
    if c.is_ascii_alphabetic() {
        format!("Key{}", c.to_ascii_uppercase())
    } else if c.is_ascii_digit() {
        format!("Digit{c}")
    } else {
        String::new()
    }
}

/// The key press that types character `c` (`\n` is Enter).
pub fn for_char(c: char) -> KeyPress {
    if c == '\n' || c == '\r' {
        return parse("Enter").expect("Enter is a key");
    }
    let code = char_code(c);
    let key = c.to_string();
    let shift = c.is_ascii_uppercase();
    KeyPress { vk: virtual_key_code(&code, &key), text: key.clone(), key, code, modifiers: if shift { 8 } else { 0 } }
}

/// Parses `MOD+…+KEY`: modifiers `Control`/`Ctrl`, `Alt`, `Shift`, `Meta`/`Cmd`; keys as in
/// [`NAMED`], their aliases, `F1`…`F12`, or one character.
pub fn parse(spec: &str) -> Result<KeyPress, String> {
    if spec.is_empty() || spec.len() > 64 {
        return Err("a key is 1..=64 bytes".into());
    }
    let parts: Vec<&str> = if spec == "+" { vec!["+"] } else { spec.split('+').collect() };
    let (last, mods) = parts.split_last().ok_or("empty key")?;
    let mut modifiers = 0;
    for m in mods {
        modifiers |= match m.to_ascii_lowercase().as_str() {
            "alt" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" => 4,
            "shift" => 8,
            other => return Err(format!("unknown modifier {other:?} (Control, Alt, Shift, Meta)")),
        };
    }
    let lower = last.to_ascii_lowercase();
    let name = ALIASES.iter().find(|(a, _)| *a == lower).map_or(*last, |(_, n)| *n);
    let press = if let Some((key, code, text)) = NAMED.iter().find(|(k, _, _)| k.eq_ignore_ascii_case(name)) {
        KeyPress { key: key.to_string(), code: code.to_string(), text: text.to_string(), modifiers, vk: 0 }
    } else if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()).filter(|n| (1..=12).contains(n))
    {
        KeyPress { key: format!("F{n}"), code: format!("F{n}"), text: String::new(), modifiers, vk: 0 }
    } else {
        let mut chars = name.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => KeyPress { modifiers: modifiers | for_char(c).modifiers, ..for_char(c) },
            _ => return Err(format!("unknown key {last:?}")),
        }
    };
    let vk = virtual_key_code(&press.code, &press.key);
    // A chord with Control, Alt or Meta types nothing.
    let text = if press.modifiers & 0b0111 != 0 { String::new() } else { press.text.clone() };
    Ok(KeyPress { vk, text, ..press })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_parse() {
        let k = parse("Enter").unwrap();
        assert_eq!((k.key.as_str(), k.code.as_str(), k.text.as_str(), k.vk), ("Enter", "Enter", "\r", 13));
        assert_eq!(parse("esc").unwrap().key, "Escape");
        let k = parse("Control+a").unwrap();
        assert_eq!((k.key.as_str(), k.code.as_str(), k.text.as_str(), k.modifiers, k.vk), ("a", "KeyA", "", 2, 65));
        let k = parse("shift+tab").unwrap();
        assert_eq!((k.key.as_str(), k.modifiers), ("Tab", 8));
        assert_eq!(parse("F5").unwrap().vk, 116);
        assert_eq!(parse("A").unwrap().modifiers, 8);
        assert_eq!(parse("+").unwrap().text, "+");
        assert!(parse("Hyper+x").is_err());
        assert!(parse("Enterr").is_err());
        assert!(parse("").is_err());
        assert_eq!(for_char('\n').key, "Enter");
    }
}
