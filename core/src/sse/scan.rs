//! Finding the next line terminator (CR or LF) in a byte slice.
//!
//! The event-stream parser spends most of its time here, so the search reads
//! eight bytes per step (SWAR: "SIMD within a register") instead of one. No
//! `unsafe`, no dependency, the same code in wasm and natively.

/// `0x01` in every byte.
const LO: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
const HI: u64 = 0x8080_8080_8080_8080;
/// `\n` in every byte.
const LF8: u64 = LO * b'\n' as u64;
/// `\r` in every byte.
const CR8: u64 = LO * b'\r' as u64;

/// A word whose lowest set `0x80` bit marks the lowest zero byte of `v`.
/// Bytes above the first zero byte may be flagged falsely (borrow
/// propagation), so only the lowest flag is meaningful.
#[inline]
const fn zero_byte_flags(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// The index of the first CR (`0x0D`) or LF (`0x0A`) in `hay`, if any.
#[inline]
pub(crate) fn find_line_end(hay: &[u8]) -> Option<usize> {
    let mut words = hay.chunks_exact(8);
    let mut base = 0usize;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        // `chunks_exact(8)` only yields 8-byte slices, so the lengths match.
        bytes.copy_from_slice(word);
        let v = u64::from_le_bytes(bytes);
        let flags = zero_byte_flags(v ^ LF8) | zero_byte_flags(v ^ CR8);
        if flags != 0 {
            // Little-endian: the lowest flagged byte is the first in memory.
            return Some(base + (flags.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|i| base + i)
}

#[cfg(test)]
mod tests {
    use super::find_line_end;
    use proptest::prelude::*;

    fn naive(hay: &[u8]) -> Option<usize> {
        hay.iter().position(|&b| b == b'\n' || b == b'\r')
    }

    #[test]
    fn finds_each_terminator_at_every_offset() {
        for len in 0..20 {
            for at in 0..len {
                for term in [b'\n', b'\r'] {
                    let mut hay = vec![b'a'; len];
                    if let Some(slot) = hay.get_mut(at) {
                        *slot = term;
                    }
                    assert_eq!(find_line_end(&hay), Some(at), "len {len} at {at}");
                }
            }
            assert_eq!(find_line_end(&vec![b'a'; len]), None);
        }
    }

    #[test]
    fn near_misses_are_not_terminators() {
        // 0x0B/0x0C/0x0E/0x09 and high bytes that differ from CR/LF by one bit
        // or by a borrow.
        let hay = [0x0B, 0x0C, 0x0E, 0x09, 0x8A, 0x8D, 0x00, 0xFF, 0x01, 0x1A];
        assert_eq!(find_line_end(&hay), None);
        let mut with_lf = hay.to_vec();
        with_lf.push(b'\n');
        assert_eq!(find_line_end(&with_lf), Some(10));
    }

    #[test]
    fn first_of_several_wins() {
        assert_eq!(find_line_end(b"abcdefg\r\n"), Some(7));
        assert_eq!(find_line_end(b"\x00\x01\n\rabcdefgh\n"), Some(2));
        assert_eq!(find_line_end(b"abcdefgh12345\n"), Some(13));
    }

    proptest! {
        #[test]
        fn agrees_with_naive_search(hay in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(find_line_end(&hay), naive(&hay));
        }

        #[test]
        fn agrees_with_naive_search_on_terminator_heavy_input(
            hay in proptest::collection::vec(prop_oneof![
                Just(b'\n'), Just(b'\r'), Just(0u8), Just(0x0Bu8), Just(0x8Du8), any::<u8>()
            ], 0..64)
        ) {
            prop_assert_eq!(find_line_end(&hay), naive(&hay));
        }
    }
}
