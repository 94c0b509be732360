//! [`StandardVersion`]: the version of the ASDF Standard a file states and a writer writes.

use std::borrow::Cow;
use std::cmp::Ordering;

/// Version of the ASDF Standard: the one a file states ([`AsdfFile::standard_version`]) and
/// the one a [`Writer`] writes for ([`WriteOptions::standard`]), which selects the tags.
///
/// The versions this library knows are the constants [`V1_0_0`](Self::V1_0_0) to
/// [`V1_7_0`](Self::V1_7_0) (all of them in [`StandardVersion::ALL`]); the default is
/// [`V1_6_0`](Self::V1_6_0), the latest stable one (1.7.0 is still in development: python
/// asdf 6.0.0 reads and writes it only with `ASDF_UNSTABLE_CORE_SCHEMAS=1`). A file may state
/// another one (a later standard, `#ASDF_STANDARD 1.8.0`): it opens, and its version is
/// kept as its text, with [`known`](Self::known) `false`. The writer refuses to write an
/// unknown version ([`WriteError::UnknownStandard`]), since it does not know its tags.
///
/// Versions compare by their numbers (`1.10.0` is after `1.6.0`); two versions are equal
/// when their text is.
///
/// ```
/// use asdf_core::StandardVersion;
/// let v: StandardVersion = "1.5.0".parse()?;
/// assert_eq!(v, StandardVersion::V1_5_0);
/// assert!(v.known() && v < StandardVersion::V1_6_0);
///
/// let later = StandardVersion::parse("1.8.0")?;
/// assert!(!later.known());
/// assert_eq!(later.as_str(), "1.8.0");
/// assert!(later > StandardVersion::V1_7_0);
///
/// assert!(StandardVersion::parse("1.6").is_err());
/// # Ok::<(), asdf_core::write::ParseStandardVersionError>(())
/// ```
///
/// [`AsdfFile::standard_version`]: crate::AsdfFile::standard_version
/// [`Writer`]: crate::Writer
/// [`WriteOptions::standard`]: crate::WriteOptions::standard
/// [`WriteError::UnknownStandard`]: crate::WriteError::UnknownStandard
// One struct rather than an enum of the known versions plus an `Unknown(String)` variant:
// the text is the only representation, so `1.6.0` cannot exist both as a known variant and
// as an unknown one, and equality, hashing and ordering need no special cases.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StandardVersion(Cow<'static, str>);

/// The text given to [`StandardVersion::parse`] is not a version (`MAJOR.MINOR.PATCH`, each
/// part decimal digits).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an ASDF Standard version (MAJOR.MINOR.PATCH): {0:?}")]
pub struct ParseStandardVersionError(pub String);

impl StandardVersion {
    /// 1.0.0: root `core/asdf-1.0.0`, `ndarray-1.0.0`, no extension history.
    pub const V1_0_0: StandardVersion = StandardVersion(Cow::Borrowed("1.0.0"));
    /// 1.1.0: as 1.0.0.
    pub const V1_1_0: StandardVersion = StandardVersion(Cow::Borrowed("1.1.0"));
    /// 1.2.0: root `core/asdf-1.1.0`, `ndarray-1.0.0`, `history.extensions`.
    pub const V1_2_0: StandardVersion = StandardVersion(Cow::Borrowed("1.2.0"));
    /// 1.3.0: as 1.2.0.
    pub const V1_3_0: StandardVersion = StandardVersion(Cow::Borrowed("1.3.0"));
    /// 1.4.0: as 1.2.0.
    pub const V1_4_0: StandardVersion = StandardVersion(Cow::Borrowed("1.4.0"));
    /// 1.5.0: as 1.2.0.
    pub const V1_5_0: StandardVersion = StandardVersion(Cow::Borrowed("1.5.0"));
    /// 1.6.0 (the default): root `core/asdf-1.1.0`, `ndarray-1.1.0`.
    pub const V1_6_0: StandardVersion = StandardVersion(Cow::Borrowed("1.6.0"));
    /// 1.7.0 (in development; written only on request): as 1.6.0 but `ndarray-1.2.0` and
    /// `integer-1.2.0`, whose element types are described by `datatype-1.0.0`.
    pub const V1_7_0: StandardVersion = StandardVersion(Cow::Borrowed("1.7.0"));

    /// Every version this library knows (and writes), oldest first.
    pub const ALL: [StandardVersion; 8] = [
        StandardVersion::V1_0_0,
        StandardVersion::V1_1_0,
        StandardVersion::V1_2_0,
        StandardVersion::V1_3_0,
        StandardVersion::V1_4_0,
        StandardVersion::V1_5_0,
        StandardVersion::V1_6_0,
        StandardVersion::V1_7_0,
    ];

    /// The version as text: `1.6.0`, or an unknown version as it was parsed.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parses `MAJOR.MINOR.PATCH` (decimal digits, no spaces). A version this library
    /// does not know is kept as given ([`known`](Self::known) is `false`); any other text is
    /// an error.
    pub fn parse(s: &str) -> Result<StandardVersion, ParseStandardVersionError> {
        if let Some(v) = Self::ALL.iter().find(|v| v.as_str() == s) {
            return Ok(v.clone());
        }
        let parts: Vec<&str> = s.split('.').collect();
        let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if parts.len() == 3 && parts.iter().all(numeric) {
            Ok(StandardVersion(Cow::Owned(s.to_string())))
        } else {
            Err(ParseStandardVersionError(s.to_string()))
        }
    }

    /// Whether this library knows the version (it is one of [`StandardVersion::ALL`]): it
    /// can write it, and its schemas are bundled.
    pub fn known(&self) -> bool {
        Self::ALL.contains(self)
    }

    /// The root tag (`core/asdf-1.0.0` before 1.2.0, `core/asdf-1.1.0` after).
    pub(crate) fn root_tag(&self) -> String {
        let v = if *self < StandardVersion::V1_2_0 {
            "1.0.0"
        } else {
            "1.1.0"
        };
        format!("{}core/asdf-{v}", crate::write::nodes::ASDF)
    }

    /// The ndarray tag (`ndarray-1.1.0` from 1.6.0 on, `ndarray-1.2.0` from 1.7.0 on).
    pub(crate) fn ndarray_tag(&self) -> String {
        format!(
            "{}core/ndarray-{}",
            crate::write::nodes::ASDF,
            self.array_tag_version()
        )
    }

    /// The version of the `ndarray` and `integer` tags, which move together: `1.0.0` before
    /// 1.6.0, `1.1.0` in 1.6.0, `1.2.0` from 1.7.0.
    pub(crate) fn array_tag_version(&self) -> &'static str {
        if *self < StandardVersion::V1_6_0 {
            "1.0.0"
        } else if *self < StandardVersion::V1_7_0 {
            "1.1.0"
        } else {
            "1.2.0"
        }
    }

    /// Whether `history` is a mapping with `extensions` (1.2.0 on) rather than a list.
    pub(crate) fn has_extension_history(&self) -> bool {
        *self >= StandardVersion::V1_2_0
    }

    /// The core extension's URI recorded in `history.extensions`.
    pub(crate) fn extension_uri(&self) -> String {
        format!(
            "asdf://asdf-format.org/core/extensions/core-{}",
            self.as_str()
        )
    }
}

impl Default for StandardVersion {
    /// [`StandardVersion::V1_6_0`].
    fn default() -> Self {
        StandardVersion::V1_6_0
    }
}

impl std::fmt::Display for StandardVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for StandardVersion {
    type Err = ParseStandardVersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StandardVersion::parse(s)
    }
}

impl PartialEq<str> for StandardVersion {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for StandardVersion {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for StandardVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for StandardVersion {
    /// By number, part by part (`1.10.0 > 1.6.0`); versions whose numbers are equal but
    /// written differently (`1.06.0`) are ordered by their text, so that `Ord` agrees with
    /// `Eq`.
    fn cmp(&self, other: &Self) -> Ordering {
        let a = self.as_str().split('.');
        let b = other.as_str().split('.');
        a.zip(b)
            .map(|(x, y)| numeric_cmp(x, y))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
            .then_with(|| self.as_str().cmp(other.as_str()))
    }
}

/// Compares two strings of decimal digits as numbers of any length.
fn numeric_cmp(x: &str, y: &str) -> Ordering {
    let x = x.trim_start_matches('0');
    let y = y.trim_start_matches('0');
    x.len().cmp(&y.len()).then_with(|| x.cmp(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_versions_parse_to_the_constants() {
        for v in StandardVersion::ALL {
            assert_eq!(StandardVersion::parse(v.as_str()), Ok(v.clone()));
            assert!(v.known());
        }
        assert_eq!(
            "1.4.0".parse::<StandardVersion>(),
            Ok(StandardVersion::V1_4_0)
        );
        assert_eq!(StandardVersion::default(), StandardVersion::V1_6_0);
    }

    #[test]
    fn unknown_versions_keep_their_text() {
        let v = StandardVersion::parse("1.8.0").unwrap();
        assert!(!v.known());
        assert_eq!(v.to_string(), "1.8.0");
        assert_eq!(v, "1.8.0");
        assert_ne!(v, StandardVersion::V1_7_0);
        // leading zeros are another text of the same numbers: not the known version
        let padded = StandardVersion::parse("1.06.0").unwrap();
        assert!(!padded.known());
        assert_ne!(padded, StandardVersion::V1_6_0);
    }

    #[test]
    fn text_that_is_not_a_version_is_an_error() {
        for bad in [
            "", "1.6", "1.6.0.0", "1.6.x", " 1.6.0", "1..0", "v1.6.0", "-1.0.0",
        ] {
            assert_eq!(
                StandardVersion::parse(bad),
                Err(ParseStandardVersionError(bad.to_string())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn versions_order_by_number() {
        let p = |s| StandardVersion::parse(s).unwrap();
        let mut all = StandardVersion::ALL.to_vec();
        all.reverse();
        all.sort();
        assert_eq!(all, StandardVersion::ALL.to_vec());
        assert!(p("1.10.0") > StandardVersion::V1_6_0);
        assert!(p("2.0.0") > p("1.99.99"));
        assert!(p("0.9.0") < StandardVersion::V1_0_0);
        assert!(p("100000000000000000000000.0.0") > p("99999999999999999999999.0.0"));
        // equal numbers, other text: ordered, never Equal
        assert_ne!(p("1.06.0").cmp(&StandardVersion::V1_6_0), Ordering::Equal);
        assert_eq!(p("1.7.0").cmp(&p("1.7.0")), Ordering::Equal);
    }

    #[test]
    fn array_tags_follow_the_manifests() {
        // core-1.5.0: ndarray-1.0.0, core-1.6.0: ndarray-1.1.0, core-1.7.0: ndarray-1.2.0
        // (python asdf's asdf_standard 1.5.0 manifests); integer moves with ndarray.
        let v = |s: &str| StandardVersion::parse(s).unwrap().array_tag_version();
        assert_eq!(v("1.0.0"), "1.0.0");
        assert_eq!(v("1.5.0"), "1.0.0");
        assert_eq!(v("1.6.0"), "1.1.0");
        assert_eq!(v("1.7.0"), "1.2.0");
        assert_eq!(
            StandardVersion::V1_7_0.ndarray_tag(),
            "tag:stsci.edu:asdf/core/ndarray-1.2.0"
        );
        assert!(StandardVersion::V1_7_0.known());
        assert_eq!(StandardVersion::default(), StandardVersion::V1_6_0);
    }
}
