//! Windows virtual key codes for `Input.dispatchKeyEvent`, from the key's `code` (physical
//! key) and, when that is empty or unknown, its `key` value. Never derived from a character
//! code: `.` is VK_OEM_PERIOD (190), not 46 (which is VK_DELETE).

/// Returns the virtual key code for a key event, or 0 when neither `code` nor `key` is known.
pub(crate) fn virtual_key_code(code: &str, key: &str) -> i64 {
    by_code(code).or_else(|| by_key(key)).unwrap_or(0)
}

fn by_code(code: &str) -> Option<i64> {
    if let Some(c) = code.strip_prefix("Key") {
        let b = c.as_bytes();
        if b.len() == 1 && b[0].is_ascii_uppercase() {
            return Some(b[0] as i64);
        }
    }
    if let Some(d) = code.strip_prefix("Digit") {
        let b = d.as_bytes();
        if b.len() == 1 && b[0].is_ascii_digit() {
            return Some(b[0] as i64);
        }
    }
    if let Some(d) = code.strip_prefix("Numpad") {
        let b = d.as_bytes();
        if b.len() == 1 && b[0].is_ascii_digit() {
            return Some(0x60 + (b[0] - b'0') as i64);
        }
    }
    if let Some(n) = code.strip_prefix('F').and_then(|n| n.parse::<i64>().ok()) {
        if (1..=24).contains(&n) {
            return Some(0x70 + n - 1);
        }
    }
    Some(match code {
        "Backspace" => 0x08,
        "Tab" => 0x09,
        "Enter" | "NumpadEnter" => 0x0D,
        "ShiftLeft" | "ShiftRight" => 0x10,
        "ControlLeft" | "ControlRight" => 0x11,
        "AltLeft" | "AltRight" => 0x12,
        "Pause" => 0x13,
        "CapsLock" => 0x14,
        "Escape" => 0x1B,
        "Space" => 0x20,
        "PageUp" => 0x21,
        "PageDown" => 0x22,
        "End" => 0x23,
        "Home" => 0x24,
        "ArrowLeft" => 0x25,
        "ArrowUp" => 0x26,
        "ArrowRight" => 0x27,
        "ArrowDown" => 0x28,
        "PrintScreen" => 0x2C,
        "Insert" => 0x2D,
        "Delete" => 0x2E,
        "MetaLeft" => 0x5B,
        "MetaRight" => 0x5C,
        "ContextMenu" => 0x5D,
        "NumpadMultiply" => 0x6A,
        "NumpadAdd" => 0x6B,
        "NumpadSubtract" => 0x6D,
        "NumpadDecimal" => 0x6E,
        "NumpadDivide" => 0x6F,
        "NumLock" => 0x90,
        "ScrollLock" => 0x91,
        "Semicolon" => 0xBA,
        "Equal" => 0xBB,
        "Comma" => 0xBC,
        "Minus" => 0xBD,
        "Period" => 0xBE,
        "Slash" => 0xBF,
        "Backquote" => 0xC0,
        "BracketLeft" => 0xDB,
        "Backslash" => 0xDC,
        "BracketRight" => 0xDD,
        "Quote" => 0xDE,
        "IntlBackslash" => 0xE2,
        _ => return None,
    })
}

fn by_key(key: &str) -> Option<i64> {
    let mut chars = key.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_ascii_alphabetic() {
            return Some(c.to_ascii_uppercase() as i64);
        }
        if c.is_ascii_digit() {
            return Some(c as i64);
        }
        // US layout: the unshifted and shifted character of each OEM key.
        return Some(match c {
            ' ' => 0x20,
            ';' | ':' => 0xBA,
            '=' | '+' => 0xBB,
            ',' | '<' => 0xBC,
            '-' | '_' => 0xBD,
            '.' | '>' => 0xBE,
            '/' | '?' => 0xBF,
            '`' | '~' => 0xC0,
            '[' | '{' => 0xDB,
            '\\' | '|' => 0xDC,
            ']' | '}' => 0xDD,
            '\'' | '"' => 0xDE,
            ')' => 0x30,
            '!' => 0x31,
            '@' => 0x32,
            '#' => 0x33,
            '$' => 0x34,
            '%' => 0x35,
            '^' => 0x36,
            '&' => 0x37,
            '*' => 0x38,
            '(' => 0x39,
            _ => return None,
        });
    }
    by_code(match key {
        "Control" => "ControlLeft",
        "Shift" => "ShiftLeft",
        "Alt" => "AltLeft",
        "Meta" => "MetaLeft",
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: &str, key: &str, want: i64) {
        assert_eq!(virtual_key_code(code, key), want, "code={code:?} key={key:?}");
    }

    #[test]
    fn key_table_covers_editing_and_navigation_keys() {
        check("Backspace", "Backspace", 8);
        check("Delete", "Delete", 46);
        check("Home", "Home", 36);
        check("End", "End", 35);
        check("ArrowLeft", "ArrowLeft", 37);
        check("ArrowDown", "ArrowDown", 40);
        check("Enter", "Enter", 13);
        check("Tab", "Tab", 9);
        check("Escape", "Escape", 27);
        check("F5", "F5", 116);
    }

    #[test]
    fn key_table_never_uses_char_codes() {
        check("Period", ".", 190); // charCodeAt would give 46 = VK_DELETE
        check("", ".", 190);
        check("KeyA", "A", 65);
        check("KeyA", "a", 65);
        check("", "a", 65);
        check("Digit1", "!", 49);
        check("", "!", 49);
        check("Quote", "'", 222);
        check("Numpad5", "5", 0x65);
        check("", "é", 0);
        check("", "Backspace", 8);
        check("", "Shift", 16);
    }
}
