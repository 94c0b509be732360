//! `asdftool search FILE [PATTERN] [--type T] [--value V]`: the nodes whose key, type or
//! value match, one line each, as python asdf's `AsdfFile.search` selects them.

use std::path::Path;

use asdf_core::{AsdfFile, Node, Value};
use regex::Regex;

use crate::summary::{array_summary, short_tag};
use crate::tree::{cut, push_pointer_segment, scalar_text};

/// What a node must match (every given criterion).
pub struct Query {
    /// Regular expression searched in the node's key (or sequence index).
    pub key: Option<String>,
    /// Regular expression searched in the node's type names: its tag (`core/ndarray-1.1.0`,
    /// full or short), `ndarray`, and its YAML kind in YAML's and python's words
    /// (`mapping`/`dict`, `sequence`/`list`, `string`/`str`, `integer`/`int`, `float`,
    /// `boolean`/`bool`, `null`/`NoneType`, `timestamp`/`datetime`, `binary`/`bytes`).
    pub type_: Option<String>,
    /// A value: a number, `true`, `false` or `null` compares equal; anything else is a
    /// regular expression searched in a scalar's text. Collections never match a value.
    pub value: Option<String>,
}

enum ValueQuery {
    Int(i128),
    Float(f64),
    Bool(bool),
    Null,
    Text(Regex),
}

fn regex(what: &str, text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|e| {
        let first = e.to_string();
        let last = first.lines().last().unwrap_or("").trim().to_string();
        format!("{what} {text:?} is not a regular expression: {last}")
    })
}

/// The matching nodes of `file`, one line each (`PATH TYPE: VALUE`).
pub fn run(access: &crate::Access, path: &Path, q: &Query) -> Result<Vec<String>, String> {
    let key = q.key.as_deref().map(|k| regex("PATTERN", k)).transpose()?;
    let type_ = q.type_.as_deref().map(|t| regex("--type", t)).transpose()?;
    let value = match q.value.as_deref() {
        None => None,
        Some("true") => Some(ValueQuery::Bool(true)),
        Some("false") => Some(ValueQuery::Bool(false)),
        Some("null") => Some(ValueQuery::Null),
        Some(v) => Some(if let Ok(i) = v.parse::<i128>() {
            ValueQuery::Int(i)
        } else if let Some(f) = v.parse::<f64>().ok().filter(|_| looks_numeric(v)) {
            ValueQuery::Float(f)
        } else {
            ValueQuery::Text(regex("--value", v)?)
        }),
    };
    let file = access.open(path)?;
    let mut s = Search {
        file: &file,
        key,
        type_,
        value,
        ancestors: Vec::new(),
        out: Vec::new(),
    };
    s.visit(file.tree(), None, &mut String::new());
    Ok(s.out)
}

fn looks_numeric(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
}

struct Search<'a> {
    file: &'a AsdfFile,
    key: Option<Regex>,
    type_: Option<Regex>,
    value: Option<ValueQuery>,
    ancestors: Vec<usize>,
    out: Vec<String>,
}

/// A node's kind in YAML's and python's words.
fn kind_names(v: &Value) -> [&'static str; 2] {
    match v {
        Value::Null => ["null", "NoneType"],
        Value::Bool(_) => ["boolean", "bool"],
        Value::Int(_) => ["integer", "int"],
        Value::Float(_) => ["float", "float"],
        Value::Str(_) => ["string", "str"],
        Value::Timestamp(_) => ["timestamp", "datetime"],
        Value::Binary(_) => ["binary", "bytes"],
        Value::Seq(_) => ["sequence", "list"],
        Value::Map(_) => ["mapping", "dict"],
        Value::Recursive(_) => ["recursive", "recursive"],
    }
}

impl Search<'_> {
    fn matches(&self, node: &Node, key: Option<&str>) -> bool {
        if let Some(re) = &self.key {
            match key {
                Some(k) if re.is_match(k) => {}
                _ => return false,
            }
        }
        if let Some(re) = &self.type_ {
            let kinds = kind_names(node.value());
            let tagged = node
                .tag()
                .is_some_and(|t| re.is_match(t) || re.is_match(short_tag(t)));
            let nd = node.is_ndarray()
                && ["ndarray", "numpy.ndarray", "NDArrayType"]
                    .iter()
                    .any(|n| re.is_match(n));
            if !(tagged || nd || kinds.iter().any(|k| re.is_match(k))) {
                return false;
            }
        }
        if let Some(vq) = &self.value {
            let v = node.value();
            let ok = match (vq, v) {
                (_, Value::Seq(_) | Value::Map(_) | Value::Recursive(_)) => false,
                (ValueQuery::Int(i), Value::Int(n)) => n.as_i128() == Some(*i),
                (ValueQuery::Int(i), Value::Float(f)) => *f == *i as f64,
                (ValueQuery::Float(x), Value::Float(f)) => f == x,
                (ValueQuery::Float(x), Value::Int(n)) => n.as_i128().map(|n| n as f64) == Some(*x),
                (ValueQuery::Bool(b), Value::Bool(c)) => b == c,
                (ValueQuery::Null, Value::Null) => true,
                (ValueQuery::Text(re), Value::Str(s)) => re.is_match(s),
                (ValueQuery::Text(re), other) => re.is_match(&plain_text(other)),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn visit(&mut self, node: &Node, key: Option<&str>, path: &mut String) {
        if self.ancestors.contains(&node.id()) {
            return;
        }
        if (key.is_some() || self.key.is_none()) && self.matches(node, key) {
            let line = self.line(node, path);
            self.out.push(line);
        }
        if crate::summary::is_array(node) {
            return; // an array is a leaf: its descriptor's keys are not nodes of the data
        }
        self.ancestors.push(node.id());
        let len = path.len();
        match node.value() {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let k = i.to_string();
                    path.push('/');
                    path.push_str(&k);
                    self.visit(item, Some(&k), path);
                    path.truncate(len);
                }
            }
            Value::Map(entries) => {
                for (k, v) in entries {
                    let k = crate::tree::key_text(k);
                    path.push('/');
                    push_pointer_segment(path, &k);
                    self.visit(v, Some(&k), path);
                    path.truncate(len);
                }
            }
            _ => {}
        }
        self.ancestors.pop();
    }

    fn line(&self, node: &Node, path: &str) -> String {
        let p = if path.is_empty() { "/" } else { path };
        let ty = match node.tag() {
            Some(t) => format!("!{}", short_tag(t)),
            None => kind_names(node.value())[0].to_string(),
        };
        if crate::summary::is_array(node) {
            return format!("{p} {ty} {}", array_summary(self.file, node, path));
        }
        match node.value() {
            Value::Seq(items) => format!("{p} {ty} ({} items)", items.len()),
            Value::Map(entries) => format!("{p} {ty} ({} keys)", entries.len()),
            other => format!("{p} {ty}: {}", cut(scalar_text(other), 60)),
        }
    }
}

/// A scalar's text as a pattern sees it (strings unquoted).
fn plain_text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        other => scalar_text(other),
    }
}
