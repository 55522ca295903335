//! The `trawl` binary: parse the command line, run, exit with a documented code.

fn main() -> std::process::ExitCode {
    let cli = trawl::config_file::parse_command_line();
    trawl::app::run(cli).into()
}

/// mimalloc instead of glibc's malloc: buffers allocated on one runtime thread are freed on
/// another (tasks move between workers, records go to the writer thread), and glibc then takes
/// the other thread's arena lock. On a crawl of small pages that contention made ~0.75 futex
/// calls per request; mimalloc frees across threads without a lock (docs/PERFORMANCE.md: 12%
/// less CPU per page, built without transparent huge pages to keep the resident set small).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
