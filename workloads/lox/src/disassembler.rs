//! The disassembler: a human-readable listing of bytecode, in clox's `debug.c` format.
//!
//! ```text
//! == <script> ==
//! 0000    1 OP_CONSTANT         0 '1'
//! 0002    | OP_PRINT
//! 0003    2 OP_CLOSURE          1 <fn f>
//! 0005      |                     local 1
//! 0007    | OP_JUMP_IF_FALSE    7 -> 17
//! ```
//!
//! Each line shows the byte offset, the source line (`|` when it repeats the previous byte's
//! line), the opcode and its decoded operands. [`disassemble_function`] lists a prototype and
//! every function nested in it, innermost first — the order in which clox's `DEBUG_PRINT_CODE`
//! prints them as each function finishes compiling. The `lox --disassemble` flag prints this.

use crate::chunk::OpCode;
use crate::function::{Constant, FunctionProto};
use crate::instruction::{DecodeError, Operands};
use std::fmt::Write;

/// Lists `function` and, before it, every function nested in it (depth first, in constant-pool
/// order), each under a `== name ==` header.
pub fn disassemble_function(function: &FunctionProto) -> String {
    let mut out = String::new();
    write_function(function, &mut out);
    out
}

fn write_function(function: &FunctionProto, out: &mut String) {
    for constant in &function.constants {
        if let Constant::Function(nested) = constant {
            write_function(nested, out);
        }
    }
    out.push_str(&disassemble_chunk(function));
}

/// Lists the chunk of one function under a `== name ==` header (its
/// [`display_name`](FunctionProto::display_name); nested functions are not expanded).
pub fn disassemble_chunk(function: &FunctionProto) -> String {
    let mut out = format!("== {} ==\n", function.display_name());
    let mut offset = 0;
    while offset < function.chunk.code.len() {
        offset = disassemble_instruction(function, offset, &mut out);
    }
    out
}

/// Appends the listing of the instruction at `offset` of `function`'s code to `out` and returns
/// the offset of the next instruction. A malformed chunk (an unknown opcode, operands cut off by
/// the end of the code) is listed as far as it can be, never with a panic.
pub fn disassemble_instruction(function: &FunctionProto, offset: usize, out: &mut String) -> usize {
    let chunk = &function.chunk;
    let _ = write!(out, "{offset:04} ");
    let line = chunk.lines.get(offset).copied().unwrap_or(0);
    if offset > 0 && chunk.lines.get(offset - 1) == Some(&line) {
        out.push_str("   | ");
    } else {
        let _ = write!(out, "{line:4} ");
    }

    let ins = match function.decode(offset) {
        Ok(ins) => ins,
        Err(DecodeError::UnknownOpcode(byte)) => {
            let _ = writeln!(out, "Unknown opcode {byte}");
            return offset + 1;
        }
        Err(DecodeError::Truncated(op)) => {
            let _ = writeln!(out, "{:<16} <truncated>", op.name());
            return chunk.code.len();
        }
        Err(DecodeError::NotAFunction) => {
            let _ = writeln!(
                out,
                "{:<16} <not a function constant>",
                OpCode::Closure.name()
            );
            return (offset + 2).min(chunk.code.len());
        }
    };
    let name = ins.op.name();
    let constant = |index: u8| {
        function
            .constants
            .get(index as usize)
            .map_or_else(|| "?".to_string(), |c| c.to_string())
    };
    match ins.operands {
        Operands::Constant(i) => {
            let _ = writeln!(out, "{name:<16} {i:>4} '{}'", constant(i));
        }
        Operands::Byte(b) => {
            let _ = writeln!(out, "{name:<16} {b:>4}");
        }
        Operands::Jump(_) => {
            let target = ins.jump_target().unwrap_or(0);
            let _ = writeln!(out, "{name:<16} {offset:>4} -> {target}");
        }
        Operands::SuperInvokeUpvalue {
            name: i,
            args,
            upvalue,
        } => {
            let _ = writeln!(
                out,
                "{name:<16} ({args} args, upvalue {upvalue}) {i:>4} '{}'",
                constant(i)
            );
        }
        Operands::LocalProperty { name: i, slot } => {
            let _ = writeln!(out, "{name:<16} (slot {slot}) {i:>4} '{}'", constant(i));
        }
        Operands::Invoke { name: i, args } => {
            let _ = writeln!(out, "{name:<16} ({args} args) {i:>4} '{}'", constant(i));
        }
        Operands::Closure(i) => {
            let _ = writeln!(out, "{name:<16} {i:>4} {}", constant(i));
            for (at, is_local, index) in ins.captures(chunk) {
                let kind = if is_local == 0 { "upvalue" } else { "local" };
                let _ = writeln!(out, "{at:04}      |                     {kind} {index}");
            }
        }
        Operands::None => {
            let _ = writeln!(out, "{name}");
        }
    }
    offset + ins.len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile;

    #[test]
    fn lists_like_clox() {
        let script = compile("print 1 + 2;\nvar a = \"x\";\n").unwrap();
        assert_eq!(
            disassemble_function(&script),
            "== <script> ==\n\
             0000    1 OP_CONSTANT         0 '1'\n\
             0002    | OP_CONSTANT         1 '2'\n\
             0004    | OP_ADD\n\
             0005    | OP_PRINT\n\
             0006    2 OP_CONSTANT         3 'x'\n\
             0008    | OP_DEFINE_GLOBAL    2 'a'\n\
             0010    3 OP_NIL\n\
             0011    | OP_RETURN\n"
        );
    }

    #[test]
    fn jumps_invokes_and_closures() {
        let source = "\
fun outer() {
  var x = 1;
  fun inner() { return x; }
  while (x < 3) x = x + 1;
  return inner;
}
class A { m() { this.f(1, 2); } }
";
        let listing = disassemble_function(&compile(source).unwrap());
        // Innermost first, then the enclosing functions, the script last.
        let headers: Vec<&str> = listing.lines().filter(|l| l.starts_with("==")).collect();
        assert_eq!(
            headers,
            vec!["== inner ==", "== outer ==", "== m ==", "== <script> =="]
        );
        assert!(listing.contains("OP_GET_UPVALUE      0\n"), "{listing}");
        assert!(
            listing.contains("OP_CLOSURE          1 <fn inner>\n"),
            "{listing}"
        );
        assert!(
            listing.contains("      |                     local 1\n"),
            "{listing}"
        );
        assert!(listing.contains("OP_JUMP_IF_FALSE"), "{listing}");
        assert!(listing.contains("OP_LOOP"), "{listing}");
        assert!(
            listing.contains("OP_INVOKE        (2 args)    0 'f'\n"),
            "{listing}"
        );
        assert!(listing.contains("OP_METHOD           "), "{listing}");
    }

    #[test]
    fn jump_targets() {
        let source = "if (true) print 1; else print 2;";
        let listing = disassemble_function(&compile(source).unwrap());
        assert!(
            listing.contains("0001    | OP_POP_JUMP_IF_FALSE    1 -> 10\n"),
            "{listing}"
        );
        assert!(
            listing.contains("0007    | OP_JUMP             7 -> 13\n"),
            "{listing}"
        );
        let listing = disassemble_function(&compile("while (false) {}").unwrap());
        assert!(
            listing.contains("0004    | OP_LOOP             4 -> 0\n"),
            "{listing}"
        );
    }

    #[test]
    fn malformed_code_does_not_panic() {
        let mut function = FunctionProto {
            name: Some("bad".into()),
            ..FunctionProto::default()
        };
        function.chunk.write(200, 1);
        function.chunk.write(OpCode::Constant as u8, 1);
        let listing = disassemble_chunk(&function);
        assert_eq!(
            listing,
            "== bad ==\n0000    1 Unknown opcode 200\n0001    | OP_CONSTANT      <truncated>\n"
        );
    }
}
