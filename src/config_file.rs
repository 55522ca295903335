//! `trawl crawl --config FILE`: crawl flags from a TOML file, so a cron job's long command line
//! becomes a reviewed file. Every crawl flag is a key, by its long name (`max-pages = 100`,
//! `max_pages` also works); `urls` holds seed URLs (the positional arguments). A flag given on
//! the command line wins over the file. The file's values become command-line arguments that
//! clap then parses and validates like any others, so the two can never disagree.

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{CommandFactory, Parser};

use crate::cli::{
    join_port_lists, refused_wget_flag, wget_short_words, wgetrc_commands, wgetrc_flags, Cli,
    WgetrcCommandLine,
};

/// The key of the positional seed URLs.
const URLS_KEY: &str = "urls";
/// The key of wget's `-e`: wgetrc commands, each read as the flag it names.
const EXECUTE_KEY: &str = "execute";

/// Parses the process's command line, with the values of a `crawl --config FILE` merged in;
/// exits with code 2 and a message when the file cannot be used or a wget flag is refused
/// (as clap does for bad flags).
pub fn parse_command_line() -> Cli {
    match command_line(std::env::args_os().collect()) {
        Ok(argv) => Cli::parse_from(argv),
        Err(e) => {
            eprintln!("trawl: error: {e}");
            std::process::exit(crate::exit::ExitCode::BadArguments as i32);
        }
    }
}

/// `argv` as clap is to read it: wget's short words and wgetrc commands written as trawl's
/// flags, the `--config` file merged in (its `execute` key read as wgetrc commands too, the
/// command line winning); an error for a file that cannot be used or a wget flag trawl
/// refuses.
pub fn command_line(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let argv = join_port_lists(wget_short_words(argv));
    let argv = wgetrc_commands(argv).and_then(merge_config_file)?;
    match refused_wget_flag(&argv) {
        Some(refused) => Err(refused),
        None => Ok(argv),
    }
}

/// `argv` with the values of the `--config` file of a `crawl` command added for every flag the
/// command line does not set (nor turn off with a wgetrc command, as `-e robots=on` does
/// `--ignore-robots`). Unchanged when there is no `--config` (or the command line does not
/// parse: clap reports that).
pub fn merge_config_file(command_line: WgetrcCommandLine) -> Result<Vec<OsString>, String> {
    let WgetrcCommandLine { argv, turned_off } = command_line;
    let turned_off = |long: &str| turned_off.iter().any(|off| off == long);
    let command = Cli::command();
    let Ok(matches) = command.clone().try_get_matches_from(argv.clone()) else {
        return Ok(argv);
    };
    let Some(("crawl", crawl)) = matches.subcommand() else {
        return Ok(argv);
    };
    let Some(path) = crawl.get_one::<std::path::PathBuf>("config") else {
        return Ok(argv);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --config {}: {e}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| format!("--config {}: {e}", path.display()))?;
    let sub = command
        .find_subcommand("crawl")
        .expect("the crawl subcommand exists");
    let mut added = Vec::new();
    let mut urls = Vec::new();
    for (key, value) in &table {
        let name = key.replace('_', "-");
        if name == URLS_KEY {
            if crawl.value_source("seeds") != Some(ValueSource::CommandLine) {
                urls.extend(values(key, value)?);
            }
            continue;
        }
        if name == EXECUTE_KEY {
            // wgetrc commands: each flag one names, unless the command line gives that flag.
            for command in values(key, value)? {
                for flag in wgetrc_flags(&command)? {
                    let given = turned_off(&flag)
                        || sub
                            .get_arguments()
                            .find(|a| names_flag(a, &flag))
                            .is_some_and(|a| {
                                crawl.value_source(a.get_id().as_str())
                                    == Some(ValueSource::CommandLine)
                            });
                    if !given {
                        added.push(OsString::from(flag));
                    }
                }
            }
            continue;
        }
        let arg = sub
            .get_arguments()
            .find(|a| a.get_long() == Some(name.as_str()) && name != "config")
            .ok_or_else(|| format!("--config {}: unknown key {key:?}", path.display()))?;
        if crawl.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
            || turned_off(&format!("--{name}"))
        {
            continue;
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        match value {
            toml::Value::Boolean(on) if !takes_value => {
                if *on {
                    added.push(OsString::from(format!("--{name}")));
                }
            }
            _ => {
                for v in values(key, value)? {
                    added.push(OsString::from(format!("--{name}={v}")));
                }
            }
        }
    }
    let mut out = argv;
    out.extend(added);
    out.extend(urls.into_iter().map(OsString::from));
    Ok(out)
}

/// True when `flag` (`--wait=2`, `--ignore-robots`, `-T60`) is `arg`'s.
fn names_flag(arg: &clap::Arg, flag: &str) -> bool {
    match flag.strip_prefix("--") {
        Some(long) => arg.get_long() == Some(long.split('=').next().unwrap_or(long)),
        None => flag
            .strip_prefix('-')
            .and_then(|short| short.chars().next())
            .is_some_and(|c| arg.get_short() == Some(c)),
    }
}

/// The values of a key as text: a scalar, or each element of an array.
fn values(key: &str, value: &toml::Value) -> Result<Vec<String>, String> {
    match value {
        toml::Value::Array(items) => items.iter().map(|v| scalar(key, v)).collect(),
        v => Ok(vec![scalar(key, v)?]),
    }
}

fn scalar(key: &str, value: &toml::Value) -> Result<String, String> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(format!(
            "config key {key:?}: a {} is not a flag value",
            other.type_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

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
        let argv = merge_config_file(plain(os(&["trawl", "crawl", "--config", &config, "a.org"])))
            .unwrap();
        let Ok(Cli {
            command: crate::cli::Command::Crawl(args),
        }) = Cli::try_parse_from(argv)
        else {
            panic!("not a crawl")
        };
        let request = &args.request;
        assert_eq!(request.headers.len(), 1);
        assert_eq!(
            request.load_cookies.as_deref(),
            Some(std::path::Path::new("c.txt"))
        );
        assert_eq!(
            request.save_cookies.as_deref(),
            Some(std::path::Path::new("s.txt"))
        );
        assert_eq!(
            request.proxy.as_ref().map(|p| p.address()).as_deref(),
            Some("socks5h://127.0.0.1:9050")
        );
        assert!(request.dns_records && !request.no_cookies);
        assert_eq!(request.dns_server.len(), 2);

        std::fs::write(&file, "dealy = \"2s\"\n").unwrap();
        let err =
            merge_config_file(plain(os(&["trawl", "crawl", "--config", &config]))).unwrap_err();
        assert!(err.contains("unknown key \"dealy\""), "{err}");
    }
}
