//! The terminal's own screen model: a headless VT emulator (`vt100`) fed the same output
//! bytes as the clients, so the screen can be read as text with or without a window.
//!
//! It is fed lazily, so that it costs the PTY path nothing: the output stays in the
//! terminal's scrollback ring, and a read first parses what arrived since the last one
//! ([`Backlog`]). When more output arrived than the ring keeps, the model starts again from a
//! reset terminal and parses the whole ring, exactly as a reattaching client replays it
//! (protocol §5). Its history is capped at [`SCREEN_HISTORY_LINES`] lines (tmux's default
//! `history-limit`), so a model holds at most `cols × (rows + 2000)` cells of 32 bytes.

use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::constants::SCREEN_HISTORY_LINES;

/// The screen as text: what `read` returns (protocol §9.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenText {
    /// Width in columns.
    pub cols: u16,
    /// Height in lines.
    pub rows: u16,
    /// Cursor row, 0-based from the top of the screen.
    pub cursor_row: u16,
    /// Cursor column, 0-based.
    pub cursor_col: u16,
    /// The last `scrollback` history lines, then the screen's rows; trailing blanks trimmed,
    /// a wide character once, trailing empty rows dropped.
    pub lines: Vec<String>,
    /// How many of `lines` come from the history (≤ what was asked, ≤ the history's length).
    pub scrollback: usize,
    /// True if and only if the program uses the alternate screen (a full-screen program).
    pub alternate: bool,
}

/// Output the model has not parsed yet, taken from the ring under the terminal's lock.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Stream offset (bytes since the terminal started) just past `bytes`.
    pub end: u64,
    /// The unparsed bytes, oldest first.
    pub bytes: Vec<u8>,
    /// `Some(cols, rows)` when the ring no longer holds everything since the last parse: the
    /// model restarts from a reset terminal of that size and `bytes` is the whole ring.
    pub reset: Option<(u16, u16)>,
    /// Window size changes not applied yet: (stream offset, cols, rows), in order; each
    /// applies before the byte at its offset.
    pub resizes: Vec<(u64, u16, u16)>,
    /// The sequence number of the last size change included (or, on a reset, made moot).
    pub resize_seq: u64,
}

struct Model {
    parser: vt100::Parser,
    /// Stream offset of the next byte to parse.
    parsed: u64,
    /// Sequence number of the last size change applied.
    resize_seq: u64,
}

/// One terminal's model. Cheap to share; readers lock it briefly.
pub struct Screen {
    model: Mutex<Model>,
    /// Bumped after every output batch, resize and exit: waiters re-check on a change.
    changes: watch::Sender<u64>,
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    /// A blank screen of `cols`×`rows` (each clamped to at least 1).
    pub fn new(cols: u16, rows: u16) -> Arc<Self> {
        let (changes, _) = watch::channel(0);
        Arc::new(Screen { model: Mutex::new(Model { parser: parser(cols, rows), parsed: 0, resize_seq: 0 }), changes })
    }

    fn lock(&self) -> MutexGuard<'_, Model> {
        // Processing is a pure state update; a panic mid-way leaves a usable screen.
        self.model.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Brings the model up to date: `fetch(parsed, resize_seq)` returns what arrived since
    /// stream offset `parsed` and size change `resize_seq` (called with the model locked, so
    /// two readers never parse the same bytes).
    pub fn catch_up(&self, fetch: impl FnOnce(u64, u64) -> Backlog) {
        let mut m = self.lock();
        let b = fetch(m.parsed, m.resize_seq);
        if let Some((cols, rows)) = b.reset {
            m.parser = parser(cols, rows);
        }
        let start = b.end - b.bytes.len() as u64;
        let mut at = 0usize;
        for (offset, cols, rows) in b.resizes {
            let upto = (offset.saturating_sub(start) as usize).min(b.bytes.len());
            if upto > at {
                m.parser.process(&b.bytes[at..upto]);
                at = upto;
            }
            m.parser.set_size(nz(rows), nz(cols));
        }
        m.parser.process(&b.bytes[at..]);
        m.parsed = b.end;
        m.resize_seq = b.resize_seq;
    }

    /// Drops the model's screen and history (the terminal is gone); a later read shows a
    /// blank 1×1 screen.
    pub fn clear(&self) {
        let mut m = self.lock();
        m.parser = parser(1, 1);
    }

    /// Wakes waiters: output arrived, the size changed or the program exited.
    pub fn poke(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// A receiver that sees every later change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The screen with up to `scrollback` lines of history above it.
    pub fn text(&self, scrollback: usize) -> ScreenText {
        let mut m = self.lock();
        let screen = m.parser.screen_mut();
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        let (cursor_row, cursor_col) = screen.cursor_position();
        let alternate = screen.alternate_screen();
        // Scrolling the view shows history rows at its top: walk up in whole screens.
        screen.set_scrollback(usize::MAX);
        let have = screen.scrollback();
        let want = scrollback.min(have);
        let mut lines = Vec::with_capacity(want + rows as usize);
        let mut offset = want;
        while offset > 0 {
            screen.set_scrollback(offset);
            let take = offset.min(rows as usize);
            lines.extend(screen.rows(0, cols).take(take).map(trim_end));
            offset -= take;
        }
        screen.set_scrollback(0);
        lines.extend(screen.rows(0, cols).map(trim_end));
        while lines.len() > want && lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        ScreenText { cols, rows, cursor_row, cursor_col, lines, scrollback: want, alternate }
    }

    /// True if and only if the program set application cursor keys (DECCKM, `CSI ? 1 h`).
    pub fn application_cursor(&self) -> bool {
        self.lock().parser.screen().application_cursor()
    }

    /// The screen's rows (no history), trailing blanks trimmed.
    pub fn rows(&self) -> Vec<String> {
        let m = self.lock();
        let screen = m.parser.screen();
        let cols = screen.size().1.get();
        screen.rows(0, cols).map(trim_end).collect()
    }
}

fn parser(cols: u16, rows: u16) -> vt100::Parser {
    vt100::Parser::new(nz(rows), nz(cols), SCREEN_HISTORY_LINES)
}

fn trim_end(s: String) -> String {
    let t = s.trim_end();
    if t.len() == s.len() {
        s
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test feeding: appends to a stream and lets the screen catch up from it.
    struct Feed {
        screen: Arc<Screen>,
        stream: Vec<u8>,
        resizes: Vec<(u64, u16, u16)>,
    }

    impl Feed {
        fn new(cols: u16, rows: u16) -> Feed {
            Feed { screen: Screen::new(cols, rows), stream: Vec::new(), resizes: Vec::new() }
        }
        fn process(&mut self, b: &[u8]) {
            self.stream.extend_from_slice(b);
            self.sync();
        }
        fn resize(&mut self, cols: u16, rows: u16) {
            self.resizes.push((self.stream.len() as u64, cols, rows));
        }
        fn sync(&mut self) {
            let (stream, resizes) = (&self.stream, std::mem::take(&mut self.resizes));
            self.screen.catch_up(|parsed, seq| Backlog {
                end: stream.len() as u64,
                bytes: stream[parsed as usize..].to_vec(),
                reset: None,
                resize_seq: seq + resizes.len() as u64,
                resizes,
            });
        }
        fn text(&self, n: usize) -> ScreenText {
            self.screen.text(n)
        }
    }

    #[test]
    fn text_trims_and_counts_wide_characters_once() {
        let mut s = Feed::new(20, 4);
        s.process("a  \r\n漢字x\r\n".as_bytes());
        let t = s.text(0);
        assert_eq!(t.lines, vec!["a", "漢字x"]);
        assert_eq!((t.cursor_row, t.cursor_col), (2, 0));
        assert_eq!((t.cols, t.rows), (20, 4));
    }

    #[test]
    fn scrollback_lines_come_before_the_screen_in_order() {
        let mut s = Feed::new(10, 3);
        for i in 0..10 {
            s.process(format!("l{i}\r\n").as_bytes());
        }
        // Screen: l8, l9, "" ; history l0..l7.
        let t = s.text(5);
        assert_eq!(t.scrollback, 5);
        assert_eq!(t.lines, vec!["l3", "l4", "l5", "l6", "l7", "l8", "l9"]);
        let all = s.text(10_000);
        assert_eq!(all.scrollback, 8);
        assert_eq!(all.lines.first().map(String::as_str), Some("l0"));
        // Reading does not move the view.
        assert_eq!(s.text(0).lines, vec!["l8", "l9"]);
    }

    #[test]
    fn history_is_capped() {
        let mut s = Feed::new(10, 2);
        let mut out = String::new();
        for i in 0..(SCREEN_HISTORY_LINES + 500) {
            out.push_str(&format!("{i}\r\n"));
        }
        s.process(out.as_bytes());
        assert_eq!(s.text(usize::MAX).scrollback, SCREEN_HISTORY_LINES);
    }

    #[test]
    fn alternate_screen_is_reported_and_read() {
        let mut s = Feed::new(10, 3);
        s.process(b"shell\r\n\x1b[?1049h\x1b[Hfull");
        let t = s.text(0);
        assert!(t.alternate);
        assert_eq!(t.lines, vec!["full"]);
    }

    #[test]
    fn a_resize_applies_at_its_place_in_the_output() {
        let mut s = Feed::new(10, 3);
        s.process(b"0123456789abc");
        // Output after the resize wraps at the new width; output before it stays as drawn.
        s.resize(4, 3);
        s.stream.extend_from_slice(b"\r\nwxyz12");
        s.sync();
        assert_eq!(s.text(0).lines.last().map(String::as_str), Some("12"));
        assert_eq!(s.text(0).cols, 4);
    }

    #[test]
    fn a_reset_starts_again_from_the_bytes_given() {
        let s = Screen::new(10, 3);
        s.catch_up(|_, _| Backlog { end: 5, bytes: b"stale".to_vec(), ..Backlog::default() });
        s.catch_up(|parsed, _| {
            assert_eq!(parsed, 5);
            Backlog { end: 100, bytes: b"fresh".to_vec(), reset: Some((8, 2)), ..Backlog::default() }
        });
        let t = s.text(0);
        assert_eq!(t.lines, vec!["fresh"]);
        assert_eq!((t.cols, t.rows), (8, 2));
    }

    #[test]
    fn a_change_wakes_subscribers() {
        let s = Screen::new(10, 3);
        let rx = s.subscribe();
        assert!(!rx.has_changed().unwrap());
        s.poke();
        assert!(rx.has_changed().unwrap());
    }
}
