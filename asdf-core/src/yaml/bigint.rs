//! Just enough arbitrary-precision arithmetic to turn integer literals of any base and size
//! into [`Integer`] values (decimal digits for those beyond `i128`).

use super::node::Integer;

/// Digits a literal may have before it is refused (Python refuses decimal strings over 4300
/// digits; other bases are allowed a little more, the conversion is quadratic).
pub(crate) const MAX_DIGITS: usize = 16_384;

/// A non-negative integer as little-endian base-10⁹ limbs.
#[derive(Debug, Default, Clone)]
pub(crate) struct BigUint {
    limbs: Vec<u32>,
}

const LIMB: u64 = 1_000_000_000;

impl BigUint {
    /// `self = self * mul + add` with `mul, add < 2³²`.
    pub(crate) fn mul_add(&mut self, mul: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.limbs {
            let v = u64::from(*limb) * u64::from(mul) + carry;
            *limb = (v % LIMB) as u32;
            carry = v / LIMB;
        }
        while carry > 0 {
            self.limbs.push((carry % LIMB) as u32);
            carry /= LIMB;
        }
    }

    /// `self += other`.
    pub(crate) fn add(&mut self, other: &BigUint) {
        let mut carry = 0u64;
        let n = self.limbs.len().max(other.limbs.len());
        self.limbs.resize(n, 0);
        for (i, limb) in self.limbs.iter_mut().enumerate() {
            let o = other.limbs.get(i).copied().unwrap_or(0);
            let v = u64::from(*limb) + u64::from(o) + carry;
            *limb = (v % LIMB) as u32;
            carry = v / LIMB;
        }
        if carry > 0 {
            self.limbs.push(carry as u32);
        }
    }

    /// Converts with a sign into an [`Integer`].
    pub(crate) fn into_integer(mut self, negative: bool) -> Integer {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
        // Up to 4 limbs (< 10^36) always fits in i128; try 5 limbs too.
        if self.limbs.len() <= 5 {
            let mut v: i128 = 0;
            let mut fits = true;
            for &l in self.limbs.iter().rev() {
                match v
                    .checked_mul(LIMB as i128)
                    .and_then(|x| x.checked_add(i128::from(l)))
                {
                    Some(x) => v = x,
                    None => {
                        fits = false;
                        break;
                    }
                }
            }
            if fits {
                return Integer::Small(if negative { -v } else { v });
            }
            // i128::MIN itself.
            if negative && self.to_decimal() == "170141183460469231731687303715884105728" {
                return Integer::Small(i128::MIN);
            }
        }
        let digits = self.to_decimal();
        Integer::Big(if negative {
            format!("-{digits}")
        } else {
            digits
        })
    }

    fn to_decimal(&self) -> String {
        let mut out = String::new();
        let mut iter = self.limbs.iter().rev();
        match iter.next() {
            None => out.push('0'),
            Some(top) => out.push_str(&top.to_string()),
        }
        for l in iter {
            out.push_str(&format!("{l:09}"));
        }
        out
    }
}

/// Parses digits (already free of `_`, sign and prefix) in `radix` (2, 8, 10 or 16).
/// `None` when empty, too long, or containing a non-digit.
pub(crate) fn parse_radix(digits: &[u8], radix: u32) -> Option<BigUint> {
    if digits.is_empty() || digits.len() > MAX_DIGITS {
        return None;
    }
    let mut n = BigUint::default();
    if radix == 10 {
        // Nine digits at a time.
        for chunk in digits.chunks(9) {
            let mut v: u32 = 0;
            for &d in chunk {
                if !d.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + u32::from(d - b'0');
            }
            n.mul_add(10u32.pow(chunk.len() as u32), v);
        }
        return Some(n);
    }
    for &d in digits {
        let v = (d as char).to_digit(radix)?;
        n.mul_add(radix, v);
    }
    Some(n)
}

/// Parses a decimal literal (no `_`, optional sign) into an [`Integer`], fast for small ones.
pub(crate) fn decimal_integer(negative: bool, digits: &[u8]) -> Option<Integer> {
    if digits.is_empty() {
        return None;
    }
    if digits.len() <= 38 {
        let mut v: i128 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i128::from(d - b'0');
        }
        return Some(Integer::Small(if negative { -v } else { v }));
    }
    if digits.len() > 4300 {
        return None;
    }
    parse_radix(digits, 10).map(|n| n.into_integer(negative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_any_base_to_decimal() {
        let n = parse_radix(b"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", 16).unwrap();
        assert_eq!(
            n.into_integer(false),
            Integer::Big("340282366920938463463374607431768211455".into())
        );
        let n = parse_radix(b"7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", 16).unwrap();
        assert_eq!(n.into_integer(true), Integer::Small(-i128::MAX));
        let n = parse_radix(b"80000000000000000000000000000000", 16).unwrap();
        assert_eq!(n.into_integer(true), Integer::Small(i128::MIN));
        let n = parse_radix(b"80000000000000000000000000000000", 16).unwrap();
        assert_eq!(
            n.into_integer(false),
            Integer::Big("170141183460469231731687303715884105728".into())
        );
        assert_eq!(
            parse_radix(b"101", 2).unwrap().into_integer(false),
            Integer::Small(5)
        );
        assert_eq!(
            parse_radix(b"0", 8).unwrap().into_integer(true),
            Integer::Small(0)
        );
        assert!(parse_radix(b"19", 8).is_none());
        assert!(parse_radix(b"", 16).is_none());
    }

    #[test]
    fn decimal_fast_and_slow_paths() {
        assert_eq!(
            decimal_integer(false, b"123456789012345678901234567890"),
            Some(Integer::Small(123456789012345678901234567890))
        );
        assert_eq!(
            decimal_integer(true, b"0001234567890123456789012345678901234567890"),
            Some(Integer::Big(
                "-1234567890123456789012345678901234567890".into()
            ))
        );
        assert_eq!(decimal_integer(false, b"12a"), None);
        assert!(decimal_integer(false, &[b'1'; 5000]).is_none());
    }
}
