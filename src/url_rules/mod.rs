//! URL rules: the canonical form used for deduplication, crawl scope, and URL filters.
//!
//! Pure functions and small value types; used by seeds, extraction results and the frontier.

pub mod canonical;
pub mod dir_lists;
pub mod extension_probes;
pub mod file_lists;
pub mod filter;
pub mod host_lists;
pub mod referrer;
pub mod scope;
pub mod session_ids;

pub use canonical::{canonicalize, origin_prefix, resolve_link, resolve_link_in};
pub use dir_lists::DirLists;
pub use extension_probes::{ExtensionProbes, ProbeAnswer};
pub use file_lists::FileLists;
pub use filter::{ExtensionFilter, UrlFilter};
pub use host_lists::HostLists;
pub use referrer::RefererPolicy;
pub use scope::{site_of, Scope, ScopeKind};

/// True when `uri` names a robots.txt (the path `/robots.txt` of its origin): read as rules,
/// never a page, whatever type its server gave it.
pub fn is_robots_txt(uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|u| u.path() == "/robots.txt")
}

/// True when `uri` is named as a sitemap file is (`sitemap.xml`, `sitemap_index.xml.gz`):
/// never a page either, though a server that answers every path with its app's HTML shell
/// answers it with HTML.
pub fn is_sitemap_name(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else {
        return false;
    };
    let name = url.path().rsplit('/').next().unwrap_or_default();
    let name = name.to_ascii_lowercase();
    name.starts_with("sitemap") && (name.ends_with(".xml") || name.ends_with(".xml.gz"))
}
