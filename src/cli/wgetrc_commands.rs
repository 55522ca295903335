//! wget's `-e COMMAND` (`--execute`): a wgetrc command given on the command line. Most wgetrc
//! commands are wget's long flags by another spelling (case, `_` and `-` do not count:
//! `page_requisites = on` is `--page-requisites`), so each `-e` is written as the flag of
//! `trawl crawl` it names before clap parses, with wget's meaning: `on`/`off` for a flag that
//! takes no value, the value for one that does; `NAME = off` for a `--no-NAME` flag
//! (`cache = off` is `--no-cache`). A few have no flag of that name, or trawl's flag of that
//! name means another thing: `robots`, `http_proxy`/`https_proxy` (`--proxy`), `use_proxy`,
//! `accept` (wget's `-A`), `reclevel` (`-l`), `numtries`, `timeout` (`-T`),
//! `connect_timeout` (in seconds), `input` (`--seeds`), `logfile` (`--log-file`), and the
//! file-tree ones.
//! A command trawl has no flag for is refused by name (the caller exits 2).
//! A command that turns an on/off flag off (`robots = on` is no `--ignore-robots`) takes that
//! flag away from the arguments before it, and from a `--config` file, as wget reads its
//! commands in order and the command line after its wgetrc.

use std::ffi::OsString;

use clap::CommandFactory;

use super::wget_refused::refusal;
use super::Cli;

/// A command line with its wgetrc commands read.
#[derive(Debug, Default)]
pub struct WgetrcCommandLine {
    /// The arguments, each `-e NAME=VALUE` written as the flag it names.
    pub argv: Vec<OsString>,
    /// The on/off flags (`--ignore-robots`) a command turned off and none turned on again:
    /// a `--config` file may not turn them on.
    pub turned_off: Vec<String>,
}

/// What one wgetrc command sets.
#[derive(Debug, PartialEq)]
pub struct WgetrcSetting {
    /// The arguments it stands for.
    pub flags: Vec<String>,
    /// The on/off flag it turns off (`--ignore-robots` for `robots = on`), if any.
    pub off: Option<String>,
}

/// `argv` (a `trawl crawl` command line) with each `-e NAME=VALUE` written as the flag it
/// names; an error for a command trawl cannot take. Only arguments before a `--` are read.
pub fn wgetrc_commands(argv: Vec<OsString>) -> Result<WgetrcCommandLine, String> {
    if argv.get(1).and_then(|a| a.to_str()) != Some("crawl") {
        return Ok(WgetrcCommandLine {
            argv,
            turned_off: Vec::new(),
        });
    }
    let mut out = Vec::with_capacity(argv.len());
    let mut turned_off: Vec<String> = Vec::new();
    let mut proxies = Proxies::default();
    let mut args = argv.into_iter();
    while let Some(arg) = args.next() {
        let command = match arg.to_str() {
            Some("--") => {
                out.push(arg);
                out.extend(args.by_ref());
                break;
            }
            Some("-e" | "--execute") => match args.next() {
                Some(value) => value.to_string_lossy().into_owned(),
                None => {
                    out.push(arg);
                    continue;
                }
            },
            Some(s) if s.starts_with("--execute=") => s["--execute=".len()..].to_string(),
            // `-e` in a cluster of short flags, as getopt reads it: `-qe robots=off`,
            // `-pewait=3` (before, the cluster reached clap, which dropped the `-e` unsaid).
            Some(s) => match execute_in_cluster(s) {
                Some((before, inline)) => {
                    if !before.is_empty() {
                        out.push(OsString::from(format!("-{before}")));
                    }
                    match inline {
                        Some(command) => command.to_string(),
                        None => match args.next() {
                            Some(value) => value.to_string_lossy().into_owned(),
                            None => {
                                out.push(OsString::from("-e"));
                                continue;
                            }
                        },
                    }
                }
                None => {
                    out.push(arg);
                    continue;
                }
            },
            None => {
                out.push(arg);
                continue;
            }
        };
        let setting = wgetrc_setting(&command)?;
        proxies.read(&command, &setting);
        if let Some(off) = setting.off {
            let spellings = spellings(&off);
            out.retain(|arg| {
                !arg.to_str()
                    .is_some_and(|a| spellings.iter().any(|s| s == a))
            });
            turned_off.push(off);
        }
        for flag in setting.flags {
            turned_off.retain(|off| off != &flag);
            out.push(OsString::from(flag));
        }
    }
    proxies.apply(&mut out)?;
    Ok(WgetrcCommandLine {
        argv: out,
        turned_off,
    })
}

/// The proxies wgetrc commands name, and whether `use_proxy = off` turns them off (as it
/// does in wget, wherever it stands). wget's usual lines name one proxy twice
/// (`http_proxy` and `https_proxy`): one `--proxy`; two different ones are refused, trawl
/// sending every request through one.
#[derive(Default)]
struct Proxies {
    named: Vec<String>,
    off: bool,
}

impl Proxies {
    fn read(&mut self, command: &str, setting: &WgetrcSetting) {
        let (name, value) = command.split_once('=').unwrap_or((command, ""));
        if plain(name) == "useproxy" {
            self.off = matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "off" | "no" | "0" | "false"
            );
        }
        let named = setting.flags.iter().filter(|f| f.starts_with("--proxy="));
        self.named.extend(named.cloned());
    }

    fn apply(self, argv: &mut Vec<OsString>) -> Result<(), String> {
        let named = |arg: &OsString| {
            arg.to_str()
                .is_some_and(|a| self.named.iter().any(|n| n == a))
        };
        if self.off {
            argv.retain(|arg| !named(arg));
            return Ok(());
        }
        let mut distinct = self.named.clone();
        distinct.dedup();
        if let [first, second, ..] = &distinct[..] {
            return Err(format!(
                "-e http_proxy and -e https_proxy name two proxies ({} and {}): trawl sends every request through one; name it once",
                &first["--proxy=".len()..],
                &second["--proxy=".len()..]
            ));
        }
        // One proxy named twice: one --proxy.
        let mut seen = false;
        argv.retain(|arg| !named(arg) || !std::mem::replace(&mut seen, true));
        Ok(())
    }
}

/// Where `-e` stands in `arg`, a cluster of short flags (`-qe`, `-pewait=3`): the flags before
/// it, and the command written on in the same argument (else it is the next one); `None` when
/// the cluster holds no `-e`, a flag before it takes the rest of the cluster as its value
/// (`-le` is `-l e`), or a letter before it is no flag (`-1e5`).
fn execute_in_cluster(arg: &str) -> Option<(&str, Option<&str>)> {
    let letters = arg
        .strip_prefix('-')
        .filter(|l| !l.starts_with('-') && l.contains('e'))?;
    // Built only for a cluster that holds an `e`: most short flags stand alone.
    let crawl = Cli::command();
    let crawl = crawl.find_subcommand("crawl")?;
    for (at, letter) in letters.char_indices() {
        if letter == 'e' {
            let rest = &letters[at + 1..];
            return Some((&letters[..at], (!rest.is_empty()).then_some(rest)));
        }
        // Only known flags before it: `-1e5` is a value, not a cluster.
        let flag = crawl
            .get_arguments()
            .find(|a| a.get_short() == Some(letter))?;
        if flag.get_action().takes_values() {
            return None;
        }
    }
    None
}

/// The ways an on/off flag (`--ignore-robots`) is written alone: its long name, its aliases,
/// its short letter.
fn spellings(long: &str) -> Vec<String> {
    let mut all = vec![long.to_string()];
    let crawl = Cli::command();
    let flag = crawl.find_subcommand("crawl").and_then(|c| {
        c.get_arguments()
            .find(|a| a.get_long() == long.strip_prefix("--"))
    });
    if let Some(flag) = flag {
        let aliases = flag.get_all_aliases().unwrap_or_default();
        all.extend(aliases.into_iter().map(|a| format!("--{a}")));
        all.extend(flag.get_short().map(|c| format!("-{c}")));
    }
    all
}

/// The command-line arguments one wgetrc command stands for.
pub fn wgetrc_flags(command: &str) -> Result<Vec<String>, String> {
    wgetrc_setting(command).map(|setting| setting.flags)
}

/// What one wgetrc command sets: the arguments it stands for, and the flag it turns off.
pub fn wgetrc_setting(command: &str) -> Result<WgetrcSetting, String> {
    let refused = |why: &str| format!("-e {command:?}: {why}");
    let (name, value) = command
        .split_once('=')
        .ok_or_else(|| refused("a wgetrc command is NAME=VALUE"))?;
    let (name, value) = (plain(name), value.trim());
    let on = || match value.to_ascii_lowercase().as_str() {
        "on" | "yes" | "1" | "true" => Ok(true),
        "off" | "no" | "0" | "false" => Ok(false),
        _ => Err(refused("the value is on or off")),
    };
    let when = |on: bool, flag: &str| match on {
        true => WgetrcSetting {
            flags: vec![flag.to_string()],
            off: None,
        },
        false => WgetrcSetting {
            flags: Vec::new(),
            off: Some(flag.to_string()),
        },
    };
    let flags = |flags: Vec<String>| WgetrcSetting { flags, off: None };
    Ok(match name.as_str() {
        "robots" => when(!on()?, "--ignore-robots"),
        // No proxy is read from the environment: only http_proxy/https_proxy name one.
        "useproxy" => flags(Vec::new()),
        "httpproxy" | "httpsproxy" => {
            let url = match value.contains("://") {
                true => value.to_string(),
                false => format!("http://{value}"),
            };
            flags(vec![format!("--proxy={url}")])
        }
        "noproxy" => return Err(refused(
            "every request goes through --proxy; trawl keeps no list of hosts to reach directly",
        )),
        // Names wget's own long flags spell otherwise, or trawl's flag of that name means
        // something else (trawl's --accept takes media types, wget's accept suffixes).
        "accept" => flags(vec![format!("-A{value}")]),
        "reclevel" => flags(vec![format!("--level={value}")]),
        "numtries" => flags(vec![format!("--tries={value}")]),
        "timeout" => flags(vec![format!("-T{value}")]),
        "connecttimeout" => flags(vec![format!("--connect-timeout={}", with_unit(value))]),
        "input" => flags(vec![format!("--seeds={value}")]),
        "logfile" => flags(vec![format!("--log-file={value}")]),
        // Where wget puts the files it writes: nothing for a WARC file.
        "dirprefix" | "addhostdir" | "dirstruct" => flags(Vec::new()),
        _ => {
            let crawl = Cli::command();
            let crawl = crawl
                .find_subcommand("crawl")
                .expect("the crawl subcommand exists");
            let named = |name: &str| {
                crawl.get_arguments().find(|a| {
                    a.get_long().is_some_and(|l| plain(l) == name)
                        || a.get_all_aliases()
                            .is_some_and(|all| all.iter().any(|l| plain(l) == name))
                })
            };
            let dashed = format!("--{}", command_name(command).replace('_', "-"));
            if let Some(flag) = named(&name) {
                let long = flag.get_long().expect("found by its long name");
                match flag.get_action().takes_values() {
                    true => flags(vec![format!("--{long}={value}")]),
                    false => when(on()?, &format!("--{long}")),
                }
            } else if let Some(flag) = named(&format!("no{name}")) {
                // `cache = off` is --no-cache, `check_certificate = off` --no-check-certificate.
                let long = flag.get_long().expect("found by its long name");
                when(!on()?, &format!("--{long}"))
            } else if let Some(why) =
                refusal(&dashed).or_else(|| refusal(&format!("--no-{}", &dashed[2..])))
            {
                return Err(refused(&why));
            } else {
                return Err(refused(
                    "trawl has no flag for this wgetrc command (see trawl crawl --help)",
                ));
            }
        }
    })
}

/// A wgetrc time in seconds as trawl's durations are written (`5` is `5s`).
fn with_unit(value: &str) -> String {
    match value.parse::<f64>() {
        Ok(_) => format!("{value}s"),
        Err(_) => value.to_string(),
    }
}

/// The name of a wgetrc command as written, trimmed and in lower case.
fn command_name(command: &str) -> String {
    let name = command.split_once('=').map_or(command, |(name, _)| name);
    name.trim().to_ascii_lowercase()
}

/// A wgetrc name or flag without case, `_` or `-` (wget reads `page_requisites`,
/// `pagerequisites` and `PAGE-REQUISITES` alike).
fn plain(name: &str) -> String {
    name.trim()
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(args: &[&str]) -> Result<Vec<String>, String> {
        let argv = ["trawl", "crawl"].iter().chain(args).map(OsString::from);
        wgetrc_commands(argv.collect()).map(|v| {
            v.argv
                .into_iter()
                .skip(2)
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
    }

    #[test]
    fn an_e_in_a_cluster_of_short_flags_is_read_as_getopt_reads_it() {
        assert_eq!(
            rewritten(&["-qe", "robots=off", "-pewait=3", "a.org"]).unwrap(),
            ["-q", "--ignore-robots", "-p", "--wait=3", "a.org"]
        );
        // A flag that takes a value takes the rest of the cluster, and a number is no cluster.
        assert_eq!(rewritten(&["-le", "a.org"]).unwrap(), ["-le", "a.org"]);
        assert_eq!(rewritten(&["-1e5"]).unwrap(), ["-1e5"]);
    }

    #[test]
    fn wgetrc_commands_become_the_flags_they_name() {
        assert_eq!(
            rewritten(&[
                "-e",
                "robots=off",
                "-e",
                "page_requisites = on",
                "--execute=Wait=2",
                "-eTRIES=3",
                "-e",
                "convert_links=on",
                "-e",
                "span_hosts=off",
                "a.org",
            ])
            .unwrap(),
            [
                "--ignore-robots",
                "--page-requisites",
                "--wait=2",
                "--tries=3",
                "--no-directories",
                "a.org"
            ]
        );
        assert_eq!(
            rewritten(&["-e", "use_proxy=yes", "-e", "https_proxy=127.0.0.1:3128"]).unwrap(),
            ["--proxy=http://127.0.0.1:3128"]
        );
        let both = ["-e", "http_proxy=p:3128", "-e", "https_proxy=http://p:3128"];
        assert_eq!(rewritten(&both).unwrap(), ["--proxy=http://p:3128"]);
        let off = ["-e", "use_proxy=off", "-e", "http_proxy=p:3128"];
        assert!(rewritten(&off).unwrap().is_empty());
        let two = rewritten(&["-e", "http_proxy=p:3128", "-e", "https_proxy=q:3128"]);
        assert!(two.unwrap_err().contains("two proxies"));
        assert_eq!(
            rewritten(&["-e", "https_proxy=127.0.0.1:3128"]).unwrap(),
            ["--proxy=http://127.0.0.1:3128"]
        );
        assert_eq!(
            rewritten(&["-e", "check_certificate=off", "-e", "timeout=60"]).unwrap(),
            ["--insecure", "-T60"]
        );
        assert_eq!(
            rewritten(&[
                "-e",
                "accept=pdf",
                "-e",
                "reclevel=2",
                "-e",
                "cookies=off",
                "-e",
                "cache=off",
                "-e",
                "connect_timeout=5",
            ])
            .unwrap(),
            [
                "-Apdf",
                "--level=2",
                "--no-cookies",
                "--no-cache",
                "--connect-timeout=5s"
            ]
        );
        // What the robots parser of clap's -e field held, before this pass took every -e.
        assert_eq!(wgetrc_flags("robots = off").unwrap(), ["--ignore-robots"]);
        assert!(wgetrc_flags("ROBOTS=on").unwrap().is_empty());
        assert!(wgetrc_flags("robots").is_err());
        assert_eq!(rewritten(&["--", "-e", "x"]).unwrap(), ["--", "-e", "x"]);
    }

    #[test]
    fn a_later_command_turns_off_what_came_before_it() {
        // As wget reads its command line in order.
        assert_eq!(
            rewritten(&[
                "-H",
                "--ignore-robots",
                "-e",
                "robots=on",
                "-e",
                "span_hosts=off"
            ])
            .unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            rewritten(&["-e", "robots=on", "-e", "robots=off"]).unwrap(),
            ["--ignore-robots"]
        );
        let argv = [
            "trawl",
            "crawl",
            "-e",
            "cache=on",
            "-e",
            "robots=off",
            "-e",
            "robots=on",
        ];
        let read = wgetrc_commands(argv.iter().map(OsString::from).collect()).unwrap();
        assert_eq!(read.turned_off, ["--no-cache", "--ignore-robots"]);
        assert_eq!(
            wgetrc_setting("robots=on").unwrap(),
            WgetrcSetting {
                flags: Vec::new(),
                off: Some("--ignore-robots".into())
            }
        );
    }

    #[test]
    fn commands_trawl_has_no_flag_for_are_refused_by_name() {
        for (args, hint) in [
            (&["-e", "ftp_user=x"][..], "http:// and https://"),
            (&["-e", "no_such_thing=x"], "no flag"),
            (&["-e", "robots"], "NAME=VALUE"),
            (&["-e", "recursive=maybe"], "on or off"),
            (&["-e", "http_keep_alive=off"], "--no-http-keep-alive"),
            (&["-e", "no_proxy=localhost"], "--proxy"),
        ] {
            let error = rewritten(args).unwrap_err();
            assert!(error.contains(hint), "{args:?}: {error}");
        }
    }
}
