//! Byte shuffle and unshuffle, with SIMD for the type sizes 2, 4, 8 and 16 on x86_64 (SSE2,
//! which every x86_64 has, and AVX2 when the processor has it), and plain loops otherwise.
//!
//! A shuffled block holds byte 0 of every element, then byte 1 of every element, and so on;
//! the bytes after the last whole element are stored as they are. Shuffling `n` elements of
//! `T` bytes is transposing an `n x T` byte matrix; the SIMD code transposes 16 (SSE2) or 32
//! (AVX2, two 16-element halves, one per 128-bit lane) elements at a time, in registers,
//! with rounds of `unpacklo`/`unpackhi`: the same scheme as C-Blosc2's `shuffle-sse2.c` and
//! `shuffle-avx2.c`, written once for every power-of-two size.
//!
//! How the rounds move bytes: number the `16 T` bytes of a group by register (`log2 T` bits)
//! and byte within the register (4 bits). A round of `unpack{lo,hi}_epi(8 << k)` on the pairs
//! of registers `(2m, 2m + 1)`, the low halves going to register `m` and the high ones to
//! `m + T/2`, moves the top bit of the byte index into the top of the register index, shifts
//! the register index down, and puts its old lowest bit (which register of the pair) into
//! bit `k` of the byte index. Unshuffle: `log2 T` rounds with `k = 0, 1, ...` leave element
//! group `g` in register `bitrev(g)`. Shuffle: 4 rounds with `k = 0`, registers loaded in
//! bit-reversed order, leave byte plane `b` in register `bitrev(b)`. The tests compare every
//! type size and length against the plain loops.

/// Shuffles `src` into `dst` (same length).
pub(crate) fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len(), "shuffle: lengths differ");
    let n = src.len() / typesize.max(1);
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    match typesize {
        2 => shuffle_pow2::<2>(src, dst, n),
        4 => shuffle_pow2::<4>(src, dst, n),
        8 => shuffle_pow2::<8>(src, dst, n),
        16 => shuffle_pow2::<16>(src, dst, n),
        _ => shuffle_scalar(typesize, src, dst, n, 0),
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// Unshuffles `src` into `dst` (same length).
pub(crate) fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len(), "unshuffle: lengths differ");
    let n = src.len() / typesize.max(1);
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    match typesize {
        2 => unshuffle_pow2::<2>(src, dst, n),
        4 => unshuffle_pow2::<4>(src, dst, n),
        8 => unshuffle_pow2::<8>(src, dst, n),
        16 => unshuffle_pow2::<16>(src, dst, n),
        // the other common sizes gather one element from its planes at a time
        3 => gather::<3>(src, dst, n),
        5 => gather::<5>(src, dst, n),
        6 => gather::<6>(src, dst, n),
        7 => gather::<7>(src, dst, n),
        12 => gather::<12>(src, dst, n),
        _ => unshuffle_scalar(typesize, src, dst, n, 0),
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// Shuffles elements `from..n` (of `ts` bytes) of `src` into their planes in `dst`.
fn shuffle_scalar(ts: usize, src: &[u8], dst: &mut [u8], n: usize, from: usize) {
    for (i, item) in src[..n * ts].chunks_exact(ts).enumerate().skip(from) {
        for (j, &b) in item.iter().enumerate() {
            dst[j * n + i] = b;
        }
    }
}

/// Unshuffles elements `from..n` (of `ts` bytes) from the planes of `src` into `dst`.
fn unshuffle_scalar(ts: usize, src: &[u8], dst: &mut [u8], n: usize, from: usize) {
    if n == 0 {
        return;
    }
    for (j, plane) in src[..n * ts].chunks_exact(n).enumerate() {
        for (i, &b) in plane.iter().enumerate().skip(from) {
            dst[i * ts + j] = b;
        }
    }
}

/// Unshuffle of `n` elements of `T` bytes: element `i` is byte `i` of each plane (one
/// element gathered and stored at a time, no scattered stores).
fn gather<const T: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    let planes: [&[u8]; T] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    for (i, out) in dst[..n * T].chunks_exact_mut(T).enumerate() {
        let e: [u8; T] = std::array::from_fn(|j| planes[j][i]);
        out.copy_from_slice(&e);
    }
}

fn shuffle_pow2<const T: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (detected just above), the only requirement
            // of this function beyond those its signature checks.
            done = unsafe { x86::shuffle_avx2::<T>(src, dst, n) };
        }
        done = x86::shuffle_sse2::<T>(src, dst, n, done);
    }
    shuffle_scalar(T, src, dst, n, done);
}

fn unshuffle_pow2<const T: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (detected just above), the only requirement
            // of this function beyond those its signature checks.
            done = unsafe { x86::unshuffle_avx2::<T>(src, dst, n) };
        }
        done = x86::unshuffle_sse2::<T>(src, dst, n, done);
        if done == n {
            return;
        }
    }
    gather_from::<T>(src, dst, n, done);
}

/// [`gather`] of elements `from..n` only.
fn gather_from<const T: usize>(src: &[u8], dst: &mut [u8], n: usize, from: usize) {
    let planes: [&[u8]; T] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    for (i, out) in dst[..n * T].chunks_exact_mut(T).enumerate().skip(from) {
        let e: [u8; T] = std::array::from_fn(|j| planes[j][i]);
        out.copy_from_slice(&e);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `k` with its lowest `bits` bits in reverse order.
    const fn bitrev(k: usize, bits: u32) -> usize {
        if bits == 0 {
            0
        } else {
            k.reverse_bits() >> (usize::BITS - bits)
        }
    }

    /// One round on the array of registers `$x` (length `$t`): the pairs `(2m, 2m + 1)`
    /// interleaved by `$lo` into register `m` and by `$hi` into `m + $t / 2`.
    macro_rules! round {
        ($x:ident, $t:expr, $lo:ident, $hi:ident) => {{
            let mut y = $x;
            for m in 0..$t / 2 {
                y[m] = $lo($x[2 * m], $x[2 * m + 1]);
                y[m + $t / 2] = $hi($x[2 * m], $x[2 * m + 1]);
            }
            $x = y;
        }};
    }

    /// Shuffles elements `from..` of `src` in groups of 16, with SSE2; returns the number
    /// of elements done (the rest, fewer than 16, is left to the caller).
    pub(super) fn shuffle_sse2<const T: usize>(
        src: &[u8],
        dst: &mut [u8],
        n: usize,
        from: usize,
    ) -> usize {
        let bits = T.trailing_zeros();
        assert!(T.is_power_of_two() && (2..=16).contains(&T));
        assert!(src.len() >= n * T && dst.len() >= n * T && from <= n);
        let end = from + (n - from) / 16 * 16;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = from;
        while i < end {
            // SAFETY: SSE2 is part of x86_64. Reads: bytes `i T + 16 q .. + 16` for `q < T`,
            // all below `(i + 16) T <= n T <= src.len()` (as `i + 16 <= end <= n`). Writes:
            // bytes `b n + i .. + 16` for `b < T`, below `(T - 1) n + n = n T <= dst.len()`.
            // Unaligned loads and stores only; `src` and `dst` do not overlap (a shared and
            // a mutable borrow).
            unsafe {
                let mut x = [_mm_setzero_si128(); T];
                for (k, r) in x.iter_mut().enumerate() {
                    let q = bitrev(k, bits);
                    *r = _mm_loadu_si128(s.add(i * T + 16 * q).cast());
                }
                for _ in 0..4 {
                    round!(x, T, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
                }
                for b in 0..T {
                    _mm_storeu_si128(d.add(b * n + i).cast(), x[bitrev(b, bits)]);
                }
            }
            i += 16;
        }
        end
    }

    /// Unshuffles elements `from..` of `src` in groups of 16, with SSE2; returns the number
    /// of elements done (the rest, fewer than 16, is left to the caller).
    pub(super) fn unshuffle_sse2<const T: usize>(
        src: &[u8],
        dst: &mut [u8],
        n: usize,
        from: usize,
    ) -> usize {
        let bits = T.trailing_zeros();
        assert!(T.is_power_of_two() && (2..=16).contains(&T));
        assert!(src.len() >= n * T && dst.len() >= n * T && from <= n);
        let end = from + (n - from) / 16 * 16;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = from;
        while i < end {
            // SAFETY: SSE2 is part of x86_64. Reads: bytes `j n + i .. + 16` for `j < T`,
            // below `(T - 1) n + n = n T <= src.len()` (as `i + 16 <= end <= n`). Writes:
            // bytes `i T + 16 g .. + 16` for `g < T`, below `(i + 16) T <= n T <= dst.len()`.
            // Unaligned loads and stores only; `src` and `dst` do not overlap.
            unsafe {
                let mut x = [_mm_setzero_si128(); T];
                for (j, r) in x.iter_mut().enumerate() {
                    *r = _mm_loadu_si128(s.add(j * n + i).cast());
                }
                round!(x, T, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
                if T >= 4 {
                    round!(x, T, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
                }
                if T >= 8 {
                    round!(x, T, _mm_unpacklo_epi32, _mm_unpackhi_epi32);
                }
                if T >= 16 {
                    round!(x, T, _mm_unpacklo_epi64, _mm_unpackhi_epi64);
                }
                for g in 0..T {
                    _mm_storeu_si128(d.add(i * T + 16 * g).cast(), x[bitrev(g, bits)]);
                }
            }
            i += 16;
        }
        end
    }

    /// Shuffles the elements of `src` in groups of 32, with AVX2 (16 elements in each
    /// 128-bit lane); returns the number of elements done (a multiple of 32).
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn shuffle_avx2<const T: usize>(
        src: &[u8],
        dst: &mut [u8],
        n: usize,
    ) -> usize {
        let bits = T.trailing_zeros();
        assert!(T.is_power_of_two() && (2..=16).contains(&T));
        assert!(src.len() >= n * T && dst.len() >= n * T);
        let end = n / 32 * 32;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = 0;
        while i < end {
            // SAFETY: AVX2 is there (the caller's promise). Reads: bytes `i T + 16 q .. + 16`
            // and `(i + 16) T + 16 q .. + 16` for `q < T`, all below `(i + 32) T <= n T <=
            // src.len()` (as `i + 32 <= end <= n`). Writes: bytes `b n + i .. + 32` for
            // `b < T`, below `(T - 1) n + n = n T <= dst.len()`. Unaligned loads and stores
            // only; `src` and `dst` do not overlap.
            unsafe {
                let mut x = [_mm256_setzero_si256(); T];
                for (k, r) in x.iter_mut().enumerate() {
                    let q = bitrev(k, bits);
                    *r = _mm256_loadu2_m128i(
                        s.add((i + 16) * T + 16 * q).cast(),
                        s.add(i * T + 16 * q).cast(),
                    );
                }
                for _ in 0..4 {
                    round!(x, T, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8);
                }
                for b in 0..T {
                    _mm256_storeu_si256(d.add(b * n + i).cast(), x[bitrev(b, bits)]);
                }
            }
            i += 32;
        }
        end
    }

    /// Unshuffles the elements of `src` in groups of 32, with AVX2 (16 elements in each
    /// 128-bit lane); returns the number of elements done (a multiple of 32).
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn unshuffle_avx2<const T: usize>(
        src: &[u8],
        dst: &mut [u8],
        n: usize,
    ) -> usize {
        let bits = T.trailing_zeros();
        assert!(T.is_power_of_two() && (2..=16).contains(&T));
        assert!(src.len() >= n * T && dst.len() >= n * T);
        let end = n / 32 * 32;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = 0;
        while i < end {
            // SAFETY: AVX2 is there (the caller's promise). Reads: bytes `j n + i .. + 32`
            // for `j < T`, below `(T - 1) n + n = n T <= src.len()` (as `i + 32 <= end <=
            // n`). Writes: bytes `i T + 32 h .. + 32` and `(i + 16) T + 32 h .. + 32` for
            // `h < T / 2`, below `(i + 32) T <= n T <= dst.len()`. Unaligned loads and
            // stores only; `src` and `dst` do not overlap.
            unsafe {
                let mut x = [_mm256_setzero_si256(); T];
                for (j, r) in x.iter_mut().enumerate() {
                    *r = _mm256_loadu_si256(s.add(j * n + i).cast());
                }
                round!(x, T, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8);
                if T >= 4 {
                    round!(x, T, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16);
                }
                if T >= 8 {
                    round!(x, T, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
                }
                if T >= 16 {
                    round!(x, T, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64);
                }
                // group g of the low lanes (elements i..i + 16) and of the high lanes
                // (elements i + 16..i + 32) is in register bitrev(g): two groups a store
                for h in 0..T / 2 {
                    let a = x[bitrev(2 * h, bits)];
                    let b = x[bitrev(2 * h + 1, bits)];
                    let lo = _mm256_permute2x128_si256::<0x20>(a, b);
                    let hi = _mm256_permute2x128_si256::<0x31>(a, b);
                    _mm256_storeu_si256(d.add(i * T + 32 * h).cast(), lo);
                    _mm256_storeu_si256(d.add((i + 16) * T + 32 * h).cast(), hi);
                }
            }
            i += 32;
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    fn shuffle_reference(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let mut dst = src.to_vec();
        for i in 0..n {
            for j in 0..ts {
                dst[j * n + i] = src[i * ts + j];
            }
        }
        dst
    }

    /// Lengths around the vector widths (16 and 32 elements), with and without a tail of
    /// bytes after the last whole element.
    fn lengths(ts: usize) -> Vec<usize> {
        let mut v = Vec::new();
        for n in [
            0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 95, 96, 97, 200, 1000,
        ] {
            for tail in [0, 1, ts - 1] {
                if tail < ts || ts == 1 {
                    v.push(n * ts + tail);
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn shuffle_and_unshuffle_match_the_plain_loops_for_every_size() {
        for ts in 1..=33usize {
            for len in lengths(ts) {
                let src = bytes(len, (ts * 1000 + len) as u64);
                let want = shuffle_reference(ts, &src);
                let mut got = vec![0xa5u8; len];
                shuffle(ts, &src, &mut got);
                assert_eq!(got, want, "shuffle, typesize {ts}, {len} bytes");
                let mut back = vec![0x5au8; len];
                unshuffle(ts, &want, &mut back);
                assert_eq!(back, src, "unshuffle, typesize {ts}, {len} bytes");
            }
        }
    }

    #[test]
    fn every_path_matches_on_its_own() {
        // the SSE2 and AVX2 loops, each alone, against the plain loops
        for ts in [2usize, 4, 8, 16] {
            for n in [0usize, 16, 32, 48, 64, 96, 160] {
                let src = bytes(n * ts, n as u64 + ts as u64);
                let shuffled = shuffle_reference(ts, &src);
                let mut plain = vec![0u8; n * ts];
                shuffle_scalar(ts, &src, &mut plain, n, 0);
                assert_eq!(plain, shuffled);
                let mut plain = vec![0u8; n * ts];
                unshuffle_scalar(ts, &shuffled, &mut plain, n, 0);
                assert_eq!(plain, src);
                #[cfg(target_arch = "x86_64")]
                {
                    let run = |f: &dyn Fn(&[u8], &mut [u8]) -> usize, input: &[u8], want: &[u8]| {
                        let mut out = vec![0u8; n * ts];
                        assert_eq!(f(input, &mut out), n / 16 * 16);
                        assert_eq!(out, want, "typesize {ts}, {n} elements");
                    };
                    macro_rules! each {
                        ($t:literal) => {
                            if ts == $t {
                                run(&|s, d| x86::shuffle_sse2::<$t>(s, d, n, 0), &src, &shuffled);
                                run(
                                    &|s, d| x86::unshuffle_sse2::<$t>(s, d, n, 0),
                                    &shuffled,
                                    &src,
                                );
                                if std::arch::is_x86_feature_detected!("avx2") && n % 32 == 0 {
                                    let avx2 = |s: &[u8], d: &mut [u8]| {
                                        // SAFETY: AVX2 detected just above.
                                        unsafe { x86::shuffle_avx2::<$t>(s, d, n) }
                                    };
                                    run(&avx2, &src, &shuffled);
                                    let avx2 = |s: &[u8], d: &mut [u8]| {
                                        // SAFETY: AVX2 detected just above.
                                        unsafe { x86::unshuffle_avx2::<$t>(s, d, n) }
                                    };
                                    run(&avx2, &shuffled, &src);
                                }
                            }
                        };
                    }
                    each!(2);
                    each!(4);
                    each!(8);
                    each!(16);
                }
            }
        }
    }
}

/// Speeds of the plain loops (and `gather`) and of the dispatched (SIMD) code on 256 KiB
/// blocks, a developer's timing rather than a check, so not part of the test suite:
/// `cargo test -p asdfrs-blosc2 --release --features dev-tools -- --nocapture shuffle_speed`.
#[cfg(all(test, feature = "dev-tools"))]
mod speed {
    use super::*;
    use std::time::Instant;

    fn best(mut f: impl FnMut()) -> f64 {
        (0..200)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn shuffle_speed() {
        let len = 256 << 10;
        let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 1000) as u8).collect();
        let mut dst = vec![0u8; len];
        for ts in [2usize, 4, 8, 16] {
            let n = len / ts;
            let gib = |s: f64| len as f64 / s / f64::from(1 << 30);
            let plain_s = best(|| shuffle_scalar(ts, &src, &mut dst, n, 0));
            let simd_s = best(|| shuffle(ts, &src, &mut dst));
            // what the decoder had before: `gather` for 2, 4 and 8, the plain loop for 16
            let plain_u = best(|| match ts {
                2 => gather::<2>(&src, &mut dst, n),
                4 => gather::<4>(&src, &mut dst, n),
                8 => gather::<8>(&src, &mut dst, n),
                _ => unshuffle_scalar(ts, &src, &mut dst, n, 0),
            });
            let simd_u = best(|| unshuffle(ts, &src, &mut dst));
            println!(
                "typesize {ts:2}: shuffle {:6.2} -> {:6.2} GiB/s, unshuffle {:6.2} -> {:6.2} GiB/s",
                gib(plain_s),
                gib(simd_s),
                gib(plain_u),
                gib(simd_u)
            );
        }
    }
}
