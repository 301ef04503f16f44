//! The layout of every Lox object in the collector's heap.
//!
//! The collector sees an object as a shape id, `n` reference slots and some raw bytes (see
//! `gc_core::object`); it traces the slots and never looks at the bytes. Each Lox object kind
//! is a shape id below, with this layout (slots first, then raw bytes; all integers little
//! endian; a *value* is a reference slot plus 16 raw bytes, see [`crate::value`]):
//!
//! | shape | reference slots | raw bytes |
//! |---|---|---|
//! | [`STRING`] | — | content hash `u64`, then the UTF-8 bytes |
//! | [`FUNCTION`] | name (string, null for the script), constants (value array) | arity `u32`, upvalue count `u32`, code length `u32`, the VM's code id `u32`, the code plus [`CODE_PADDING`] zero bytes, then one `u32` line per code byte |
//! | [`CLOSURE`] | function, its constants (the function's, so that a call need not load the function), then one upvalue per captured variable | the function's code id `u64` |
//! | [`UPVALUE`] | closed value's object, next open upvalue | tag, payload: the closed value, or [`TAG_OPEN`](crate::value::TAG_OPEN) and the stack slot |
//! | [`CLASS`] | name, methods (table) | — |
//! | [`INSTANCE`] | class, fields (table, null until the first field is set) | — |
//! | [`BOUND_METHOD`] | receiver, method (closure) | — |
//! | [`NATIVE`] | name | native id `u64` |
//! | [`TABLE`] | the buckets' keys, then their values' objects: `2 * capacity` | entry count `u64`, then per bucket the value's NaN-boxed word ([`Value::to_raw`]; the key's hash is in the key) |
//! | [`VALUE_ARRAY`] | one per element | tag, payload per element |
//!
//! Nothing in a layout depends on an object's address: objects move.

use crate::value::Value;
use gc_runtime::ObjRef;

/// An interned string.
pub const STRING: u32 = 1;
/// A function: bytecode and constants.
pub const FUNCTION: u32 = 2;
/// A closure: a function and its captured upvalues.
pub const CLOSURE: u32 = 3;
/// A captured variable.
pub const UPVALUE: u32 = 4;
/// A class.
pub const CLASS: u32 = 5;
/// An instance of a class.
pub const INSTANCE: u32 = 6;
/// A method bound to its receiver.
pub const BOUND_METHOD: u32 = 7;
/// A native function.
pub const NATIVE: u32 = 8;
/// A hash table (globals, fields, methods).
pub const TABLE: u32 = 9;
/// An array of values (a function's constants).
pub const VALUE_ARRAY: u32 = 10;

/// Raw offset of a string's first content byte (after the hash).
pub const STRING_BYTES: usize = 8;

/// Raw offset of a function's code.
pub const FN_CODE: usize = 16;
/// Zero bytes after a function's code, so that the interpreter can always copy this many bytes
/// of code at once, wherever it is in the code.
pub const CODE_PADDING: usize = 32;

/// Slot of a function's name.
pub const FN_NAME: usize = 0;
/// Slot of a function's constants.
pub const FN_CONSTANTS: usize = 1;
/// Slot of a closure's function.
pub const CLOSURE_FUNCTION: usize = 0;
/// Slot of a closure's constants (its function's [`FN_CONSTANTS`]).
pub const CLOSURE_CONSTANTS: usize = 1;
/// Slot of a closure's first upvalue.
pub const CLOSURE_UPVALUES: usize = 2;
/// Raw offset of a closure's code id (its function's, as a `u64`).
pub const CLOSURE_CODE: usize = 0;
/// Raw bytes of a closure.
pub const CLOSURE_BYTES: usize = 8;
/// Slot of a class's name / an instance's class / a bound method's receiver.
pub const CLASS_NAME: usize = 0;
/// Slot of a class's method table.
pub const CLASS_METHODS: usize = 1;
/// Slot of an instance's class.
pub const INSTANCE_CLASS: usize = 0;
/// Slot of an instance's field table.
pub const INSTANCE_FIELDS: usize = 1;
/// Slot of a bound method's receiver.
pub const BOUND_RECEIVER: usize = 0;
/// Slot of a bound method's closure.
pub const BOUND_METHOD_SLOT: usize = 1;
/// Slot of a closed upvalue's object.
pub const UPVALUE_VALUE: usize = 0;
/// Slot of the next open upvalue (the open list is sorted by stack slot, highest first).
pub const UPVALUE_NEXT: usize = 1;

/// The native function `clock()`.
pub const NATIVE_CLOCK: u64 = 0;

/// The content hash of a string (tables are keyed by it; never by address).
#[inline]
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = ContentHash::new(bytes.len());
    h.write(bytes);
    h.finish()
}

/// Strings up to this many bytes are hashed a byte at a time, longer ones a word at a time.
const SHORT_STRING: usize = 16;

/// The content hash of a string of known length, fed in pieces of which all but the last are
/// multiples of 8 bytes long.
///
/// A string of up to [`SHORT_STRING`] bytes (names, mostly) is hashed with 64-bit FNV-1a, one
/// byte at a time: cheap at that length, and its low bits, which pick a table's bucket, depend
/// on every byte (names that differ in one letter land in different buckets). A longer string
/// is hashed a word (8 bytes) at a time, then mixed with its length by a finalizer (murmur3's),
/// so that every bit of the result depends on every byte: about an eighth of the work per byte.
pub struct ContentHash {
    h: u64,
    words: bool,
}

/// FNV-1a's initial value.
const FNV_SEED: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// The word hash's multiplier (FxHash's).
const WORD_K: u64 = 0x517c_c1b7_2722_0a95;

impl ContentHash {
    /// A hash of a string of `len` bytes.
    #[inline]
    pub fn new(len: usize) -> ContentHash {
        let words = len > SHORT_STRING;
        ContentHash {
            h: if words {
                FNV_SEED ^ len as u64
            } else {
                FNV_SEED
            },
            words,
        }
    }

    /// Feeds the next piece of the string: all pieces but the last must be multiples of 8
    /// bytes long.
    #[inline]
    pub fn write(&mut self, piece: &[u8]) {
        let mut h = self.h;
        if self.words {
            let mut words = piece.chunks_exact(8);
            for w in &mut words {
                let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                h = (h.rotate_left(5) ^ w).wrapping_mul(WORD_K);
            }
            let tail = words.remainder();
            if !tail.is_empty() {
                let mut last = [0u8; 8];
                last[..tail.len()].copy_from_slice(tail);
                h = (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(WORD_K);
            }
        } else {
            for &b in piece {
                h ^= b as u64;
                h = h.wrapping_mul(FNV_PRIME);
            }
        }
        self.h = h;
    }

    /// The hash of the pieces written.
    #[inline]
    pub fn finish(self) -> u64 {
        let mut h = self.h;
        if self.words {
            h ^= h >> 33;
            h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
            h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            h ^= h >> 33;
        }
        h
    }
}

/// Reads a little-endian `u32` of raw bytes.
#[inline]
pub fn read_u32(o: ObjRef<'_>, offset: usize) -> u32 {
    // A 4-aligned u32 is half of an 8-aligned word: one atomic load, no byte copy.
    match offset % 8 {
        0 => return o.read_u64(offset) as u32,
        4 => return (o.read_u64(offset - 4) >> 32) as u32,
        _ => {}
    }
    let mut b = [0u8; 4];
    o.read_bytes(offset, &mut b);
    u32::from_le_bytes(b)
}

/// A string's content hash.
#[inline]
pub fn string_hash(o: ObjRef<'_>) -> u64 {
    o.read_u64(0)
}

/// A string's length in bytes.
#[inline]
pub fn string_len(o: ObjRef<'_>) -> usize {
    o.n_bytes() - STRING_BYTES
}

/// Appends a string's bytes to `out`.
pub fn string_bytes(o: ObjRef<'_>, out: &mut Vec<u8>) {
    let len = string_len(o);
    let start = out.len();
    out.resize(start + len, 0);
    o.read_bytes(STRING_BYTES, &mut out[start..]);
}

/// A string's contents as a Rust string.
pub fn string_text(o: ObjRef<'_>) -> String {
    let mut bytes = Vec::new();
    string_bytes(o, &mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads the value stored at reference slot `slot` and raw offset `offset` (8-aligned: two
/// word loads).
#[inline]
pub fn read_value<'a>(o: ObjRef<'a>, slot: usize, offset: usize) -> (Value, Option<ObjRef<'a>>) {
    debug_assert!(offset.is_multiple_of(8));
    let v = Value::decode(o.read_u64(offset), o.read_u64(offset + 8));
    let r = if v == Value::Obj { o.load(slot) } else { None };
    (v, r)
}

/// Stores a value at reference slot `slot` and raw offset `offset` (8-aligned: two word
/// stores).
#[inline]
pub fn write_value(o: ObjRef<'_>, slot: usize, offset: usize, v: Value, r: Option<ObjRef<'_>>) {
    debug_assert!(offset.is_multiple_of(8));
    let [tag, bits] = v.encode();
    o.write_u64(offset, tag);
    o.write_u64(offset + 8, bits);
    o.store(slot, if v == Value::Obj { r } else { None });
}

/// A function's arity.
#[inline]
pub fn function_arity(f: ObjRef<'_>) -> usize {
    read_u32(f, 0) as usize
}

/// A function's number of upvalues.
#[inline]
pub fn function_upvalues(f: ObjRef<'_>) -> usize {
    read_u32(f, 4) as usize
}

/// A function's code length.
#[inline]
pub fn function_code_len(f: ObjRef<'_>) -> usize {
    read_u32(f, 8) as usize
}

/// The source line of code byte `offset` of a function.
pub fn function_line(f: ObjRef<'_>, offset: usize) -> u32 {
    let len = function_code_len(f);
    if offset >= len {
        return 0;
    }
    read_u32(f, FN_CODE + len + CODE_PADDING + 4 * offset)
}

/// Raw byte size of a function with `code_len` code bytes.
pub fn function_raw_size(code_len: usize) -> usize {
    FN_CODE + code_len + CODE_PADDING + 4 * code_len
}

/// The name of a function as a stack trace shows it: `name()`, or `script` for the top level.
pub fn function_trace_name(f: ObjRef<'_>) -> String {
    match f.load(FN_NAME) {
        Some(name) => format!("{}()", string_text(name)),
        None => "script".to_string(),
    }
}

/// How Lox prints an object (`print`).
pub fn display_object(o: ObjRef<'_>) -> String {
    match o.shape() {
        STRING => string_text(o),
        FUNCTION => match o.load(FN_NAME) {
            Some(name) => format!("<fn {}>", string_text(name)),
            None => "<script>".to_string(),
        },
        CLOSURE => display_object(o.load(CLOSURE_FUNCTION).expect("closure has a function")),
        UPVALUE => "upvalue".to_string(),
        CLASS => string_text(o.load(CLASS_NAME).expect("class has a name")),
        INSTANCE => {
            let class = o.load(INSTANCE_CLASS).expect("instance has a class");
            format!(
                "{} instance",
                string_text(class.load(CLASS_NAME).expect("class has a name"))
            )
        }
        BOUND_METHOD => display_object(
            o.load(BOUND_METHOD_SLOT)
                .expect("bound method has a method"),
        ),
        NATIVE => "<native fn>".to_string(),
        TABLE => "<table>".to_string(),
        VALUE_ARRAY => "<array>".to_string(),
        other => format!("<object {other}>"),
    }
}
