//! A function's bytecode as the dispatch loop fetches it: four bytes at a time (an opcode and
//! up to three operand bytes), with one comparison per instruction.
//!
//! [`CodeBytes`] holds a function's code followed by [`PADDING`] zero bytes, so that the 4-byte
//! window of every offset inside the code is in range, and its *limit*, the first offset whose
//! window would not fit, computed once when the function is loaded. The dispatch loop keeps a
//! [`CodeWindow`] of the current function's bytes (a copy of the pointer and the limit, made
//! without computing anything on each call and return), and [`CodeWindow::fetch`] compares an
//! offset against the limit once (an `ip` that jumped or ran out of the code fails that test)
//! instead of the two tests a checked sub-slice makes.

/// Zero bytes after the code: every offset of the code has a full window.
const PADDING: usize = 4;

/// Bytes fetched per instruction.
const WINDOW: usize = 4;

/// A function's padded bytecode and its fetch limit. See the module documentation.
pub(super) struct CodeBytes {
    bytes: Box<[u8]>,
    /// `bytes.len() + 1 - WINDOW`: every `at < limit` has `at + WINDOW <= bytes.len()`.
    limit: usize,
}

impl CodeBytes {
    /// A padded copy of `code`.
    pub(super) fn new(code: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(code.len() + PADDING);
        bytes.extend_from_slice(code);
        bytes.extend_from_slice(&[0; PADDING]);
        let bytes = bytes.into_boxed_slice();
        // At least PADDING = WINDOW bytes, so this does not underflow.
        let limit = bytes.len() + 1 - WINDOW;
        CodeBytes { bytes, limit }
    }

    /// The window the dispatch loop fetches through.
    #[inline(always)]
    pub(super) fn window(&self) -> CodeWindow<'_> {
        CodeWindow {
            bytes: &self.bytes,
            limit: self.limit,
        }
    }
}

/// The bytes and limit of a [`CodeBytes`], borrowed. See the module documentation.
#[derive(Clone, Copy)]
pub(super) struct CodeWindow<'a> {
    bytes: &'a [u8],
    /// As [`CodeBytes::limit`]: `bytes.len() + 1 - WINDOW`.
    limit: usize,
}

impl CodeWindow<'_> {
    /// The four bytes at offset `at`, or `None` if `at` is past the code.
    #[inline(always)]
    #[allow(unsafe_code)] // lox's one unsafe block; see its SAFETY comment.
    pub(super) fn fetch(self, at: usize) -> Option<[u8; WINDOW]> {
        if at < self.limit {
            // SAFETY: a window is made only by `CodeBytes::window`, from the bytes and the
            // limit that `CodeBytes::new` computed from them (`bytes.len() + 1 - WINDOW`);
            // the fields of both types are private and never changed. So `at < limit` gives
            // `at + WINDOW <= bytes.len()`: the `WINDOW` bytes read lie inside `bytes`;
            // `[u8; WINDOW]` has alignment 1.
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
    fn fetches_every_window_in_the_code_and_nothing_past_it() {
        for len in 0..6 {
            let code: Vec<u8> = (1..=len as u8).collect();
            let bytes = CodeBytes::new(&code);
            let w = bytes.window();
            let mut padded = code.clone();
            padded.extend_from_slice(&[0; PADDING]);
            for at in 0..len {
                let expected: [u8; 4] = padded[at..at + 4].try_into().unwrap();
                assert_eq!(w.fetch(at), Some(expected));
            }
            assert_eq!(w.fetch(len), Some([0; 4]), "the padding after the code");
            for at in len + 1..len + 8 {
                assert_eq!(w.fetch(at), None);
            }
            assert_eq!(w.fetch(usize::MAX), None);
        }
    }
}
