//! Events from libyaml-safer into the [`Node`] tree.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use libyaml_safer::{EventData, MappingStyle, Parser, ScalarStyle as LyStyle, SequenceStyle};

use super::fast_parse;
use super::hash::FastBuild;
use super::keys::KeyMemo;
use super::node::{CollectionStyle, Node, NodeData, ScalarStyle, Style, Value, YAML_TAG_PREFIX};
use super::resolve::{classify, construct_core, resolve_plain_owned, CoreScalar};
use super::shared::Arena;
use super::{Document, YamlError, YamlLimits};
use std::hash::BuildHasher;

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
/// - an alias is the anchored node itself ([`Node::ptr_eq`]); an alias to a collection that
///   is still open is a [`YamlError::RecursiveAlias`]; anchors may not be redefined.
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

const MERGE_TAG: &str = "tag:yaml.org,2002:merge";
const VALUE_TAG: &str = "tag:yaml.org,2002:value";

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

/// An anchor's state.
enum Anchor {
    /// The anchored collection is still open.
    Open,
    /// Finished: the node, its expanded size, whether it is a merge key.
    Done(Node, u64, bool),
}

/// An open sequence or mapping.
struct Frame {
    is_seq: bool,
    tag: Option<String>,
    anchor: Option<String>,
    style: CollectionStyle,
    line: u64,
    /// Nodes in the subtree, aliases expanded (saturating).
    size: u64,
    /// Where this collection's children start on the builder's shared item/pair stack.
    start: usize,
    /// A key waiting for its value, and whether it is a merge key.
    key: Option<(Node, bool)>,
    /// Pairs contributed by merge keys, in PyYAML's order.
    merged: Vec<(Node, Node)>,
    has_merge: bool,
}

pub(super) struct Builder<'l> {
    limits: &'l YamlLimits,
    stack: Vec<Frame>,
    /// Children of the open sequences, innermost last (one exact-size Vec per sequence).
    items: Vec<Node>,
    /// Entries of the open mappings, innermost last.
    pairs: Vec<(Node, Node)>,
    anchors: HashMap<String, Anchor>,
    alias_used: u64,
    root: Option<Node>,
    /// Plain scalars already built, shared by later occurrences of the same text.
    cache: ScalarCache,
    /// Key lists already checked for duplicates.
    keys: KeyMemo,
    /// One shared copy of each tag of the document.
    tags: HashSet<Arc<str>>,
    /// Where the document's nodes are allocated.
    arena: Arena<NodeData>,
}

/// Recently built plain scalars (no tag, no anchor) by their text, so a repeated key or value
/// is one shared node: mapping keys repeat across the records of a tree, and so do values
/// like `float64`, `little` or `true`. The tree is immutable, so the sharing shows only
/// through [`Node::ptr_eq`] (the emitter anchors a scalar only when it carries an anchor name).
///
/// Two-way set-associative: each text hashes to a pair of slots. A text is admitted on its
/// second occurrence: the first only leaves its hash in `seen`, so the many texts that occur
/// once (most numbers and names) never evict a repeated one, and storing them costs no node
/// handle. A new text takes an empty slot of its pair, else one not hit since the pair last
/// evicted (a clock bit); when both were hit, it is not stored and the round starts again,
/// so the keys that every record repeats stay. Memory is fixed (sized
/// by the document, at most [`CACHE_MAX_SLOTS`] slots) and chosen collisions only cause
/// misses.
///
/// Handles are counted with [`Node::clone_local`] (no atomic operation): every cached node
/// was built by the [`Builder`] that owns this cache, and the builder holds every handle to
/// its nodes (cache, open collections, anchors) on its own thread until the parse returns
/// the finished tree, when the cache is dropped.
#[derive(Default)]
struct ScalarCache {
    slots: Vec<Slot>,
    /// Hash tags of texts that missed, each at two places chosen by other bits of its hash
    /// (so two texts that keep alternating cannot keep erasing each other).
    seen: Vec<u32>,
    /// Slot count minus one, with the lowest bit clear: the first slot of a pair.
    mask: usize,
}

/// Most distinct tags shared per document; later ones are kept per node (a document of many
/// distinct tags gains nothing from the table).
const MAX_INTERNED_TAGS: usize = 4096;

/// The longest text that is cached.
const CACHE_TEXT: usize = 22;

/// Most slots a cache has (about 160 KiB, so it stays in the core's cache).
const CACHE_MAX_SLOTS: usize = 4096;

#[derive(Default, Clone)]
struct Slot {
    hash: u32,
    len: u8,
    /// Hit since its pair last evicted.
    recent: bool,
    text: [u8; CACHE_TEXT],
    node: Option<Node>,
}

impl Slot {
    fn holds(&self, tag: u32, t: &[u8]) -> Option<&Node> {
        self.node
            .as_ref()
            .filter(|_| self.hash == tag && self.text.get(..usize::from(self.len)) == Some(t))
    }
}

/// Where a text that missed the cache may go ([`ScalarCache::store`]).
struct Miss {
    pair: usize,
    tag: u32,
    seen: [usize; 2],
}

impl ScalarCache {
    /// A cache for a document of `len` bytes.
    fn for_text(len: usize) -> Self {
        let n = (len / 32).clamp(64, CACHE_MAX_SLOTS).next_power_of_two();
        ScalarCache {
            slots: vec![Slot::default(); n],
            seen: vec![0; n],
            mask: (n - 1) & !1,
        }
    }

    /// The cached node for `text`, or where a node for it may be stored: its pair, its
    /// hash tag and its two places in `seen`.
    fn find(&mut self, text: &str) -> Result<Node, Option<Miss>> {
        let t = text.as_bytes();
        if t.len() > CACHE_TEXT {
            return Err(None);
        }
        let h = FastBuild::default().hash_one(t);
        let i = (h as usize) & self.mask;
        let tag = (h >> 32) as u32;
        let Some([a, b]) = self.slots.get_mut(i..i + 2) else {
            return Err(None);
        };
        for slot in [a, b] {
            if let Some(n) = slot.holds(tag, t) {
                // SAFETY: see the type's docs: cached nodes are the builder's own.
                let n = unsafe { n.clone_local() };
                slot.recent = true;
                return Ok(n);
            }
        }
        let m = self.seen.len().wrapping_sub(1);
        Err(Some(Miss {
            pair: i,
            tag,
            seen: [(h >> 12) as usize & m, (h >> 24) as usize & m],
        }))
    }

    /// Keeps `node` for `text` if the text missed at this pair just before (its second
    /// occurrence); otherwise only notes the text as seen.
    fn store(&mut self, miss: Miss, text: &str, node: &Node) {
        let Miss { pair: i, tag, seen } = miss;
        if !seen.iter().any(|&p| self.seen.get(p) == Some(&tag)) {
            for p in seen {
                if let Some(s) = self.seen.get_mut(p) {
                    *s = tag;
                }
            }
            return;
        }
        let t = text.as_bytes();
        let (Some([a, b]), Ok(len)) = (self.slots.get_mut(i..i + 2), u8::try_from(t.len())) else {
            return;
        };
        let slot = if a.node.is_none() {
            a
        } else if b.node.is_none() {
            b
        } else if !a.recent {
            a
        } else if !b.recent {
            b
        } else {
            // both hit since the pair last evicted: keep them, and start a new round
            a.recent = false;
            b.recent = false;
            return;
        };
        let Some(dst) = slot.text.get_mut(..t.len()) else {
            return;
        };
        dst.copy_from_slice(t);
        slot.len = len;
        slot.hash = tag;
        slot.recent = false;
        // SAFETY: see the type's docs: cached nodes are the builder's own.
        slot.node = Some(unsafe { node.clone_local() });
    }
}

fn scalar_style(s: LyStyle) -> ScalarStyle {
    match s {
        LyStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        LyStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        LyStyle::Literal => ScalarStyle::Literal,
        LyStyle::Folded => ScalarStyle::Folded,
        _ => ScalarStyle::Plain,
    }
}

fn invalid_scalar(tag: &str, text: String, line: u64) -> YamlError {
    YamlError::InvalidScalar {
        tag: tag.to_string(),
        text,
        line,
    }
}

impl<'l> Builder<'l> {
    pub(super) fn new(limits: &'l YamlLimits) -> Self {
        Builder {
            limits,
            stack: Vec::new(),
            items: Vec::new(),
            pairs: Vec::new(),
            anchors: HashMap::new(),
            alias_used: 0,
            root: None,
            cache: ScalarCache::default(),
            keys: KeyMemo::default(),
            tags: HashSet::new(),
            arena: Arena::default(),
        }
    }

    /// Shares repeated plain scalars of a document of `len` bytes (see [`ScalarCache`]).
    pub(super) fn share_scalars(&mut self, len: usize) {
        self.cache = ScalarCache::for_text(len);
    }

    /// The finished root (null when there was none).
    pub(super) fn finish(self) -> Node {
        self.root.unwrap_or_else(|| Node::new(Value::Null))
    }

    fn check_anchor(&self, name: &str, line: u64) -> Result<(), YamlError> {
        if self.anchors.contains_key(name) {
            return Err(YamlError::DuplicateAnchor {
                name: name.to_string(),
                line,
            });
        }
        Ok(())
    }

    pub(super) fn scalar(
        &mut self,
        anchor: Option<String>,
        tag: Option<String>,
        text: String,
        style: LyStyle,
        plain_implicit: bool,
        line: u64,
    ) -> Result<(), YamlError> {
        if let Some(a) = &anchor {
            self.check_anchor(a, line)?;
        }
        // As PyYAML's CParser: no tag or `!`, and libyaml's plain-implicit flag (plain style,
        // or the `!` tag on a scalar with content).
        let implicit = plain_implicit && matches!(tag.as_deref(), None | Some("!"));
        let mut is_merge = false;
        let (tag, value) = if implicit {
            match text.as_str() {
                // PyYAML's merge and value resolvers: as keys they are handled by the
                // mapping, elsewhere they stay strings tagged with the resolved type.
                "<<" => {
                    is_merge = true;
                    (Some(MERGE_TAG.to_string()), Value::Str(text))
                }
                "=" => (Some(VALUE_TAG.to_string()), Value::Str(text)),
                _ => {
                    let value = resolve_plain_owned(text).map_err(|(e, text)| {
                        invalid_scalar(&format!("{YAML_TAG_PREFIX}{}", e.kind), text, line)
                    })?;
                    (None, value)
                }
            }
        } else {
            match tag {
                None => (None, Value::Str(text)),
                Some(t) if t == "!" => (None, Value::Str(text)),
                Some(t) => match t.strip_prefix(YAML_TAG_PREFIX) {
                    Some(suffix) => {
                        if let Some(kind) = CoreScalar::from_suffix(suffix) {
                            let value = construct_core(kind, text)
                                .map_err(|(_, text)| invalid_scalar(&t, text, line))?;
                            (None, value)
                        } else {
                            match suffix {
                                "seq" | "map" | "omap" | "pairs" | "set" => {
                                    return Err(YamlError::InvalidNode {
                                        tag: t,
                                        message: "a collection tag on a scalar".into(),
                                        line,
                                    })
                                }
                                "merge" => {
                                    is_merge = true;
                                    (Some(t), Value::Str(text))
                                }
                                _ => (Some(t), Value::Str(text)),
                            }
                        }
                    }
                    None => (Some(t), Value::Str(text)),
                },
            }
        };
        let data = NodeData {
            tag: tag.map(|t| self.intern_tag(t)),
            value,
            style: Style::Scalar(scalar_style(style)),
            anchor: anchor.clone().map(Box::new),
        };
        let node = Node::in_arena(&mut self.arena, data);
        if let Some(a) = anchor {
            self.anchors
                .insert(a, Anchor::Done(node.clone(), 1, is_merge));
        }
        self.push(node, 1, is_merge, line)
    }

    /// A plain scalar without tag or anchor (the common case; no copy unless a string).
    /// The document's shared copy of `tag`.
    fn intern_tag(&mut self, tag: String) -> Arc<str> {
        if let Some(t) = self.tags.get(tag.as_str()) {
            return t.clone();
        }
        let t: Arc<str> = tag.into();
        if self.tags.len() < MAX_INTERNED_TAGS {
            self.tags.insert(t.clone());
        }
        t
    }

    pub(super) fn plain(&mut self, text: &str) -> Result<(), YamlError> {
        if text == "<<" || text == "=" {
            return self.scalar(None, None, text.to_string(), LyStyle::Plain, true, 0);
        }
        let slot = match self.cache.find(text) {
            Ok(node) => return self.push(node, 1, false, 0),
            Err(slot) => slot,
        };
        let value = match classify(text) {
            Ok(Some(v)) => v,
            Ok(None) => Value::Str(text.to_string()),
            Err(_) => {
                return self.scalar(None, None, text.to_string(), LyStyle::Plain, true, 0);
            }
        };
        let data = NodeData {
            tag: None,
            value,
            style: Style::Scalar(ScalarStyle::Plain),
            anchor: None,
        };
        let node = Node::in_arena(&mut self.arena, data);
        if let Some(at) = slot {
            self.cache.store(at, text, &node);
        }
        self.push(node, 1, false, 0)
    }

    pub(super) fn alias(&mut self, name: String, line: u64) -> Result<(), YamlError> {
        let (node, size, is_merge) = match self.anchors.get(&name) {
            None => return Err(YamlError::UnknownAlias { name, line }),
            Some(Anchor::Open) => {
                let node = Node::new(Value::Recursive(name));
                return self.push(node, 1, false, line);
            }
            Some(Anchor::Done(node, size, is_merge)) => (node.clone(), *size, *is_merge),
        };
        self.alias_used = self.alias_used.saturating_add(size);
        if self.alias_used > self.limits.max_alias_expansion {
            return Err(YamlError::AliasBudgetExceeded {
                limit: self.limits.max_alias_expansion,
                line,
            });
        }
        self.push(node, size, is_merge, line)
    }

    pub(super) fn start(
        &mut self,
        is_seq: bool,
        anchor: Option<String>,
        tag: Option<String>,
        style: CollectionStyle,
        line: u64,
    ) -> Result<(), YamlError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(YamlError::DepthExceeded {
                limit: self.limits.max_depth,
                line,
            });
        }
        if let Some(a) = &anchor {
            self.check_anchor(a, line)?;
            self.anchors.insert(a.clone(), Anchor::Open);
        }
        self.stack.push(Frame {
            is_seq,
            tag,
            anchor,
            style,
            line,
            size: 1,
            start: if is_seq {
                self.items.len()
            } else {
                self.pairs.len()
            },
            key: None,
            merged: Vec::new(),
            has_merge: false,
        });
        Ok(())
    }

    pub(super) fn end(&mut self, line: u64) -> Result<(), YamlError> {
        let Some(f) = self.stack.pop() else {
            return Err(YamlError::Syntax {
                message: "unbalanced collection end".into(),
                line,
                column: 0,
                offset: 0,
            });
        };
        let value = if f.is_seq {
            Value::Seq(self.items.split_off(f.start.min(self.items.len())))
        } else {
            let mut pairs = if f.has_merge {
                let mut m = f.merged;
                m.extend(self.pairs.drain(f.start.min(self.pairs.len())..));
                m
            } else {
                self.pairs.split_off(f.start.min(self.pairs.len()))
            };
            self.keys.dedupe(&mut pairs);
            Value::Map(pairs)
        };
        let tag = collection_tag(f.tag, &value, f.line)?;
        let data = NodeData {
            tag: tag.map(|t| self.intern_tag(t)),
            value,
            style: Style::Collection(f.style),
            anchor: f.anchor.clone().map(Box::new),
        };
        let node = Node::in_arena(&mut self.arena, data);
        if let Some(a) = f.anchor {
            self.anchors
                .insert(a, Anchor::Done(node.clone(), f.size, false));
        }
        self.push(node, f.size, false, f.line)
    }

    /// Adds a finished node to the open collection (or makes it the root).
    fn push(&mut self, node: Node, size: u64, is_merge: bool, line: u64) -> Result<(), YamlError> {
        let Some(f) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        f.size = f.size.saturating_add(size);
        if f.is_seq {
            self.items.push(node);
            return Ok(());
        }
        match f.key.take() {
            None => {
                // PyYAML's flatten_mapping turns `=` (value) keys into plain strings.
                let node = if node.tag() == Some(VALUE_TAG) {
                    let d = node.data();
                    Node::from(NodeData {
                        tag: None,
                        value: d.value.clone(),
                        style: d.style,
                        anchor: d.anchor.clone(),
                    })
                } else {
                    node
                };
                f.key = Some((node, is_merge));
            }
            Some((key, false)) => self.pairs.push((key, node)),
            Some((_, true)) => {
                f.has_merge = true;
                match node.value() {
                    Value::Map(pairs) => f.merged.extend(pairs.iter().cloned()),
                    Value::Seq(items) => {
                        for item in items.iter().rev() {
                            match item.value() {
                                Value::Map(pairs) => f.merged.extend(pairs.iter().cloned()),
                                _ => return Err(YamlError::InvalidMerge { line }),
                            }
                        }
                    }
                    _ => return Err(YamlError::InvalidMerge { line }),
                }
            }
        }
        Ok(())
    }
}

/// Applies a collection's tag: YAML core tags are checked and dropped, others kept.
fn collection_tag(
    tag: Option<String>,
    value: &Value,
    line: u64,
) -> Result<Option<String>, YamlError> {
    let Some(t) = tag else { return Ok(None) };
    if t == "!" {
        return Ok(None);
    }
    let Some(suffix) = t.strip_prefix(YAML_TAG_PREFIX) else {
        return Ok(Some(t));
    };
    let is_seq = matches!(value, Value::Seq(_));
    let bad = |message: &str| YamlError::InvalidNode {
        tag: t.clone(),
        message: message.to_string(),
        line,
    };
    match suffix {
        "seq" if is_seq => Ok(None),
        "map" if !is_seq => Ok(None),
        "seq" => Err(bad("expected a sequence, found a mapping")),
        "map" => Err(bad("expected a mapping, found a sequence")),
        "set" if is_seq => Err(bad("expected a mapping, found a sequence")),
        "omap" | "pairs" => {
            let Value::Seq(items) = value else {
                return Err(bad("expected a sequence, found a mapping"));
            };
            if items
                .iter()
                .all(|i| matches!(i.value(), Value::Map(p) if p.len() == 1))
            {
                Ok(Some(t))
            } else {
                Err(bad("expected a sequence of one-pair mappings"))
            }
        }
        s if CoreScalar::from_suffix(s).is_some() => Err(bad("a scalar tag on a collection")),
        _ => Ok(Some(t)),
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
