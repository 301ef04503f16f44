//! The virtual machine: clox's stack VM, with every Lox object in the collector's heap.
//!
//! # Roots
//!
//! - **The value stack** is a [`RootRegion`] of [`STACK_MAX`] reference slots (the object half
//!   of each value) plus a Rust array of NaN-boxed words (the tag and number half,
//!   [`Value::to_raw`]). Slots above the stack top are kept null, so the collector sees exactly
//!   the live stack. The dispatch loop opens both halves as a [`crate::stack::StackView`].
//! - **Call frames** are Rust structs (`ip`, slot base, code id) in a fixed array of
//!   [`FRAMES_MAX`]. A frame's closure is in a second root region, `frame_roots`, in the
//!   frame's slot (`closure_slot`) — clox keeps the closure as a C pointer in the frame, and
//!   the stack slot at the frame base does not always hold it (a method's slot 0 is the
//!   receiver). The slot is null above the top frame. The same region's last slot heads the
//!   list of open upvalues.
//! - **Constants**: every loaded function's constant array is in one heap value array by
//!   code id (`code_constants`, held through a [`Global`], replaced by a bigger array when
//!   full), so a call stores nothing for them: a frame reads its code's entry when an
//!   instruction first needs a constant. A loaded function's constants live as long as the
//!   VM, as its Rust-side code does.
//! - **Globals** are slots, resolved by name when a function is loaded (`Code::globals`): the
//!   raw halves in a Rust vector, the objects in a heap value array held through a [`Global`]
//!   handle (replaced by a bigger array when the slots run out). The string `"init"` is a
//!   [`Global`] too.
//! - **Everything else** the Rust code holds across a call that can allocate or poll is in a
//!   [`Local`] of a nested scope; [`ObjRef`]s are used only in stretches that cannot reach a
//!   safepoint, which the borrow checker enforces (allocation and `poll` take `&mut Scope`).
//!
//! # The interpreter loop
//!
//! `Vm::run` alternates between two halves. `run_fast` (in `vm/fast.rs`) borrows the scope
//! immutably, keeps the current frame's constants as an `ObjRef` and executes every
//! instruction that cannot allocate — locals, globals, upvalues, arithmetic, field reads and
//! writes of fields that fit, jumps, calls and returns — and, on the allocation fast path
//! ([`Scope::alloc_fresh`]: a bump of the private page under the shared borrow), class calls,
//! closures and short string concatenations, until one of them needs the mutable scope:
//!
//! - a backward jump (`LOOP`) or a call while a pause is requested ([`Scope::poll_requested`]):
//!   `run` polls for a safepoint ([`Scope::poll`]), so a long loop never holds up a pause, then
//!   re-enters `run_fast` (a call or a return without a pause request switches frames inside
//!   the loop);
//! - an instruction that allocates beyond the fast path (one that needs a page refill or a
//!   pacing decision, a long string concatenation, classes, bound methods, a field that does
//!   not fit, a method): `run` executes it in `slow_op` with handles in a nested scope;
//!   allocation polls too.
//!
//! `run_fast` creates no handles (globals are read with [`Global::get`]), so it runs in `run`'s
//! scope and none accumulate however long it runs.
//!
//! Heap exhaustion ([`OutOfMemory`]) is the runtime error "Out of memory."; more than
//! [`FRAMES_MAX`] frames is "Stack overflow.".

mod code_window;
mod fast;

use crate::chunk::OpCode;
use crate::compiler::compile;
use crate::error::CompileErrors;
use crate::function::{Constant, FunctionProto};
use crate::interner::Interner;
use crate::object::{
    closure_code_id, closure_shape, function_arity, function_code_id, function_line,
    function_raw_size, function_trace_name, function_upvalues, hash_bytes, init_function,
    open_upvalue, read_function_code, read_string_bytes, set_native_id, set_value_array_element,
    string_len, string_text, upvalue_slot, value_array_raw_size, BOUND_METHOD, BOUND_METHOD_REFS,
    BOUND_METHOD_SLOT, BOUND_RECEIVER, CLASS, CLASS_METHODS, CLASS_NAME, CLASS_REFS, CLOSURE_BYTES,
    CLOSURE_CONSTANTS, CLOSURE_FUNCTION, CLOSURE_UPVALUES, FN_CONSTANTS, FN_NAME, FUNCTION,
    FUNCTION_REFS, INSTANCE, INSTANCE_CLASS, INSTANCE_FIELDS, INSTANCE_REFS, MAX_CODE_ID, NATIVE,
    NATIVE_BYTES, NATIVE_CLOCK, NATIVE_NAME, NATIVE_REFS, UPVALUE, UPVALUE_BYTES, UPVALUE_NEXT,
    UPVALUE_REFS, UPVALUE_VALUES, VALUE_ARRAY,
};
use crate::stack::StackWords;
use crate::table;
use crate::value::{Value, RAW_NIL, RAW_OBJ};
use code_window::CodeBytes;
use gc_runtime::{
    Global, Heap, HeapConfig, Local, Mutator, ObjRef, OutOfMemory, RootRegion, Scope,
};
use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

/// `print` writes a string longer than this a piece of this many bytes at a time, polling for
/// a safepoint between pieces (the interner's chunk: hashing, comparing and copying long
/// strings go in pieces of the same size).
const PRINT_CHUNK: usize = 64 << 10;

/// Maximum call depth (clox's `FRAMES_MAX`); deeper is "Stack overflow.".
pub const FRAMES_MAX: usize = 64;
pub use crate::stack::STACK_MAX;
const _: () = assert!(STACK_MAX == FRAMES_MAX * 256);
/// Slot of `frame_roots` that heads the open-upvalue list (after the frames' slots).
const OPEN_UPVALUES: usize = FRAMES_MAX;
/// Slots of `frame_roots`.
const FRAME_ROOTS: usize = OPEN_UPVALUES + 1;

/// Slot of `frame_roots` holding frame `fi`'s closure.
#[inline(always)]
const fn closure_slot(fi: usize) -> usize {
    fi
}

/// The Rust-side copy of a loaded function's code and constants, which `run_fast` reads
/// instead of the heap object's raw bytes (both are immutable once loaded). Indexed by the id
/// the function object stores ([`function_code_id`]). Never freed: a function's code lives as
/// long as the VM, like the source it came from (only the REPL keeps loading functions).
struct Code {
    /// The bytecode, padded so that every instruction's 4-byte window is in range.
    code: CodeBytes,
    /// Each constant's raw half, boxed ([`Value::to_raw`]): the number, or [`RAW_OBJ`] for an
    /// object constant, which is in the function's constant array. One entry per possible
    /// constant index (an instruction's `u8` operand), so that indexing needs no check; the
    /// entries past the function's constants are never read.
    constants: Box<[u64; CONSTANTS_MAX]>,
    /// For each string constant, the global slot of that name (globals are resolved when a
    /// function is loaded; `GET_GLOBAL`, `SET_GLOBAL` and `DEFINE_GLOBAL` name one by its
    /// constant); `u32::MAX` for other constants (and past the function's constants).
    globals: Box<[u32; CONSTANTS_MAX]>,
    /// For each string constant, its content hash (as its string object has it,
    /// [`crate::object::string_hash`]), for the table lookups of property and method names; 0
    /// for other constants.
    hashes: Box<[u64; CONSTANTS_MAX]>,
    /// The function's arity (as its heap object has it too).
    arity: usize,
    /// The code sets a property ([`FunctionProto::sets_properties`]): as an initializer, its
    /// instance gets a field table at once.
    sets_fields: bool,
}

/// Constant indices an instruction can name (its operand is a byte).
const CONSTANTS_MAX: usize = 256;

/// Raw half of a global slot whose variable is not defined (never a value: not a number, and
/// not one of the boxed words of [`crate::value`]).
const RAW_UNDEFINED: u64 = 0x7ffc_0000_0000_00ff;
/// Global slots of a new VM (the array doubles when a program names more globals).
const GLOBALS_MIN: usize = 64;
/// Slots of a new VM's `code_constants` (the array doubles when more functions are loaded).
const CODES_MIN: usize = 64;

/// A call frame. Its closure is in `frame_roots` (see [`closure_slot`]); its constants are
/// its code's, in `code_constants`.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// Offset of the next instruction in the function's code.
    ip: usize,
    /// Stack index of the frame's slot 0.
    base: usize,
    /// The id of the function's Rust-side code (see [`Code`]).
    code: u32,
}

impl Frame {
    /// The contents of a frame slot not in use.
    const EMPTY: Frame = Frame {
        ip: 0,
        base: 0,
        code: 0,
    };
}

/// A runtime error on its way to being reported (the message; the trace is printed from the
/// frames when it is reported).
#[derive(Debug)]
struct RuntimeError(String);

impl RuntimeError {
    fn out_of_memory(_: OutOfMemory) -> RuntimeError {
        RuntimeError("Out of memory.".to_string())
    }
}

/// Why `run_fast` gave control back to `run`.
enum Exit {
    /// A call or a backward jump: poll for a safepoint, then continue.
    Poll,
    /// The instruction at the frame's `ip` allocates: run it in `slow_op`.
    Slow,
    /// Call the class at `sp - 1 - argc` (allocates the instance).
    CallClass(usize),
    /// The script returned.
    Done,
}

/// How interpreting a program failed.
#[derive(Debug)]
pub enum InterpretError {
    /// It did not compile (the errors have not been printed).
    Compile(CompileErrors),
    /// A runtime error, already reported on the error output.
    Runtime,
}

/// The interpreter's state apart from the mutator. See the module documentation.
pub struct Vm {
    /// Object halves of the value stack.
    stack: RootRegion,
    /// Tag/number halves of the value stack, NaN-boxed ([`Value::to_raw`]).
    values: Box<StackWords>,
    /// Stack top: index of the first free slot.
    sp: usize,
    /// The call frames, `frames[..frame_count]` in use (a fixed array: a push checks only
    /// the count against [`FRAMES_MAX`]).
    frames: Box<[Frame; FRAMES_MAX]>,
    frame_count: usize,
    /// Frame `i`'s closure in slot [`closure_slot`]`(i)`; the open-upvalue list head in
    /// [`OPEN_UPVALUES`].
    frame_roots: RootRegion,
    /// The constant array ([`FN_CONSTANTS`]) of every loaded function, by code id (see
    /// [`Code`]): a value array of reference slots only, replaced by a bigger one when it
    /// fills up. Like the Rust-side code, a loaded function's constants live as long as the
    /// VM.
    code_constants: Global,
    /// The object halves of the global variables, by slot: a value array (reference slots
    /// only; its raw halves are `global_values`), replaced by a bigger one when it fills up.
    globals: Global,
    /// The raw halves of the global variables, boxed; [`RAW_UNDEFINED`] for a slot whose name
    /// was seen in code but never defined.
    global_values: Vec<u64>,
    /// By the same slots, one per name seen in loaded code: true once a `SET_PROPERTY` of that
    /// name ran (never reset; Lox cannot delete a field). `INVOKE` of a name never set as a
    /// field skips the probe of the receiver's fields, which cannot hold it.
    field_names: Vec<bool>,
    /// The slot of every global name seen in loaded code.
    global_slots: HashMap<String, u32>,
    /// The string "init".
    init_string: Global,
    /// Its content hash.
    init_hash: u64,
    interner: Interner,
    /// The code of every loaded function, by id (see [`Code`]).
    codes: Vec<Code>,
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    start: Instant,
}

impl Vm {
    /// A VM on `heap`, allocating its globals with `s` (a scope of a mutator of `heap`).
    pub fn new<'s>(
        heap: &Heap,
        s: &mut Scope<'s>,
        out: Box<dyn Write>,
        err: Box<dyn Write>,
    ) -> Result<Vm, OutOfMemory> {
        let mut interner = Interner::new();
        let (globals, code_constants, init_string) = s.scope(|s| {
            let globals = s.alloc(VALUE_ARRAY, GLOBALS_MIN as u32, 0)?;
            let code_constants = s.alloc(VALUE_ARRAY, CODES_MIN as u32, 0)?;
            let init = interner.intern(s, b"init")?;
            Ok::<_, OutOfMemory>((s.global(globals), s.global(code_constants), s.global(init)))
        })?;
        let mut vm = Vm {
            stack: heap.root_region(STACK_MAX),
            values: Box::new([RAW_NIL; STACK_MAX]),
            sp: 0,
            frames: Box::new([Frame::EMPTY; FRAMES_MAX]),
            frame_count: 0,
            frame_roots: heap.root_region(FRAME_ROOTS),
            code_constants,
            globals,
            global_values: Vec::new(),
            field_names: Vec::new(),
            global_slots: HashMap::new(),
            init_string,
            init_hash: hash_bytes(b"init"),
            interner,
            codes: Vec::new(),
            out,
            err,
            start: Instant::now(),
        };
        vm.define_native(s, "clock", NATIVE_CLOCK)?;
        Ok(vm)
    }

    /// Compiles and runs `source`; globals persist from one call to the next.
    pub fn interpret(&mut self, s: &mut Scope<'_>, source: &str) -> Result<(), InterpretError> {
        let script = compile(source).map_err(InterpretError::Compile)?;
        self.run_script(s, &script)
    }

    /// Loads a compiled script into the heap and runs it.
    pub fn run_script(
        &mut self,
        s: &mut Scope<'_>,
        script: &FunctionProto,
    ) -> Result<(), InterpretError> {
        let loaded = s.scope(|s| {
            let function = self.load_function(s, script)?;
            let closure = new_closure(s, function, 0)?;
            self.start_frame(s, closure);
            Ok::<_, OutOfMemory>(())
        });
        let result = match loaded {
            Ok(()) => self.run(s),
            Err(e) => Err(RuntimeError::out_of_memory(e)),
        };
        let _ = self.out.flush();
        match result {
            Ok(()) => Ok(()),
            Err(e) => {
                self.report(s, &e);
                Err(InterpretError::Runtime)
            }
        }
    }

    /// Flushes the output.
    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }

    /// The string table (for tests and statistics).
    pub fn interner(&mut self) -> &mut Interner {
        &mut self.interner
    }

    /// Pushes the script closure and its frame.
    fn start_frame(&mut self, s: &Scope<'_>, closure: Local<'_>) {
        debug_assert!(self.frame_count == 0 && self.sp == 0);
        self.values[0] = RAW_OBJ;
        self.stack.set_local(s, 0, Some(closure));
        self.sp = 1;
        self.frame_roots
            .set_local(s, closure_slot(0), Some(closure));
        let function = s.get(closure).load(CLOSURE_FUNCTION).expect("a function");
        self.frames[0] = Frame {
            ip: 0,
            base: 0,
            code: function_code_id(function),
        };
        self.frame_count = 1;
    }

    // ----- loading -------------------------------------------------------------------------

    /// Creates the heap objects of a compiled function: its constants (interned strings,
    /// nested functions) and the function object holding its code and line table.
    fn load_function<'s>(
        &mut self,
        s: &mut Scope<'s>,
        proto: &FunctionProto,
    ) -> Result<Local<'s>, OutOfMemory> {
        let mut error = None;
        let function = s.scope_escape(|s| match self.load_function_here(s, proto) {
            Ok(f) => Some(f),
            Err(e) => {
                error = Some(e);
                None
            }
        });
        function.ok_or_else(|| error.expect("an error"))
    }

    fn load_function_here<'s>(
        &mut self,
        s: &mut Scope<'s>,
        proto: &FunctionProto,
    ) -> Result<Local<'s>, OutOfMemory> {
        let constants = &proto.constants;
        let n = constants.len();
        let array = s.alloc(VALUE_ARRAY, n as u32, value_array_raw_size(n))?;
        for (i, constant) in constants.iter().enumerate() {
            let (v, r) = match constant {
                Constant::Number(x) => (Value::Number(*x), None),
                Constant::String(text) => {
                    (Value::Obj, Some(self.interner.intern(s, text.as_bytes())?))
                }
                Constant::Function(inner) => (Value::Obj, Some(self.load_function(s, inner)?)),
            };
            set_value_array_element(s.get(array), i, v, r.map(|r| s.get(r)));
        }
        let name = match &proto.name {
            Some(name) => Some(self.interner.intern(s, name.as_bytes())?),
            None => None,
        };
        let code = &proto.chunk.code;
        // A closure's shape holds its code id (a code copy takes kilobytes: memory runs out
        // long before).
        let id = u32::try_from(self.codes.len())
            .ok()
            .filter(|&id| id <= MAX_CODE_ID)
            .expect("at most MAX_CODE_ID functions");
        assert!(
            n <= CONSTANTS_MAX,
            "a function has at most {CONSTANTS_MAX} constants"
        );
        let mut raw_constants = Box::new([RAW_NIL; CONSTANTS_MAX]);
        let mut globals = Box::new([u32::MAX; CONSTANTS_MAX]);
        let mut hashes = Box::new([0; CONSTANTS_MAX]);
        for (i, c) in constants.iter().enumerate() {
            raw_constants[i] = match c {
                Constant::Number(x) => Value::Number(*x).to_raw(),
                _ => RAW_OBJ,
            };
            if let Constant::String(name) = c {
                globals[i] = self.global_slot(s, name)?;
                hashes[i] = hash_bytes(name.as_bytes());
            }
        }
        self.set_code_constants(s, id as usize, array)?;
        self.codes.push(Code {
            code: CodeBytes::new(code),
            constants: raw_constants,
            globals,
            hashes,
            arity: proto.arity as usize,
            sets_fields: proto.sets_properties(),
        });
        let function = s.alloc(FUNCTION, FUNCTION_REFS, function_raw_size(code.len()))?;
        let o = s.get(function);
        init_function(
            o,
            proto.arity as u32,
            proto.upvalue_count() as u32,
            id,
            code,
            &proto.chunk.lines,
        );
        o.store(FN_NAME, name.map(|n| s.get(n)));
        o.store(FN_CONSTANTS, Some(s.get(array)));
        Ok(function)
    }

    /// Stores the constant array of the function with code id `id` (the next one) into
    /// `code_constants`, growing it if it is full.
    fn set_code_constants(
        &mut self,
        s: &mut Scope<'_>,
        id: usize,
        array: Local<'_>,
    ) -> Result<(), OutOfMemory> {
        let capacity = self.code_constants.get(s).n_refs();
        if id == capacity {
            self.code_constants = grown(s, &self.code_constants, capacity)?;
        }
        self.code_constants.get(s).store(id, Some(s.get(array)));
        Ok(())
    }

    fn define_native(&mut self, s: &mut Scope<'_>, name: &str, id: u64) -> Result<(), OutOfMemory> {
        let slot = self.global_slot(s, name)? as usize;
        s.scope(|s| {
            let native_name = self.interner.intern(s, name.as_bytes())?;
            let native = s.alloc(NATIVE, NATIVE_REFS, NATIVE_BYTES)?;
            s.store(native, NATIVE_NAME, Some(native_name));
            set_native_id(s.get(native), id);
            self.set_global(s, slot, Value::Obj, Some(s.get(native)));
            Ok(())
        })
    }

    /// The slot of global `name`, made (undefined) if the name is new; the slot array grows
    /// (a new, bigger heap object) when full.
    fn global_slot(&mut self, s: &mut Scope<'_>, name: &str) -> Result<u32, OutOfMemory> {
        if let Some(&slot) = self.global_slots.get(name) {
            return Ok(slot);
        }
        let slot = self.global_values.len();
        let capacity = self.globals.get(s).n_refs();
        if slot == capacity {
            self.globals = grown(s, &self.globals, capacity)?;
        }
        let slot32 = u32::try_from(slot).expect("fewer than 2^32 globals");
        self.global_values.push(RAW_UNDEFINED);
        self.field_names.push(false);
        self.global_slots.insert(name.to_string(), slot32);
        Ok(slot32)
    }

    /// Stores a value into global slot `slot` (defining it).
    #[inline(always)]
    fn set_global(&mut self, s: &Scope<'_>, slot: usize, v: Value, r: Option<ObjRef<'_>>) {
        let raw = v.to_raw();
        if raw == RAW_OBJ || self.global_values[slot] == RAW_OBJ {
            self.globals
                .get(s)
                .store(slot, r.filter(|_| raw == RAW_OBJ));
        }
        self.global_values[slot] = raw;
    }

    // ----- the value stack -------------------------------------------------------------------

    // Invariant: a slot of the `stack` region is non-null only below `sp` and only where the
    // value is `Value::Obj`. So pushing a number needs no store into the region, and popping
    // one needs no store either.

    #[inline(always)]
    fn push(&mut self, s: &Scope<'_>, v: Value, r: Option<ObjRef<'_>>) -> Result<(), RuntimeError> {
        if self.sp == STACK_MAX {
            return Err(RuntimeError("Stack overflow.".to_string()));
        }
        self.values[self.sp] = v.to_raw();
        if v == Value::Obj {
            self.stack.set(s, self.sp, r);
        }
        self.sp += 1;
        Ok(())
    }

    /// Drops the top `n` values.
    #[inline(always)]
    fn drop_n(&mut self, s: &Scope<'_>, n: usize) {
        for _ in 0..n {
            self.sp -= 1;
            if self.values[self.sp] == RAW_OBJ {
                self.stack.set(s, self.sp, None);
            }
        }
    }

    /// The value `distance` below the top, with its object.
    #[inline(always)]
    fn peek<'a>(&self, s: &'a Scope<'_>, distance: usize) -> (Value, Option<ObjRef<'a>>) {
        self.slot(s, self.sp - 1 - distance)
    }

    /// The value in stack slot `i`, with its object.
    #[inline(always)]
    fn slot<'a>(&self, s: &'a Scope<'_>, i: usize) -> (Value, Option<ObjRef<'a>>) {
        let v = Value::from_raw(self.values[i]);
        let r = if v == Value::Obj {
            self.stack.get(s, i)
        } else {
            None
        };
        (v, r)
    }

    /// Stores a value into stack slot `i`.
    #[inline(always)]
    fn set_slot(&mut self, s: &Scope<'_>, i: usize, v: Value, r: Option<ObjRef<'_>>) {
        let was_obj = self.values[i] == RAW_OBJ;
        self.values[i] = v.to_raw();
        if v == Value::Obj {
            self.stack.set(s, i, r);
        } else if was_obj {
            self.stack.set(s, i, None);
        }
    }

    /// The object `distance` below the top if it is one of shape `shape`.
    #[inline(always)]
    fn peek_shape<'a>(&self, s: &'a Scope<'_>, distance: usize, shape: u32) -> Option<ObjRef<'a>> {
        self.peek(s, distance).1.filter(|o| o.shape() == shape)
    }

    fn reset_stack(&mut self) {
        self.stack.clear_from(0);
        self.frame_roots.clear_from(0);
        self.sp = 0;
        self.frame_count = 0;
    }

    // ----- upvalues ----------------------------------------------------------------------------

    /// The open upvalue for stack slot `slot`, created if there is none (clox's
    /// `captureUpvalue`; the list is sorted by slot, highest first).
    fn capture_upvalue<'s>(
        &mut self,
        s: &mut Scope<'s>,
        slot: usize,
    ) -> Result<Local<'s>, OutOfMemory> {
        let mut current = self.frame_roots.get(s, OPEN_UPVALUES);
        while let Some(up) = current {
            let at = upvalue_slot(up);
            if at == slot {
                return Ok(s.root(up));
            }
            if at < slot {
                break;
            }
            current = up.load(UPVALUE_NEXT);
        }
        let created = s.alloc_with_values(UPVALUE, UPVALUE_REFS, UPVALUE_VALUES, UPVALUE_BYTES)?;
        let new = s.get(created);
        open_upvalue(new, slot);
        let mut previous = None;
        let mut current = self.frame_roots.get(s, OPEN_UPVALUES);
        while let Some(up) = current {
            if upvalue_slot(up) < slot {
                break;
            }
            previous = Some(up);
            current = up.load(UPVALUE_NEXT);
        }
        new.store(UPVALUE_NEXT, current);
        match previous {
            None => self.frame_roots.set(s, OPEN_UPVALUES, Some(new)),
            Some(p) => p.store(UPVALUE_NEXT, Some(new)),
        }
        Ok(created)
    }

    // ----- calls -------------------------------------------------------------------------------

    /// Pushes a frame for `closure` whose arguments are the top `argc` values.
    #[inline]
    fn call_closure(
        &mut self,
        s: &Scope<'_>,
        closure: ObjRef<'_>,
        argc: usize,
    ) -> Result<(), RuntimeError> {
        let function = closure
            .load(CLOSURE_FUNCTION)
            .expect("a closure has a function");
        let arity = function_arity(function);
        if argc != arity {
            return Err(RuntimeError(format!(
                "Expected {arity} arguments but got {argc}."
            )));
        }
        if self.frame_count == FRAMES_MAX {
            return Err(RuntimeError("Stack overflow.".to_string()));
        }
        let fi = self.frame_count;
        self.frames[fi] = Frame {
            ip: 0,
            base: self.sp - argc - 1,
            code: function_code_id(function),
        };
        self.frame_count = fi + 1;
        self.frame_roots.set(s, closure_slot(fi), Some(closure));
        Ok(())
    }

    // ----- the interpreter loop -------------------------------------------------------------

    /// Runs until the script returns. See the module documentation.
    fn run(&mut self, s: &mut Scope<'_>) -> Result<(), RuntimeError> {
        loop {
            match self.run_fast(s)? {
                Exit::Poll => s.poll(),
                Exit::Slow => self.slow_op(s)?,
                Exit::CallClass(argc) => self.call_class(s, argc)?,
                Exit::Done => return Ok(()),
            }
        }
    }

    /// Executes the allocating instruction at the current frame's `ip`, with handles in a
    /// nested scope.
    fn slow_op(&mut self, s: &mut Scope<'_>) -> Result<(), RuntimeError> {
        let fi = self.frame_count - 1;
        let Frame { ip: at, code, .. } = self.frames[fi];
        let ins = self.codes[code as usize]
            .code
            .window()
            .fetch(at)
            .expect("the instruction is in the code");
        let op = OpCode::from_byte(ins[0]).expect("a valid opcode");
        let result = s.scope(|s| self.slow_op_here(s, fi, at, op, ins));
        if result.is_err() {
            self.frames[fi].ip = at + 1;
        }
        result
    }

    /// Constant `index` of frame `fi`'s function (an object: a name or a function), rooted.
    fn constant<'s>(&self, s: &Scope<'s>, fi: usize, index: usize) -> Local<'s> {
        let code = self.frames[fi].code as usize;
        let constants = self.code_constants.get(s).load(code);
        s.root(
            constants
                .expect("constants")
                .load(index)
                .expect("an object constant"),
        )
    }

    fn slow_op_here(
        &mut self,
        s: &mut Scope<'_>,
        fi: usize,
        at: usize,
        op: OpCode,
        ins: [u8; 4],
    ) -> Result<(), RuntimeError> {
        let oom = RuntimeError::out_of_memory;
        let arg = ins[1] as usize;
        match op {
            OpCode::Add => {
                let a = s.root(self.peek(s, 1).1.expect("a string"));
                let b = s.root(self.peek(s, 0).1.expect("a string"));
                let result = self.interner.intern_concat(s, a, b).map_err(oom)?;
                self.drop_n(s, 2);
                let r = s.get(result);
                self.push(s, Value::Obj, Some(r))?;
                self.frames[fi].ip = at + 1;
            }
            OpCode::GetLocalProperty => {
                // `run_fast` found no field: the local, then a method bound to it.
                let base = self.frames[fi].base;
                let (v, r) = self.slot(s, base + ins[2] as usize);
                self.push(s, v, r)?;
                let name = self.constant(s, fi, arg);
                let instance = self.peek(s, 0).1.expect("an instance");
                let class = s.root(instance.load(INSTANCE_CLASS).expect("a class"));
                self.bind_method(s, class, name)?;
                self.frames[fi].ip = at + 3;
            }
            OpCode::GetProperty => {
                let name = self.constant(s, fi, arg);
                let instance = self.peek(s, 0).1.expect("an instance");
                let class = s.root(instance.load(INSTANCE_CLASS).expect("a class"));
                self.bind_method(s, class, name)?;
                self.frames[fi].ip = at + 2;
            }
            OpCode::SetProperty | OpCode::SetPropertyPop => {
                // The name's mark for `INVOKE` (`run_fast` set it already before leaving for
                // here; kept so that this path stands on its own).
                let code = &self.codes[self.frames[fi].code as usize];
                self.field_names[code.globals[arg] as usize] = true;
                let name = self.constant(s, fi, arg);
                let instance = s.root(self.peek(s, 1).1.expect("an instance"));
                let (v, r) = self.peek(s, 0);
                let r = r.map(|r| s.root(r));
                let fields = s.load(instance, INSTANCE_FIELDS);
                let fields = table::set(s, fields, name, v.to_raw(), r).map_err(oom)?;
                s.store(instance, INSTANCE_FIELDS, Some(fields));
                let r = r.map(|r| s.get(r));
                self.set_slot(s, self.sp - 2, v, r);
                self.drop_n(s, if op == OpCode::SetPropertyPop { 2 } else { 1 });
                self.frames[fi].ip = at + 2;
            }
            OpCode::GetSuper => {
                let name = self.constant(s, fi, arg);
                let superclass = s.root(self.peek(s, 0).1.expect("a superclass"));
                self.drop_n(s, 1);
                self.bind_method(s, superclass, name)?;
                self.frames[fi].ip = at + 2;
            }
            OpCode::Closure => {
                let function = self.constant(s, fi, arg);
                let n = function_upvalues(s.get(function));
                let mut captures = vec![0u8; 2 * n];
                {
                    let closure = self.frame_roots.get(s, closure_slot(fi));
                    let code = closure
                        .expect("a closure")
                        .load(CLOSURE_FUNCTION)
                        .expect("a function");
                    read_function_code(code, at + 2, &mut captures);
                }
                let closure = new_closure(s, function, n).map_err(oom)?;
                let base = self.frames[fi].base;
                for (i, capture) in captures.chunks(2).enumerate() {
                    let (is_local, index) = (capture[0] != 0, capture[1] as usize);
                    if is_local {
                        let up = self.capture_upvalue(s, base + index).map_err(oom)?;
                        s.store(closure, CLOSURE_UPVALUES + i, Some(up));
                    } else {
                        let enclosing = self
                            .frame_roots
                            .get(s, closure_slot(fi))
                            .expect("a closure");
                        s.get(closure).store(
                            CLOSURE_UPVALUES + i,
                            enclosing.load(CLOSURE_UPVALUES + index),
                        );
                    }
                }
                let r = s.get(closure);
                self.push(s, Value::Obj, Some(r))?;
                self.frames[fi].ip = at + 2 + 2 * n;
            }
            OpCode::Class => {
                let name = self.constant(s, fi, arg);
                let methods = table::alloc(s, table::MIN_CAPACITY).map_err(oom)?;
                let class = s.alloc(CLASS, CLASS_REFS, 0).map_err(oom)?;
                s.store(class, CLASS_NAME, Some(name));
                s.store(class, CLASS_METHODS, Some(methods));
                let r = s.get(class);
                self.push(s, Value::Obj, Some(r))?;
                self.frames[fi].ip = at + 2;
            }
            OpCode::Inherit => {
                let Some(superclass) = self.peek_shape(s, 1, CLASS) else {
                    return Err(RuntimeError("Superclass must be a class.".to_string()));
                };
                let superclass = s.root(superclass);
                let subclass = s.root(self.peek(s, 0).1.expect("a subclass"));
                let capacity =
                    table::capacity(s.get(superclass).load(CLASS_METHODS).expect("methods"));
                for i in 0..capacity {
                    s.scope(|s| {
                        let from = s.get(superclass).load(CLASS_METHODS).expect("methods");
                        let Some(key) = table::key_at(from, i) else {
                            return Ok(());
                        };
                        let (v, r) = table::value_at(from, i);
                        let (key, r) = (s.root(key), r.map(|r| s.root(r)));
                        let methods = s.load(subclass, CLASS_METHODS);
                        let methods = table::set(s, methods, key, v, r)?;
                        s.store(subclass, CLASS_METHODS, Some(methods));
                        Ok(())
                    })
                    .map_err(oom)?;
                }
                self.drop_n(s, 1);
                self.frames[fi].ip = at + 1;
            }
            OpCode::Method => {
                let name = self.constant(s, fi, arg);
                let method = s.root(self.peek(s, 0).1.expect("a closure"));
                let class = s.root(self.peek(s, 1).1.expect("a class"));
                let methods = s.load(class, CLASS_METHODS);
                let methods = table::set(s, methods, name, RAW_OBJ, Some(method)).map_err(oom)?;
                s.store(class, CLASS_METHODS, Some(methods));
                self.drop_n(s, 1);
                self.frames[fi].ip = at + 2;
            }
            OpCode::Print => {
                // Only a string longer than `PRINT_CHUNK` comes here (`run_fast` prints the
                // rest).
                let text = s.root(self.peek(s, 0).1.expect("a string"));
                let result = self.print_long_string(s, text);
                self.drop_n(s, 1);
                self.frames[fi].ip = at + 1;
                result?;
            }
            other => unreachable!("{} is not a slow instruction", other.name()),
        }
        Ok(())
    }

    /// Writes a long string and a newline to the `print` output a piece of [`PRINT_CHUNK`]
    /// bytes at a time: each piece is copied out of the string (found again through its
    /// handle, as a poll may have moved it) and written as a blocked thread, since a write
    /// can wait on a full pipe, then the mutator polls. So printing a string of hundreds of
    /// megabytes holds up no pause.
    fn print_long_string(
        &mut self,
        s: &mut Scope<'_>,
        text: Local<'_>,
    ) -> Result<(), RuntimeError> {
        let len = string_len(s.get(text));
        let mut piece = vec![0u8; PRINT_CHUNK];
        let mut at = 0;
        let out = &mut self.out;
        while at < len {
            let n = PRINT_CHUNK.min(len - at);
            let piece = &mut piece[..n];
            read_string_bytes(s.get(text), at, piece);
            s.blocking(|| out.write_all(piece))
                .map_err(|e| RuntimeError(format!("Cannot write the output: {e}.")))?;
            s.poll();
            at += n;
        }
        s.blocking(|| out.write_all(b"\n"))
            .map_err(|e| RuntimeError(format!("Cannot write the output: {e}.")))
    }

    /// Replaces the receiver on top of the stack with `class`'s method `name` bound to it.
    fn bind_method(
        &mut self,
        s: &mut Scope<'_>,
        class: Local<'_>,
        name: Local<'_>,
    ) -> Result<(), RuntimeError> {
        let method = {
            let methods = s.get(class).load(CLASS_METHODS).expect("methods");
            match table::get(methods, s.get(name)) {
                Some((_, Some(method))) => s.root(method),
                _ => return Err(undefined_property(s.get(name))),
            }
        };
        let bound = s
            .alloc(BOUND_METHOD, BOUND_METHOD_REFS, 0)
            .map_err(RuntimeError::out_of_memory)?;
        let receiver = self.peek(s, 0).1;
        let b = s.get(bound);
        b.store(BOUND_RECEIVER, receiver);
        b.store(BOUND_METHOD_SLOT, Some(s.get(method)));
        self.set_slot(s, self.sp - 1, Value::Obj, Some(b));
        Ok(())
    }

    /// Calls the class at `sp - 1 - argc`: a new instance replaces it, then `init` runs.
    fn call_class(&mut self, s: &mut Scope<'_>, argc: usize) -> Result<(), RuntimeError> {
        s.scope(|s| {
            let slot = self.sp - 1 - argc;
            let class = s.root(self.slot(s, slot).1.expect("a class"));
            let instance = s
                .alloc(INSTANCE, INSTANCE_REFS, 0)
                .map_err(RuntimeError::out_of_memory)?;
            s.store(instance, INSTANCE_CLASS, Some(class));
            let i = s.get(instance);
            self.set_slot(s, slot, Value::Obj, Some(i));
            let methods = s.get(class).load(CLASS_METHODS).expect("methods");
            match table::get(methods, self.init_string.get(s)) {
                Some((_, Some(initializer))) => {
                    // An initializer that sets fields: their table comes with the instance,
                    // so that setting them needs no allocation.
                    if self.codes[closure_code_id(initializer) as usize].sets_fields {
                        let initializer = s.root(initializer);
                        let fields = table::alloc(s, table::MIN_CAPACITY)
                            .map_err(RuntimeError::out_of_memory)?;
                        s.store(instance, INSTANCE_FIELDS, Some(fields));
                        let initializer = s.get(initializer);
                        return self.call_closure(s, initializer, argc);
                    }
                    self.call_closure(s, initializer, argc)
                }
                _ if argc != 0 => Err(RuntimeError(format!(
                    "Expected 0 arguments but got {argc}."
                ))),
                _ => Ok(()),
            }
        })
    }

    /// Prints a runtime error and the stack trace as clox does, and resets the stack.
    fn report(&mut self, s: &Scope<'_>, error: &RuntimeError) {
        let _ = self.out.flush();
        let mut text = format!("{}\n", error.0);
        for (i, frame) in self.frames[..self.frame_count].iter().enumerate().rev() {
            let Some(closure) = self.frame_roots.get(s, closure_slot(i)) else {
                continue;
            };
            let function = closure.load(CLOSURE_FUNCTION).expect("a function");
            let line = function_line(function, frame.ip.saturating_sub(1));
            text.push_str(&format!(
                "[line {line}] in {}\n",
                function_trace_name(function)
            ));
        }
        let _ = self.err.write_all(text.as_bytes());
        let _ = self.err.flush();
        self.reset_stack();
    }
}

/// A value array of twice `capacity` reference slots holding the `capacity` slots of `old`
/// (then null), as a new handle.
fn grown(s: &mut Scope<'_>, old: &Global, capacity: usize) -> Result<Global, OutOfMemory> {
    s.scope(|s| {
        let bigger = s.alloc(VALUE_ARRAY, 2 * capacity as u32, 0)?;
        let (old, new) = (old.get(s), s.get(bigger));
        for i in 0..capacity {
            new.store(i, old.load(i));
        }
        Ok(s.global(bigger))
    })
}

/// Allocates a closure of `function` with room for `upvalues` upvalues (null until stored):
/// the function, its constants and its code id are set.
fn new_closure<'s>(
    s: &mut Scope<'s>,
    function: Local<'_>,
    upvalues: usize,
) -> Result<Local<'s>, OutOfMemory> {
    let shape = closure_shape(function_code_id(s.get(function)));
    let closure = s.alloc(shape, (CLOSURE_UPVALUES + upvalues) as u32, CLOSURE_BYTES)?;
    let f = s.get(function);
    let c = s.get(closure);
    c.store(CLOSURE_FUNCTION, Some(f));
    c.store(CLOSURE_CONSTANTS, f.load(FN_CONSTANTS));
    Ok(closure)
}

fn undefined_property(name: ObjRef<'_>) -> RuntimeError {
    RuntimeError(format!("Undefined property '{}'.", string_text(name)))
}

/// A complete interpreter: a heap, the thread's mutator, and a [`Vm`].
pub struct Lox {
    // Field order is drop order: the VM's handles and regions first, then the mutator, then
    // the heap (which stops the collector).
    vm: Vm,
    mutator: Mutator,
    heap: Heap,
}

/// Why an interpreter could not be created.
#[derive(Debug)]
pub enum SetupError {
    /// The heap could not be created (bad size, no memory to map).
    Heap(gc_runtime::HeapError),
    /// This thread already has a mutator on the heap.
    Attach(gc_runtime::AttachError),
    /// The heap is too small for the VM's own objects.
    OutOfMemory,
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Heap(e) => write!(f, "cannot create the heap: {e}"),
            SetupError::Attach(e) => write!(f, "cannot attach to the heap: {e}"),
            SetupError::OutOfMemory => f.write_str("the heap is too small to start"),
        }
    }
}

impl std::error::Error for SetupError {}

impl Lox {
    /// An interpreter printing to stdout and stderr.
    pub fn new(config: HeapConfig) -> Result<Lox, SetupError> {
        Lox::with_output(
            config,
            Box::new(std::io::BufWriter::new(std::io::stdout())),
            Box::new(std::io::stderr()),
        )
    }

    /// An interpreter writing `print` output to `out` and runtime errors to `err`.
    pub fn with_output(
        config: HeapConfig,
        out: Box<dyn Write>,
        err: Box<dyn Write>,
    ) -> Result<Lox, SetupError> {
        let heap = Heap::new(config).map_err(SetupError::Heap)?;
        let mut mutator = heap.attach("lox").map_err(SetupError::Attach)?;
        let vm = mutator
            .scope(|s| Vm::new(&heap, s, out, err))
            .map_err(|_| SetupError::OutOfMemory)?;
        Ok(Lox { vm, mutator, heap })
    }

    /// Compiles and runs `source` (globals persist between calls).
    pub fn interpret(&mut self, source: &str) -> Result<(), InterpretError> {
        let vm = &mut self.vm;
        self.mutator.scope(|s| vm.interpret(s, source))
    }

    /// Runs an already compiled script.
    pub fn run_script(&mut self, script: &FunctionProto) -> Result<(), InterpretError> {
        let vm = &mut self.vm;
        self.mutator.scope(|s| vm.run_script(s, script))
    }

    /// The heap (statistics, usage).
    pub fn heap(&self) -> &Heap {
        &self.heap
    }

    /// Runs a full collection cycle now.
    pub fn collect(&mut self) {
        self.mutator.scope(|s| s.collect("lox"));
    }

    /// The string table: `(entries, live entries)`, for tests and statistics.
    pub fn interned_strings(&mut self) -> (usize, usize) {
        let interner = self.vm.interner();
        (interner.len(), interner.live())
    }

    /// True if a string with these contents is interned and alive.
    pub fn is_interned(&mut self, text: &str) -> bool {
        let vm = &mut self.vm;
        self.mutator
            .scope(|s| vm.interner().lookup(s, text.as_bytes()).is_some())
    }

    /// Safepoint polls the interpreter's mutator has made (see `gc_runtime::Scope::polls`),
    /// for tests and tools that check that long work polls as it goes.
    pub fn polls(&mut self) -> u64 {
        self.mutator.scope(|s| s.polls())
    }

    /// Flushes the `print` output.
    pub fn flush(&mut self) {
        self.vm.flush();
    }
}
