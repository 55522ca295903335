//! Running the trawl binary and reading its WARC output back.

use std::path::{Path, PathBuf};
use std::process::Output;

use warc::{WarcHeader, WarcReader};

/// Runs `trawl` with `args` off the async runtime and returns its output.
pub async fn trawl(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
            .args(&args)
            .output()
            .expect("run trawl")
    })
    .await
    .unwrap()
}

/// `args!["crawl", x, ...]` as a Vec<String>.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => { vec![$($a.to_string()),*] };
}

/// One record read back.
#[derive(Debug, Clone)]
pub struct Rec {
    pub file: PathBuf,
    pub warc_type: String,
    pub target_uri: Option<String>,
    pub id: String,
    pub concurrent_to: Option<String>,
    pub truncated: Option<String>,
    /// WARC-IP-Address.
    pub ip_address: Option<String>,
    /// WARC-Identified-Payload-Type.
    pub identified: Option<String>,
    /// WARC-Payload-Digest.
    pub payload_digest: Option<String>,
    pub block: Vec<u8>,
}

impl Rec {
    /// HTTP status of a response record.
    pub fn status(&self) -> Option<u16> {
        let line = self.block.split(|&b| b == b'\n').next()?;
        std::str::from_utf8(line)
            .ok()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }
    /// An HTTP header of a response record.
    pub fn http_header(&self, name: &str) -> Option<String> {
        let end = self.block.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&self.block[..end]).to_string();
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
    pub fn path(&self) -> String {
        url::Url::parse(self.target_uri.as_deref().unwrap_or(""))
            .map(|u| u.path().to_string())
            .unwrap_or_default()
    }
}

/// Finished WARC files in `dir`, sorted by name.
pub fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// Every record of every WARC file in `dir`, in order.
pub fn read_records(dir: &Path) -> Vec<Rec> {
    let mut out = Vec::new();
    for file in warc_files(dir) {
        let reader = WarcReader::from_path_gzip(&file).expect("open warc");
        for record in reader.iter_records() {
            let record = record.expect("valid record");
            let h = |name: WarcHeader| record.header(name).map(|v| v.to_string());
            out.push(Rec {
                file: file.clone(),
                warc_type: record.warc_type().to_string(),
                target_uri: h(WarcHeader::TargetURI),
                id: record.warc_id().to_string(),
                concurrent_to: h(WarcHeader::ConcurrentTo),
                truncated: h(WarcHeader::Truncated),
                ip_address: h(WarcHeader::IPAddress),
                identified: h(WarcHeader::IdentifiedPayloadType),
                payload_digest: h(WarcHeader::PayloadDigest),
                block: record.body().to_vec(),
            });
        }
    }
    out
}

/// Starts trawl without waiting for it (stderr piped, stdout dropped).
pub fn spawn_trawl(args: Vec<String>) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn trawl")
}

/// The venv python made by scripts/pyenv (TRAWL_PYTHON, else `<repo>/.venv/bin/python`).
pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("TRAWL_PYTHON") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        p.exists(),
        "no Python virtualenv with warcio/pywb: run scripts/test (or scripts/pyenv) first"
    );
    p
}

/// Runs one of the repo's Python scripts with the venv python.
pub async fn run_script(script: &str, args: Vec<String>) -> Output {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(script);
    let py = python();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(py)
            .arg(path)
            .args(&args)
            .output()
            .expect("run python")
    })
    .await
    .unwrap()
}

pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A loopback port nobody listens on (connections are refused).
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Reads a JSON file (e.g. `--stats`).
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("read json")).expect("valid json")
}

/// The strict checker (warcio included) accepts `dir`.
pub async fn assert_valid(dir: &Path) {
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "warc_check: {}", text(&check));
}

/// pywb replays `url` from `warcs` with exactly `body`.
pub async fn assert_replays(warcs: &Path, url: &str, body: &str) {
    assert_replays_as(warcs, url, 200, body).await;
}

/// [`assert_replays`] of a capture whose status is `status`.
pub async fn assert_replays_as(warcs: &Path, url: &str, status: u16, body: &str) {
    let expect = warcs.with_extension("expected.html");
    std::fs::write(&expect, body).unwrap();
    let replay = run_script(
        "pywb_replay.py",
        args![
            "--warcs",
            warcs.display(),
            "--url",
            url,
            "--expect",
            expect.display(),
            "--expect-status",
            status
        ],
    )
    .await;
    assert!(replay.status.success(), "pywb: {}", text(&replay));
}

/// `trawl crawl SEED --out OUT/warcs --stats OUT/stats.json FLAGS...`: its output, and its
/// report when it wrote one.
pub async fn crawl_with_report(
    seed: String,
    out: &Path,
    flags: &[&str],
) -> (Output, Option<serde_json::Value>) {
    let stats = out.join("stats.json");
    let mut a = args![
        "crawl",
        seed,
        "--out",
        out.join("warcs").display(),
        "--stats",
        stats.display()
    ];
    a.extend(flags.iter().map(|s| s.to_string()));
    let result = trawl(a).await;
    let report = stats.exists().then(|| read_json(&stats));
    (result, report)
}

/// `trawl crawl URL --out OUT --delay 0ms -q EXTRA...`.
pub async fn crawl_without_delay(
    url: String,
    out: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut a = args!["crawl", url, "--out", out.display(), "--delay", "0ms", "-q"];
    a.extend(extra.iter().map(|s| s.to_string()));
    trawl(a).await
}
