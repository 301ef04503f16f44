//! The VM's fast half: the dispatch loop that runs every instruction that cannot allocate,
//! and the common allocating ones — a class call (its instance), `CLOSURE` (its closure and
//! new upvalues), a short string concatenation — on the allocation fast path
//! ([`Scope::alloc_fresh`]), which bumps the mutator's private page under the shared borrow
//! and hands back `None` when it needs more (a page refill, a pacing decision): then the
//! instruction leaves for [`Vm::run`], which runs it in full with the mutable scope.
//!
//! [`Vm::run_fast`] borrows the scope immutably for its whole run, so no safepoint can happen
//! in it and every [`ObjRef`] it holds stays valid. It opens the value stack and the frame
//! roots as views ([`StackView`], [`gc_runtime::RegionView`]: heap checked once, stack top
//! in a local), reads the globals' array once, and keeps the current frame's Rust-side code in
//! a local, and its constant array once an instruction needed it (read from the VM's array of
//! every function's constants, by code id; the frame's closure is read from the frame roots
//! by the upvalue instructions only). Calls and returns switch frames inside the loop;
//! it gives control back to [`Vm::run`] only to poll (a backward jump or a call while a pause
//! is requested), to run an allocating instruction, to call a class, at the end of the script
//! or on a runtime error. On every exit the frame's `ip` and the stack top are written back.

use super::code_window::CodeWindow;
use super::{closure_slot, Code, Exit, Frame, RuntimeError, Vm, FRAMES_MAX, STACK_MAX};
use super::{FRAME_ROOTS, OPEN_UPVALUES, PRINT_CHUNK, RAW_UNDEFINED};
use crate::chunk::OpCode;
use crate::number::format_number;
use crate::object::{
    closure_code_id, closure_shape, display_object, function_code_id, function_upvalues,
    init_open_upvalue, is_closure_shape, native_id, set_upvalue_value, string_hash, string_len,
    string_text, upvalue_slot, upvalue_state, UpvalueState, BOUND_METHOD, BOUND_METHOD_REFS,
    BOUND_METHOD_SLOT, BOUND_RECEIVER, CLASS, CLASS_METHODS, CLOSURE_BYTES, CLOSURE_CONSTANTS,
    CLOSURE_FUNCTION, CLOSURE_UPVALUES, FN_CONSTANTS, INSTANCE, INSTANCE_CLASS, INSTANCE_FIELDS,
    INSTANCE_REFS, NATIVE, NATIVE_CLOCK, STRING, UPVALUE, UPVALUE_BYTES, UPVALUE_NEXT,
    UPVALUE_REFS, UPVALUE_VALUES,
};
use crate::stack::StackView;
use crate::table;
use crate::value::{raw_is_falsey, raw_number, Value, RAW_FALSE, RAW_NIL, RAW_OBJ, RAW_TRUE};
use gc_runtime::{ObjRef, RegionView, Scope};
use std::io::Write;

/// Every opcode's byte, for matching the code bytes directly (one jump table).
mod op {
    use crate::chunk::OpCode;
    macro_rules! bytes {
        ($($name:ident = $op:ident),* $(,)?) => {
            $(pub const $name: u8 = OpCode::$op as u8;)*
        };
    }
    bytes! {
        CONSTANT = Constant, NIL = Nil, TRUE = True, FALSE = False, POP = Pop,
        GET_LOCAL = GetLocal, SET_LOCAL = SetLocal, GET_GLOBAL = GetGlobal,
        DEFINE_GLOBAL = DefineGlobal, SET_GLOBAL = SetGlobal, GET_UPVALUE = GetUpvalue,
        SET_UPVALUE = SetUpvalue, GET_PROPERTY = GetProperty, SET_PROPERTY = SetProperty,
        GET_SUPER = GetSuper, EQUAL = Equal, GREATER = Greater, LESS = Less, ADD = Add,
        SUBTRACT = Subtract, MULTIPLY = Multiply, DIVIDE = Divide, NOT = Not, NEGATE = Negate,
        PRINT = Print, JUMP = Jump, JUMP_IF_FALSE = JumpIfFalse, LOOP = Loop, CALL = Call,
        INVOKE = Invoke, SUPER_INVOKE = SuperInvoke, CLOSURE = Closure,
        CLOSE_UPVALUE = CloseUpvalue, RETURN = Return, CLASS = Class, INHERIT = Inherit,
        METHOD = Method, EQUAL_CONSTANT = EqualConstant, POP_JUMP_IF_FALSE = PopJumpIfFalse,
        GET_LOCAL_PROPERTY = GetLocalProperty, SET_LOCAL_POP = SetLocalPop,
        SET_PROPERTY_POP = SetPropertyPop, SUPER_INVOKE_UPVALUE = SuperInvokeUpvalue,
    }
}

/// The word of a boolean.
#[inline(always)]
fn raw_bool(b: bool) -> u64 {
    if b {
        RAW_TRUE
    } else {
        RAW_FALSE
    }
}

/// The value of upvalue `up`: from the stack while it is open.
#[inline(always)]
fn upvalue_get<'a>(st: &StackView<'a>, up: ObjRef<'a>) -> (u64, Option<ObjRef<'a>>) {
    match upvalue_state(up) {
        UpvalueState::Open(slot) => st.get(slot),
        UpvalueState::Closed(raw, r) => (raw, r),
    }
}

/// Stores into upvalue `up`: into the stack while it is open.
#[inline(always)]
fn upvalue_set(st: &mut StackView<'_>, up: ObjRef<'_>, raw: u64, r: Option<ObjRef<'_>>) {
    match upvalue_state(up) {
        UpvalueState::Open(slot) => st.set(slot, raw, r),
        UpvalueState::Closed(..) => set_upvalue_value(up, raw, r),
    }
}

/// Closes every open upvalue at stack slot `last` or above: the value moves into it. (Inlined,
/// so that the dispatch loop never takes the stack view's address and keeps its top in a
/// register.)
#[inline(always)]
fn close_upvalues(st: &StackView<'_>, closures: &Closures<'_>, last: usize) {
    while let Some(up) = closures.get(OPEN_UPVALUES) {
        let slot = upvalue_slot(up);
        if slot < last {
            break;
        }
        let (raw, r) = st.get(slot);
        let next = up.load(UPVALUE_NEXT);
        set_upvalue_value(up, raw, r);
        up.store(UPVALUE_NEXT, None);
        closures.set(OPEN_UPVALUES, next);
    }
}

/// The open upvalue for stack slot `slot`, created on the allocation fast path if there is
/// none (clox's `captureUpvalue`; the list is sorted by slot, highest first); `None` (nothing
/// changed) if the allocation needs the slow path.
#[inline]
fn capture_upvalue<'a>(
    s: &'a Scope<'_>,
    closures: &Closures<'a>,
    slot: usize,
) -> Option<ObjRef<'a>> {
    let mut previous = None;
    let mut current = closures.get(OPEN_UPVALUES);
    while let Some(up) = current {
        let at = upvalue_slot(up);
        if at == slot {
            return Some(up);
        }
        if at < slot {
            break;
        }
        previous = Some(up);
        current = up.load(UPVALUE_NEXT);
    }
    let new = s.alloc_fresh_with_values(UPVALUE, UPVALUE_REFS, UPVALUE_VALUES, UPVALUE_BYTES)?;
    init_open_upvalue(&new, slot, current);
    let new = new.get();
    match previous {
        None => closures.set(OPEN_UPVALUES, Some(new)),
        Some(p) => p.store(UPVALUE_NEXT, Some(new)),
    }
    Some(new)
}

/// The frames' region, opened: the frames' closures (the open-upvalue list head in its last
/// slot).
type Closures<'a> = RegionView<'a, FRAME_ROOTS>;

/// A runtime error (cold: the dispatch loop's error paths stay out of its way).
#[cold]
#[inline(never)]
fn error(message: std::fmt::Arguments<'_>) -> RuntimeError {
    RuntimeError(message.to_string())
}

/// `print`: writes the value and a newline.
#[inline(never)]
fn print(out: &mut dyn Write, raw: u64, r: Option<ObjRef<'_>>) {
    let text = display(raw, r);
    let _ = writeln!(out, "{text}");
}

/// How `print` shows a value.
fn display(raw: u64, r: Option<ObjRef<'_>>) -> String {
    match Value::from_raw(raw) {
        Value::Nil => "nil".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format_number(n),
        Value::Obj => r.map_or_else(|| "nil".to_string(), display_object),
    }
}

impl Vm {
    /// Executes instructions that cannot allocate until one needs the mutable scope. See the
    /// module documentation.
    pub(super) fn run_fast(&mut self, s: &Scope<'_>) -> Result<Exit, RuntimeError> {
        let Vm {
            stack,
            values,
            sp,
            frames,
            frame_count,
            frame_roots,
            code_constants,
            globals,
            global_values,
            field_names,
            codes,
            init_string,
            init_hash,
            interner,
            out,
            start,
            ..
        } = self;
        let init_hash = *init_hash;
        let mut st = StackView::new(values, stack.view(s), *sp);
        let closures: Closures<'_> = frame_roots.view(s);
        let globals = globals.get(s);
        let code_constants = code_constants.get(s);
        let global_values: &mut [u64] = global_values;
        let field_names: &mut [bool] = field_names;
        let codes: &[Code] = codes;
        let frames: &mut [Frame; FRAMES_MAX] = frames;

        // The current frame: its index, `ip`, slot base, code, and its constants once an
        // instruction needed them (they are read from `code_constants` on first use: `fib`'s
        // frames never need them). The closure is read from `frame_roots` by the upvalue
        // instructions only.
        let mut fi = *frame_count - 1;
        let mut ip;
        let mut base;
        let mut constants: Option<ObjRef<'_>>;
        let mut code: CodeWindow<'_>;
        let mut cur: &Code;

        // Makes frame `fi` current.
        macro_rules! enter {
            () => {{
                let frame = frames[fi];
                ip = frame.ip;
                base = frame.base;
                constants = None;
                cur = &codes[frame.code as usize];
                code = cur.code.window();
            }};
        }
        enter!();
        // The current frame's constants, not kept (for an instruction that leaves the frame).
        macro_rules! frame_constants {
            () => {
                match constants {
                    Some(c) => c,
                    None => code_constants
                        .load(frames[fi].code as usize)
                        .expect("a function has constants"),
                }
            };
        }
        // The current frame's constants, kept for the frame's next instructions.
        macro_rules! constants {
            () => {
                match constants {
                    Some(c) => c,
                    None => {
                        let c = code_constants
                            .load(frames[fi].code as usize)
                            .expect("a function has constants");
                        constants = Some(c);
                        c
                    }
                }
            };
        }

        // DEFINE_GLOBAL or SET_GLOBAL (`$op`) of global slot operand `$arg`, the stack top its
        // value; `$undefined` runs for a SET_GLOBAL of a global never defined (and leaves).
        // One text for the inner loop, which leaves for the outer match on an error, and for
        // that match, which reports it.
        macro_rules! define_or_set_global {
            ($op:expr, $arg:expr, $undefined:block) => {{
                let slot = cur.globals[$arg] as usize;
                let old = global_values[slot];
                if $op == op::SET_GLOBAL && old == RAW_UNDEFINED {
                    $undefined
                }
                let (raw, r) = st.get(st.sp - 1);
                if raw == RAW_OBJ {
                    globals.store(slot, r);
                } else if old == RAW_OBJ {
                    globals.store(slot, None);
                }
                global_values[slot] = raw;
                if $op == op::DEFINE_GLOBAL {
                    st.drop_n(1);
                }
                ip += 2;
            }};
        }

        let result = 'run: loop {
            // A runtime error at the instruction starting at `at`.
            macro_rules! fail {
                ($at:expr, $($message:tt)*) => {{
                    frames[fi].ip = $at + 1;
                    break 'run Err(error(format_args!($($message)*)));
                }};
            }
            // Leaves the loop to run the instruction at `at` in `slow_op`.
            macro_rules! slow {
                ($at:expr) => {{
                    frames[fi].ip = $at;
                    break 'run Ok(Exit::Slow);
                }};
            }
            // Pushes a value; a full stack is "Stack overflow." at the instruction at `at`.
            macro_rules! push {
                ($at:expr, $raw:expr, $r:expr) => {{
                    if !st.push($raw, $r) {
                        fail!($at, "Stack overflow.");
                    }
                }};
            }
            macro_rules! push_raw {
                ($at:expr, $raw:expr) => {{
                    if !st.push_raw($raw) {
                        fail!($at, "Stack overflow.");
                    }
                }};
            }
            macro_rules! binary_number_op {
                ($at:expr, $a:ident, $b:ident, $result:expr) => {{
                    match (raw_number(st.peek_word(1)), raw_number(st.peek_word(0))) {
                        (Some($a), Some($b)) => st.replace_two_raw($result),
                        _ => fail!($at, "Operands must be numbers."),
                    }
                    ip += 1;
                }};
            }
            // Calls closure `$callee` with the top `$argc` values as arguments (the caller's
            // `ip` is already past the call): pushes its frame and makes it current.
            macro_rules! call_closure {
                ($at:expr, $callee:expr, $argc:expr) => {{
                    let callee: ObjRef<'_> = $callee;
                    let argc: usize = $argc;
                    // The code id from the closure's shape: the function is not loaded.
                    let id = closure_code_id(callee);
                    let arity = codes[id as usize].arity;
                    if argc != arity {
                        fail!($at, "Expected {arity} arguments but got {argc}.");
                    }
                    // `>=`, not `==`: the compiler then knows `fi < FRAMES_MAX` below, so the
                    // frame stores need no index checks.
                    if fi + 1 >= FRAMES_MAX {
                        fail!($at, "Stack overflow.");
                    }
                    base = st.sp - argc - 1;
                    fi += 1;
                    frames[fi] = Frame {
                        ip: 0,
                        base,
                        code: id,
                    };
                    closures.set(closure_slot(fi), Some(callee));
                    if s.poll_requested() {
                        break 'run Ok(Exit::Poll);
                    }
                    ip = 0;
                    constants = None;
                    cur = &codes[id as usize];
                    code = cur.code.window();
                    continue;
                }};
            }
            // Calls the value `$argc` below the top (the caller's `ip` is already past the
            // call).
            macro_rules! call_value {
                ($at:expr, $argc:expr) => {{
                    let argc: usize = $argc;
                    let callee_slot = st.sp - 1 - argc;
                    let Some(callee) = st.obj(callee_slot) else {
                        fail!($at, "Can only call functions and classes.");
                    };
                    let shape = callee.shape();
                    // The common case first, as a plain test: the other shapes are matched
                    // on a copy the compiler cannot see through, so that it does not fold
                    // this test into their jump table.
                    if is_closure_shape(shape) {
                        call_closure!($at, callee, argc);
                    }
                    match std::hint::black_box(shape) {
                        BOUND_METHOD => {
                            let receiver = callee.load(BOUND_RECEIVER);
                            let method = callee.load(BOUND_METHOD_SLOT).expect("a method");
                            st.set(callee_slot, RAW_OBJ, receiver);
                            call_closure!($at, method, argc);
                        }
                        CLASS => {
                            // clox's `newInstance` and `init` call, with the allocation fast
                            // path; where it needs the slow path, `call_class` does it all.
                            let methods = callee.load(CLASS_METHODS).expect("a class has methods");
                            let init =
                                table::get_object_hashed(methods, init_string.get(s), init_hash);
                            // An initializer that sets fields gets the field table with the
                            // instance, so that setting them needs no allocation.
                            let fields = match init {
                                Some(c) if codes[closure_code_id(c) as usize].sets_fields => {
                                    let Some(t) = table::alloc_fresh(s) else {
                                        break 'run Ok(Exit::CallClass(argc));
                                    };
                                    Some(t.get())
                                }
                                _ => None,
                            };
                            let Some(instance) = s.alloc_fresh(INSTANCE, INSTANCE_REFS, 0) else {
                                break 'run Ok(Exit::CallClass(argc));
                            };
                            instance.init(INSTANCE_CLASS, Some(callee));
                            instance.init(INSTANCE_FIELDS, fields);
                            st.set(callee_slot, RAW_OBJ, Some(instance.get()));
                            match init {
                                Some(initializer) => call_closure!($at, initializer, argc),
                                None if argc != 0 => {
                                    fail!($at, "Expected 0 arguments but got {argc}.")
                                }
                                None => {
                                    ip = frames[fi].ip;
                                    continue;
                                }
                            }
                        }
                        NATIVE => {
                            let result = match native_id(callee) {
                                NATIVE_CLOCK => Value::Number(start.elapsed().as_secs_f64()),
                                _ => Value::Nil,
                            };
                            st.truncate(callee_slot);
                            push_raw!($at, result.to_raw());
                            ip = frames[fi].ip;
                            continue;
                        }
                        _ => fail!($at, "Can only call functions and classes."),
                    }
                }};
            }
            // SET_PROPERTY (`$pop` false) or SET_PROPERTY_POP (true) of name constant `arg`.
            macro_rules! set_property {
                ($at:expr, $arg:expr, $pop:expr) => {{
                    let Some(instance) = st.obj(st.sp - 2).filter(|o| o.shape() == INSTANCE) else {
                        fail!($at, "Only instances have fields.");
                    };
                    let name = constants!().load($arg).expect("a name");
                    // Before any field of this name exists (`INVOKE` reads the mark).
                    field_names[cur.globals[$arg] as usize] = true;
                    let (raw, r) = st.get(st.sp - 1);
                    let fields = match instance.load(INSTANCE_FIELDS) {
                        Some(fields) => fields,
                        // The first field: its table on the allocation fast path.
                        None => {
                            let Some(t) = table::alloc_fresh(s) else {
                                slow!($at);
                            };
                            let t = t.get();
                            instance.store(INSTANCE_FIELDS, Some(t));
                            t
                        }
                    };
                    if !table::set_in_place_hashed(fields, name, cur.hashes[$arg], raw, r) {
                        // A full table: a bigger one, in `slow_op`.
                        slow!($at);
                    }
                    if $pop {
                        st.drop_top(raw);
                        st.drop_top(RAW_OBJ);
                    } else {
                        st.replace_obj(st.sp - 2, raw, r);
                        st.drop_top(raw);
                    }
                    ip += 2;
                }};
            }
            // Calls method `$name` of `$class` on the receiver `$argc` below the top.
            macro_rules! invoke_from_class {
                ($at:expr, $class:expr, $name:expr, $arg:expr, $argc:expr) => {{
                    let name: ObjRef<'_> = $name;
                    let methods = $class.load(CLASS_METHODS).expect("a class has methods");
                    match table::get_object_hashed(methods, name, cur.hashes[$arg]) {
                        Some(method) => call_closure!($at, method, $argc),
                        _ => fail!($at, "Undefined property '{}'.", string_text(name)),
                    }
                }};
            }

            // The instructions that touch only the stack, the constants, the globals and `ip`
            // run in an inner loop of their own, whose few live values stay in registers;
            // the others leave it for the outer match, with the instruction. So do the inner
            // instructions' rare cases (an object constant, a full stack, an error, a pause
            // request at a `LOOP`): the outer match runs them again in full. The inner loop
            // touches neither the frames nor the frame's constants.
            let (at, fetched) = loop {
                let at = ip;
                let Some(ins) = code.fetch(at) else {
                    break (at, None);
                };
                // Leaves for the outer match, which runs the instruction again in full.
                macro_rules! out {
                    () => {
                        break (at, Some(ins))
                    };
                }
                // Pushes a value; a full stack leaves for the outer match.
                macro_rules! push_or_out {
                    ($raw:expr, $r:expr) => {{
                        if !st.push($raw, $r) {
                            out!();
                        }
                    }};
                }
                macro_rules! push_raw_or_out {
                    ($raw:expr) => {{
                        if !st.push_raw($raw) {
                            out!();
                        }
                    }};
                }
                macro_rules! number_op_or_out {
                    ($a:ident, $b:ident, $result:expr) => {{
                        match st.top_two_numbers() {
                            Some(($a, $b)) => st.replace_two_numbers($result),
                            _ => out!(),
                        }
                        ip += 1;
                    }};
                }
                let arg = ins[1] as usize;
                match ins[0] {
                    op::CONSTANT => {
                        let raw = cur.constants[arg];
                        if raw == RAW_OBJ {
                            // The object is in the frame's constants: the outer match.
                            out!();
                        }
                        push_raw_or_out!(raw);
                        ip += 2;
                    }
                    op::NIL => {
                        push_raw_or_out!(RAW_NIL);
                        ip += 1;
                    }
                    op::TRUE => {
                        push_raw_or_out!(RAW_TRUE);
                        ip += 1;
                    }
                    op::FALSE => {
                        push_raw_or_out!(RAW_FALSE);
                        ip += 1;
                    }
                    op::POP => {
                        st.drop_n(1);
                        ip += 1;
                    }
                    op::GET_LOCAL => {
                        let (raw, r) = st.get(base + arg);
                        push_or_out!(raw, r);
                        ip += 2;
                    }
                    op::SET_LOCAL => {
                        let (raw, r) = st.get(st.sp - 1);
                        st.set(base + arg, raw, r);
                        ip += 2;
                    }
                    op::SET_LOCAL_POP => {
                        let (raw, r) = st.get(st.sp - 1);
                        st.set(base + arg, raw, r);
                        st.drop_top(raw);
                        ip += 2;
                    }
                    op::GET_GLOBAL => {
                        let slot = cur.globals[arg] as usize;
                        let raw = global_values[slot];
                        if raw == RAW_OBJ {
                            push_or_out!(raw, globals.load(slot));
                        } else if raw == RAW_UNDEFINED {
                            out!();
                        } else {
                            push_raw_or_out!(raw);
                        }
                        ip += 2;
                    }
                    op::DEFINE_GLOBAL | op::SET_GLOBAL => {
                        define_or_set_global!(ins[0], arg, { out!() });
                    }
                    op::EQUAL => {
                        if let Some((x, y)) = st.top_two_numbers() {
                            st.replace_two_numbers(raw_bool(x == y));
                            ip += 1;
                            continue;
                        }
                        let (a, b) = (st.peek_word(1), st.peek_word(0));
                        // Not two numbers: a number's word is never a boxed one, so equal
                        // words are equal values, and two objects are equal if identical.
                        let equal = if a == RAW_OBJ && b == RAW_OBJ {
                            match (st.obj(st.sp - 2), st.obj(st.sp - 1)) {
                                (Some(x), Some(y)) => x.same(&y),
                                _ => false,
                            }
                        } else {
                            a == b
                        };
                        st.replace_two_words(a, b, raw_bool(equal));
                        ip += 1;
                    }
                    op::EQUAL_CONSTANT => {
                        // The top value against a literal: a number, or a string, whose
                        // content hash is in `cur.hashes`. A string of another hash is another
                        // string (strings are interned), settled here without loading the
                        // literal; one of the same hash is compared by identity in the outer
                        // match.
                        let constant = cur.constants[arg];
                        let top = st.peek_word(0);
                        let equal = if constant != RAW_OBJ {
                            raw_number(top) == Some(f64::from_bits(constant))
                        } else if top != RAW_OBJ {
                            false
                        } else {
                            match st.obj(st.sp - 1) {
                                Some(o)
                                    if o.shape() == STRING && string_hash(o) == cur.hashes[arg] =>
                                {
                                    out!()
                                }
                                _ => false,
                            }
                        };
                        st.set_top_raw(raw_bool(equal));
                        ip += 2;
                    }
                    op::GREATER => number_op_or_out!(a, b, raw_bool(a > b)),
                    op::LESS => number_op_or_out!(a, b, raw_bool(a < b)),
                    op::SUBTRACT => number_op_or_out!(a, b, (a - b).to_bits()),
                    op::MULTIPLY => number_op_or_out!(a, b, (a * b).to_bits()),
                    op::DIVIDE => number_op_or_out!(a, b, (a / b).to_bits()),
                    op::NOT => {
                        let falsey = raw_is_falsey(st.peek_word(0));
                        st.set_top_raw(raw_bool(falsey));
                        ip += 1;
                    }
                    op::NEGATE => match raw_number(st.peek_word(0)) {
                        Some(n) => {
                            st.set_top_raw((-n).to_bits());
                            ip += 1;
                        }
                        _ => out!(),
                    },
                    op::JUMP => {
                        ip = at + 3 + u16::from_be_bytes([ins[1], ins[2]]) as usize;
                    }
                    op::JUMP_IF_FALSE => {
                        ip = at + 3;
                        if raw_is_falsey(st.peek_word(0)) {
                            ip += u16::from_be_bytes([ins[1], ins[2]]) as usize;
                        }
                    }
                    op::POP_JUMP_IF_FALSE => {
                        let condition = st.peek_word(0);
                        st.drop_top(condition);
                        ip = at + 3;
                        if raw_is_falsey(condition) {
                            ip += u16::from_be_bytes([ins[1], ins[2]]) as usize;
                        }
                    }
                    op::LOOP => {
                        if s.poll_requested() {
                            out!();
                        }
                        ip = at + 3 - u16::from_be_bytes([ins[1], ins[2]]) as usize;
                    }
                    op::ADD => match st.top_two_numbers() {
                        Some((a, b)) => {
                            st.replace_two_numbers((a + b).to_bits());
                            ip += 1;
                        }
                        // Strings, or an error: the outer match.
                        _ => out!(),
                    },
                    _ => out!(),
                }
            };
            let Some(ins) = fetched else {
                fail!(at, "Code ends without a return.");
            };
            let arg = ins[1] as usize;
            match ins[0] {
                op::CONSTANT => {
                    let raw = cur.constants[arg];
                    if raw == RAW_OBJ {
                        push!(at, raw, constants!().load(arg));
                    } else {
                        push_raw!(at, raw);
                    }
                    ip += 2;
                }
                op::NIL => {
                    push_raw!(at, RAW_NIL);
                    ip += 1;
                }
                op::TRUE => {
                    push_raw!(at, RAW_TRUE);
                    ip += 1;
                }
                op::FALSE => {
                    push_raw!(at, RAW_FALSE);
                    ip += 1;
                }
                op::GET_LOCAL => {
                    let (raw, r) = st.get(base + arg);
                    push!(at, raw, r);
                    ip += 2;
                }
                op::GET_GLOBAL => {
                    let slot = cur.globals[arg] as usize;
                    let raw = global_values[slot];
                    if raw == RAW_OBJ {
                        push!(at, raw, globals.load(slot));
                    } else if raw == RAW_UNDEFINED {
                        let name = frame_constants!().load(arg).expect("a name");
                        fail!(at, "Undefined variable '{}'.", string_text(name));
                    } else {
                        push_raw!(at, raw);
                    }
                    ip += 2;
                }
                op::DEFINE_GLOBAL | op::SET_GLOBAL => {
                    define_or_set_global!(ins[0], arg, {
                        let name = frame_constants!().load(arg).expect("a name");
                        fail!(at, "Undefined variable '{}'.", string_text(name));
                    });
                }
                op::NEGATE => match raw_number(st.peek_word(0)) {
                    Some(n) => {
                        st.set_top_raw((-n).to_bits());
                        ip += 1;
                    }
                    _ => fail!(at, "Operand must be a number."),
                },
                op::LOOP => {
                    ip = at + 3 - u16::from_be_bytes([ins[1], ins[2]]) as usize;
                    if s.poll_requested() {
                        frames[fi].ip = ip;
                        break 'run Ok(Exit::Poll);
                    }
                }
                op::EQUAL_CONSTANT => {
                    // In full; the inner loop leaves only a string with the literal's hash.
                    let constant = cur.constants[arg];
                    let equal = if constant != RAW_OBJ {
                        raw_number(st.peek_word(0)) == Some(f64::from_bits(constant))
                    } else {
                        match (st.obj(st.sp - 1), constants!().load(arg)) {
                            (Some(x), Some(y)) => x.same(&y),
                            _ => false,
                        }
                    };
                    st.set_top_raw(raw_bool(equal));
                    ip += 2;
                }
                op::GREATER => binary_number_op!(at, a, b, raw_bool(a > b)),
                op::LESS => binary_number_op!(at, a, b, raw_bool(a < b)),
                op::SUBTRACT => binary_number_op!(at, a, b, (a - b).to_bits()),
                op::MULTIPLY => binary_number_op!(at, a, b, (a * b).to_bits()),
                op::DIVIDE => binary_number_op!(at, a, b, (a / b).to_bits()),
                op::ADD => {
                    let string = |i: usize| st.obj(i).filter(|o| o.shape() == STRING);
                    let (Some(a), Some(b)) = (string(st.sp - 2), string(st.sp - 1)) else {
                        fail!(at, "Operands must be two numbers or two strings.");
                    };
                    let Some(r) = interner.concat_in_stretch(s, a, b) else {
                        slow!(at);
                    };
                    st.drop_n(1);
                    st.replace_obj(st.sp - 1, RAW_OBJ, Some(r));
                    ip += 1;
                }
                op::GET_UPVALUE => {
                    let closure = closures.get(closure_slot(fi)).expect("a closure");
                    let up = closure.load(CLOSURE_UPVALUES + arg).expect("an upvalue");
                    let (raw, r) = upvalue_get(&st, up);
                    push!(at, raw, r);
                    ip += 2;
                }
                op::SET_UPVALUE => {
                    let closure = closures.get(closure_slot(fi)).expect("a closure");
                    let up = closure.load(CLOSURE_UPVALUES + arg).expect("an upvalue");
                    let (raw, r) = st.get(st.sp - 1);
                    upvalue_set(&mut st, up, raw, r);
                    ip += 2;
                }
                op::GET_PROPERTY => {
                    let Some(instance) = st.obj(st.sp - 1).filter(|o| o.shape() == INSTANCE) else {
                        fail!(at, "Only instances have properties.");
                    };
                    let name = constants!().load(arg).expect("a name");
                    if let Some(fields) = instance.load(INSTANCE_FIELDS) {
                        if let Some((raw, r)) = table::get_hashed(fields, name, cur.hashes[arg]) {
                            st.replace_obj(st.sp - 1, raw, r);
                            ip += 2;
                            continue;
                        }
                    }
                    let class = instance.load(INSTANCE_CLASS).expect("a class");
                    let methods = class.load(CLASS_METHODS).expect("methods");
                    let Some(method) = table::get_object_hashed(methods, name, cur.hashes[arg])
                    else {
                        fail!(at, "Undefined property '{}'.", string_text(name));
                    };
                    // A bound method, on the allocation fast path.
                    let Some(bound) = s.alloc_fresh(BOUND_METHOD, BOUND_METHOD_REFS, 0) else {
                        slow!(at);
                    };
                    bound.init(BOUND_RECEIVER, Some(instance));
                    bound.init(BOUND_METHOD_SLOT, Some(method));
                    st.replace_obj(st.sp - 1, RAW_OBJ, Some(bound.get()));
                    ip += 2;
                }
                op::GET_LOCAL_PROPERTY => {
                    // `GET_LOCAL` and `GET_PROPERTY` in one: a field is pushed here; a method
                    // (bound to the local on the allocation's slow path) in `slow_op`.
                    if st.sp >= STACK_MAX {
                        fail!(at, "Stack overflow.");
                    }
                    let Some(instance) = st
                        .obj(base + ins[2] as usize)
                        .filter(|o| o.shape() == INSTANCE)
                    else {
                        fail!(at, "Only instances have properties.");
                    };
                    let name = constants!().load(arg).expect("a name");
                    if let Some(fields) = instance.load(INSTANCE_FIELDS) {
                        if let Some((raw, r)) = table::get_hashed(fields, name, cur.hashes[arg]) {
                            push!(at, raw, r);
                            ip += 3;
                            continue;
                        }
                    }
                    slow!(at);
                }
                op::SET_PROPERTY => set_property!(at, arg, false),
                op::SET_PROPERTY_POP => set_property!(at, arg, true),
                op::GET_SUPER => {
                    // The receiver's method of the superclass on top, bound to the receiver
                    // below it, on the allocation fast path.
                    let name = constants!().load(arg).expect("a name");
                    let superclass = st.obj(st.sp - 1).expect("a superclass");
                    let methods = superclass.load(CLASS_METHODS).expect("methods");
                    let Some(method) = table::get_object_hashed(methods, name, cur.hashes[arg])
                    else {
                        fail!(at, "Undefined property '{}'.", string_text(name));
                    };
                    let Some(bound) = s.alloc_fresh(BOUND_METHOD, BOUND_METHOD_REFS, 0) else {
                        slow!(at);
                    };
                    bound.init(BOUND_RECEIVER, st.obj(st.sp - 2));
                    bound.init(BOUND_METHOD_SLOT, Some(method));
                    st.drop_n(1);
                    st.replace_obj(st.sp - 1, RAW_OBJ, Some(bound.get()));
                    ip += 2;
                }
                op::PRINT => {
                    let (raw, r) = st.get(st.sp - 1);
                    // A long string is written a piece at a time, polling between pieces.
                    if r.is_some_and(|o| o.shape() == STRING && string_len(o) > PRINT_CHUNK) {
                        slow!(at);
                    }
                    print(out, raw, r);
                    st.drop_n(1);
                    ip += 1;
                }
                op::CALL => {
                    frames[fi].ip = at + 2;
                    call_value!(at, arg);
                }
                op::INVOKE => {
                    let argc = ins[2] as usize;
                    let name = constants!().load(arg).expect("a name");
                    let receiver = st.sp - 1 - argc;
                    let Some(instance) = st.obj(receiver).filter(|o| o.shape() == INSTANCE) else {
                        fail!(at, "Only instances have methods.");
                    };
                    // A field shadows a method: probed only for a name ever set as a field.
                    let fields = if field_names[cur.globals[arg] as usize] {
                        instance.load(INSTANCE_FIELDS)
                    } else {
                        None
                    };
                    if let Some(fields) = fields {
                        if let Some((raw, r)) = table::get_hashed(fields, name, cur.hashes[arg]) {
                            st.set(receiver, raw, r);
                            frames[fi].ip = at + 3;
                            call_value!(at, argc);
                        }
                    }
                    let class = instance
                        .load(INSTANCE_CLASS)
                        .expect("an instance has a class");
                    // The caller's `ip` is stored late, where the lookups no longer need the
                    // registers.
                    frames[fi].ip = at + 3;
                    invoke_from_class!(at, class, name, arg, argc);
                }
                op::SUPER_INVOKE => {
                    frames[fi].ip = at + 3;
                    let name = frame_constants!().load(arg).expect("a name");
                    let superclass = st.obj(st.sp - 1).expect("a superclass");
                    st.drop_n(1);
                    invoke_from_class!(at, superclass, name, arg, ins[2] as usize);
                }
                op::SUPER_INVOKE_UPVALUE => {
                    // `GET_UPVALUE` of the superclass and `SUPER_INVOKE` in one.
                    frames[fi].ip = at + 4;
                    let name = frame_constants!().load(arg).expect("a name");
                    let closure = closures.get(closure_slot(fi)).expect("a closure");
                    let up = closure
                        .load(CLOSURE_UPVALUES + ins[3] as usize)
                        .expect("an upvalue");
                    let superclass = upvalue_get(&st, up).1.expect("a superclass");
                    invoke_from_class!(at, superclass, name, arg, ins[2] as usize);
                }
                op::CLOSURE => {
                    // clox's `newClosure` and `captureUpvalue`, with the allocation fast
                    // path; where it needs the slow path, `slow_op` runs the instruction
                    // again in full (upvalues made here are on the open list, and found).
                    let function = constants!().load(arg).expect("a function");
                    let n = function_upvalues(function);
                    let shape = closure_shape(function_code_id(function));
                    let Some(c) =
                        s.alloc_fresh(shape, (CLOSURE_UPVALUES + n) as u32, CLOSURE_BYTES)
                    else {
                        slow!(at);
                    };
                    c.init(CLOSURE_FUNCTION, Some(function));
                    c.init(CLOSURE_CONSTANTS, function.load(FN_CONSTANTS));
                    for i in 0..n {
                        let pair = code
                            .fetch(at + 2 + 2 * i)
                            .expect("a closure's captures are in the code");
                        let index = pair[1] as usize;
                        let up = if pair[0] != 0 {
                            match capture_upvalue(s, &closures, base + index) {
                                Some(up) => Some(up),
                                None => slow!(at),
                            }
                        } else {
                            let enclosing = closures.get(closure_slot(fi)).expect("a closure");
                            enclosing.load(CLOSURE_UPVALUES + index)
                        };
                        c.init(CLOSURE_UPVALUES + i, up);
                    }
                    let c = c.get();
                    push!(at, RAW_OBJ, Some(c));
                    ip = at + 2 + 2 * n;
                }
                op::CLASS | op::INHERIT | op::METHOD => slow!(at),
                op::CLOSE_UPVALUE => {
                    close_upvalues(&st, &closures, st.sp - 1);
                    st.drop_n(1);
                    ip += 1;
                }
                op::RETURN => {
                    if !closures.is_null(OPEN_UPVALUES) {
                        close_upvalues(&st, &closures, base);
                    }
                    closures.set(closure_slot(fi), None);
                    if fi == 0 {
                        st.truncate_frame(base);
                        break 'run Ok(Exit::Done);
                    }
                    fi -= 1;
                    st.return_to(base);
                    enter!();
                }
                other => {
                    debug_assert!(OpCode::from_byte(other).is_none());
                    fail!(at, "Unknown opcode {other}.");
                }
            }
        };
        *sp = st.sp;
        *frame_count = match result {
            Ok(Exit::Done) => 0,
            _ => fi + 1,
        };
        result
    }
}
