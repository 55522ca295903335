//! The links a page's response head carries: `Link` fields, `Location` and
//! `Content-Location`, and a `Refresh` field, which also moves the page on as a meta refresh
//! does.

use url::Url;

use super::{refuses_declared, LinkRules, Outlinks};
use crate::capture::Capture;
use crate::extract::{link_header_targets, meta_refresh_url};
use crate::http_message::url_text;
use crate::url_rules::canonical::{unresolved, Unresolved};
use crate::url_rules::resolve_link;

/// Links carried by the headers of a page: every `Link` field's targets, `Location` and
/// `Content-Location` (a 2xx with a Location, e.g. 201 Created, names a resource as well), and
/// a `Refresh` field's URL.
/// Appended after the body's links, within the same per-page cap. With `requisites`, a Link
/// target the page loads (`rel=preload`) is a requisite instead.
pub(super) fn header_links(capture: &Capture, url: &Url, rules: &LinkRules, out: &mut Outlinks) {
    let cap = rules.max_links_per_page;
    let mut targets: Vec<String> = Vec::new();
    let mut refresh_field = false;
    for (name, value) in &capture.head.headers {
        let is = |field: &str| name.eq_ignore_ascii_case(field);
        if is("link") {
            for t in link_header_targets(&url_text(value)) {
                let refused = t.media.is_some_and(|m| refuses_declared(&rules.accept, m));
                if refused && !t.subresource {
                    out.declined.declared_type += 1;
                } else if !(t.subresource && rules.page_requisites) {
                    targets.push(t.target.to_string());
                } else if let Some(req) = resolve_link(url, t.target) {
                    if !out.requisites.contains(&req) {
                        out.requisites.push(req);
                    }
                }
            }
        } else if is("location") || is("content-location") {
            targets.push(url_text(value));
        } else if is("refresh") {
            // `Refresh: 0; url=/next`, which Chromium follows like a meta refresh; the
            // first field moves the page on before any meta of its body does.
            if let Some(target) = meta_refresh_url(&url_text(value)) {
                if !refresh_field {
                    out.refresh = resolve_link(url, target).or(out.refresh.take());
                    refresh_field = true;
                }
                targets.push(target.to_string());
            }
        }
    }
    for target in targets {
        let Some(link) = resolve_link(url, &target) else {
            match unresolved(url, &target) {
                Some(Unresolved::TooLong) => out.declined.too_long += 1,
                Some(Unresolved::NotHttp) => out.declined.not_http += 1,
                None => {}
            }
            continue;
        };
        if out.links.contains(&link) || &link == url {
            continue;
        }
        if out.links.len() >= cap {
            out.declined.over_cap += 1;
            continue;
        }
        out.links.push(link);
    }
}
