//! Base64 for `!!binary` scalars (RFC 4648, standard alphabet, padded): the emitter's
//! encoder and the resolver's decoder, which reads as python's `base64.decodebytes` does.
//! (Hand-written: asdf-core does not depend on the `base64` crate, only asdf-cli does.)

/// The standard alphabet (RFC 4648 section 4).
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends the standard base64 of `data` (with `=` padding, no line breaks) to `out`, as
/// `!!binary` is written.
pub(crate) fn encode_into(out: &mut String, data: &[u8]) {
    for chunk in data.chunks(3) {
        let b0 = chunk[0];
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let n = (u32::from(b0) << 16) | (u32::from(b1) << 8) | u32::from(b2);
        out.push(ALPHABET[(n >> 18) as usize & 63] as char);
        out.push(ALPHABET[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            ALPHABET[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            ALPHABET[n as usize & 63] as char
        } else {
            '='
        });
    }
}

/// `base64.decodebytes` (binascii `a2b_base64`, non-strict): characters outside the alphabet
/// are skipped, a complete pad ends the data, the length must work out.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    if !text.is_ascii() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut quad_pos = 0u8;
    let mut left: u32 = 0;
    let mut pads = 0u8;
    for &c in text.as_bytes() {
        if c == b'=' {
            if quad_pos >= 2 {
                pads += 1;
                if quad_pos + pads >= 4 {
                    return Some(out);
                }
            }
            continue;
        }
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        pads = 0;
        match quad_pos {
            0 => {
                quad_pos = 1;
                left = v;
            }
            1 => {
                quad_pos = 2;
                out.push(((left << 2) | (v >> 4)) as u8);
                left = v & 0x0f;
            }
            2 => {
                quad_pos = 3;
                out.push(((left << 4) | (v >> 2)) as u8);
                left = v & 0x03;
            }
            _ => {
                quad_pos = 0;
                out.push(((left << 6) | v) as u8);
                left = 0;
            }
        }
    }
    (quad_pos == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_the_rfc_4648_test_vectors() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (data, want) in cases {
            let mut out = String::from("x");
            encode_into(&mut out, data);
            assert_eq!(out, format!("x{want}"));
            assert_eq!(decode(want).as_deref(), Some(data));
        }
        let all: Vec<u8> = (0..=255).collect();
        let mut text = String::new();
        encode_into(&mut text, &all);
        assert_eq!(decode(&text), Some(all));
    }

    #[test]
    fn base64_like_python() {
        let d = |t: &str| decode(t);
        assert_eq!(d("aGVs\n bG8="), Some(b"hello".to_vec()));
        assert_eq!(d("aGVs*bG8="), Some(b"hello".to_vec()));
        assert_eq!(d("aGVsbG8=garbage"), Some(b"hello".to_vec()));
        assert_eq!(d(""), Some(vec![]));
        assert_eq!(d("=="), Some(vec![]));
        assert_eq!(d("aGVsbA=="), Some(b"hell".to_vec()));
        assert_eq!(d("AAECAw=="), Some(vec![0, 1, 2, 3]));
        assert_eq!(d("aGVsbG8"), None);
        assert_eq!(d("aGVsbA"), None);
        assert_eq!(d("aGVsbA="), None);
        assert_eq!(d("aGVsb==="), None);
        assert_eq!(d("a"), None);
        assert_eq!(d("aé=="), None);
    }
}
