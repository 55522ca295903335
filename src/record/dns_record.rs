//! The record of a name resolution (`--dns-records`), as Heritrix writes it: a `response`
//! record for `dns:NAME` with `Content-Type: text/dns`, whose block is the lookup time (14
//! digits, UTC) on the first line, then the answers in zone-file form, one per line.
//! `WARC-IP-Address` is the name server, when it is known which one answered.

use crate::exchange::DnsLookup;

use super::builder::{serialize, warc_date, WarcRecord};
use super::digest::sha1_digest;

/// The `dns:` record of `lookup`.
pub fn dns_record(lookup: &DnsLookup) -> WarcRecord {
    let date = warc_date(lookup.date);
    let stamp: String = date.chars().filter(char::is_ascii_digit).collect();
    let mut block = stamp;
    block.push('\n');
    for answer in &lookup.answers {
        block.push_str(answer);
        block.push('\n');
    }
    let target = format!("dns:{}", lookup.name);
    let digest = sha1_digest(block.as_bytes());
    let server = lookup.server.map(|ip| ip.to_string());
    let mut fields = vec![("WARC-Date", date.as_str()), ("WARC-Target-URI", &target)];
    if let Some(ip) = &server {
        fields.push(("WARC-IP-Address", ip));
    }
    fields.push(("Content-Type", "text/dns"));
    fields.push(("WARC-Block-Digest", &digest));
    serialize(
        "response",
        super::builder::RecordIds::next(),
        &fields,
        block.as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn reads_as_heritrix_writes_it() {
        let lookup = DnsLookup {
            name: "site.test".into(),
            date: SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000),
            server: Some("127.0.0.1".parse().unwrap()),
            answers: vec!["site.test.\t300\tIN\tA\t127.0.0.10".into()],
        };
        let text = String::from_utf8(dns_record(&lookup).bytes).unwrap();
        let (head, block) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("WARC/1.1\r\nWARC-Type: response\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nWARC-Target-URI: dns:site.test\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nWARC-IP-Address: 127.0.0.1\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nContent-Type: text/dns\r\n"), "{head}");
        assert_eq!(
            block,
            "20261118110640\nsite.test.\t300\tIN\tA\t127.0.0.10\n\r\n\r\n"
        );
    }
}
