//! A Lox interpreter — the language of *Crafting Interpreters*, behaving like the book's clox —
//! built to embed the collector of this workspace.
//!
//! This crate holds the parts that do not touch the garbage-collected heap:
//!
//! - [`scanner`] and [`token`]: source text to tokens;
//! - [`compiler`]: the single-pass Pratt compiler, [`compile`]`(source)` →
//!   [`FunctionProto`] or [`CompileErrors`];
//! - [`function`] and [`chunk`]: the compiler's output — a tree of function prototypes, each
//!   with a [`Chunk`] of clox bytecode ([`OpCode`]) and its line table, and a [`Constant`] pool
//!   — which a loader turns into heap objects;
//! - [`instruction`]: decoding one instruction of a function's code;
//! - [`disassembler`]: clox-style bytecode listings (`lox --disassemble`);
//! - [`error`]: compile errors formatted exactly as clox prints them;
//! - [`number`]: [`format_number`], Lox's `%g` number printing;
//! - [`cli`]: the `lox` binary's options and exit statuses.
//!
//! and the parts that do, through `gc-runtime`'s public embedding API only:
//!
//! - [`value`]: a Lox value as a reference slot plus raw words (tag and payload, or one
//!   NaN-boxed word);
//! - [`stack`]: the value stack as the dispatch loop holds it;
//! - [`object`]: the heap layout (shape ids, slots, raw bytes) of every Lox object;
//! - [`table`]: hash tables as heap objects, keyed by content hash (objects move);
//! - [`interner`]: weak string interning;
//! - [`vm`]: the stack VM ([`Vm`]) and a complete interpreter ([`Lox`]);
//! - [`repl`]: the interactive prompt.

pub mod chunk;
pub mod cli;
pub mod compiler;
pub mod disassembler;
pub mod error;
pub mod function;
pub mod instruction;
pub mod interner;
pub mod number;
pub mod object;
pub mod repl;
pub mod scanner;
pub mod stack;
pub mod table;
pub mod token;
pub mod value;
pub mod vm;

pub use chunk::{Chunk, OpCode};
pub use compiler::compile;
pub use disassembler::{disassemble_chunk, disassemble_function, disassemble_instruction};
pub use error::{CompileError, CompileErrors, ErrorLocation};
pub use function::{Constant, FunctionProto, UpvalueCapture};
pub use number::format_number;
pub use value::Value;
pub use vm::{InterpretError, Lox, SetupError, Vm};
