//! The targets of HTTP `Link` header fields (RFC 8288): `<uri>; rel="next"; title="x", <uri2>`.
//!
//! Pure parsing: raw values in, URI references out (not resolved), each marked when the page
//! loads it (`preload`) and with the type its `type` parameter declares. Targets whose
//! relations are only connection hints (`preconnect`, `dns-prefetch`) name origins, not
//! documents, and are left out. Quoted strings may hold commas and angle brackets; a value
//! without `<...>` gives nothing.

/// Most targets taken from one response's Link fields.
pub const MAX_LINK_TARGETS: usize = 100;

/// Relations that name an origin to connect to, not a resource (in a `Link` field or an HTML
/// `<link rel>`).
pub(super) fn hint_only(rel: &str) -> bool {
    let mut rels = rel.split_ascii_whitespace().peekable();
    rels.peek().is_some()
        && rels
            .all(|r| r.eq_ignore_ascii_case("preconnect") || r.eq_ignore_ascii_case("dns-prefetch"))
}

/// The parameter `name` of one link-value's parameters (`; rel="a b"; x=y`), unquoted.
fn param_of<'a>(params: &'a str, name: &str) -> Option<&'a str> {
    params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().trim_matches('"'))
    })
}

/// One target of a Link field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTarget<'a> {
    /// The URI reference, not resolved.
    pub target: &'a str,
    /// A resource the page loads (`preload`, `modulepreload`, which Chromium fetches from the
    /// header; `stylesheet`): a page requisite, not a page.
    pub subresource: bool,
    /// The target's type as the `type` parameter declares it (a hint: `application/json`).
    pub media: Option<&'a str>,
}

/// Relations whose target the page itself loads.
fn loads(rel: &str) -> bool {
    rel.split_ascii_whitespace().any(|r| {
        ["preload", "modulepreload", "stylesheet"]
            .iter()
            .any(|k| r.eq_ignore_ascii_case(k))
    })
}

/// The targets of a Link field value, in order.
pub fn link_header_targets(value: &str) -> Vec<LinkTarget<'_>> {
    let mut out = Vec::new();
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() && out.len() < MAX_LINK_TARGETS {
        // A link-value starts with `<`.
        let Some(open) = value[i..].find('<').map(|p| i + p) else {
            break;
        };
        let Some(close) = value[open..].find('>').map(|p| open + p) else {
            break;
        };
        let target = value[open + 1..close].trim();
        // Its parameters run to the next comma outside a quoted string.
        let mut j = close + 1;
        let mut quoted = false;
        while j < bytes.len() {
            match bytes[j] {
                b'"' => quoted = !quoted,
                b'\\' if quoted => j += 1,
                b',' if !quoted => break,
                _ => {}
            }
            j += 1;
        }
        let params = &value[close + 1..j.min(bytes.len())];
        let rel = param_of(params, "rel");
        let hint = rel.is_some_and(hint_only);
        if !target.is_empty() && !hint {
            let subresource = rel.is_some_and(loads);
            out.push(LinkTarget {
                target,
                subresource,
                media: param_of(params, "type").filter(|m| !m.is_empty()),
            });
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_in_order_hints_left_out() {
        let v = r#"</page/2>; rel="next", <https://cdn.example/>; rel=preconnect, <../1>; rel="prev"; title="a, <b>", <https://x.org/c>; rel="canonical""#;
        let targets: Vec<&str> = link_header_targets(v).iter().map(|t| t.target).collect();
        assert_eq!(targets, ["/page/2", "../1", "https://x.org/c"]);
    }

    #[test]
    fn what_the_page_loads_is_marked() {
        let v = r#"</app.css>; rel=preload; as=style, </m.js>; rel="modulepreload", </s.css>; rel=stylesheet, </next>; rel=next"#;
        let marks: Vec<(&str, bool)> = link_header_targets(v)
            .iter()
            .map(|t| (t.target, t.subresource))
            .collect();
        assert_eq!(
            marks,
            [
                ("/app.css", true),
                ("/m.js", true),
                ("/s.css", true),
                ("/next", false)
            ]
        );
    }

    #[test]
    fn a_declared_type_is_read() {
        let v = r#"</j>; rel="alternate"; type="application/json", </n>; rel=next; type="""#;
        let media: Vec<Option<&str>> = link_header_targets(v).iter().map(|t| t.media).collect();
        assert_eq!(media, [Some("application/json"), None]);
    }

    #[test]
    fn garbage_and_caps() {
        assert!(link_header_targets("no brackets; rel=next").is_empty());
        assert!(link_header_targets("<unclosed").is_empty());
        assert!(link_header_targets("<>; rel=next").is_empty());
        let many = "<a>, ".repeat(1000);
        assert_eq!(link_header_targets(&many).len(), MAX_LINK_TARGETS);
    }
}
