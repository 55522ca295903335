//! Tests of `config_file/mod.rs`, and of wget command lines read through it.

use std::time::Duration;

use clap::Parser;

use super::*;
use crate::cli::{Command, CrawlArgs};
use crate::url_rules::ScopeKind;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// A command line with no wgetrc commands.
fn plain(argv: Vec<OsString>) -> WgetrcCommandLine {
    WgetrcCommandLine {
        argv,
        turned_off: Vec::new(),
    }
}

fn crawl_args(argv: &[&str]) -> crate::cli::CrawlArgs {
    let argv = command_line(os(argv)).unwrap();
    match Cli::try_parse_from(argv).unwrap().command {
        crate::cli::Command::Crawl(args) => *args,
        _ => panic!("not a crawl"),
    }
}

#[test]
fn a_wgetrc_command_on_the_command_line_turns_off_what_the_file_turns_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trawl.toml");
    let config = file.display().to_string();
    let with_file = |extra: &[&str]| {
        let head = ["trawl", "crawl", "--config", config.as_str()];
        crawl_args(&head.iter().chain(extra).copied().collect::<Vec<_>>())
    };
    for text in ["execute = [\"robots = off\"]\n", "ignore-robots = true\n"] {
        std::fs::write(&file, text).unwrap();
        assert!(with_file(&["a.org"]).ignore_robots, "{text}");
        assert!(
            !with_file(&["-e", "robots=on", "a.org"]).ignore_robots,
            "{text}"
        );
    }
    std::fs::write(&file, "page-requisites = true\nexecute = [\"cache=off\"]\n").unwrap();
    let args = with_file(&["-e", "page_requisites=off", "-e", "cache=on", "a.org"]);
    assert!(!args.page_requisites && !args.wget.requests.no_cache);
}

#[test]
fn a_files_execute_key_is_read_as_wgetrc_commands() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trawl.toml");
    std::fs::write(
        &file,
        "execute = [\"page_requisites = on\", \"robots=off\"]\n",
    )
    .unwrap();
    let config = file.display().to_string();
    let argv = command_line(os(&["trawl", "crawl", "--config", &config, "a.org"])).unwrap();
    let crate::cli::Command::Crawl(args) = Cli::try_parse_from(argv).unwrap().command else {
        panic!("not a crawl")
    };
    assert!(args.page_requisites && args.ignore_robots);
    std::fs::write(&file, "execute = [\"wait = 2\", \"tries=3\"]\n").unwrap();
    let argv = command_line(os(&[
        "trawl", "crawl", "--config", &config, "--wait", "1", "a.org",
    ]))
    .unwrap();
    let crate::cli::Command::Crawl(args) = Cli::try_parse_from(argv).unwrap().command else {
        panic!("not a crawl")
    };
    assert_eq!(args.wget.wait, Some(std::time::Duration::from_secs(1)));
    assert_eq!(args.wget.tries, Some(3));
    std::fs::write(&file, "execute = [\"spider = on\"]\n").unwrap();
    let refused = command_line(os(&["trawl", "crawl", "--config", &config, "a.org"]));
    assert!(refused.unwrap_err().contains("--spider"));
}

#[test]
fn file_values_fill_in_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trawl.toml");
    std::fs::write(
        &file,
        "delay = \"2s\"\nmax_pages = 5\nexclude = [\"/a,b/\", \"/c/\"]\ndedup = true\nquiet = false\ndeny-ports = [22, 25]\nurls = [\"http://a.org/\"]\nout = \"from-file\"\n",
    )
    .unwrap();
    let config = file.display().to_string();
    let argv = merge_config_file(plain(os(&[
        "trawl", "crawl", "--config", &config, "--out", "cli",
    ])))
    .unwrap();
    let cli = Cli::try_parse_from(argv).unwrap();
    let crate::cli::Command::Crawl(args) = cli.command else {
        panic!("not a crawl")
    };
    assert_eq!(args.delay, std::time::Duration::from_secs(2));
    assert_eq!(args.max_pages, Some(5));
    assert_eq!(args.exclude, ["/a,b/", "/c/"]);
    assert!(args.dedup && !args.report.quiet);
    assert_eq!(args.deny_ports, Some(vec![22, 25]));
    assert_eq!(args.seeds, ["http://a.org/"]);
    assert_eq!(args.out, std::path::PathBuf::from("cli"));

    // The request flags (a flattened group) are keys too.
    std::fs::write(
        &file,
        "header = [\"X-Contact: ops@example.org\"]\nload-cookies = \"c.txt\"\nsave_cookies = \"s.txt\"\nproxy = \"socks5h://127.0.0.1:9050\"\ndns-records = true\ndns-server = [\"127.0.0.1:5353\", \"::1\"]\n",
    )
    .unwrap();
    let argv =
        merge_config_file(plain(os(&["trawl", "crawl", "--config", &config, "a.org"]))).unwrap();
    let Ok(Cli {
        command: crate::cli::Command::Crawl(args),
    }) = Cli::try_parse_from(argv)
    else {
        panic!("not a crawl")
    };
    let request = &args.request;
    assert_eq!(request.headers.len(), 1);
    // Paths the file gives are its directory's.
    assert_eq!(
        request.load_cookies.as_deref(),
        Some(dir.path().join("c.txt").as_path())
    );
    assert_eq!(
        request.save_cookies.as_deref(),
        Some(dir.path().join("s.txt").as_path())
    );
    assert_eq!(
        request.proxy.as_ref().map(|p| p.address()).as_deref(),
        Some("socks5h://127.0.0.1:9050")
    );
    assert!(request.dns_records && !request.no_cookies);
    assert_eq!(request.dns_server.len(), 2);

    std::fs::write(&file, "dealy = \"2s\"\n").unwrap();
    let err = merge_config_file(plain(os(&["trawl", "crawl", "--config", &config]))).unwrap_err();
    assert!(err.contains("unknown key \"dealy\""), "{err}");
}

// wget command lines, read through the whole of `command_line` (the wget flags are
// `cli/wget_args.rs`'s; these tests live here so that `cli` needs nothing of this module).

fn crawl(argv: &[&str]) -> Result<CrawlArgs, String> {
    let argv = crate::config_file::command_line(argv.iter().map(OsString::from).collect())?;
    match Cli::try_parse_from(argv) {
        Ok(Cli {
            command: Command::Crawl(mut args),
        }) => {
            std::mem::take(&mut args.wget)
                .fold_into(&mut args)
                .map_err(|e| e.to_string())?;
            Ok(*args)
        }
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn a_wget_command_line_reads_as_wget_reads_it() {
    let a = crawl(&[
        "trawl",
        "crawl",
        "-r",
        "-l",
        "3",
        "-np",
        "-w",
        "1.5",
        "-H",
        "-t",
        "4",
        "-Q",
        "5m",
        "-e",
        "robots=off",
        "-nd",
        "-nH",
        "-k",
        "-E",
        "-nc",
        "--cut-dirs",
        "2",
        "-T",
        "60",
        "--delete-after",
        "http://a.org/docs/",
    ])
    .unwrap();
    assert_eq!(a.max_depth, Some(3));
    assert!(a.no_parent);
    assert_eq!(a.delay, Duration::from_millis(1500));
    assert_eq!(a.scope, Some(ScopeKind::Any));
    assert_eq!(a.retries, 3);
    assert_eq!(a.max_bytes, Some(5 << 20));
    assert!(a.ignore_robots);
    assert_eq!(a.timeout, Duration::from_secs(60));
    assert_eq!(a.connect_timeout, Duration::from_secs(60));
    assert_eq!(a.seeds, vec!["http://a.org/docs/".to_string()]);
}

#[test]
fn file_lists_archive_every_type_unless_accept_says_otherwise() {
    let accept = |v: &[&str]| {
        let mut argv = vec!["trawl", "crawl"];
        argv.extend_from_slice(v);
        argv.push("a.org");
        crawl(&argv).unwrap().accept
    };
    assert_eq!(accept(&[]), ["text/html", "application/xhtml+xml"]);
    assert_eq!(accept(&["-A", "pdf"]), ["*/*"]);
    assert_eq!(accept(&["-R", "zip"]), ["*/*"]);
    assert_eq!(
        accept(&["-A", "pdf", "--accept", "application/pdf"]),
        ["application/pdf"]
    );
    let error = crawl(&["trawl", "crawl", "-A", "[pdf", "a.org"]).unwrap_err();
    assert!(error.contains("-A"), "{error}");
}

#[test]
fn depth_follows_wget_for_r_level_and_mirror() {
    let depth = |v: &[&str]| {
        let mut argv = vec!["trawl", "crawl"];
        argv.extend_from_slice(v);
        argv.push("a.org");
        crawl(&argv).unwrap().max_depth
    };
    assert_eq!(depth(&[]), None);
    assert_eq!(depth(&["-r"]), Some(5));
    assert_eq!(depth(&["-r", "--max-depth", "2"]), Some(2));
    assert_eq!(depth(&["-r", "-l", "inf"]), None);
    assert_eq!(depth(&["--recursive", "--level=0"]), None);
    assert_eq!(depth(&["-m"]), None);
    assert_eq!(depth(&["--mirror", "-r"]), None);
    assert_eq!(depth(&["-l", "1"]), Some(1));
}

#[test]
fn what_trawl_cannot_read_is_refused_with_what_to_write() {
    let error = crawl(&["trawl", "crawl", "-D", "a.org,b c", "a.org"]).unwrap_err();
    assert!(error.contains("--domains"), "{error}");
    let error = crawl(&["trawl", "crawl", "-X", "/ok,/[bad", "a.org"]).unwrap_err();
    assert!(error.contains("--exclude-directories"), "{error}");
    let error = crawl(&["trawl", "crawl", "--prefer-family", "ipx", "a.org"]).unwrap_err();
    assert!(error.contains("IPv4"), "{error}");
    let error = crawl(&["trawl", "crawl", "-4", "-6", "a.org"]).unwrap_err();
    assert!(error.contains("cannot be used with"), "{error}");
}

#[test]
fn wget_names_conflict_with_the_flags_they_stand_for() {
    for pair in [
        ["--wait", "1", "--delay", "1s"],
        ["-l", "2", "--max-depth", "2"],
        ["-t", "2", "--retries", "1"],
        ["-Q", "1m", "--max-bytes", "1MB"],
        ["-H", "--scope", "any", "x"],
    ] {
        let mut argv = vec!["trawl", "crawl"];
        argv.extend(pair.iter().filter(|a| **a != "x"));
        argv.push("a.org");
        let error = crawl(&argv).unwrap_err();
        assert!(error.contains("cannot be used with"), "{pair:?}: {error}");
    }
}

#[test]
fn the_command_line_wins_over_the_files_other_name_for_the_same_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trawl.toml");
    let config = file.display().to_string();
    let with_file = |text: &str, extra: &[&str]| {
        std::fs::write(&file, text).unwrap();
        let head = ["trawl", "crawl", "--config", config.as_str()];
        crawl_args(&head.iter().chain(extra).copied().collect::<Vec<_>>())
    };
    // wget's name in the file, trawl's on the command line, and the other way round.
    assert_eq!(
        with_file("level = 3\n", &["--max-depth", "0", "a.org"]).max_depth,
        Some(0)
    );
    // (-l is folded into --max-depth later; the file's 3 must not be there beside it.)
    assert_eq!(
        with_file("max-depth = 3\n", &["-l", "1", "a.org"]).max_depth,
        None
    );
    let waited = with_file("wait = 1\n", &["--delay", "0s", "a.org"]);
    assert_eq!(waited.delay, Duration::ZERO);
    let scoped = with_file("span-hosts = true\n", &["--scope", "host", "a.org"]);
    assert_eq!(scoped.scope, Some(ScopeKind::Host));
    // The same through the file's `execute` key (it was refused: --delay with --wait).
    let executed = with_file("execute = [\"wait=3\"]\n", &["--delay", "0s", "a.org"]);
    assert_eq!(executed.delay, Duration::ZERO);
}

#[test]
fn a_switch_whose_value_may_be_left_out_is_on_with_true_or_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trawl.toml");
    let config = file.display().to_string();
    for text in ["deny-ports = true\n", "deny-ports = []\n"] {
        std::fs::write(&file, text).unwrap();
        let args = crawl_args(&["trawl", "crawl", "--config", config.as_str(), "a.org"]);
        assert_eq!(args.deny_ports, Some(Vec::new()), "{text}");
    }
}

#[test]
fn a_files_relative_paths_are_its_directorys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trawl.toml");
    std::fs::write(
        &file,
        "seeds = \"more-seeds.txt\"\nout = \"crawl\"\nstats = \"/var/tmp/s.json\"\n",
    )
    .unwrap();
    let config = file.display().to_string();
    let args = crawl_args(&["trawl", "crawl", "--config", config.as_str()]);
    assert_eq!(
        args.seeds_file.as_deref(),
        Some(dir.path().join("more-seeds.txt").as_path())
    );
    assert_eq!(args.out, dir.path().join("crawl"));
    assert_eq!(
        args.report.stats.as_deref(),
        Some(std::path::Path::new("/var/tmp/s.json"))
    );
    std::fs::write(&file, "seeds = \"-\"\n").unwrap();
    let args = crawl_args(&["trawl", "crawl", "--config", config.as_str()]);
    assert_eq!(args.seeds_file.as_deref(), Some(std::path::Path::new("-")));
}

/// `-v -v` is two levels while a single-value flag given twice takes its last value, as
/// wget's getopt does (an earlier attempt, clap's `args_override_self`, made `-v -v` one).
#[test]
fn a_flag_given_twice_takes_its_last_value_while_lists_and_counts_keep_every_one() {
    let args = crawl_args(&[
        "trawl",
        "crawl",
        "-U",
        "first",
        "-U",
        "second",
        "-w",
        "1s",
        "-w",
        "0",
        "--include",
        "a",
        "--include",
        "b",
        "-v",
        "-v",
        "--no-parent",
        "--no-parent",
        "a.org",
    ]);
    assert_eq!(args.user_agent, "second");
    assert_eq!(args.include, ["a", "b"]);
    assert_eq!(args.report.verbose, 2);
}
