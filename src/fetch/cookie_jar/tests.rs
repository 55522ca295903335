//! Tests of `fetch/cookie_jar.rs`.

use super::*;

fn head(set_cookies: &[&str]) -> ResponseHead {
    ResponseHead {
        status: 200,
        len: 0,
        http10: false,
        headers: set_cookies
            .iter()
            .map(|v| ("Set-Cookie".to_string(), v.as_bytes().to_vec()))
            .collect(),
    }
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn sends_back_what_was_set_where_it_matches() {
    let jar = CookieJar::new();
    assert_eq!(jar.unsaved(), None);
    jar.store_from(
        &url("http://www.site.test/"),
        &head(&[
            "session=abc; Path=/",
            "deep=1; Path=/members",
            "wide=2; Domain=site.test",
            "secure=3; Secure",
        ]),
    );
    assert!(jar.unsaved().unwrap().contains("session\tabc"));
    assert_eq!(jar.unsaved(), None, "saved once per change");
    let sent = |u: &str| {
        jar.header_for(&url(u), None)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let members = sent("http://www.site.test/members/x").unwrap();
    assert!(members.starts_with("deep=1; "), "{members}");
    assert!(members.contains("session=abc") && members.contains("wide=2"));
    assert!(!members.contains("secure"), "{members}");
    assert!(sent("https://www.site.test/").unwrap().contains("secure=3"));
    assert_eq!(sent("http://other.site.test/").as_deref(), Some("wide=2"));
    assert_eq!(sent("http://elsewhere.test/"), None);
    let with = HeaderValue::from_static("mine=0");
    assert_eq!(
        jar.header_for(&url("http://other.site.test/"), Some(&with))
            .unwrap(),
        "mine=0; wide=2"
    );
}

#[test]
fn refuses_public_suffixes_and_floods() {
    let jar = CookieJar::new();
    jar.store_from(
        &url("http://evil.github.io/"),
        &head(&["a=1; Domain=github.io", "b=2; Domain=com", "c=3"]),
    );
    assert_eq!(jar.header_for(&url("http://victim.github.io/"), None), None);
    assert_eq!(
        jar.header_for(&url("http://evil.github.io/"), None)
            .unwrap(),
        "c=3"
    );
    let many: Vec<String> = (0..200).map(|i| format!("n{i}=v")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    jar.store_from(&url("http://flood.test/"), &head(&refs));
    let sent = jar.header_for(&url("http://flood.test/"), None).unwrap();
    assert_eq!(sent.to_str().unwrap().split("; ").count(), MAX_PER_URL);
    let big = format!("big={}", "x".repeat(MAX_COOKIE_BYTES));
    jar.store_from(&url("http://big.test/"), &head(&[&big]));
    assert_eq!(jar.header_for(&url("http://big.test/"), None), None);
}

#[test]
fn a_site_keeps_180_and_a_full_jar_drops_the_least_used_site() {
    let jar = CookieJar::new();
    // Cookies of their own paths, so that no URL matches 50 of them: 300 set, 180 kept.
    let set = |site: &str, from: usize, n: usize| {
        let fields: Vec<String> = (from..from + n)
            .map(|i| format!("c{i}=v; Path=/p{i}"))
            .collect();
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        jar.store_from(&url(&format!("http://{site}/")), &head(&refs));
    };
    for round in 0..6 {
        set("greedy.test", round * 50, 50);
    }
    assert_eq!(
        jar.lock().sites["greedy.test"].store.iter_any().count(),
        MAX_PER_SITE
    );
    // 60 sites of 180 are more than the jar holds: the least used go, the jar stays
    // within its cap, and the site that set one last has it.
    for i in 0..60 {
        for round in 0..4 {
            set(&format!("s{i}.test"), round * 50, 50);
        }
    }
    set("last.test", 0, 1);
    let inner = jar.lock();
    let held: usize = inner
        .sites
        .values()
        .map(|s| s.store.iter_any().count())
        .sum();
    assert!(held <= MAX_COOKIES, "{held}");
    assert!(!inner.sites.contains_key("greedy.test"));
    assert!(inner.sites.contains_key("s59.test") && inner.sites.contains_key("last.test"));
}

#[test]
fn a_deleted_cookie_is_not_sent_and_the_jar_round_trips() {
    let jar = CookieJar::new();
    let u = url("http://a.test/");
    jar.store_from(&u, &head(&["keep=1; Max-Age=3600", "drop=2"]));
    jar.store_from(&u, &head(&["drop=; Max-Age=0"]));
    assert_eq!(jar.header_for(&u, None).unwrap(), "keep=1");
    let text = jar.to_cookies_txt();
    let again = CookieJar::new();
    assert_eq!(again.load(&cookies_txt::parse(&text).cookies), 1);
    assert_eq!(again.header_for(&u, None).unwrap(), "keep=1");
}

#[test]
fn each_site_keeps_its_own_cookies() {
    let jar = CookieJar::new();
    for i in 0..3_000 {
        jar.store_from(&url(&format!("http://www.s{i}.test/")), &head(&["id=1"]));
        jar.store_from(
            &url(&format!("http://127.3.{}.{}/", i / 250, i % 250 + 1)),
            &head(&["ip=1"]),
        );
    }
    jar.store_from(
        &url("http://www.s7.test/"),
        &head(&["wide=2; Domain=s7.test"]),
    );
    jar.store_from(&url("http://127.0.0.1/"), &head(&["one=1"]));
    assert_eq!(jar.lock().sites.len(), 6_001);
    let sent = |u: &str| {
        jar.header_for(&url(u), None)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let mut both: Vec<String> = sent("http://www.s7.test/")
        .unwrap()
        .split("; ")
        .map(String::from)
        .collect();
    both.sort();
    assert_eq!(both, ["id=1", "wide=2"]);
    assert_eq!(sent("http://other.s7.test/").as_deref(), Some("wide=2"));
    assert_eq!(sent("http://s7.test/").as_deref(), Some("wide=2"));
    assert_eq!(sent("http://www.s8.test/").as_deref(), Some("id=1"));
    assert_eq!(sent("http://127.0.0.1/").as_deref(), Some("one=1"));
    assert_eq!(sent("http://127.0.0.2/"), None);
    assert_eq!(sent("http://www.s3001.test/"), None);
    // Saved and loaded, every site's cookies are where they were.
    let again = CookieJar::new();
    assert_eq!(
        again.load(&cookies_txt::parse(&jar.to_cookies_txt()).cookies),
        6_002
    );
    assert_eq!(again.to_cookies_txt(), jar.to_cookies_txt());
    assert_eq!(
        again
            .header_for(&url("http://other.s7.test/"), None)
            .unwrap(),
        "wide=2"
    );
}
