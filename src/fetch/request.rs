//! The request trawl sends for a URL: a GET with `Host`, `User-Agent`, `Accept`,
//! `Accept-Encoding`, the `Referer` the crawl gives it and `Connection: keep-alive` (title
//! case on the wire, see connection.rs), then the operator's `--header` fields, an `Accept`,
//! `Accept-Encoding` or `Referer` among them replacing trawl's own.

use bytes::Bytes;
use http::header::{
    HeaderName, HeaderValue, InvalidHeaderValue, ACCEPT, ACCEPT_ENCODING, CONNECTION, HOST,
    REFERER, USER_AGENT,
};
use http_body_util::Empty;
use url::Url;

use super::FetchError;
use crate::fault::FaultKind;

/// What every request carries, checked once.
pub(super) struct RequestTemplate {
    user_agent: Result<HeaderValue, InvalidHeaderValue>,
    extra: Vec<(HeaderName, HeaderValue)>,
}

impl RequestTemplate {
    /// Requests sent as `user_agent`, with the `extra` fields.
    pub(super) fn new(user_agent: &str, extra: Vec<(HeaderName, HeaderValue)>) -> Self {
        RequestTemplate {
            user_agent: HeaderValue::from_bytes(user_agent.as_bytes()),
            extra,
        }
    }

    /// The GET request for `url`, sent with `referer` unless the operator's fields have one.
    pub(super) fn request(
        &self,
        url: &Url,
        referer: Option<&str>,
    ) -> Result<http::Request<Empty<Bytes>>, FetchError> {
        let invalid = |e: &dyn std::fmt::Display| FetchError::Protocol {
            kind: FaultKind::InvalidUrl,
            detail: format!("cannot build request for {url}: {e}"),
        };
        let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
        // `host[:port]` as the URL spells it (brackets around IPv6, no credentials).
        let host = HeaderValue::from_str(&url[url::Position::BeforeHost..url::Position::AfterPort])
            .map_err(|e| invalid(&e))?;
        let user_agent = self.user_agent.as_ref().map_err(|e| invalid(e))?.clone();
        // Built in place (http's builder moves the whole request at every field).
        let mut request = http::Request::new(Empty::new());
        *request.uri_mut() = target.parse().map_err(|e| invalid(&e))?;
        let fields = request.headers_mut();
        fields.reserve(6 + self.extra.len());
        fields.insert(HOST, host);
        fields.insert(USER_AGENT, user_agent);
        fields.insert(
            ACCEPT,
            HeaderValue::from_static(
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            ),
        );
        fields.insert(
            ACCEPT_ENCODING,
            HeaderValue::from_static("gzip, deflate, br"),
        );
        // (A value that is no header value, which the crawl never makes, is not sent.)
        if let Some(value) = referer.and_then(|r| HeaderValue::from_str(r).ok()) {
            fields.insert(REFERER, value);
        }
        fields.insert(CONNECTION, HeaderValue::from_static("keep-alive"));
        for (name, value) in &self.extra {
            if *name == ACCEPT || *name == ACCEPT_ENCODING || *name == REFERER {
                fields.insert(name, value.clone());
            } else {
                fields.append(name, value.clone());
            }
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_built_for_odd_but_valid_urls() {
        let t = RequestTemplate::new("trawl-test/1", Vec::new());
        for u in [
            "http://a.org/a|b^c[d]?q={x}&r=`y`",
            "http://a.org/%7Buser%7D/ä ö",
            "http://[::1]:8080/x",
            "https://xn--bcher-kva.example/",
        ] {
            let url = Url::parse(u).unwrap();
            let req = t.request(&url, None).unwrap_or_else(|e| panic!("{u}: {e}"));
            assert_eq!(
                req.headers()["host"],
                url[url::Position::BeforeHost..url::Position::AfterPort]
            );
        }
    }

    #[test]
    fn the_referer_given_is_sent_unless_the_operator_sends_one() {
        let url = Url::parse("http://a.org/i.png").unwrap();
        let t = RequestTemplate::new("trawl-test/1", Vec::new());
        let req = t.request(&url, Some("http://a.org/page")).unwrap();
        assert_eq!(req.headers()[REFERER], "http://a.org/page");
        assert!(!t
            .request(&url, None)
            .unwrap()
            .headers()
            .contains_key(REFERER));
        let extra = vec![(
            REFERER,
            HeaderValue::from_static("http://operator.example/"),
        )];
        let t = RequestTemplate::new("trawl-test/1", extra);
        let req = t.request(&url, Some("http://a.org/page")).unwrap();
        let sent: Vec<_> = req.headers().get_all(REFERER).iter().collect();
        assert_eq!(sent, ["http://operator.example/"]);
    }

    #[test]
    fn extra_fields_are_added_and_accept_replaced() {
        let extra = vec![
            (ACCEPT, HeaderValue::from_static("text/html")),
            (
                HeaderName::from_static("x-contact"),
                HeaderValue::from_static("ops@example.org"),
            ),
        ];
        let t = RequestTemplate::new("trawl-test/1", extra);
        let req = t
            .request(&Url::parse("http://a.org/").unwrap(), None)
            .unwrap();
        let accepts: Vec<_> = req.headers().get_all(ACCEPT).iter().collect();
        assert_eq!(accepts, ["text/html"]);
        assert_eq!(req.headers()["x-contact"], "ops@example.org");
    }
}
