//! The text being built by the document reader (`document.rs`): whitespace runs collapsed to
//! one space (line breaks kept inside `pre`), block breaks as line breaks, words copied whole,
//! and a byte cap that stops it (marking it truncated).

/// Appends text with whitespace collapsed (outside `pre`) and a byte cap.
#[derive(Default)]
pub(super) struct TextBuffer {
    pub(super) out: String,
    /// A line break is owed before the next visible character.
    pending_break: bool,
    /// A space is owed before the next visible character.
    pending_space: bool,
    cap: usize,
    pub(super) truncated: bool,
}

impl TextBuffer {
    pub(super) fn with_cap(cap: usize) -> Self {
        TextBuffer {
            cap,
            ..TextBuffer::default()
        }
    }

    pub(super) fn block_break(&mut self) {
        if !self.out.is_empty() {
            self.pending_break = true;
        }
        self.pending_space = false;
    }

    /// Separates what follows from what came before on the same line (table cells).
    pub(super) fn space(&mut self) {
        if !self.out.is_empty() && !self.pending_break {
            self.pending_space = true;
        }
    }

    /// Appends `text`: whitespace runs become one space (a line break inside `pre` when they
    /// hold one), words are copied whole.
    pub(super) fn push(&mut self, text: &str, pre: bool) {
        let mut rest = text;
        while !rest.is_empty() && !self.truncated {
            let space_end = span(rest, true);
            if space_end > 0 {
                if pre && rest[..space_end].contains('\n') {
                    self.block_break();
                } else {
                    self.space();
                }
                rest = &rest[space_end..];
                continue;
            }
            let word_end = span(rest, false);
            self.push_word(&rest[..word_end]);
            rest = &rest[word_end..];
        }
    }

    fn push_word(&mut self, word: &str) {
        let sep = if self.pending_break {
            "\n"
        } else if self.pending_space {
            " "
        } else {
            ""
        };
        let room = self.cap.saturating_sub(self.out.len() + sep.len());
        let take = if word.len() <= room {
            word.len()
        } else {
            self.truncated = true;
            let mut end = room;
            while !word.is_char_boundary(end) {
                end -= 1;
            }
            end
        };
        if take == 0 {
            return;
        }
        self.out.push_str(sep);
        self.out.push_str(&word[..take]);
        self.pending_break = false;
        self.pending_space = false;
    }
}

/// The length of the leading run of `s` that is whitespace (`space`) or not: bytes for ASCII
/// (the common case, and the hot loop of text extraction), chars otherwise.
fn span(s: &str, space: bool) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (is_space, len) = if b < 0x80 {
            (matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c), 1)
        } else {
            let c = s[i..].chars().next().expect("char boundary");
            (c.is_whitespace(), c.len_utf8())
        };
        if is_space != space {
            return i;
        }
        i += len;
    }
    bytes.len()
}
