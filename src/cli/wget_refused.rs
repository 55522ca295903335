//! GNU wget's flags that trawl cannot honour, refused by name before clap parses, each with
//! why and what to write instead: clap alone would say "unexpected argument" and suggest a
//! flag of trawl's that merely looks alike (`--waitretry`: "did you mean --wait?").

use std::ffi::OsString;

/// wget's flags (long names, and short letters as `-O`) and why trawl does not take them.
const REFUSED: &[(&[&str], &str)] = &[
    (
        &["--warc-file"],
        "trawl writes WARC files that rotate (every --records-per-file records and \
         --warc-max-size bytes) into --out, named PREFIX-TIMESTAMP-SERIAL.warc.gz: write \
         --out DIR --warc-prefix NAME",
    ),
    (
        &["--warc-cdx"],
        "trawl writes CDXJ, the index pywb reads, not wget's CDX: use --cdxj \
         (--warc-dedup and --dedup-index read wget's CDX files)",
    ),
    (
        &["--no-warc-compression"],
        "trawl writes .warc.gz files, one gzip member per record, which every WARC reader \
         takes (zcat gives the plain WARC)",
    ),
    (
        &["--spider"],
        "trawl archives what it fetches (wget refuses --spider with --warc-file too); \
         `trawl index` lists what a crawl found",
    ),
    (
        &["-O", "--output-document"],
        "trawl writes WARC files into --out, not one document",
    ),
    (
        &["-b", "--background"],
        "run trawl under nohup, cron or systemd; `trawl status DIR` (the --out directory) shows its progress",
    ),
    (
        &[
            "--post-data",
            "--post-file",
            "--body-data",
            "--body-file",
            "--method",
        ],
        "trawl crawls with GET; for a site behind a login, give --load-cookies or \
         --http-user",
    ),
    (
        &["-F", "--force-html", "-B", "--base"],
        "trawl reads --seeds as URLs, one per line, not as an HTML page",
    ),
    (
        &["-L", "--relative"],
        "trawl resolves every link; keep a crawl on its hosts with --scope host (the \
         default) and in its directory with -np",
    ),
    (
        &["--follow-tags", "--ignore-tags"],
        "trawl follows the links of every element a browser loads or a reader follows; \
         leave URLs out with --exclude REGEX or -X",
    ),
    (
        &[
            "--follow-ftp",
            "--ftp-user",
            "--ftp-password",
            "--no-passive-ftp",
            "--no-remove-listing",
            "--no-glob",
            "--preserve-permissions",
            "--retr-symlinks",
            "--ftps-implicit",
            "--ftps-resume-ssl",
            "--ftps-clear-data-connection",
            "--ftps-fallback-to-ftp",
        ],
        "trawl fetches http:// and https:// URLs only",
    ),
    (
        &["--ignore-length"],
        "trawl reads each body as browsers do and archives the bytes as received",
    ),
    (
        &[
            "--certificate",
            "--certificate-type",
            "--private-key",
            "--private-key-type",
        ],
        "trawl does not present TLS client certificates",
    ),
    (
        &[
            "--secure-protocol",
            "--ciphers",
            "--pinnedpubkey",
            "--crl-file",
        ],
        "trawl speaks TLS 1.2 and 1.3 through rustls with its own cipher suites",
    ),
    (
        &["--ca-directory"],
        "give the authorities in one PEM file with --ca-certificate (cat the directory's \
         files into one)",
    ),
    (
        &["--proxy-user", "--proxy-password"],
        "write them in the proxy's URL: --proxy http://USER:PASSWORD@HOST:PORT",
    ),
    (
        &["--rejected-log"],
        "the report counts refused links by reason (`filtered`)",
    ),
    (
        &["--bind-address"],
        "trawl connects from the address the system chooses",
    ),
    (
        &["--no-http-keep-alive"],
        "trawl keeps connections open as browsers do, one per host at a time",
    ),
    (
        &["--local-encoding", "--remote-encoding", "--iri", "--no-iri"],
        "trawl reads each page's charset as browsers do (the header, a byte order mark, \
         <meta>, then windows-1252)",
    ),
    (
        &["--ask-password", "--use-askpass"],
        "give the password with --http-password, in a --config file to keep it out of the \
         process list",
    ),
];

/// The message for the first wget flag in `argv` (a `trawl crawl` command line) that trawl
/// does not take, if any. Only arguments before a `--` are flags.
pub fn refused_wget_flag(argv: &[OsString]) -> Option<String> {
    if argv.get(1).and_then(|a| a.to_str()) != Some("crawl") {
        return None;
    }
    let args: Vec<&str> = argv
        .iter()
        .skip(2)
        .take_while(|arg| *arg != "--")
        .map(|arg| arg.to_str().unwrap_or(""))
        .collect();
    // wget's -c is --continue; trawl's is --concurrency N, which a wget line gives no number.
    let continues = args
        .windows(2)
        .any(|w| w[0] == "-c" && w[1].parse::<u32>().is_err())
        || args.last() == Some(&"-c");
    if continues {
        return Some(
            "wget's -c (--continue) is not taken: it changes nothing in a WARC file (wget \
             turns it off with --warc-file), and trawl's -c is --concurrency N: leave it out"
                .into(),
        );
    }
    args.iter()
        .find_map(|arg| refusal(arg.split_once('=').map_or(arg, |(name, _)| name)))
}

/// Why trawl does not take the wget flag `name` (`--spider`, `-O`), if it is one it refuses.
pub(super) fn refusal(name: &str) -> Option<String> {
    REFUSED
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, why)| format!("wget's {name} is not taken: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(args: &[&str]) -> Option<String> {
        let argv: Vec<OsString> = ["trawl", "crawl"]
            .iter()
            .chain(args)
            .map(OsString::from)
            .collect();
        refused_wget_flag(&argv)
    }

    #[test]
    fn wget_flags_trawl_cannot_honour_are_refused_with_what_to_write() {
        for (args, hint) in [
            (&["--warc-file=site", "a.org"][..], "--warc-prefix"),
            (&["--warc-file", "site", "a.org"], "--warc-prefix"),
            (&["--warc-cdx", "a.org"], "--cdxj"),
            (&["-r", "--spider", "a.org"], "archives what it fetches"),
            (&["-O", "page.html", "a.org"], "--out"),
            (&["--post-data=a=1", "a.org"], "GET"),
            (&["--follow-tags=a,img", "a.org"], "--exclude"),
            (&["-r", "-c", "a.org"], "--concurrency N"),
        ] {
            let message = refused(args).unwrap_or_default();
            assert!(message.contains(hint), "{args:?}: {message}");
            assert!(message.starts_with("wget's "), "{message}");
        }
    }

    #[test]
    fn only_flags_of_a_crawl_before_a_separator_are_read() {
        assert_eq!(refused(&["-r", "-l", "2", "a.org"]), None);
        assert_eq!(refused(&["-c", "64", "a.org"]), None);
        assert_eq!(refused(&["--", "--spider"]), None);
        assert_eq!(refused(&["--header", "X-A: --spider", "a.org"]), None);
        let argv: Vec<OsString> = ["trawl", "index", "--spider"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(refused_wget_flag(&argv), None);
    }

    /// Every long flag of wget 1.21.3's `--help`, with a value where it takes one.
    const WGET_FLAGS: &str = "
        --help --version
        --accept-regex=1 --accept=1 --adjust-extension --append-output=1 --ask-password
        --auth-no-challenge --background --backup-converted --backups=1 --base=1
        --bind-address=1 --body-data=1 --body-file=1 --ca-certificate=1 --ca-directory=1
        --certificate-type=1 --certificate=1 --ciphers=1 --compression=1 --config=1
        --connect-timeout=1 --content-disposition --content-on-error --continue
        --convert-file-only --convert-links --crl-file=1 --cut-dirs=1 --debug --default-page=1
        --delete-after --directory-prefix=1 --dns-timeout=1 --domains=1 --exclude-directories=1
        --exclude-domains=1 --execute=1 --follow-ftp --follow-tags=1 --force-directories
        --force-html --ftp-password=1 --ftp-user=1 --ftps-clear-data-connection
        --ftps-fallback-to-ftp --ftps-implicit --ftps-resume-ssl --header=1 --hsts-file
        --http-password=1 --http-user=1 --https-only --ignore-case --ignore-length
        --ignore-tags=1 --include-directories=1 --inet4-only --inet6-only --input-file=1
        --keep-session-cookies --level=1 --limit-rate=1 --load-cookies=1 --local-encoding=1
        --max-redirect --method --method=1 --mirror --no-cache --no-check-certificate
        --no-clobber --no-config --no-cookies --no-directories --no-dns-cache --no-glob
        --no-host-directories --no-hsts --no-http-keep-alive --no-if-modified-since --no-iri
        --no-netrc --no-parent --no-passive-ftp --no-proxy --no-remove-listing
        --no-use-server-timestamps --no-verbose --no-warc-compression --no-warc-digests
        --no-warc-keep-log --output-document=1 --output-file=1 --page-requisites --password=1
        --pinnedpubkey=1 --post-data=1 --post-file=1 --prefer-family=1 --preserve-permissions
        --private-key-type=1 --private-key=1 --progress=1 --protocol-directories
        --proxy-password=1 --proxy-user=1 --quiet --quota=1 --random-wait --read-timeout=1
        --recursive --referer=1 --regex-type=1 --reject-regex=1 --reject=1 --rejected-log=1
        --relative --remote-encoding=1 --report-speed=1 --restrict-file-names=1 --retr-symlinks
        --retry-connrefused --retry-on-http-error=1 --save-cookies=1 --save-headers
        --secure-protocol --secure-protocol=1 --server-response --show-progress --span-hosts
        --spider --start-pos=1 --strict-comments --timeout=1 --timestamping --tries=1
        --trust-server-names --unlink --use-askpass=1 --user-agent=1 --user=1 --verbose
        --wait=1 --waitretry=1 --warc-cdx --warc-dedup=1 --warc-file=1 --warc-header=1
        --warc-max-size=1 --warc-tempdir=1 --xattr
    ";

    #[test]
    fn every_flag_of_wget_is_taken_or_refused_by_name() {
        use clap::Parser;
        for flag in WGET_FLAGS.split_whitespace() {
            let argv: Vec<OsString> = ["trawl", "crawl", flag, "a.org"]
                .iter()
                .map(OsString::from)
                .collect();
            let Ok(crate::cli::WgetrcCommandLine { argv, .. }) = crate::cli::wgetrc_commands(argv)
            else {
                continue;
            };
            if refused_wget_flag(&argv).is_some() {
                continue;
            }
            if let Err(e) = crate::cli::Cli::try_parse_from(argv) {
                assert_ne!(
                    e.kind(),
                    clap::error::ErrorKind::UnknownArgument,
                    "{flag}: {e}"
                );
            }
        }
    }
}
