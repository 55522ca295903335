//! Which discovered URLs may enter the frontier: scope, depth, redirect hops, user patterns
//! and the extension pre-filter. Deduplication is the frontier's job.

use url::Url;

use crate::url::{has_non_html_extension, Scope, UrlFilter};

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
    /// Obvious non-HTML by its extension.
    Extension,
}

/// The admission rules of one crawl.
#[derive(Debug)]
pub struct Admission {
    /// In-scope hosts or domains; grows when a seed redirects elsewhere.
    pub scope: Scope,
    filter: UrlFilter,
    max_depth: Option<u32>,
    max_redirects: u32,
}

impl Admission {
    /// Rules from configuration; add the seeds to `scope` before use.
    pub fn new(
        scope: Scope,
        filter: UrlFilter,
        max_depth: Option<u32>,
        max_redirects: u32,
    ) -> Self {
        Admission {
            scope,
            filter,
            max_depth,
            max_redirects,
        }
    }

    /// Checks a link or redirect target found at `depth` hops after `redirects` redirects.
    pub fn check(&self, url: &Url, depth: u32, redirects: u32) -> Result<(), Rejection> {
        if self.max_depth.is_some_and(|max| depth > max) {
            return Err(Rejection::Depth);
        }
        if redirects > self.max_redirects {
            return Err(Rejection::Redirects);
        }
        if !self.scope.allows(url) {
            return Err(Rejection::Scope);
        }
        if !self.filter.allows(url) {
            return Err(Rejection::Pattern);
        }
        if has_non_html_extension(url) {
            return Err(Rejection::Extension);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url::ScopeKind;

    #[test]
    fn checks_in_order() {
        let mut scope = Scope::new(ScopeKind::Host);
        scope.add_seed(&Url::parse("http://a.org/").unwrap());
        let filter = UrlFilter::new(&[], &["/skip".into()]).unwrap();
        let a = Admission::new(scope, filter, Some(2), 3);
        let u = |s: &str| Url::parse(s).unwrap();
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
        assert_eq!(
            a.check(&u("http://a.org/f.pdf"), 1, 0),
            Err(Rejection::Extension)
        );
    }
}
