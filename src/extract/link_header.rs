//! The targets of HTTP `Link` header fields (RFC 8288): `<uri>; rel="next"; title="x", <uri2>`.
//!
//! Pure parsing: raw values in, URI references out (not resolved). Targets whose relations are
//! only connection hints (`preconnect`, `dns-prefetch`) name origins, not documents, and are
//! left out. Quoted strings may hold commas and angle brackets; a value without `<...>` gives
//! nothing.

/// Most targets taken from one response's Link fields.
pub const MAX_LINK_TARGETS: usize = 100;

/// Relations that name an origin to connect to, not a resource.
fn hint_only(rel: &str) -> bool {
    let mut rels = rel.split_ascii_whitespace().peekable();
    rels.peek().is_some()
        && rels
            .all(|r| r.eq_ignore_ascii_case("preconnect") || r.eq_ignore_ascii_case("dns-prefetch"))
}

/// The `rel` parameter of one link-value's parameters (`; rel="a b"; x=y`).
fn rel_of(params: &str) -> Option<String> {
    params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("rel")
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// The target URI references of a Link field value, in order.
pub fn link_header_targets(value: &str) -> Vec<&str> {
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
        let hint = rel_of(params).is_some_and(|r| hint_only(&r));
        if !target.is_empty() && !hint {
            out.push(target);
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
        assert_eq!(
            link_header_targets(v),
            ["/page/2", "../1", "https://x.org/c"]
        );
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
