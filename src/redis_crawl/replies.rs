//! Reading the replies of the shard scripts (nested arrays of bulk strings and integers):
//! adopted hosts, their queue entries and robots.txt texts.

use std::time::Duration;

use redis::Value;

use super::lease_book::decode_entry;
use crate::frontier::lease::AdoptedRobots;
use crate::frontier::storage::QueuedUrl;

/// A host as a claim returned it.
pub(super) struct AdoptedReply {
    pub(super) name: String,
    pub(super) wait_ms: u64,
    pub(super) pages: u64,
    pub(super) entries: Vec<QueuedUrl>,
    pub(super) robots: Vec<AdoptedRobots>,
    pub(super) dropped: u64,
}

pub(super) fn parse_adopted(v: Value) -> Option<AdoptedReply> {
    let mut p = array(v).into_iter();
    let name = text(p.next()?)?;
    let wait_ms = int(p.next()?)?;
    let pages = int(p.next()?)?;
    let _queued_left = int(p.next()?)?;
    let entries = parse_entries(p.next());
    let mut robots = Vec::new();
    let mut pairs = array(p.next()?).into_iter();
    while let (Some(origin), Some(value)) = (pairs.next(), pairs.next()) {
        let (Some(origin), Some(value)) = (text(origin), bytes(value)) else {
            continue;
        };
        let text = match value.split_first() {
            Some((b'T', t)) => Some(t.to_vec()),
            Some((b'N', _)) => None,
            _ => continue,
        };
        robots.push(AdoptedRobots {
            origin,
            text,
            age: None,
        });
    }
    let dropped = p.next().and_then(int).unwrap_or(0);
    // Written by workers since the ages were kept; a text without one is of unknown age.
    let mut ages = array(p.next().unwrap_or(Value::Nil)).into_iter();
    while let (Some(origin), Some(ms)) = (ages.next(), ages.next()) {
        let (Some(origin), Some(ms)) = (text(origin), int(ms)) else {
            continue;
        };
        if let Some(r) = robots.iter_mut().find(|r| r.origin == origin) {
            r.age = Some(Duration::from_millis(ms));
        }
    }
    Some(AdoptedReply {
        name,
        wait_ms,
        pages,
        entries,
        robots,
        dropped,
    })
}

pub(super) fn parse_entries(v: Option<Value>) -> Vec<QueuedUrl> {
    v.map(array)
        .unwrap_or_default()
        .into_iter()
        .filter_map(text)
        .filter_map(|s| decode_entry(&s))
        .collect()
}

pub(super) fn array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

fn bytes(v: Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.into_bytes()),
        _ => None,
    }
}

pub(super) fn text(v: Value) -> Option<String> {
    bytes(v).and_then(|b| String::from_utf8(b).ok())
}

pub(super) fn int(v: Value) -> Option<u64> {
    match v {
        Value::Int(i) => u64::try_from(i).ok(),
        other => text(other).and_then(|s| s.parse().ok()),
    }
}
