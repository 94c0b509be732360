//! The tree builder both YAML parsers feed: the libyaml-safer event loop ([`super::parse`])
//! and the hand-written fast path ([`super::fast_parse`]) call the same [`Builder`] with
//! scalars, collection starts and ends, and aliases, so both build the same [`Node`] tree
//! (anchors, merge keys, tags, limits) and neither parser depends on the other.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;

use libyaml_safer::ScalarStyle as LyStyle;

use super::hash::FastBuild;
use super::keys::KeyMemo;
use super::node::{CollectionStyle, Node, NodeData, ScalarStyle, Style, Value, YAML_TAG_PREFIX};
use super::resolve::{classify, construct_core, resolve_plain_owned, CoreScalar};
use super::shared::Arena;
use super::{YamlError, YamlLimits};

const MERGE_TAG: &str = "tag:yaml.org,2002:merge";
const VALUE_TAG: &str = "tag:yaml.org,2002:value";

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
