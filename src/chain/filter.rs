//! Stage 1, the archive filter: from the response head alone (before the body is read), is
//! this capture a page, another response worth archiving, or not archived at all? It owns the
//! `--accept` rules and the exact `--max-pages` budget. A 2xx whose head gives no usable
//! Content-Type is read first and judged by what its payload's first bytes identify.
//!
//! A page is a 2xx response of an accepted media type; it counts toward `--max-pages` and its
//! links are followed. The other answers a link can get are archived whatever their type, as
//! wget and Heritrix archive them: 3xx redirects, the bodiless 204 and 205, and 4xx/5xx
//! errors (a dead link is data: Caddy answers one with no type at all, Go and many frameworks
//! with `text/plain`); robots.txt too. A 2xx of a type not accepted is not archived and its
//! body is not read, except an HTML page: it is read for its links and not archived, as
//! `wget -r -A pdf` does, so that `--accept application/pdf` finds the PDFs a site links to.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::capture::Capture;
use crate::http_message::media_type::{accepted_by, is_html, is_valid_essence};
use crate::http_message::ResponseHead;
use crate::url_rules::filter::usual_types;

/// What the filter decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A page: archive it, follow its links, count it.
    Page,
    /// Archive it, but it is not a page (3xx, 204/205, 4xx/5xx, robots.txt).
    Other,
    /// Do not archive it, but read it for links: a 2xx HTML page whose type `--accept` does
    /// not take (the pages of accepted types it links to are still found).
    Traverse,
    /// Do not archive it: the server asked the crawl to slow down (429, 503); the URL is
    /// retried later and its host waits (see [`ArchiveRules::retry_later`]).
    RetryLater,
    /// Do not archive it.
    Skip(SkipReason),
}

/// Why a received response is not archived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Its Content-Type is not accepted.
    ContentType,
    /// The page target was reached.
    TargetReached,
}

/// The filter's options.
#[derive(Debug, Clone)]
pub struct ArchiveRules {
    /// Accepted media types, lower-case; `major/*` and `*/*` are wildcards.
    pub accept: Vec<String>,
    /// Largest body read of an archived response.
    pub max_body_size: u64,
    /// Largest body read of a robots.txt response.
    pub robots_max_body: u64,
    /// Statuses answered by retrying later (`--retry-status`: 429 and 503 by default).
    pub retry_status: Vec<u16>,
    /// Attempts after the first (`--retries`).
    pub retries: u32,
}

impl ArchiveRules {
    /// The `--accept` values as the filter reads them, lower-case: media types (`type/subtype`),
    /// `type/*`, or `*/*` (also `*`). Anything else is refused with a hint: wget's `--accept`
    /// takes file extensions, so `--accept pdf` would otherwise archive nothing, silently.
    pub fn accept_list(values: &[String]) -> Result<Vec<String>, String> {
        let mut accept = Vec::new();
        for value in values {
            // Parameters (`text/html; charset=utf-8`) do not decide what is archived.
            let value = value.split(';').next().unwrap_or_default();
            let value = value.trim().to_ascii_lowercase();
            if value.is_empty() {
                continue;
            }
            // `type/subtype` with a wildcard for the subtype, or for both.
            let is_type = value == "*"
                || is_valid_essence(&value) && (!value.starts_with("*/") || value == "*/*");
            if !is_type {
                let ext = value.trim_start_matches('.');
                let hint = usual_types(ext)
                    .map(|types| format!("; for .{ext} files: {}", types.join(",")))
                    .unwrap_or_default();
                return Err(format!(
                    "--accept takes media types (application/pdf, image/*, */*), not {value:?}{hint}"
                ));
            }
            accept.push(value);
        }
        if accept.is_empty() {
            return Err("--accept needs at least one content type".into());
        }
        Ok(accept)
    }

    /// True when `media_type` (lower-case, no parameters; empty when the response has none)
    /// is archived. `*/*` (or `*`) takes every response, one without a type too.
    pub fn accepts(&self, media_type: &str) -> bool {
        accepted_by(&self.accept, media_type)
    }

    /// True when a page or requisite fetched for the `attempt`-th time (0 for the first) that
    /// got `status` is to be retried later rather than archived: the server asked the crawl
    /// to slow down, and only its last answer is archived.
    pub fn retry_later(&self, status: u16, attempt: u32) -> bool {
        attempt < self.retries && self.asks_to_wait(status)
    }

    /// True when `status` is one of the `--retry-status` codes: the server asks the crawl to
    /// slow down, whether or not the URL is tried again.
    pub fn asks_to_wait(&self, status: u16) -> bool {
        self.retry_status.contains(&status)
    }

    /// The verdict on a response head, without the page budget: `Page` means "a page if the
    /// budget allows".
    pub fn classify(&self, head: &ResponseHead, robots: bool) -> Verdict {
        self.classify_as(head.status, head.media_type().as_deref(), robots)
    }

    /// [`Self::classify`] of a capture whose body is in: a payload the head gave no usable
    /// type is judged by what its first bytes identify. Crash replay uses this on archived
    /// captures.
    pub fn classify_capture(&self, capture: &Capture, robots: bool) -> Verdict {
        self.classify_as(capture.status(), capture.media_type().as_deref(), robots)
    }

    fn classify_as(&self, status: u16, media_type: Option<&str>, robots: bool) -> Verdict {
        if robots || !(200..300).contains(&status) || is_bodiless(status) {
            Verdict::Other
        } else if !self.accepts(media_type.unwrap_or_default()) {
            if media_type.is_some_and(is_html) {
                Verdict::Traverse
            } else {
                Verdict::Skip(SkipReason::ContentType)
            }
        } else {
            Verdict::Page
        }
    }

    /// True when a response of `status` whose payload is `media_type` is worth reading: a
    /// page, or HTML to read for links (the verdict is taken on the whole capture later).
    pub fn wants(&self, status: u16, media_type: &str) -> bool {
        !matches!(
            self.classify_as(status, Some(media_type), false),
            Verdict::Skip(_)
        )
    }

    /// True when the verdict on a page waits for its body: a 2xx whose head gives no usable
    /// Content-Type (missing, empty, `unknown/unknown`), judged by its first bytes as a
    /// browser judges it (a server may send none for a file whose extension it does not know).
    pub fn waits_for_body(&self, head: &ResponseHead) -> bool {
        (200..300).contains(&head.status) && !is_bodiless(head.status) && head.type_is_unknown()
    }

    /// The verdict on a live response: a page takes one unit of `budget`, or is skipped when
    /// the target is already met.
    pub fn decide(&self, head: &ResponseHead, robots: bool, budget: &PageBudget) -> Verdict {
        Self::take_page(self.classify(head, robots), budget)
    }

    /// [`Self::decide`] of a capture whose verdict waited for its body.
    pub fn decide_capture(&self, capture: &Capture, robots: bool, budget: &PageBudget) -> Verdict {
        Self::take_page(self.classify_capture(capture, robots), budget)
    }

    fn take_page(verdict: Verdict, budget: &PageBudget) -> Verdict {
        match verdict {
            Verdict::Page if !budget.try_take() => Verdict::Skip(SkipReason::TargetReached),
            verdict => verdict,
        }
    }

    /// How much of the body to read for a verdict (`None`: do not read it).
    pub fn body_cap(&self, verdict: Verdict, robots: bool) -> Option<u64> {
        match verdict {
            Verdict::Skip(_) | Verdict::RetryLater => None,
            _ if robots => Some(self.robots_max_body),
            _ => Some(self.max_body_size),
        }
    }
}

/// True for the 2xx statuses that carry no content by definition (RFC 9110 15.3.5, 15.3.6).
fn is_bodiless(status: u16) -> bool {
    matches!(status, 204 | 205)
}

/// Counts archived pages against `--max-pages`, shared by all jobs so the target is exact.
#[derive(Debug)]
pub struct PageBudget {
    limit: Option<u64>,
    taken: AtomicU64,
}

impl PageBudget {
    /// A budget of `limit` pages (unlimited when `None`) of which `taken` are already used (a
    /// resumed crawl).
    pub fn new(limit: Option<u64>, taken: u64) -> Self {
        PageBudget {
            limit,
            taken: AtomicU64::new(taken),
        }
    }

    /// Claims one page; false when the target is already met.
    pub fn try_take(&self) -> bool {
        match self.limit {
            None => {
                self.taken.fetch_add(1, Ordering::Relaxed);
                true
            }
            Some(limit) => self
                .taken
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                    (t < limit).then_some(t + 1)
                })
                .is_ok(),
        }
    }

    /// True when no page can be claimed any more.
    pub fn exhausted(&self) -> bool {
        self.limit
            .is_some_and(|l| self.taken.load(Ordering::Acquire) >= l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_message::parse_response_head;
    use std::sync::Arc;

    fn rules() -> ArchiveRules {
        ArchiveRules {
            accept: vec!["text/html".into(), "image/*".into()],
            max_body_size: 100,
            robots_max_body: 10,
            retry_status: vec![429, 503],
            retries: 2,
        }
    }

    fn head(status: u16, ct: &str) -> ResponseHead {
        let raw = format!("HTTP/1.1 {status} X\r\nContent-Type: {ct}\r\n\r\n");
        parse_response_head(raw.as_bytes()).unwrap()
    }

    #[test]
    fn accept_values_are_media_types_and_an_extension_gets_a_hint() {
        let list = |v: &[&str]| {
            ArchiveRules::accept_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            list(&[
                " Text/HTML; charset=utf-8",
                "image/*",
                "*/*",
                "*",
                "application/vnd.ms-excel"
            ])
            .unwrap(),
            [
                "text/html",
                "image/*",
                "*/*",
                "*",
                "application/vnd.ms-excel"
            ]
        );
        let err = list(&["text/html", "pdf"]).unwrap_err();
        assert!(
            err.contains("not \"pdf\"") && err.contains("application/pdf"),
            "{err}"
        );
        assert!(list(&[".JPG"]).unwrap_err().contains("image/jpeg"));
        for bad in [
            "html",
            "text/",
            "/html",
            "*/html",
            "text/html/x",
            "text html",
        ] {
            assert!(list(&[bad]).is_err(), "{bad}");
        }
        assert!(list(&["", " "]).is_err());
    }

    #[test]
    fn every_type_is_accepted_by_the_wildcard_of_all() {
        for all in ["*/*", "*"] {
            let r = ArchiveRules {
                accept: vec![all.into()],
                ..rules()
            };
            for media in ["text/html", "text/x-python", "application/octet-stream", ""] {
                assert!(r.accepts(media), "{all} {media}");
            }
            assert_eq!(
                r.classify(&head(200, "text/x-python"), false),
                Verdict::Page
            );
        }
        assert!(!rules().accepts("text/x-python"));
    }

    #[test]
    fn verdicts_by_status_type_and_kind() {
        let r = rules();
        let budget = PageBudget::new(Some(1), 0);
        assert_eq!(
            r.classify(&head(200, "Text/HTML; charset=x"), false),
            Verdict::Page
        );
        assert_eq!(r.classify(&head(200, "image/png"), false), Verdict::Page);
        assert_eq!(
            r.classify(&head(200, "application/pdf"), false),
            Verdict::Skip(SkipReason::ContentType)
        );
        assert_eq!(
            r.classify(&head(301, "application/pdf"), false),
            Verdict::Other
        );
        assert_eq!(r.classify(&head(404, "text/html"), false), Verdict::Other);
        // Error answers are kept whatever their type: Caddy's 404 has none, Go's is text/plain.
        assert_eq!(r.classify(&head(404, "text/plain"), false), Verdict::Other);
        assert_eq!(
            r.classify(&head(503, "application/json"), false),
            Verdict::Other
        );
        let untyped_404 =
            parse_response_head(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(r.classify(&untyped_404.unwrap(), false), Verdict::Other);
        assert_eq!(r.classify(&head(200, "text/plain"), true), Verdict::Other);
        assert_eq!(
            r.decide(&head(200, "text/html"), false, &budget),
            Verdict::Page
        );
        assert_eq!(
            r.decide(&head(200, "text/html"), false, &budget),
            Verdict::Skip(SkipReason::TargetReached)
        );
        assert_eq!(r.body_cap(Verdict::Other, true), Some(10));
        assert_eq!(r.body_cap(Verdict::Traverse, false), Some(100));
        assert_eq!(r.body_cap(Verdict::Page, false), Some(100));
        assert_eq!(
            r.body_cap(Verdict::Skip(SkipReason::ContentType), false),
            None
        );
    }

    #[test]
    fn the_type_acted_on_is_the_last_valid_one_and_bodiless_answers_are_kept() {
        let r = rules();
        let parse = |raw: &str| parse_response_head(raw.as_bytes()).unwrap();
        let twice =
            parse("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\n\r\n");
        assert_eq!(r.classify(&twice, false), Verdict::Page);
        let listed = parse("HTTP/1.1 200 OK\r\nContent-Type: text/html,text/html\r\n\r\n");
        assert_eq!(r.classify(&listed, false), Verdict::Page);
        let no_content = parse("HTTP/1.1 204 No Content\r\n\r\n");
        assert!(!r.waits_for_body(&no_content));
        assert_eq!(r.classify(&no_content, false), Verdict::Other);
        assert_eq!(
            r.classify(&head(205, "application/pdf"), false),
            Verdict::Other
        );
    }

    #[test]
    fn html_of_a_type_not_accepted_is_read_for_links_only() {
        let pdf = ArchiveRules {
            accept: vec!["application/pdf".into()],
            ..rules()
        };
        let budget = PageBudget::new(Some(1), 0);
        let html = head(200, "text/html; charset=utf-8");
        assert_eq!(pdf.classify(&html, false), Verdict::Traverse);
        // Not a page: it takes nothing from the budget.
        assert_eq!(pdf.decide(&html, false, &budget), Verdict::Traverse);
        assert_eq!(
            pdf.decide(&head(200, "application/pdf"), false, &budget),
            Verdict::Page
        );
        assert_eq!(
            pdf.classify(&head(200, "application/xhtml+xml"), false),
            Verdict::Traverse
        );
        // An error page is archived as the answer its link got, never traversed; so is the
        // answer to a robots/sitemap/requisite job.
        assert_eq!(pdf.classify(&head(404, "text/html"), false), Verdict::Other);
        assert_eq!(pdf.classify(&html, true), Verdict::Other);
        assert_eq!(
            pdf.classify(&head(200, "image/png"), false),
            Verdict::Skip(SkipReason::ContentType)
        );
    }

    #[test]
    fn rate_limit_answers_are_retried_until_the_last_attempt() {
        let r = rules();
        assert!(r.retry_later(429, 0));
        assert!(r.retry_later(503, 1));
        assert!(!r.retry_later(503, 2), "the last answer is archived");
        assert!(!r.retry_later(500, 0));
        let off = ArchiveRules {
            retry_status: vec![],
            ..rules()
        };
        assert!(!off.retry_later(429, 0));
    }

    #[test]
    fn budget_is_exact_under_contention() {
        let budget = Arc::new(PageBudget::new(Some(1000), 0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let b = budget.clone();
                std::thread::spawn(move || (0..1000).filter(|_| b.try_take()).count())
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(total, 1000);
        assert!(budget.exhausted());
        assert!(!PageBudget::new(None, 0).exhausted());
        assert!(PageBudget::new(Some(3), 3).exhausted());
    }
}
