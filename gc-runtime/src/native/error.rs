//! The errors of the native buffer pool: bad requests (a zero or absurd size, an access out of
//! bounds), the use of a buffer after its last `release`, a bad pool configuration, and the
//! operating system refusing memory. Each message says what was asked and what the limit is.

use thiserror::Error;

/// What went wrong in a [`super::NativePool`] or [`super::PooledBuffer`] call.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum NativeError {
    /// A buffer of zero bytes was asked for.
    #[error("a native buffer needs at least 1 byte (asked for 0)")]
    ZeroSize,
    /// A buffer larger than the pool's `max_buffer_size` was asked for.
    #[error("a native buffer of {requested} bytes is larger than this pool's limit of {max} bytes (PoolConfig::max_buffer_size)")]
    TooLarge {
        /// Bytes asked for.
        requested: usize,
        /// The pool's limit.
        max: usize,
    },
    /// The buffer's reference count already reached zero: its memory is back in the pool.
    #[error("buffer #{id} was already released (reference count 0): {op} after the last release")]
    Released {
        /// The buffer's id.
        id: u64,
        /// The operation that was refused (`release`, `retain`, `read`, `write`).
        op: &'static str,
    },
    /// `retain` would overflow the reference count.
    #[error("buffer #{id}: retain would overflow the reference count ({count})")]
    RefCountOverflow {
        /// The buffer's id.
        id: u64,
        /// The count now.
        count: u32,
    },
    /// A read or write outside `0..len`.
    #[error("buffer #{id}: access of {len} bytes at offset {offset} is out of bounds (buffer length {buffer_len})")]
    OutOfBounds {
        /// The buffer's id.
        id: u64,
        /// First byte accessed.
        offset: usize,
        /// Bytes accessed.
        len: usize,
        /// The buffer's length.
        buffer_len: usize,
    },
    /// A [`super::PoolConfig`] field out of range.
    #[error("invalid native pool configuration: {0}")]
    Config(String),
    /// The operating system refused a mapping.
    #[error("{what} of {bytes} bytes failed: {message}")]
    Os {
        /// What was being done (`mmap of a pool chunk`, ...).
        what: &'static str,
        /// The size asked for.
        bytes: usize,
        /// The OS error text.
        message: String,
    },
}
