//! The layout of every Lox object in the collector's heap.
//!
//! The collector sees an object as a shape id, `n` reference slots and some raw bytes (see
//! `gc_core::object`); it traces the slots and never looks at the bytes. It also knows value
//! slots (`gc_runtime::ValueBits`): one NaN-boxed word holding a number, an immediate or an
//! object, traced, healed and relocated when it holds an object. A Lox value stored in an
//! object is one value slot, its word the VM's own NaN-boxing ([`Value::to_raw`], an object as
//! the pointer instead of [`RAW_OBJ`]; see [`crate::value`]). Each Lox object kind is a
//! shape id below, with this layout (reference slots, then value slots, then raw bytes; all
//! integers little endian):
//!
//! | shape | reference slots | value slots | raw bytes |
//! |---|---|---|---|
//! | [`STRING`] | — | — | content hash `u64`, then the UTF-8 bytes |
//! | [`FUNCTION`] | name (string, null for the script), constants (value array) | — | arity `u32`, upvalue count `u32`, code length `u32`, the VM's code id `u32`, the code plus [`CODE_PADDING`] zero bytes, then one `u32` line per code byte |
//! | [`CLOSURE`] + the function's code id | function, its constants (the function's), then one upvalue per captured variable | — | — |
//! | [`UPVALUE`] | next open upvalue | the closed value, or while open the stack slot as an immediate ([`RAW_OPEN`] plus the slot) | — |
//! | [`CLASS`] | name, methods (table) | — | — |
//! | [`INSTANCE`] | class, fields (table, null until the first field is set) | — | — |
//! | [`BOUND_METHOD`] | receiver, method (closure) | — | — |
//! | [`NATIVE`] | name | — | native id `u64` |
//! | [`TABLE`] | the buckets' keys: `capacity` | the buckets' values: `capacity` | entry count `u64` (the key's hash is in the key) |
//! | [`VALUE_ARRAY`] | one per element | — | tag, payload per element (none for the VM's globals, whose words the VM keeps) |
//!
//! Nothing in a layout depends on an object's address: objects move.
//!
//! This file is the only one that knows a raw offset: every other file reads and writes an
//! object's raw bytes through the accessors here ([`string_hash`], [`function_code_id`],
//! [`upvalue_state`], [`table_value`], ...) and names its reference slots by the constants here,
//! so that a layout changes in one place. The accessors on the interpreter's hot path are
//! `#[inline(always)]`: each compiles to the one load or store it names.

#[cfg(doc)]
use crate::value::RAW_OBJ;
use crate::value::{from_slot, to_slot, Value, RAW_OPEN, VALUE_BYTES};
use gc_runtime::{Fresh, ObjRef, ValueBits};

/// An interned string.
pub const STRING: u32 = 1;
/// A function: bytecode and constants.
pub const FUNCTION: u32 = 2;
/// A closure: a function and its captured upvalues. The first of the closures' shapes: a
/// closure of the function whose code id is `id` has shape `CLOSURE + id`
/// ([`closure_shape`]), so that a call reads the callee's code id from the header word it
/// tests the kind in, with no raw-area offset or range check ([`closure_code_id`]). Every
/// shape from here up is a closure's (the collector reserves only `u32::MAX`, for its
/// direct buffers, which Lox does not make; [`MAX_CODE_ID`] keeps below it).
pub const CLOSURE: u32 = 0x100;
/// The largest code id a closure's shape can hold.
pub const MAX_CODE_ID: u32 = u32::MAX - 1 - CLOSURE;
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

// ----- strings ----------------------------------------------------------------------------

/// Raw offset of a string's content hash.
const STRING_HASH: usize = 0;
/// Raw offset of a string's first content byte (after the hash).
const STRING_BYTES: usize = 8;

// ----- functions --------------------------------------------------------------------------

/// Reference slots of a function: [`FN_NAME`], [`FN_CONSTANTS`].
pub const FUNCTION_REFS: u32 = 2;
/// Slot of a function's name.
pub const FN_NAME: usize = 0;
/// Slot of a function's constants.
pub const FN_CONSTANTS: usize = 1;
/// Raw offset of a function's arity (`u32`).
const FN_ARITY: usize = 0;
/// Raw offset of a function's upvalue count (`u32`).
const FN_UPVALUE_COUNT: usize = 4;
/// Raw offset of a function's code length (`u32`).
const FN_CODE_LEN: usize = 8;
/// Raw offset of a function's code id (`u32`): its index into the VM's Rust-side copies of
/// the loaded code.
const FN_CODE_ID: usize = 12;
/// Raw offset of a function's code.
const FN_CODE: usize = 16;
/// Zero bytes after a function's code, so that the interpreter can always copy this many bytes
/// of code at once, wherever it is in the code.
pub const CODE_PADDING: usize = 32;

// ----- closures ---------------------------------------------------------------------------

/// Slot of a closure's function.
pub const CLOSURE_FUNCTION: usize = 0;
/// Slot of a closure's constants (its function's [`FN_CONSTANTS`]).
pub const CLOSURE_CONSTANTS: usize = 1;
/// Slot of a closure's first upvalue.
pub const CLOSURE_UPVALUES: usize = 2;
/// Raw bytes of a closure (its code id is in its shape).
pub const CLOSURE_BYTES: usize = 0;

// ----- upvalues ---------------------------------------------------------------------------

/// Reference slots of an upvalue: [`UPVALUE_NEXT`].
pub const UPVALUE_REFS: u32 = 1;
/// Slot of the next open upvalue (the open list is sorted by stack slot, highest first).
pub const UPVALUE_NEXT: usize = 0;
/// Value slots of an upvalue: one, the closed value or the open stack slot.
pub const UPVALUE_VALUES: u32 = 1;
/// Value slot of an upvalue: the closed value, or [`RAW_OPEN`] plus the stack slot while open.
const UPVALUE_VALUE: usize = 0;
/// Raw bytes of an upvalue: none.
pub const UPVALUE_BYTES: usize = 0;

// ----- classes, instances, bound methods ----------------------------------------------------

/// Reference slots of a class: [`CLASS_NAME`], [`CLASS_METHODS`] (no raw bytes).
pub const CLASS_REFS: u32 = 2;
/// Slot of a class's name.
pub const CLASS_NAME: usize = 0;
/// Slot of a class's method table.
pub const CLASS_METHODS: usize = 1;
/// Reference slots of an instance: [`INSTANCE_CLASS`], [`INSTANCE_FIELDS`] (no raw bytes).
pub const INSTANCE_REFS: u32 = 2;
/// Slot of an instance's class.
pub const INSTANCE_CLASS: usize = 0;
/// Slot of an instance's field table.
pub const INSTANCE_FIELDS: usize = 1;
/// Reference slots of a bound method: [`BOUND_RECEIVER`], [`BOUND_METHOD_SLOT`] (no raw
/// bytes).
pub const BOUND_METHOD_REFS: u32 = 2;
/// Slot of a bound method's receiver.
pub const BOUND_RECEIVER: usize = 0;
/// Slot of a bound method's closure.
pub const BOUND_METHOD_SLOT: usize = 1;

// ----- natives ----------------------------------------------------------------------------

/// Reference slots of a native function: [`NATIVE_NAME`].
pub const NATIVE_REFS: u32 = 1;
/// Slot of a native function's name.
pub const NATIVE_NAME: usize = 0;
/// Raw bytes of a native function: its id.
pub const NATIVE_BYTES: usize = 8;
/// Raw offset of a native function's id (`u64`).
const NATIVE_ID: usize = 0;

// ----- tables -----------------------------------------------------------------------------

/// Raw offset of a table's entry count (`u64`).
const TABLE_COUNT: usize = 0;
/// Raw bytes of a table: the count.
const TABLE_BYTES: usize = 8;

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
/// A string of up to `SHORT_STRING` bytes (names, mostly) is hashed with 64-bit FNV-1a, one
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

// ----- raw words ----------------------------------------------------------------------------
//
// Every read and write of a Lox object's raw bytes is below: the rest of the interpreter names
// a field by its accessor, never by its offset (`tests/object_layout.rs` checks it).

/// Reads a little-endian `u32` of raw bytes.
#[inline]
fn read_u32(o: ObjRef<'_>, offset: usize) -> u32 {
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

/// Stores a value at reference slot `slot` and raw offset `offset` (8-aligned: two word
/// stores).
#[inline]
fn write_value(o: ObjRef<'_>, slot: usize, offset: usize, v: Value, r: Option<ObjRef<'_>>) {
    debug_assert!(offset.is_multiple_of(8));
    let [tag, bits] = v.encode();
    o.write_u64(offset, tag);
    o.write_u64(offset + 8, bits);
    o.store(slot, if v == Value::Obj { r } else { None });
}

/// Raw byte size of a string of `len` bytes.
#[inline]
pub fn string_raw_size(len: usize) -> usize {
    STRING_BYTES + len
}

/// A string's content hash.
#[inline]
pub fn string_hash(o: ObjRef<'_>) -> u64 {
    o.read_u64(STRING_HASH)
}

/// Sets a new string's content hash.
#[inline]
pub fn set_string_hash(o: ObjRef<'_>, hash: u64) {
    o.write_u64(STRING_HASH, hash);
}

/// A string's length in bytes.
#[inline]
pub fn string_len(o: ObjRef<'_>) -> usize {
    o.n_bytes() - STRING_BYTES
}

/// Copies a string's bytes from content offset `at` on into `out` (`out.len()` of them).
#[inline]
pub fn read_string_bytes(o: ObjRef<'_>, at: usize, out: &mut [u8]) {
    o.read_bytes(STRING_BYTES + at, out);
}

/// Writes `bytes` into a new string's contents from content offset `at` on.
#[inline]
pub fn write_string_bytes(o: ObjRef<'_>, at: usize, bytes: &[u8]) {
    o.write_bytes(STRING_BYTES + at, bytes);
}

/// Appends a string's bytes to `out`.
pub fn string_bytes(o: ObjRef<'_>, out: &mut Vec<u8>) {
    let len = string_len(o);
    let start = out.len();
    out.resize(start + len, 0);
    read_string_bytes(o, 0, &mut out[start..]);
}

/// A string's contents as a Rust string.
pub fn string_text(o: ObjRef<'_>) -> String {
    let mut bytes = Vec::new();
    string_bytes(o, &mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Writes a new function's raw bytes: its header (arity, upvalue count, code length, code id),
/// its code (the padding after it stays zero), and one source line per code byte. `f` was
/// allocated with [`function_raw_size`]`(code.len())` bytes.
// `#[inline]` for the speed of the dispatch loop, not of this: it keeps these byte writes in
// the VM's codegen unit, as they were when the loader wrote the bytes itself. Without them
// there, LLVM inlined the byte-wise fallback of the collector's `write_u64` into its one
// remaining copy, which then grew too big to inline where `SET_PROPERTY` stores a table
// entry's word: a call on that path.
#[inline]
pub fn init_function(
    f: ObjRef<'_>,
    arity: u32,
    upvalues: u32,
    code_id: u32,
    code: &[u8],
    lines: &[u32],
) {
    debug_assert_eq!(code.len(), lines.len());
    let code_len = u32::try_from(code.len()).expect("code shorter than 4 GiB");
    let mut header = [0u8; FN_CODE];
    for (offset, field) in [
        (FN_ARITY, arity),
        (FN_UPVALUE_COUNT, upvalues),
        (FN_CODE_LEN, code_len),
        (FN_CODE_ID, code_id),
    ] {
        header[offset..offset + 4].copy_from_slice(&field.to_le_bytes());
    }
    f.write_bytes(0, &header);
    f.write_bytes(FN_CODE, code);
    let lines: Vec<u8> = lines.iter().flat_map(|line| line.to_le_bytes()).collect();
    f.write_bytes(function_lines(code.len()), &lines);
}

/// Raw offset of the line table of a function with `code_len` code bytes.
#[inline]
fn function_lines(code_len: usize) -> usize {
    FN_CODE + code_len + CODE_PADDING
}

/// A function's arity.
#[inline]
pub fn function_arity(f: ObjRef<'_>) -> usize {
    read_u32(f, FN_ARITY) as usize
}

/// A function's number of upvalues.
#[inline]
pub fn function_upvalues(f: ObjRef<'_>) -> usize {
    read_u32(f, FN_UPVALUE_COUNT) as usize
}

/// A function's code length.
#[inline]
pub fn function_code_len(f: ObjRef<'_>) -> usize {
    read_u32(f, FN_CODE_LEN) as usize
}

/// The id of a function's Rust-side code (the VM's index of its copy of the code).
#[inline(always)]
pub fn function_code_id(f: ObjRef<'_>) -> u32 {
    read_u32(f, FN_CODE_ID)
}

/// Copies a function's code bytes from code offset `at` on into `out` (`out.len()` of them).
#[inline]
pub fn read_function_code(f: ObjRef<'_>, at: usize, out: &mut [u8]) {
    f.read_bytes(FN_CODE + at, out);
}

/// The source line of code byte `offset` of a function.
pub fn function_line(f: ObjRef<'_>, offset: usize) -> u32 {
    let len = function_code_len(f);
    if offset >= len {
        return 0;
    }
    read_u32(f, function_lines(len) + 4 * offset)
}

/// Raw byte size of a function with `code_len` code bytes.
pub fn function_raw_size(code_len: usize) -> usize {
    function_lines(code_len) + 4 * code_len
}

/// The shape of a closure of the function with code id `id` (at most [`MAX_CODE_ID`]).
#[inline(always)]
pub fn closure_shape(id: u32) -> u32 {
    debug_assert!(id <= MAX_CODE_ID);
    CLOSURE + id
}

/// True if `shape` is a closure's.
#[inline(always)]
pub fn is_closure_shape(shape: u32) -> bool {
    shape >= CLOSURE
}

/// The code id of a closure of shape `shape` ([`is_closure_shape`]).
#[inline(always)]
pub fn shape_code_id(shape: u32) -> u32 {
    debug_assert!(is_closure_shape(shape));
    shape - CLOSURE
}

/// The code id of closure `c` (its function's, in its shape, so that a call need not load
/// the function).
#[inline(always)]
pub fn closure_code_id(c: ObjRef<'_>) -> u32 {
    shape_code_id(c.shape())
}

/// What an upvalue holds: the stack slot of an open one, or a closed one's value.
pub enum UpvalueState<'a> {
    Open(usize),
    Closed(u64, Option<ObjRef<'a>>),
}

/// The stack slot of an open upvalue's word, or `None` for a closed value (whose words are
/// never in `RAW_OPEN..RAW_OPEN + STACK_MAX`: Lox values are numbers, `nil`, booleans and
/// objects).
#[inline(always)]
fn open_slot(bits: u64) -> Option<usize> {
    let slot = bits.wrapping_sub(RAW_OPEN);
    (slot < crate::stack::STACK_MAX as u64).then_some(slot as usize)
}

/// What upvalue `up` holds (one barrier load of its value slot).
#[inline(always)]
pub fn upvalue_state(up: ObjRef<'_>) -> UpvalueState<'_> {
    match up.load_value_bits(UPVALUE_VALUE) {
        ValueBits::Bits(bits) => match open_slot(bits) {
            Some(slot) => UpvalueState::Open(slot),
            None => UpvalueState::Closed(bits, None),
        },
        ValueBits::Ref(o) => UpvalueState::Closed(crate::value::RAW_OBJ, Some(o)),
    }
}

/// The stack slot of an open upvalue.
#[inline(always)]
pub fn upvalue_slot(up: ObjRef<'_>) -> usize {
    match upvalue_state(up) {
        UpvalueState::Open(slot) => slot,
        UpvalueState::Closed(..) => unreachable!("an upvalue on the open list is open"),
    }
}

/// Makes a new upvalue open on stack slot `slot`.
#[inline]
pub fn open_upvalue(up: ObjRef<'_>, slot: usize) {
    up.store_value_bits(UPVALUE_VALUE, ValueBits::Bits(RAW_OPEN + slot as u64));
}

/// Makes a just-allocated upvalue open on stack slot `slot`, its next open upvalue `next`.
#[inline(always)]
pub fn init_open_upvalue(up: &Fresh<'_>, slot: usize, next: Option<ObjRef<'_>>) {
    up.init(UPVALUE_NEXT, next);
    up.init_value(UPVALUE_VALUE, ValueBits::Bits(RAW_OPEN + slot as u64));
}

/// Stores the value of word `raw` (object `r` if it is one) in an upvalue's own slot: closes
/// it if it was open.
#[inline(always)]
pub fn set_upvalue_value(up: ObjRef<'_>, raw: u64, r: Option<ObjRef<'_>>) {
    up.store_value_bits(UPVALUE_VALUE, to_slot(raw, r));
}

/// A native function's id ([`NATIVE_CLOCK`], ...).
#[inline(always)]
pub fn native_id(n: ObjRef<'_>) -> u64 {
    n.read_u64(NATIVE_ID)
}

/// Sets a new native function's id.
#[inline]
pub fn set_native_id(n: ObjRef<'_>, id: u64) {
    n.write_u64(NATIVE_ID, id);
}

/// Raw byte size of a table (any capacity: the count).
#[inline]
pub fn table_raw_size() -> usize {
    TABLE_BYTES
}

/// A table's count of used buckets.
#[inline(always)]
pub fn table_count(t: ObjRef<'_>) -> usize {
    t.read_u64(TABLE_COUNT) as usize
}

/// Sets a table's count of used buckets.
#[inline(always)]
pub fn set_table_count(t: ObjRef<'_>, count: usize) {
    t.write_u64(TABLE_COUNT, count as u64);
}

/// The value in bucket `i` (one barrier load of its value slot): its word, and its object if
/// it is one (an empty bucket reads as the number 0).
#[inline(always)]
pub fn table_value(t: ObjRef<'_>, i: usize) -> (u64, Option<ObjRef<'_>>) {
    from_slot(t.load_value_bits(i))
}

/// The object in bucket `i`, if its value is one.
#[inline(always)]
pub fn table_object(t: ObjRef<'_>, i: usize) -> Option<ObjRef<'_>> {
    match t.load_value_bits(i) {
        ValueBits::Ref(o) => Some(o),
        ValueBits::Bits(_) => None,
    }
}

/// Sets the value in bucket `i` to word `raw` (object `r` if it is [`RAW_OBJ`]): one store.
#[inline(always)]
pub fn set_table_value(t: ObjRef<'_>, i: usize, raw: u64, r: Option<ObjRef<'_>>) {
    t.store_value_bits(i, to_slot(raw, r));
}

/// Raw byte size of a value array of `n` elements.
#[inline]
pub fn value_array_raw_size(n: usize) -> usize {
    VALUE_BYTES * n
}

/// Stores value `v` (object `r` if it is one) as element `i` of a value array.
#[inline]
pub fn set_value_array_element(a: ObjRef<'_>, i: usize, v: Value, r: Option<ObjRef<'_>>) {
    write_value(a, i, VALUE_BYTES * i, v, r);
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
        s if is_closure_shape(s) => {
            display_object(o.load(CLOSURE_FUNCTION).expect("closure has a function"))
        }
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
