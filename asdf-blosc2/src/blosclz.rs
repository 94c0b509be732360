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
                // an overlapping match repeats the `op - from` bytes before `op`: copy what
                // is already there, doubling each time (no byte-at-a-time loop)
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(op + done - from);
                    out.copy_within(from..from + n, op + done);
                    done += n;
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

/// Nearest match distance encodable without the far form (`back` up to 8190).
const NEAR: usize = MAX_DISTANCE;
/// Farthest match distance (the far form: 8192 + a 16-bit number).
const FAR: usize = 65535 + MAX_DISTANCE + 1;
/// The last bytes of the input are always literals (a stream must end with a literal run).
const TAIL: usize = 12;
const HASH_BITS: u32 = 14;

fn hash(b: &[u8]) -> usize {
    let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

fn flush_literals(out: &mut Vec<u8>, lit: &[u8]) {
    for run in lit.chunks(32) {
        out.push((run.len() - 1) as u8);
        out.extend_from_slice(run);
    }
}

/// Encodes `input` as a BloscLZ stream (greedy LZ77 with a hash of 4 bytes): literal runs
/// of 1 to 32 bytes, matches of 3 bytes or more up to 73,726 bytes back. Every stream starts
/// and ends with a literal run, as the decoder requires.
pub(crate) fn compress(input: &[u8]) -> Vec<u8> {
    let n = input.len();
    let mut out = Vec::with_capacity(n / 2 + 16);
    if n == 0 {
        return out;
    }
    let mut table = vec![0usize; 1 << HASH_BITS];
    let mut lit_start = 0usize;
    // the first byte is always a literal
    let mut i = 1usize;
    while i + TAIL < n {
        let h = hash(&input[i..i + 4]);
        let cand = table[h];
        table[h] = i;
        let d = i - cand;
        if cand > 0 && d <= FAR && input[cand..cand + 4] == input[i..i + 4] {
            // extend the match, keeping the tail for literals
            let max = n - TAIL - i;
            let mut len = 4;
            while len < max && input[cand + len] == input[i + len] {
                len += 1;
            }
            flush_literals(&mut out, &input[lit_start..i]);
            let back = d - 1;
            let (near, far) = if back < NEAR {
                (back, None)
            } else {
                (NEAR, Some(back - NEAR))
            };
            let hi = if far.is_some() { 31 } else { (near >> 8) as u8 };
            let code = if far.is_some() {
                255
            } else {
                (near & 255) as u8
            };
            let l = len - 2; // 1..=6 in the control byte, 7 and more in extra bytes
            if l < 7 {
                out.push(((l as u8) << 5) | hi);
            } else {
                out.push((7 << 5) | hi);
                let mut rest = len - 9;
                while rest >= 255 {
                    out.push(255);
                    rest -= 255;
                }
                out.push(rest as u8);
            }
            out.push(code);
            if let Some(f) = far {
                out.push((f >> 8) as u8);
                out.push((f & 255) as u8);
            }
            // remember a position inside the match, then go on after it
            if i + len + 4 <= n {
                let p = i + len - 1;
                if p + 4 <= n {
                    table[hash(&input[p..p + 4])] = p;
                }
            }
            i += len;
            lit_start = i;
        } else {
            i += 1;
        }
    }
    flush_literals(&mut out, &input[lit_start..]);
    out
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
    fn compressed_streams_decode_to_their_input() {
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![7],
            b"abcabcabcabcabcabcabcabcabcabcabcabc".to_vec(),
            vec![0; 100_000],
            (0..50_000u32)
                .flat_map(|i| (i % 251).to_le_bytes())
                .collect(),
        ];
        // a repeat 20,000 bytes back: the far form
        let mut far: Vec<u8> = (0..20_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        far.extend_from_within(0..5000);
        far.extend_from_slice(b"the end of it");
        inputs.push(far);
        for input in inputs {
            let c = super::compress(&input);
            let mut out = vec![0u8; input.len()];
            assert_eq!(
                decompress(&c, &mut out),
                Some(input.len()),
                "{} bytes",
                input.len()
            );
            assert_eq!(out, input);
        }
        assert!(super::compress(&[0u8; 100_000]).len() < 1000);
    }

    #[test]
    fn output_overrun_is_an_error() {
        let input = [3, 1, 2, 3, 4];
        let mut out = [0u8; 3];
        assert_eq!(decompress(&input, &mut out), None);
    }
}
