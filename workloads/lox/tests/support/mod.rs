//! What the Lox integration tests share: an output sink the test can read back.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

/// A `Write` that appends to a shared buffer; clones share it, so the interpreter writes into
/// one clone and the test reads the other.
#[derive(Clone, Default)]
pub struct Buffer(Rc<RefCell<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    /// Everything written so far, as text, emptying the buffer.
    pub fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.borrow_mut())).unwrap()
    }
}
