//! Which string literals of a script are URLs, for `script_urls.rs`: escapes decoded, what a
//! URL never carries refused, module specifiers told from bare names, and paths to the file
//! types a page loads to render told from words.

/// Longest string considered (a data URL or an embedded document is no reference).
pub(super) const MAX_URL_LEN: usize = 2_048;

/// File types a page loads to render, by extension: a string naming one by path is a
/// reference to it. Data (`.json`) and pages (`.html`) are left out: scripts fetch those on
/// demand (a search index, a route), and taking them would crawl by guesswork.
const ASSET_EXTENSIONS: &[&str] = &[
    "js", "mjs", "css", "png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "ico", "bmp", "apng",
    "woff", "woff2", "ttf", "otf", "eot", "wasm", "mp4", "webm", "ogg", "ogv", "mp3", "wav", "m4a",
    "m4v", "vtt",
];

/// The value of a string literal's raw text: the escapes that can stand in a URL decoded,
/// the others kept as the character they escape (such a string is no URL anyway).
pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some('u') => {
                let rest = chars.as_str();
                let (hex, used) = match rest.strip_prefix('{') {
                    Some(r) => match r.find('}') {
                        Some(end) => (&r[..end], end + 2),
                        None => ("", 0),
                    },
                    None => (rest.get(..4).unwrap_or(""), 4),
                };
                out.extend(u32::from_str_radix(hex, 16).ok().and_then(char::from_u32));
                chars = rest.get(used..).unwrap_or("").chars();
            }
            Some('n' | 'r' | 't' | 'b' | 'f' | 'v') => out.push(' '),
            // A line continuation.
            Some('\n') => {}
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// No whitespace (Unicode's too: a no-break space is no part of a URL a script writes),
/// controls or characters a URL in a script never carries.
fn plain(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_URL_LEN
        && !text.chars().any(|c| {
            c.is_whitespace()
                || c.is_control()
                || matches!(c, '"' | '\'' | '`' | '<' | '>' | '\\' | '{' | '}')
        })
}

/// An http(s) URL, or one without a scheme (a colon before the first `/`, `?` or `#` is a
/// scheme: `data:`, `blob:`, `mailto:` are not fetched).
pub(super) fn relative_or_http(text: &str) -> bool {
    if !plain(text) {
        return false;
    }
    let head = text.split(['/', '?', '#']).next().unwrap_or("");
    match head.find(':') {
        None => true,
        Some(_) => {
            let lower = head.to_ascii_lowercase();
            lower == "http:" || lower == "https:"
        }
    }
}

/// A module specifier that is a URL (a bare `"react"` needs an import map, whose URLs the
/// page names itself): absolute, or starting with `/`, `./` or `../`.
pub(super) fn url_like(text: &str) -> bool {
    relative_or_http(text)
        && (text.starts_with('/')
            || text.starts_with("./")
            || text.starts_with("../")
            || text.contains("://"))
}

/// A string that names a static asset by its path: a URL or a path with a directory, whose
/// file name ends in one of [`ASSET_EXTENSIONS`] (`"/assets/hero-1a2b.png"`,
/// `"static/media/logo.svg"`, `"https://cdn.example/lib.js"`). A bare file name
/// (`"index.js"`) is too often a word in a message to be taken.
pub(super) fn asset_path(text: &str) -> bool {
    if !relative_or_http(text) {
        return false;
    }
    let path = text.split(['?', '#']).next().unwrap_or("");
    let Some((dir, file)) = path.rsplit_once('/') else {
        return false;
    };
    if file.is_empty() || (dir.is_empty() && !text.starts_with('/')) {
        return false;
    }
    file.rsplit_once('.').is_some_and(|(name, ext)| {
        !name.is_empty() && ASSET_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e))
    })
}
