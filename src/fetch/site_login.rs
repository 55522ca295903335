//! `--http-user` and `--http-password` (wget's names): HTTP Basic credentials (RFC 7617)
//! for sites that ask for them. A host gets them once it has asked (a 401 whose
//! `WWW-Authenticate` offers `Basic`) and the crawl loop has let it (the host is in the
//! crawl's scope), then with every request after; a host that never asked never sees them.
//! This is wget's rule, kept to the crawl's scope; Digest and other schemes are not answered.

use std::collections::HashSet;
use std::sync::RwLock;

use http::header::AUTHORIZATION;
use http::HeaderValue;
use url::Url;

use crate::http_message::ResponseHead;

/// The credentials and the hosts they go to.
#[derive(Debug)]
pub struct SiteLogin {
    header: HeaderValue,
    hosts: RwLock<HashSet<String>>,
}

impl SiteLogin {
    /// Credentials `user` and `password`; `None` when RFC 7617 cannot carry them: a colon in
    /// the user name, or a control character in either.
    pub fn new(user: &str, password: &str) -> Option<Self> {
        if user.contains(':') || format!("{user}{password}").chars().any(char::is_control) {
            return None;
        }
        let header = basic_credentials(user, password)?;
        Some(SiteLogin {
            header,
            hosts: RwLock::default(),
        })
    }

    /// From now on, requests to `host` carry the credentials. False when it already had them.
    pub fn accept(&self, host: &str) -> bool {
        let mut hosts = self.hosts.write().unwrap_or_else(|e| e.into_inner());
        hosts.insert(host.to_string())
    }

    /// Adds the credentials to `request` for `url` when its host gets them and the operator
    /// gave no `Authorization` (`--header`). Returns whether the request carries credentials
    /// (these or the operator's: a 401 to it is then not a question this login answers).
    pub fn sign<B>(&self, url: &Url, request: &mut http::Request<B>) -> bool {
        let fields = request.headers_mut();
        if fields.contains_key(AUTHORIZATION) {
            return true;
        }
        let hosts = self.hosts.read().unwrap_or_else(|e| e.into_inner());
        if !url.host_str().is_some_and(|h| hosts.contains(h)) {
            return false;
        }
        fields.insert(AUTHORIZATION, self.header.clone());
        true
    }
}

/// The value of an `Authorization` (or `Proxy-Authorization`) field with Basic credentials
/// (RFC 7617), marked sensitive so that it is never shown in debug output.
pub fn basic_credentials(user: &str, password: &str) -> Option<HeaderValue> {
    let token = data_encoding::BASE64.encode(format!("{user}:{password}").as_bytes());
    let mut header = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
    header.set_sensitive(true);
    Some(header)
}

/// Whether a response asks for Basic credentials: a 401 with a `Basic` challenge among its
/// `WWW-Authenticate` fields (several challenges may share one field, RFC 9110 11.6.1).
pub fn asks_for_basic(head: &ResponseHead) -> bool {
    head.status == 401
        && head
            .headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("www-authenticate"))
            .filter_map(|(_, value)| std::str::from_utf8(value).ok())
            .flat_map(|value| value.split(','))
            .any(|challenge| {
                // A challenge starts with its scheme; its parameters (`realm="x"`) follow.
                let scheme = challenge.split_whitespace().next().unwrap_or("");
                scheme.eq_ignore_ascii_case("basic")
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(status: u16, challenges: &[&str]) -> ResponseHead {
        let mut text = format!("HTTP/1.1 {status} X\r\n");
        for c in challenges {
            text.push_str(&format!("WWW-Authenticate: {c}\r\n"));
        }
        text.push_str("\r\n");
        crate::http_message::parse_final_head(text.as_bytes(), 100, 0)
            .unwrap()
            .1
    }

    #[test]
    fn a_basic_challenge_is_found_among_others() {
        assert!(asks_for_basic(&head(401, &[r#"Basic realm="staff""#])));
        assert!(asks_for_basic(&head(401, &["basic"])));
        assert!(asks_for_basic(&head(
            401,
            &[r#"Digest realm="x", nonce="n", Basic realm="x", charset="UTF-8""#]
        )));
        assert!(asks_for_basic(&head(
            401,
            &["Negotiate", r#"Basic realm="y""#]
        )));
        assert!(!asks_for_basic(&head(
            401,
            &[r#"Digest realm="x", nonce="n""#]
        )));
        assert!(!asks_for_basic(&head(401, &[r#"Bearer realm="basic""#])));
        assert!(!asks_for_basic(&head(401, &[])));
        assert!(!asks_for_basic(&head(403, &[r#"Basic realm="x""#])));
    }

    #[test]
    fn only_hosts_that_were_accepted_get_the_credentials() {
        let login = SiteLogin::new("Aladdin", "open sesame").unwrap();
        let url = Url::parse("http://intranet.example/docs/").unwrap();
        let mut request = http::Request::new(());
        assert!(!login.sign(&url, &mut request));
        assert!(login.accept("intranet.example"));
        assert!(!login.accept("intranet.example"));
        assert!(login.sign(&url, &mut request));
        // RFC 7617's example.
        assert_eq!(
            request.headers()[AUTHORIZATION],
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        let other = Url::parse("http://elsewhere.example/").unwrap();
        assert!(!login.sign(&other, &mut http::Request::new(())));
        // The operator's own field is left alone.
        let mut own = http::Request::new(());
        own.headers_mut()
            .insert(AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        assert!(login.sign(&url, &mut own));
        assert_eq!(own.headers()[AUTHORIZATION], "Bearer t");
        for (user, password) in [("a\r\nb", "x"), ("a:b", "x"), ("a", "x\ty")] {
            assert!(
                SiteLogin::new(user, password).is_none(),
                "{user:?} {password:?}"
            );
        }
        assert!(SiteLogin::new("ä", "p:ss wörd").is_some());
    }
}
