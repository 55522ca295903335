//! Caps on the URLs admitted to the frontier: length, path depth and repeats (crawler traps,
//! hostile pages), and the ports `--deny-ports` refuses; applied to every link and to seeds.

/// Ports refused by `--deny-ports`. Port 0 is refused under every policy: nothing can be
/// reached there (connecting to it fails), and browsers refuse it as a bad port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortPolicy {
    /// Every port.
    AllowAll,
    /// Only the scheme's default port (80/443).
    DefaultOnly,
    /// These ports are refused.
    Deny(Vec<u16>),
}

impl PortPolicy {
    /// True when the URL's port may be used.
    pub fn allows(&self, url: &url::Url) -> bool {
        if url.port() == Some(0) {
            return false;
        }
        match self {
            PortPolicy::AllowAll => true,
            PortPolicy::DefaultOnly => url.port().is_none(),
            PortPolicy::Deny(ports) => url
                .port_or_known_default()
                .is_none_or(|p| !ports.contains(&p)),
        }
    }
}

/// Caps on the URLs admitted to the frontier (crawler traps, hostile pages).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Longest URL queued.
    pub max_url_length: usize,
    /// Most path segments.
    pub max_path_depth: usize,
    /// Most occurrences of one path segment.
    pub max_path_repeats: usize,
    /// Refused ports.
    pub ports: PortPolicy,
}

impl Limits {
    /// True when the URL is longer than `--max-url-length`.
    pub fn too_long(&self, url: &url::Url) -> bool {
        url.as_str().len() > self.max_url_length
    }

    /// True when the path has more than `--max-path-depth` segments or one segment more than
    /// `--max-path-repeats` times (e.g. `/a/b/a/b/a/b/a/b/` from relative links on an error
    /// page).
    pub fn is_path_trap(&self, url: &url::Url) -> bool {
        // Runs for every discovered link: no allocation. Paths are short, and one deeper than
        // the limit is refused before the quadratic repeat count.
        // Empty segments count (`/a//b` is three deep, `//////` five empty ones repeated):
        // a server that merges slashes (nginx's default, Apache) answers `.//` links for
        // ever, and passed over they made no trap of it. Only the path's own leading `/` and
        // one trailing `/` are no segment, as Heritrix counts a path's slashes.
        let path = url.path().strip_prefix('/').unwrap_or(url.path());
        let path = path.strip_suffix('/').unwrap_or(path);
        let segments = || path.split('/').filter(|_| !path.is_empty());
        let depth = segments().count();
        if depth > self.max_path_depth {
            return true;
        }
        // A path with no more segments than the repeat limit cannot repeat one beyond it.
        if depth <= self.max_path_repeats {
            return false;
        }
        segments()
            .enumerate()
            .any(|(i, s)| segments().skip(i).filter(|t| *t == s).count() > self.max_path_repeats)
    }

    /// Why a seed breaks these limits, if it does.
    pub fn seed_violation(&self, url: &url::Url) -> Option<String> {
        if self.too_long(url) {
            Some(format!(
                "longer than --max-url-length ({} > {} characters)",
                url.as_str().len(),
                self.max_url_length
            ))
        } else if url.port() == Some(0) {
            Some("port 0 cannot be connected to".to_string())
        } else if !self.ports.allows(url) {
            Some("its port is refused by --deny-ports".to_string())
        } else if self.is_path_trap(url) {
            Some(format!(
                "its path is deeper than --max-path-depth ({}) or repeats a segment more than --max-path-repeats ({})",
                self.max_path_depth, self.max_path_repeats
            ))
        } else {
            None
        }
    }
}
