//! `GET /metrics`: the crawl's counters in the Prometheus text exposition format (version
//! 0.0.4), for people who watch crawls in Prometheus and Grafana.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::view::View;

/// The metrics of `view`.
pub fn render(view: &View) -> String {
    let mut out = String::with_capacity(4096);
    let mut one = |name: &str, kind: &str, help: &str, value: u64| {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    };
    one(
        "trawl_pages_archived_total",
        "counter",
        "Pages archived.",
        view.pages,
    );
    one(
        "trawl_requests_total",
        "counter",
        "HTTP responses received.",
        view.requests,
    );
    one(
        "trawl_downloaded_bytes_total",
        "counter",
        "Response bytes received.",
        view.bytes_downloaded,
    );
    one(
        "trawl_warc_bytes_total",
        "counter",
        "WARC bytes written.",
        view.bytes_written,
    );
    one("trawl_queued_urls", "gauge", "URLs queued.", view.queued);
    one(
        "trawl_in_flight",
        "gauge",
        "Fetches running.",
        view.in_flight,
    );
    one(
        "trawl_paused",
        "gauge",
        "1 while the crawl is paused from the console.",
        u64::from(view.state == "paused"),
    );
    if let Some(rss) = view.peak_rss_bytes {
        one(
            "trawl_peak_rss_bytes",
            "gauge",
            "Peak resident memory.",
            rss,
        );
    }
    let hosts = BTreeMap::from([
        ("seen".to_string(), view.hosts.seen),
        ("active".to_string(), view.hosts.active),
        ("waiting".to_string(), view.hosts.waiting),
        ("given_up".to_string(), view.hosts.given_up),
    ]);
    labelled(
        &mut out,
        "trawl_hosts",
        "gauge",
        "Hosts by state.",
        "state",
        &hosts,
    );
    labelled(
        &mut out,
        "trawl_responses_total",
        "counter",
        "HTTP responses by status code.",
        "code",
        &view.status_codes,
    );
    labelled(
        &mut out,
        "trawl_errors_total",
        "counter",
        "Failed fetch attempts by kind.",
        "kind",
        &view.errors,
    );
    labelled(
        &mut out,
        "trawl_filtered_total",
        "counter",
        "URLs not fetched or not archived, by reason.",
        "reason",
        &view.filtered,
    );
    out
}

/// One metric with a label per entry of `values`.
fn labelled(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    label: &str,
    values: &BTreeMap<String, u64>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (key, value) in values {
        let _ = writeln!(out, "{name}{{{label}=\"{}\"}} {value}", escape(key));
    }
}

/// A label value as the format wants it: backslash, double quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_gauges_and_escaped_labels() {
        let mut view = View {
            pages: 7,
            queued: 3,
            state: "paused".into(),
            ..View::default()
        };
        view.errors.insert("tls \"x\"\n".into(), 2);
        view.status_codes.insert("200".into(), 7);
        let text = render(&view);
        assert!(text
            .contains("# TYPE trawl_pages_archived_total counter\ntrawl_pages_archived_total 7\n"));
        assert!(text.contains("trawl_queued_urls 3\n"));
        assert!(text.contains("trawl_paused 1\n"));
        assert!(text.contains("trawl_responses_total{code=\"200\"} 7\n"));
        assert!(text.contains(r#"trawl_errors_total{kind="tls \"x\"\n"} 2"#));
        assert!(text.contains("trawl_hosts{state=\"given_up\"} 0\n"));
        // Every sample line is NAME[{LABELS}] VALUE.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<u64>().is_ok(), "{line}");
        }
    }
}
