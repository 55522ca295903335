//! The `trawl` binary: parse the command line, run, exit with a documented code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = trawl::cli::Cli::parse();
    trawl::app::run(cli).into()
}
