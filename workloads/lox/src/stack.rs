//! The value stack as the interpreter's dispatch loop holds it: the two halves of every value
//! (see [`crate::value`]) opened for one safepoint-free stretch, with the stack top in a local.
//!
//! The VM keeps the stack as a root region of reference slots (the object halves) and a Rust
//! array of NaN-boxed words (the other halves, [`crate::value::Value::to_raw`]). While its
//! dispatch loop runs, it reads and writes them through a [`StackView`]: the region as a
//! [`RegionView`] (its heap checked once, the bad mask read once), the words as a fixed-size
//! array (whose index checks compare against a constant), and the stack pointer as a plain
//! field, which the compiler keeps in a register. The view writes the stack pointer back to
//! the VM when the loop leaves.
//!
//! Invariant (what makes the rooting precise): a slot of the region is non-null only below the
//! stack top, and only where the word is [`RAW_OBJ`]. So pushing a number stores no reference,
//! and dropping one clears none.

use crate::value::{raw_number, RAW_OBJ};
use gc_runtime::{ObjRef, RegionView};

/// Value stack slots (clox's `STACK_MAX`: 64 frames of 256 slots).
pub const STACK_MAX: usize = 64 * 256;

/// The raw halves of the value stack.
pub type StackWords = [u64; STACK_MAX];

/// The value stack opened for one safepoint-free stretch. See the module documentation.
pub struct StackView<'a> {
    words: &'a mut StackWords,
    refs: RegionView<'a, STACK_MAX>,
    /// Index of the first free slot.
    pub sp: usize,
}

impl<'a> StackView<'a> {
    /// The stack of `words` and `refs` with top `sp`.
    #[inline(always)]
    pub fn new(words: &'a mut StackWords, refs: RegionView<'a, STACK_MAX>, sp: usize) -> Self {
        StackView { words, refs, sp }
    }

    /// Pushes a value (its object if `raw` is [`RAW_OBJ`]); false if the stack is full.
    #[inline(always)]
    pub fn push(&mut self, raw: u64, r: Option<ObjRef<'_>>) -> bool {
        let Some(word) = self.words.get_mut(self.sp) else {
            return false;
        };
        *word = raw;
        if raw == RAW_OBJ {
            self.refs.set(self.sp, r);
        }
        self.sp += 1;
        true
    }

    /// Pushes a value that is not an object; false if the stack is full.
    #[inline(always)]
    pub fn push_raw(&mut self, raw: u64) -> bool {
        debug_assert_ne!(raw, RAW_OBJ);
        let Some(word) = self.words.get_mut(self.sp) else {
            return false;
        };
        *word = raw;
        self.sp += 1;
        true
    }

    /// The word of slot `i`.
    #[inline(always)]
    pub fn word(&self, i: usize) -> u64 {
        self.words[i]
    }

    /// The word `distance` below the top.
    #[inline(always)]
    pub fn peek_word(&self, distance: usize) -> u64 {
        self.words[self.sp - 1 - distance]
    }

    /// Overwrites the top value with a value that is not an object.
    #[inline(always)]
    pub fn set_top_raw(&mut self, raw: u64) {
        self.set(self.sp - 1, raw, None);
    }

    /// Replaces the top two values by one that is not an object (a binary operator's result).
    #[inline(always)]
    pub fn replace_two_raw(&mut self, raw: u64) {
        self.drop_n(1);
        self.set_top_raw(raw);
    }

    /// Replaces the top two values, whose words the caller read (`below`, then `top`), by one
    /// that is not an object: as [`Self::replace_two_raw`], without reading the words again.
    #[inline(always)]
    pub fn replace_two_words(&mut self, below: u64, top: u64, raw: u64) {
        debug_assert_eq!(self.words[self.sp - 2], below);
        debug_assert_eq!(self.words[self.sp - 1], top);
        debug_assert_ne!(raw, RAW_OBJ);
        self.sp -= 1;
        if top == RAW_OBJ {
            self.refs.set(self.sp, None);
        }
        self.words[self.sp - 1] = raw;
        if below == RAW_OBJ {
            self.refs.set(self.sp - 1, None);
        }
    }

    /// The top two values as numbers (the one below the top first), if both are numbers.
    #[inline(always)]
    pub fn top_two_numbers(&self) -> Option<(f64, f64)> {
        let [a, b] = *self.words[..self.sp].last_chunk::<2>()?;
        Some((raw_number(a)?, raw_number(b)?))
    }

    /// Replaces the top two values, both numbers, by one that is not an object (an arithmetic
    /// or comparison result). Numbers have null region slots (the invariant), so nothing is
    /// cleared.
    #[inline(always)]
    pub fn replace_two_numbers(&mut self, raw: u64) {
        debug_assert!(self.words[self.sp - 2] != RAW_OBJ && self.words[self.sp - 1] != RAW_OBJ);
        debug_assert_ne!(raw, RAW_OBJ);
        self.sp -= 1;
        self.words[self.sp - 1] = raw;
    }

    /// The value in slot `i`: its word, and its object if it is one.
    #[inline(always)]
    pub fn get(&self, i: usize) -> (u64, Option<ObjRef<'a>>) {
        let raw = self.words[i];
        let r = if raw == RAW_OBJ {
            self.refs.get(i)
        } else {
            None
        };
        (raw, r)
    }

    /// The object in slot `i`, if the value there is one.
    #[inline(always)]
    pub fn obj(&self, i: usize) -> Option<ObjRef<'a>> {
        if self.words[i] == RAW_OBJ {
            self.refs.get(i)
        } else {
            None
        }
    }

    /// Stores a value into slot `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, raw: u64, r: Option<ObjRef<'_>>) {
        let was_obj = self.words[i] == RAW_OBJ;
        self.words[i] = raw;
        if raw == RAW_OBJ {
            self.refs.set(i, r);
        } else if was_obj {
            self.refs.set(i, None);
        }
    }

    /// Stores a value into slot `i`, which holds an object (its word is [`RAW_OBJ`]): as
    /// [`Self::set`], without reading the slot's old word to learn that.
    #[inline(always)]
    pub fn replace_obj(&mut self, i: usize, raw: u64, r: Option<ObjRef<'_>>) {
        debug_assert_eq!(self.words[i], RAW_OBJ);
        self.words[i] = raw;
        self.refs.set(i, if raw == RAW_OBJ { r } else { None });
    }

    /// Drops the top value, whose word the caller read: `raw`.
    #[inline(always)]
    pub fn drop_top(&mut self, raw: u64) {
        debug_assert_eq!(self.words[self.sp - 1], raw);
        self.sp -= 1;
        if raw == RAW_OBJ {
            self.refs.set(self.sp, None);
        }
    }

    /// Drops the top `n` values.
    #[inline(always)]
    pub fn drop_n(&mut self, n: usize) {
        self.truncate(self.sp - n);
    }

    /// Replaces the values from slot `base` up by the top one (a function's result replacing
    /// its frame), `base` below the top: the result moved to `base` (whose region slot is
    /// stored whatever it held), one pass over the slots between.
    #[inline(always)]
    pub fn return_to(&mut self, base: usize) {
        let top = self.sp - 1;
        let raw = self.words[top];
        let r = if raw == RAW_OBJ {
            self.refs.get(top)
        } else {
            None
        };
        // The slots between: the frame's arguments and locals.
        for (i, &word) in self.words[base + 1..top].iter().enumerate() {
            if word == RAW_OBJ {
                self.refs.set(base + 1 + i, None);
            }
        }
        if raw == RAW_OBJ {
            self.refs.set(top, None);
        }
        self.words[base] = raw;
        self.refs.set(base, r);
        self.sp = base + 1;
    }

    /// Drops every value from slot `to` up, as one pass over the slots (for dropping a whole
    /// frame; [`Self::truncate`] suits a few values).
    #[inline(always)]
    pub fn truncate_frame(&mut self, to: usize) {
        if to >= self.sp {
            return;
        }
        for (i, &word) in self.words[to..self.sp].iter().enumerate() {
            if word == RAW_OBJ {
                self.refs.set(to + i, None);
            }
        }
        self.sp = to;
    }

    /// Drops every value from slot `to` up.
    #[inline(always)]
    pub fn truncate(&mut self, to: usize) {
        while self.sp > to {
            self.sp -= 1;
            if self.words[self.sp] == RAW_OBJ {
                self.refs.set(self.sp, None);
            }
        }
    }
}
