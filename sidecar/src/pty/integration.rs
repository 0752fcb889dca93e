//! What a terminal's shell integration and attention requests say about it (DESIGN §13,
//! protocol §5.3): its working directory, the command running and the last one's exit status
//! (from the [`Mark`]s its output carries), and the attention events a client shows.
//!
//! One [`Tracker`] per terminal, kept in the terminal's hub (so its events are ordered with
//! the output that carried them).

use std::time::{Duration, Instant};

use super::marks::Mark;
use crate::constants::{ATTENTION_MIN_INTERVAL_MS, LONG_COMMAND_MS};

/// The longest command line or notification text kept, in bytes (longer is cut at a char
/// boundary).
const MAX_TEXT_BYTES: usize = 1024;

/// A terminal's shell state as its integration reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellInfo {
    /// The working directory the shell last reported (OSC 7).
    pub cwd: Option<String>,
    /// True once the output carried an OSC 133 mark: the shell reports prompts and commands.
    pub integration: bool,
    /// The command running now (between OSC 133 C and D), if any.
    pub running: Option<Running>,
    /// The exit status of the last command that reported one (OSC 133 D).
    pub last_exit: Option<i32>,
}

/// A command the shell started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Its command line, when the shell sent it (kitty's `cmdline_url`).
    pub command: Option<String>,
    /// When it started.
    pub started: Instant,
}

/// Something in a terminal that wants the human (protocol §5.3 `attention`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attention {
    /// BEL.
    Bell,
    /// OSC 9, 777 `notify` or 99.
    Notify {
        /// Its title ("" when none).
        title: String,
        /// Its body.
        body: String,
    },
    /// A command that ran at least [`LONG_COMMAND_MS`] ended.
    CommandDone {
        /// Its command line, if known.
        command: Option<String>,
        /// Its exit status, if reported.
        exit: Option<i32>,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
}

/// What applying a batch of marks changed.
#[derive(Debug, Default)]
pub struct Changes {
    /// True if and only if [`ShellInfo`] changed.
    pub shell: bool,
    /// Attention events to deliver, in order (already rate-limited).
    pub attention: Vec<Attention>,
}

/// Follows one terminal's marks.
#[derive(Debug, Default)]
pub struct Tracker {
    info: ShellInfo,
    /// When the last attention event went out ([`ATTENTION_MIN_INTERVAL_MS`] apart at most).
    last_attention: Option<Instant>,
}

impl Tracker {
    /// The current state.
    pub fn info(&self) -> &ShellInfo {
        &self.info
    }

    /// Applies `marks` (in output order) seen at `now`.
    pub fn apply(&mut self, marks: &[Mark], now: Instant) -> Changes {
        let mut ch = Changes::default();
        for m in marks {
            match m {
                Mark::Cwd(p) => {
                    if self.info.cwd.as_deref() != Some(p) {
                        self.info.cwd = Some(p.clone());
                        ch.shell = true;
                    }
                }
                Mark::PromptStart | Mark::CommandInput => {
                    ch.shell |= !self.info.integration;
                    self.info.integration = true;
                    // A prompt while a command "runs": its end was not reported (an
                    // interrupted command in some shells).
                    if self.info.running.take().is_some() {
                        ch.shell = true;
                    }
                }
                Mark::CommandStart(command) => {
                    self.info.integration = true;
                    let command = command.as_deref().map(|c| cut(c.to_string()));
                    self.info.running = Some(Running { command, started: now });
                    ch.shell = true;
                }
                Mark::CommandEnd(exit) => {
                    self.info.integration = true;
                    if let Some(r) = self.info.running.take() {
                        let ran = now.saturating_duration_since(r.started);
                        if ran >= Duration::from_millis(LONG_COMMAND_MS) {
                            let done = Attention::CommandDone {
                                command: r.command,
                                exit: *exit,
                                duration_ms: ran.as_millis() as u64,
                            };
                            self.attend(done, now, &mut ch);
                        }
                    }
                    if exit.is_some() {
                        self.info.last_exit = *exit;
                    }
                    ch.shell = true;
                }
                Mark::Bell => self.attend(Attention::Bell, now, &mut ch),
                Mark::Notify { title, body } => {
                    let a = Attention::Notify { title: cut(title.clone()), body: cut(body.clone()) };
                    self.attend(a, now, &mut ch);
                }
            }
        }
        ch
    }

    /// Queues `a` unless another went out less than [`ATTENTION_MIN_INTERVAL_MS`] ago (a
    /// `yes $'\a'` must not flood anyone).
    fn attend(&mut self, a: Attention, now: Instant, ch: &mut Changes) {
        let gap = Duration::from_millis(ATTENTION_MIN_INTERVAL_MS);
        if self.last_attention.is_some_and(|t| now.saturating_duration_since(t) < gap) {
            return;
        }
        self.last_attention = Some(now);
        ch.attention.push(a);
    }
}

fn cut(mut s: String) -> String {
    if s.len() > MAX_TEXT_BYTES {
        let mut end = MAX_TEXT_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_runs_between_c_and_d_and_leaves_its_status() {
        let mut t = Tracker::default();
        let t0 = Instant::now();
        let ch = t.apply(&[Mark::PromptStart, Mark::CommandInput, Mark::CommandStart(Some("sleep 2".into()))], t0);
        assert!(ch.shell && ch.attention.is_empty());
        assert_eq!(t.info().running.as_ref().and_then(|r| r.command.as_deref()), Some("sleep 2"));
        t.apply(&[Mark::CommandEnd(Some(1)), Mark::Cwd("/tmp".into())], t0 + Duration::from_secs(2));
        assert_eq!(t.info().running, None);
        assert_eq!(t.info().last_exit, Some(1));
        assert_eq!(t.info().cwd.as_deref(), Some("/tmp"));
        assert!(t.info().integration);
    }

    #[test]
    fn a_long_command_ending_wants_attention() {
        let mut t = Tracker::default();
        let t0 = Instant::now();
        t.apply(&[Mark::CommandStart(Some("make".into()))], t0);
        let ch = t.apply(&[Mark::CommandEnd(Some(0))], t0 + Duration::from_millis(LONG_COMMAND_MS));
        assert_eq!(
            ch.attention,
            vec![Attention::CommandDone { command: Some("make".into()), exit: Some(0), duration_ms: LONG_COMMAND_MS }]
        );
        t.apply(&[Mark::CommandStart(None)], t0 + Duration::from_secs(100));
        let ch = t.apply(&[Mark::CommandEnd(Some(0))], t0 + Duration::from_secs(101));
        assert!(ch.attention.is_empty(), "a short command does not");
    }

    #[test]
    fn attention_is_rate_limited() {
        let mut t = Tracker::default();
        let t0 = Instant::now();
        let ch = t.apply(&vec![Mark::Bell; 1000], t0);
        assert_eq!(ch.attention, vec![Attention::Bell]);
        let ch = t.apply(&[Mark::Bell], t0 + Duration::from_millis(ATTENTION_MIN_INTERVAL_MS - 1));
        assert!(ch.attention.is_empty());
        let ch = t.apply(&[Mark::Bell], t0 + Duration::from_millis(ATTENTION_MIN_INTERVAL_MS));
        assert_eq!(ch.attention, vec![Attention::Bell]);
    }
}
