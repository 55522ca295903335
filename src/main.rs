//! The `trawl` binary: parse the command line, run, exit with a documented code.

fn main() -> std::process::ExitCode {
    let cli = trawl::cli::parse();
    trawl::app::run(cli).into()
}
