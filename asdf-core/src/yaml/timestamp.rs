//! YAML 1.1 timestamps as PyYAML's `SafeConstructor.construct_yaml_timestamp` reads them,
//! and their canonical UTC text.

use super::node::{TimeOfDay, Timestamp};

/// Why a timestamp-looking scalar was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TsError {
    /// The text does not have the timestamp shape.
    Shape,
    /// The shape is right but a field is out of range (Python's `datetime` refuses it).
    Range,
}

/// Whether `text` has the shape of PyYAML's implicit timestamp resolver (a quick pre-check
/// is done by the caller on the first byte).
///
/// The implicit resolver accepts `YYYY-MM-DD` (exactly two digits each) or a date with one-
/// or two-digit month and day followed by a time.
pub(crate) fn parse_implicit(text: &str) -> Option<Result<Timestamp, TsError>> {
    let b = text.as_bytes();
    if b.len() < 8 || b.get(4) != Some(&b'-') {
        return None;
    }
    match parse_fields(b) {
        Err(TsError::Shape) => None,
        Err(e) => Some(Err(e)),
        Ok(f) => {
            if f.time.is_none() && b.len() != 10 {
                // Date-only needs the two-digit form.
                return None;
            }
            Some(f.validate(text))
        }
    }
}

/// Parses a `!!timestamp` scalar (PyYAML's constructor regex, a little more lenient than the
/// implicit resolver: one-digit month and day are accepted for a date too).
pub(crate) fn parse_explicit(text: &str) -> Result<Timestamp, TsError> {
    let b = text.as_bytes();
    // Python's `$` also matches before one final newline.
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    parse_fields(b)?.validate(text)
}

struct Fields {
    year: u32,
    month: u32,
    day: u32,
    time: Option<(u32, u32, u32, u32, Option<i32>)>,
}

impl Fields {
    fn validate(self, text: &str) -> Result<Timestamp, TsError> {
        let year = self.year as i32;
        if !(1..=9999).contains(&year)
            || !(1..=12).contains(&self.month)
            || self.day < 1
            || self.day > days_in_month(year, self.month)
        {
            return Err(TsError::Range);
        }
        let time = match self.time {
            None => None,
            Some((hour, minute, second, nanosecond, offset)) => {
                if hour > 23 || minute > 59 || second > 59 {
                    return Err(TsError::Range);
                }
                if let Some(off) = offset {
                    if off.abs() >= 86_400 {
                        return Err(TsError::Range);
                    }
                }
                Some(TimeOfDay {
                    hour: hour as u8,
                    minute: minute as u8,
                    second: second as u8,
                    nanosecond,
                    utc_offset_seconds: offset,
                })
            }
        };
        Ok(Timestamp {
            text: text.to_string(),
            year,
            month: self.month as u8,
            day: self.day as u8,
            time,
        })
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    /// Between `min` and `max` ASCII digits.
    fn digits(&mut self, min: usize, max: usize) -> Result<u32, TsError> {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match self.peek() {
                Some(d) if d.is_ascii_digit() => {
                    v = v * 10 + u32::from(d - b'0');
                    self.i += 1;
                    n += 1;
                }
                _ => break,
            }
        }
        if n < min {
            Err(TsError::Shape)
        } else {
            Ok(v)
        }
    }
    fn blanks(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        self.i - start
    }
    fn at_end(&self) -> bool {
        self.i == self.b.len()
    }
}

fn parse_fields(b: &[u8]) -> Result<Fields, TsError> {
    let mut c = Cursor { b, i: 0 };
    let year = c.digits(4, 4)?;
    if !c.eat(b'-') {
        return Err(TsError::Shape);
    }
    let month = c.digits(1, 2)?;
    if !c.eat(b'-') {
        return Err(TsError::Shape);
    }
    let day = c.digits(1, 2)?;
    if c.at_end() {
        return Ok(Fields {
            year,
            month,
            day,
            time: None,
        });
    }
    if !(c.eat(b'T') || c.eat(b't') || c.blanks() > 0) {
        return Err(TsError::Shape);
    }
    let hour = c.digits(1, 2)?;
    if !c.eat(b':') {
        return Err(TsError::Shape);
    }
    let minute = c.digits(2, 2)?;
    if !c.eat(b':') {
        return Err(TsError::Shape);
    }
    let second = c.digits(2, 2)?;
    let mut nanosecond = 0u32;
    if c.eat(b'.') {
        let mut n = 0;
        while let Some(d) = c.peek().filter(u8::is_ascii_digit) {
            if n < 9 {
                nanosecond = nanosecond * 10 + u32::from(d - b'0');
            }
            n += 1;
            c.i += 1;
        }
        for _ in n..9 {
            nanosecond *= 10;
        }
    }
    let mut offset = None;
    if !c.at_end() {
        c.blanks();
        if c.eat(b'Z') {
            offset = Some(0);
        } else {
            let sign = match c.peek() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return Err(TsError::Shape),
            };
            c.i += 1;
            let h = c.digits(1, 2)? as i32;
            let m = if c.eat(b':') {
                c.digits(2, 2)? as i32
            } else {
                0
            };
            offset = Some(sign * (h * 3600 + m * 60));
        }
        if !c.at_end() {
            return Err(TsError::Shape);
        }
    }
    Ok(Fields {
        year,
        month,
        day,
        time: Some((hour, minute, second, nanosecond, offset)),
    })
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Civil date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The canonical text of a timestamp, as the `asdf-canonical/1` form (and python asdf's
/// `strftime`) writes it.
///
/// A date alone gives `YYYY-MM-DD`. A date and time is converted to UTC (no offset written
/// means UTC already) and gives `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`, the fraction truncated to
/// microseconds with trailing zeros removed and left out when zero. Like Python's `strftime`
/// on Linux, years below 1000 are not zero-padded; the UTC conversion may carry a date to year
/// 0 or 10000, which is written as is.
pub fn timestamp_canonical(ts: &Timestamp) -> String {
    let Some(t) = ts.time else {
        return format!("{}-{:02}-{:02}", ts.year, ts.month, ts.day);
    };
    let days = days_from_civil(i64::from(ts.year), i64::from(ts.month), i64::from(ts.day));
    let secs =
        days * 86_400 + i64::from(t.hour) * 3600 + i64::from(t.minute) * 60 + i64::from(t.second)
            - i64::from(t.utc_offset_seconds.unwrap_or(0));
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let mut out = format!(
        "{y}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    );
    let micro = t.nanosecond / 1000;
    if micro != 0 {
        let frac = format!("{micro:06}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        timestamp_canonical(&parse_explicit(text).unwrap())
    }

    #[test]
    fn implicit_shapes() {
        assert!(parse_implicit("2001-12-14").unwrap().is_ok());
        assert!(parse_implicit("2001-1-1").is_none());
        assert!(parse_implicit("2001-1-1 1:00:00").unwrap().is_ok());
        assert!(parse_implicit("2001-12-14x").is_none());
        assert!(parse_implicit("2001-12-14 21:59:43 ").is_none());
        assert!(parse_implicit("2001-12-14 21:59:43.10 -5").unwrap().is_ok());
        assert_eq!(
            parse_implicit("2001-02-30").unwrap().unwrap_err(),
            TsError::Range
        );
        assert_eq!(
            parse_implicit("0000-01-01").unwrap().unwrap_err(),
            TsError::Range
        );
        assert_eq!(
            parse_implicit("2001-12-14T21:59:60Z").unwrap().unwrap_err(),
            TsError::Range
        );
        assert_eq!(
            parse_implicit("2001-12-14T01:00:00+24:00")
                .unwrap()
                .unwrap_err(),
            TsError::Range
        );
        assert!(parse_implicit("2001-12-14T01:00:00+23:59").unwrap().is_ok());
        assert!(parse_implicit("2000-02-29").unwrap().is_ok());
        assert!(parse_implicit("1900-02-29").unwrap().is_err());
    }

    #[test]
    fn fields_are_parsed() {
        let ts = parse_explicit("2001-12-14t21:59:43.1234567891-05:30").unwrap();
        assert_eq!((ts.year, ts.month, ts.day), (2001, 12, 14));
        let t = ts.time.unwrap();
        assert_eq!((t.hour, t.minute, t.second), (21, 59, 43));
        assert_eq!(t.nanosecond, 123_456_789);
        assert_eq!(t.utc_offset_seconds, Some(-(5 * 3600 + 30 * 60)));
        assert_eq!(ts.text, "2001-12-14t21:59:43.1234567891-05:30");
        let naive = parse_explicit("2001-12-14 21:59:43").unwrap();
        assert_eq!(naive.time.unwrap().utc_offset_seconds, None);
        assert!(parse_explicit("2001-1-1").unwrap().time.is_none());
        assert!(parse_explicit("2001-12-14\n").is_ok());
        assert!(parse_explicit("2001").is_err());
        assert!(parse_explicit("2001-12-14 1:2:03").is_err());
    }

    #[test]
    fn canonical_utc_text() {
        assert_eq!(canon("2001-12-14"), "2001-12-14");
        assert_eq!(canon("2001-1-2"), "2001-01-02");
        assert_eq!(canon("2001-12-14T21:59:43Z"), "2001-12-14T21:59:43Z");
        assert_eq!(canon("2001-12-14 21:59:43.10 -5"), "2001-12-15T02:59:43.1Z");
        assert_eq!(
            canon("2001-12-14T21:59:43.1234567Z"),
            "2001-12-14T21:59:43.123456Z"
        );
        assert_eq!(
            canon("2001-12-14T21:59:43.0000009Z"),
            "2001-12-14T21:59:43Z"
        );
        assert_eq!(canon("2000-03-01T00:30:00+01:00"), "2000-02-29T23:30:00Z");
        assert_eq!(canon("2001-12-31T23:00:00-05:00"), "2002-01-01T04:00:00Z");
        assert_eq!(canon("9999-12-31T23:00:00-05:00"), "10000-01-01T04:00:00Z");
        assert_eq!(canon("0001-01-01T00:00:00+01:00"), "0-12-31T23:00:00Z");
        assert_eq!(canon("0012-01-01"), "12-01-01");
    }
}
