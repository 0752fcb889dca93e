//! The terminal's own screen model: a headless VT emulator (`vt100`) fed the same output
//! bytes as the clients, so the screen can be read as text with or without a window.
//!
//! It runs on its own thread and is flow-controlled like a client (see `terminal.rs`): it
//! never drops a byte, and if it falls behind the PTY pauses instead. Its history is capped
//! at [`SCREEN_HISTORY_LINES`] lines (tmux's default `history-limit`), so a terminal's model
//! holds at most `cols × (rows + 2000)` cells of 32 bytes.

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

/// One terminal's model. Cheap to share; readers lock it briefly.
pub struct Screen {
    parser: Mutex<vt100::Parser>,
    /// Bumped after every processed batch, resize and exit: waiters re-check on a change.
    changes: watch::Sender<u64>,
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    /// A blank screen of `cols`×`rows` (each clamped to at least 1).
    pub fn new(cols: u16, rows: u16) -> Arc<Self> {
        let (changes, _) = watch::channel(0);
        Arc::new(Screen { parser: Mutex::new(vt100::Parser::new(nz(rows), nz(cols), SCREEN_HISTORY_LINES)), changes })
    }

    fn lock(&self) -> MutexGuard<'_, vt100::Parser> {
        // Processing is a pure state update; a panic mid-way leaves a usable screen.
        self.parser.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Feeds output bytes, then wakes waiters.
    pub fn process(&self, bytes: &[u8]) {
        self.lock().process(bytes);
        self.changes.send_modify(|n| *n += 1);
    }

    /// Resizes (in order with the output, like the PTY's `TIOCSWINSZ`), then wakes waiters.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.lock().set_size(nz(rows), nz(cols));
        self.changes.send_modify(|n| *n += 1);
    }

    /// Wakes waiters without a change of the screen (the program exited).
    pub fn poke(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// A receiver that sees every later change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The screen with up to `scrollback` lines of history above it.
    pub fn text(&self, scrollback: usize) -> ScreenText {
        let mut parser = self.lock();
        let screen = parser.screen_mut();
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
        self.lock().screen().application_cursor()
    }

    /// The screen's rows (no history), trailing blanks trimmed.
    pub fn rows(&self) -> Vec<String> {
        let parser = self.lock();
        let screen = parser.screen();
        let cols = screen.size().1.get();
        screen.rows(0, cols).map(trim_end).collect()
    }
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

    #[test]
    fn text_trims_and_counts_wide_characters_once() {
        let s = Screen::new(20, 4);
        s.process("a  \r\n漢字x\r\n".as_bytes());
        let t = s.text(0);
        assert_eq!(t.lines, vec!["a", "漢字x"]);
        assert_eq!((t.cursor_row, t.cursor_col), (2, 0));
        assert_eq!((t.cols, t.rows), (20, 4));
    }

    #[test]
    fn scrollback_lines_come_before_the_screen_in_order() {
        let s = Screen::new(10, 3);
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
        let s = Screen::new(10, 2);
        let mut out = String::new();
        for i in 0..(SCREEN_HISTORY_LINES + 500) {
            out.push_str(&format!("{i}\r\n"));
        }
        s.process(out.as_bytes());
        assert_eq!(s.text(usize::MAX).scrollback, SCREEN_HISTORY_LINES);
    }

    #[test]
    fn alternate_screen_is_reported_and_read() {
        let s = Screen::new(10, 3);
        s.process(b"shell\r\n\x1b[?1049h\x1b[Hfull");
        let t = s.text(0);
        assert!(t.alternate);
        assert_eq!(t.lines, vec!["full"]);
    }

    #[test]
    fn a_change_wakes_subscribers() {
        let s = Screen::new(10, 3);
        let mut rx = s.subscribe();
        assert!(!rx.has_changed().unwrap());
        s.process(b"x");
        assert!(rx.has_changed().unwrap());
        rx.mark_unchanged();
        s.resize(5, 2);
        assert!(rx.has_changed().unwrap());
        assert_eq!(s.rows(), vec!["x", ""]);
    }
}
