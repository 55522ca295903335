//! The test server's side of HTTP Digest authentication (RFC 7616, MD5 with `qop=auth`),
//! written apart from trawl's client: it checks a request's `Authorization` against the
//! realm's current nonce, and calls a nonce stale after a number of answers.

use std::sync::Mutex;

use md5::{Digest, Md5};

/// The realm every Digest host of the tests uses.
pub const REALM: &str = "staff area";

/// A host's nonce: its serial number and how many answers it took.
#[derive(Debug)]
pub struct Nonces {
    serial: u32,
    used: u32,
    stale_after: u32,
}

impl Nonces {
    /// Nonces that turn stale after `stale_after` answers.
    pub fn new(stale_after: u32) -> Mutex<Self> {
        Mutex::new(Nonces {
            serial: 1,
            used: 0,
            stale_after,
        })
    }
}

fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `name="value"` (or `name=value`) parameters of a Digest `Authorization` value.
fn params(value: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = value.trim().strip_prefix("Digest").unwrap_or("").trim();
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].trim().trim_start_matches(',').trim().to_string();
        let after = &rest[eq + 1..];
        let (value, left) = match after.strip_prefix('"') {
            Some(q) => {
                let end = q.find('"').unwrap_or(q.len());
                (q[..end].to_string(), q.get(end + 1..).unwrap_or(""))
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_string(), &after[end..])
            }
        };
        out.push((name, value));
        rest = left;
    }
    out
}

/// The server's verdict on the request `head` for `(user, password)`: `Ok` when its
/// `Authorization` answers the current nonce correctly, else the `WWW-Authenticate` value of
/// the 401 to send (`stale=true` when only the nonce was old).
pub fn verdict(
    head: &str,
    (user, password): (&str, &str),
    nonces: &Mutex<Nonces>,
) -> Result<(), String> {
    let mut n = nonces.lock().unwrap();
    let current = format!("nonce-{}", n.serial);
    let challenge = |nonce: &str, stale: bool| {
        let stale = if stale { ", stale=true" } else { "" };
        format!(
            r#"Digest realm="{REALM}", qop="auth", nonce="{nonce}", opaque="op"{stale}, Basic realm="{REALM}""#
        )
    };
    let target = head.split_whitespace().nth(1).unwrap_or("");
    let sent = head.lines().skip(1).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("authorization")
            .then(|| params(value))
    });
    let Some(sent) = sent else {
        return Err(challenge(&current, false));
    };
    let get = |name: &str| {
        sent.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let ha1 = md5_hex(&format!("{user}:{REALM}:{password}"));
    let ha2 = md5_hex(&format!("GET:{}", get("uri")));
    let expected = md5_hex(&format!(
        "{ha1}:{}:{}:{}:auth:{ha2}",
        get("nonce"),
        get("nc"),
        get("cnonce")
    ));
    let right = get("username") == user
        && get("realm") == REALM
        && get("uri") == target
        && get("qop") == "auth"
        && get("opaque") == "op"
        && get("response") == expected;
    if !right {
        return Err(challenge(&current, false));
    }
    if get("nonce") != current || n.used >= n.stale_after {
        n.serial += 1;
        n.used = 0;
        return Err(challenge(&format!("nonce-{}", n.serial), true));
    }
    n.used += 1;
    Ok(())
}
