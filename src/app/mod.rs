//! The `trawl` command: turns parsed arguments into a run and a run into an exit code.
//! Everything user-facing at the top level (messages, report, JSON stats) happens here, one
//! file per command.

mod archive_commands;
mod crawl_command;
mod man_page;
mod messages;
mod search_commands;
mod status_command;

use clap::CommandFactory;

use crate::cli::{Cli, Command};
use crate::exit::ExitCode;

/// Runs the command and returns the exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Crawl(args) => crawl_command::run_crawl(*args),
        Command::Index(args) => archive_commands::run_index(args),
        Command::Wacz(args) => archive_commands::run_wacz(args),
        Command::Derive(args) => archive_commands::run_derive(args),
        Command::SearchIndex(args) => search_commands::run_search_index(args),
        Command::Search(args) => search_commands::run_search(args),
        Command::Status(args) => status_command::run_status(args),
        Command::Stop(args) => status_command::run_stop(args),
        Command::Completions(args) => {
            let mut command = Cli::command();
            clap_complete::generate(args.shell, &mut command, "trawl", &mut std::io::stdout());
            ExitCode::Success
        }
        Command::Man => match man_page::write_man_page(&mut std::io::stdout()) {
            Ok(()) => ExitCode::Success,
            Err(e) => {
                eprintln!("trawl: error: writing the man page: {e}");
                ExitCode::OutputError
            }
        },
    }
}
