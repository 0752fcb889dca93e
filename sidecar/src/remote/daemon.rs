//! The remote daemon's files and its grace timer (protocol §11.2). The daemon itself
//! (`porthole-sidecar --remote-daemon`) is `crate::run_remote_daemon`, which serves the API on
//! [`RunDir::api_sock`]; this file knows nothing of HTTP.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::UnixListener;
use tokio::sync::watch;

/// Environment override of `[remote] grace`, in seconds (tests).
pub const GRACE_ENV: &str = "PORTHOLE_REMOTE_GRACE_S";

/// The run directory (`super::run_dir`) and the names of its files.
#[derive(Debug, Clone)]
pub struct RunDir(pub PathBuf);

impl RunDir {
    /// The run directory of this user, created 0700. Errors: no `HOME`/XDG variable
    /// (`NotFound`), or creating it failed.
    pub fn open() -> io::Result<RunDir> {
        let dir =
            super::run_dir().ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no HOME or XDG directory"))?;
        super::create_private_dir(&dir)?;
        Ok(RunDir(dir))
    }
    /// `api.sock`: the daemon's API (HTTP/1.1), mode 0600.
    pub fn api_sock(&self) -> PathBuf {
        self.0.join("api.sock")
    }
    /// `link.sock`: an attach relay holds a connection here while it lives (grace).
    pub fn link_sock(&self) -> PathBuf {
        self.0.join("link.sock")
    }
    /// `token`: the daemon's API token (64 hex digits), mode 0600.
    pub fn token(&self) -> PathBuf {
        self.0.join("token")
    }
    /// `daemon.pid`: the daemon's process id.
    pub fn pid(&self) -> PathBuf {
        self.0.join("daemon.pid")
    }
    /// `daemon.log`: the daemon's stdout and stderr, appended.
    pub fn log(&self) -> PathBuf {
        self.0.join("daemon.log")
    }
    /// `lock`: `flock`ed by an attach relay while it finds or starts the daemon.
    pub fn lock(&self) -> PathBuf {
        self.0.join("lock")
    }
    /// Removes the daemon's files (at its exit); missing ones are fine.
    pub fn remove_daemon_files(&self) {
        for p in [self.api_sock(), self.link_sock(), self.token(), self.pid()] {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Writes `contents` to `path` with mode 0600 (replacing the file, so an old mode never
/// survives).
pub fn write_private(path: &Path, contents: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(contents.as_bytes())
}

/// Sets mode 0600 on `path` (the API socket after bind).
pub fn make_private(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

/// The grace period: `$PORTHOLE_REMOTE_GRACE_S` when it is a positive number of seconds,
/// else `configured` (`[remote] grace`, seconds).
pub fn grace_period(configured: u64) -> Duration {
    let env = std::env::var(GRACE_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|s| *s > 0);
    Duration::from_secs(env.unwrap_or(configured))
}

/// The grace timer on `link.sock`: counts the attach relays connected there.
pub struct Grace {
    attached: watch::Receiver<usize>,
    period: Duration,
}

impl Grace {
    /// Binds `link.sock` (replacing a stale one) and starts counting relays. Must run inside
    /// a tokio runtime.
    pub fn listen(run: &RunDir, period: Duration) -> io::Result<Grace> {
        let path = run.link_sock();
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        make_private(&path)?;
        let (tx, attached) = watch::channel(0usize);
        tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                tx.send_modify(|n| *n += 1);
                let tx = tx.clone();
                tokio::spawn(async move {
                    // The relay never writes: EOF or an error means it is gone.
                    let mut b = [0u8; 64];
                    while matches!(s.read(&mut b).await, Ok(n) if n > 0) {}
                    tx.send_modify(|n| *n -= 1);
                });
            }
        });
        Ok(Grace { attached, period })
    }

    /// Resolves once no relay has been connected for the whole period (counted from the
    /// start too, and again from each last detach).
    pub async fn expired(mut self) {
        loop {
            if *self.attached.borrow_and_update() == 0 {
                match tokio::time::timeout(self.period, self.attached.changed()).await {
                    Err(_) => return,
                    Ok(Err(_)) => return std::future::pending().await,
                    Ok(Ok(())) => continue,
                }
            }
            if self.attached.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }
}
