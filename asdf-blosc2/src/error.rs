//! What can go wrong reading Blosc2 chunks and frames.

/// A Blosc2 chunk or frame that cannot be read or written. Offsets are bytes from the start
/// of the frame, or of the chunk when a chunk is read on its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ends before a structure it declares.
    #[error("truncated at byte {offset}: {what} needs {needed} bytes, {available} available")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where it starts.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// A field holds a value the format does not allow.
    #[error("bad {what} at byte {offset}: {detail}")]
    Malformed {
        /// The field.
        what: &'static str,
        /// Where it is.
        offset: u64,
        /// Why it is wrong.
        detail: String,
    },
    /// A codec this crate does not implement (plugin codecs such as ZFP, NDLZ, J2K): the
    /// message names the plugin, `Blosc2 codec ZFP_ACC (plugin id 33) is not supported`.
    #[error("{}", unsupported("codec", *.id, .name))]
    UnsupportedCodec {
        /// The codec id (format number in the chunk header, or the user-defined codec id:
        /// 32 to 159 for C-Blosc2's registered plugins, 160 on for users' own).
        id: u8,
        /// Its name when known (python-blosc2's name of a plugin: `NDLZ`, `ZFP_ACC`, ...).
        name: &'static str,
    },
    /// A filter this crate does not implement (user or plugin filters): the message names
    /// the plugin, `Blosc2 filter NDCELL (plugin id 32) is not supported`.
    #[error("{}", unsupported("filter", *.id, .name))]
    UnsupportedFilter {
        /// The filter id (32 to 159 for C-Blosc2's registered plugins, 160 on for users'
        /// own).
        id: u8,
        /// Its name when known (python-blosc2's name of a plugin: `NDCELL`, `NDMEAN`, ...).
        name: &'static str,
    },
    /// A feature of the format this crate does not read.
    #[error("unsupported Blosc2 feature at byte {offset}: {what}")]
    Unsupported {
        /// The feature.
        what: &'static str,
        /// Where it was met.
        offset: u64,
    },
    /// A compressed stream that does not decode to the size its block declares.
    #[error(
        "block {block} of the chunk: {codec} stream at byte {offset} does not decode: {detail}"
    )]
    Codec {
        /// Block index in the chunk.
        block: usize,
        /// The codec.
        codec: &'static str,
        /// Offset of the stream in the chunk.
        offset: u64,
        /// What the decoder said.
        detail: String,
    },
    /// A declared size above the limit the caller set.
    #[error("{what} of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its declared size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Reading a file failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        message: String,
    },
}

/// The message of an unsupported codec or filter: a plugin by its name and id.
fn unsupported(kind: &str, id: u8, name: &str) -> String {
    match id {
        32..=159 if name != "unregistered" => {
            format!("Blosc2 {kind} {name} (plugin id {id}) is not supported")
        }
        32..=159 => format!(
            "Blosc2 {kind} with plugin id {id} is not supported (no plugin C-Blosc2 registers)"
        ),
        160.. => format!("Blosc2 user-defined {kind} {id} is not supported"),
        _ => format!("unsupported Blosc2 {kind} {id} ({name})"),
    }
}

impl Error {
    pub(crate) fn malformed(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        Error::Malformed {
            what,
            offset,
            detail: detail.into(),
        }
    }

    /// The same error with chunk offsets moved by `by` (a chunk read inside a frame).
    pub fn shifted(self, by: u64) -> Self {
        match self {
            Error::Truncated {
                what,
                offset,
                needed,
                available,
            } => Error::Truncated {
                what,
                offset: offset + by,
                needed,
                available,
            },
            Error::Malformed {
                what,
                offset,
                detail,
            } => Error::Malformed {
                what,
                offset: offset + by,
                detail,
            },
            Error::Unsupported { what, offset } => Error::Unsupported {
                what,
                offset: offset + by,
            },
            Error::Codec {
                block,
                codec,
                offset,
                detail,
            } => Error::Codec {
                block,
                codec,
                offset: offset + by,
                detail,
            },
            e => e,
        }
    }
}

/// `bytes[at..at + n]`, or a [`Error::Truncated`] naming `what`.
pub(crate) fn slice<'a>(
    bytes: &'a [u8],
    at: u64,
    n: u64,
    what: &'static str,
) -> Result<&'a [u8], Error> {
    let len = bytes.len() as u64;
    match at.checked_add(n) {
        Some(end) if end <= len => Ok(&bytes[at as usize..end as usize]),
        _ => Err(Error::Truncated {
            what,
            offset: at,
            needed: n,
            available: len.saturating_sub(at),
        }),
    }
}
