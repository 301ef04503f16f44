//! Hash tables in the heap: globals, instance fields and class methods.
//!
//! clox's `Table`, as one heap object of shape [`TABLE`]: open addressing with linear probing,
//! keys are interned strings, the load factor is at most 3/4. The
//! bucket of a key is chosen by the string's *content hash*, stored in the string object —
//! never by its address, since the collector moves objects. Two interned strings are equal
//! exactly when they are the same object, so a probe compares identities ([`ObjRef::same`]:
//! the objects' current offsets, valid within one safepoint-free stretch).
//!
//! Each entry is a reference slot (the key) and a value slot (the value, one NaN-boxed word as
//! on the VM's stack, [`crate::value::Value::to_raw`], with an object as its pointer: see
//! [`crate::value::to_slot`]): bucket `i`'s key is reference slot `i`, its value value slot
//! `i`, so that a probe indexes the key slots by the bucket itself and setting a value is one
//! store. The count and the values are read and written through the accessors of
//! [`crate::object`] ([`table_count`], [`table_value`]), which owns the layout. An empty bucket
//! has a null key (its value slot holds the number 0, never read). Lox cannot delete a field or a method, so there are no
//! tombstones: a probe ends at the first empty bucket. A table never grows in place: [`set`]
//! allocates a bigger table object, copies the entries, and returns it; the caller stores it
//! into the owner (an instance's field slot, a class's method slot).

use crate::object::{
    set_table_count, set_table_value, string_hash, table_count, table_object, table_raw_size,
    table_value, TABLE,
};
#[cfg(doc)]
use crate::value::RAW_OBJ;
use gc_runtime::{Fresh, Local, ObjRef, OutOfMemory, Scope};

/// Capacity of a new table (6 entries before it grows; clox's first capacity too).
pub const MIN_CAPACITY: usize = 8;
/// Number of buckets.
#[inline]
pub fn capacity(t: ObjRef<'_>) -> usize {
    t.n_refs()
}

/// Number of used buckets.
#[inline]
pub fn count(t: ObjRef<'_>) -> usize {
    table_count(t)
}

/// Allocates an empty table of `capacity` buckets (a power of two).
pub fn alloc<'s>(s: &mut Scope<'s>, capacity: usize) -> Result<Local<'s>, OutOfMemory> {
    debug_assert!(capacity.is_power_of_two());
    let cap = capacity as u32;
    s.alloc_with_values(TABLE, cap, cap, table_raw_size())
}

/// Allocates an empty table of [`MIN_CAPACITY`] buckets on the allocation fast path
/// ([`Scope::alloc_fresh_with_values`]): `None` where that needs the slow path.
#[inline(always)]
pub fn alloc_fresh<'a>(s: &'a Scope<'_>) -> Option<Fresh<'a>> {
    let cap = MIN_CAPACITY as u32;
    s.alloc_fresh_with_values(TABLE, cap, cap, table_raw_size())
}

/// The bucket holding `key` (whose content hash is `hash`), if any.
#[inline(always)]
pub fn find(t: ObjRef<'_>, key: ObjRef<'_>, hash: u64) -> Option<usize> {
    find_with_capacity(t, key, hash).map(|(i, _)| i)
}

/// As [`find`], with the table's capacity (read from the header before the probe's barrier
/// loads, whose acquire ordering would make the compiler read it again).
#[inline(always)]
fn find_with_capacity(t: ObjRef<'_>, key: ObjRef<'_>, hash: u64) -> Option<(usize, usize)> {
    let cap = capacity(t);
    if cap == 0 {
        return None;
    }
    let mask = cap - 1;
    let mut i = hash as usize & mask;
    loop {
        let k = t.load(i)?;
        if k.same(&key) {
            return Some((i, cap));
        }
        i = (i + 1) & mask;
    }
}

/// The value of `key` (a string object), if the table has it: its word, and its object if it
/// is one.
#[inline(always)]
pub fn get<'a>(t: ObjRef<'a>, key: ObjRef<'_>) -> Option<(u64, Option<ObjRef<'a>>)> {
    get_hashed(t, key, string_hash(key))
}

/// As [`get`], with the key's content hash already known (the VM keeps the hash of every
/// name its code uses), so that the key object's bytes are not read.
#[inline(always)]
pub fn get_hashed<'a>(
    t: ObjRef<'a>,
    key: ObjRef<'_>,
    hash: u64,
) -> Option<(u64, Option<ObjRef<'a>>)> {
    let (i, _) = find_with_capacity(t, key, hash)?;
    Some(table_value(t, i))
}

/// As [`get_hashed`], for a table whose values are all objects (a class's methods): the
/// object of `key`'s value, read without its word.
#[inline(always)]
pub fn get_object_hashed<'a>(t: ObjRef<'a>, key: ObjRef<'_>, hash: u64) -> Option<ObjRef<'a>> {
    let (i, _) = find_with_capacity(t, key, hash)?;
    table_object(t, i)
}

/// The value in bucket `i`: its word, and its object if it is one.
#[inline(always)]
pub fn value_at<'a>(t: ObjRef<'a>, i: usize) -> (u64, Option<ObjRef<'a>>) {
    table_value(t, i)
}

/// The key in bucket `i` (`None` for an empty bucket).
#[inline]
pub fn key_at<'a>(t: ObjRef<'a>, i: usize) -> Option<ObjRef<'a>> {
    t.load(i)
}

/// Overwrites the value in bucket `i` with word `raw` (and object `r` if `raw` is
/// [`RAW_OBJ`]).
#[inline]
pub fn set_value_at(t: ObjRef<'_>, i: usize, raw: u64, r: Option<ObjRef<'_>>) {
    set_table_value(t, i, raw, r);
}

/// Sets `key` to the value of word `raw` (with object `r` if `raw` is [`RAW_OBJ`]) in `t` if
/// that needs no allocation: the key is there, or a free bucket is within the load factor.
/// Returns false, changing nothing, if the table must grow first (the caller then takes the
/// allocating path, [`set`]).
#[inline]
pub fn set_in_place(t: ObjRef<'_>, key: ObjRef<'_>, raw: u64, r: Option<ObjRef<'_>>) -> bool {
    set_in_place_hashed(t, key, string_hash(key), raw, r)
}

/// As [`set_in_place`], with the key's content hash already known (see [`get_hashed`]).
#[inline(always)]
pub fn set_in_place_hashed(
    t: ObjRef<'_>,
    key: ObjRef<'_>,
    hash: u64,
    raw: u64,
    r: Option<ObjRef<'_>>,
) -> bool {
    let cap = capacity(t);
    if cap == 0 {
        return false;
    }
    let mask = cap - 1;
    let mut i = hash as usize & mask;
    while let Some(k) = t.load(i) {
        if k.same(&key) {
            set_value_at(t, i, raw, r);
            return true;
        }
        i = (i + 1) & mask;
    }
    let used = count(t);
    if (used + 1) * 4 > cap * 3 {
        return false;
    }
    set_table_count(t, used + 1);
    t.store(i, Some(key));
    set_value_at(t, i, raw, r);
    true
}

/// Sets `key` to the value of word `raw` (with object `r` if `raw` is [`RAW_OBJ`]) in `table`, which
/// is allocated if `None` and grown (a new, bigger object) if full. Returns the table that now
/// holds the entry — store it back into the owner.
pub fn set<'s>(
    s: &mut Scope<'s>,
    table: Option<Local<'_>>,
    key: Local<'_>,
    raw: u64,
    r: Option<Local<'_>>,
) -> Result<Local<'s>, OutOfMemory> {
    let mut t = match table {
        Some(t) => s.root(s.get(t)),
        None => alloc(s, MIN_CAPACITY)?,
    };
    if !set_in_place(s.get(t), s.get(key), raw, r.map(|r| s.get(r))) {
        let cap = capacity(s.get(t));
        t = grow(s, t, cap * 2)?;
        let done = set_in_place(s.get(t), s.get(key), raw, r.map(|r| s.get(r)));
        debug_assert!(done, "a grown table has room");
    }
    Ok(t)
}

/// Copies the live entries of `old` into a new table of `new_capacity` buckets.
fn grow<'s>(
    s: &mut Scope<'s>,
    old: Local<'_>,
    new_capacity: usize,
) -> Result<Local<'s>, OutOfMemory> {
    let new = alloc(s, new_capacity)?;
    let (o, n) = (s.get(old), s.get(new));
    let mask = new_capacity - 1;
    let mut live = 0;
    for i in 0..capacity(o) {
        let Some(k) = o.load(i) else { continue };
        let (raw, r) = table_value(o, i);
        let mut j = string_hash(k) as usize & mask;
        while n.load(j).is_some() {
            j = (j + 1) & mask;
        }
        n.store(j, Some(k));
        set_table_value(n, j, raw, r);
        live += 1;
    }
    set_table_count(n, live);
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interner::Interner;
    use crate::value::Value;
    use gc_runtime::{Heap, HeapConfig, Mode};

    fn heap(mode: Mode) -> Heap {
        Heap::new(HeapConfig::new(16 << 20).mode(mode).verify(true)).unwrap()
    }

    #[test]
    fn set_get_grow_and_survive_collections() {
        for mode in [Mode::Concurrent, Mode::Stw] {
            let heap = heap(mode);
            let mut m = heap.attach("table-test").unwrap();
            let mut interner = Interner::new();
            m.scope(|s| {
                let mut table: Option<Local<'_>> = None;
                let n = 500;
                for i in 0..n {
                    s.scope(|_| ());
                    let key = interner.intern(s, format!("key{i}").as_bytes()).unwrap();
                    let t = set(s, table, key, Value::Number(i as f64).to_raw(), None).unwrap();
                    assert_eq!(count(s.get(t)), i + 1);
                    table = Some(t);
                    if i % 100 == 0 {
                        s.collect("table test");
                    }
                }
                let t = table.unwrap();
                assert!(capacity(s.get(t)) >= 1024 && count(s.get(t)) == n);
                // Overwrite with object values, then collect: keys and values move, lookups
                // still work because buckets depend on content hashes only.
                for i in 0..n {
                    let key = interner.intern(s, format!("key{i}").as_bytes()).unwrap();
                    let val = interner.intern(s, format!("value{i}").as_bytes()).unwrap();
                    let t2 = set(s, Some(t), key, crate::value::RAW_OBJ, Some(val)).unwrap();
                    assert!(s.same_object(t, t2));
                }
                s.collect("table test");
                s.collect("table test");
                for i in 0..n {
                    let key = interner.intern(s, format!("key{i}").as_bytes()).unwrap();
                    let (v, r) = get(s.get(t), s.get(key)).expect("present");
                    assert_eq!(v, crate::value::RAW_OBJ);
                    assert_eq!(crate::object::string_text(r.unwrap()), format!("value{i}"));
                }
                let missing = interner.intern(s, b"nope").unwrap();
                assert!(get(s.get(t), s.get(missing)).is_none());
            });
        }
    }
}
