//! Events from libyaml-safer into the [`Node`] tree.

use libyaml_safer::{EventData, MappingStyle, Parser, ScalarStyle as LyStyle, SequenceStyle};

use super::build::Builder;
use super::fast_parse;
use super::node::CollectionStyle;
use super::{Document, YamlError, YamlLimits};

/// Parses the first (and only) YAML document of `text`.
///
/// The text is the tree of an ASDF file: `%YAML 1.1`, any `%TAG` directives, `--- !tag`, the
/// content, `...`; unix or CRLF newlines. An empty stream gives a null root.
///
/// Semantics follow python asdf (PyYAML `SafeLoader` with libyaml):
/// - tags are stored as full URIs after `%TAG` expansion; YAML core tags (`!!str`, `!!int`,
///   `!!float`, `!!bool`, `!!null`, `!!binary`, `!!timestamp`, `!!seq`, `!!map`) only select
///   the type and are not stored; other tags (`!!omap`, `!!set`, `!!pairs`, custom) are kept.
///   A scalar with a kept tag is never resolved: its value is its text.
/// - a plain scalar, or any scalar with the non-specific tag `!`, is resolved by
///   [`resolve_plain`](super::resolve_plain); quoted and block scalars are strings.
/// - an alias is the anchored node itself ([`Node::ptr_eq`](super::Node::ptr_eq)); an alias
///   to a collection that is still open is a [`YamlError::RecursiveAlias`]; anchors may not
///   be redefined.
/// - merge keys `<<` are flattened like PyYAML's `flatten_mapping`, and duplicate keys keep
///   their first position with the value of their last occurrence (a Python `dict`).
/// - more than one document is [`YamlError::MultipleDocuments`].
///
/// Documents in the subset ASDF writers produce are read by a fast hand-written parser
/// (about 100 MB/s); anything else, and every error, goes through libyaml-safer's event
/// parser, so results and errors are libyaml's either way.
///
/// Known differences from python asdf, all outside what ASDF writers produce: sequences and
/// mappings are accepted as mapping keys (Python refuses them as unhashable); a tag directly
/// followed by `,` in flow context (`[!foo, 1]`) makes libyaml-safer 0.3 panic, which is
/// caught and reported as a [`YamlError::Syntax`]. Where panics abort (`panic = "abort"`),
/// such text is found before the parser runs and refused with the same error kind.
pub fn parse(text: &[u8], limits: &YamlLimits) -> Result<Document, YamlError> {
    let s = std::str::from_utf8(text).map_err(|e| YamlError::NotUtf8 {
        offset: e.valid_up_to() as u64,
    })?;
    if let Some(doc) = fast_parse::parse_fast(s, limits) {
        return Ok(doc);
    }
    parse_libyaml(text, limits)
}

/// [`parse`] through libyaml-safer's events only (the fast path skipped).
pub(super) fn parse_libyaml(text: &[u8], limits: &YamlLimits) -> Result<Document, YamlError> {
    if let Err(e) = std::str::from_utf8(text) {
        return Err(YamlError::NotUtf8 {
            offset: e.valid_up_to() as u64,
        });
    }
    // A block scalar at the very end without a line break makes libyaml-safer 0.3 panic.
    // A last line of blanks only is dropped (it is no content); after a last line with
    // content a line break is appended, and taken back from a block scalar ending there.
    let last_break = text.iter().rposition(|&c| c == b'\n' || c == b'\r');
    let last_line = &text[last_break.map_or(0, |p| p + 1)..];
    let owned;
    let (text, original_len) = if last_line.is_empty() {
        (text, text.len() as u64)
    } else if last_line.iter().all(|&c| c == b' ' || c == b'\t') {
        let cut = &text[..last_break.map_or(0, |p| p + 1)];
        (cut, cut.len() as u64)
    } else {
        let mut t = Vec::with_capacity(text.len() + 1);
        t.extend_from_slice(text);
        t.push(b'\n');
        owned = t;
        (&owned[..], text.len() as u64)
    };
    // libyaml-safer 0.3 panics on a tag directly followed by `,` in a flow collection.
    // Caught below; where panics abort (`panic = "abort"`), such text is refused before the
    // parser sees it, by a conservative scan that may also refuse some valid flow text.
    if cfg!(panic = "abort") {
        if let Some(offset) = tag_before_flow_comma(text) {
            let message = "a tag directly followed by ',' in a flow collection (write a \
                           space before the ',')";
            return Err(syntax_at(text, offset, message.into()));
        }
    }
    // libyaml-safer 0.3 still has a few panics on malformed input; turn them into errors.
    match catch_parser_panic(|| parse_events(text, original_len, limits)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(YamlError::Syntax {
                message: format!("yaml parser failure: {what}"),
                line: 0,
                column: 0,
                offset: 0,
            })
        }
    }
}

/// Runs the parser, catching its panics. Under libFuzzer (`--cfg fuzzing`), whose panic hook
/// aborts before any unwinding, a quiet hook stands in for the call, so fuzzing exercises
/// what every other build does: the panic becomes an error.
fn catch_parser_panic<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    if cfg!(fuzzing) {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        std::panic::set_hook(previous);
        result
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
    }
}

/// Where a tag token directly followed by `,` may sit inside a flow collection: the input
/// that makes libyaml-safer 0.3 panic. Conservative, so it may also report text that would
/// parse (refused only where panics abort): every `[` and `{` opens a flow level, every `!`
/// inside one may start a tag; only quoted scalars and comments that certainly are ones
/// (after a blank or a flow indicator) are skipped.
fn tag_before_flow_comma(text: &[u8]) -> Option<usize> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let after_blank = |i: usize| i == 0 || matches!(at(i - 1), b' ' | b'\t' | b'\n' | b'\r');
    // In a flow collection a line break ends nothing: only an indicator starts a node there.
    let node_start = |i: usize, depth: usize| {
        let blank = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
        let Some(j) = text[..i].iter().rposition(|&c| !blank(c)) else {
            return true;
        };
        let spaced = j + 1 < i;
        // the previous word: a tag or an anchor leaves the node to come
        let word = text[..=j]
            .iter()
            .rposition(|&c| blank(c))
            .map_or(0, |k| k + 1);
        match text[j] {
            b'[' | b'{' | b',' => true,
            // `-`, `?` and `:` are indicators only before a blank (`nan-'x` is a plain scalar)
            b'-' | b'?' | b':' => spaced,
            _ if spaced && matches!(text[word], b'!' | b'&') => true,
            // a line start outside flow collections starts a node
            _ => depth == 0 && text[j + 1..i].iter().any(|&c| matches!(c, b'\n' | b'\r')),
        }
    };
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match at(i) {
            // a comment runs to the line break, `\r` included
            b'#' if after_blank(i) => {
                while i < text.len() && !matches!(at(i), b'\n' | b'\r') {
                    i += 1;
                }
            }
            // A quote opens a quoted scalar only where a node starts: after an indicator or at
            // the start of the text, blanks between. Inside a plain scalar (`The "x`) it is
            // just a character.
            q @ (b'\'' | b'"') if node_start(i, depth) => {
                i += 1;
                while i < text.len() {
                    match at(i) {
                        b'\\' if q == b'"' => i += 1,
                        b'\'' if q == b'\'' && at(i + 1) == b'\'' => i += 1,
                        c if c == q => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'!' if depth > 0 => {
                let start = i;
                i += 1;
                if at(i) == b'<' {
                    while i < text.len() && at(i) != b'>' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    while at(i).is_ascii_alphanumeric() || b"-_;/?:@&=+$.!~*'()%".contains(&at(i)) {
                        i += 1;
                    }
                }
                if at(i) == b',' {
                    return Some(start);
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn parse_events(
    text: &[u8],
    original_len: u64,
    limits: &YamlLimits,
) -> Result<Document, YamlError> {
    let appended = original_len < text.len() as u64;
    let mut input = text;
    let mut parser = Parser::new();
    parser.set_input_string(&mut input);
    let mut b = Builder::new(limits);
    let mut version = None;
    let mut tag_directives = Vec::new();
    let mut seen_document = false;
    loop {
        let event = parser.parse().map_err(|e| syntax_error(&e, text))?;
        let line = event.start_mark.line.saturating_add(1);
        match event.data {
            EventData::StreamStart { .. } | EventData::DocumentEnd { .. } => {}
            EventData::StreamEnd => break,
            EventData::DocumentStart {
                version_directive,
                tag_directives: directives,
                ..
            } => {
                if seen_document {
                    return Err(YamlError::MultipleDocuments { line });
                }
                seen_document = true;
                version = version_directive.and_then(|v| {
                    Some((u32::try_from(v.major).ok()?, u32::try_from(v.minor).ok()?))
                });
                tag_directives = directives
                    .into_iter()
                    .map(|d| (d.handle, d.prefix))
                    .collect();
            }
            EventData::Alias { anchor } => b.alias(anchor, line)?,
            EventData::Scalar {
                anchor,
                tag,
                mut value,
                style,
                plain_implicit,
                ..
            } => {
                if appended
                    && matches!(style, LyStyle::Literal | LyStyle::Folded)
                    && event.end_mark.index >= original_len
                    && value.ends_with('\n')
                {
                    value.pop();
                }
                b.scalar(anchor, tag, value, style, plain_implicit, line)?;
            }
            EventData::SequenceStart {
                anchor, tag, style, ..
            } => {
                let style = match style {
                    SequenceStyle::Flow => CollectionStyle::Flow,
                    _ => CollectionStyle::Block,
                };
                b.start(true, anchor, tag, style, line)?;
            }
            EventData::MappingStart {
                anchor, tag, style, ..
            } => {
                let style = match style {
                    MappingStyle::Flow => CollectionStyle::Flow,
                    _ => CollectionStyle::Block,
                };
                b.start(false, anchor, tag, style, line)?;
            }
            EventData::SequenceEnd | EventData::MappingEnd => b.end(line)?,
        }
    }
    Ok(Document {
        version,
        tag_directives,
        root: b.finish(),
    })
}

/// Converts a libyaml error into [`YamlError::Syntax`] with a position.
fn syntax_error(e: &libyaml_safer::Error, text: &[u8]) -> YamlError {
    let mut message = e.problem().to_string();
    if let Some(ctx) = e.context().filter(|c| !c.is_empty()) {
        message.push(' ');
        message.push_str(ctx);
    }
    match e.problem_mark() {
        Some(m) => YamlError::Syntax {
            message,
            line: m.line.saturating_add(1),
            column: m.column.saturating_add(1),
            offset: m.index,
        },
        // Reader errors carry no mark: find the refused character ourselves.
        None => syntax_at(text, first_unprintable(text).unwrap_or(0), message),
    }
}

/// A syntax error at byte `offset` of `text`, with its line and column (in characters).
fn syntax_at(text: &[u8], offset: usize, message: String) -> YamlError {
    let before = text.get(..offset).unwrap_or_default();
    let line = before.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
    let line_start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    let column = std::str::from_utf8(before.get(line_start..).unwrap_or_default())
        .map_or(0, |s| s.chars().count()) as u64
        + 1;
    YamlError::Syntax {
        message,
        line,
        column,
        offset: offset as u64,
    }
}

/// Byte offset of the first character libyaml refuses as a control character.
fn first_unprintable(text: &[u8]) -> Option<usize> {
    let s = std::str::from_utf8(text).ok()?;
    s.char_indices()
        .find(|&(_, ch)| {
            !(ch == '\x09'
                || ch == '\x0A'
                || ch == '\x0D'
                || ('\x20'..='\x7E').contains(&ch)
                || ch == '\u{0085}'
                || ('\u{00A0}'..='\u{D7FF}').contains(&ch)
                || ('\u{E000}'..='\u{FFFD}').contains(&ch)
                || ch >= '\u{10000}')
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
