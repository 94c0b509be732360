//! Rust names from schema ids, property keys and enum values.

/// Words of a name: runs of ASCII letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// `wfi_image` -> `WfiImage`, `MSOS` -> `Msos`, `ExposureType` -> `ExposureType`. A name
/// starting with a digit gets a leading `T`; an empty one is `Unnamed`.
pub(crate) fn camel(text: &str) -> String {
    let mut out = String::new();
    for word in words(text) {
        let all_upper = word.chars().all(|c| !c.is_ascii_lowercase());
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            for c in chars {
                out.push(if all_upper { c.to_ascii_lowercase() } else { c });
            }
        }
    }
    if out.is_empty() {
        return "Unnamed".to_string();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    if out == "Self" {
        out.push('_');
    }
    out
}

/// Rust keywords (strict and reserved), which a field is never named.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// `FileDate` -> `file_date`, `2d-shape` -> `f_2d_shape`, `type` -> `type_`.
pub(crate) fn snake(text: &str) -> String {
    let mut out = String::new();
    for word in words(text) {
        if !out.is_empty() {
            out.push('_');
        }
        let mut prev_lower = false;
        for c in word.chars() {
            if c.is_ascii_uppercase() && prev_lower {
                out.push('_');
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        }
    }
    if out.is_empty() {
        return "field".to_string();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "f_");
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// `name` made unique among `taken` by a number after it (`Name2`, `Name3`, ...).
pub(crate) fn unique(name: String, taken: &mut std::collections::HashSet<String>) -> String {
    if taken.insert(name.clone()) {
        return name;
    }
    let sep = if name.ends_with(|c: char| c.is_ascii_digit()) {
        "_"
    } else {
        ""
    };
    for n in 2.. {
        let candidate = format!("{name}{sep}{n}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
    }
    unreachable!("an unbounded range always finds a free name")
}

/// Splits `.../wfi_image-2.2.0` into (`.../wfi_image`, `Some("2.2.0")`); an id whose last
/// segment ends in no `-N.N.N` version keeps all of it.
pub(crate) fn split_version(id: &str) -> (&str, Option<&str>) {
    let last = id.rfind(['/', ':']).map_or(0, |i| i + 1);
    if let Some(dash) = id[last..].rfind('-') {
        let version = &id[last + dash + 1..];
        let numeric = !version.is_empty()
            && version
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if numeric {
            return (&id[..last + dash], Some(version));
        }
    }
    (id, None)
}

/// A version's numbers, for ordering (`1.10.0` after `1.9.0`).
pub(crate) fn version_key(version: Option<&str>) -> Vec<u64> {
    version
        .map(|v| v.split('.').map(|p| p.parse().unwrap_or(0)).collect())
        .unwrap_or_default()
}

/// A tag's pattern over its major version: `.../tags/x-2.2.0` -> `.../tags/x-2.*`.
pub(crate) fn major_pattern(tag: &str) -> Option<String> {
    let (base, version) = split_version(tag);
    let major = version?.split('.').next()?;
    Some(format!("{base}-{major}.*"))
}

/// The segments of an id's path, without its scheme, host and version.
pub(crate) fn path_segments(family: &str) -> Vec<&str> {
    let rest = family.split_once("://").map_or(family, |(_, r)| r);
    let rest = rest.strip_prefix("tag:").unwrap_or(rest);
    rest.split(['/', ':']).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(camel("wfi_image"), "WfiImage");
        assert_eq!(camel("MSOS"), "Msos");
        assert_eq!(camel("ExposureType"), "ExposureType");
        assert_eq!(camel("global+match"), "GlobalMatch");
        assert_eq!(camel("2d"), "T2d");
        assert_eq!(camel(""), "Unnamed");
        assert_eq!(camel("self"), "Self_");
        assert_eq!(snake("FileDate"), "file_date");
        assert_eq!(snake("2d-shape"), "f_2d_shape");
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("ra_ref"), "ra_ref");
    }

    #[test]
    fn versions() {
        assert_eq!(
            split_version("asdf://x.org/schemas/wfi_image-2.2.0"),
            ("asdf://x.org/schemas/wfi_image", Some("2.2.0"))
        );
        assert_eq!(
            split_version("asdf://x.org/schemas/no-version"),
            ("asdf://x.org/schemas/no-version", None)
        );
        assert!(version_key(Some("1.10.0")) > version_key(Some("1.9.0")));
        assert_eq!(
            major_pattern("asdf://x.org/tags/a-2.2.0").as_deref(),
            Some("asdf://x.org/tags/a-2.*")
        );
        let mut taken = Default::default();
        assert_eq!(unique("A".into(), &mut taken), "A");
        assert_eq!(unique("A".into(), &mut taken), "A2");
        assert_eq!(unique("V1".into(), &mut taken), "V1");
        assert_eq!(unique("V1".into(), &mut taken), "V1_2");
    }
}
