//! Frontier behaviour with a driven clock: the helpers here, the tests by subject in the
//! files beside.

use super::*;
use std::collections::HashSet;
use std::time::Duration;

use crate::crawl_db::CrawlDb;
use crate::frontier::robots_state::{MAX_ROBOTS_ATTEMPTS, MAX_ROBOTS_REDIRECTS};

const DELAY: Duration = Duration::from_millis(100);

mod host_down;
mod robots_and_sitemaps;
mod saved_state;
mod scheduling;

/// A robots.txt answered 200 with `body`.
fn robots_file(body: Vec<u8>) -> RobotsOutcome {
    RobotsOutcome::Fetched {
        status: 200,
        body,
        retry_after: None,
    }
}

fn frontier(obey: bool) -> Frontier {
    Frontier::open(config(obey), Box::new(CrawlDb::in_memory()), Instant::now())
        .unwrap()
        .with_seed(7)
}

fn cand(s: &str, depth: u32) -> Candidate {
    Candidate {
        url: Url::parse(s).unwrap(),
        depth,
        redirects: 0,
        requisite: 0,
        referer: None,
    }
}

fn job(n: Next) -> Job {
    match n {
        Next::Job(j) => j,
        other => panic!("expected a job, got {other:?}"),
    }
}

fn config(obey: bool) -> FrontierConfig {
    FrontierConfig {
        delay_factor: 0.0,
        delay: DELAY,
        random_wait: false,
        max_delay: Duration::from_secs(30),
        robots_agent: "trawl".into(),
        obey_robots: obey,
        robots_retry: Duration::from_secs(5),
        robots_attempts: MAX_ROBOTS_ATTEMPTS,
        politeness: PolitenessKey::Host,
        sitemaps: false,
        order: CrawlOrder::Bfs,
    }
}

fn reopen(dir: &std::path::Path, obey: bool) -> Frontier {
    Frontier::open(
        config(obey),
        Box::new(CrawlDb::open(dir).unwrap()),
        Instant::now(),
    )
    .unwrap()
}

/// The frontier saved in `dir`, with `config`.
fn open_with(dir: &std::path::Path, config: FrontierConfig, t: Instant) -> Frontier {
    Frontier::open(config, Box::new(CrawlDb::open(dir).unwrap()), t).unwrap()
}

fn drain(f: &mut Frontier, mut t: Instant) -> Vec<String> {
    let mut urls = Vec::new();
    loop {
        match f.next(t) {
            Next::Job(j) => {
                urls.push(j.url.to_string());
                f.complete(&j.host, t);
            }
            Next::Wait(at) => t = at,
            Next::Idle | Next::Exhausted => return urls,
        }
    }
}

fn grouped(key: PolitenessKey) -> Frontier {
    let config = FrontierConfig {
        politeness: key,
        ..config(false)
    };
    Frontier::open(config, Box::new(CrawlDb::in_memory()), Instant::now())
        .unwrap()
        .with_seed(7)
}

/// Runs `f` with `slots` fetches at a time, each taking `took`, until `pages` pages are done;
/// every robots.txt is empty. Returns the jobs in the order they started.
fn run_slots(f: &mut Frontier, slots: usize, took: Duration, pages: usize) -> Vec<Job> {
    let mut t = Instant::now();
    let mut started = Vec::new();
    let mut running: Vec<(Instant, Job)> = Vec::new();
    let mut done = 0;
    while done < pages {
        while running.len() < slots {
            match f.next(t) {
                Next::Job(j) => {
                    started.push(j.clone());
                    running.push((t + took, j));
                }
                _ => break,
            }
        }
        let Some(i) = (0..running.len()).min_by_key(|&i| running[i].0) else {
            match f.next(t) {
                Next::Wait(at) => {
                    t = at;
                    continue;
                }
                other => panic!("nothing running and {other:?}"),
            }
        };
        let (end, j) = running.remove(i);
        t = t.max(end);
        if matches!(j.kind, JobKind::Robots { .. }) {
            let body = Vec::new();
            f.robots_result(&j, robots_file(body), t);
        } else {
            f.complete(&j.host, t);
            done += 1;
        }
    }
    started
}
