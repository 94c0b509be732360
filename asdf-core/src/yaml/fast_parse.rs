//! A fast path for the YAML that ASDF writers produce.
//!
//! libyaml-safer reads about 10–20 MB/s, far too slow for large trees. This parser handles a
//! conservative subset of YAML directly: `%YAML`/`%TAG` directives, `---` with properties,
//! block mappings with plain keys, block sequences (indentless ones too, and compact
//! mappings `- key: value`), single-line plain and quoted scalars, flow sequences and
//! mappings over several lines, tags, anchors, aliases, whole-line comments, `...`.
//!
//! It feeds the same [`Builder`] as the libyaml path, so resolution and node building are
//! shared. On anything outside the subset, anything it is not sure libyaml reads the same
//! way, and on every error, it gives up (`None`) and the caller parses again with
//! libyaml-safer: results and errors are always libyaml's. Tests check that both paths build
//! the same tree on every input the fast path accepts.

use libyaml_safer::ScalarStyle as LyStyle;

use super::build::Builder;
use super::node::{CollectionStyle, YAML_TAG_PREFIX};
use super::{Document, YamlLimits};

/// Nesting the fast path handles before leaving deeper documents to libyaml (whose parser
/// needs no recursion).
const MAX_FAST_DEPTH: usize = 256;

/// Longest plain key accepted (libyaml limits simple keys to 1024 characters).
const MAX_KEY: usize = 1000;

/// Parses `text` if it lies in the fast subset; `None` means "use libyaml".
pub(super) fn parse_fast(text: &str, limits: &YamlLimits) -> Option<Document> {
    if text.as_bytes().contains(&b'\r') {
        // CRLF line breaks: the subset has no multi-line scalars, so LF reads the same.
        let lf = text.replace("\r\n", "\n");
        return parse_lf(&lf, limits);
    }
    parse_lf(text, limits)
}

fn parse_lf(text: &str, limits: &YamlLimits) -> Option<Document> {
    if !simple_bytes(text.as_bytes()) {
        return None;
    }
    let mut f = Fast {
        src: text,
        s: text.as_bytes(),
        pos: 0,
        b: Builder::new(limits),
        handles: vec![
            ("!".to_string(), "!".to_string()),
            ("!!".to_string(), YAML_TAG_PREFIX.to_string()),
        ],
        depth: 0,
    };
    f.b.share_scalars(text.len());
    f.document()
}

/// Whether the text avoids everything the fast path does not handle at the byte level: tabs,
/// carriage returns, control characters, NEL and the Unicode line/paragraph separators, byte
/// order marks and noncharacters.
fn simple_bytes(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() {
        // Runs of printable ASCII and line feeds, 32 bytes at a time (no early exit inside a
        // run, so the check vectorizes).
        if let Some(run) = s.get(i..i + 32) {
            let odd = run.iter().fold(false, |acc, &b| {
                acc | ((b < 0x20 && b != b'\n') | (b >= 0x7f))
            });
            if !odd {
                i += 32;
                continue;
            }
        }
        let b = s[i];
        if b < 0x80 {
            if (b < 0x20 && b != b'\n') || b == 0x7f {
                return false;
            }
            i += 1;
            continue;
        }
        match (b, s.get(i + 1).copied(), s.get(i + 2).copied()) {
            (0xc2, Some(0x80..=0x9f), _)
            | (0xe2, Some(0x80), Some(0xa8 | 0xa9))
            | (0xef, Some(0xbb), Some(0xbf))
            | (0xef, Some(0xbf), Some(0xbe | 0xbf)) => return false,
            _ => i += 1,
        }
    }
    true
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Characters of a tag URI kept as they are (the emitter writes tag suffixes with these).
pub(super) fn is_uri(b: u8) -> bool {
    is_alpha(b)
        || matches!(
            b,
            b';' | b'/'
                | b'?'
                | b':'
                | b'@'
                | b'&'
                | b'='
                | b'+'
                | b'$'
                | b'.'
                | b'~'
                | b'*'
                | b'\''
                | b'('
                | b')'
        )
}

/// Characters that cannot start a plain scalar here (YAML indicators and blanks).
/// The bytes that end the fast loop of [`Fast::plain_line`]: a line break, and the two
/// characters that may end a plain scalar (`: `, ` #`).
static PLAIN_STOP: [bool; 256] = byte_set(b"\n:#");

/// The bytes that end the fast loop of [`Fast::simple_key`].
static KEY_STOP: [bool; 256] = byte_set(b"\n\0:#[]{},");

const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        set[bytes[i] as usize] = true;
        i += 1;
    }
    set
}

fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
            | b' '
            | b'\n'
            | 0
    )
}

/// Node properties: anchor and tag.
#[derive(Default)]
struct Props {
    anchor: Option<String>,
    tag: Option<String>,
}

struct Fast<'a, 'l> {
    src: &'a str,
    s: &'a [u8],
    pos: usize,
    b: Builder<'l>,
    /// `%TAG` handles in effect, defaults included.
    handles: Vec<(String, String)>,
    depth: usize,
}

impl Fast<'_, '_> {
    /// The byte at `i`, 0 past the end (the text holds no NUL).
    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    fn eol(&self, i: usize) -> bool {
        matches!(self.at(i), b'\n' | 0)
    }

    fn blank_or_eol(&self, i: usize) -> bool {
        matches!(self.at(i), b' ' | b'\n' | 0)
    }

    fn skip_spaces(&mut self) {
        while self.at(self.pos) == b' ' {
            self.pos += 1;
        }
    }

    fn line_end(&self, from: usize) -> usize {
        self.s
            .get(from..)
            .and_then(|r| r.iter().position(|&c| c == b'\n'))
            .map_or(self.s.len(), |p| from + p)
    }

    fn next_line(&self, from: usize) -> usize {
        (self.line_end(from) + 1).min(self.s.len())
    }

    fn text(&self, from: usize, to: usize) -> Option<String> {
        self.src.get(from..to).map(str::to_string)
    }

    /// The next line holding content from `from` (a line start), skipping blank lines and,
    /// if asked, comment lines: `(line start, indent)`.
    fn peek_line(&self, mut from: usize, skip_comments: bool) -> Option<(usize, usize)> {
        while from < self.s.len() {
            let mut i = from;
            while self.at(i) == b' ' {
                i += 1;
            }
            let c = self.at(i);
            if c == b'\n' || c == 0 || (skip_comments && c == b'#') {
                from = self.next_line(i);
                continue;
            }
            return Some((from, i - from));
        }
        None
    }

    /// Whether the line at `ls` is the document marker `m` (`---` or `...`).
    fn is_marker(&self, ls: usize, m: &[u8]) -> bool {
        self.s.get(ls..ls + 3) == Some(m) && self.blank_or_eol(ls + 3)
    }

    /// Whether the line at `ls` has a block sequence entry at column `ind`.
    fn is_dash(&self, ls: usize, ind: usize) -> bool {
        self.at(ls + ind) == b'-' && self.blank_or_eol(ls + ind + 1)
    }

    /// Spaces, then the end of the line, which is consumed.
    fn end_of_line(&mut self) -> Option<()> {
        self.skip_spaces();
        match self.at(self.pos) {
            b'\n' => {
                self.pos += 1;
                Some(())
            }
            0 if self.pos >= self.s.len() => Some(()),
            _ => None,
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_FAST_DEPTH).then_some(())
    }

    fn document(&mut self) -> Option<Document> {
        let mut version = None;
        let mut directives: Vec<(String, String)> = Vec::new();
        let mut explicit = false;
        while let Some((ls, _)) = self.peek_line(self.pos, true) {
            let le = self.line_end(ls);
            let line = self.s.get(ls..le)?;
            if line.first() == Some(&b'%') {
                if line == b"%YAML 1.1" && version.is_none() {
                    version = Some((1, 1));
                } else if let Some(rest) = line.strip_prefix(b"%TAG ") {
                    let (handle, prefix) = self.tag_directive(ls + 5, le, rest)?;
                    if directives.iter().any(|(h, _)| *h == handle) {
                        return None;
                    }
                    self.handles.retain(|(h, _)| *h != handle);
                    self.handles.push((handle.clone(), prefix.clone()));
                    directives.push((handle, prefix));
                } else {
                    return None;
                }
                self.pos = self.next_line(ls);
            } else if self.is_marker(ls, b"---") {
                explicit = true;
                self.pos = ls + 3;
                break;
            } else {
                if version.is_some() || !directives.is_empty() {
                    return None;
                }
                self.pos = ls;
                break;
            }
        }
        if !explicit && (version.is_some() || !directives.is_empty()) {
            return None;
        }
        let mut props = Props::default();
        if explicit {
            self.skip_spaces();
            props = self.properties()?;
            self.end_of_line()?;
        }
        match self.peek_line(self.pos, true) {
            Some((ls, ind)) if !(ind == 0 && self.is_marker(ls, b"...")) => {
                if ind == 0 && self.is_marker(ls, b"---") {
                    return None;
                }
                self.pos = ls;
                self.block_collection(-1, ind, props)?;
            }
            Some(_) if !explicit => return None,
            _ => {
                if explicit {
                    self.empty_scalar(props)?;
                }
            }
        }
        // After the root: nothing, or `...` and then nothing but blanks and comments.
        if let Some((ls, ind)) = self.peek_line(self.pos, true) {
            if ind != 0 || !self.is_marker(ls, b"...") {
                return None;
            }
            self.pos = ls + 3;
            self.end_of_line()?;
            if self.peek_line(self.pos, true).is_some() {
                return None;
            }
        }
        let root = std::mem::replace(&mut self.b, Builder::new(&DUMMY_LIMITS)).finish();
        Some(Document {
            version,
            tag_directives: directives,
            root,
        })
    }

    /// `%TAG handle prefix`: the handle is `!`, `!!` or `!word!`; the prefix a simple URI.
    fn tag_directive(&self, start: usize, end: usize, rest: &[u8]) -> Option<(String, String)> {
        let sp = rest.iter().position(|&c| c == b' ')?;
        let handle = &rest[..sp];
        let prefix = &rest[sp + 1..];
        let ok_handle = handle == b"!"
            || (handle.len() >= 2
                && handle.first() == Some(&b'!')
                && handle.last() == Some(&b'!')
                && handle[1..handle.len() - 1].iter().all(|&c| is_alpha(c)));
        let ok_prefix = !prefix.is_empty()
            && (prefix[0] == b'!' || is_uri(prefix[0]))
            && prefix
                .iter()
                .skip(1)
                .all(|&c| is_uri(c) || c == b'!' || c == b',');
        if !ok_handle || !ok_prefix {
            return None;
        }
        let h = self.text(start, start + sp)?;
        let p = self.text(start + sp + 1, end)?;
        Some((h, p))
    }

    /// Anchor and tag, in either order, each followed by a space or the line end.
    #[inline]
    fn properties(&mut self) -> Option<Props> {
        // Most nodes have neither anchor nor tag.
        if !matches!(self.at(self.pos), b'&' | b'!') {
            return Some(Props::default());
        }
        self.properties_slow()
    }

    #[inline(never)]
    fn properties_slow(&mut self) -> Option<Props> {
        let mut p = Props::default();
        loop {
            match self.at(self.pos) {
                b'&' if p.anchor.is_none() => {
                    let start = self.pos + 1;
                    let mut i = start;
                    while is_alpha(self.at(i)) {
                        i += 1;
                    }
                    if i == start || !self.blank_or_eol(i) {
                        return None;
                    }
                    p.anchor = Some(self.text(start, i)?);
                    self.pos = i;
                }
                b'!' if p.tag.is_none() => {
                    p.tag = Some(self.tag()?);
                }
                _ => return Some(p),
            }
            self.skip_spaces();
        }
    }

    fn tag(&mut self) -> Option<String> {
        let start = self.pos;
        if self.at(start + 1) == b'<' {
            return None;
        }
        let mut i = start + 1;
        while is_alpha(self.at(i)) {
            i += 1;
        }
        let (handle_end, suffix_start) = if self.at(i) == b'!' {
            (i + 1, i + 1)
        } else {
            (start + 1, start + 1)
        };
        let mut j = suffix_start;
        while is_uri(self.at(j)) {
            j += 1;
        }
        if j == suffix_start || !self.blank_or_eol(j) {
            return None;
        }
        let handle = self.src.get(start..handle_end)?;
        let prefix = &self.handles.iter().find(|(h, _)| h == handle)?.1;
        let mut tag = String::with_capacity(prefix.len() + j - suffix_start);
        tag.push_str(prefix);
        tag.push_str(self.src.get(suffix_start..j)?);
        self.pos = j;
        Some(tag)
    }

    fn empty_scalar(&mut self, p: Props) -> Option<()> {
        let implicit = p.tag.is_none();
        self.b
            .scalar(p.anchor, p.tag, String::new(), LyStyle::Plain, implicit, 0)
            .ok()
    }

    /// A block collection whose first line starts at `self.pos` with content at column `m`.
    fn block_collection(&mut self, n: isize, m: usize, p: Props) -> Option<()> {
        if (m as isize) <= n {
            return None;
        }
        let ls = self.pos;
        if self.is_dash(ls, m) {
            self.block_seq(m, p, false)
        } else {
            self.block_map(m, p)
        }
    }

    /// A plain key at `c` followed by `:` and a blank: the end of the key.
    fn simple_key(&self, c: usize) -> Option<usize> {
        if is_indicator(self.at(c)) {
            return None;
        }
        let mut i = c;
        loop {
            i += self
                .s
                .get(i..)
                .and_then(|rest| rest.iter().position(|&b| KEY_STOP[usize::from(b)]))
                .unwrap_or(self.s.len().saturating_sub(i));
            match self.at(i) {
                b':' => {
                    if i - c > MAX_KEY || !self.blank_or_eol(i + 1) || self.at(i - 1) == b' ' {
                        return None;
                    }
                    return Some(i);
                }
                b'\n' | 0 | b'[' | b']' | b'{' | b'}' | b',' => return None,
                b'#' if self.at(i - 1) == b' ' => return None,
                _ => i += 1,
            }
        }
    }

    /// Where a quoted key starting at `c` ends (after the closing quote), when the quoted
    /// scalar is on one line and followed by `:` and a blank.
    fn quoted_key_end(&self, c: usize) -> Option<usize> {
        let q = self.at(c);
        let mut i = c + 1;
        loop {
            match self.at(i) {
                0 | b'\n' => return None,
                b'\\' if q == b'"' => i += 2,
                b'\'' if q == b'\'' && self.at(i + 1) == b'\'' => i += 2,
                b if b == q => break,
                _ => i += 1,
            }
        }
        let end = i + 1;
        (self.at(end) == b':' && self.blank_or_eol(end + 1) && end - c <= MAX_KEY).then_some(end)
    }

    /// Whether a key (plain, or quoted on one line) followed by `:` and a blank starts at `c`.
    fn is_key(&self, c: usize) -> bool {
        match self.at(c) {
            b'\'' | b'"' => self.quoted_key_end(c).is_some(),
            _ => self.simple_key(c).is_some(),
        }
    }

    /// Reads the key at `c` and its `:`; `self.pos` is left after the `:`. In flow context
    /// the `:` must be followed by a space.
    fn key(&mut self, c: usize, flow: bool) -> Option<()> {
        let colon = match self.at(c) {
            b'\'' | b'"' => {
                let end = self.quoted_key_end(c)?;
                self.pos = c;
                // A key never folds over lines (`isize::MAX`: no line is deeper).
                self.quoted(Props::default(), isize::MAX)?;
                if self.pos != end {
                    return None;
                }
                end
            }
            _ => {
                let end = self.simple_key(c)?;
                self.b.plain(self.src.get(c..end)?).ok()?;
                end
            }
        };
        if flow && self.at(colon + 1) != b' ' {
            return None;
        }
        self.pos = colon + 1;
        Some(())
    }

    fn block_map(&mut self, m: usize, p: Props) -> Option<()> {
        self.enter()?;
        self.b
            .start(false, p.anchor, p.tag, CollectionStyle::Block, 0)
            .ok()?;
        loop {
            let c = self.pos + m;
            self.key(c, false)?;
            self.block_value(m as isize, true)?;
            match self.peek_line(self.pos, true) {
                None => break,
                Some((ls, ind)) => {
                    if ind < m
                        || (ind == 0 && (self.is_marker(ls, b"...") || self.is_marker(ls, b"---")))
                    {
                        self.pos = ls;
                        break;
                    }
                    if ind > m || self.is_dash(ls, ind) {
                        return None;
                    }
                    self.pos = ls;
                }
            }
        }
        self.b.end(0).ok()?;
        self.depth -= 1;
        Some(())
    }

    fn block_seq(&mut self, m: usize, p: Props, indentless: bool) -> Option<()> {
        self.enter()?;
        self.b
            .start(true, p.anchor, p.tag, CollectionStyle::Block, 0)
            .ok()?;
        loop {
            let ls = self.pos;
            let after = ls + m + 1;
            let mut c = after;
            while self.at(c) == b' ' {
                c += 1;
            }
            if c > after && self.is_dash(c, 0) {
                // Compact nested sequence `- - item`.
                self.pos = ls;
                self.block_seq(c - ls, Props::default(), false)?;
            } else if !self.eol(c) && self.is_key(c) {
                // Compact mapping `- key: value`: a block mapping at the key's column.
                self.pos = ls;
                self.block_map(c - ls, Props::default())?;
            } else {
                self.pos = after;
                self.block_value(m as isize, false)?;
            }
            match self.peek_line(self.pos, true) {
                None => break,
                Some((ls, ind)) => {
                    if ind < m
                        || (ind == 0 && (self.is_marker(ls, b"...") || self.is_marker(ls, b"---")))
                    {
                        self.pos = ls;
                        break;
                    }
                    if ind > m {
                        return None;
                    }
                    if self.is_dash(ls, ind) {
                        self.pos = ls;
                        continue;
                    }
                    if indentless {
                        self.pos = ls;
                        break;
                    }
                    return None;
                }
            }
        }
        self.b.end(0).ok()?;
        self.depth -= 1;
        Some(())
    }

    /// The value after `key:` or `- ` (at `self.pos`, same line) of an entry of a block
    /// collection at indent `n`. Leaves `self.pos` at the start of a line.
    fn block_value(&mut self, n: isize, indentless_ok: bool) -> Option<()> {
        if !self.blank_or_eol(self.pos) {
            return None;
        }
        self.skip_spaces();
        let p = self.properties()?;
        let c = self.at(self.pos);
        if self.eol(self.pos) {
            self.pos = self.next_line(self.pos);
            match self.peek_line(self.pos, true) {
                Some((ls, ind)) if ind as isize > n => {
                    self.pos = ls;
                    return self.block_collection(n, ind, p);
                }
                Some((ls, ind)) if ind as isize == n && indentless_ok && self.is_dash(ls, ind) => {
                    self.pos = ls;
                    return self.block_seq(ind, p, true);
                }
                _ => return self.empty_scalar(p),
            }
        }
        match c {
            b'[' => {
                self.flow_seq(n, p)?;
                self.end_of_line()
            }
            b'{' => {
                self.flow_map(n, p)?;
                self.end_of_line()
            }
            b'\'' | b'"' => {
                self.quoted(p, n)?;
                self.end_of_line()
            }
            b'*' => {
                if p.anchor.is_some() || p.tag.is_some() {
                    return None;
                }
                self.alias()?;
                self.end_of_line()
            }
            _ => self.block_plain(n, p),
        }
    }

    /// A plain scalar in block context, continued over more-indented lines (folded as
    /// libyaml does: one line break becomes a space, each empty line a line break).
    fn block_plain(&mut self, n: isize, p: Props) -> Option<()> {
        let start = self.pos;
        let c = self.at(start);
        if is_indicator(c) && !(c == b'-' && matches!(self.at(start + 1), b'0'..=b'9' | b'.')) {
            return None;
        }
        let (mut le, first_end) = self.plain_line(start)?;
        let mut folded: Option<String> = None;
        loop {
            let (next, empty) = self.after_break(le);
            let Some((cp, ind)) = next else { break };
            if ind as isize <= n {
                break;
            }
            // A continuation line; anything unusual at its start is left to libyaml.
            if is_indicator(self.at(cp)) {
                return None;
            }
            let (le2, end) = self.plain_line(cp)?;
            let text = folded.get_or_insert_with(|| {
                self.src
                    .get(start..first_end)
                    .unwrap_or_default()
                    .to_string()
            });
            push_fold(text, empty);
            text.push_str(self.src.get(cp..end)?);
            le = le2;
        }
        match folded {
            None => self.plain_scalar(p, start, first_end)?,
            Some(text) => {
                let implicit = p.tag.is_none();
                self.b
                    .scalar(p.anchor, p.tag, text, LyStyle::Plain, implicit, 0)
                    .ok()?;
            }
        }
        self.pos = self.next_line(le);
        Some(())
    }

    /// One line of a block plain scalar from `from`: checks it has no `: `, no trailing `:`
    /// and no ` #`, and returns (its line end, its end without trailing spaces). One pass:
    /// only the bytes of [`PLAIN_STOP`] leave the fast loop.
    fn plain_line(&self, from: usize) -> Option<(usize, usize)> {
        let line = self.s.get(from..)?;
        let mut i = 0;
        loop {
            i += line
                .get(i..)?
                .iter()
                .position(|&b| PLAIN_STOP[usize::from(b)])
                .unwrap_or(line.len() - i);
            match line.get(i) {
                None | Some(b'\n') => break,
                Some(b':') if matches!(line.get(i + 1), None | Some(b' ' | b'\n')) => return None,
                Some(b'#') if i > 0 && line.get(i - 1) == Some(&b' ') => return None,
                Some(_) => i += 1,
            }
        }
        let mut end = i;
        while end > 0 && line.get(end - 1) == Some(&b' ') {
            end -= 1;
        }
        Some((from + i, from + end))
    }

    /// After the line break at `at` (or the end of the text): the next line with content as
    /// `(content position, indent)`, and how many empty lines came before it.
    fn after_break(&self, at: usize) -> (Option<(usize, usize)>, usize) {
        let mut pos = at + 1;
        let mut empty = 0;
        while pos < self.s.len() {
            let mut i = pos;
            while self.at(i) == b' ' {
                i += 1;
            }
            if self.at(i) == b'\n' {
                empty += 1;
                pos = i + 1;
                continue;
            }
            if i >= self.s.len() {
                break;
            }
            return (Some((i, i - pos)), empty);
        }
        (None, empty)
    }

    fn plain_scalar(&mut self, p: Props, start: usize, end: usize) -> Option<()> {
        if p.anchor.is_none() && p.tag.is_none() {
            return self.b.plain(self.src.get(start..end)?).ok();
        }
        let value = self.text(start, end)?;
        let implicit = p.tag.is_none();
        self.b
            .scalar(p.anchor, p.tag, value, LyStyle::Plain, implicit, 0)
            .ok()
    }

    /// A quoted scalar, possibly continued over more-indented lines.
    fn quoted(&mut self, p: Props, n: isize) -> Option<()> {
        let q = self.at(self.pos);
        let start = self.pos + 1;
        let rest = self.s.get(start..)?;
        let (value, style, consumed) = if q == b'\'' {
            let mut out = String::new();
            let mut i = 0;
            loop {
                let off = rest
                    .get(i..)?
                    .iter()
                    .position(|&c| c == b'\'' || c == b'\n')?;
                let segment = self.src.get(start + i..start + i + off)?;
                if rest.get(i + off) == Some(&b'\n') {
                    // Fold: blanks before the break go, the next line must be deeper.
                    out.push_str(segment.trim_end_matches(' '));
                    let (next, empty) = self.after_break(start + i + off);
                    let (cp, ind) = next?;
                    if ind as isize <= n {
                        return None;
                    }
                    push_fold(&mut out, empty);
                    i = cp - start;
                    continue;
                }
                out.push_str(segment);
                i += off + 1;
                if rest.get(i) == Some(&b'\'') {
                    out.push('\'');
                    i += 1;
                } else {
                    break;
                }
            }
            (out, LyStyle::SingleQuoted, i)
        } else {
            let (value, consumed) = self.double_quoted(start, n)?;
            (value, LyStyle::DoubleQuoted, consumed)
        };
        self.pos = start + consumed;
        self.b.scalar(p.anchor, p.tag, value, style, false, 0).ok()
    }

    /// The body of a double-quoted scalar starting at `start` (after the quote), with
    /// libyaml's escapes and line folding (continuation lines deeper than `n`): the value and
    /// the bytes consumed including the closing quote.
    fn double_quoted(&self, start: usize, n: isize) -> Option<(String, usize)> {
        let rest = self.s.get(start..)?;
        let mut out = String::new();
        let mut i = 0;
        loop {
            let off = rest
                .get(i..)?
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c == b'\n')?;
            let segment = self.src.get(start + i..start + i + off)?;
            i += off;
            match rest.get(i) {
                Some(b'"') => {
                    out.push_str(segment);
                    return Some((out, i + 1));
                }
                Some(b'\\') => out.push_str(segment),
                _ => {
                    // A line break: fold as in a single-quoted scalar.
                    out.push_str(segment.trim_end_matches(' '));
                    let (next, empty) = self.after_break(start + i);
                    let (cp, ind) = next?;
                    if ind as isize <= n {
                        return None;
                    }
                    push_fold(&mut out, empty);
                    i = cp - start;
                    continue;
                }
            }
            let code = *rest.get(i + 1)?;
            if code == b'\n' {
                // An escaped line break: joined without a space; empty lines still count.
                let (next, empty) = self.after_break(start + i + 1);
                let (cp, ind) = next?;
                if ind as isize <= n {
                    return None;
                }
                for _ in 0..empty {
                    out.push('\n');
                }
                i = cp - start;
                continue;
            }
            i += 2;
            let simple = match code {
                b'0' => Some('\0'),
                b'a' => Some('\x07'),
                b'b' => Some('\x08'),
                b't' => Some('\t'),
                b'n' => Some('\n'),
                b'v' => Some('\x0b'),
                b'f' => Some('\x0c'),
                b'r' => Some('\r'),
                b'e' => Some('\x1b'),
                b' ' | b'"' | b'/' | b'\\' => Some(char::from(code)),
                b'N' => Some('\u{85}'),
                b'_' => Some('\u{a0}'),
                b'L' => Some('\u{2028}'),
                b'P' => Some('\u{2029}'),
                _ => None,
            };
            if let Some(c) = simple {
                out.push(c);
                continue;
            }
            let len = match code {
                b'x' => 2,
                b'u' => 4,
                b'U' => 8,
                _ => return None,
            };
            let hex = rest.get(i..i + len)?;
            let mut v: u32 = 0;
            for &h in hex {
                v = (v << 4) + char::from(h).to_digit(16)?;
            }
            out.push(char::from_u32(v)?);
            i += len;
        }
    }

    fn alias(&mut self) -> Option<()> {
        let start = self.pos + 1;
        let mut i = start;
        while is_alpha(self.at(i)) {
            i += 1;
        }
        if i == start || !matches!(self.at(i), b' ' | b'\n' | 0 | b',' | b']' | b'}') {
            return None;
        }
        let name = self.text(start, i)?;
        self.pos = i;
        self.b.alias(name, 0).ok()
    }

    /// Spaces and line breaks inside a flow collection; lines must be indented deeper than
    /// the enclosing block collection (`n`); comments are not handled.
    fn flow_ws(&mut self, n: isize) -> Option<()> {
        loop {
            match self.at(self.pos) {
                b' ' => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    let (ls, ind) = self.peek_line(self.pos, false)?;
                    if ind as isize <= n || self.at(ls + ind) == b'#' {
                        return None;
                    }
                    self.pos = ls + ind;
                }
                b'#' => return None,
                _ => return Some(()),
            }
        }
    }

    fn flow_seq(&mut self, n: isize, p: Props) -> Option<()> {
        self.enter()?;
        self.b
            .start(true, p.anchor, p.tag, CollectionStyle::Flow, 0)
            .ok()?;
        self.pos += 1;
        self.flow_ws(n)?;
        if self.at(self.pos) == b']' {
            self.pos += 1;
        } else {
            loop {
                self.flow_node(n)?;
                self.flow_ws(n)?;
                match self.at(self.pos) {
                    b',' => {
                        self.pos += 1;
                        self.flow_ws(n)?;
                        if self.at(self.pos) == b']' {
                            return None;
                        }
                    }
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.b.end(0).ok()?;
        self.depth -= 1;
        Some(())
    }

    fn flow_map(&mut self, n: isize, p: Props) -> Option<()> {
        self.enter()?;
        self.b
            .start(false, p.anchor, p.tag, CollectionStyle::Flow, 0)
            .ok()?;
        self.pos += 1;
        self.flow_ws(n)?;
        if self.at(self.pos) == b'}' {
            self.pos += 1;
        } else {
            loop {
                // Key: a plain or quoted scalar, then `: `.
                let c = self.pos;
                self.key(c, true)?;
                self.flow_ws(n)?;
                if matches!(self.at(self.pos), b',' | b'}') {
                    return None;
                }
                self.flow_node(n)?;
                self.flow_ws(n)?;
                match self.at(self.pos) {
                    b',' => {
                        self.pos += 1;
                        self.flow_ws(n)?;
                        if self.at(self.pos) == b'}' {
                            return None;
                        }
                    }
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.b.end(0).ok()?;
        self.depth -= 1;
        Some(())
    }

    fn flow_node(&mut self, n: isize) -> Option<()> {
        let p = self.properties()?;
        if self.eol(self.pos) {
            return None;
        }
        match self.at(self.pos) {
            b'[' => self.flow_seq(n, p),
            b'{' => self.flow_map(n, p),
            b'\'' | b'"' => self.quoted(p, n),
            b'*' => {
                if p.anchor.is_some() || p.tag.is_some() {
                    return None;
                }
                self.alias()
            }
            _ => self.flow_plain(n, p),
        }
    }

    /// A plain scalar inside a flow collection, possibly continued over more-indented lines.
    fn flow_plain(&mut self, n: isize, p: Props) -> Option<()> {
        let start = self.pos;
        let c = self.at(start);
        if is_indicator(c) && !(c == b'-' && matches!(self.at(start + 1), b'0'..=b'9' | b'.')) {
            return None;
        }
        let (stop, end) = self.flow_plain_line(start)?;
        let mut stop_pos = start + stop;
        let mut folded: Option<String> = None;
        while self.at(stop_pos) == b'\n' {
            let (next, empty) = self.after_break(stop_pos);
            let Some((cp, ind)) = next else { break };
            let c = self.at(cp);
            if matches!(c, b',' | b']' | b'}') {
                break;
            }
            if ind as isize <= n || is_indicator(c) {
                return None;
            }
            let (stop2, end2) = self.flow_plain_line(cp)?;
            let text = folded.get_or_insert_with(|| {
                self.src
                    .get(start..start + end)
                    .unwrap_or_default()
                    .to_string()
            });
            push_fold(text, empty);
            text.push_str(self.src.get(cp..cp + end2)?);
            stop_pos = cp + stop2;
        }
        match folded {
            None => self.plain_scalar(p, start, start + end)?,
            Some(text) => {
                let implicit = p.tag.is_none();
                self.b
                    .scalar(p.anchor, p.tag, text, LyStyle::Plain, implicit, 0)
                    .ok()?;
            }
        }
        self.pos = stop_pos;
        if self.at(self.pos) == b'\n' {
            // The scalar ends here: what follows must close or continue the collection.
            self.flow_ws(n)?;
            if !matches!(self.at(self.pos), b',' | b']' | b'}') {
                return None;
            }
        }
        Some(())
    }

    /// One line of a flow plain scalar from `from`: where it stops (at `,[]{}` or the line
    /// end) and its length without trailing spaces. `:` and ` #` are left to libyaml.
    fn flow_plain_line(&self, from: usize) -> Option<(usize, usize)> {
        let rest = self.s.get(from..)?;
        let mut stop = rest.len();
        for (i, &b) in rest.iter().enumerate() {
            match b {
                b',' | b'[' | b']' | b'{' | b'}' | b'\n' => {
                    stop = i;
                    break;
                }
                b':' => return None,
                b'#' if i > 0 && rest[i - 1] == b' ' => return None,
                _ => {}
            }
        }
        let mut end = stop;
        while end > 0 && rest[end - 1] == b' ' {
            end -= 1;
        }
        Some((stop, end))
    }
}

/// Appends the folding of a line break followed by `empty` empty lines.
fn push_fold(text: &mut String, empty: usize) {
    if empty == 0 {
        text.push(' ');
    } else {
        for _ in 0..empty {
            text.push('\n');
        }
    }
}

/// Limits for the placeholder builder swapped in when the real one is finished.
static DUMMY_LIMITS: YamlLimits = YamlLimits {
    max_depth: 0,
    max_alias_expansion: 0,
};
