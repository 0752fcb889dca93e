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
    /// Stream ranges `[start, end)` whose terminal queries the model answers itself (no
    /// attached client was live when they were sent: protocol §5.2), in order.
    pub answer: Vec<(u64, u64)>,
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

/// Replies to terminal queries, made by the model for the output ranges it answers.
#[derive(Default)]
struct Replies {
    /// The bytes being parsed now lie in a range the model answers.
    answering: bool,
    /// Replies made and not yet written to the PTY.
    out: Vec<u8>,
}

impl vt100::Callbacks for Replies {
    /// Answers the queries a client would (the same replies as xterm.js): DA1 (`CSI c`,
    /// `CSI 0 c`), DA2 (`CSI > c`), DSR status (`CSI 5 n`), CPR (`CSI 6 n`) and DECXCPR
    /// (`CSI ? 6 n`), with the cursor as the model has it at that byte (ECMA-48 §8.3.35,
    /// xterm's ctlseqs "Device Status Report"). Other queries are left unanswered.
    fn unhandled_csi(&mut self, screen: &mut vt100::Screen, i1: Option<u8>, _: Option<u8>, params: &[&[u16]], c: char) {
        if !self.answering {
            return;
        }
        let p = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        let (row, col) = screen.cursor_position();
        let reply = match (i1, c, p) {
            (None, 'c', 0) => "\x1b[?1;2c".to_string(),
            (Some(b'>'), 'c', 0) => "\x1b[>0;276;0c".to_string(),
            (None, 'n', 5) => "\x1b[0n".to_string(),
            (None, 'n', 6) => format!("\x1b[{};{}R", row + 1, col + 1),
            (Some(b'?'), 'n', 6) => format!("\x1b[?{};{}R", row + 1, col + 1),
            _ => return,
        };
        self.out.extend_from_slice(reply.as_bytes());
    }
}

struct Model {
    parser: vt100::Parser<Replies>,
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
    /// two readers never parse the same bytes). Returns the replies the model made to queries
    /// in the ranges it answers ([`Backlog::answer`]), for the caller to write to the PTY.
    pub fn catch_up(&self, fetch: impl FnOnce(u64, u64) -> Backlog) -> Vec<u8> {
        let mut m = self.lock();
        let backlog = fetch(m.parsed, m.resize_seq);
        Self::parse(&mut m, backlog)
    }

    fn parse(m: &mut Model, b: Backlog) -> Vec<u8> {
        if let Some((cols, rows)) = b.reset {
            m.parser = parser(cols, rows);
        }
        let start = b.end - b.bytes.len() as u64;
        // Cut the bytes where a size change applies and where an answered range begins or
        // ends; parse each piece with its size and answering state.
        let mut cuts: Vec<(u64, Cut)> = b.resizes.iter().map(|&(o, c, r)| (o, Cut::Resize(c, r))).collect();
        for &(from, to) in &b.answer {
            cuts.push((from, Cut::Answer(true)));
            cuts.push((to, Cut::Answer(false)));
        }
        cuts.sort_by_key(|c| c.0);
        let mut at = 0usize;
        for (offset, cut) in cuts {
            let upto = (offset.saturating_sub(start) as usize).min(b.bytes.len());
            if upto > at {
                m.parser.process(&b.bytes[at..upto]);
                at = upto;
            }
            match cut {
                Cut::Resize(cols, rows) => m.parser.set_size(nz(rows), nz(cols)),
                Cut::Answer(on) => m.parser.callbacks_mut().answering = on,
            }
        }
        m.parser.process(&b.bytes[at..]);
        m.parser.callbacks_mut().answering = false;
        m.parsed = b.end;
        m.resize_seq = b.resize_seq;
        std::mem::take(&mut m.parser.callbacks_mut().out)
    }

    /// Brings the model up to date as [`Screen::catch_up`] does (`fetch` also gives how
    /// many lines went by, `went_by`), then returns the bytes that turn a client's terminal,
    /// whatever it showed, into the model's: the last `went_by` lines of history (at most
    /// what the model keeps) pushed into its scrollback, then the screen (cells, attributes,
    /// cursor, alternate screen) and input modes; and the replies to queries as
    /// [`Screen::catch_up`] does (protocol §5.4).
    pub fn catch_up_state(&self, fetch: impl FnOnce(u64, u64) -> (Backlog, u64)) -> (Vec<u8>, Vec<u8>) {
        let mut m = self.lock();
        let (backlog, went_by) = fetch(m.parsed, m.resize_seq);
        let replies = Self::parse(&mut m, backlog);
        (state_bytes(m.parser.screen_mut(), went_by), replies)
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

/// Where [`Screen::parse`] cuts the bytes.
#[derive(Clone, Copy)]
enum Cut {
    Resize(u16, u16),
    Answer(bool),
}

fn parser(cols: u16, rows: u16) -> vt100::Parser<Replies> {
    vt100::Parser::new_with_callbacks(nz(rows), nz(cols), SCREEN_HISTORY_LINES, Replies::default())
}

/// The catch-up bytes of [`Screen::catch_up_state`]. Written after whatever the client drew,
/// so it first undoes what may differ: leave the alternate screen, a soft reset (DECSTR:
/// margins, origin mode, SGR, insert mode, charsets), autowrap on, every mouse mode off; then
/// clears the screen (ED 2 keeps the scrollback in xterm.js) and writes the history lines and
/// enough line feeds to push them all above the screen, then the screen itself.
fn state_bytes(screen: &mut vt100::Screen, went_by: u64) -> Vec<u8> {
    const MOUSE_OFF: &str = "\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l";
    // DECSTR, then what it resets said again for terminals without it: scroll region, origin
    // mode, insert mode, autowrap on.
    let mut out = String::from("\x1b[?1049l\x1b[!p\x1b[r\x1b[?6l\x1b[4l\x1b[?7h");
    out.push_str(MOUSE_OFF);
    out.push_str("\x1b[H\x1b[2J");
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    if !screen.alternate_screen() {
        screen.set_scrollback(usize::MAX);
        let have = screen.scrollback();
        let want = usize::try_from(went_by).unwrap_or(usize::MAX).min(have);
        let mut offset = want;
        while offset > 0 {
            screen.set_scrollback(offset);
            let take = offset.min(rows as usize);
            for row in screen.rows_formatted(0, cols).take(take) {
                out.push_str("\x1b[m");
                out.push_str(&row);
                out.push_str("\r\n");
            }
            offset -= take;
        }
        screen.set_scrollback(0);
        if want > 0 {
            // The cursor is on line `want` from the top of the written lines; the screen ends
            // `rows - 1` lines below it once every history line is above the screen.
            out.push_str("\x1b[m");
            out.push_str(&"\n".repeat(rows.saturating_sub(1) as usize));
        }
    } else {
        out.push_str("\x1b[?1049h");
    }
    out.push_str(&screen.state_formatted());
    out.into_bytes()
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
                answer: Vec::new(),
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

    /// Feeds `state` to a terminal that drew `before`, as a client that fell behind does.
    fn apply(before: &[u8], state: &[u8], cols: u16, rows: u16) -> vt100::Parser {
        let mut client = vt100::Parser::new(nz(rows), nz(cols), 5_000);
        client.process(before);
        client.process(state);
        client
    }

    /// Every cell's text and attributes, the cursor, and the modes a client must match.
    fn look(s: &vt100::Screen) -> (String, (u16, u16), bool, bool, bool, bool) {
        let contents = String::from_utf8_lossy(&s.contents_formatted().into_bytes()).into_owned();
        (
            contents,
            s.cursor_position(),
            s.alternate_screen(),
            s.hide_cursor(),
            s.application_cursor(),
            s.bracketed_paste(),
        )
    }

    #[test]
    fn a_catch_up_state_makes_any_client_screen_the_model_s() {
        // What the client drew before it fell behind: a scroll region, colours, the
        // alternate screen and mouse reporting, all of which the state must undo.
        let before = b"old\r\n\x1b[2;5r\x1b[31;1mred\x1b[?1049h\x1b[?1000hfull\x1b[?1h";
        let mut s = Feed::new(20, 6);
        let mut out = String::new();
        for i in 0..50 {
            out.push_str(&format!("\x1b[3{}m{i}\x1b[m line\r\n", i % 8));
        }
        out.push_str("\x1b[44mblue \x1b[1mbold\x1b[?2004h\x1b[?25l");
        s.process(out.as_bytes());
        let (state, replies) =
            s.screen.catch_up_state(|parsed, seq| (Backlog { end: parsed, resize_seq: seq, ..Backlog::default() }, 30));
        assert!(replies.is_empty());
        let mut client = apply(before, &state, 20, 6);
        let model = s.screen.lock();
        assert_eq!(look(client.screen()), look(model.parser.screen()));
        // The 30 lines that went by are in the client's scrollback, in order, after "old".
        let c = client.screen_mut();
        c.set_scrollback(usize::MAX);
        assert!(c.scrollback() >= 30);
        drop(model);
        let history = s.text(30).lines;
        let mut got = Vec::new();
        let mut offset = 30;
        while offset > 0 {
            c.set_scrollback(offset);
            let take = offset.min(6);
            got.extend(c.rows(0, 20).take(take).map(|r| r.trim_end().to_string()));
            offset -= take;
        }
        assert_eq!(got, history[..30].to_vec());
        assert_eq!(got.last().map(String::as_str), Some("44 line"));
    }

    #[test]
    fn a_catch_up_state_of_a_full_screen_program_shows_its_alternate_screen() {
        let mut s = Feed::new(20, 5);
        s.process(b"shell$ vim\r\n\x1b[?1049h\x1b[H\x1b[7m~ inverse\x1b[m\x1b[3;4H");
        let (state, _) =
            s.screen.catch_up_state(|parsed, seq| (Backlog { end: parsed, resize_seq: seq, ..Backlog::default() }, 2));
        let client = apply(b"anything\r\nelse", &state, 20, 5);
        let model = s.screen.lock();
        assert_eq!(look(client.screen()), look(model.parser.screen()));
        assert!(client.screen().alternate_screen());
        assert_eq!(client.screen().cursor_position(), (2, 3));
    }

    #[test]
    fn the_model_answers_queries_only_in_the_ranges_it_is_given() {
        let s = Screen::new(20, 5);
        // Queries at 2, 10, 14 and 22; only [8, 20) is the model's.
        let stream = b"ab\x1b[c\r\nxyz\x1b[6n\x1b[>c----\x1b[c";
        let replies = s.catch_up(|_, _| Backlog {
            end: stream.len() as u64,
            bytes: stream.to_vec(),
            answer: vec![(8, 20)],
            ..Backlog::default()
        });
        assert_eq!(String::from_utf8(replies).unwrap(), "\x1b[2;4R\x1b[>0;276;0c");
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
