//! Writing a [`Node`] tree as the YAML 1.1 text of an ASDF tree.
//!
//! See [`emit`].

use crate::floats;
use std::collections::HashMap;
use std::fmt::Write as _;

use super::hash::IdBuild;
use super::node::{
    CollectionStyle, Integer, Node, ScalarStyle, Style, Timestamp, Value, ASDF_TAG_PREFIX,
    YAML_TAG_PREFIX,
};
use super::resolve::resolve_plain_owned;
use super::timestamp::timestamp_canonical;

/// Options of [`emit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitOptions {
    /// `%TAG` handles as `(handle, prefix)`, e.g. `("!", "tag:stsci.edu:asdf/")`,
    /// `("!ex!", "asdf://example.org/tags/")`. Tags are shortened with the handle whose
    /// prefix is longest; a directive is written for the `!` handle always and for the
    /// others when a tag uses them. The YAML `!!` handle (`tag:yaml.org,2002:`) is implicit.
    /// Default: `!` for the ASDF standard's tags.
    pub tag_handles: Vec<(String, String)>,
    /// Sequences with no style hint whose items are all scalars are written in flow style
    /// (`[1, 2, 3]`) when they have at most this many items. Default: unlimited, as python
    /// asdf does.
    pub flow_seq_max_items: usize,
    /// Flow collections break lines after a `,` once a line is longer than this (PyYAML's
    /// `width`). `0` never breaks. Default 80.
    pub width: usize,
    /// Deepest nesting of sequences and mappings written (the default matches
    /// [`YamlLimits::max_depth`](super::YamlLimits::max_depth)). Default 1000.
    pub max_depth: usize,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            tag_handles: vec![("!".to_string(), ASDF_TAG_PREFIX.to_string())],
            flow_seq_max_items: usize::MAX,
            width: 80,
            max_depth: 1000,
        }
    }
}

/// Errors of [`emit`]. Paths are JSON pointers into the tree (`/a/0`).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// A `%TAG` handle or prefix that YAML cannot express, or a handle given twice.
    #[error("invalid tag directive {handle:?} {prefix:?}")]
    InvalidTagDirective {
        /// The handle.
        handle: String,
        /// The prefix.
        prefix: String,
    },
    /// A tag that cannot be written so that it reads back: empty, the non-specific `!`, or a
    /// YAML core scalar type (`tag:yaml.org,2002:str`, …) that a tree keeps as a value type.
    #[error("tag {tag:?} cannot be written (at \"{path}\")")]
    InvalidTag {
        /// The tag.
        tag: String,
        /// Where the node is.
        path: super::TreePath,
    },
    /// An [`Integer::Big`] whose text is not an integer in decimal without leading zeros.
    #[error("malformed big integer {text:?} (at \"{path}\")")]
    InvalidInteger {
        /// The text.
        text: String,
        /// Where the node is.
        path: super::TreePath,
    },
    /// A [`Value::Recursive`] whose anchor is not on an enclosing node of the tree.
    #[error("recursive alias *{name} has no enclosing node with that anchor (at \"{path}\")")]
    Recursive {
        /// The anchor the alias names.
        name: String,
        /// Where the node is.
        path: super::TreePath,
    },
    /// Sequences and mappings nest deeper than [`EmitOptions::max_depth`].
    #[error("tree nesting deeper than {limit} (at \"{path}\")")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// The first collection too deep.
        path: super::TreePath,
    },
}

/// Writes `root` as a whole YAML document: `%YAML 1.1`, `%TAG` directives, `--- ` with the
/// root, the body, `...` and a final newline (the `#ASDF` header lines are not included).
/// Errors name the offending node.
///
/// The output reads back through [`parse`](super::parse) to an equal tree (tags,
/// values, shared identity of nodes that occur more than once) and means the same to PyYAML's
/// `SafeLoader` (python asdf):
/// - a string is written plain only when the YAML 1.1 resolver reads the plain text back as
///   that same string (`'yes'`, `'017'`, `'1:30'`, `'2024-01-01'`, `'null'`, `''` are quoted);
///   strings with control characters, tabs or unusual line breaks are double quoted with
///   escapes; multi-line strings use a literal block (`|`, `|-`, `|+`) when that is exact;
/// - floats are written as Python's `repr` with the PyYAML touches (`1.0e+16`, `.nan`,
///   `-.inf`), so they resolve as floats again and give the same `f64`;
/// - a collection that occurs more than once gets `&id001` at its first occurrence and
///   `*id001` after, numbered in document order; so does a scalar that occurs more than once
///   and carries an anchor name ([`NodeData::anchor`](crate::yaml::NodeData::anchor), as an anchored scalar read from a file
///   does). Other scalars are written in full at each occurrence, as PyYAML writes strings and
///   numbers (the parser shares repeated plain scalars, and that sharing is not written);
/// - tags are written as the shortest shorthand over the given `%TAG` handles, or verbatim
///   (`!<uri>`), percent-escaping characters a tag cannot hold;
/// - collections are block style (sequences in mappings at the key's indentation, as PyYAML
///   writes them), except empty ones, sequences of scalars (`shape: [2, 3]`, up to
///   [`EmitOptions::flow_seq_max_items`]) and nodes whose style hint is flow; flow
///   collections wrap after a `,` past [`EmitOptions::width`]; a block hint is kept;
/// - mapping keys keep their order; non-string scalar keys are plain (`1: a`, `null: b`),
///   collection keys and very long keys use the explicit `? ` form.
///
/// ```
/// use asdf_core::yaml::{emit, parse, EmitOptions, Integer, Node, Value, YamlLimits};
/// let root = Node::tagged(
///     "tag:stsci.edu:asdf/core/asdf-1.1.0",
///     Value::Map(vec![
///         (Node::str("ok"), Node::str("yes")),
///         (Node::str("n"), Node::new(Value::Int(Integer::Small(17)))),
///     ]),
/// );
/// let text = emit(&root, &EmitOptions::default())?;
/// assert_eq!(
///     text,
///     "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nok: 'yes'\nn: 17\n...\n"
/// );
/// assert_eq!(parse(text.as_bytes(), &YamlLimits::default()).unwrap().root, root);
/// # Ok::<(), asdf_core::yaml::EmitError>(())
/// ```
///
/// A scalar carrying a tag is written as its text after the tag; reading it back gives a
/// [`Value::Str`] with that tag (that is how tagged scalars are represented).
pub fn emit(root: &Node, opts: &EmitOptions) -> Result<String, EmitError> {
    let handles = check_handles(&opts.tag_handles)?;
    let mut by_len: Vec<usize> = (0..handles.len()).collect();
    by_len.sort_by(|&a, &b| handles[b].prefix.len().cmp(&handles[a].prefix.len()));
    let mut e = Emitter {
        out: String::new(),
        line_start: 0,
        opts,
        width: if opts.width == 0 {
            usize::MAX
        } else {
            opts.width
        },
        depth: 0,
        optimistic: Some(Census::default()),
        shared: IdMap::default(),
        recursive: HashMap::new(),
        next_anchor: 0,
        handles,
        by_len,
        scratch: String::new(),
    };
    // The directives of every handle that may be used; corrected at the end if some are not
    // (so the usual document is written once, with no copy).
    e.header(false);
    // Usually no node occurs twice: one pass writes the text while noting every node, and a
    // check of the scalar addresses confirms it. Otherwise a counting walk finds the shared
    // nodes first and a second pass writes anchors and aliases.
    let guessed = e.out.len();
    let fast = match e.document(root) {
        Ok(()) => {
            let census = e.optimistic.take().unwrap_or_default();
            all_distinct(census.scalars)
        }
        Err(Stop::Shared) => false,
        Err(Stop::Error(err, id)) => return Err(locate(root, err, id)),
    };
    if !fast {
        e.out.truncate(guessed);
        e.depth = 0;
        e.optimistic = None;
        let mut census = Census::default();
        let counted = e.count(root, 0, &mut census).and_then(|()| {
            e.find_shared(census);
            e.document(root)
        });
        match counted {
            Ok(()) => {}
            Err(Stop::Error(err, id)) => return Err(locate(root, err, id)),
            // Not raised once the shared nodes are known.
            Err(Stop::Shared) => {}
        }
    }
    if e.handles
        .iter()
        .any(|h| !h.implicit && h.handle != "!" && !h.used)
    {
        let body = e.out.split_off(guessed);
        e.out.clear();
        e.header(true);
        e.out.push_str(&body);
    }
    Ok(e.out)
}

/// Whether the addresses are all different. Node addresses of one tree usually lie in a
/// small range: one bit per possible address (at the granularity all of them share) over
/// that range finds a repeat in one pass; a wide range falls back to sorting.
fn all_distinct(mut v: Vec<usize>) -> bool {
    let (Some(&min), Some(&max)) = (v.iter().min(), v.iter().max()) else {
        return true;
    };
    let spread = v.iter().fold(0usize, |acc, &x| acc | (x - min));
    if spread == 0 {
        return v.len() < 2;
    }
    let shift = spread.trailing_zeros();
    let words = ((max - min) >> shift) / 64 + 1;
    if words / 4 > v.len().max(1 << 16) {
        v.sort_unstable();
        return v.windows(2).all(|w| w[0] != w[1]);
    }
    let mut bits = vec![0u64; words];
    for &x in &v {
        let i = (x - min) >> shift;
        let Some(word) = bits.get_mut(i / 64) else {
            return false;
        };
        let bit = 1u64 << (i % 64);
        if *word & bit != 0 {
            return false;
        }
        *word |= bit;
    }
    true
}

/// Fills in the path of the node an error is about.
fn locate(root: &Node, err: EmitError, id: usize) -> EmitError {
    let mut found = None;
    root.walk(|p, n| {
        if found.is_none() && n.id() == id {
            found = Some(super::TreePath::parse(p));
        }
    });
    let p = found.unwrap_or_default();
    match err {
        EmitError::InvalidTag { tag, .. } => EmitError::InvalidTag { tag, path: p },
        EmitError::InvalidInteger { text, .. } => EmitError::InvalidInteger { text, path: p },
        EmitError::TooDeep { limit, .. } => EmitError::TooDeep { limit, path: p },
        EmitError::Recursive { name, .. } => EmitError::Recursive { name, path: p },
        other => other,
    }
}

/// Nodes seen: occurrences of every collection, addresses of every scalar occurrence
/// (sorted afterwards to find repeats: cheaper than hashing each one).
#[derive(Default)]
struct Census {
    collections: IdMap,
    scalars: Vec<usize>,
}

type IdMap = HashMap<usize, Seen, IdBuild>;

/// How often a node occurs, and its anchor number once written.
#[derive(Default, Clone, Copy)]
struct Seen {
    count: u32,
    anchor: u32,
}

struct Handle {
    handle: String,
    prefix: String,
    used: bool,
    /// The default `!!` handle, written without a directive.
    implicit: bool,
}

fn valid_handle(h: &str) -> bool {
    if h == "!" || h == "!!" {
        return true;
    }
    let Some(mid) = h.strip_prefix('!').and_then(|r| r.strip_suffix('!')) else {
        return false;
    };
    !mid.is_empty()
        && mid
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// Characters kept as they are in a verbatim tag or `%TAG` prefix (libyaml's URI set).
fn uri_char(c: u8) -> bool {
    suffix_char(c) || matches!(c, b',' | b'!' | b'[' | b']')
}

/// Characters kept as they are in a shorthand tag's suffix.
fn suffix_char(c: u8) -> bool {
    // the characters the scanner reads in a tag's suffix
    super::fast_parse::is_uri(c)
}

fn check_handles(given: &[(String, String)]) -> Result<Vec<Handle>, EmitError> {
    let mut out: Vec<Handle> = Vec::with_capacity(given.len() + 1);
    for (handle, prefix) in given {
        let bad = || EmitError::InvalidTagDirective {
            handle: handle.clone(),
            prefix: prefix.clone(),
        };
        if !valid_handle(handle)
            || prefix.is_empty()
            || !prefix.bytes().all(|c| uri_char(c) || c == b'%')
            || out.iter().any(|h| &h.handle == handle)
        {
            return Err(bad());
        }
        out.push(Handle {
            handle: handle.clone(),
            prefix: prefix.clone(),
            used: false,
            implicit: handle == "!!" && prefix == YAML_TAG_PREFIX,
        });
    }
    if !out.iter().any(|h| h.handle == "!!") {
        out.push(Handle {
            handle: "!!".into(),
            prefix: YAML_TAG_PREFIX.into(),
            used: false,
            implicit: true,
        });
    }
    Ok(out)
}

/// Why a pass stopped.
enum Stop {
    /// An error (with an empty path) and the node it is about.
    Error(EmitError, usize),
    /// The optimistic pass met a collection a second time.
    Shared,
}

type R = Result<(), Stop>;

struct Emitter<'o> {
    out: String,
    /// Byte index in `out` where the current line starts.
    line_start: usize,
    opts: &'o EmitOptions,
    width: usize,
    /// Collections open around the current node.
    depth: usize,
    /// In the optimistic pass, every node seen so far.
    optimistic: Option<Census>,
    /// Nodes that occur more than once (after the counting walk).
    shared: IdMap,
    /// Anchor names that [`Value::Recursive`] nodes refer to, with the anchor number given
    /// to the enclosing node once it is written (0 before).
    recursive: HashMap<String, u32>,
    next_anchor: u32,
    /// In the order given (the order of the directives).
    handles: Vec<Handle>,
    /// Indices into `handles`, longest prefix first: the first match is the shortest
    /// shorthand.
    by_len: Vec<usize>,
    scratch: String,
}

/// Analysis of a string for the scalar styles (after PyYAML's `analyze_scalar`).
#[derive(Clone, Copy)]
struct Analysis {
    plain_block: bool,
    plain_flow: bool,
    /// Single-quoted on one line.
    single: bool,
    /// Literal block scalar.
    literal: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            plain_block: false,
            plain_flow: false,
            single: true,
            literal: false,
        };
    }
    let b = s.as_bytes();
    // The usual key or word (`datatype`, `float64`, `obj_12.b-c/d`): nothing to look at.
    if (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/'))
    {
        return Analysis {
            plain_block: true,
            plain_flow: true,
            single: true,
            literal: true,
        };
    }
    let mut block_ind = false;
    let mut flow_ind = false;
    if s.starts_with("---") || s.starts_with("...") {
        block_ind = true;
        flow_ind = true;
    }
    let mut special = false;
    let mut line_breaks = false;
    let mut space_break = false;
    let mut prev_space = false;
    let mut prev_ws = true;
    let leading_space = b[0] == b' ';
    let trailing_space = b[b.len() - 1] == b' ';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            let next_ws = matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\r' | b'\n' | 0));
            if i == 0 {
                match c {
                    b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                    | b'\'' | b'"' | b'%' | b'@' | b'`' => {
                        block_ind = true;
                        flow_ind = true;
                    }
                    b'?' | b':' => {
                        flow_ind = true;
                        block_ind |= next_ws;
                    }
                    b'-' if next_ws => {
                        block_ind = true;
                        flow_ind = true;
                    }
                    _ => {}
                }
            } else {
                match c {
                    b',' | b'?' | b'[' | b']' | b'{' | b'}' => flow_ind = true,
                    b':' => {
                        flow_ind = true;
                        block_ind |= next_ws;
                    }
                    b'#' if prev_ws => {
                        block_ind = true;
                        flow_ind = true;
                    }
                    _ => {}
                }
            }
            match c {
                b'\n' => {
                    line_breaks = true;
                    space_break |= prev_space;
                }
                b' '..=b'~' => {}
                _ => special = true,
            }
            prev_space = c == b' ';
            prev_ws = matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0);
            i += 1;
        } else {
            let ch = s[i..].chars().next().unwrap_or('\u{FFFD}');
            let cp = ch as u32;
            let printable = ((0xA0..=0xD7FF).contains(&cp) && cp != 0x2028 && cp != 0x2029)
                || ((0xE000..=0xFFFD).contains(&cp) && cp != 0xFEFF)
                || cp >= 0x1_0000;
            special |= !printable;
            prev_space = false;
            prev_ws = matches!(cp, 0x85 | 0x2028 | 0x2029);
            i += ch.len_utf8();
        }
    }
    let plain = !special && !line_breaks && !leading_space && !trailing_space;
    Analysis {
        plain_block: plain && !block_ind,
        plain_flow: plain && !flow_ind,
        single: !special && !line_breaks,
        literal: !special && !trailing_space && !space_break,
    }
}

/// Whether the plain text `s` reads back (YAML 1.1, PyYAML `SafeLoader`) as the string `s`.
fn resolves_as_str(s: &str) -> bool {
    match s.as_bytes().first() {
        None => false,
        // The YAML 1.1 bool and null words (what `resolve_plain` matches for these first
        // characters), checked without allocating.
        Some(b'~' | b'n' | b'N' | b'y' | b'Y' | b't' | b'T' | b'f' | b'F' | b'o' | b'O') => {
            !matches!(
                s,
                "~" | "null"
                    | "Null"
                    | "NULL"
                    | "yes"
                    | "Yes"
                    | "YES"
                    | "no"
                    | "No"
                    | "NO"
                    | "true"
                    | "True"
                    | "TRUE"
                    | "false"
                    | "False"
                    | "FALSE"
                    | "on"
                    | "On"
                    | "ON"
                    | "off"
                    | "Off"
                    | "OFF"
            )
        }
        // Numbers, timestamps: ask the resolver (which also refuses `2001-02-30`, `0x_`).
        Some(b'0'..=b'9' | b'-' | b'+' | b'.') => {
            matches!(resolve_plain_owned(s.to_string()), Ok(Value::Str(_)))
        }
        // The merge key and PyYAML's `value` type (which SafeLoader cannot construct).
        Some(b'<' | b'=') => s != "<<" && s != "=",
        Some(_) => true,
    }
}

/// Where a scalar goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// A block value (literal blocks allowed); the enclosing block collection's column.
    Block(usize),
    /// Inside a flow collection.
    Flow,
    /// A simple key of a block mapping.
    BlockKey,
}

impl Ctx {
    fn flow(self) -> bool {
        self == Ctx::Flow
    }
}

const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";

fn valid_big(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
}

fn push_u64(out: &mut String, v: u64) {
    let mut buf = [0u8; 20];
    out.push_str(crate::floats::u64_digits(v, &mut buf));
}

fn push_single_quoted(out: &mut String, s: &str) {
    out.push('\'');
    let mut rest = s;
    while let Some(p) = rest.find('\'') {
        out.push_str(&rest[..=p]);
        out.push('\'');
        rest = &rest[p + 1..];
    }
    out.push_str(rest);
    out.push('\'');
}

fn push_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        let cp = ch as u32;
        let esc: Option<&str> = match ch {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\0' => Some("\\0"),
            '\x07' => Some("\\a"),
            '\x08' => Some("\\b"),
            '\t' => Some("\\t"),
            '\n' => Some("\\n"),
            '\x0b' => Some("\\v"),
            '\x0c' => Some("\\f"),
            '\r' => Some("\\r"),
            '\x1b' => Some("\\e"),
            '\u{85}' => Some("\\N"),
            '\u{2028}' => Some("\\L"),
            '\u{2029}' => Some("\\P"),
            ' '..='~' => continue,
            _ => {
                let printable = (0xA0..=0xD7FF).contains(&cp)
                    || ((0xE000..=0xFFFD).contains(&cp) && cp != 0xFEFF)
                    || cp >= 0x1_0000;
                if printable {
                    continue;
                }
                None
            }
        };
        out.push_str(&s[start..i]);
        start = i + ch.len_utf8();
        match esc {
            Some(e) => out.push_str(e),
            None if cp <= 0xFF => {
                let _ = write!(out, "\\x{cp:02X}");
            }
            None => {
                let _ = write!(out, "\\u{cp:04X}");
            }
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends `s`, percent-escaping every byte `keep` refuses (and `%` itself).
fn push_uri(out: &mut String, s: &str, keep: impl Fn(u8) -> bool) {
    if s.bytes().all(&keep) {
        out.push_str(s);
        return;
    }
    for &c in s.as_bytes() {
        if keep(c) {
            out.push(c as char);
        } else {
            let _ = write!(out, "%{c:02X}");
        }
    }
}

/// Reads a node's data ahead of its turn, so the memory access overlaps the work on the
/// node before it (a large tree does not fit in the caches).
#[inline]
fn touch(n: &Node) {
    std::hint::black_box(n.tag().is_some());
}

fn is_collection(n: &Node) -> bool {
    matches!(n.value(), Value::Seq(_) | Value::Map(_))
}

impl Emitter<'_> {
    /// Counts occurrences of every node (descending once per node), checks depth, and marks
    /// the tag handles the document will use.
    fn count(&mut self, node: &Node, depth: usize, census: &mut Census) -> R {
        match node.value() {
            Value::Seq(_) | Value::Map(_) => {
                let seen = census.collections.entry(node.id()).or_default();
                seen.count = seen.count.saturating_add(1);
                if seen.count > 1 {
                    return Ok(());
                }
            }
            Value::Binary(_) if node.tag().is_none() => self.mark_handle(BINARY_TAG),
            Value::Timestamp(_) if node.tag().is_none() => self.mark_handle(TIMESTAMP_TAG),
            Value::Recursive(name) => {
                self.recursive.entry(name.clone()).or_insert(0);
            }
            _ => {}
        }
        if let Some(tag) = node.tag() {
            self.mark_handle(tag);
        }
        match node.value() {
            Value::Seq(items) => {
                self.check_depth(node, depth)?;
                for item in items {
                    self.count(item, depth + 1, census)?;
                }
            }
            Value::Map(pairs) => {
                self.check_depth(node, depth)?;
                for (k, v) in pairs {
                    self.count(k, depth + 1, census)?;
                    self.count(v, depth + 1, census)?;
                }
            }
            // only scalars with an anchor name take part in sharing (see `emit`)
            _ if node.anchor().is_some() => census.scalars.push(node.id()),
            _ => {}
        }
        Ok(())
    }

    /// Keeps the nodes that occur more than once.
    fn find_shared(&mut self, census: Census) {
        let Census {
            collections,
            mut scalars,
        } = census;
        self.shared
            .extend(collections.into_iter().filter(|(_, s)| s.count > 1));
        scalars.sort_unstable();
        for run in scalars.chunk_by(|a, b| a == b) {
            if run.len() > 1 {
                self.shared.insert(
                    run[0],
                    Seen {
                        count: u32::try_from(run.len()).unwrap_or(u32::MAX),
                        anchor: 0,
                    },
                );
            }
        }
        let estimate = scalars.len().saturating_mul(20).saturating_add(256);
        self.out.reserve(estimate);
    }

    /// The handle (index) and suffix a tag is written with, if any.
    fn shorthand<'t>(&self, tag: &'t str) -> Option<(usize, &'t str)> {
        self.by_len.iter().find_map(|&i| {
            let h = self.handles.get(i)?;
            let suffix = tag.strip_prefix(h.prefix.as_str())?;
            (!suffix.is_empty()).then_some((i, suffix))
        })
    }

    fn mark_handle(&mut self, tag: &str) {
        if let Some((i, _)) = self.shorthand(tag) {
            if let Some(h) = self.handles.get_mut(i) {
                h.used = true;
            }
        }
    }

    fn check_depth(&self, node: &Node, depth: usize) -> R {
        if depth >= self.opts.max_depth {
            return Err(Stop::Error(
                EmitError::TooDeep {
                    limit: self.opts.max_depth,
                    path: super::TreePath::root(),
                },
                node.id(),
            ));
        }
        Ok(())
    }

    /// Writes `%YAML 1.1` and the `%TAG` directives: the `!` handle's and those of the other
    /// handles, all of them or (`only_used`) those marked used.
    fn header(&mut self, only_used: bool) {
        self.out.push_str("%YAML 1.1\n");
        for h in &self.handles {
            if h.handle == "!" || (!h.implicit && (h.used || !only_used)) {
                let _ = writeln!(self.out, "%TAG {} {}", h.handle, h.prefix);
            }
        }
    }

    /// Enters a collection's content, checking the depth.
    fn enter(&mut self, node: &Node) -> R {
        if self.depth >= self.opts.max_depth {
            return Err(Stop::Error(
                EmitError::TooDeep {
                    limit: self.opts.max_depth,
                    path: super::TreePath::root(),
                },
                node.id(),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn newline(&mut self, indent: usize) {
        const SPACES: &str = "                                                                ";
        self.out.push('\n');
        self.line_start = self.out.len();
        let mut left = indent;
        while left > 0 {
            let n = left.min(SPACES.len());
            self.out.push_str(&SPACES[..n]);
            left -= n;
        }
    }

    fn column(&self) -> usize {
        self.out.len() - self.line_start
    }

    fn document(&mut self, root: &Node) -> R {
        self.line_start = self.out.len();
        self.out.push_str("---");
        // The root is the first node written: never an alias.
        self.props(root, true)?;
        if is_collection(root) && !self.use_flow(root) {
            self.enter(root)?;
            match root.value() {
                Value::Map(pairs) => self.block_map(pairs, 0, false)?,
                Value::Seq(items) => self.block_seq(items, 0, false)?,
                _ => {}
            }
            self.depth -= 1;
        } else {
            self.out.push(' ');
            self.content(root, Ctx::Block(0), 2)?;
        }
        self.out.push_str("\n...\n");
        Ok(())
    }

    /// Writes ` &idNNN` / ` !tag` (each with a leading space, except the first when not
    /// `lead`) or ` *idNNN` for a repeated node. Returns whether the node was an alias
    /// (nothing more to write).
    fn props(&mut self, node: &Node, lead: bool) -> Result<bool, Stop> {
        let mut space = lead;
        if let Some(census) = &mut self.optimistic {
            if is_collection(node) {
                let seen = census.collections.entry(node.id()).or_default();
                if seen.count > 0 {
                    return Err(Stop::Shared);
                }
                seen.count = 1;
            } else if node.anchor().is_some() {
                census.scalars.push(node.id());
            }
        } else if let Some(seen) = (!self.shared.is_empty())
            .then(|| self.shared.get_mut(&node.id()))
            .flatten()
        {
            if seen.anchor != 0 {
                let a = seen.anchor;
                self.out.push_str(if lead { " *id" } else { "*id" });
                self.push_anchor_number(a);
                return Ok(true);
            }
            self.next_anchor += 1;
            seen.anchor = self.next_anchor;
            let a = self.next_anchor;
            self.out.push_str(if lead { " &id" } else { "&id" });
            self.push_anchor_number(a);
            space = true;
            if let Some(slot) = node.anchor().and_then(|n| self.recursive.get_mut(n)) {
                *slot = a;
            }
        } else if let Some(slot) = node.anchor().and_then(|n| self.recursive.get_mut(n)) {
            // The enclosing node of a recursive alias: anchored under our own numbering.
            self.next_anchor += 1;
            let a = self.next_anchor;
            *slot = a;
            self.out.push_str(if lead { " &id" } else { "&id" });
            self.push_anchor_number(a);
            space = true;
        }
        if let Some(tag) = node.tag() {
            if space {
                self.out.push(' ');
            }
            self.tag(tag, node)?;
        }
        Ok(false)
    }

    fn push_anchor_number(&mut self, a: u32) {
        if a < 100 {
            self.out.push('0');
        }
        if a < 10 {
            self.out.push('0');
        }
        push_u64(&mut self.out, u64::from(a));
    }

    fn tag(&mut self, tag: &str, node: &Node) -> R {
        let invalid = || {
            Stop::Error(
                EmitError::InvalidTag {
                    tag: tag.to_string(),
                    path: super::TreePath::root(),
                },
                node.id(),
            )
        };
        if tag.is_empty() || tag == "!" {
            return Err(invalid());
        }
        if let Some(core) = tag.strip_prefix(YAML_TAG_PREFIX) {
            if matches!(
                core,
                "str" | "int" | "float" | "bool" | "null" | "binary" | "timestamp" | "seq" | "map"
            ) {
                return Err(invalid());
            }
        }
        self.write_tag(tag);
        Ok(())
    }

    /// Writes a tag as shorthand or verbatim (no validity checks), marking the handle used.
    fn write_tag(&mut self, tag: &str) {
        match self.shorthand(tag) {
            Some((i, suffix)) => {
                if let Some(h) = self.handles.get_mut(i) {
                    h.used = true;
                    self.out.push_str(&h.handle);
                }
                push_uri(&mut self.out, suffix, suffix_char);
            }
            None => {
                self.out.push_str("!<");
                push_uri(&mut self.out, tag, uri_char);
                self.out.push('>');
            }
        }
    }

    /// Whether a collection is written in flow style in a block context.
    fn use_flow(&self, node: &Node) -> bool {
        let (len, scalars) = match node.value() {
            Value::Seq(items) => (items.len(), items.iter().all(|i| !is_collection(i))),
            Value::Map(pairs) => (pairs.len(), false),
            _ => return false,
        };
        if len == 0 {
            return true;
        }
        match node.style() {
            Style::Collection(CollectionStyle::Flow) => true,
            Style::Collection(CollectionStyle::Block) => false,
            _ => scalars && len <= self.opts.flow_seq_max_items,
        }
    }

    /// Writes a node after an indicator (`key:`, `-`, `? `, `:`), the text ending at the end
    /// of its last line. `indent` is the column of the enclosing block collection; a block
    /// sequence value goes at `seq_indent`; `compact` puts the first entry of a block
    /// collection without props on the indicator's line (`- a: 1`).
    fn block_value(&mut self, node: &Node, indent: usize, seq_indent: usize, compact: bool) -> R {
        let start = self.out.len();
        if self.props(node, true)? {
            return Ok(());
        }
        let has_props = self.out.len() != start;
        if is_collection(node) && !self.use_flow(node) {
            let inline = compact && !has_props;
            self.enter(node)?;
            match node.value() {
                Value::Map(pairs) => self.block_map(pairs, indent + 2, inline)?,
                Value::Seq(items) => self.block_seq(items, seq_indent, inline)?,
                _ => {}
            }
            self.depth -= 1;
            return Ok(());
        }
        self.out.push(' ');
        self.content(node, Ctx::Block(indent), indent + 2)
    }

    fn block_map(&mut self, pairs: &[(Node, Node)], col: usize, inline_first: bool) -> R {
        for (i, (k, v)) in pairs.iter().enumerate() {
            if let Some((nk, nv)) = pairs.get(i + 1) {
                touch(nk);
                touch(nv);
            }
            if i == 0 && inline_first {
                self.out.push(' ');
            } else {
                self.newline(col);
            }
            let complex = self.block_key(k, col)?;
            let seq_indent = if complex { col + 2 } else { col };
            self.block_value(v, col, seq_indent, false)?;
        }
        Ok(())
    }

    fn block_seq(&mut self, items: &[Node], col: usize, inline_first: bool) -> R {
        for (i, item) in items.iter().enumerate() {
            if let Some(next) = items.get(i + 1) {
                touch(next);
            }
            if i == 0 && inline_first {
                self.out.push(' ');
            } else {
                self.newline(col);
            }
            self.out.push('-');
            self.block_value(item, col, col + 2, true)?;
        }
        Ok(())
    }

    /// Writes a block mapping key and its `:`; returns whether the `? ` form was used.
    fn block_key(&mut self, key: &Node, col: usize) -> Result<bool, Stop> {
        let start = self.out.len();
        if is_collection(key) {
            self.out.push('?');
            self.flow_node(key, col + 2, true)?;
            self.newline(col);
            self.out.push(':');
            return Ok(true);
        }
        if self.props(key, false)? {
            // An alias: `*id001 :` (a space so the `:` is not read as part of the name).
            self.out.push_str(" :");
            return Ok(false);
        }
        if self.out.len() != start {
            self.out.push(' ');
        }
        self.content(key, Ctx::BlockKey, col + 2)?;
        if self.out.len() - start > 1000 {
            self.out.insert_str(start, "? ");
            self.newline(col);
            self.out.push(':');
            return Ok(true);
        }
        self.out.push(':');
        Ok(false)
    }

    /// Writes a node in flow context, preceded by its props, starting with a space if
    /// `lead`.
    fn flow_node(&mut self, node: &Node, indent: usize, lead: bool) -> R {
        let start = self.out.len();
        if self.props(node, lead)? {
            return Ok(());
        }
        if lead || self.out.len() != start {
            self.out.push(' ');
        }
        self.flow_content(node, indent)
    }

    /// Writes a node's content in flow context (props already written).
    fn flow_content(&mut self, node: &Node, indent: usize) -> R {
        if is_collection(node) {
            self.enter(node)?;
        }
        match node.value() {
            Value::Seq(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if let Some(next) = items.get(i + 2) {
                        touch(next);
                    }
                    if i > 0 {
                        self.flow_sep(indent);
                    }
                    self.flow_node(item, indent + 2, false)?;
                }
                self.out.push(']');
            }
            Value::Map(pairs) => {
                self.out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        self.flow_sep(indent);
                    }
                    self.flow_key(k, indent + 2)?;
                    self.flow_node(v, indent + 2, true)?;
                }
                self.out.push('}');
            }
            _ => return self.content(node, Ctx::Flow, indent),
        }
        self.depth -= 1;
        Ok(())
    }

    fn flow_sep(&mut self, indent: usize) {
        self.out.push(',');
        if self.column() > self.width {
            self.newline(indent);
        } else {
            self.out.push(' ');
        }
    }

    /// Writes a flow mapping key and its `:`.
    fn flow_key(&mut self, key: &Node, indent: usize) -> R {
        let start = self.out.len();
        if is_collection(key) {
            self.out.push('?');
            self.flow_node(key, indent, true)?;
            self.out.push_str(" :");
            return Ok(());
        }
        if self.props(key, false)? {
            self.out.push_str(" :");
            return Ok(());
        }
        if self.out.len() != start {
            self.out.push(' ');
        }
        self.content(key, Ctx::Flow, indent)?;
        if self.out.len() - start > 1000 {
            self.out.insert_str(start, "? ");
            self.out.push_str(" :");
        } else {
            self.out.push(':');
        }
        Ok(())
    }

    /// Writes a node's content: a scalar in the given context, or a flow collection.
    fn content(&mut self, node: &Node, ctx: Ctx, indent: usize) -> R {
        let tagged = node.tag().is_some();
        match node.value() {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(Integer::Small(v)) => {
                if *v < 0 {
                    self.out.push('-');
                }
                let m = v.unsigned_abs();
                match u64::try_from(m) {
                    Ok(small) => push_u64(&mut self.out, small),
                    Err(_) => {
                        let _ = write!(self.out, "{m}");
                    }
                }
            }
            Value::Recursive(name) => {
                if self.optimistic.is_some() {
                    // Needs the counting walk, which finds the enclosing anchored node.
                    return Err(Stop::Shared);
                }
                match self.recursive.get(name) {
                    Some(&a) if a != 0 => {
                        self.out.push_str("*id");
                        self.push_anchor_number(a);
                    }
                    _ => {
                        return Err(Stop::Error(
                            EmitError::Recursive {
                                name: name.clone(),
                                path: super::TreePath::root(),
                            },
                            node.id(),
                        ))
                    }
                }
            }
            Value::Int(Integer::Big(s)) => {
                if !valid_big(s) {
                    return Err(Stop::Error(
                        EmitError::InvalidInteger {
                            text: s.clone(),
                            path: super::TreePath::root(),
                        },
                        node.id(),
                    ));
                }
                self.out.push_str(s);
            }
            Value::Float(x) => floats::push_yaml(&mut self.out, &mut self.scratch, *x),
            Value::Str(s) => self.string(s, tagged, node.style(), ctx),
            Value::Timestamp(ts) => self.timestamp(ts, tagged, ctx),
            Value::Binary(data) => self.binary(data, tagged, ctx),
            Value::Seq(_) | Value::Map(_) => self.flow_content(node, indent)?,
        }
        Ok(())
    }

    fn string(&mut self, s: &str, tagged: bool, style: Style, ctx: Ctx) {
        let a = analyze(s);
        let plain_ok = if ctx.flow() {
            a.plain_flow
        } else {
            a.plain_block
        } && (tagged || resolves_as_str(s));
        let literal_ok = matches!(ctx, Ctx::Block(_)) && a.literal;
        let chosen = match style {
            Style::Scalar(ScalarStyle::SingleQuoted) if a.single => ScalarStyle::SingleQuoted,
            Style::Scalar(ScalarStyle::DoubleQuoted) => ScalarStyle::DoubleQuoted,
            Style::Scalar(ScalarStyle::Literal | ScalarStyle::Folded) if literal_ok => {
                ScalarStyle::Literal
            }
            _ if plain_ok => ScalarStyle::Plain,
            _ if literal_ok && s.contains('\n') => ScalarStyle::Literal,
            _ if a.single => ScalarStyle::SingleQuoted,
            _ => ScalarStyle::DoubleQuoted,
        };
        match (chosen, ctx) {
            (ScalarStyle::Plain, _) => self.out.push_str(s),
            (ScalarStyle::SingleQuoted, _) => push_single_quoted(&mut self.out, s),
            (ScalarStyle::Literal, Ctx::Block(col)) => self.literal(s, col),
            _ => push_double_quoted(&mut self.out, s),
        }
    }

    /// A literal block scalar whose content goes at `col + 2`.
    fn literal(&mut self, s: &str, col: usize) {
        self.out.push('|');
        if s.starts_with([' ', '\n']) {
            self.out.push('2');
        }
        if !s.ends_with('\n') {
            self.out.push('-');
        } else if s.len() == 1 || s.ends_with("\n\n") {
            self.out.push('+');
        }
        let body = s.strip_suffix('\n').unwrap_or(s);
        for line in body.split('\n') {
            if line.is_empty() {
                self.out.push('\n');
                self.line_start = self.out.len();
            } else {
                self.newline(col + 2);
                self.out.push_str(line);
            }
        }
    }

    fn timestamp(&mut self, ts: &Timestamp, tagged: bool, ctx: Ctx) {
        let canonical;
        let text = match resolve_plain_owned(ts.text.clone()) {
            Ok(Value::Timestamp(t)) if *t == *ts => ts.text.as_str(),
            _ => {
                canonical = timestamp_canonical(ts);
                canonical.as_str()
            }
        };
        let a = analyze(text);
        let plain_ok = if ctx.flow() {
            a.plain_flow
        } else {
            a.plain_block
        };
        if plain_ok {
            self.out.push_str(text);
            return;
        }
        if !tagged {
            self.write_tag(TIMESTAMP_TAG);
            self.out.push(' ');
        }
        push_single_quoted(&mut self.out, text);
    }

    fn binary(&mut self, data: &[u8], tagged: bool, ctx: Ctx) {
        if !tagged {
            self.write_tag(BINARY_TAG);
            self.out.push(' ');
        }
        match ctx {
            Ctx::Block(col) if !data.is_empty() => {
                self.out.push('|');
                for line in data.chunks(57) {
                    self.newline(col + 2);
                    super::base64::encode_into(&mut self.out, line);
                }
            }
            _ => {
                self.out.push('"');
                super::base64::encode_into(&mut self.out, data);
                self.out.push('"');
            }
        }
    }
}

#[cfg(test)]
#[path = "emit_tests.rs"]
mod tests;
