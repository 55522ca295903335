//! Real proxies and servers the tests start on loopback, each on a free port in its own temp
//! directory and killed when dropped: tinyproxy (HTTP proxy, CONNECT too), microsocks
//! (SOCKS5) and dnsmasq (DNS), Debian packages, and warcprox (PyPI, in the venv) — scripts/test
//! installs them. Each one's log is kept, so a test can check what went through it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::python;

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The path of a Debian package's program.
pub fn system_binary(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found: scripts/test installs it (apt-get)");
}

/// A running server.
pub struct Daemon {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    /// Where its log goes.
    pub log: PathBuf,
}

impl Daemon {
    /// Starts `command` (its stdout and stderr to the log file) and waits until `port`
    /// accepts connections.
    fn start(mut command: Command, port: u16, dir: tempfile::TempDir, log: PathBuf) -> Daemon {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.path().join("output.txt"))
            .unwrap();
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {command:?}: {e}"));
        let mut daemon = Daemon {
            child,
            port,
            dir,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!("{command:?} exited with {status}: {}", daemon.output());
            }
            assert!(Instant::now() < deadline, "{command:?} did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        daemon
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What it printed.
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("output.txt")).unwrap_or_default()
    }

    /// `scheme://127.0.0.1:PORT`.
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.port)
    }
}

impl Daemon {
    /// Stops it with SIGTERM (a clean stop: files closed) and waits, at most 30 s. Returns
    /// what it printed.
    pub fn terminate(&mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return self.output();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{} did not stop on SIGTERM: {}", self.port, self.output());
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// tinyproxy on loopback, logging every request (LogLevel Info), CONNECT to any port.
pub fn tinyproxy() -> Daemon {
    tinyproxy_with("")
}

/// [`tinyproxy`] with more lines of configuration (`BasicAuth user password`).
pub fn tinyproxy_with(more: &str) -> Daemon {
    tinyproxy_on(free_port(), more)
}

/// [`tinyproxy_with`] on `port` (a proxy that starts after the crawl).
pub fn tinyproxy_on(port: u16, more: &str) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tinyproxy.log");
    let conf = dir.path().join("tinyproxy.conf");
    std::fs::write(
        &conf,
        format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Info\n\
             MaxClients 100\nAllow 127.0.0.1\nDisableViaHeader Yes\n{more}",
            log.display()
        ),
    )
    .unwrap();
    let mut command = Command::new(system_binary("tinyproxy"));
    command.arg("-d").arg("-c").arg(&conf);
    Daemon::start(command, port, dir, log)
}

/// microsocks (SOCKS5) on loopback; it logs each connection it makes.
pub fn microsocks() -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = dir.path().join("output.txt");
    let mut command = Command::new(system_binary("microsocks"));
    command
        .args(["-i", "127.0.0.1", "-p"])
        .arg(port.to_string());
    Daemon::start(command, port, dir, log)
}

/// warcprox from the venv on loopback, writing gzipped WARCs to `dir/warcs`, and its own CA
/// (clients of an https site through it must accept its certificates: `--insecure`).
pub fn warcprox() -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let warcs = dir.path().join("warcs");
    let log = dir.path().join("output.txt");
    let bin = python().with_file_name("warcprox");
    let mut command = Command::new(bin);
    // Its dedup and stats databases go in the working directory.
    command
        .current_dir(dir.path())
        .args(["-b", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .arg("-d")
        .arg(&warcs)
        .arg("-c")
        .arg(dir.path().join("ca.pem"))
        .arg("--certs-dir")
        .arg(dir.path().join("certs"))
        .args(["-z", "-n", "warcprox", "--rollover-idle-time", "1", "-v"]);
    Daemon::start(command, port, dir, log)
}

/// dnsmasq on loopback answering for `names` (name, IPv4 address) with a TTL of 300 s, and
/// for nothing else (no upstream, no hosts file); it logs every query.
pub fn dnsmasq(names: &[(&str, &str)]) -> Daemon {
    dnsmasq_on(names, free_port(), 300)
}

/// [`dnsmasq`] on `port`, its answers' TTL `ttl` seconds.
pub fn dnsmasq_on(names: &[(&str, &str)], port: u16, ttl: u32) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("output.txt");
    let mut command = Command::new(system_binary("dnsmasq"));
    command
        .arg("--keep-in-foreground")
        .arg(format!("--port={port}"))
        .args(["--listen-address=127.0.0.1", "--bind-interfaces"])
        .args(["--no-resolv", "--no-hosts", "--no-poll"])
        .arg(format!("--local-ttl={ttl}"))
        .args(["--log-queries", "--log-facility=-", "--pid-file="]);
    for (name, addr) in names {
        command.arg(format!("--address=/{name}/{addr}"));
    }
    Daemon::start(command, port, dir, log)
}
