//! Which HTML elements end a line of text (blocks), and which may stand in a head: the
//! lists the document reader asks.

/// Block-level elements: their start and end tags end a line of text.
pub(super) fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "br"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "legend"
            | "li"
            | "listing"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "option"
            | "p"
            | "pre"
            | "search"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "tfoot"
            | "thead"
            | "tr"
            | "ul"
            | "xmp"
            | "body"
            | "html"
            | "title"
    )
}

/// Elements that may appear in a head; any other start tag means the body has begun.
pub(super) fn is_head_element(name: &str) -> bool {
    matches!(
        name,
        "html"
            | "head"
            | "title"
            | "meta"
            | "link"
            | "script"
            | "style"
            | "base"
            | "noscript"
            | "template"
    )
}
