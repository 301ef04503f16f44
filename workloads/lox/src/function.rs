//! Function prototypes: the compiler's output, a plain Rust tree that owns no heap object.
//!
//! clox's compiler allocates `ObjFunction`s and strings in the garbage-collected heap while it
//! parses. Ours does not: it builds a tree of [`FunctionProto`]s whose constant pools hold
//! [`Constant`]s — numbers, string contents, and nested prototypes for the functions and methods
//! declared inside. A loader walks the tree and creates the heap objects (interned strings,
//! function objects) before running it, so compilation never triggers a collection and the
//! compiler needs no rooting.
//!
//! A prototype holds its bytecode (a [`Chunk`]: the code and its line table) and, beside it,
//! the constant pool the code indexes. The pool lives here rather than in the chunk because its
//! entries nest prototypes: the chunk stays plain bytecode, and the tree is this file's.
//!
//! The top-level script is a `FunctionProto` with no name and arity 0.

use crate::chunk::Chunk;
use crate::number::format_number;
use std::fmt;
use std::sync::Arc;

/// A compiled function: the output of [`compile`](crate::compile) for the top-level script, and
/// the payload of [`Constant::Function`] for every `fun` declaration and method.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionProto {
    /// The declared name; `None` for the top-level script (printed as `<script>`, and named
    /// `script` in stack traces). Methods and initializers carry their method name.
    pub name: Option<String>,
    /// Number of parameters (0–255).
    pub arity: u8,
    /// How the closure created from this prototype captures each upvalue, in upvalue-index order.
    /// The same pairs are also encoded after the function's `CLOSURE` instruction in the
    /// enclosing chunk, exactly as in clox, so a VM can use either.
    pub upvalues: Vec<UpvalueCapture>,
    /// The function's bytecode. It always ends with a `RETURN`.
    pub chunk: Chunk,
    /// The constant pool, indexed by `CONSTANT`, the name operands and `CLOSURE`. At most 256
    /// entries are addressable; the compiler reports "Too many constants in one chunk." beyond.
    /// Constants are not deduplicated, as in clox.
    pub constants: Vec<Constant>,
}

impl FunctionProto {
    /// Number of upvalues a closure over this function has (clox's `upvalueCount`).
    pub fn upvalue_count(&self) -> usize {
        self.upvalues.len()
    }

    /// The name used in stack traces and disassembly headers: the function name, or
    /// `"<script>"` for the top level.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("<script>")
    }
}

impl fmt::Display for FunctionProto {
    /// `<fn name>`, or `<script>` for the top level — how Lox prints a function.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "<fn {name}>"),
            None => f.write_str("<script>"),
        }
    }
}

/// Where a closure finds one of its upvalues when `CLOSURE` creates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UpvalueCapture {
    /// `true`: capture local slot `index` of the enclosing function's frame. `false`: reuse
    /// upvalue `index` of the enclosing closure.
    pub is_local: bool,
    /// Slot or upvalue index in the enclosing function.
    pub index: u8,
}

/// An entry of a function's constant pool.
#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    /// A number literal.
    Number(f64),
    /// A string literal's contents (without quotes), or an identifier used as a name operand
    /// (globals, properties, methods, classes). The loader interns these.
    String(String),
    /// A nested function or method; the operand of `CLOSURE`.
    Function(Arc<FunctionProto>),
}

impl fmt::Display for Constant {
    /// Formats the constant as Lox's `print` would show the value it loads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::Number(n) => f.write_str(&format_number(*n)),
            Constant::String(s) => f.write_str(s),
            Constant::Function(function) => function.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let script = FunctionProto::default();
        assert_eq!(script.to_string(), "<script>");
        assert_eq!(script.display_name(), "<script>");
        let f = FunctionProto {
            name: Some("add".into()),
            arity: 2,
            ..FunctionProto::default()
        };
        assert_eq!(f.to_string(), "<fn add>");
        assert_eq!(f.display_name(), "add");
        assert_eq!(Constant::Function(Arc::new(f)).to_string(), "<fn add>");
        assert_eq!(Constant::Number(2.5).to_string(), "2.5");
        assert_eq!(Constant::Number(1e21).to_string(), "1e+21");
        assert_eq!(Constant::String("a b".into()).to_string(), "a b");
    }
}
