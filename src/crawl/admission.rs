//! Which discovered URLs may enter the frontier: scope, depth, redirect hops, user patterns,
//! trap limits, ports and the extension pre-filter, with what its probes learned. Deduplication
//! is the frontier's job.

use url::Url;

use crate::config::Limits;
use crate::url_rules::{
    ExtensionFilter, ExtensionProbes, FileLists, ProbeAnswer, Scope, UrlFilter,
};

/// Why a URL was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Outside the crawl scope.
    Scope,
    /// Beyond `--max-depth`.
    Depth,
    /// Too many redirect hops.
    Redirects,
    /// Rejected by `--include`/`--exclude`.
    Pattern,
    /// Its extension names a type `--accept` does not take, and a probe of its kind of URL
    /// found a file of such a type (or none was allowed).
    Extension,
    /// Longer than `--max-url-length`.
    UrlLength,
    /// Too many path segments or a segment repeated too often (crawler trap).
    PathTrap,
    /// A port refused by `--deny-ports`, or port 0.
    Port,
}

/// Transclusion hops a requisite from a host outside the scope may be from its page: what a
/// page from elsewhere needs (a frame from another site, its stylesheet, their images). Past
/// that, chains go on only within the scope, so stylesheets on other hosts that import ever
/// more cannot lead the crawl across the web (Heritrix's `maxTransHops` is 2).
pub const MAX_FOREIGN_REQUISITE_HOPS: u8 = 3;

/// The admission rules of one crawl.
#[derive(Debug)]
pub struct Admission {
    /// In-scope hosts or domains; grows when a seed redirects elsewhere.
    pub scope: Scope,
    filter: UrlFilter,
    extensions: ExtensionFilter,
    /// What fetches of URLs the extension filter names answered, by kind of URL.
    probes: ExtensionProbes,
    max_depth: Option<u32>,
    max_redirects: u32,
    limits: Limits,
    /// wget's `-A`/`-R`.
    files: FileLists,
}

impl Admission {
    /// Rules from configuration; add the seeds to `scope` before use.
    pub fn new(
        scope: Scope,
        filter: UrlFilter,
        extensions: ExtensionFilter,
        max_depth: Option<u32>,
        max_redirects: u32,
        limits: Limits,
    ) -> Self {
        Admission {
            scope,
            filter,
            extensions,
            probes: ExtensionProbes::default(),
            max_depth,
            max_redirects,
            limits,
            files: FileLists::default(),
        }
    }

    /// wget's `-A`/`-R` file-name lists, for links and requisites.
    pub fn with_file_lists(mut self, files: FileLists) -> Self {
        self.files = files;
        self
    }

    /// The `--include`/`--exclude` patterns in force.
    pub fn filter(&self) -> &UrlFilter {
        &self.filter
    }

    /// Replaces the patterns (the live console).
    pub fn set_filter(&mut self, filter: UrlFilter) {
        self.filter = filter;
    }

    /// True when `depth` hops is past `--max-depth`.
    pub fn too_deep(&self, depth: u32) -> bool {
        self.max_depth.is_some_and(|max| depth > max)
    }

    /// Checks a link found at `depth` hops after `redirects` redirects.
    pub fn check(&self, url: &Url, depth: u32, redirects: u32) -> Result<(), Rejection> {
        self.check_as(url, depth, redirects, Checked::Link)
    }

    /// [`Admission::check`] of where a link redirects: fetched beyond `--scope` and
    /// `--no-parent`, as wget (`-r` without `-H`, with `-np`) and Heritrix (a redirect is a
    /// transclusion hop) fetch it, so that an in-scope link's content is not lost to a move;
    /// its own links are held to the scope as any page's are. `--include`/`--exclude`,
    /// `--https-only` and wget's lists (`-D`, `-I`, `-X`) still apply.
    pub fn check_redirect(&self, url: &Url, depth: u32, redirects: u32) -> Result<(), Rejection> {
        self.check_as(url, depth, redirects, Checked::Redirect)
    }

    /// [`Admission::check`] of where a seed redirects: a seed's own chain is taken as the seed
    /// is, without `--include`/`--exclude` and wget's lists (`-I`, `-X`, `-A`, `-R`), which a
    /// seed does not answer to either. A site whose `/` redirects to `/en/`, crawled with
    /// `--include /blog/` or `-I /en/blog`, is then crawled from `/en/`, as wget crawls it;
    /// before, the crawl ended at the redirect.
    pub fn check_seed_redirect(&self, url: &Url, redirects: u32) -> Result<(), Rejection> {
        self.check_as(url, 0, redirects, Checked::SeedRedirect)
    }

    fn check_as(
        &self,
        url: &Url,
        depth: u32,
        redirects: u32,
        checked: Checked,
    ) -> Result<(), Rejection> {
        let patterns = checked != Checked::SeedRedirect;
        if self.too_deep(depth) {
            return Err(Rejection::Depth);
        }
        if redirects > self.max_redirects {
            return Err(Rejection::Redirects);
        }
        self.length_and_port(url)?;
        let in_scope = match checked {
            Checked::Link => self.scope.allows(url),
            Checked::SeedRedirect => self.scope.allows_seed_redirect(url),
            Checked::Redirect => self.scope.lists_allow(url),
        };
        if !in_scope {
            return Err(Rejection::Scope);
        }
        if patterns && (!self.filter.allows(url) || !self.files_allow(url, Some(depth))) {
            return Err(Rejection::Pattern);
        }
        if self.limits.is_path_trap(url) {
            return Err(Rejection::PathTrap);
        }
        if self.skips_by_extension(url) {
            return Err(Rejection::Extension);
        }
        Ok(())
    }

    /// True when `url`'s extension names a type not archived and its kind of URL is not to
    /// be fetched (`url_rules/extension_probes.rs`): checked when a link is found, and again
    /// when a queued one is about to run, as a probe may have answered since.
    pub fn skips_by_extension(&self, url: &Url) -> bool {
        self.extensions
            .skipped_extension(url)
            .is_some_and(|ext| !self.probes.may_fetch(url, ext))
    }

    /// Takes what a page fetch of `url` answered, when its extension is one the pre-filter
    /// names: a page lets its kind of URL through, a file keeps it out.
    pub fn learn(&mut self, url: &Url, answer: ProbeAnswer) {
        if let Some(ext) = self.extensions.skipped_extension(url) {
            self.probes.learn(url, ext, answer);
        }
    }

    /// Whether a page requisite `hops` transclusions from its page may be queued: depth and
    /// the extension filter do not apply, nor scope up to [`MAX_FOREIGN_REQUISITE_HOPS`] (a
    /// page's images and stylesheets may live anywhere); URL limits, ports,
    /// `--include`/`--exclude` and wget's lists (`-D`, `-I`, `-X`, `-A`, `-R`) do.
    pub fn check_requisite(&self, url: &Url, hops: u8) -> Result<(), Rejection> {
        if hops > MAX_FOREIGN_REQUISITE_HOPS && !self.scope.allows_host(url)
            || !self.scope.lists_allow(url)
        {
            return Err(Rejection::Scope);
        }
        self.length_and_port(url)?;
        if !self.filter.allows(url) || !self.files_allow(url, None) {
            return Err(Rejection::Pattern);
        }
        Ok(())
    }

    /// Whether a sitemap file may be fetched: on a host in scope (a site outside it, reached
    /// by a redirect or named by a `Sitemap:` line, lists pages that are not wanted), and
    /// where the domain, scheme and directory lists (`-D`, `--exclude-domains`,
    /// `--https-only`, `-I`, `-X`), `--exclude`, the URL limits and the ports allow it.
    /// `--include` and `-A`/`-R` name the pages wanted, not the files that list them, as
    /// for robots.txt; a sitemap's place in its site is no link path, so no depth applies.
    pub fn check_sitemap(&self, url: &Url) -> Result<(), Rejection> {
        if !self.scope.allows_host(url) || !self.scope.lists_allow(url) {
            return Err(Rejection::Scope);
        }
        self.length_and_port(url)?;
        if self.filter.excludes_url(url) {
            return Err(Rejection::Pattern);
        }
        Ok(())
    }

    /// `--max-url-length` and the ports, which every kind of URL answers to.
    fn length_and_port(&self, url: &Url) -> Result<(), Rejection> {
        if self.limits.too_long(url) {
            return Err(Rejection::UrlLength);
        }
        if !self.limits.ports.allows(url) {
            return Err(Rejection::Port);
        }
        Ok(())
    }

    /// wget's `-A`/`-R` on a link at `depth` hops, or a requisite (`None`: its page's
    /// requisites are read, so it is never at a last level).
    fn files_allow(&self, url: &Url, depth: Option<u32>) -> bool {
        let last_level = depth.is_some_and(|d| self.max_depth.is_some_and(|max| d >= max));
        self.files.is_empty() || self.files.allow(url.path(), last_level)
    }
}

/// What a URL is checked as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// A link of a page.
    Link,
    /// Where a link redirects.
    Redirect,
    /// Where a seed redirects.
    SeedRedirect,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PortPolicy;
    use crate::url_rules::ScopeKind;

    fn limits(ports: PortPolicy) -> Limits {
        Limits {
            max_url_length: 60,
            max_path_depth: 5,
            max_path_repeats: 2,
            ports,
        }
    }

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn wget_file_lists_hold_html_pages_only_at_the_last_level() {
        let mut scope = Scope::new(ScopeKind::Host);
        scope.add_seed(&u("http://a.org/"));
        let files = FileLists::new(&["pdf".into()], &[], false).unwrap();
        let a = Admission::new(
            scope,
            UrlFilter::new(&[], &[]).unwrap(),
            ExtensionFilter::new(|_| true),
            Some(2),
            3,
            limits(PortPolicy::AllowAll),
        )
        .with_file_lists(files);
        assert_eq!(a.check(&u("http://a.org/p.html"), 1, 0), Ok(()));
        assert_eq!(a.check(&u("http://a.org/d/"), 2, 0), Ok(()));
        assert_eq!(a.check(&u("http://a.org/f.pdf"), 2, 0), Ok(()));
        assert_eq!(
            a.check(&u("http://a.org/p.html"), 2, 0),
            Err(Rejection::Pattern)
        );
        assert_eq!(
            a.check(&u("http://a.org/i.png"), 1, 0),
            Err(Rejection::Pattern)
        );
        assert_eq!(
            a.check_requisite(&u("http://a.org/i.png"), 1),
            Err(Rejection::Pattern)
        );
        assert_eq!(a.check_requisite(&u("http://a.org/frame.html"), 1), Ok(()));
    }

    #[test]
    fn checks_in_order() {
        let mut scope = Scope::new(ScopeKind::Host);
        scope.add_seed(&u("http://a.org/"));
        let filter = UrlFilter::new(&[], &["/skip".into()]).unwrap();
        let mut a = Admission::new(
            scope,
            filter,
            ExtensionFilter::default(),
            Some(2),
            3,
            limits(PortPolicy::AllowAll),
        );
        assert_eq!(a.check(&u("http://a.org/x"), 2, 0), Ok(()));
        assert_eq!(a.check(&u("http://a.org/x"), 3, 0), Err(Rejection::Depth));
        assert_eq!(
            a.check(&u("http://a.org/x"), 1, 4),
            Err(Rejection::Redirects)
        );
        assert_eq!(a.check(&u("http://b.org/x"), 1, 0), Err(Rejection::Scope));
        assert_eq!(
            a.check(&u("http://a.org/skip"), 1, 0),
            Err(Rejection::Pattern)
        );
        // The first link of its kind is a probe; a file in answer keeps the rest out.
        assert_eq!(a.check(&u("http://a.org/f.pdf"), 1, 0), Ok(()));
        a.learn(
            &u("http://a.org/f.pdf"),
            ProbeAnswer::File(Some("application/pdf")),
        );
        assert_eq!(
            a.check(&u("http://a.org/g.PDF"), 1, 0),
            Err(Rejection::Extension)
        );
        assert!(a.skips_by_extension(&u("http://a.org/f.pdf")));
        assert_eq!(a.check(&u("http://a.org/sub/f.pdf"), 1, 0), Ok(()));
        let long = format!("http://a.org/{}", "x".repeat(60));
        assert_eq!(a.check(&u(&long), 1, 0), Err(Rejection::UrlLength));
    }

    #[test]
    fn path_traps() {
        let any = Scope::new(ScopeKind::Any);
        let a = Admission::new(
            any,
            UrlFilter::new(&[], &[]).unwrap(),
            ExtensionFilter::default(),
            None,
            3,
            limits(PortPolicy::AllowAll),
        );
        assert_eq!(a.check(&u("http://a.org/1/2/3/4/5"), 1, 0), Ok(()));
        assert_eq!(
            a.check(&u("http://a.org/1/2/3/4/5/6"), 1, 0),
            Err(Rejection::PathTrap)
        );
        assert_eq!(a.check(&u("http://a.org/a/b/a/b"), 1, 0), Ok(()));
        assert_eq!(
            a.check(&u("http://a.org/a/b/a/b/a"), 1, 0),
            Err(Rejection::PathTrap)
        );
        // Empty segments count: `.//` links on a server that merges slashes went on to the
        // URL length limit (a trailing `/` and the leading one are no segment).
        assert_eq!(a.check(&u("http://a.org/one//"), 1, 0), Ok(()));
        assert_eq!(a.check(&u("http://a.org/"), 1, 0), Ok(()));
        assert_eq!(
            a.check(&u("http://a.org/one////"), 1, 0),
            Err(Rejection::PathTrap)
        );
        assert_eq!(a.check(&u("http://a.org/1//2/3/4/"), 1, 0), Ok(()));
        assert_eq!(
            a.check(&u("http://a.org/1//2/3/4/5"), 1, 0),
            Err(Rejection::PathTrap)
        );
    }

    #[test]
    fn port_policies() {
        let check = |p: PortPolicy, s: &str| {
            let a = Admission::new(
                Scope::new(ScopeKind::Any),
                UrlFilter::new(&[], &[]).unwrap(),
                ExtensionFilter::default(),
                None,
                3,
                limits(p),
            );
            a.check(&u(s), 0, 0)
        };
        assert_eq!(check(PortPolicy::AllowAll, "http://a.org:8080/"), Ok(()));
        assert_eq!(
            check(PortPolicy::AllowAll, "http://a.org:0/"),
            Err(Rejection::Port)
        );
        assert_eq!(
            check(PortPolicy::DefaultOnly, "http://a.org:8080/"),
            Err(Rejection::Port)
        );
        assert_eq!(check(PortPolicy::DefaultOnly, "https://a.org/"), Ok(()));
        assert_eq!(
            check(PortPolicy::Deny(vec![22, 25]), "http://a.org:25/"),
            Err(Rejection::Port)
        );
        assert_eq!(
            check(PortPolicy::Deny(vec![22, 25]), "http://a.org:8080/"),
            Ok(())
        );
    }
}
