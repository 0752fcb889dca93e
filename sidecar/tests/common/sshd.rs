//! The test remote: a real OpenSSH `sshd` in private network and UTS namespaces (hostname
//! `porthole-remote-test`), reached from the host namespace only through a `ProxyCommand`
//! (`nsenter … socat`). Keys are generated per instance; the remote side's XDG directories
//! live in the instance's temp dir (`SetEnv`). Everything is torn down on drop: every process
//! in the namespace (sshd, its sessions, the relay, the daemon, its shells), the holder, the
//! temp dir. Needs root, `unshare`/`nsenter`/`ip` (util-linux, iproute2), `openssh-server`,
//! `openssh-client` and `socat`. `scripts/test-sshd.sh` is the same for people.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The hostname inside the namespace.
pub const REMOTE_HOSTNAME: &str = "porthole-remote-test";
/// The ssh config alias of the test remote.
pub const HOST_ALIAS: &str = "porthole-test";
/// sshd's port inside the namespace (the namespace is private: no clash).
pub const PORT: u16 = 2222;

/// A running test remote.
pub struct TestSshd {
    holder: Child,
    sshd: Child,
    /// The temp dir (keys, configs, the remote's XDG dirs).
    pub dir: PathBuf,
    /// An ssh config whose `porthole-test` knows the host key.
    pub ssh_config: PathBuf,
    /// An ssh config whose `porthole-test` does not know the host key (empty known_hosts).
    pub ssh_config_unknown_key: PathBuf,
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn write(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

fn spawn_sshd(hpid: u32, config: &Path) -> Child {
    Command::new("nsenter")
        .arg(format!("--net=/proc/{hpid}/ns/net"))
        .arg(format!("--uts=/proc/{hpid}/ns/uts"))
        .args(["/usr/sbin/sshd", "-D", "-e", "-f"])
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("sshd")
}

impl TestSshd {
    /// Starts one (bounded 20 s), with `extra_env` added to the remote sessions' `SetEnv`.
    pub fn start(extra_env: &[(&str, &str)]) -> TestSshd {
        let dir = super::temp_dir("sshd");
        for sub in ["run", "state", "config", "data", "home"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::create_dir_all("/run/sshd").unwrap();
        // A chatty rc file, as real ones can be (bash sources it for ssh commands): the link
        // must find the hello line after it.
        write(&dir.join("home/.bashrc"), "echo 'welcome to the test remote'\n");
        for key in ["host_ed25519", "user_ed25519"] {
            run(Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-C", key, "-f"]).arg(dir.join(key)));
        }
        let mut holder = Command::new("unshare")
            .args(["--net", "--uts", "sh", "-c"])
            .arg(format!("hostname {REMOTE_HOSTNAME} && ip link set lo up && exec sleep infinity"))
            .stdin(Stdio::null())
            .spawn()
            .expect("unshare");
        let hpid = holder.id();
        // Wait until the holder is in its own namespace with lo up (its `sleep` runs).
        let start = Instant::now();
        loop {
            let comm = std::fs::read_to_string(format!("/proc/{hpid}/comm")).unwrap_or_default();
            if comm.trim() == "sleep" {
                break;
            }
            if let Ok(Some(s)) = holder.try_wait() {
                panic!("the namespace holder exited: {s}");
            }
            assert!(start.elapsed() < Duration::from_secs(20), "the namespace holder did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        let d = dir.display();
        let mut set_env = format!(
            "HOME={d}/home XDG_RUNTIME_DIR={d}/run XDG_STATE_HOME={d}/state XDG_CONFIG_HOME={d}/config XDG_DATA_HOME={d}/data"
        );
        for (k, v) in extra_env {
            set_env += &format!(" {k}={v}");
        }
        let sshd_config = dir.join("sshd_config");
        write(
            &sshd_config,
            &format!(
                "Port {PORT}\nListenAddress 127.0.0.1\nHostKey {d}/host_ed25519\nAuthorizedKeysFile {d}/user_ed25519.pub\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 PermitRootLogin prohibit-password\nPidFile {d}/sshd.pid\nSetEnv {set_env}\nLogLevel ERROR\n"
            ),
        );
        let sshd = spawn_sshd(hpid, &sshd_config);
        let host_pub = std::fs::read_to_string(dir.join("host_ed25519.pub")).unwrap();
        let host_pub: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        write(&dir.join("known_hosts"), &format!("{HOST_ALIAS} {}\n", host_pub.join(" ")));
        write(&dir.join("known_hosts_empty"), "");
        let client = |known: &str| {
            format!(
                "Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {PORT}\n  User root\n  IdentityFile {d}/user_ed25519\n  \
                 IdentitiesOnly yes\n  HostKeyAlias {HOST_ALIAS}\n  UserKnownHostsFile {d}/{known}\n  \
                 GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n  \
                 ProxyCommand nsenter --net=/proc/{hpid}/ns/net socat STDIO TCP:127.0.0.1:{PORT}\n"
            )
        };
        let ssh_config = dir.join("ssh_config");
        write(&ssh_config, &client("known_hosts"));
        let ssh_config_unknown_key = dir.join("ssh_config_unknown_key");
        write(&ssh_config_unknown_key, &client("known_hosts_empty"));
        let mut me = TestSshd { holder, sshd, dir, ssh_config, ssh_config_unknown_key };
        me.wait_listening();
        me
    }

    /// Waits (bounded 20 s) until sshd listens. /proc/<pid>/net/tcp shows the namespace of
    /// that process.
    fn wait_listening(&mut self) {
        let hpid = self.holder.id();
        let start = Instant::now();
        let want = format!("0100007F:{PORT:04X} 00000000:0000 0A");
        loop {
            let tcp = std::fs::read_to_string(format!("/proc/{hpid}/net/tcp")).unwrap_or_default();
            if tcp.contains(&want) {
                break;
            }
            if let Ok(Some(s)) = self.sshd.try_wait() {
                panic!("sshd exited: {s}");
            }
            assert!(start.elapsed() < Duration::from_secs(20), "sshd did not listen within 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.holder_alive();
    }

    /// Stops sshd's listener (sessions already open go on): new connections are refused.
    pub fn stop_listener(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }

    /// Starts sshd's listener again after [`TestSshd::stop_listener`].
    pub fn restart_listener(&mut self) {
        self.sshd = spawn_sshd(self.holder.id(), &self.dir.join("sshd_config"));
        self.wait_listening();
    }

    fn holder_alive(&mut self) {
        assert!(matches!(self.holder.try_wait(), Ok(None)), "the namespace holder died");
    }

    /// The remote daemon's run directory.
    pub fn run_dir(&self) -> PathBuf {
        self.dir.join("run/porthole-remote")
    }

    /// The remote daemon's pid, from its `daemon.pid`.
    pub fn daemon_pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.run_dir().join("daemon.pid")).ok()?.trim().parse().ok()
    }

    /// The namespace holder's pid (its `/proc/PID/net/…` is the namespace's).
    pub fn holder_pid(&self) -> u32 {
        self.holder.id()
    }

    /// Every process in the namespace except the holder.
    pub fn processes(&self) -> Vec<i32> {
        let hpid = self.holder.id() as i32;
        let Ok(ns) = std::fs::read_link(format!("/proc/{hpid}/ns/net")) else { return Vec::new() };
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
            if pid != hpid && std::fs::read_link(format!("/proc/{pid}/ns/net")).is_ok_and(|l| l == ns) {
                out.push(pid);
            }
        }
        out
    }
}

impl Drop for TestSshd {
    fn drop(&mut self) {
        // The daemon first, politely (it hangs up its shells), then everything in the namespace.
        if let Some(pid) = self.daemon_pid().filter(|p| *p > 1) {
            super::send_signal(pid as u32, 15);
            let start = Instant::now();
            while !super::pid_gone(pid as i64) && start.elapsed() < Duration::from_secs(6) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
        for _ in 0..3 {
            for pid in self.processes() {
                if pid > 1 {
                    super::send_signal(pid as u32, 9);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.holder.kill();
        let _ = self.holder.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
