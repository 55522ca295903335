//! Which certificates a crawl trusts: an intranet's own authority with `--ca-certificate`
//! (wget's name) beside the compiled-in roots, a server's own certificate given there
//! (self-signed, or from an authority not given), a file that holds none refused at the
//! start, and wget's `--no-check-certificate` as a name of `--insecure`; and a reset during
//! the handshake, retried.

use crate::args;
use crate::harness::{read_records, text, trawl};
use crate::server::{Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intranet_authority_is_trusted_with_ca_certificate() {
    let web = Web::default();
    let (tls, authority) = web.tls_host_with_authority("127.0.0.105").await;
    tls.route("/", Route::html("<p>behind a private authority</p>"));
    let out = tempfile::tempdir().unwrap();
    let ca = out.path().join("intranet-ca.pem");
    std::fs::write(&ca, &authority).unwrap();
    let seed = format!("https://{}/", tls.addr);
    let crawl = |dir: &str, extra: &[&str]| {
        let mut a = args![
            "crawl",
            seed.clone(),
            "--out",
            out.path().join(dir).display(),
            "-q"
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        trawl(a)
    };
    let archived = |dir: &str| {
        read_records(&out.path().join(dir))
            .iter()
            .any(|r| r.warc_type == "response" && r.path() == "/" && r.status() == Some(200))
    };

    // Unknown to the compiled-in roots: the origin is given up.
    let result = crawl("plain", &[]).await;
    assert_eq!(result.status.code(), Some(4), "{}", text(&result));
    assert!(!archived("plain"));

    let ca_arg = ca.display().to_string();
    let result = crawl("trusted", &["--ca-certificate", &ca_arg]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert!(archived("trusted"));

    let result = crawl("unchecked", &["--no-check-certificate"]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert!(archived("unchecked"));
    // The warcinfo says how far the captures' certificates were checked.
    let trust_of = |dir: &str| {
        read_records(&out.path().join(dir))
            .iter()
            .filter(|r| r.warc_type == "warcinfo")
            .map(|r| String::from_utf8_lossy(&r.block).into_owned())
            .find_map(|b| {
                b.lines()
                    .find(|l| l.starts_with("tls-trust:"))
                    .map(str::to_string)
            })
    };
    assert_eq!(
        trust_of("unchecked").as_deref(),
        Some("tls-trust: any certificate (--insecure)")
    );
    assert!(trust_of("trusted").is_some_and(|t| t.contains("--ca-certificate")));
    assert_eq!(trust_of("plain"), None);

    // A file without a certificate is refused before anything is fetched.
    let bad = out.path().join("not-a-cert.pem");
    std::fs::write(&bad, "hello\n").unwrap();
    let bad_arg = bad.display().to_string();
    let result = crawl("bad", &["--ca-certificate", &bad_arg]).await;
    assert_eq!(result.status.code(), Some(2), "{}", text(&result));
    assert!(
        text(&result).contains("--ca-certificate"),
        "{}",
        text(&result)
    );
}

/// A server's self-signed certificate, marked as an authority's (as `openssl req -x509` makes
/// it), given with `--ca-certificate` as wget and curl take it: trusted for the names it
/// carries, not for another host that shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_signed_certificate_given_with_ca_certificate_is_trusted_for_its_names() {
    let web = Web::default();
    let (hosts, pem) = web
        .tls_hosts_self_signed_authority(&["127.0.0.127", "127.0.0.128"])
        .await;
    for h in &hosts {
        h.route("/", Route::html("<p>self-signed</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    let cert = out.path().join("server.pem");
    std::fs::write(&cert, &pem).unwrap();
    for (h, code) in hosts.iter().zip([0, 4]) {
        let dir = out.path().join(h.addr.to_string().replace(':', "_"));
        let result = trawl(args![
            "crawl",
            format!("https://{}/", h.addr),
            "--out",
            dir.display(),
            "--ca-certificate",
            cert.display(),
            "-q"
        ])
        .await;
        assert_eq!(result.status.code(), Some(code), "{}", text(&result));
        let archived = read_records(&dir)
            .iter()
            .any(|r| r.warc_type == "response" && r.path() == "/" && r.status() == Some(200));
        assert_eq!(archived, code == 0, "{}", h.addr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_reset_during_the_tls_handshake_is_retried() {
    // A load balancer that resets the first connection after the ClientHello: a network
    // fault, retried like a failed connect, not a TLS failure that gives the origin up.
    use tokio::io::AsyncReadExt;
    let web = Web::default();
    let tls = web.tls_host("127.0.0.92").await;
    tls.route("/", Route::html("<p>after a reset</p>"));
    let backend = tls.addr;
    let front = tokio::net::TcpListener::bind("127.0.0.93:0").await.unwrap();
    let front_addr = front.local_addr().unwrap();
    tokio::spawn(async move {
        for n in 0.. {
            let Ok((mut client, _)) = front.accept().await else {
                return;
            };
            if n == 0 {
                let mut hello = [0u8; 64];
                let _ = client.read(&mut hello).await;
                #[allow(deprecated)]
                let _ = client.set_linger(Some(std::time::Duration::ZERO));
                drop(client);
                continue;
            }
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    let out = tempfile::tempdir().unwrap();
    let stats = crawl_through_faults(format!("https://{front_addr}/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 1, "{stats}");
    assert_eq!(stats["origins_given_up"], 0, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_own_certificate_from_an_unknown_authority_can_be_given() {
    // As a browser exports it: the server's certificate alone, not its authority's. wget's
    // `--ca-certificate` and curl's `--cacert` accept it (OpenSSL's partial chain).
    let web = Web::default();
    let (tls, _authority, leaf) = web.tls_host_issued("127.0.0.98").await;
    tls.route("/", Route::html("<p>pinned</p>"));
    let out = tempfile::tempdir().unwrap();
    let pinned = out.path().join("server.pem");
    std::fs::write(&pinned, &leaf).unwrap();
    let result = trawl(args![
        "crawl",
        format!("https://{}/", tls.addr),
        "--out",
        out.path().join("warcs").display(),
        "--ca-certificate",
        pinned.display(),
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let archived = read_records(&out.path().join("warcs"))
        .iter()
        .any(|r| r.warc_type == "response" && r.path() == "/" && r.status() == Some(200));
    assert!(archived);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_the_network_ends_on_one_address_moves_to_the_next() {
    // A name with two addresses: the first accepts connections and resets every handshake
    // (one bad machine behind the name), the second serves. The crawl reaches the second.
    use tokio::io::AsyncReadExt;
    let web = Web::default();
    let good = web.tls_host("127.0.0.99").await;
    good.route("/", Route::html("<p>the good address</p>"));
    let port = good.addr.port();
    let bad = tokio::net::TcpListener::bind(("127.0.0.158", port))
        .await
        .unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = bad.accept().await {
            let mut hello = [0u8; 64];
            let _ = client.read(&mut hello).await;
            #[allow(deprecated)]
            let _ = client.set_linger(Some(std::time::Duration::ZERO));
        }
    });
    let out = tempfile::tempdir().unwrap();
    let pin = format!("two.test:{port}:127.0.0.158,127.0.0.99");
    let seed = format!("https://two.test:{port}/");
    let stats = crawl_through_faults(seed, out.path(), &["--resolve", &pin]).await;
    assert_eq!(stats["pages_archived"], 1, "{stats}");
    let records = read_records(&out.path().join("warcs"));
    let page = records
        .iter()
        .find(|r| r.warc_type == "response" && r.path() == "/")
        .expect("the page");
    assert_eq!(page.ip_address.as_deref(), Some("127.0.0.99"));
}

/// Crawls `seed` into `out` as the handshake-fault tests do: `--insecure` (the test servers'
/// certificates name their address, not the name or the front the crawl uses) and a short
/// robots.txt retry; asserts exit 0 and returns the report.
async fn crawl_through_faults(
    seed: String,
    out: &std::path::Path,
    extra: &[&str],
) -> serde_json::Value {
    let flags = [&["--insecure", "--robots-retry", "100ms", "-q"], extra].concat();
    let (result, report) = crate::harness::crawl_with_report(seed, out, &flags).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    report.expect("the report")
}
