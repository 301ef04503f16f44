//! Decoding one bytecode instruction: its opcode, its operands by kind, and its length. The
//! one place that knows each opcode's operand format (see the encoding table in
//! [`crate::chunk`]); the disassembler, the compiler's test listings and the bytecode checker
//! read instructions through it. (The VM's dispatch loop reads its operands inline, in the
//! same format, for speed.)

use crate::chunk::{Chunk, OpCode};
use crate::function::{Constant, FunctionProto};

/// An instruction's operands, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// No operand.
    None,
    /// An index into the constant pool: a value (`CONSTANT`) or a name.
    Constant(u8),
    /// A stack slot (`GET_LOCAL`/`SET_LOCAL`), an upvalue index or an argument count (`CALL`).
    Byte(u8),
    /// A jump distance, counted from the byte after the operand: forward for `JUMP` and
    /// `JUMP_IF_FALSE`, backward for `LOOP`.
    Jump(u16),
    /// `INVOKE`/`SUPER_INVOKE`: the method name's constant and the argument count.
    Invoke { name: u8, args: u8 },
    /// `SUPER_INVOKE_UPVALUE`: the method name's constant, the argument count and the index of
    /// the upvalue holding the superclass.
    SuperInvokeUpvalue { name: u8, args: u8, upvalue: u8 },
    /// `GET_LOCAL_PROPERTY`: the property name's constant and the local's slot.
    LocalProperty { name: u8, slot: u8 },
    /// `CLOSURE`: the function's constant; its capture pairs follow (see
    /// [`Instruction::captures`]).
    Closure(u8),
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub op: OpCode,
    /// Offset of the opcode byte.
    pub offset: usize,
    pub operands: Operands,
    /// Bytes the instruction occupies, opcode included.
    pub len: usize,
}

/// Why the bytes at an offset are not an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The byte is not an opcode.
    UnknownOpcode(u8),
    /// The code ends inside the instruction's operands.
    Truncated(OpCode),
    /// A `CLOSURE` whose operand is not a function constant (its length is unknown).
    NotAFunction,
}

impl Instruction {
    /// Where a jump lands (an offset in the chunk, or outside it for malformed code).
    pub fn jump_target(&self) -> Option<i64> {
        let Operands::Jump(distance) = self.operands else {
            return None;
        };
        let next = (self.offset + self.len) as i64;
        Some(if self.op == OpCode::Loop {
            next - distance as i64
        } else {
            next + distance as i64
        })
    }

    /// The capture pairs of a `CLOSURE`, as (is_local byte, index), with the offset of each
    /// pair; empty for every other instruction.
    pub fn captures<'c>(&self, chunk: &'c Chunk) -> impl Iterator<Item = (usize, u8, u8)> + 'c {
        let pairs = match self.operands {
            Operands::Closure(_) => (self.len - 2) / 2,
            _ => 0,
        };
        let first = self.offset + 2;
        (0..pairs).map(move |i| {
            let at = first + 2 * i;
            (at, chunk.code[at], chunk.code[at + 1])
        })
    }
}

impl FunctionProto {
    /// True if the function's code sets a property anywhere (`SET_PROPERTY`, `SET_PROPERTY_POP`): an initializer
    /// that does gets its instance's field table with the instance; one that does not (an
    /// empty `init`) leaves it to the first field set, as an instance without `init` does.
    pub fn sets_properties(&self) -> bool {
        let mut at = 0;
        while at < self.chunk.code.len() {
            match self.decode(at) {
                Ok(i) if matches!(i.op, OpCode::SetProperty | OpCode::SetPropertyPop) => {
                    return true
                }
                Ok(i) => at += i.len,
                // Code the VM refuses to run anyway: assume the worst.
                Err(_) => return true,
            }
        }
        false
    }

    /// Decode the instruction at `offset` of the function's code (which must lie in the code).
    /// The function's constants give a `CLOSURE` its length (the nested function's upvalues).
    pub fn decode(&self, offset: usize) -> Result<Instruction, DecodeError> {
        let code = &self.chunk.code;
        let byte = code[offset];
        let op = OpCode::from_byte(byte).ok_or(DecodeError::UnknownOpcode(byte))?;
        let byte_at = |i: usize| {
            code.get(offset + i)
                .copied()
                .ok_or(DecodeError::Truncated(op))
        };
        let (operands, len) = match op {
            OpCode::Constant
            | OpCode::GetGlobal
            | OpCode::DefineGlobal
            | OpCode::SetGlobal
            | OpCode::GetProperty
            | OpCode::SetProperty
            | OpCode::SetPropertyPop
            | OpCode::GetSuper
            | OpCode::Class
            | OpCode::Method
            | OpCode::EqualConstant => (Operands::Constant(byte_at(1)?), 2),
            OpCode::GetLocal
            | OpCode::SetLocal
            | OpCode::SetLocalPop
            | OpCode::GetUpvalue
            | OpCode::SetUpvalue
            | OpCode::Call => (Operands::Byte(byte_at(1)?), 2),
            OpCode::Jump | OpCode::JumpIfFalse | OpCode::PopJumpIfFalse | OpCode::Loop => (
                Operands::Jump(u16::from_be_bytes([byte_at(1)?, byte_at(2)?])),
                3,
            ),
            OpCode::Invoke | OpCode::SuperInvoke => (
                Operands::Invoke {
                    name: byte_at(1)?,
                    args: byte_at(2)?,
                },
                3,
            ),
            OpCode::SuperInvokeUpvalue => (
                Operands::SuperInvokeUpvalue {
                    name: byte_at(1)?,
                    args: byte_at(2)?,
                    upvalue: byte_at(3)?,
                },
                4,
            ),
            OpCode::GetLocalProperty => (
                Operands::LocalProperty {
                    name: byte_at(1)?,
                    slot: byte_at(2)?,
                },
                3,
            ),
            OpCode::Closure => {
                let index = byte_at(1)?;
                let Some(Constant::Function(f)) = self.constants.get(index as usize) else {
                    return Err(DecodeError::NotAFunction);
                };
                let len = 2 + 2 * f.upvalue_count();
                if offset + len > code.len() {
                    return Err(DecodeError::Truncated(op));
                }
                (Operands::Closure(index), len)
            }
            OpCode::Nil
            | OpCode::True
            | OpCode::False
            | OpCode::Pop
            | OpCode::Equal
            | OpCode::Greater
            | OpCode::Less
            | OpCode::Add
            | OpCode::Subtract
            | OpCode::Multiply
            | OpCode::Divide
            | OpCode::Not
            | OpCode::Negate
            | OpCode::Print
            | OpCode::CloseUpvalue
            | OpCode::Return
            | OpCode::Inherit => (Operands::None, 1),
        };
        Ok(Instruction {
            op,
            offset,
            operands,
            len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_initializer_sets_properties_only_with_set_property() {
        let compiled = |src: &str| crate::compiler::compile(src).expect("compiles");
        let script = compiled("class A { init() { this.x = 1; } } class B { init() { print 1; } }");
        let inits: Vec<bool> = script
            .constants
            .iter()
            .filter_map(|c| match c {
                Constant::Function(f) => Some(f.sets_properties()),
                _ => None,
            })
            .collect();
        assert_eq!(inits, [true, false]);
        // Bytes that are no instruction: assume the worst.
        let mut bad = FunctionProto::default();
        bad.chunk.write(250, 1);
        assert!(bad.sets_properties());
    }

    #[test]
    fn decodes_each_operand_kind_and_reports_bad_code() {
        let mut f = FunctionProto::default();
        f.constants.push(Constant::Number(1.0));
        let c = &mut f.chunk;
        for b in [OpCode::Constant as u8, 0, OpCode::Loop as u8, 0, 3] {
            c.write(b, 1);
        }
        c.write_op(OpCode::Invoke, 1);
        c.write(0, 1);
        c.write(2, 1);
        let i = f.decode(0).unwrap();
        assert_eq!((i.operands, i.len), (Operands::Constant(0), 2));
        let j = f.decode(2).unwrap();
        assert_eq!((j.operands, j.len), (Operands::Jump(3), 3));
        assert_eq!(j.jump_target(), Some(2));
        let k = f.decode(5).unwrap();
        assert_eq!(k.operands, Operands::Invoke { name: 0, args: 2 });
        f.chunk.write(250, 1);
        assert_eq!(f.decode(8), Err(DecodeError::UnknownOpcode(250)));
        f.chunk.write_op(OpCode::Call, 1);
        assert_eq!(
            f.decode(f.chunk.len() - 1),
            Err(DecodeError::Truncated(OpCode::Call))
        );
        f.chunk.write_op(OpCode::Closure, 1);
        f.chunk.write(0, 1);
        assert_eq!(f.decode(f.chunk.len() - 2), Err(DecodeError::NotAFunction));
    }
}
