//! The generated items and their text, laid out as rustfmt lays them out (edition 2021,
//! default settings), so the output passes `rustfmt --check` without running rustfmt.

use std::fmt::Write as _;

/// rustfmt's default `max_width`.
const MAX_WIDTH: usize = 100;

/// A tag and the pattern of tags read (`#[asdf(tag, tag_pattern)]`).
#[derive(Debug, Clone)]
pub(crate) struct TagAttr {
    pub tag: String,
    pub pattern: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub ident: String,
    pub rename: Option<String>,
    pub docs: Vec<String>,
    pub ty: String,
    pub keep_null: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Variant {
    pub name: String,
    pub rename: Option<String>,
    /// The type of a newtype variant; `None` for a unit variant.
    pub ty: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Struct {
        tag: Option<TagAttr>,
        fields: Vec<Field>,
        /// The name of the `#[asdf(extra)]` field, when the schema allows other keys.
        extra: Option<String>,
    },
    Newtype {
        tag: Option<TagAttr>,
        ty: String,
    },
    Alias {
        ty: String,
    },
    Enum {
        variants: Vec<Variant>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub name: String,
    pub docs: Vec<String>,
    pub kind: Kind,
}

/// A string literal.
fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// Doc comment lines: trailing spaces removed (rustfmt), leading ones too (an indented
/// line would be a doctest), code fences defused for the same reason.
fn docs(out: &mut String, ind: &str, lines: &[String]) {
    // no blank doc lines at the start or the end
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let end = lines.iter().rposition(|l| !l.trim().is_empty());
    let (Some(start), Some(end)) = (start, end) else {
        return;
    };
    let mut blank = false;
    for line in &lines[start..=end] {
        let text = line.trim().replace("```", "'''").replace('\t', " ");
        if text.is_empty() {
            if blank {
                continue;
            }
            blank = true;
            let _ = writeln!(out, "{ind}///");
        } else {
            blank = false;
            let _ = writeln!(out, "{ind}/// {text}");
        }
    }
}

/// `#[asdf(a, b)]`, broken over lines as rustfmt does when it is wider than the limit.
fn attr(out: &mut String, ind: &str, args: &[String]) {
    if args.is_empty() {
        return;
    }
    let one = format!("{ind}#[asdf({})]", args.join(", "));
    if one.len() <= MAX_WIDTH {
        let _ = writeln!(out, "{one}");
        return;
    }
    let _ = writeln!(out, "{ind}#[asdf(");
    for (i, a) in args.iter().enumerate() {
        let comma = if i + 1 < args.len() { "," } else { "" };
        let _ = writeln!(out, "{ind}    {a}{comma}");
    }
    let _ = writeln!(out, "{ind})]");
}

fn tag_args(tag: &Option<TagAttr>) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(t) = tag {
        args.push(format!("tag = {}", lit(&t.tag)));
        if let Some(p) = &t.pattern {
            args.push(format!("tag_pattern = {}", lit(p)));
        }
    }
    args
}

const DERIVE: &str = "#[derive(Debug, Clone, PartialEq, asdf_core::AsdfType)]";

/// One item at indentation `ind`.
pub(crate) fn item(out: &mut String, ind: &str, item: &Item) {
    docs(out, ind, &item.docs);
    let name = &item.name;
    match &item.kind {
        Kind::Alias { ty } => {
            let _ = writeln!(out, "{ind}pub type {name} = {ty};");
        }
        Kind::Newtype { tag, ty } => {
            let _ = writeln!(out, "{ind}{DERIVE}");
            attr(out, ind, &tag_args(tag));
            let _ = writeln!(out, "{ind}pub struct {name}(pub {ty});");
        }
        Kind::Struct { tag, fields, extra } => {
            let _ = writeln!(out, "{ind}{DERIVE}");
            attr(out, ind, &tag_args(tag));
            if fields.is_empty() && extra.is_none() {
                let _ = writeln!(out, "{ind}pub struct {name} {{}}");
                return;
            }
            let _ = writeln!(out, "{ind}pub struct {name} {{");
            let inner = format!("{ind}    ");
            for f in fields {
                docs(out, &inner, &f.docs);
                let mut args = Vec::new();
                if let Some(r) = &f.rename {
                    args.push(format!("rename = {}", lit(r)));
                }
                if f.keep_null {
                    args.push("keep_null".to_string());
                }
                attr(out, &inner, &args);
                field_line(out, &inner, &f.ident, &f.ty);
            }
            if let Some(e) = extra {
                let _ = writeln!(
                    out,
                    "{inner}/// The keys the schema does not name, kept so that nothing read is lost on write."
                );
                let _ = writeln!(out, "{inner}#[asdf(extra)]");
                field_line(out, &inner, e, "asdf_core::convert::Extra");
            }
            let _ = writeln!(out, "{ind}}}");
        }
        Kind::Enum { variants } => {
            let _ = writeln!(out, "{ind}{DERIVE}");
            let _ = writeln!(out, "{ind}pub enum {name} {{");
            let inner = format!("{ind}    ");
            for v in variants {
                if let Some(r) = &v.rename {
                    attr(out, &inner, &[format!("rename = {}", lit(r))]);
                }
                match &v.ty {
                    Some(ty) => {
                        let _ = writeln!(out, "{inner}{}({ty}),", v.name);
                    }
                    None => {
                        let _ = writeln!(out, "{inner}{},", v.name);
                    }
                }
            }
            let _ = writeln!(out, "{ind}}}");
        }
    }
}

/// `pub ident: Ty,`; a type too wide for the line is broken at its outermost `<...>` as
/// rustfmt does.
fn field_line(out: &mut String, ind: &str, ident: &str, ty: &str) {
    let one = format!("{ind}pub {ident}: {ty},");
    if one.len() <= MAX_WIDTH {
        let _ = writeln!(out, "{one}");
        return;
    }
    if let (Some(open), true) = (ty.find('<'), ty.ends_with('>')) {
        let head = &ty[..=open];
        let body = &ty[open + 1..ty.len() - 1];
        let _ = writeln!(out, "{ind}pub {ident}: {head}");
        let _ = writeln!(out, "{ind}    {body},");
        let _ = writeln!(out, "{ind}>,");
        return;
    }
    let _ = writeln!(out, "{one}");
}
