//! An LZ4 block encoder that searches harder (hash chains over the 64 KiB window, the
//! longest match of up to `attempts` candidates), for Blosc2's `lz4hc` codec: the output is
//! a plain LZ4 block, which every LZ4 decoder reads.
//!
//! The block format: sequences of a token (literal count in the high nibble, match length
//! minus 4 in the low one, 15 meaning "more bytes follow", each 255 adding on), the
//! literals, a 2-byte little-endian offset and the extra match-length bytes. The last five
//! bytes are literals and the last match starts at least 12 bytes before the end.

const MIN_MATCH: usize = 4;
const LAST_LITERALS: usize = 5;
const MF_LIMIT: usize = 12;
const WINDOW: usize = 65_535;
const HASH_BITS: u32 = 15;

fn hash(b: &[u8]) -> usize {
    let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

fn push_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 255 {
        out.push(255);
        n -= 255;
    }
    out.push(n as u8);
}

fn sequence(out: &mut Vec<u8>, lit: &[u8], m: Option<(usize, usize)>) {
    let ll = lit.len();
    let ml = m.map_or(0, |(len, _)| len - MIN_MATCH);
    let token = ((ll.min(15) as u8) << 4) | if m.is_some() { ml.min(15) as u8 } else { 0 };
    out.push(token);
    if ll >= 15 {
        push_len(out, ll - 15);
    }
    out.extend_from_slice(lit);
    if let Some((_, offset)) = m {
        out.extend_from_slice(&(offset as u16).to_le_bytes());
        if ml >= 15 {
            push_len(out, ml - 15);
        }
    }
}

/// Compresses `input` into one LZ4 block; `attempts` bounds the candidates tried per
/// position (more: smaller output, slower).
pub(crate) fn compress(input: &[u8], attempts: usize) -> Vec<u8> {
    let n = input.len();
    let mut out = Vec::with_capacity(n / 2 + 16);
    if n < MF_LIMIT + 1 {
        sequence(&mut out, input, None);
        return out;
    }
    let mut head = vec![usize::MAX; 1 << HASH_BITS];
    let mut chain = vec![usize::MAX; WINDOW + 1];
    let match_limit = n - LAST_LITERALS;
    let mut anchor = 0usize;
    let mut i = 0usize;
    let mut inserted = 0usize;
    while i + MF_LIMIT < n {
        // insert every position up to i into the chains
        while inserted <= i {
            let h = hash(&input[inserted..inserted + 4]);
            chain[inserted & WINDOW] = head[h];
            head[h] = inserted;
            inserted += 1;
        }
        let mut best = (0usize, 0usize);
        let mut cand = chain[i & WINDOW];
        let mut tries = attempts;
        while cand != usize::MAX && i - cand <= WINDOW && tries > 0 {
            tries -= 1;
            if input[cand..cand + MIN_MATCH] == input[i..i + MIN_MATCH] {
                let mut len = MIN_MATCH;
                while i + len < match_limit && input[cand + len] == input[i + len] {
                    len += 1;
                }
                if len > best.0 {
                    best = (len, i - cand);
                }
            }
            let next = chain[cand & WINDOW];
            if next == usize::MAX || next >= cand {
                break;
            }
            cand = next;
        }
        if best.0 >= MIN_MATCH {
            sequence(&mut out, &input[anchor..i], Some(best));
            i += best.0;
            anchor = i;
        } else {
            i += 1;
        }
    }
    sequence(&mut out, &input[anchor..], None);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn blocks_decode_with_lz4_flex_and_beat_the_fast_encoder_on_text() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("row {} value {}; ", i % 97, (i * 31) % 1013).into_bytes())
            .collect();
        let inputs = [vec![], vec![1, 2, 3], vec![9u8; 70_000], text.clone()];
        for input in &inputs {
            let c = super::compress(input, 64);
            let mut out = vec![0u8; input.len()];
            let n = lz4_flex::block::decompress_into(&c, &mut out).unwrap();
            assert_eq!(&out[..n], &input[..], "{} bytes", input.len());
            assert_eq!(n, input.len());
        }
        let hc = super::compress(&text, 64).len();
        let fast = lz4_flex::block::compress(&text).len();
        assert!(hc < fast, "hc {hc} fast {fast}");
    }
}
