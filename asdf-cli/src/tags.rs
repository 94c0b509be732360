//! `asdftool tags [FILE]`: the tags a file uses and what validates them (or every tag a
//! standard knows); `asdftool schema TAG`: a bundled schema's text.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use asdf_core::schema::bundled;
use asdf_core::{Node, Value};

const ASDF_PREFIX: &str = "tag:stsci.edu:asdf/";
const SCHEMA_PREFIX: &str = "http://stsci.edu/schemas/asdf/";

/// The standard versions that map `tag` to a schema, oldest first.
fn standards_of(tag: &str) -> Vec<&'static str> {
    bundled::standards()
        .iter()
        .copied()
        .filter(|s| bundled::schema_for_tag(s, tag).is_some())
        .collect()
}

/// A range of standard versions as text (`1.1.0`, `1.0.0 to 1.5.0`).
fn range(versions: &[&str]) -> String {
    match versions {
        [] => String::new(),
        [one] => (*one).to_string(),
        [first, .., last] => format!("{first} to {last}"),
    }
}

/// One line per distinct tag of the file (tree order), with its node count and status; or,
/// without a file, every tag of `standard` (default: the newest) with its schema.
pub fn run(
    access: &crate::Access,
    file: Option<&Path>,
    standard: Option<&str>,
) -> Result<String, String> {
    if let Some(s) = standard {
        if !bundled::standards().contains(&s) {
            return Err(format!(
                "unknown ASDF Standard {s:?} (known: {})",
                bundled::standards().join(", ")
            ));
        }
    }
    let Some(path) = file else {
        let std = standard.unwrap_or_else(|| bundled::standards().last().copied().unwrap_or(""));
        let mut out = String::new();
        for (tag, schema) in bundled::tags(std) {
            let _ = writeln!(out, "{tag}  {schema}");
        }
        return Ok(out);
    };
    let f = access.open(path)?;
    let std = standard.map_or_else(|| f.standard_version().to_string(), str::to_string);
    // tag -> (first seen order, count)
    let mut seen: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut ancestors = Vec::new();
    collect(f.tree(), &mut seen, &mut ancestors);
    let mut tags: Vec<(String, usize, usize)> =
        seen.into_iter().map(|(t, (o, n))| (t, o, n)).collect();
    tags.sort_by_key(|(_, order, _)| *order);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} tag{} (ASDF Standard {std})",
        path.display(),
        tags.len(),
        if tags.len() == 1 { "" } else { "s" }
    );
    for (tag, _, count) in tags {
        let status = status(&std, &tag);
        let nodes = if count == 1 { "node" } else { "nodes" };
        let _ = writeln!(out, "{tag}  ({count} {nodes})  {status}");
    }
    Ok(out)
}

/// What validates nodes with `tag` under `std`.
fn status(std: &str, tag: &str) -> String {
    if let Some(id) = bundled::schema_for_tag(std, tag) {
        return format!("validated: {id}");
    }
    if tag.starts_with("tag:yaml.org,2002:") {
        return "YAML type".to_string();
    }
    let others = standards_of(tag);
    if !others.is_empty() {
        return format!(
            "not validated: no schema under standard {std} (standard {} has one)",
            range(&others)
        );
    }
    if let Some(name) = tag.strip_prefix(ASDF_PREFIX) {
        let id = format!("{SCHEMA_PREFIX}{name}");
        if bundled::schema_text(&id).is_some() {
            return format!("not validated: schema {id} is bundled but no standard maps the tag");
        }
        return "not validated: unknown ASDF tag (no bundled schema)".to_string();
    }
    "not validated: tag of an extension (no bundled schema)".to_string()
}

fn collect(node: &Node, seen: &mut BTreeMap<String, (usize, usize)>, ancestors: &mut Vec<usize>) {
    if ancestors.contains(&node.id()) {
        return;
    }
    if let Some(t) = node.tag() {
        let order = seen.len();
        seen.entry(t.to_string()).or_insert((order, 0)).1 += 1;
    }
    ancestors.push(node.id());
    match node.value() {
        Value::Seq(items) => items.iter().for_each(|n| collect(n, seen, ancestors)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            collect(k, seen, ancestors);
            collect(v, seen, ancestors);
        }),
        _ => {}
    }
    ancestors.pop();
}

/// The text of the bundled schema for `name`: a schema id (`http://stsci.edu/schemas/...`),
/// a tag (`tag:stsci.edu:asdf/core/ndarray-1.1.0`, `core/ndarray-1.1.0`, `!core/ndarray-1.1.0`)
/// or a tag without its version (`core/ndarray`: the newest).
pub fn schema(name: &str, standard: Option<&str>) -> Result<String, String> {
    let name = name.trim().trim_start_matches('!');
    if name.starts_with("http://") || name.starts_with("https://") {
        return bundled::schema_text(name)
            .map(str::to_string)
            .ok_or_else(|| format!("no bundled schema {name}"));
    }
    let tag = if name.starts_with("tag:") {
        name.to_string()
    } else {
        format!("{ASDF_PREFIX}{name}")
    };
    let stds: Vec<&str> = match standard {
        Some(s) if bundled::standards().contains(&s) => vec![s],
        Some(s) => {
            return Err(format!(
                "unknown ASDF Standard {s:?} (known: {})",
                bundled::standards().join(", ")
            ))
        }
        None => bundled::standards().iter().rev().copied().collect(),
    };
    // exact tag, newest standard first
    for s in &stds {
        if let Some(id) = bundled::schema_for_tag(s, &tag) {
            if let Some(text) = bundled::schema_text(id) {
                return Ok(text.to_string());
            }
        }
    }
    // a tag without its version: the newest version a standard maps
    let prefix = format!("{tag}-");
    for s in &stds {
        let newest = bundled::tags(s)
            .filter(|(t, _)| {
                t.strip_prefix(&prefix)
                    .is_some_and(|v| v.split('.').all(|p| p.parse::<u32>().is_ok()))
            })
            .max_by_key(|(t, _)| version_key(&t[prefix.len()..]));
        if let Some((_, id)) = newest {
            if let Some(text) = bundled::schema_text(id) {
                return Ok(text.to_string());
            }
        }
    }
    // a bundled schema no standard maps (by the tag's name)
    if let Some(rest) = tag.strip_prefix(ASDF_PREFIX) {
        if let Some(text) = bundled::schema_text(&format!("{SCHEMA_PREFIX}{rest}")) {
            return Ok(text.to_string());
        }
    }
    Err(match standard {
        Some(s) => format!("no bundled schema for {tag} under ASDF Standard {s}"),
        None => format!("no bundled schema for {tag} (`asdftool tags` lists the known tags)"),
    })
}

fn version_key(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}
