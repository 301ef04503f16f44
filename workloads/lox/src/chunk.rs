//! Bytecode: the instruction set ([`OpCode`]) and the [`Chunk`] that holds one function's code
//! and its line table. The constants the code names are not here but in the function's
//! prototype ([`FunctionProto::constants`](crate::function::FunctionProto::constants)), beside
//! the nested prototypes they can hold.
//!
//! The instruction set and encoding are clox's, plus `EQUAL_CONSTANT`, which the compiler emits
//! for `==` and `!=` whose right operand is a literal (`c == " "`, `d == 0`): one dispatch where
//! clox makes two, and a string literal's comparison settled by the strings' content hashes
//! without loading the literal; and `POP_JUMP_IF_FALSE`, which `if`, `while` and `for` branch
//! on: it pops the condition as it tests it, so that no `POP` follows on either path (clox
//! emits `JUMP_IF_FALSE` and a `POP` on each path; `and` and `or`, which keep the value, still
//! do); and `GET_LOCAL_PROPERTY`, a local's property (`p.x`, `this.x`): `GET_LOCAL` and
//! `GET_PROPERTY` in one; and `SET_LOCAL_POP`, `SET_PROPERTY_POP`, an assignment as a statement
//! (`i = i + 1;`, `this.x = x;`): the assignment and the statement's `POP` in one; and
//! `SUPER_INVOKE_UPVALUE`, a `super` call taking the superclass from the method's upvalue
//! (`GET_UPVALUE` and `SUPER_INVOKE` in one). Every instruction is one opcode byte followed by
//! zero or more operand bytes:
//!
//! | instruction | operands | effect (stack: before → after) |
//! |---|---|---|
//! | `CONSTANT` | const | → value of `constants[const]` |
//! | `NIL`, `TRUE`, `FALSE` | | → literal |
//! | `POP` | | value → |
//! | `GET_LOCAL` / `SET_LOCAL` | slot | → `frame[slot]` / value → value (stores into the slot) |
//! | `GET_GLOBAL` | const (name) | → global, or runtime error "Undefined variable 'x'." |
//! | `DEFINE_GLOBAL` | const (name) | value → (defines or redefines) |
//! | `SET_GLOBAL` | const (name) | value → value; "Undefined variable 'x'." if not defined |
//! | `GET_UPVALUE` / `SET_UPVALUE` | index | like locals, through the closure's upvalue |
//! | `GET_PROPERTY` | const (name) | instance → field, else bound method |
//! | `SET_PROPERTY` | const (name) | instance value → value |
//! | `SET_LOCAL_POP` / `SET_PROPERTY_POP` | slot / const (name) | as `SET_LOCAL` / `SET_PROPERTY`, then `POP` |
//! | `GET_LOCAL_PROPERTY` | const (name), slot | → property `name` of `frame[slot]` (`GET_LOCAL slot` then `GET_PROPERTY name`) |
//! | `GET_SUPER` | const (name) | this superclass → bound method |
//! | `EQUAL`, `GREATER`, `LESS` | | a b → bool |
//! | `EQUAL_CONSTANT` | const | a → bool (`a == constants[const]`: `CONSTANT` and `EQUAL` in one) |
//! | `ADD`, `SUBTRACT`, `MULTIPLY`, `DIVIDE` | | a b → result |
//! | `NOT`, `NEGATE` | | a → result |
//! | `PRINT` | | value → (prints it and a newline) |
//! | `JUMP` | hi lo | ip += offset |
//! | `JUMP_IF_FALSE` | hi lo | if top is falsey, ip += offset (does not pop) |
//! | `POP_JUMP_IF_FALSE` | hi lo | value → ; if it was falsey, ip += offset |
//! | `LOOP` | hi lo | ip -= offset |
//! | `CALL` | argc | callee args… → result |
//! | `INVOKE` | const (name), argc | receiver args… → result (method call without a bound method) |
//! | `SUPER_INVOKE` | const (name), argc | this args… superclass → result |
//! | `SUPER_INVOKE_UPVALUE` | const (name), argc, upvalue | this args… → result (the superclass is upvalue `upvalue`'s value) |
//! | `CLOSURE` | const (function), then per upvalue: is_local (0/1), index | → closure |
//! | `CLOSE_UPVALUE` | | value → (closes the upvalue pointing at the top slot) |
//! | `RETURN` | | result → (pops the frame) |
//! | `CLASS` | const (name) | → class |
//! | `INHERIT` | | superclass subclass → superclass (copies methods down) |
//! | `METHOD` | const (name) | class closure → class |
//!
//! Jump offsets are big-endian `u16`s counted from the byte after the operand. Constant, slot and
//! upvalue operands are single bytes, hence the 256-entry limits the compiler enforces.

/// One bytecode instruction's opcode. The discriminants are the encoded bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OpCode {
    Constant,
    Nil,
    True,
    False,
    Pop,
    GetLocal,
    SetLocal,
    GetGlobal,
    DefineGlobal,
    SetGlobal,
    GetUpvalue,
    SetUpvalue,
    GetProperty,
    SetProperty,
    GetSuper,
    Equal,
    Greater,
    Less,
    Add,
    Subtract,
    Multiply,
    Divide,
    Not,
    Negate,
    Print,
    Jump,
    JumpIfFalse,
    Loop,
    Call,
    Invoke,
    SuperInvoke,
    Closure,
    CloseUpvalue,
    Return,
    Class,
    Inherit,
    Method,
    EqualConstant,
    PopJumpIfFalse,
    GetLocalProperty,
    SetLocalPop,
    SetPropertyPop,
    SuperInvokeUpvalue,
}

impl OpCode {
    /// Every opcode, in encoding order (`ALL[b as usize] as u8 == b`).
    pub const ALL: [OpCode; 43] = [
        OpCode::Constant,
        OpCode::Nil,
        OpCode::True,
        OpCode::False,
        OpCode::Pop,
        OpCode::GetLocal,
        OpCode::SetLocal,
        OpCode::GetGlobal,
        OpCode::DefineGlobal,
        OpCode::SetGlobal,
        OpCode::GetUpvalue,
        OpCode::SetUpvalue,
        OpCode::GetProperty,
        OpCode::SetProperty,
        OpCode::GetSuper,
        OpCode::Equal,
        OpCode::Greater,
        OpCode::Less,
        OpCode::Add,
        OpCode::Subtract,
        OpCode::Multiply,
        OpCode::Divide,
        OpCode::Not,
        OpCode::Negate,
        OpCode::Print,
        OpCode::Jump,
        OpCode::JumpIfFalse,
        OpCode::Loop,
        OpCode::Call,
        OpCode::Invoke,
        OpCode::SuperInvoke,
        OpCode::Closure,
        OpCode::CloseUpvalue,
        OpCode::Return,
        OpCode::Class,
        OpCode::Inherit,
        OpCode::Method,
        OpCode::EqualConstant,
        OpCode::PopJumpIfFalse,
        OpCode::GetLocalProperty,
        OpCode::SetLocalPop,
        OpCode::SetPropertyPop,
        OpCode::SuperInvokeUpvalue,
    ];

    /// Decodes an opcode byte; `None` for bytes that are not opcodes.
    #[inline]
    pub fn from_byte(byte: u8) -> Option<OpCode> {
        OpCode::ALL.get(byte as usize).copied()
    }

    /// The clox name of the opcode, e.g. `"OP_GET_LOCAL"` (used by the disassembler).
    pub fn name(self) -> &'static str {
        match self {
            OpCode::Constant => "OP_CONSTANT",
            OpCode::Nil => "OP_NIL",
            OpCode::True => "OP_TRUE",
            OpCode::False => "OP_FALSE",
            OpCode::Pop => "OP_POP",
            OpCode::GetLocal => "OP_GET_LOCAL",
            OpCode::SetLocal => "OP_SET_LOCAL",
            OpCode::GetGlobal => "OP_GET_GLOBAL",
            OpCode::DefineGlobal => "OP_DEFINE_GLOBAL",
            OpCode::SetGlobal => "OP_SET_GLOBAL",
            OpCode::GetUpvalue => "OP_GET_UPVALUE",
            OpCode::SetUpvalue => "OP_SET_UPVALUE",
            OpCode::GetProperty => "OP_GET_PROPERTY",
            OpCode::SetProperty => "OP_SET_PROPERTY",
            OpCode::GetSuper => "OP_GET_SUPER",
            OpCode::Equal => "OP_EQUAL",
            OpCode::Greater => "OP_GREATER",
            OpCode::Less => "OP_LESS",
            OpCode::Add => "OP_ADD",
            OpCode::Subtract => "OP_SUBTRACT",
            OpCode::Multiply => "OP_MULTIPLY",
            OpCode::Divide => "OP_DIVIDE",
            OpCode::Not => "OP_NOT",
            OpCode::Negate => "OP_NEGATE",
            OpCode::Print => "OP_PRINT",
            OpCode::Jump => "OP_JUMP",
            OpCode::JumpIfFalse => "OP_JUMP_IF_FALSE",
            OpCode::Loop => "OP_LOOP",
            OpCode::Call => "OP_CALL",
            OpCode::Invoke => "OP_INVOKE",
            OpCode::SuperInvoke => "OP_SUPER_INVOKE",
            OpCode::Closure => "OP_CLOSURE",
            OpCode::CloseUpvalue => "OP_CLOSE_UPVALUE",
            OpCode::Return => "OP_RETURN",
            OpCode::Class => "OP_CLASS",
            OpCode::Inherit => "OP_INHERIT",
            OpCode::Method => "OP_METHOD",
            OpCode::EqualConstant => "OP_EQUAL_CONSTANT",
            OpCode::PopJumpIfFalse => "OP_POP_JUMP_IF_FALSE",
            OpCode::GetLocalProperty => "OP_GET_LOCAL_PROPERTY",
            OpCode::SetLocalPop => "OP_SET_LOCAL_POP",
            OpCode::SetPropertyPop => "OP_SET_PROPERTY_POP",
            OpCode::SuperInvokeUpvalue => "OP_SUPER_INVOKE_UPVALUE",
        }
    }
}

impl From<OpCode> for u8 {
    #[inline]
    fn from(op: OpCode) -> u8 {
        op as u8
    }
}

impl TryFrom<u8> for OpCode {
    type Error = u8;

    /// Decodes an opcode byte, returning the byte itself as the error when it is not an opcode.
    fn try_from(byte: u8) -> Result<OpCode, u8> {
        OpCode::from_byte(byte).ok_or(byte)
    }
}

/// The bytecode of one function: instructions and the source line of each byte.
///
/// Invariant: `lines.len() == code.len()` (`lines[i]` is the line of `code[i]`), which holds as
/// long as bytes are appended with [`Chunk::write`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chunk {
    /// Encoded instructions (see the [module documentation](self) for the encoding).
    pub code: Vec<u8>,
    /// `lines[i]` is the source line that produced `code[i]`; runtime errors report the line of
    /// the failing instruction's opcode byte.
    pub lines: Vec<u32>,
}

impl Chunk {
    /// An empty chunk.
    pub fn new() -> Self {
        Chunk::default()
    }

    /// Appends one byte produced by source line `line`.
    pub fn write(&mut self, byte: u8, line: u32) {
        self.code.push(byte);
        self.lines.push(line);
    }

    /// Appends an opcode produced by source line `line`.
    pub fn write_op(&mut self, op: OpCode, line: u32) {
        self.write(op as u8, line);
    }

    /// Number of code bytes.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Whether the chunk has no code.
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }

    /// Reads the big-endian 16-bit operand at `offset` (a jump or loop distance).
    #[inline]
    pub fn read_u16(&self, offset: usize) -> u16 {
        u16::from_be_bytes([self.code[offset], self.code[offset + 1]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_bytes_round_trip() {
        for (i, op) in OpCode::ALL.iter().enumerate() {
            assert_eq!(*op as u8 as usize, i);
            assert_eq!(OpCode::from_byte(i as u8), Some(*op));
            assert_eq!(OpCode::try_from(i as u8), Ok(*op));
            assert!(op.name().starts_with("OP_"));
        }
        assert_eq!(OpCode::from_byte(OpCode::ALL.len() as u8), None);
        assert_eq!(OpCode::try_from(255), Err(255));
    }

    #[test]
    fn chunk_writes_code_and_lines_together() {
        let mut chunk = Chunk::new();
        assert!(chunk.is_empty());
        chunk.write_op(OpCode::Jump, 3);
        chunk.write(0x01, 3);
        chunk.write(0x02, 4);
        assert_eq!(chunk.code, vec![OpCode::Jump as u8, 1, 2]);
        assert_eq!(chunk.lines, vec![3, 3, 4]);
        assert_eq!(chunk.read_u16(1), 0x0102);
        assert_eq!(chunk.len(), 3);
    }
}
