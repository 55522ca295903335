//! Tests of `index/surt.rs`.

use super::surt;

// Expected values printed by Python: `surt.surt(url)` (surt 0.3.1, as pinned in
// scripts/requirements.txt).
#[test]
fn matches_python_surt() {
    for (url, want) in [
        (
            "http://127.0.0.1:36489/robots.txt",
            "1,0,0,127:36489)/robots.txt",
        ),
        ("http://127.0.0.1:36489/", "1,0,0,127:36489)/"),
        ("http://127.0.0.1:8080/about/", "1,0,0,127:8080)/about"),
        (
            "https://www.Example.com/Path/To/Page.html?b=2&a=1&A=3",
            "com,example)/path/to/page.html?a=1&a=3&b=2",
        ),
        ("https://www2.example.co.uk:443/x?", "uk,co,example)/x"),
        (
            "http://example.com/a%20b/%7Euser/caf%C3%A9?q=%41%2f",
            "com,example)/a%20b/~user/caf%c3%a9?q=a/",
        ),
        (
            "http://example.com:80/?jsessionid=0123456789abcdef0123456789ABCDEF&x=1",
            "com,example)/?x=1",
        ),
        ("http://example.com/a//b/./c/../d/", "com,example)/a/b/d"),
        (
            "http://xn--bcher-kva.example/ä",
            "example,xn--bcher-kva)/%c3%a4",
        ),
        ("http://[::1]:8080/x", "::1:8080)/x"),
        ("http://example.com/p?a&b=&a=", "com,example)/p?a&a=&b="),
        ("http://example.com/%25%2541", "com,example)/%25a"),
        ("http://example.com/#frag", "com,example)/"),
        ("http://3232235777/x", "1,1,168,192)/x"),
        ("http://example.com:8443", "com,example:8443)/"),
        (
            "https://sub.domain.example.org/Some%20Path/?Q=Upper#x",
            "org,example,domain,sub)/some%20path?q=upper",
        ),
    ] {
        assert_eq!(surt(url), want, "{url}");
    }
}
