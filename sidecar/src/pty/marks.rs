//! Shell-integration marks and attention requests found in a terminal's output (DESIGN §13).
//!
//! [`Scanner`] is fed every chunk the reader thread reads, in order, and finds:
//! - OSC 7 `file://HOST/PATH` (the shell's working directory; PATH percent-encoded),
//! - OSC 133 `A` (prompt start), `B` (command input start), `C` (command output start,
//!   optionally `;cmdline_url=…`, kitty's extension carrying the command line), `D[;status]`
//!   (command end), as FinalTerm defined them and VS Code, kitty, WezTerm and Ghostty emit,
//! - BEL (0x07) outside any control string, OSC 9 `;text` (iTerm2's notification; ConEmu's
//!   `9;N;…` sub-commands such as Windows Terminal's progress `9;4` are not notifications),
//!   OSC 777 `;notify;TITLE;BODY` (rxvt/VTE) and OSC 99 (kitty's notification protocol: its
//!   payload, `p=title`/`p=body`; chunks with `d=0` wait for the rest).
//!
//! It never changes the bytes (the clients' xterm.js parses them too); it only reads them.
//! Ground state skips to the next ESC or BEL with `memchr2`, so plain output costs a scan
//! at memory speed. A control string is bounded by [`MAX_STRING_BYTES`]; a longer one is
//! skipped to its terminator, so a hostile program can make it allocate no more than that.

/// The longest OSC payload kept (longer ones are skipped): 4 KiB, ample for a path or a
/// notification.
pub const MAX_STRING_BYTES: usize = 4096;

/// One thing the output said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// OSC 7: the working directory (decoded path).
    Cwd(String),
    /// OSC 133 A: a prompt starts.
    PromptStart,
    /// OSC 133 B: the prompt ends; the command line is being typed.
    CommandInput,
    /// OSC 133 C: the command runs; its output follows. The command line if the shell sent it.
    CommandStart(Option<String>),
    /// OSC 133 D: the command ended, with its exit status if the shell sent one.
    CommandEnd(Option<i32>),
    /// BEL, outside any control string.
    Bell,
    /// OSC 9, 777 `notify` or 99: a notification the program asks for.
    Notify {
        /// Its title ("" when the protocol has none).
        title: String,
        /// Its body.
        body: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After ESC.
    Esc,
    /// Inside an OSC (ESC ]), collecting.
    Osc,
    /// Inside an OSC, after an ESC (a following `\` ends it: ST).
    OscEsc,
    /// Inside DCS/SOS/PM/APC (ESC P, X, ^, _): skipped to ST; a BEL in it is data.
    Str,
    /// Inside such a string, after an ESC.
    StrEsc,
}

/// Finds [`Mark`]s in a byte stream fed in arbitrary chunks.
#[derive(Debug)]
pub struct Scanner {
    state: State,
    osc: Vec<u8>,
    /// The OSC being collected grew past [`MAX_STRING_BYTES`]: skip it.
    overflow: bool,
    /// Kitty OSC 99 chunks waiting for their last (`d=0` … `d=1`): (title, body).
    kitty: Option<(String, String)>,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner { state: State::Ground, osc: Vec::new(), overflow: false, kitty: None }
    }
}

impl Scanner {
    /// Scans `bytes` (the next chunk of output) and appends what it found to `out`, in order.
    pub fn scan(&mut self, bytes: &[u8], out: &mut Vec<Mark>) {
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Ground => match memchr::memchr2(0x1b, 0x07, &bytes[i..]) {
                    None => return,
                    Some(k) => {
                        i += k;
                        if bytes[i] == 0x07 {
                            out.push(Mark::Bell);
                        } else {
                            self.state = State::Esc;
                        }
                    }
                },
                State::Esc => {
                    self.state = match bytes[i] {
                        b']' => {
                            self.osc.clear();
                            self.overflow = false;
                            State::Osc
                        }
                        b'P' | b'X' | b'^' | b'_' => State::Str,
                        0x1b => State::Esc,
                        // Any other sequence (CSI, charset, …) carries no string: its bytes are
                        // printable or C0 controls, which ground state treats correctly.
                        _ => State::Ground,
                    };
                }
                State::Osc => {
                    // Collect up to the next terminator in one go.
                    let rest = &bytes[i..];
                    let end = memchr::memchr2(0x07, 0x1b, rest).unwrap_or(rest.len());
                    self.collect(&rest[..end]);
                    i += end;
                    if i == bytes.len() {
                        return;
                    }
                    if bytes[i] == 0x07 {
                        self.finish(out);
                        self.state = State::Ground;
                    } else {
                        self.state = State::OscEsc;
                    }
                }
                State::OscEsc => {
                    if bytes[i] == b'\\' {
                        self.finish(out);
                        self.state = State::Ground;
                    } else {
                        // ESC inside an OSC aborts it (as xterm does) and starts a new sequence.
                        self.state = State::Esc;
                        continue;
                    }
                }
                State::Str => match memchr::memchr(0x1b, &bytes[i..]) {
                    None => return,
                    Some(k) => {
                        i += k;
                        self.state = State::StrEsc;
                    }
                },
                State::StrEsc => {
                    self.state = if bytes[i] == b'\\' { State::Ground } else { State::Str };
                }
            }
            i += 1;
        }
    }

    fn collect(&mut self, part: &[u8]) {
        if self.overflow {
            return;
        }
        if self.osc.len() + part.len() > MAX_STRING_BYTES {
            self.overflow = true;
            self.osc = Vec::new();
        } else {
            self.osc.extend_from_slice(part);
        }
    }

    fn finish(&mut self, out: &mut Vec<Mark>) {
        if self.overflow {
            self.overflow = false;
            return;
        }
        let osc = std::mem::take(&mut self.osc);
        let text = String::from_utf8_lossy(&osc);
        let (code, rest) = text.split_once(';').unwrap_or((&text, ""));
        match code {
            "7" => {
                // A path on another host (a shell over ssh reporting its remote cwd) is not
                // a directory here: ignored.
                if let Some(p) = file_url_path(rest).filter(|(host, _)| is_this_host(host)).map(|(_, p)| p) {
                    out.push(Mark::Cwd(p));
                }
            }
            "133" => {
                let mut parts = rest.split(';');
                match parts.next() {
                    Some("A") => out.push(Mark::PromptStart),
                    Some("B") => out.push(Mark::CommandInput),
                    Some("C") => {
                        let cmd = parts.find_map(|p| p.strip_prefix("cmdline_url=")).map(percent_decode);
                        out.push(Mark::CommandStart(cmd.filter(|c| !c.is_empty())));
                    }
                    Some("D") => out.push(Mark::CommandEnd(parts.next().and_then(|s| s.trim().parse().ok()))),
                    _ => {}
                }
            }
            "9" => {
                // ConEmu's sub-commands (`9;4;…` progress and the like) start with a number.
                let sub = rest.split(';').next().unwrap_or("");
                if !rest.is_empty() && !(rest.contains(';') && sub.bytes().all(|b| b.is_ascii_digit())) {
                    out.push(Mark::Notify { title: String::new(), body: rest.to_string() });
                }
            }
            "777" => {
                let mut parts = rest.splitn(3, ';');
                if parts.next() == Some("notify") {
                    let title = parts.next().unwrap_or("").to_string();
                    let body = parts.next().unwrap_or("").to_string();
                    out.push(Mark::Notify { title, body });
                }
            }
            "99" => self.kitty_notification(rest, out),
            _ => {}
        }
    }

    /// Kitty's `OSC 99 ; metadata ; payload`: metadata `k=v` pairs separated by `:`; `p`
    /// names the payload's part (title by default), `d=0` says more chunks follow, `e=1`
    /// says the payload is base64 (not decoded here: such a part is dropped).
    fn kitty_notification(&mut self, rest: &str, out: &mut Vec<Mark>) {
        let (meta, payload) = rest.split_once(';').unwrap_or((rest, ""));
        let (mut part, mut done, mut base64) = ("title", true, false);
        for kv in meta.split(':') {
            match kv.split_once('=') {
                Some(("p", v)) => {
                    part = if v == "body" {
                        "body"
                    } else if v == "title" {
                        "title"
                    } else {
                        "other"
                    }
                }
                Some(("d", "0")) => done = false,
                Some(("e", "1")) => base64 = true,
                _ => {}
            }
        }
        let (title, body) = self.kitty.get_or_insert_with(Default::default);
        if !base64 {
            let slot = match part {
                "title" => Some(title),
                "body" => Some(body),
                _ => None,
            };
            if let Some(s) = slot {
                if s.len() + payload.len() <= MAX_STRING_BYTES {
                    s.push_str(payload);
                }
            }
        }
        if done {
            let (title, body) = self.kitty.take().unwrap_or_default();
            if !title.is_empty() || !body.is_empty() {
                out.push(Mark::Notify { title, body });
            }
        }
    }
}

/// The host and decoded path of a `file://HOST/PATH` URL (OSC 7); `None` if it is not one.
fn file_url_path(url: &str) -> Option<(&str, String)> {
    let rest = url.strip_prefix("file://")?;
    let slash = rest.find('/')?;
    let path = percent_decode(&rest[slash..]);
    path.starts_with('/').then_some((&rest[..slash], path))
}

/// True if and only if `host` (of an OSC 7 URL) names this machine: empty, `localhost`, or
/// this machine's host name (`gethostname`, compared case-insensitively, also its first label).
fn is_this_host(host: &str) -> bool {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let name = NAME.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it
        // (or the name is cut, which only makes the comparison fail).
        let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
        if ok {
            String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase()
        } else {
            String::new()
        }
    });
    let host = host.to_ascii_lowercase();
    host.is_empty()
        || host == "localhost"
        || (!name.is_empty() && (host == *name || name.split('.').next() == Some(host.as_str())))
}

/// Decodes `%XX` escapes (RFC 3986 §2.1); invalid escapes stay as they are. The bytes are
/// then read as UTF-8 (invalid sequences become U+FFFD).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(chunks: &[&[u8]]) -> Vec<Mark> {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        for c in chunks {
            s.scan(c, &mut out);
        }
        out
    }

    /// Every split of `bytes` into two chunks finds the same marks as one chunk.
    fn same_when_split(bytes: &[u8]) -> Vec<Mark> {
        let whole = scan_all(&[bytes]);
        for k in 0..=bytes.len() {
            assert_eq!(scan_all(&[&bytes[..k], &bytes[k..]]), whole, "split at {k}");
        }
        whole
    }

    #[test]
    fn finds_the_shell_marks_with_either_terminator_across_any_split() {
        let s = b"\x1b]133;A\x07$ \x1b]133;B\x1b\\ls\r\n\x1b]133;C;cmdline_url=ls%20-l\x07out\x1b]133;D;2\x07\x1b]7;file://localhost/tmp/a%20b\x1b\\";
        assert_eq!(
            same_when_split(s),
            vec![
                Mark::PromptStart,
                Mark::CommandInput,
                Mark::CommandStart(Some("ls -l".into())),
                Mark::CommandEnd(Some(2)),
                Mark::Cwd("/tmp/a b".into()),
            ]
        );
    }

    #[test]
    fn a_bell_counts_only_outside_control_strings() {
        // BEL ends the OSC (not a bell); BEL inside a DCS is data; a bare BEL rings.
        let s = b"a\x1b]0;title\x07b\x1bPq\x07#\x1b\\c\x07d\x1b[1m\x07";
        assert_eq!(same_when_split(s), vec![Mark::Bell, Mark::Bell]);
    }

    #[test]
    fn notifications_from_osc_9_777_and_99() {
        let s = b"\x1b]9;Build done\x07\x1b]9;4;1;50\x07\x1b]777;notify;Build;ok; really\x07\x1b]99;i=1:d=0;Title\x1b\\\x1b]99;i=1:p=body;Body\x1b\\";
        assert_eq!(
            same_when_split(s),
            vec![
                Mark::Notify { title: "".into(), body: "Build done".into() },
                Mark::Notify { title: "Build".into(), body: "ok; really".into() },
                Mark::Notify { title: "Title".into(), body: "Body".into() },
            ]
        );
    }

    #[test]
    fn an_overlong_osc_is_skipped_and_the_stream_goes_on() {
        let mut s = b"\x1b]7;file://h/".to_vec();
        s.extend(std::iter::repeat_n(b'x', MAX_STRING_BYTES * 2));
        s.extend_from_slice(b"\x07\x1b]133;A\x07");
        assert_eq!(scan_all(&[&s]), vec![Mark::PromptStart]);
    }

    #[test]
    fn a_cwd_on_another_host_is_ignored() {
        let here = b"\x1b]7;file://localhost/tmp\x07\x1b]7;file://elsewhere.example/srv\x07\x1b]7;file:///var\x07";
        assert_eq!(scan_all(&[here]), vec![Mark::Cwd("/tmp".into()), Mark::Cwd("/var".into())]);
    }

    #[test]
    fn paths_decode_percent_escapes_and_non_ascii() {
        assert_eq!(file_url_path("file://h/home/caf%C3%A9/x%2"), Some(("h", "/home/café/x%2".into())));
        assert_eq!(file_url_path("file:///tmp"), Some(("", "/tmp".into())));
        assert_eq!(file_url_path("http://h/tmp"), None);
        assert_eq!(file_url_path("file://nohostpath"), None);
    }
}
