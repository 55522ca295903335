//! The seeds a crawl starts from: those of the command line, checked against the URL limits,
//! and the seeds file (`--seeds FILE` or `-`), read here only far enough to know it holds a
//! usable seed (the crawl reads the rest as it runs); and the addresses of IP-literal seeds
//! other workers of a shared crawl brought, which the SSRF guard allows.

use crate::cli::CrawlArgs;
use crate::fetch::AddressGuard;
use crate::seeds::{parse_seed, Seed, SeedPosition, SeedProblem, SeedReader, SeedSource};

use super::{ConfigError, Limits};

/// The seeds of the command line, and the seeds file to read as the crawl runs.
pub(super) struct Collected {
    /// Usable seeds of the command line, without duplicates.
    pub(super) seeds: Vec<Seed>,
    /// Command-line seeds that could not be used.
    pub(super) problems: Vec<SeedProblem>,
    /// `--seeds`, when given.
    pub(super) source: Option<SeedSource>,
}

/// Allows the exact addresses of IP-literal seeds that other workers of a shared crawl
/// brought (this worker's own were allowed by [`Config::from_args`]).
pub fn unlock_shared_seeds(guard: &AddressGuard, seeds: &[String]) {
    for seed in seeds {
        let Ok(url) = url::Url::parse(seed) else {
            continue;
        };
        let seed = Seed {
            url,
            http_fallback: false,
            credentials: false,
        };
        for addr in seed.socket_addrs() {
            guard.allow_seed_literal(addr);
        }
    }
}

/// The seeds of the command line and the seeds file, each checked against `limits` as links
/// are, without duplicates.
pub(super) fn collect_seeds(args: &CrawlArgs, limits: &Limits) -> Result<Collected, ConfigError> {
    let check = |seed: Seed| match limits.seed_violation(&seed.url) {
        Some(reason) => Err(reason),
        None => Ok(seed),
    };
    let mut seeds = Vec::new();
    let mut problems = Vec::new();
    for text in &args.seeds {
        match parse_seed(text).and_then(check) {
            Ok(seed) => seeds.push(seed),
            Err(reason) => problems.push(SeedProblem {
                line: 0,
                text: text.chars().take(200).collect(),
                reason,
            }),
        }
    }
    let mut seen = std::collections::HashSet::new();
    seeds.retain(|s| seen.insert(s.url.as_str().to_string()));
    let Some(arg) = &args.seeds_file else {
        return Ok(Collected {
            seeds,
            problems,
            source: None,
        });
    };
    // The file is read as the crawl runs (`crawl/seed_feed.rs`); here only far enough to know
    // it holds a usable seed when the command line gave none (else: exit 3, its bad lines
    // listed). Standard input cannot be read twice: what is read here is kept for the feed.
    let source = SeedSource::from_arg(arg);
    let unreadable = |source| ConfigError::SeedsFile {
        path: arg.clone(),
        source,
    };
    let reader = SeedReader::open(&source, SeedPosition::default()).map_err(unreadable)?;
    // Only standard input's bytes are kept (a file is read again by the feed).
    let mut reader = match source {
        SeedSource::Stdin { .. } => reader.recording(),
        _ => reader,
    };
    if !seeds.is_empty() {
        return Ok(Collected {
            seeds,
            problems,
            source: Some(source),
        });
    }
    loop {
        let batch = reader.next_batch(1, &check).map_err(unreadable)?;
        if problems.len() < MAX_LISTED_PROBLEMS {
            problems.extend(batch.problems);
        }
        if !batch.seeds.is_empty() {
            // Its problems are reported again as the crawl reads the file.
            problems.retain(|p| p.line == 0);
            let source = match source {
                SeedSource::Stdin { .. } => SeedSource::Stdin {
                    head: reader.into_read_bytes(),
                },
                file => file,
            };
            return Ok(Collected {
                seeds,
                problems,
                source: Some(source),
            });
        }
        if reader.position().done {
            return Err(ConfigError::NoSeeds(problems));
        }
    }
}

/// Bad seed lines listed when no seed is usable.
const MAX_LISTED_PROBLEMS: usize = 1000;
