//! `view`'s answers and the query of a request: [`HttpError`] (a status and one line),
//! [`Reply`] (a content type and a body), [`Params`] (the checked query parameters); the
//! route modules (`routes`, `files`, `preview`, `stats`) build on these.

use serde::Serialize;

use crate::tree_json::Spaced;

/// An answer that is not a success: a status and one line.
#[derive(Debug)]
pub struct HttpError {
    pub status: u16,
    pub message: String,
}

impl HttpError {
    pub fn new(status: u16, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(m: impl Into<String>) -> HttpError {
        HttpError::new(400, m)
    }
    pub fn forbidden(m: impl Into<String>) -> HttpError {
        HttpError::new(403, m)
    }
    pub fn not_found(m: impl Into<String>) -> HttpError {
        HttpError::new(404, m)
    }
    pub fn too_large(m: impl Into<String>) -> HttpError {
        HttpError::new(413, m)
    }
    pub fn unprocessable(m: impl Into<String>) -> HttpError {
        HttpError::new(422, m)
    }
}

/// A successful answer: content type and body.
pub struct Reply {
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(value: &impl Serialize) -> Result<Reply, HttpError> {
        let mut body = Vec::with_capacity(4096);
        let mut ser = serde_json::Serializer::with_formatter(&mut body, Spaced);
        value
            .serialize(&mut ser)
            .map_err(|e| HttpError::new(500, format!("cannot write JSON: {e}")))?;
        Ok(Reply {
            content_type: "application/json",
            body,
        })
    }
}

/// The query's parameters, percent-decoded; a name given twice or an unknown one is a 400.
#[derive(Debug)]
pub struct Params(Vec<(String, String)>);

impl Params {
    const KNOWN: [&'static str; 8] = [
        "file", "path", "interval", "percent", "stretch", "cmap", "slice", "max_size",
    ];

    pub fn parse(query: &str) -> Result<Params, HttpError> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            if !Self::KNOWN.contains(&k.as_ref()) {
                return Err(HttpError::bad_request(format!("unknown parameter {k:?}")));
            }
            if out.iter().any(|(n, _)| *n == k) {
                return Err(HttpError::bad_request(format!(
                    "parameter {k:?} given twice"
                )));
            }
            if v.contains('\0') {
                return Err(HttpError::bad_request(format!(
                    "parameter {k:?} holds a NUL"
                )));
            }
            out.push((k.into_owned(), v.into_owned()));
        }
        Ok(Params(out))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn need(&self, name: &str) -> Result<&str, HttpError> {
        self.get(name)
            .ok_or_else(|| HttpError::bad_request(format!("parameter {name:?} missing")))
    }
}

/// A JSON pointer from the page: `""` or starting with `/`.
pub fn pointer(params: &Params) -> Result<&str, HttpError> {
    let p = params.need("path")?;
    if !(p.is_empty() || p.starts_with('/')) {
        return Err(HttpError::bad_request(format!(
            "path {p:?} is not a JSON pointer (it starts with /)"
        )));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters() {
        let p = Params::parse("file=a%20b.asdf&path=%2Fx%2F0").unwrap();
        assert_eq!(p.get("file"), Some("a b.asdf"));
        assert_eq!(p.get("path"), Some("/x/0"));
        assert_eq!(Params::parse("file=a&file=b").unwrap_err().status, 400);
        assert_eq!(Params::parse("evil=1").unwrap_err().status, 400);
        assert_eq!(Params::parse("file=a%00b").unwrap_err().status, 400);
    }
}
