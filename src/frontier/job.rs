//! What the frontier hands out and takes in: candidate URLs, jobs and the answer to "what
//! next?".

use std::time::Instant;

use url::Url;

/// A URL offered to the frontier.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Canonical URL (see [`crate::url_rules::canonicalize`]).
    pub url: Url,
    /// Link hops from a seed.
    pub depth: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// A page requisite this many transclusion hops from a page (0: an ordinary URL).
    pub requisite: u8,
    /// The `Referer` its request sends ([`crate::url_rules::referrer`]).
    pub referer: Option<Box<str>>,
}

/// What a job fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKind {
    /// A page URL.
    Page,
    /// robots.txt of `origin`, `hops` redirects in.
    Robots {
        /// The origin the rules are for.
        origin: String,
        /// Redirect hops so far.
        hops: u32,
    },
    /// Resolve the host's name to find its politeness group (`--politeness ip`); no request.
    Resolve,
    /// A page requisite (`--page-requisites`), `hops` transclusions from a page.
    Requisite {
        /// Transclusion hops (1: needed by a page; 2: needed by a stylesheet it needs; ...).
        hops: u8,
    },
    /// A sitemap file, `nesting` index levels below robots.txt.
    Sitemap {
        /// Index levels above this file.
        nesting: u32,
    },
}

/// One fetch to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Page or robots.txt.
    pub kind: JobKind,
    /// The URL to fetch.
    pub url: Url,
    /// The politeness key (host name) this job runs under.
    pub host: String,
    /// Link hops from a seed.
    pub depth: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// Failed attempts before this one.
    pub attempt: u32,
    /// The `Referer` its request sends.
    pub referer: Option<Box<str>>,
}

/// The answer to "what next?".
#[derive(Debug)]
pub enum Next {
    /// Run this job.
    Job(Job),
    /// Nothing is ready; ask again at this time.
    Wait(Instant),
    /// Nothing is ready or waiting, but fetches are in flight and may add work.
    Idle,
    /// No work left at all.
    Exhausted,
}
