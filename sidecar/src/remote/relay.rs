//! `porthole-sidecar --remote-attach` (protocol §11.1): the only command `ssh` runs on the
//! remote. Finds or starts the daemon, prints the hello line, then serves a yamux session
//! (server side) on stdin/stdout whose streams it splices to the daemon's API socket or to a
//! TCP connection made from the remote.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::mpsc;

use super::daemon::RunDir;
use super::frame::{read_line, Reply, Target};
use super::mux::{self, MuxStream};

/// How long the relay waits for a daemon it started to accept on `api.sock`.
pub const DAEMON_START_BOUND: Duration = Duration::from_secs(10);

/// The hello line's fields (protocol §11.1), as the relay prints them.
pub fn hello_line(token: &str, daemon_pid: u32) -> String {
    serde_json::json!({
        "porthole": "remote",
        "version": env!("CARGO_PKG_VERSION"),
        "protocol": crate::constants::PROTOCOL_VERSION,
        "token": token,
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "daemon_pid": daemon_pid,
    })
    .to_string()
}

/// An exclusive `flock` on the run directory's `lock`, released on drop.
struct Lock(std::fs::File);

impl Lock {
    fn take(run: &RunDir) -> io::Result<Lock> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).open(run.lock())?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Lock(f))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: as above.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Past this size, in bytes, `daemon.log` becomes `daemon.log.1` (replacing the one before)
/// when the next daemon starts.
const MAX_LOG_BYTES: u64 = 1024 * 1024;

/// Ensures a daemon answers on `api.sock`, starting one (`setsid`, stdin `/dev/null`, output
/// appended to `daemon.log`, rotated once past [`MAX_LOG_BYTES`]) under the lock when none does. Returns its token and pid.
async fn ensure_daemon(run: &RunDir) -> io::Result<(String, u32)> {
    let _lock = Lock::take(run)?;
    if UnixStream::connect(run.api_sock()).await.is_err() {
        // A daemon that died without cleaning up left these; the new one's must not be
        // mistaken for them.
        let _ = std::fs::remove_file(run.token());
        let _ = std::fs::remove_file(run.pid());
        // One generation of the log is kept: a daemon started afresh for years must not fill
        // the remote's disk.
        if std::fs::metadata(run.log()).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            let _ = std::fs::rename(run.log(), run.log().with_extension("log.1"));
        }
        let log = std::fs::OpenOptions::new().create(true).append(true).open(run.log())?;
        let exe = std::env::current_exe()?;
        let mut cmd = Command::new(exe);
        cmd.arg("--remote-daemon").stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log);
        // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        // The daemon is not our child to wait for: reap it if it exits while we live (it
        // runs in its own session and outlives us).
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        let start = Instant::now();
        loop {
            if UnixStream::connect(run.api_sock()).await.is_ok() && run.token().is_file() && run.pid().is_file() {
                break;
            }
            if start.elapsed() > DAEMON_START_BOUND {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the daemon did not start within 10 s"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let token = std::fs::read_to_string(run.token())?.trim().to_string();
    let pid = std::fs::read_to_string(run.pid())?.trim().parse().unwrap_or(0);
    Ok((token, pid))
}

/// Serves one inbound stream: reads its header, connects, answers, splices.
async fn serve_stream(run: RunDir, mut s: MuxStream) {
    let line = match read_line(&mut s).await {
        Ok(Some(l)) => l,
        Ok(None) => return,
        Err(e) => {
            let r = Reply::Err { code: "bad_header".into(), message: e.to_string() };
            let _ = s.write_all(r.line().as_bytes()).await;
            return;
        }
    };
    let target = match Target::parse(&line) {
        Ok(t) => t,
        Err(e) => {
            let r = Reply::Err { code: "bad_header".into(), message: e.to_string() };
            let _ = s.write_all(r.line().as_bytes()).await;
            return;
        }
    };
    let failed = |e: io::Error| Reply::Err { code: "connect_failed".into(), message: e.to_string() };
    match target {
        Target::Api => match UnixStream::connect(run.api_sock()).await {
            Ok(mut up) => {
                if s.write_all(Reply::Ok.line().as_bytes()).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut s, &mut up).await;
                }
            }
            Err(e) => {
                let _ = s.write_all(failed(e).line().as_bytes()).await;
            }
        },
        Target::Tcp { host, port } => {
            match tokio::time::timeout(Duration::from_secs(10), TcpStream::connect((host.as_str(), port))).await {
                Ok(Ok(mut up)) => {
                    let _ = up.set_nodelay(true);
                    if s.write_all(Reply::Ok.line().as_bytes()).await.is_ok() {
                        let _ = tokio::io::copy_bidirectional(&mut s, &mut up).await;
                    }
                }
                Ok(Err(e)) => {
                    let _ = s.write_all(failed(e).line().as_bytes()).await;
                }
                Err(_) => {
                    let e = io::Error::new(io::ErrorKind::TimedOut, "connect timed out after 10 s");
                    let _ = s.write_all(failed(e).line().as_bytes()).await;
                }
            }
        }
    }
    let _ = s.shutdown().await;
}

/// Runs the attach relay until stdin ends, the session fails or the daemon goes away.
/// Errors: the run directory, the daemon's start, or stdio.
pub async fn attach() -> io::Result<()> {
    let run = RunDir::open()?;
    let (token, pid) = ensure_daemon(&run).await?;
    // Held while we live: the daemon's grace timer runs while nobody holds one.
    let mut link = UnixStream::connect(run.link_sock()).await?;
    // SAFETY: fds 0 and 1 are ours for the life of the process; nothing else in this process
    // reads stdin or writes stdout (logs go to stderr).
    let (stdin, stdout) = unsafe { (OwnedFd::from_raw_fd(0), OwnedFd::from_raw_fd(1)) };
    // tokio's "unchecked" pipes (stdio may be a pipe or a socket) leave O_NONBLOCK to us: a
    // blocking read would hold the yamux driver while the other side waits for our frames.
    for fd in [0, 1] {
        // SAFETY: fcntl on our own stdio descriptors.
        let ok = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
        };
        if !ok {
            return Err(io::Error::last_os_error());
        }
    }
    let rx = tokio::net::unix::pipe::Receiver::from_owned_fd_unchecked(stdin)?;
    let mut tx = tokio::net::unix::pipe::Sender::from_owned_fd_unchecked(stdout)?;
    tx.write_all(format!("{}\n", hello_line(&token, pid)).as_bytes()).await?;
    tx.flush().await?;
    let (_opens, none) = mpsc::channel(1);
    let session = mux::drive(tokio::io::join(rx, tx), yamux::Mode::Server, none, move |s| {
        tokio::spawn(serve_stream(run.clone(), s));
    });
    let mut b = [0u8; 16];
    let daemon_gone = async {
        use tokio::io::AsyncReadExt;
        while matches!(link.read(&mut b).await, Ok(n) if n > 0) {}
    };
    tokio::select! {
        r = session => if let Err(e) = r { tracing::info!("session ended: {e}") },
        _ = daemon_gone => tracing::info!("the daemon went away"),
    }
    Ok(())
}
