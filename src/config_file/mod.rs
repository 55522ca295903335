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
                    // As for a key: given on the command line, or a flag that cannot go with
                    // one given there (`wait=3` and `--delay 0s`), and the command line wins.
                    let given = turned_off(&flag)
                        || sub
                            .get_arguments()
                            .find(|a| names_flag(a, &flag))
                            .is_some_and(|a| {
                                crawl.value_source(a.get_id().as_str())
                                    == Some(ValueSource::CommandLine)
                                    || conflicts_with_given(sub, a, crawl)
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
            || conflicts_with_given(sub, arg, crawl)
        {
            continue;
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        // A flag whose value may be left out (`--deny-ports`) is on with `true` or `[]`.
        let bare = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        let empty = value.as_array().is_some_and(Vec::is_empty);
        match value {
            toml::Value::Boolean(on) if !takes_value || bare => {
                if *on {
                    added.push(OsString::from(format!("--{name}")));
                }
            }
            _ if bare && empty => added.push(OsString::from(format!("--{name}"))),
            _ => {
                for v in values(key, value)? {
                    let v = beside_the_file(path, arg, v);
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
/// True when the command line gave a flag `arg` cannot go with: the file's wget name and the
/// command line's trawl flag for the same thing (`level` and `--max-depth`, `wait` and
/// `--delay`), or the other way round. The command line wins, as it does over the same key.
fn conflicts_with_given(sub: &clap::Command, arg: &clap::Arg, crawl: &clap::ArgMatches) -> bool {
    let given =
        |a: &clap::Arg| crawl.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine);
    sub.get_arg_conflicts_with(arg).into_iter().any(given)
        || sub.get_arguments().filter(|b| given(b)).any(|b| {
            sub.get_arg_conflicts_with(b)
                .iter()
                .any(|c| c.get_id() == arg.get_id())
        })
}

/// A relative path the file gives (`seeds = "more-seeds.txt"`) is the file's directory's, so a
/// cron job that runs in another directory reads the same files (before, the working
/// directory's; wgetrc's are, and a cron job then failed to find its seeds). `-` (standard
/// input) and absolute paths are left as they are.
fn beside_the_file(config: &std::path::Path, arg: &clap::Arg, value: String) -> String {
    let is_path = arg.get_value_parser().type_id() == std::any::TypeId::of::<std::path::PathBuf>();
    let relative = std::path::Path::new(&value).is_relative() && value != "-";
    match (is_path && relative, config.parent()) {
        (true, Some(dir)) => dir.join(&value).display().to_string(),
        _ => value,
    }
}

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
mod tests;
