#!/usr/bin/env python3
"""scripts/search_check.py — reads a `trawl search-index` index with tantivy-py, a reader
independent of trawl's code, for tests/it/search.rs.

Usage: search_check.py INDEX [QUERY ...]

Prints one JSON object: "docs" (documents in the index), "urls" (the url field of every
document, sorted, repeats kept) and "queries" (for each QUERY, the urls of its hits, best first,
with every term required as trawl's own search does: title and text are the default fields).
"""
import json
import sys

import tantivy


def main() -> int:
    index_dir, queries = sys.argv[1], sys.argv[2:]
    index = tantivy.Index.open(index_dir)
    index.reload()
    searcher = index.searcher()
    everything = index.parse_query("*", ["title", "text"])
    hits = searcher.search(everything, limit=max(searcher.num_docs, 1)).hits
    urls = sorted(searcher.doc(address)["url"][0] for _, address in hits)
    answers = {}
    for q in queries:
        query = index.parse_query(q, ["title", "text"], field_boosts={"title": 2.0},
                                  conjunction_by_default=True)
        found = searcher.search(query, limit=100).hits
        answers[q] = [searcher.doc(address)["url"][0] for _, address in found]
    print(json.dumps({"docs": searcher.num_docs, "urls": urls, "queries": answers}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
