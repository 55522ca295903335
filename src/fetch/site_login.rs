//! `--http-user` and `--http-password` (wget's names): credentials for sites that ask for
//! them, by HTTP Basic (RFC 7617) or Digest (RFC 7616, by the http-auth crate; chosen when a
//! site offers both, as it does not send the password). A host gets them once it has asked (a 401
//! whose `WWW-Authenticate` offers either) and the crawl loop has let it (the host is in the
//! crawl's scope), then with every request after; a host that never asked never sees them.
//! This is wget's rule, kept to the crawl's scope; with `--auth-no-challenge` the seeds' hosts
//! get them from the first request (wget's sends them to every host). A Digest answer whose
//! nonce the server calls stale is made again with the fresh one.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, RwLock};

use http::header::AUTHORIZATION;
use http::HeaderValue;
use url::Url;

use http_auth::digest::DigestClient;
use http_auth::{PasswordClient, PasswordParams};

use crate::http_message::ResponseHead;

/// Most hosts whose Digest challenge is kept (a hostile web can send one per host).
const MAX_CHALLENGES: usize = 10_000;
/// Longest `WWW-Authenticate` value read for a challenge: with [`MAX_CHALLENGES`], at most
/// ~40 MB of kept challenges however long the nonces a hostile web sends.
const MAX_CHALLENGE_BYTES: usize = 4096;

/// The credentials and the hosts they go to.
pub struct SiteLogin {
    user: String,
    password: String,
    basic: HeaderValue,
    hosts: RwLock<HashSet<String>>,
    /// The last Digest challenge of each host that sent one, with its nonce count.
    digests: Mutex<HashMap<String, DigestClient>>,
    /// wget's `--auth-no-challenge`: the seeds' hosts get the credentials before they ask.
    unasked: bool,
}

impl std::fmt::Debug for SiteLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteLogin")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// What credentials a request carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signed {
    /// None.
    No,
    /// The operator's own `Authorization` (`--header`).
    Operator,
    /// Basic credentials.
    Basic,
    /// A Digest answer.
    Digest,
}

/// What a response asks of the login.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LoginAsk {
    /// Nothing.
    #[default]
    Nothing,
    /// A 401 asked for credentials the request did not carry.
    Credentials,
    /// A 401 said the Digest answer's nonce was stale, and brought a fresh one.
    FreshNonce,
}

impl SiteLogin {
    /// Credentials `user` and `password`; `None` when RFC 7617 cannot carry them: a colon in
    /// the user name, or a control character in either.
    pub fn new(user: &str, password: &str) -> Option<Self> {
        if user.contains(':') || format!("{user}{password}").chars().any(char::is_control) {
            return None;
        }
        let basic = basic_credentials(user, password)?;
        Some(SiteLogin {
            user: user.to_string(),
            password: password.to_string(),
            basic,
            hosts: RwLock::default(),
            digests: Mutex::default(),
            unasked: false,
        })
    }

    /// With `unasked` (wget's `--auth-no-challenge`), the crawl loop gives the seeds' hosts
    /// the credentials before they ask: for sites that answer a request without them with a
    /// login page or a 404 rather than a 401.
    pub fn unasked(mut self, unasked: bool) -> Self {
        self.unasked = unasked;
        self
    }

    /// True when the seeds' hosts get the credentials before they ask.
    pub fn sends_unasked(&self) -> bool {
        self.unasked
    }

    /// From now on, requests to `host` carry the credentials. False when it already had them.
    pub fn accept(&self, host: &str) -> bool {
        let mut hosts = self.hosts.write().unwrap_or_else(|e| e.into_inner());
        hosts.insert(host.to_string())
    }

    /// Adds the credentials to `request` for `url` when its host gets them and the operator
    /// gave no `Authorization` (`--header`): a Digest answer to the host's last challenge,
    /// else Basic credentials.
    pub fn sign<B>(&self, url: &Url, request: &mut http::Request<B>) -> Signed {
        if request.headers().contains_key(AUTHORIZATION) {
            return Signed::Operator;
        }
        let Some(host) = url.host_str() else {
            return Signed::No;
        };
        if !self
            .hosts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(host)
        {
            return Signed::No;
        }
        let mut digests = self.digests.lock().unwrap_or_else(|e| e.into_inner());
        let (value, signed) = match digests.get_mut(host) {
            Some(challenge) => {
                let target = request.uri().to_string();
                let params = PasswordParams {
                    username: &self.user,
                    password: &self.password,
                    uri: &target,
                    method: request.method().as_str(),
                    body: Some(&[]),
                };
                let answer = challenge.respond(&params).ok();
                match answer.and_then(|a| HeaderValue::from_bytes(a.as_bytes()).ok()) {
                    Some(mut value) => {
                        value.set_sensitive(true);
                        (value, Signed::Digest)
                    }
                    None => return Signed::No,
                }
            }
            None => (self.basic.clone(), Signed::Basic),
        };
        request.headers_mut().insert(AUTHORIZATION, value);
        signed
    }

    /// What the response `head` to a request for `url` that carried `signed` asks: keeps the
    /// Digest challenge of a 401 for the host's next requests.
    pub fn ask(&self, url: &Url, signed: Signed, head: &ResponseHead) -> LoginAsk {
        let Some(host) = url.host_str().filter(|_| head.status == 401) else {
            return LoginAsk::Nothing;
        };
        let (mut fresh, mut offered) = (false, true);
        match challenge(head) {
            Ok(PasswordClient::Digest(challenge)) => {
                let mut digests = self.digests.lock().unwrap_or_else(|e| e.into_inner());
                let known = digests.get(host);
                fresh = challenge.stale() && known.is_some_and(|k| k.nonce() != challenge.nonce());
                if known.is_some() || digests.len() < MAX_CHALLENGES {
                    digests.insert(host.to_string(), challenge);
                }
            }
            Ok(_) => {}
            Err(_) => offered = offers_basic(head),
        }
        match signed {
            Signed::No if offered => LoginAsk::Credentials,
            Signed::Digest if fresh => LoginAsk::FreshNonce,
            _ => LoginAsk::Nothing,
        }
    }
}

/// The value of an `Authorization` (or `Proxy-Authorization`) field with Basic credentials
/// (RFC 7617), marked sensitive so that it is never shown in debug output.
pub fn basic_credentials(user: &str, password: &str) -> Option<HeaderValue> {
    let value = http_auth::basic::encode_credentials(user, password);
    let mut header = HeaderValue::from_str(&value).ok()?;
    header.set_sensitive(true);
    Some(header)
}

/// The `WWW-Authenticate` values of `head` that are text, up to [`MAX_CHALLENGE_BYTES`] each.
fn authenticate_values(head: &ResponseHead) -> impl Iterator<Item = &str> {
    head.headers
        .iter()
        .filter(|(name, value)| {
            name.eq_ignore_ascii_case("www-authenticate") && value.len() <= MAX_CHALLENGE_BYTES
        })
        .filter_map(|(_, value)| std::str::from_utf8(value).ok())
}

/// The challenge of a 401 that trawl answers: Digest if offered (an algorithm and `qop` that
/// http-auth knows), else Basic, among its `WWW-Authenticate` fields (several challenges may
/// share one field, RFC 9110 11.6.1).
fn challenge(head: &ResponseHead) -> Result<PasswordClient, String> {
    authenticate_values(head)
        .fold(PasswordClient::builder(), |b, value| b.challenges(value))
        .build()
}

/// Whether `head` offers a `Basic` challenge, with or without the realm http-auth wants.
fn offers_basic(head: &ResponseHead) -> bool {
    authenticate_values(head).any(|value| {
        http_auth::parse_challenges(value)
            .is_ok_and(|all| all.iter().any(|c| c.scheme.eq_ignore_ascii_case("basic")))
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
    fn a_challenge_trawl_can_answer_is_found_among_others() {
        let login = SiteLogin::new("u", "p").unwrap();
        let url = Url::parse("http://a.example/").unwrap();
        let asks = |status, challenges: &[&str]| {
            login.ask(&url, Signed::No, &head(status, challenges)) == LoginAsk::Credentials
        };
        assert!(asks(401, &[r#"Basic realm="staff""#]));
        assert!(asks(401, &["basic"]));
        assert!(asks(
            401,
            &[r#"Digest realm="x", nonce="n", Basic realm="x", charset="UTF-8""#]
        ));
        assert!(asks(401, &["Negotiate", r#"Basic realm="y""#]));
        assert!(asks(401, &[r#"Digest realm="x", nonce="n""#]));
        assert!(asks(
            401,
            &[r#"Digest realm="x", nonce="n", algorithm=SHA-256-sess"#]
        ));
        assert!(!asks(
            401,
            &[r#"Digest realm="x", nonce="n", algorithm=MD4"#]
        ));
        assert!(!asks(401, &[r#"Bearer realm="basic""#]));
        let huge = format!(
            r#"Digest realm="x", nonce="{}""#,
            "n".repeat(MAX_CHALLENGE_BYTES)
        );
        assert!(!asks(401, &[&huge]));
        assert!(!asks(401, &[]));
        assert!(!asks(403, &[r#"Basic realm="x""#]));
    }

    #[test]
    fn only_hosts_that_were_accepted_get_the_credentials() {
        let login = SiteLogin::new("Aladdin", "open sesame").unwrap();
        let url = Url::parse("http://intranet.example/docs/").unwrap();
        let mut request = http::Request::new(());
        assert_eq!(login.sign(&url, &mut request), Signed::No);
        assert!(login.accept("intranet.example"));
        assert!(!login.accept("intranet.example"));
        assert_eq!(login.sign(&url, &mut request), Signed::Basic);
        // RFC 7617's example.
        assert_eq!(
            request.headers()[AUTHORIZATION],
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        let other = Url::parse("http://elsewhere.example/").unwrap();
        assert_eq!(login.sign(&other, &mut http::Request::new(())), Signed::No);
        // The operator's own field is left alone.
        let mut own = http::Request::new(());
        own.headers_mut()
            .insert(AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        assert_eq!(login.sign(&url, &mut own), Signed::Operator);
        assert_eq!(own.headers()[AUTHORIZATION], "Bearer t");
        for (user, password) in [("a\r\nb", "x"), ("a:b", "x"), ("a", "x\ty")] {
            assert!(
                SiteLogin::new(user, password).is_none(),
                "{user:?} {password:?}"
            );
        }
        assert!(SiteLogin::new("ä", "p:ss wörd").is_some());
        assert!(!format!("{login:?}").contains("sesame"));
    }

    #[test]
    fn a_digest_challenge_is_answered_and_a_stale_nonce_renewed() {
        let login = SiteLogin::new("Mufasa", "Circle Of Life").unwrap();
        let url = Url::parse("http://intranet.example/dir/index.html?a=1").unwrap();
        let first = head(
            401,
            &[r#"Digest realm="r", qop="auth", nonce="n1", Basic realm="r""#],
        );
        assert_eq!(login.ask(&url, Signed::No, &first), LoginAsk::Credentials);
        login.accept("intranet.example");
        let mut request = http::Request::get("/dir/index.html?a=1").body(()).unwrap();
        assert_eq!(login.sign(&url, &mut request), Signed::Digest);
        let sent = request.headers()[AUTHORIZATION]
            .to_str()
            .unwrap()
            .to_string();
        assert!(sent.starts_with("Digest username=\"Mufasa\""), "{sent}");
        assert!(sent.contains(r#"uri="/dir/index.html?a=1""#), "{sent}");
        assert!(
            sent.contains(r#"nonce="n1""#) && sent.contains("nc=00000001"),
            "{sent}"
        );
        // Wrong credentials: a new nonce without `stale` asks nothing more.
        let refused = head(401, &[r#"Digest realm="r", qop="auth", nonce="n2""#]);
        assert_eq!(login.ask(&url, Signed::Digest, &refused), LoginAsk::Nothing);
        let stale = head(
            401,
            &[r#"Digest realm="r", qop="auth", nonce="n3", stale=true"#],
        );
        assert_eq!(
            login.ask(&url, Signed::Digest, &stale),
            LoginAsk::FreshNonce
        );
        let mut again = http::Request::get("/dir/index.html?a=1").body(()).unwrap();
        login.sign(&url, &mut again);
        let sent = again.headers()[AUTHORIZATION].to_str().unwrap();
        assert!(
            sent.contains(r#"nonce="n3""#) && sent.contains("nc=00000001"),
            "{sent}"
        );
        // The same stale nonce again is not news.
        assert_eq!(login.ask(&url, Signed::Digest, &stale), LoginAsk::Nothing);
    }
}
