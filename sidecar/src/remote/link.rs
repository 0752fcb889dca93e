//! The local side of a remote workspace (protocol §11.4): one `ssh` per host running the
//! remote's attach relay, a yamux session (client side) on its stdio, and the reconnect loop.
//!
//! ssh is the system's (`ssh` on `PATH`): the user's config, agent, jump hosts and known hosts
//! apply. It runs in its own session (`setsid`), so it has no controlling terminal and can
//! never prompt on the terminal the sidecar was started from.

use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch, Notify};

use super::frame::{read_line, Reply, Target};
use super::host::SshHost;
use super::install;
use super::mux::{self, MuxStream};

/// How long the hello line may take after ssh starts.
pub const HELLO_BOUND: Duration = Duration::from_secs(10);
/// How often a connected link measures its round trip (`GET /api/health` on an `api` stream).
pub const PING_EVERY: Duration = Duration::from_secs(5);
/// A ping (or a stream open) slower than this ends the session (ssh is killed, the link
/// reconnects).
pub const PING_BOUND: Duration = Duration::from_secs(10);
/// Longest wait between two reconnect attempts (they start at 250 ms and double).
pub const MAX_BACKOFF: Duration = Duration::from_secs(15);
/// A link still reconnecting after this long is `lost` (it keeps trying every 15 s).
pub const LOST_AFTER: Duration = Duration::from_secs(60);
/// Bytes of ssh's stderr kept (the tail), for errors.
pub const STDERR_TAIL: usize = 8 * 1024;

/// How links start ssh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOptions {
    /// The ssh client (`ssh`, found on `PATH`).
    pub ssh: PathBuf,
    /// `-F PATH` for ssh (`--ssh-config` / `$PORTHOLE_SSH_CONFIG`): a test and power-user knob.
    pub ssh_config: Option<PathBuf>,
    /// The remote binary as the remote shell finds it (`$PORTHOLE_REMOTE_BIN`, else
    /// [`super::install::default_remote_bin`]).
    pub remote_bin: String,
    /// The local binary to install at `remote_bin` when the remote lacks it
    /// ([`super::install`]); `None` when `$PORTHOLE_REMOTE_BIN` names the remote binary (a
    /// path the user chose is never written).
    pub install: Option<PathBuf>,
}

impl LinkOptions {
    /// Options from the environment: `$PORTHOLE_REMOTE_BIN`, and `ssh_config` (the flag) or
    /// else `$PORTHOLE_SSH_CONFIG`.
    pub fn from_env(ssh_config: Option<PathBuf>) -> LinkOptions {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        LinkOptions {
            ssh: PathBuf::from("ssh"),
            ssh_config: ssh_config.or_else(|| var("PORTHOLE_SSH_CONFIG").map(PathBuf::from)),
            install: match var("PORTHOLE_REMOTE_BIN") {
                Some(_) => None,
                None => install::this_binary(),
            },
            remote_bin: var("PORTHOLE_REMOTE_BIN").unwrap_or_else(install::default_remote_bin),
        }
    }

    /// ssh's argument list for `host` (everything after the program name): the relay.
    pub fn ssh_args(&self, host: &SshHost) -> Vec<String> {
        // The remote shell reads this: the path is quoted as one word, and a relative one is
        // the remote HOME's (not the session's working directory).
        let quoted = format!("'{}'", self.remote_bin.replace('\'', r"'\''"));
        let bin = if self.remote_bin.starts_with('/') { quoted } else { format!("\"$HOME\"/{quoted}") };
        self.ssh_args_for(host, &format!("{bin} --remote-attach"))
    }

    /// ssh's argument list for running the shell command line `remote` on `host`.
    pub fn ssh_args_for(&self, host: &SshHost, remote: &str) -> Vec<String> {
        let mut a: Vec<String> =
            ["-T", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"].map(String::from).into();
        if let Some(f) = &self.ssh_config {
            a.push("-F".into());
            a.push(f.to_string_lossy().into_owned());
        }
        if let Some(p) = host.port {
            a.push("-p".into());
            a.push(p.to_string());
        }
        a.push(host.destination.clone());
        a.push("--".into());
        a.push(remote.to_string());
        a
    }
}

/// The relay's hello line (protocol §11.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Always `"remote"`.
    pub porthole: String,
    /// The remote binary's version.
    pub version: String,
    /// Its protocol version.
    pub protocol: u32,
    /// The remote daemon's API token (never shown by the API).
    #[serde(skip_serializing)]
    pub token: String,
    /// `linux`, …
    pub os: String,
    /// `x86_64`, `aarch64`, …
    pub arch: String,
    /// The remote daemon's process id (on the remote).
    pub daemon_pid: u32,
}

/// Why a link could not connect, or a stream could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkError {
    /// Occurs when the host is not an acceptable ssh destination. API: 400 `bad_host`.
    BadHost(String),
    /// Occurs when ssh failed or gave no hello line within 10 s (holds ssh's stderr tail).
    /// API: 502 `remote_unreachable`.
    Unreachable(String),
    /// Occurs when the remote shell could not run the remote binary (exit 126/127; holds
    /// ssh's stderr tail). API: 502 `remote_binary_missing`.
    BinaryMissing(String),
    /// Occurs when ssh refused the host key (unknown or changed; holds ssh's stderr lines).
    /// API: 409 `host_key`.
    HostKey(String),
    /// Occurs when the remote lacks the binary and is a platform this Porthole has no
    /// `porthole-sidecar` for (names it). API: 409 `remote_platform_unsupported`.
    Unsupported(String),
    /// Occurs when 16 links exist already. API: 409 `too_many_remotes`.
    TooMany,
    /// Occurs when the link is not connected (reconnecting or lost). API: 503
    /// `remote_disconnected`.
    Disconnected,
    /// Occurs when the relay refused a stream (`err <code> <message>`). API: 502 with that
    /// code.
    Refused {
        /// The relay's code (`connect_failed`, `bad_header`).
        code: String,
        /// The relay's message.
        message: String,
    },
}

impl LinkError {
    /// The stable error code.
    pub fn code(&self) -> &str {
        match self {
            LinkError::BadHost(_) => "bad_host",
            LinkError::Unreachable(_) => "remote_unreachable",
            LinkError::BinaryMissing(_) => "remote_binary_missing",
            LinkError::HostKey(_) => "host_key",
            LinkError::Unsupported(_) => "remote_platform_unsupported",
            LinkError::TooMany => "too_many_remotes",
            LinkError::Disconnected => "remote_disconnected",
            LinkError::Refused { code, .. } => code,
        }
    }
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkError::BadHost(m) => write!(f, "bad host: {m}"),
            LinkError::Unreachable(t) => write!(f, "ssh could not reach the remote: {t}"),
            LinkError::BinaryMissing(t) => write!(f, "the remote has no porthole-sidecar at the expected path: {t}"),
            LinkError::HostKey(t) => write!(f, "ssh refused the remote's host key: {t}"),
            LinkError::Unsupported(p) => write!(f, "no porthole-sidecar for the remote's platform: {p}"),
            LinkError::TooMany => f.write_str("16 remote links exist already"),
            LinkError::Disconnected => f.write_str("the link to the remote is not connected"),
            LinkError::Refused { code, message } => write!(f, "the remote refused the stream ({code}): {message}"),
        }
    }
}

impl std::error::Error for LinkError {}

/// A link's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    /// The session is up.
    Connected,
    /// The session ended; reconnecting with backoff.
    Reconnecting,
    /// Still not reconnected after 60 s (it keeps trying every 15 s).
    Lost,
}

/// What `GET /api/remotes/{id}` shows of a link.
#[derive(Debug, Clone, Serialize)]
pub struct LinkStatus {
    /// The host as given.
    pub host: String,
    /// The state.
    pub state: LinkState,
    /// When the state began, Unix milliseconds.
    pub since: u64,
    /// The last measured round trip (`GET /api/health` through the tunnel), milliseconds.
    pub rtt_ms: Option<f64>,
    /// The running ssh's process id (local), while connected.
    pub ssh_pid: Option<u32>,
    /// The remote as its last hello described it.
    pub remote: Hello,
    /// Why the last reconnect attempt failed, if one did.
    pub last_error: Option<String>,
    /// How many times the link has reconnected since it was made.
    pub reconnects: u32,
}

/// A running ssh: its pid, whether it has exited, its stderr tail.
struct Ssh {
    pid: u32,
    exited: Arc<Mutex<bool>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
}

impl Ssh {
    fn kill(&self) {
        let gone = self.exited.lock().unwrap_or_else(|e| e.into_inner());
        if !*gone {
            // SAFETY: kill(2) on our own unreaped child (the lock keeps the reaper out).
            unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
        }
    }

    fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&t.iter().copied().collect::<Vec<u8>>()).trim().to_string()
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One connected session: the hello, the ssh, the way to open streams, its end.
struct Session {
    hello: Hello,
    ssh: Arc<Ssh>,
    opens: mpsc::Sender<mux::OpenRequest>,
    ended: watch::Receiver<bool>,
}

/// [`establish`], and when the remote lacks the binary and `opts.install` names one, installs
/// it ([`super::install`]) and establishes again.
async fn establish_or_install(host: &SshHost, opts: &LinkOptions) -> Result<Session, LinkError> {
    match (establish(host, opts).await, &opts.install) {
        (Err(LinkError::BinaryMissing(_)), Some(local)) => {
            let mut args = opts.ssh_args_for(host, "");
            args.pop();
            let to = install::Target { ssh: opts.ssh.clone(), args, remote_bin: opts.remote_bin.clone() };
            install::install(&to, local).await.map_err(|e| match e {
                install::InstallError::Unsupported(p) => LinkError::Unsupported(p),
                install::InstallError::Failed(m) => LinkError::Unreachable(m),
            })?;
            establish(host, opts).await
        }
        (r, _) => r,
    }
}

/// Starts ssh, reads the hello line and starts the yamux client on its stdio.
async fn establish(host: &SshHost, opts: &LinkOptions) -> Result<Session, LinkError> {
    let mut cmd = Command::new(&opts.ssh);
    cmd.args(opts.ssh_args(host)).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: setsid and prctl are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            // In its own session ssh is out of the sidecar's process group, so a SIGKILLed
            // sidecar would leave it (and the remote relay, whose link.sock holds off the
            // daemon's grace) running: it dies with the thread that spawned it, a runtime
            // worker that lives as long as the sidecar.
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| LinkError::Unreachable(format!("cannot run ssh: {e}")))?;
    let (stdin, stdout, mut stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(i), Some(o), Some(e)) => (i, o, e),
        _ => return Err(LinkError::Unreachable("ssh's pipes are missing".into())),
    };
    let exited = Arc::new(Mutex::new(false));
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let (code_tx, mut code_rx) = watch::channel(None::<Option<i32>>);
    let (err_done_tx, err_done) = oneshot::channel::<()>();
    {
        let tail = tail.clone();
        std::thread::spawn(move || {
            let mut b = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut b) {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                t.extend(&b[..n]);
                while t.len() > STDERR_TAIL {
                    t.pop_front();
                }
            }
            let _ = err_done_tx.send(());
        });
    }
    let pid = child.id();
    {
        let exited = exited.clone();
        std::thread::spawn(move || {
            // Reaped under the lock, so `Ssh::kill` never signals a reused pid.
            let status = loop {
                let mut gone = exited.lock().unwrap_or_else(|e| e.into_inner());
                match child.try_wait() {
                    Ok(Some(s)) => {
                        *gone = true;
                        break Some(s);
                    }
                    Ok(None) => {}
                    Err(_) => {
                        *gone = true;
                        break None;
                    }
                }
                drop(gone);
                std::thread::sleep(Duration::from_millis(25));
            };
            let _ = code_tx.send(Some(status.and_then(|s| s.code())));
        });
    }
    let ssh = Arc::new(Ssh { pid, exited, stderr: tail });
    let io = (|| {
        let rx = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(stdout))?;
        let tx = tokio::net::unix::pipe::Sender::from_owned_fd(OwnedFd::from(stdin))?;
        Ok::<_, std::io::Error>((rx, tx))
    })();
    let (mut rx, tx) = io.map_err(|e| LinkError::Unreachable(format!("ssh's pipes: {e}")))?;
    // A remote rc file may print before the relay runs (bash sources ~/.bashrc for ssh
    // commands): up to 64 lines that are not the hello are skipped.
    let hello_line = async {
        for _ in 0..64 {
            match read_line(&mut rx).await {
                Ok(Some(l)) => match serde_json::from_str::<Hello>(&l) {
                    Ok(h) if h.porthole == "remote" => return Some(h),
                    _ => continue,
                },
                _ => return None,
            }
        }
        None
    };
    let hello = match tokio::time::timeout(HELLO_BOUND, hello_line).await {
        Ok(h) => h,
        Err(_) => {
            ssh.kill();
            return Err(LinkError::Unreachable(format!(
                "no hello line from the remote within {} s; ssh said: {}",
                HELLO_BOUND.as_secs(),
                ssh.stderr_tail()
            )));
        }
    };
    let Some(hello) = hello else {
        // ssh ended (or printed something else): wait for its exit and its last stderr.
        let _ = tokio::time::timeout(Duration::from_secs(3), code_rx.wait_for(|c| c.is_some())).await;
        ssh.kill();
        let _ = tokio::time::timeout(Duration::from_secs(1), err_done).await;
        let code = code_rx.borrow().flatten();
        let tail = ssh.stderr_tail();
        return Err(classify(code, tail));
    };
    let (opens, opens_rx) = mpsc::channel(64);
    let (ended_tx, ended) = watch::channel(false);
    let driver_ssh = ssh.clone();
    tokio::spawn(async move {
        let r = mux::drive(tokio::io::join(rx, tx), yamux::Mode::Client, opens_rx, drop).await;
        tracing::info!(pid = driver_ssh.pid, "remote session ended: {r:?}");
        driver_ssh.kill();
        let _ = ended_tx.send(true);
    });
    Ok(Session { hello, ssh, opens, ended })
}

/// The error for an ssh that gave no hello: exit 126/127 is the remote shell's "not found /
/// not executable"; a refused host key is recognised in ssh's stderr; anything else is
/// unreachable.
fn classify(code: Option<i32>, tail: String) -> LinkError {
    let lower = tail.to_ascii_lowercase();
    if matches!(code, Some(126 | 127)) {
        return LinkError::BinaryMissing(tail);
    }
    if lower.contains("host key verification failed")
        || lower.contains("remote host identification has changed")
        || lower.contains("no matching host key")
        || lower.contains("host key for ")
    {
        return LinkError::HostKey(tail);
    }
    let tail = if tail.is_empty() { format!("ssh exited with {code:?} and said nothing") } else { tail };
    LinkError::Unreachable(tail)
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

struct Inner {
    state: LinkState,
    since: u64,
    rtt_ms: Option<f64>,
    hello: Hello,
    session: Option<Arc<Session>>,
    last_error: Option<String>,
    reconnects: u32,
}

/// A link to one remote host: connected, or reconnecting by itself.
pub struct Link {
    host: SshHost,
    opts: LinkOptions,
    inner: Mutex<Inner>,
    retry: Notify,
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Link {
    /// Connects to `host` (ssh, hello line, yamux) and starts the reconnect loop. Errors: see
    /// [`LinkError`]; nothing is left running on error. Must run inside a tokio runtime.
    pub async fn connect(host: SshHost, opts: LinkOptions) -> Result<Arc<Link>, LinkError> {
        let session = establish_or_install(&host, &opts).await?;
        let link = Arc::new(Link {
            host,
            opts,
            inner: Mutex::new(Inner {
                state: LinkState::Connected,
                since: now_ms(),
                rtt_ms: None,
                hello: session.hello.clone(),
                session: Some(Arc::new(session)),
                last_error: None,
                reconnects: 0,
            }),
            retry: Notify::new(),
            supervisor: Mutex::new(None),
        });
        let task = tokio::spawn(supervise(link.clone()));
        *link.supervisor.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(link)
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The link's status now.
    pub fn status(&self) -> LinkStatus {
        let i = self.inner();
        LinkStatus {
            host: self.host.spec.clone(),
            state: i.state,
            since: i.since,
            rtt_ms: i.rtt_ms,
            ssh_pid: i.session.as_ref().map(|s| s.ssh.pid),
            remote: i.hello.clone(),
            last_error: i.last_error.clone(),
            reconnects: i.reconnects,
        }
    }

    /// Skips the backoff wait: a reconnecting or lost link tries again now. No effect while
    /// connected.
    pub fn reconnect_now(&self) {
        if self.inner().state != LinkState::Connected {
            self.retry.notify_one();
        }
    }

    /// Ends the link: stops reconnecting and kills ssh. The remote daemon keeps running until
    /// its grace period ends.
    pub fn close(&self) {
        if let Some(t) = self.supervisor.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.abort();
        }
        let mut i = self.inner();
        if let Some(s) = i.session.take() {
            s.ssh.kill();
        }
        i.state = LinkState::Lost;
        i.since = now_ms();
    }

    /// Opens a stream to `target` on the remote. Errors: [`LinkError::Disconnected`] at once
    /// when not connected (or when the session ends meanwhile, or takes over 10 s), or
    /// [`LinkError::Refused`].
    pub async fn open(&self, target: &Target) -> Result<MuxStream, LinkError> {
        Ok(self.open_with_token(target).await?.0)
    }

    /// As [`Link::open`], with the remote daemon's API token of the session the stream
    /// belongs to.
    pub async fn open_with_token(&self, target: &Target) -> Result<(MuxStream, String), LinkError> {
        let session = {
            let i = self.inner();
            match (&i.session, i.state) {
                (Some(s), LinkState::Connected) => s.clone(),
                _ => return Err(LinkError::Disconnected),
            }
        };
        let opened = async {
            let (tx, rx) = oneshot::channel();
            session.opens.send(tx).await.map_err(|_| LinkError::Disconnected)?;
            let mut s = rx.await.map_err(|_| LinkError::Disconnected)?.map_err(|_| LinkError::Disconnected)?;
            s.write_all(target.header().as_bytes()).await.map_err(|_| LinkError::Disconnected)?;
            s.flush().await.map_err(|_| LinkError::Disconnected)?;
            match read_line(&mut s).await {
                Ok(Some(l)) => match Reply::parse(&l) {
                    Reply::Ok => Ok(s),
                    Reply::Err { code, message } => Err(LinkError::Refused { code, message }),
                },
                _ => Err(LinkError::Disconnected),
            }
        };
        let s = tokio::time::timeout(PING_BOUND, opened).await.map_err(|_| LinkError::Disconnected)??;
        Ok((s, session.hello.token.clone()))
    }

    /// Sends one bodiless request to the remote daemon's API (`Connection: close`) and
    /// returns its status code. Errors as [`Link::open`].
    pub async fn api_request(&self, method: &str, path: &str) -> Result<u16, LinkError> {
        let (mut s, token) = self.open_with_token(&Target::Api).await?;
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let go = async {
            s.write_all(req.as_bytes()).await?;
            let mut buf = Vec::new();
            s.read_to_end(&mut buf).await?;
            Ok::<_, std::io::Error>(buf)
        };
        let buf = tokio::time::timeout(PING_BOUND, go)
            .await
            .map_err(|_| LinkError::Disconnected)?
            .map_err(|_| LinkError::Disconnected)?;
        let head = String::from_utf8_lossy(&buf[..buf.len().min(32)]).to_string();
        head.split(' ').nth(1).and_then(|c| c.parse().ok()).ok_or(LinkError::Disconnected)
    }

    /// Asks the remote daemon to shut down now (`POST /api/shutdown` through the link).
    pub async fn hangup(&self) -> Result<(), LinkError> {
        self.api_request("POST", "/api/shutdown").await.map(|_| ())
    }
}

/// The reconnect loop: while connected, pings every 5 s; when the session ends (or a ping
/// fails), reconnects with backoff 0.25 s, 0.5, 1, 2, 4 … 15 s.
async fn supervise(link: Arc<Link>) {
    loop {
        let Some(session) = link.inner().session.clone() else { return };
        let mut ended = session.ended.clone();
        loop {
            tokio::select! {
                _ = async { let _ = ended.wait_for(|e| *e).await; } => break,
                _ = tokio::time::sleep(PING_EVERY) => {
                    let start = Instant::now();
                    match link.api_request("GET", "/api/health").await {
                        Ok(200) => link.inner().rtt_ms = Some(start.elapsed().as_secs_f64() * 1000.0),
                        r => {
                            tracing::info!(host = %link.host.spec, "ping failed ({r:?}); reconnecting");
                            session.ssh.kill();
                            break;
                        }
                    }
                }
            }
        }
        session.ssh.kill();
        drop(session);
        {
            let mut i = link.inner();
            i.session = None;
            i.state = LinkState::Reconnecting;
            i.since = now_ms();
            i.rtt_ms = None;
        }
        let started = Instant::now();
        let mut delay = Duration::from_millis(250);
        loop {
            match establish_or_install(&link.host, &link.opts).await {
                Ok(s) => {
                    let mut i = link.inner();
                    i.hello = s.hello.clone();
                    i.session = Some(Arc::new(s));
                    i.state = LinkState::Connected;
                    i.since = now_ms();
                    i.last_error = None;
                    i.reconnects += 1;
                    break;
                }
                Err(e) => {
                    let mut i = link.inner();
                    i.last_error = Some(format!("{}: {e}", e.code()));
                    if i.state == LinkState::Reconnecting && started.elapsed() >= LOST_AFTER {
                        i.state = LinkState::Lost;
                        i.since = now_ms();
                    }
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = link.retry.notified() => {}
            }
            delay = (delay * 2).min(MAX_BACKOFF);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_gets_the_host_after_its_options_and_the_binary_as_one_word() {
        let o = LinkOptions {
            ssh: "ssh".into(),
            ssh_config: Some("/t/ssh_config".into()),
            remote_bin: "/opt/it's/porthole-sidecar".into(),
            install: None,
        };
        let a = o.ssh_args(&SshHost::parse("me@h:2200").unwrap());
        let tail: Vec<&str> = a.iter().map(|s| s.as_str()).skip(5).collect();
        assert_eq!(
            tail,
            ["-F", "/t/ssh_config", "-p", "2200", "me@h", "--", r"'/opt/it'\''s/porthole-sidecar' --remote-attach"]
        );
        assert_eq!(a[0], "-T");
        // A relative binary is the remote HOME's, whatever directory the session starts in.
        let rel = LinkOptions { remote_bin: ".local/share/porthole/bin/0.1.0/porthole-sidecar".into(), ..o };
        let a = rel.ssh_args(&SshHost::parse("h").unwrap());
        assert_eq!(a.last().unwrap(), r#""$HOME"/'.local/share/porthole/bin/0.1.0/porthole-sidecar' --remote-attach"#);
    }

    #[test]
    fn ssh_failures_are_classified() {
        assert_eq!(classify(Some(127), "sh: 1: x: not found".into()).code(), "remote_binary_missing");
        assert_eq!(classify(Some(255), "Host key verification failed.".into()).code(), "host_key");
        assert_eq!(classify(Some(255), "Connection refused".into()).code(), "remote_unreachable");
        assert_eq!(classify(None, String::new()).code(), "remote_unreachable");
    }
}
