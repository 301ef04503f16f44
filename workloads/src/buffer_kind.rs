//! Where a workload keeps its I/O buffers (`--buffers heap|direct|pooled`): in an ordinary
//! collector object whose raw bytes hold the data (copied in and out with
//! `ObjRef::write_bytes`/`read_bytes`), in a direct buffer of its own native mapping per use
//! (`Scope::alloc_direct`, like the JDK's `ByteBuffer.allocateDirect`), or in a direct buffer
//! from one `NativePool` shared by the run's threads (`Scope::alloc_pooled`, like Netty's
//! pooled allocator). The workloads that take the option say so with
//! [`Workload::buffers`](crate::Workload::buffers).

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A kind of buffer.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum BufferKind {
    /// A collector object: the bytes live in the heap and move with it.
    #[default]
    Heap,
    /// `Scope::alloc_direct`: a native mapping of its own per buffer, owned by a small heap
    /// object whose cleaner frees it.
    Direct,
    /// `Scope::alloc_pooled`: a slot of a native pool shared by the run's threads.
    Pooled,
}

impl BufferKind {
    /// Every kind, in report order.
    pub const ALL: [BufferKind; 3] = [BufferKind::Heap, BufferKind::Direct, BufferKind::Pooled];

    /// The command-line and JSON name.
    pub fn name(self) -> &'static str {
        match self {
            BufferKind::Heap => "heap",
            BufferKind::Direct => "direct",
            BufferKind::Pooled => "pooled",
        }
    }

    /// True for the kinds whose bytes are native memory (counted in `DirectStats`).
    pub fn is_native(self) -> bool {
        self != BufferKind::Heap
    }
}

impl fmt::Display for BufferKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BufferKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        BufferKind::ALL
            .into_iter()
            .find(|k| k.name() == s.trim())
            .ok_or_else(|| {
                format!("unknown buffer kind {s:?}: use one of heap, direct, pooled (--buffers)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in BufferKind::ALL {
            assert_eq!(k.name().parse::<BufferKind>().unwrap(), k);
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::json!(k.name())
            );
            assert_eq!(k.to_possible_value().unwrap().get_name(), k.name());
        }
        let e = "offheap".parse::<BufferKind>().unwrap_err();
        assert!(e.contains("heap, direct, pooled"), "{e}");
    }
}
