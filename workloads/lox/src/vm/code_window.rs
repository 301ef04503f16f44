//! A function's bytecode as the dispatch loop fetches it: four bytes at a time (an opcode and
//! up to three operand bytes), with one comparison per instruction.
//!
//! The bytes are the function's code followed by [`PADDING`] zero bytes, so that the 4-byte
//! window of every offset inside the code is in range. A [`CodeWindow`] keeps the bytes with
//! their *limit*, the first offset whose window would not fit; [`CodeWindow::fetch`] compares an
//! offset against it once (an `ip` that jumped or ran out of the code fails that test) instead
//! of the two tests a checked sub-slice makes.

/// Zero bytes after the code: every offset of the code has a full window.
pub(super) const PADDING: usize = 4;

/// Bytes fetched per instruction.
const WINDOW: usize = 4;

/// Padded bytecode and its fetch limit. See the module documentation.
#[derive(Clone, Copy)]
pub(super) struct CodeWindow<'a> {
    bytes: &'a [u8],
    /// `bytes.len() - WINDOW + 1` (0 if there are fewer bytes than a window): every
    /// `at < limit` has `at + WINDOW <= bytes.len()`.
    limit: usize,
}

impl<'a> CodeWindow<'a> {
    /// The window over `bytes` (a function's code with its [`PADDING`]).
    #[inline(always)]
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        CodeWindow {
            bytes,
            limit: (bytes.len() + 1).saturating_sub(WINDOW),
        }
    }

    /// The four bytes at offset `at`, or `None` if `at` is past the code.
    #[inline(always)]
    pub(super) fn fetch(self, at: usize) -> Option<[u8; WINDOW]> {
        if at < self.limit {
            // SAFETY: `limit` is `bytes.len() + 1 - WINDOW` (or 0), set with `bytes` in `new`
            // and never changed, so `at < limit` gives `at + WINDOW <= bytes.len()`: the
            // `WINDOW` bytes read lie inside `bytes`; `[u8; WINDOW]` has alignment 1.
            Some(unsafe { self.bytes.as_ptr().add(at).cast::<[u8; WINDOW]>().read() })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_every_window_in_range_and_nothing_past_it() {
        let bytes = [1u8, 2, 3, 4, 5, 0, 0, 0, 0];
        let w = CodeWindow::new(&bytes);
        for at in 0..=bytes.len() - WINDOW {
            let expected: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
            assert_eq!(w.fetch(at), Some(expected));
        }
        for at in bytes.len() - WINDOW + 1..bytes.len() + 8 {
            assert_eq!(w.fetch(at), None);
        }
        assert_eq!(w.fetch(usize::MAX), None);
        for short in 0..WINDOW {
            let w = CodeWindow::new(&bytes[..short]);
            assert!((0..8).all(|at| w.fetch(at).is_none()));
        }
    }
}
