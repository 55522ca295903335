//! The search index's schema: one tantivy document per archived page, with the fields a hit
//! needs to lead back to its record. Field names are the contract other readers (tantivy-py,
//! Quickwit) query by, so they are spelled once, here.

use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, Schema, FAST, INDEXED, STORED, STRING, TEXT,
};

/// The fields of a page document.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// The captured URL, exact (one term).
    pub url: Field,
    /// Its host name, lower-cased, without the port (one term).
    pub host: Field,
    /// The page's title (tokenized).
    pub title: Field,
    /// The page's visible text (tokenized; stored for snippets).
    pub text: Field,
    /// The language identified (ISO 639-3), when reliable.
    pub language: Field,
    /// WARC-Date of the response.
    pub date: Field,
    /// HTTP status.
    pub status: Field,
    /// WARC-Payload-Digest.
    pub digest: Field,
    /// WARC-Record-ID of the response.
    pub record_id: Field,
    /// The name of the WARC file holding the record.
    pub warc_file: Field,
    /// The record's offset in that file (of its gzip member when gzipped).
    pub offset: Field,
}

impl Fields {
    /// The schema of a new index, and its fields.
    pub fn build() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let date = DateOptions::from(INDEXED)
            .set_stored()
            .set_fast()
            .set_precision(DateTimePrecision::Seconds);
        let fields = Fields {
            url: b.add_text_field("url", STRING | STORED),
            host: b.add_text_field("host", STRING | STORED | FAST),
            title: b.add_text_field("title", TEXT | STORED),
            text: b.add_text_field("text", TEXT | STORED),
            language: b.add_text_field("language", STRING | STORED),
            date: b.add_date_field("date", date),
            status: b.add_u64_field("status", INDEXED | STORED | FAST),
            digest: b.add_text_field("digest", STRING | STORED),
            record_id: b.add_text_field("record_id", STRING | STORED),
            warc_file: b.add_text_field("warc_file", STRING | STORED),
            offset: b.add_u64_field("offset", INDEXED | STORED),
        };
        (b.build(), fields)
    }

    /// The fields of an existing index; `None` when it lacks one (not a trawl index).
    pub fn of(schema: &Schema) -> Option<Fields> {
        let f = |name: &str| schema.get_field(name).ok();
        Some(Fields {
            url: f("url")?,
            host: f("host")?,
            title: f("title")?,
            text: f("text")?,
            language: f("language")?,
            date: f("date")?,
            status: f("status")?,
            digest: f("digest")?,
            record_id: f("record_id")?,
            warc_file: f("warc_file")?,
            offset: f("offset")?,
        })
    }
}
