//! The BloscLZ decoder (C-Blosc2's own LZ77 codec, FastLZ-derived), written from its format:
//! a stream of literal runs and matches.
//!
//! Tokens, each starting with a control byte `ctrl` (the first byte of the stream counts only
//! its low 5 bits):
//! - `ctrl < 32`: a literal run of `ctrl + 1` bytes that follow.
//! - otherwise a match: length `(ctrl >> 5) + 2` (when `ctrl >> 5 == 7`, bytes are added to the
//!   length until one is not 255), then a distance byte `code`; the match starts
//!   `((ctrl & 31) << 8) + code + 1` bytes back, or, when `code == 255` and `ctrl & 31 == 31`,
//!   `8191 + (two more bytes, big-endian) + 1` bytes back. Matches may overlap their output.
//!
//! The decoder ends when the input does; a match must be followed by another token (a
//! trailing match is dropped, as C-Blosc2 does).

const MAX_DISTANCE: usize = 8191;

/// Decodes `input` into `out` (its length is the expected size); returns the number of bytes
/// written, or `None` when the stream is malformed (it reads or writes out of bounds).
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Option<usize> {
    if input.is_empty() {
        return Some(0);
    }
    let mut ip = 1usize;
    let mut op = 0usize;
    let mut ctrl = usize::from(input[0] & 31);
    let end = input.len();
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let ofs = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    if ip + 1 >= end {
                        return None;
                    }
                    let code = input[ip];
                    ip += 1;
                    len += usize::from(code);
                    if code != 255 {
                        break;
                    }
                }
            } else if ip + 1 >= end {
                return None;
            }
            let code = usize::from(input[ip]);
            ip += 1;
            len += 3;
            // distance back from `op` of the byte before the match start
            let mut back = ofs + code;
            if code == 255 && ofs == 31 << 8 {
                if ip + 1 >= end {
                    return None;
                }
                let far = (usize::from(input[ip]) << 8) + usize::from(input[ip + 1]);
                ip += 2;
                back = far + MAX_DISTANCE;
            }
            if op + len > out.len() {
                return None;
            }
            // the match starts back + 1 bytes before op, and must be inside the output
            if back + 1 > op {
                return None;
            }
            if ip >= end {
                break;
            }
            ctrl = usize::from(input[ip]);
            ip += 1;
            let from = op - back - 1;
            if back == 0 {
                let b = out[from];
                out[op..op + len].fill(b);
            } else if from + len <= op {
                out.copy_within(from..from + len, op);
            } else {
                for k in 0..len {
                    out[op + k] = out[from + k];
                }
            }
            op += len;
        } else {
            let n = ctrl + 1;
            if op + n > out.len() || ip + n > end {
                return None;
            }
            out[op..op + n].copy_from_slice(&input[ip..ip + n]);
            op += n;
            ip += n;
            if ip >= end {
                break;
            }
            ctrl = usize::from(input[ip]);
            ip += 1;
        }
    }
    Some(op)
}

#[cfg(test)]
mod tests {
    use super::decompress;

    #[test]
    fn literals_and_an_overlapping_match() {
        // "abc", then a match of length 6 starting 3 back ("abcabc"), then literal "z"
        let input = [2, b'a', b'b', b'c', (4 << 5), 2, 0, b'z'];
        let mut out = [0u8; 10];
        assert_eq!(decompress(&input, &mut out), Some(10));
        assert_eq!(&out, b"abcabcabcz");
    }

    #[test]
    fn a_match_reaching_before_the_output_is_an_error() {
        let input = [0, b'a', (1 << 5), 5, 0, b'z'];
        let mut out = [0u8; 8];
        assert_eq!(decompress(&input, &mut out), None);
    }

    #[test]
    fn output_overrun_is_an_error() {
        let input = [3, 1, 2, 3, 4];
        let mut out = [0u8; 3];
        assert_eq!(decompress(&input, &mut out), None);
    }
}
