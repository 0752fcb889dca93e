//! Viewer socket messages (docs/protocol.md §8.4): inbound parsing with bounds, outbound
//! encoding, and the binary frame header.

use serde::Deserialize;
use serde_json::json;

use crate::browser::{Dialog, Download, FileChooser, SyncState, Tab, Viewport};

/// Length of the binary frame header, in bytes.
pub const FRAME_HEADER_BYTES: usize = 16;
/// Frame header flag: a crisp capture (else a provisional screencast frame).
pub const FRAME_FLAG_CRISP: u8 = 1;
/// Largest |x|, |y|, |deltaX|, |deltaY| accepted, in CSS pixels.
pub const MAX_COORD_CSS: f64 = 100_000.0;
/// Largest `key`/`code` accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 64;
/// Largest `text` of one key event, in bytes.
pub const MAX_KEY_TEXT_BYTES: usize = 32;
/// Largest prompt answer, in bytes.
pub const MAX_PROMPT_BYTES: usize = 8 * 1024;

/// An inbound message as received (shape only; bounds are checked by [`parse`]).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum Wire {
    InputMouse {
        event: MouseEvent,
        x: f64,
        y: f64,
        #[serde(default)]
        button: Option<MouseButton>,
        #[serde(default)]
        clicks: Option<i64>,
        #[serde(default)]
        modifiers: Option<i64>,
        #[serde(default, rename = "deltaX")]
        delta_x: Option<f64>,
        #[serde(default, rename = "deltaY")]
        delta_y: Option<f64>,
    },
    InputKeyboard {
        event: KeyEvent,
        key: String,
        code: String,
        text: String,
        #[serde(default)]
        modifiers: Option<i64>,
    },
    InputText {
        text: String,
    },
    Sync {
        width: i64,
        height: i64,
        dpr: f64,
    },
    Repaint {},
    Flush {
        id: u32,
    },
    PopupChoice {
        index: i64,
    },
    PopupValue {
        value: String,
    },
    Zoom {
        factor: f64,
    },
    Inspect {
        x: f64,
        y: f64,
    },
    Edit {
        op: EditOp,
    },
    Find {
        text: String,
        #[serde(default)]
        backwards: bool,
        #[serde(default)]
        next: bool,
    },
    Dialog {
        accept: bool,
        #[serde(default)]
        text: Option<String>,
    },
}

/// A mouse event kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseEvent {
    /// A button was pressed.
    Down,
    /// A button was released.
    Up,
    /// The pointer moved.
    Move,
    /// The wheel turned (`deltaX`/`deltaY`).
    Wheel,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    /// No button.
    None,
    /// The primary button.
    Left,
    /// The middle button.
    Middle,
    /// The secondary button.
    Right,
    /// The "back" button.
    Back,
    /// The "forward" button.
    Forward,
}

/// A key event kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyEvent {
    /// Key pressed.
    Down,
    /// Key released.
    Up,
}

/// An edit operation on the page's selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum EditOp {
    /// Reply the selected text.
    #[serde(rename = "copy")]
    Copy,
    /// Reply the selected text and delete it (editable selections).
    #[serde(rename = "cut")]
    Cut,
    /// Select everything (the focused field, else the document).
    #[serde(rename = "selectAll")]
    SelectAll,
}

/// A validated inbound message.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// Mouse input at (x, y) CSS px of the page viewport.
    Mouse {
        /// Kind.
        event: MouseEvent,
        /// CSS px from the viewport's left edge.
        x: f64,
        /// CSS px from the viewport's top edge.
        y: f64,
        /// Button (`None` for move/wheel unless dragging).
        button: MouseButton,
        /// Click count (1 for a single click, 2 double).
        clicks: i64,
        /// CDP modifiers bitmask: Alt 1, Ctrl 2, Meta 4, Shift 8.
        modifiers: i64,
        /// Wheel delta in CSS px (positive scrolls right).
        delta_x: f64,
        /// Wheel delta in CSS px (positive scrolls down).
        delta_y: f64,
    },
    /// A key press or release.
    Key {
        /// Kind.
        event: KeyEvent,
        /// DOM `key` value.
        key: String,
        /// DOM `code` value.
        code: String,
        /// Text the key produces ("" for non-text keys).
        text: String,
        /// Modifiers bitmask as for mouse.
        modifiers: i64,
    },
    /// A paste: text inserted at the caret.
    Text(String),
    /// The pane's CSS size and DPR while "Resize with pane" is on.
    Sync(Viewport),
    /// Send a fresh capture.
    Repaint,
    /// Answer `flushed` with this id once every input this view sent before it has been
    /// dispatched (a barrier: the view closes a pane only after its last click landed).
    Flush(u32),
    /// The option index picked from the last reported `<select>` popup.
    PopupChoice(usize),
    /// The value picked for the last reported picker input (checked against its type by
    /// the popup owner, which knows the type).
    PopupValue(String),
    /// Set the page zoom of every tab (in [`crate::browser::ZOOM_RANGE`]).
    Zoom(f64),
    /// What is at (x, y) CSS px of the page viewport (the context menu's link and image).
    Inspect {
        /// CSS px from the viewport's left edge.
        x: f64,
        /// CSS px from the viewport's top edge.
        y: f64,
    },
    /// An edit operation.
    Edit(EditOp),
    /// Find in page: search `text` anew, or move to the `next` match (the previous one when
    /// `backwards`); "" clears (at most [`super::find::MAX_FIND_BYTES`]).
    Find {
        /// What to find (case-insensitive; runs of whitespace match one).
        text: String,
        /// Search towards the top.
        backwards: bool,
        /// Move from the active match instead of searching anew.
        next: bool,
    },
    /// The user's answer to the pending dialog.
    Dialog {
        /// OK (true) or Cancel (false).
        accept: bool,
        /// A prompt's text.
        text: Option<String>,
    },
}

impl Inbound {
    /// True for the human taking a hand: a button pressed, the wheel turned, a key pressed,
    /// a paste, an edit chord or a popup (or picker) choice. Moves, releases and the view's own messages
    /// (sync, repaint) are not; a dialog answer is not (an action ends when a dialog opens).
    pub fn is_human_press(&self) -> bool {
        match self {
            Inbound::Mouse { event, .. } => matches!(event, MouseEvent::Down | MouseEvent::Wheel),
            Inbound::Key { event, .. } => *event == KeyEvent::Down,
            Inbound::Text(_) | Inbound::PopupChoice(_) | Inbound::PopupValue(_) | Inbound::Edit(_) => true,
            // The view's own zoom and a look at what is under a point change nothing in the page.
            Inbound::Sync(_)
            | Inbound::Repaint
            | Inbound::Flush(_)
            | Inbound::Dialog { .. }
            | Inbound::Zoom(_)
            | Inbound::Find { .. }
            | Inbound::Inspect { .. } => false,
        }
    }
}

/// Why an inbound text message was refused; the view's socket closes with code 1008 and this
/// (its `Display`) as the reason (protocol §8.4).
#[derive(Debug, Clone, PartialEq)]
pub enum BadMessage {
    /// Not JSON, an unknown `type`, or a field missing or of the wrong type (serde's words).
    Shape(String),
    /// A field outside its bounds: the bound, and what came.
    Bound(String),
}

impl BadMessage {
    /// A stable name for logs and tests: `bad_shape` or `out_of_bounds`.
    pub fn code(&self) -> &'static str {
        match self {
            BadMessage::Shape(_) => "bad_shape",
            BadMessage::Bound(_) => "out_of_bounds",
        }
    }
}

impl std::fmt::Display for BadMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadMessage::Shape(e) => write!(f, "bad message: {e}"),
            BadMessage::Bound(e) => f.write_str(e),
        }
    }
}

fn coord(name: &str, v: f64) -> Result<f64, BadMessage> {
    if v.is_finite() && v.abs() <= MAX_COORD_CSS {
        Ok(v)
    } else {
        Err(BadMessage::Bound(format!("{name} must be a finite number with |{name}| ≤ 100000")))
    }
}

/// Parses and bounds-checks one inbound text message; the error is the close reason.
pub fn parse(text: &str) -> Result<Inbound, BadMessage> {
    let w: Wire = serde_json::from_str(text).map_err(|e| BadMessage::Shape(e.to_string()))?;
    Ok(match w {
        Wire::InputMouse { event, x, y, button, clicks, modifiers, delta_x, delta_y } => {
            let clicks = clicks.unwrap_or(match event {
                MouseEvent::Down | MouseEvent::Up => 1,
                _ => 0,
            });
            if !(0..=3).contains(&clicks) {
                return Err(BadMessage::Bound(format!("clicks must be in 0..=3, got {clicks}")));
            }
            Inbound::Mouse {
                event,
                x: coord("x", x)?,
                y: coord("y", y)?,
                button: button.unwrap_or(match event {
                    MouseEvent::Down | MouseEvent::Up => MouseButton::Left,
                    _ => MouseButton::None,
                }),
                clicks,
                modifiers: modifiers_of(modifiers)?,
                delta_x: coord("deltaX", delta_x.unwrap_or(0.0))?,
                delta_y: coord("deltaY", delta_y.unwrap_or(0.0))?,
            }
        }
        Wire::InputKeyboard { event, key, code, text, modifiers } => {
            if key.is_empty() || key.len() > MAX_KEY_BYTES || code.len() > MAX_KEY_BYTES {
                return Err(BadMessage::Bound("key must be 1..=64 bytes and code at most 64".into()));
            }
            if text.len() > MAX_KEY_TEXT_BYTES {
                return Err(BadMessage::Bound("text of a key event must be at most 32 bytes".into()));
            }
            Inbound::Key { event, key, code, text, modifiers: modifiers_of(modifiers)? }
        }
        Wire::InputText { text } => {
            if text.is_empty() {
                return Err(BadMessage::Bound("input_text needs non-empty text".into()));
            }
            Inbound::Text(text)
        }
        Wire::Sync { width, height, dpr } => {
            Inbound::Sync(Viewport::checked(width, height, dpr).map_err(|e| BadMessage::Bound(e.to_string()))?)
        }
        Wire::Repaint {} => Inbound::Repaint,
        Wire::Flush { id } => Inbound::Flush(id),
        Wire::PopupChoice { index } => {
            if !(0..=100_000).contains(&index) {
                return Err(BadMessage::Bound(format!("index must be in 0..=100000, got {index}")));
            }
            Inbound::PopupChoice(index as usize)
        }
        Wire::PopupValue { value } => {
            if value.len() > super::popup::MAX_POPUP_VALUE_BYTES {
                return Err(BadMessage::Bound("popup_value value must be at most 64 bytes".into()));
            }
            Inbound::PopupValue(value)
        }
        Wire::Zoom { factor } => {
            if !factor.is_finite() || !crate::browser::ZOOM_RANGE.contains(&factor) {
                return Err(BadMessage::Bound(format!(
                    "zoom factor must be in {}..={}, got {factor}",
                    crate::constants::MIN_ZOOM,
                    crate::constants::MAX_ZOOM
                )));
            }
            Inbound::Zoom(factor)
        }
        Wire::Inspect { x, y } => Inbound::Inspect { x: coord("x", x)?, y: coord("y", y)? },
        Wire::Edit { op } => Inbound::Edit(op),
        Wire::Find { text, backwards, next } => {
            if text.len() > super::find::MAX_FIND_BYTES {
                return Err(BadMessage::Bound("find text must be at most 1 KiB".into()));
            }
            Inbound::Find { text, backwards, next }
        }
        Wire::Dialog { accept, text } => {
            if text.as_ref().is_some_and(|t| t.len() > MAX_PROMPT_BYTES) {
                return Err(BadMessage::Bound("dialog text must be at most 8 KiB".into()));
            }
            Inbound::Dialog { accept, text }
        }
    })
}

fn modifiers_of(m: Option<i64>) -> Result<i64, BadMessage> {
    let m = m.unwrap_or(0);
    if (0..=15).contains(&m) {
        Ok(m)
    } else {
        Err(BadMessage::Bound(format!("modifiers must be in 0..=15, got {m}")))
    }
}

/// `{"type":"status","connected":…,"launching":…,"viewport":…,"popped_out":…,"crashed":…}`.
pub fn status(connected: bool, launching: bool, viewport: Option<Viewport>, popped_out: bool, crashed: bool) -> String {
    json!({"type": "status", "connected": connected, "launching": launching, "viewport": viewport,
        "popped_out": popped_out, "crashed": crashed})
    .to_string()
}

/// `{"type":"tabs","tabs":[…],"active":…}`.
pub fn tabs(tabs: &[Tab], active: Option<&str>) -> String {
    json!({"type": "tabs", "tabs": tabs, "active": active}).to_string()
}

/// `{"type":"url","url":…,"title":…}` for the active tab.
pub fn url(url: &str, title: &str) -> String {
    json!({"type": "url", "url": url, "title": title}).to_string()
}

/// `{"type":"loading","loading":…,"url":…}` for the active tab: `url` is where it is going
/// until that commits (`null` when not known or committed).
pub fn loading(loading: bool, url: Option<&str>) -> String {
    json!({"type": "loading", "loading": loading, "url": url}).to_string()
}

/// `{"type":"dialog","dialog":…}`; `null` once it is gone.
pub fn dialog(d: Option<&Dialog>) -> String {
    json!({"type": "dialog", "dialog": d}).to_string()
}

/// `{"type":"file_chooser","chooser":…}`; `null` once it is answered or gone.
pub fn file_chooser(c: Option<&FileChooser>) -> String {
    json!({"type": "file_chooser", "chooser": c}).to_string()
}

/// `{"type":"downloads","downloads":[…]}`.
pub fn downloads(d: &[Download]) -> String {
    json!({"type": "downloads", "downloads": d}).to_string()
}

/// `{"type":"flushed","id":…}`: every input sent before `flush` `id` has been dispatched.
pub fn flushed(id: u32) -> String {
    json!({"type": "flushed", "id": id}).to_string()
}

/// `{"type":"zoom","factor":…}`.
pub fn zoom(factor: f64) -> String {
    json!({"type": "zoom", "factor": factor}).to_string()
}

/// `{"type":"sync","state":…}`.
pub fn sync(s: SyncState) -> String {
    json!({"type": "sync", "state": s}).to_string()
}

/// `{"type":"agent","seq","verb","acting","point","rect"}`: what an agent is doing in the
/// browser (DESIGN §12); `point` and `rect` in top-level viewport CSS px, or null.
pub fn agent(a: &crate::browser::Activity) -> String {
    json!({"type": "agent", "seq": a.seq, "verb": a.verb, "acting": a.acting, "point": a.point, "rect": a.rect})
        .to_string()
}

/// `{"type":"clipboard","text":…}`.
pub fn clipboard(text: &str) -> String {
    json!({"type": "clipboard", "text": text}).to_string()
}

/// `{"type":"error","message":…}`: an operation failed; the socket stays open.
pub fn error(message: &str) -> String {
    json!({"type": "error", "message": message}).to_string()
}

/// A binary frame: the 16-byte header then the JPEG bytes.
///
/// Header (little-endian): `u32` frame id (per socket, from 1), `u16` viewport CSS width,
/// `u16` viewport CSS height, `f32` DPR, `u8` flags (bit 0: crisp), 3 zero bytes.
pub fn frame(id: u32, css_width: u32, css_height: u32, dpr: f64, crisp: bool, jpeg: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(FRAME_HEADER_BYTES + jpeg.len());
    v.extend_from_slice(&id.to_le_bytes());
    v.extend_from_slice(&(css_width.min(u16::MAX as u32) as u16).to_le_bytes());
    v.extend_from_slice(&(css_height.min(u16::MAX as u32) as u16).to_le_bytes());
    v.extend_from_slice(&(dpr as f32).to_le_bytes());
    v.push(if crisp { FRAME_FLAG_CRISP } else { 0 });
    v.extend_from_slice(&[0, 0, 0]);
    v.extend_from_slice(jpeg);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presses_wheel_keys_and_pastes_are_the_human_taking_a_hand() {
        let human = |m: &str| parse(m).unwrap().is_human_press();
        assert!(human(r#"{"type":"input_mouse","event":"down","x":1,"y":2}"#));
        assert!(human(r#"{"type":"input_mouse","event":"wheel","x":1,"y":2,"deltaY":10}"#));
        assert!(human(r#"{"type":"input_keyboard","event":"down","key":"a","code":"KeyA","text":"a"}"#));
        assert!(human(r#"{"type":"input_text","text":"hi"}"#));
        assert!(!human(r#"{"type":"input_mouse","event":"move","x":1,"y":2}"#));
        assert!(!human(r#"{"type":"input_mouse","event":"up","x":1,"y":2}"#));
        assert!(!human(r#"{"type":"input_keyboard","event":"up","key":"a","code":"KeyA","text":""}"#));
        assert!(!human(r#"{"type":"repaint"}"#));
        assert!(!human(r#"{"type":"dialog","accept":true}"#));
    }

    #[test]
    fn parses_every_kind() {
        assert!(matches!(
            parse(r#"{"type":"input_mouse","event":"down","x":10,"y":20}"#),
            Ok(Inbound::Mouse { button: MouseButton::Left, clicks: 1, .. })
        ));
        assert!(matches!(parse(r#"{"type":"input_mouse","event":"wheel","x":1,"y":2,"deltaY":100}"#),
            Ok(Inbound::Mouse { delta_y, .. }) if delta_y == 100.0));
        assert!(matches!(
            parse(r#"{"type":"input_keyboard","event":"down","key":".","code":"Period","text":"."}"#),
            Ok(Inbound::Key { .. })
        ));
        assert_eq!(parse(r#"{"type":"input_text","text":"é"}"#), Ok(Inbound::Text("é".into())));
        assert!(matches!(parse(r#"{"type":"sync","width":800,"height":600,"dpr":2}"#), Ok(Inbound::Sync(_))));
        assert_eq!(parse(r#"{"type":"repaint"}"#), Ok(Inbound::Repaint));
        assert_eq!(parse(r#"{"type":"popup_choice","index":2}"#), Ok(Inbound::PopupChoice(2)));
        assert_eq!(
            parse(r#"{"type":"popup_value","value":"2026-12-01"}"#),
            Ok(Inbound::PopupValue("2026-12-01".into()))
        );
        assert_eq!(parse(r#"{"type":"edit","op":"selectAll"}"#), Ok(Inbound::Edit(EditOp::SelectAll)));
        assert_eq!(parse(r#"{"type":"zoom","factor":1.25}"#), Ok(Inbound::Zoom(1.25)));
        assert_eq!(parse(r#"{"type":"flush","id":7}"#), Ok(Inbound::Flush(7)));
        assert!(parse(r#"{"type":"flush","id":-1}"#).is_err());
        assert!(!parse(r#"{"type":"flush","id":1}"#).unwrap().is_human_press());
        assert_eq!(parse(r#"{"type":"inspect","x":1,"y":2}"#), Ok(Inbound::Inspect { x: 1.0, y: 2.0 }));
        assert!(matches!(parse(r#"{"type":"dialog","accept":true}"#), Ok(Inbound::Dialog { accept: true, .. })));
        assert_eq!(
            parse(r#"{"type":"find","text":"Straße","next":true}"#),
            Ok(Inbound::Find { text: "Straße".into(), backwards: false, next: true })
        );
        assert!(parse(&format!(r#"{{"type":"find","text":"{}"}}"#, "x".repeat(1025))).is_err());
        assert!(!parse(r#"{"type":"find","text":""}"#).unwrap().is_human_press());
    }

    #[test]
    fn refuses_unknown_kinds_fields_and_out_of_range_values() {
        for bad in [
            "not json",
            r#"{"type":"nope"}"#,
            r#"{"type":"repaint","extra":1}"#,
            r#"{"type":"input_mouse","event":"down","x":1e9,"y":0}"#,
            r#"{"type":"input_mouse","event":"hover","x":1,"y":0}"#,
            r#"{"type":"input_mouse","event":"down","x":1,"y":0,"clicks":9}"#,
            r#"{"type":"input_mouse","event":"down","x":1,"y":0,"modifiers":16}"#,
            r#"{"type":"input_keyboard","event":"down","key":"a","code":"KeyA"}"#,
            r#"{"type":"input_keyboard","event":"down","key":"","code":"KeyA","text":""}"#,
            r#"{"type":"input_text","text":""}"#,
            r#"{"type":"sync","width":50,"height":600,"dpr":1}"#,
            r#"{"type":"sync","width":800,"height":600,"dpr":9}"#,
            r#"{"type":"popup_choice","index":-1}"#,
            r#"{"type":"popup_value","value":"0123456789012345678901234567890123456789012345678901234567890123456789"}"#,
            r#"{"type":"edit","op":"paste"}"#,
            r#"{"type":"zoom","factor":6}"#,
            r#"{"type":"zoom","factor":0.2}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn frame_header_layout() {
        let f = frame(7, 1280, 800, 2.0, true, &[0xFF, 0xD8]);
        assert_eq!(f.len(), FRAME_HEADER_BYTES + 2);
        assert_eq!(u32::from_le_bytes(f[0..4].try_into().unwrap()), 7);
        assert_eq!(u16::from_le_bytes(f[4..6].try_into().unwrap()), 1280);
        assert_eq!(u16::from_le_bytes(f[6..8].try_into().unwrap()), 800);
        assert_eq!(f32::from_le_bytes(f[8..12].try_into().unwrap()), 2.0);
        assert_eq!(f[12], FRAME_FLAG_CRISP);
        assert_eq!(&f[16..], &[0xFF, 0xD8]);
    }
}
