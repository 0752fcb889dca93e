//! Logging setup: `tracing` to stderr, and to `--log-file` as well when given. Stdout is
//! reserved for the ready line.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Writes each log record to stderr and, if set, appends it to a file.
#[derive(Clone)]
struct Sink {
    file: Option<Arc<Mutex<File>>>,
}

/// One record's writer (see [`Sink`]).
struct SinkWriter {
    file: Option<Arc<Mutex<File>>>,
}

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        if let Some(f) = &self.file {
            let _ = f.lock().unwrap_or_else(|p| p.into_inner()).write_all(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Sink {
    type Writer = SinkWriter;

    fn make_writer(&'a self) -> SinkWriter {
        SinkWriter { file: self.file.clone() }
    }
}

/// Installs the global subscriber. Level from `PORTHOLE_LOG` (`error`…`trace`, default
/// `info`). Errors if the log file cannot be opened for appending.
pub fn init(log_file: Option<&Path>) -> std::io::Result<()> {
    let file = match log_file {
        Some(p) => Some(Arc::new(Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(p)?))),
        None => None,
    };
    let level = std::env::var("PORTHOLE_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let _ = tracing_subscriber::fmt().with_max_level(level).with_writer(Sink { file }).finish().with(targets()).try_init();
    Ok(())
}

/// Which modules' records are kept. chromiumoxide's CDP handler logs each socket error and
/// unparsable message before handing it to our handler loop (`browser/slot/lifecycle.rs`),
/// which logs it at the level it deserves: a window the user closed ends its socket with
/// "connection reset", which chromiumoxide would log as an ERROR ("WS Connection error").
fn targets() -> Targets {
    Targets::new().with_default(LevelFilter::TRACE).with_target("chromiumoxide::handler", LevelFilter::OFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdp_handlers_own_error_lines_are_left_to_our_handler_loop() {
        let t = targets();
        assert!(!t.would_enable("chromiumoxide::handler", &tracing::Level::ERROR));
        assert!(t.would_enable("chromiumoxide::conn", &tracing::Level::WARN));
        assert!(t.would_enable("sidecar::browser::slot::lifecycle", &tracing::Level::DEBUG));
    }
}
