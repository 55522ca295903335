//! Media types of Content-Type values, and which of them are HTML: the one place these rules
//! live (the archive filter, link extraction and the CDXJ index all ask here).

use std::borrow::Cow;

/// Media types whose bodies are parsed as HTML for links and counted as pages by indexes.
pub const HTML_TYPES: [&str; 2] = ["text/html", "application/xhtml+xml"];

/// The media type of a Content-Type value: the part before any parameter, trimmed and
/// lower-cased (`Text/HTML; charset=x` is `text/html`). Empty when there is none.
pub fn media_type(content_type: &str) -> String {
    essence_of(content_type).to_ascii_lowercase()
}

/// The media type of a Content-Type value as it is written: after leading white space, up to
/// the first white space, `;` or `(`, as Chromium reads it (`ParseContentType`). A field that
/// forgot its `;` (`text/html charset=UTF-8`, written by hand in many a script) or carries a
/// comment (`text/html (legacy)`) is still `text/html`, as browsers and wget take it.
pub fn essence_of(content_type: &str) -> &str {
    let value = content_type.trim_start();
    let end = value
        .find(|c: char| c.is_whitespace() || c == ';' || c == '(')
        .unwrap_or(value.len());
    &value[..end]
}

/// The media type as pywb's cdxj-indexer writes it: the text before the first `;` or space,
/// case kept. trawl's CDXJ must equal cdxj-indexer's bytes, so it uses this form.
pub fn media_type_as_indexed(content_type: &str) -> &str {
    content_type.split([';', ' ']).next().unwrap_or("")
}

/// The `charset` parameter of a Content-Type value, if any, read as WHATWG's "parse a MIME
/// type" reads parameters (as Chromium does): a `;` inside a quoted value is no separator and
/// a backslash in one escapes the next character; no white space may stand around `=` (a
/// `charset = x` names no charset); single quotes are no quotes; the first `charset` counts.
/// Before (found by an exploratory crawl against Chromium), the value was split at every `;`
/// and any quotes trimmed, so `foo="a;charset=koi8-r"; charset=Shift_JIS` read as KOI8-R.
pub fn charset(content_type: &str) -> Option<String> {
    let http_space = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut rest = content_type.split_once(';')?.1;
    loop {
        rest = rest.trim_start_matches(http_space);
        let name_end = rest.find([';', '=']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        rest = &rest[name_end..];
        let Some(after) = rest.strip_prefix('=') else {
            // A name without a value, or the end.
            rest = rest.strip_prefix(';')?;
            continue;
        };
        let value = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((at, c)) = chars.next() {
                    match c {
                        '"' => {
                            end = at + 1;
                            break;
                        }
                        '\\' => match chars.next() {
                            Some((_, escaped)) => value.push(escaped),
                            None => value.push('\\'),
                        },
                        c => value.push(c),
                    }
                }
                rest = &quoted[end..];
                value
            }
            None => {
                let end = after.find(';').unwrap_or(after.len());
                rest = &after[end..];
                after[..end].trim_end_matches(http_space).to_string()
            }
        };
        if name.eq_ignore_ascii_case("charset") && !value.is_empty() {
            return Some(value);
        }
        rest = &rest[rest.find(';')? + 1..];
    }
}

/// The Content-Type a browser acts on, of a message's Content-Type field values in received
/// order, as WHATWG Fetch's "extract a MIME type" reads them: the values are joined and split
/// at commas outside quotes (`text/html,text/html`, as a proxy combines repeated fields), the
/// last valid MIME type wins, and it keeps the charset of an earlier value of the same type
/// when it names none. One value without a comma (nearly every response) is returned as it
/// is, trimmed, without a copy. `None` when no value is a valid MIME type.
pub fn effective_content_type<'a>(values: &[&'a str]) -> Option<Cow<'a, str>> {
    if let [only] = values {
        if !only.contains(',') {
            return Some(Cow::Borrowed(only.trim()));
        }
    }
    let mut chosen: Option<String> = None;
    let mut essence = String::new();
    let mut carried: Option<String> = None;
    for value in values.iter().flat_map(|v| split_outside_quotes(v)) {
        let value = value.trim();
        let this = media_type(value);
        if !is_valid_essence(&this) || this == "*/*" {
            continue;
        }
        let own = charset(value);
        chosen = Some(match (this == essence, own, &carried) {
            (false, own, _) => {
                carried = own;
                essence = this;
                value.to_string()
            }
            (true, None, Some(cs)) => format!("{value}; charset={cs}"),
            (true, _, _) => value.to_string(),
        });
    }
    chosen.map(Cow::Owned)
}

/// The parts of a field value between commas that are not inside a quoted string.
fn split_outside_quotes(value: &str) -> impl Iterator<Item = &str> {
    let (mut quoted, mut escaped) = (false, false);
    value.split(move |c: char| {
        match (quoted, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, _, '"') => quoted = !quoted,
            (false, _, ',') => return true,
            _ => {}
        }
        false
    })
}

/// True for `type/subtype` where both are non-empty HTTP tokens (MIME Sniffing's "valid MIME
/// type" essence).
pub fn is_valid_essence(essence: &str) -> bool {
    let token = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    essence
        .split_once('/')
        .is_some_and(|(t, s)| token(t) && token(s))
}

/// True when `media_type` (lower-case, no parameters; empty for none) is one an `--accept`
/// list takes: its entries are media types, `major/*`, or `*/*` (also `*`), which takes every
/// type, none included.
pub fn accepted_by(accept: &[String], media_type: &str) -> bool {
    accept.iter().any(|a| {
        if a == "*/*" || a == "*" {
            return true;
        }
        match a.strip_suffix("/*") {
            Some(major) => media_type.split('/').next() == Some(major),
            None => a == media_type,
        }
    })
}

/// True for a media type (as [`media_type`] returns it) that is HTML.
pub fn is_html(media_type: &str) -> bool {
    HTML_TYPES.contains(&media_type)
}

/// True for markup a browser parses as XML, not HTML (XHTML served as such, SVG): there a
/// self-closed `<title/>` or `<script/>` is closed.
pub fn parsed_as_xml(media_type: &str) -> bool {
    matches!(media_type, "application/xhtml+xml" | "image/svg+xml")
}

/// True for a media type (as [`media_type`] returns it) a browser runs as JavaScript: the
/// "JavaScript MIME type essence" list of WHATWG's MIME Sniffing standard.
pub fn is_javascript(media_type: &str) -> bool {
    matches!(
        media_type,
        "application/ecmascript"
            | "application/javascript"
            | "application/x-ecmascript"
            | "application/x-javascript"
            | "text/ecmascript"
            | "text/javascript"
            | "text/javascript1.0"
            | "text/javascript1.1"
            | "text/javascript1.2"
            | "text/javascript1.3"
            | "text/javascript1.4"
            | "text/javascript1.5"
            | "text/jscript"
            | "text/livescript"
            | "text/x-ecmascript"
            | "text/x-javascript"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_and_parameters() {
        assert_eq!(media_type("Text/HTML; Charset=\"ISO-8859-1\""), "text/html");
        assert_eq!(media_type(""), "");
        // A missing `;`, a comment, a bare CR read as a space: the type is what precedes them.
        assert_eq!(media_type(" text/html charset=UTF-8"), "text/html");
        assert_eq!(media_type("text/HTML(legacy)"), "text/html");
        assert_eq!(media_type("text/html X-Odd: 1"), "text/html");
        assert_eq!(media_type("text/html\t;charset=x"), "text/html");
        assert_eq!(
            charset("text/html; Charset=\"ISO-8859-1\"").as_deref(),
            Some("ISO-8859-1")
        );
        assert_eq!(charset("text/html"), None);
        // As Chromium reads them: quotes hold a `;` and escapes; no space around `=`; single
        // quotes are no quotes; the first charset counts.
        let cs = |v: &str| charset(v);
        assert_eq!(
            cs("text/html; foo=\"a;charset=koi8-r\"; charset=Shift_JIS").as_deref(),
            Some("Shift_JIS")
        );
        assert_eq!(
            cs("text/html; charset=\"Shift\\_JIS\"").as_deref(),
            Some("Shift_JIS")
        );
        assert_eq!(cs("text/html; charset = koi8-r"), None);
        assert_eq!(
            cs("text/html; charset='koi8-r'").as_deref(),
            Some("'koi8-r'")
        );
        assert_eq!(
            cs("text/html;;charset=utf-8 ; charset=koi8-r").as_deref(),
            Some("utf-8")
        );
        assert_eq!(
            cs("text/html; flag; charset=utf-8").as_deref(),
            Some("utf-8")
        );
        assert_eq!(
            cs("text/html; charset=\"unterminated").as_deref(),
            Some("unterminated")
        );
        assert_eq!(media_type_as_indexed("Text/HTML; x"), "Text/HTML");
        assert_eq!(media_type_as_indexed("text/html charset"), "text/html");
        assert!(is_html("application/xhtml+xml") && !is_html("text/plain"));
        assert!(is_javascript(&media_type("Text/JavaScript; charset=utf-8")));
        assert!(!is_javascript("application/json") && !is_javascript("text/plain"));
    }

    #[test]
    fn the_content_type_acted_on_is_the_last_valid_one() {
        let of = |values: &[&str]| effective_content_type(values).map(Cow::into_owned);
        assert_eq!(of(&[" text/html "]).as_deref(), Some("text/html"));
        assert_eq!(
            of(&["text/plain", "text/html"]).as_deref(),
            Some("text/html")
        );
        assert_eq!(of(&["text/html,text/html"]).as_deref(), Some("text/html"));
        assert_eq!(of(&["text/html, */*"]).as_deref(), Some("text/html"));
        assert_eq!(
            of(&["text/html", "nonsense", ""]).as_deref(),
            Some("text/html")
        );
        // An earlier charset of the same type is kept; a new type drops it.
        assert_eq!(
            of(&["text/html; charset=koi8-r", "TEXT/HTML"]).as_deref(),
            Some("TEXT/HTML; charset=koi8-r")
        );
        assert_eq!(
            of(&["text/plain; charset=koi8-r", "text/html"]).as_deref(),
            Some("text/html")
        );
        // A comma inside a quoted parameter does not split.
        assert_eq!(
            of(&["text/html; charset=\"a,b\", image/png"]).as_deref(),
            Some("image/png")
        );
        assert_eq!(
            of(&["text/html; x=\"a,image/png\""]).as_deref(),
            Some("text/html; x=\"a,image/png\"")
        );
        assert_eq!(of(&["a, b"]), None);
        assert_eq!(of(&[]), None);
    }
}
