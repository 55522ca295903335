//! Session ids in URLs, which the seen set does not count. A server that cannot keep a session
//! in a cookie (the crawl's first request, `--no-cookies`, each worker of a shared crawl with a
//! jar of its own) writes it into every link it sends: Java servlets as `;jsessionid=…`, PHP as
//! `PHPSESSID=…`, osCommerce as `osCsid=…`, ASP as `ASPSESSIONIDXXXXXXXX=…`. Each answer then
//! links the whole site again under a new id, a trap without end. Heritrix's canonicalization
//! rules (`StripSessionIDs`, `StripSessionCFIDs`) take them out of its "already seen" key, and so
//! does trawl: the URL fetched and archived keeps its id (the first form found), but a URL that
//! differs from one seen only by its session id is seen.

use std::borrow::Cow;

/// Shortest value taken for a session id: a session id is a long token (PHP's 26 or 32
/// characters, a servlet's 32, ASP's 24).
const MIN_TOKEN: usize = 16;

/// The length of a `sid` value that is a session id: `sid` can mean other things (a story, a
/// site), so only phpBB's form counts, 32 hex digits, as Heritrix's `StripSessionIDs` takes it.
const SID_TOKEN: usize = 32;

/// `url` without its session ids (see the module doc); borrowed when it has none.
pub fn without_session_ids(url: &str) -> Cow<'_, str> {
    // Most URLs have neither a path parameter nor a query, and the seen set asks this of
    // every link: one search for the three bytes decides before anything else is read.
    if memchr::memchr3(b';', b'?', b'#', url.as_bytes()).is_none() {
        return Cow::Borrowed(url);
    }
    let (before_fragment, fragment) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let (path, query) = match before_fragment.find('?') {
        Some(i) => (&before_fragment[..i], Some(&before_fragment[i + 1..])),
        None => (before_fragment, None),
    };
    let path_param = match path.contains(';') {
        true => path_session_param(path),
        false => None,
    };
    let cf_pair = query.is_some_and(has_coldfusion_pair);
    let is_session = |p: &str| is_session_param(p, cf_pair);
    let kept: Option<Vec<&str>> = query
        .filter(|q| q.split('&').any(is_session))
        .map(|q| q.split('&').filter(|p| !is_session(p)).collect());
    if path_param.is_none() && kept.is_none() {
        return Cow::Borrowed(url);
    }
    let mut out = String::with_capacity(url.len());
    match path_param {
        Some((start, end)) => {
            out.push_str(&path[..start]);
            out.push_str(&path[end..]);
        }
        None => out.push_str(path),
    }
    match (kept, query) {
        (Some(kept), _) if !kept.is_empty() => {
            out.push('?');
            out.push_str(&kept.join("&"));
        }
        (Some(_), _) => {}
        (None, Some(q)) => {
            out.push('?');
            out.push_str(q);
        }
        (None, None) => {}
    }
    out.push_str(fragment);
    Cow::Owned(out)
}

/// Where a `;jsessionid=…` path parameter lies in `path` (servlet containers put it after
/// the last segment, before the query), as the byte range to cut.
fn path_session_param(path: &str) -> Option<(usize, usize)> {
    const NAME: &[u8] = b";jsessionid=";
    let bytes = path.as_bytes();
    let start = bytes
        .windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))?;
    let end = path[start + 1..]
        .find(['/', ';'])
        .map_or(path.len(), |i| start + 1 + i);
    Some((start, end))
}

/// True when a query holds ColdFusion's session pair, a non-empty `cfid` and `cftoken` both.
/// Either name alone is no session: PHP applications use `cfid` for a record's id
/// (`viewComplaint.php?cfid=12`), and Heritrix's `StripSessionCFIDs` too strips only the pair.
fn has_coldfusion_pair(query: &str) -> bool {
    let named = |known: &str| {
        query.split('&').any(|p| {
            p.split_once('=')
                .is_some_and(|(n, v)| n.eq_ignore_ascii_case(known) && !v.is_empty())
        })
    };
    named("cfid") && named("cftoken")
}

/// True for a query parameter (`name=value`) that carries a session id; `cfid` and `cftoken`
/// only when the query holds the pair (`cf_pair`, see [`has_coldfusion_pair`]).
fn is_session_param(param: &str, cf_pair: bool) -> bool {
    let Some((name, value)) = param.split_once('=') else {
        return false;
    };
    let is = |known: &str| name.eq_ignore_ascii_case(known);
    // ColdFusion's pair: short numbers, but only ever a session when both are there.
    if is("cfid") || is("cftoken") {
        return cf_pair && !value.is_empty();
    }
    if is("sid") {
        return value.len() == SID_TOKEN && value.bytes().all(|b| b.is_ascii_hexdigit());
    }
    const NAMES: [&str; 6] = [
        "jsessionid",
        "phpsessid",
        "oscsid",
        "zenid",
        "sessionid",
        "session_id",
    ];
    const ASP: &str = "aspsessionid";
    let session_name = NAMES.iter().any(|n| is(n))
        || name.len() == ASP.len() + 8
            && name.as_bytes()[..ASP.len()].eq_ignore_ascii_case(ASP.as_bytes())
            && name
                .bytes()
                .skip(ASP.len())
                .all(|b| b.is_ascii_alphabetic());
    session_name
        && value.len() >= MIN_TOKEN
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b',')
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef0123456789ABCDEF";

    #[test]
    fn session_ids_are_taken_out() {
        for (with, without) in [
            (format!("http://a.org/p;jsessionid={ID}"), "http://a.org/p"),
            (
                format!("http://a.org/p;JSESSIONID={ID}?x=1"),
                "http://a.org/p?x=1",
            ),
            (format!("http://a.org/p?PHPSESSID={ID}"), "http://a.org/p"),
            (
                format!("http://a.org/p?a=1&osCsid={ID}&b=2"),
                "http://a.org/p?a=1&b=2",
            ),
            (format!("http://a.org/p?sid={ID}#top"), "http://a.org/p#top"),
            (
                "http://a.org/p?ASPSESSIONIDQQGGGNCU=ABCDEFGHIJKLMNOPQRSTUVWX".into(),
                "http://a.org/p",
            ),
            (
                "http://a.org/p?x=1&CFID=12345&CFTOKEN=67890".into(),
                "http://a.org/p?x=1",
            ),
            (
                "http://a.org/p?cftoken=67890&y=2&cfid=12345".into(),
                "http://a.org/p?y=2",
            ),
        ] {
            assert_eq!(without_session_ids(&with), without, "{with}");
        }
    }

    #[test]
    fn what_is_no_session_id_is_left() {
        for url in [
            "http://a.org/",
            "http://a.org/p?q=session",
            // Slashdot's story ids, a short site id, a session id that is not a token.
            "http://a.org/article.pl?sid=07/12/24/1234211",
            "http://a.org/p?sid=42",
            "http://a.org/p?sid=0123456789abcdefghijklmnopqrstuv",
            "http://a.org/p?phpsessid=short",
            "http://a.org/p;v=2?x=1",
            "http://a.org/p?sessions=0123456789abcdef0123",
            // One of ColdFusion's pair alone is an application's own parameter.
            "http://a.org/content_posted.php?cfid=2",
            "http://a.org/list.cfm?CFTOKEN=8&page=2",
            "http://a.org/p?cfid=1&cftoken=",
        ] {
            assert!(
                matches!(without_session_ids(url), Cow::Borrowed(_)),
                "{url}"
            );
        }
    }
}
