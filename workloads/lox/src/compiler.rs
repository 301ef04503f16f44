//! The single-pass compiler: a Pratt parser that emits bytecode while it parses, like clox's
//! `compiler.c`.
//!
//! [`compile`] pulls tokens from the [scanner](crate::scanner) and writes each function's
//! instructions straight into its [`Chunk`]; there is no syntax tree. Variables are resolved at
//! compile time: locals to stack slots, captured variables of enclosing functions to upvalue
//! indices (marking the captured local so its scope exit emits `CLOSE_UPVALUE` instead of `POP`),
//! everything else to globals by name. Classes compile to `CLASS`, then `METHOD` per method;
//! a superclass is kept in a hidden local named `super` that methods capture as an upvalue.
//!
//! Unlike clox, the compiler allocates nothing in the garbage-collected heap: it returns a tree
//! of [`FunctionProto`]s (see [`crate::function`]).
//!
//! Errors are clox's, message for message, with its limits (256 constants, 256 locals and 256
//! upvalues per function, 255 parameters and arguments, 16-bit jumps). After an error the
//! parser enters panic mode, suppressing further errors until it resynchronizes at a statement
//! boundary, so one compilation can report several independent errors.
//!
//! One limit is not clox's: the parser recurses once per nested expression, statement and
//! function, so nesting deeper than [`MAX_NESTING`] levels (e.g. `((((1))))` or `{{{{}}}}` that
//! deep, or that many unary operators in a row) is the compile error "Too much nesting." at the
//! token that opens the level too many, instead of overflowing the Rust stack. That error ends
//! the compilation: nothing after it is parsed, so it is the last error reported.

use crate::chunk::{Chunk, OpCode};
use crate::error::{CompileError, CompileErrors, ErrorLocation};
use crate::function::{Constant, FunctionProto, UpvalueCapture};
use crate::scanner::Scanner;
use crate::token::{Token, TokenKind};
use std::sync::Arc;

/// Locals, upvalues and constants are addressed by one byte.
const UINT8_COUNT: usize = 256;

/// Deepest nesting the parser accepts: expressions (one level per operand of an operator,
/// parenthesis, unary operator, call argument or assigned value), statements (blocks, bodies of
/// `if`, `while` and `for`) and function bodies, counted together. Every recursion of the parser
/// passes through one of those three, so this bounds its stack use (a few hundred bytes per
/// level, also in debug builds and on 2 MiB threads).
pub const MAX_NESTING: usize = 256;

/// Compiles a whole Lox program into the prototype of its top-level script.
///
/// On failure, returns every error reported (see [`crate::error`]); print them with
/// `eprint!("{errors}")` and exit with status 65.
pub fn compile(source: &str) -> Result<FunctionProto, CompileErrors> {
    let mut parser = Parser::new(source);
    parser.begin_function(FunctionKind::Script);
    parser.advance();
    while !parser.matches(TokenKind::Eof) {
        parser.declaration();
    }
    let script = parser.end_function();
    if parser.errors.is_empty() {
        Ok(script)
    } else {
        Err(CompileErrors(parser.errors))
    }
}

/// Binding power of infix operators, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Precedence {
    None,
    Assignment, // =
    Or,         // or
    And,        // and
    Equality,   // == !=
    Comparison, // < > <= >=
    Term,       // + -
    Factor,     // * /
    Unary,      // ! -
    Call,       // . ()
    Primary,
}

impl Precedence {
    /// The next-higher precedence (for left-associative binary operators).
    fn next(self) -> Precedence {
        match self {
            Precedence::None => Precedence::Assignment,
            Precedence::Assignment => Precedence::Or,
            Precedence::Or => Precedence::And,
            Precedence::And => Precedence::Equality,
            Precedence::Equality => Precedence::Comparison,
            Precedence::Comparison => Precedence::Term,
            Precedence::Term => Precedence::Factor,
            Precedence::Factor => Precedence::Unary,
            Precedence::Unary => Precedence::Call,
            Precedence::Call | Precedence::Primary => Precedence::Primary,
        }
    }
}

/// A prefix or infix parse function; the flag says whether an `=` may follow (assignment).
type ParseFn<'src> = fn(&mut Parser<'src>, bool);

/// A row of the Pratt table.
struct ParseRule<'src> {
    prefix: Option<ParseFn<'src>>,
    infix: Option<ParseFn<'src>>,
    precedence: Precedence,
}

/// What kind of function is being compiled; decides slot 0's name and what `return` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FunctionKind {
    Function,
    Initializer,
    Method,
    Script,
}

/// A local variable in scope during compilation.
#[derive(Clone, Copy, Debug)]
struct Local<'src> {
    name: &'src str,
    /// Scope depth, or `None` while the variable's initializer is being compiled.
    depth: Option<u32>,
    /// Whether a closure captures it (its scope exit then emits `CLOSE_UPVALUE`).
    is_captured: bool,
}

/// Compilation state of one function (clox's `Compiler` struct); they form a stack.
struct FunctionState<'src> {
    kind: FunctionKind,
    name: Option<String>,
    /// Counted beyond 255 so the error is reported once, like clox's `int arity`.
    arity: usize,
    chunk: Chunk,
    /// The constant pool (see [`FunctionProto::constants`]).
    constants: Vec<Constant>,
    locals: Vec<Local<'src>>,
    upvalues: Vec<UpvalueCapture>,
    scope_depth: u32,
    /// The offset of the last `GET_LOCAL` a variable read emitted, for `dot` to fuse with the
    /// `GET_PROPERTY` after it.
    last_get_local: Option<usize>,
    /// The offset the last patched forward jump lands on: no instruction may be fused across
    /// it.
    last_jump_target: Option<usize>,
    /// The offset of the last `SET_LOCAL` or `SET_PROPERTY` an assignment emitted, for a
    /// statement's `POP` to fuse with.
    last_set: Option<usize>,
}

/// Compilation state of one class body (clox's `ClassCompiler`).
struct ClassState {
    has_superclass: bool,
}

struct Parser<'src> {
    scanner: Scanner<'src>,
    current: Token<'src>,
    previous: Token<'src>,
    panic_mode: bool,
    errors: Vec<CompileError>,
    /// Enclosing functions, innermost last (never empty while compiling).
    functions: Vec<FunctionState<'src>>,
    /// Enclosing class bodies, innermost last.
    classes: Vec<ClassState>,
    /// Current nesting (see [`MAX_NESTING`]).
    nesting: usize,
    /// Set by "Too much nesting.": the rest of the source is skipped and no further error is
    /// reported.
    aborted: bool,
}

impl<'src> Parser<'src> {
    fn new(source: &'src str) -> Self {
        let placeholder = Token {
            kind: TokenKind::Eof,
            lexeme: "",
            line: 1,
        };
        Parser {
            scanner: Scanner::new(source),
            current: placeholder,
            previous: placeholder,
            panic_mode: false,
            errors: Vec::new(),
            functions: Vec::new(),
            classes: Vec::new(),
            nesting: 0,
            aborted: false,
        }
    }

    /// Enters one more level of nesting. At [`MAX_NESTING`] it reports "Too much nesting." at the
    /// current token, skips the rest of the source and returns false: the caller then returns
    /// without parsing (and without calling [`Parser::leave`]).
    fn enter(&mut self) -> bool {
        if self.aborted {
            return false;
        }
        if self.nesting == MAX_NESTING {
            self.panic_mode = false;
            self.error_at_current("Too much nesting.");
            self.aborted = true;
            while self.current.kind != TokenKind::Eof {
                self.advance();
            }
            return false;
        }
        self.nesting += 1;
        true
    }

    /// Leaves a level entered with [`Parser::enter`].
    fn leave(&mut self) {
        self.nesting -= 1;
    }

    // ----- Errors -----

    fn error_at(&mut self, token: Token<'src>, message: &str) {
        if self.panic_mode || self.aborted {
            return;
        }
        self.panic_mode = true;
        let location = match token.kind {
            TokenKind::Eof => ErrorLocation::End,
            TokenKind::Error => ErrorLocation::Scanner,
            _ => ErrorLocation::Token(token.lexeme.to_string()),
        };
        self.errors.push(CompileError {
            line: token.line,
            location,
            message: message.to_string(),
        });
    }

    /// Reports an error at the token just consumed.
    fn error(&mut self, message: &str) {
        self.error_at(self.previous, message);
    }

    /// Reports an error at the token about to be consumed.
    fn error_at_current(&mut self, message: &str) {
        self.error_at(self.current, message);
    }

    // ----- Token stream -----

    fn advance(&mut self) {
        self.previous = self.current;
        loop {
            self.current = self.scanner.scan_token();
            if self.current.kind != TokenKind::Error {
                break;
            }
            let message = self.current.lexeme;
            self.error_at_current(message);
        }
    }

    fn consume(&mut self, kind: TokenKind, message: &str) {
        if self.current.kind == kind {
            self.advance();
        } else {
            self.error_at_current(message);
        }
    }

    fn check(&self, kind: TokenKind) -> bool {
        self.current.kind == kind
    }

    fn matches(&mut self, kind: TokenKind) -> bool {
        if !self.check(kind) {
            return false;
        }
        self.advance();
        true
    }

    // ----- Emitting code -----

    fn function(&mut self) -> &mut FunctionState<'src> {
        self.functions
            .last_mut()
            .expect("a function is being compiled")
    }

    fn chunk(&mut self) -> &mut Chunk {
        &mut self.function().chunk
    }

    fn emit_byte(&mut self, byte: u8) {
        let line = self.previous.line;
        self.chunk().write(byte, line);
    }

    fn emit_op(&mut self, op: OpCode) {
        self.emit_byte(op as u8);
    }

    fn emit_op_byte(&mut self, op: OpCode, operand: u8) {
        self.emit_op(op);
        self.emit_byte(operand);
    }

    fn emit_loop(&mut self, loop_start: usize) {
        self.emit_op(OpCode::Loop);
        // +2 for the operand itself.
        let offset = self.chunk().len() - loop_start + 2;
        if offset > u16::MAX as usize {
            self.error("Loop body too large.");
        }
        self.emit_byte(((offset >> 8) & 0xff) as u8);
        self.emit_byte((offset & 0xff) as u8);
    }

    /// Emits a forward jump with a placeholder offset; returns the operand's position.
    fn emit_jump(&mut self, op: OpCode) -> usize {
        self.emit_op(op);
        self.emit_byte(0xff);
        self.emit_byte(0xff);
        self.chunk().len() - 2
    }

    /// Points the jump whose operand is at `offset` to the next instruction emitted.
    fn patch_jump(&mut self, offset: usize) {
        // -2 for the operand itself.
        let jump = self.chunk().len() - offset - 2;
        if jump > u16::MAX as usize {
            self.error("Too much code to jump over.");
        }
        let target = self.chunk().len();
        self.function().last_jump_target = Some(target);
        let code = &mut self.chunk().code;
        code[offset] = ((jump >> 8) & 0xff) as u8;
        code[offset + 1] = (jump & 0xff) as u8;
    }

    fn emit_return(&mut self) {
        if self.function().kind == FunctionKind::Initializer {
            self.emit_op_byte(OpCode::GetLocal, 0);
        } else {
            self.emit_op(OpCode::Nil);
        }
        self.emit_op(OpCode::Return);
    }

    /// Adds a constant to the function's pool (not deduplicated, as in clox) and returns its
    /// index, or reports "Too many constants in one chunk." past the 256 a byte addresses.
    fn make_constant(&mut self, constant: Constant) -> u8 {
        let constants = &mut self.function().constants;
        constants.push(constant);
        let index = constants.len() - 1;
        if index >= UINT8_COUNT {
            self.error("Too many constants in one chunk.");
            return 0;
        }
        index as u8
    }

    fn emit_constant(&mut self, constant: Constant) {
        let index = self.make_constant(constant);
        self.emit_op_byte(OpCode::Constant, index);
    }

    // ----- Functions and scopes -----

    /// Starts compiling a new function; for anything but the script, its name is the token just
    /// consumed.
    fn begin_function(&mut self, kind: FunctionKind) {
        let name = (kind != FunctionKind::Script).then(|| self.previous.lexeme.to_string());
        // Slot 0 holds the receiver in methods (named `this`) and the callee otherwise (unnamed,
        // so no user variable can resolve to it).
        let slot_zero = Local {
            name: if kind == FunctionKind::Function {
                ""
            } else {
                "this"
            },
            depth: Some(0),
            is_captured: false,
        };
        self.functions.push(FunctionState {
            kind,
            name,
            arity: 0,
            chunk: Chunk::new(),
            constants: Vec::new(),
            locals: vec![slot_zero],
            upvalues: Vec::new(),
            scope_depth: 0,
            last_get_local: None,
            last_jump_target: None,
            last_set: None,
        });
    }

    /// Finishes the innermost function and returns its prototype.
    fn end_function(&mut self) -> FunctionProto {
        self.emit_return();
        let state = self.functions.pop().expect("a function is being compiled");
        FunctionProto {
            name: state.name,
            arity: state.arity.min(u8::MAX as usize) as u8,
            upvalues: state.upvalues,
            chunk: state.chunk,
            constants: state.constants,
        }
    }

    fn begin_scope(&mut self) {
        self.function().scope_depth += 1;
    }

    fn end_scope(&mut self) {
        self.function().scope_depth -= 1;
        loop {
            let function = self.function();
            let Some(local) = function.locals.last() else {
                break;
            };
            // Stop at the first local of an enclosing scope (or one still uninitialized).
            match local.depth {
                Some(depth) if depth > function.scope_depth => {}
                _ => break,
            }
            let op = if local.is_captured {
                OpCode::CloseUpvalue
            } else {
                OpCode::Pop
            };
            self.emit_op(op);
            self.function().locals.pop();
        }
    }

    // ----- Variables -----

    fn identifier_constant(&mut self, name: &str) -> u8 {
        self.make_constant(Constant::String(name.to_string()))
    }

    /// Resolves `name` to a local slot of function `depth` (an index into `functions`).
    fn resolve_local(&mut self, depth: usize, name: &str) -> Option<u8> {
        let (slot, initialized) = self.functions[depth]
            .locals
            .iter()
            .enumerate()
            .rev()
            .find(|(_, local)| local.name == name)
            .map(|(slot, local)| (slot, local.depth.is_some()))?;
        if !initialized {
            self.error("Can't read local variable in its own initializer.");
        }
        Some(slot as u8)
    }

    /// Records that function `depth` captures `index` (a local of the enclosing function when
    /// `is_local`, else one of its upvalues); returns the upvalue index.
    fn add_upvalue(&mut self, depth: usize, index: u8, is_local: bool) -> u8 {
        let capture = UpvalueCapture { is_local, index };
        let upvalues = &self.functions[depth].upvalues;
        if let Some(existing) = upvalues.iter().position(|u| *u == capture) {
            return existing as u8;
        }
        if upvalues.len() == UINT8_COUNT {
            self.error("Too many closure variables in function.");
            return 0;
        }
        self.functions[depth].upvalues.push(capture);
        (self.functions[depth].upvalues.len() - 1) as u8
    }

    /// Resolves `name` to an upvalue of function `depth`, adding upvalues along the chain of
    /// enclosing functions as needed.
    fn resolve_upvalue(&mut self, depth: usize, name: &str) -> Option<u8> {
        if depth == 0 {
            return None;
        }
        if let Some(local) = self.resolve_local(depth - 1, name) {
            self.functions[depth - 1].locals[local as usize].is_captured = true;
            return Some(self.add_upvalue(depth, local, true));
        }
        let upvalue = self.resolve_upvalue(depth - 1, name)?;
        Some(self.add_upvalue(depth, upvalue, false))
    }

    fn add_local(&mut self, name: &'src str) {
        if self.function().locals.len() == UINT8_COUNT {
            self.error("Too many local variables in function.");
            return;
        }
        self.function().locals.push(Local {
            name,
            depth: None,
            is_captured: false,
        });
    }

    /// Declares the variable named by the token just consumed (locals only).
    fn declare_variable(&mut self) {
        let name = self.previous.lexeme;
        let function = self.function();
        if function.scope_depth == 0 {
            return;
        }
        let scope_depth = function.scope_depth;
        // Only the innermost scope's locals (and uninitialized ones) can clash.
        let duplicate = function
            .locals
            .iter()
            .rev()
            .take_while(|local| match local.depth {
                Some(depth) => depth >= scope_depth,
                None => true,
            })
            .any(|local| local.name == name);
        if duplicate {
            self.error("Already a variable with this name in this scope.");
        }
        self.add_local(name);
    }

    /// Consumes a variable name; returns its name constant for a global, 0 for a local.
    fn parse_variable(&mut self, message: &str) -> u8 {
        self.consume(TokenKind::Identifier, message);
        self.declare_variable();
        if self.function().scope_depth > 0 {
            return 0;
        }
        self.identifier_constant(self.previous.lexeme)
    }

    fn mark_initialized(&mut self) {
        let function = self.function();
        if function.scope_depth == 0 {
            return;
        }
        let depth = function.scope_depth;
        if let Some(local) = function.locals.last_mut() {
            local.depth = Some(depth);
        }
    }

    fn define_variable(&mut self, global: u8) {
        if self.function().scope_depth > 0 {
            self.mark_initialized();
            return;
        }
        self.emit_op_byte(OpCode::DefineGlobal, global);
    }

    fn named_variable(&mut self, name: &'src str, can_assign: bool) {
        let depth = self.functions.len() - 1;
        let (get_op, set_op, arg) = if let Some(slot) = self.resolve_local(depth, name) {
            (OpCode::GetLocal, OpCode::SetLocal, slot)
        } else if let Some(index) = self.resolve_upvalue(depth, name) {
            (OpCode::GetUpvalue, OpCode::SetUpvalue, index)
        } else {
            let constant = self.identifier_constant(name);
            (OpCode::GetGlobal, OpCode::SetGlobal, constant)
        };
        if can_assign && self.matches(TokenKind::Equal) {
            self.expression();
            let at = self.chunk().len();
            self.emit_op_byte(set_op, arg);
            if set_op == OpCode::SetLocal {
                self.function().last_set = Some(at);
            }
        } else {
            let at = self.chunk().len();
            self.emit_op_byte(get_op, arg);
            if get_op == OpCode::GetLocal {
                self.function().last_get_local = Some(at);
            }
        }
    }

    fn argument_list(&mut self) -> u8 {
        let mut count: usize = 0;
        if !self.check(TokenKind::RightParen) {
            loop {
                self.expression();
                if count == 255 {
                    self.error("Can't have more than 255 arguments.");
                }
                count += 1;
                if !self.matches(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.consume(TokenKind::RightParen, "Expect ')' after arguments.");
        count.min(255) as u8
    }

    // ----- Expressions -----

    fn rule(kind: TokenKind) -> ParseRule<'src> {
        use Precedence as P;
        use TokenKind as T;
        let (prefix, infix, precedence): (Option<ParseFn<'src>>, Option<ParseFn<'src>>, _) =
            match kind {
                T::LeftParen => (Some(Self::grouping), Some(Self::call), P::Call),
                T::Dot => (None, Some(Self::dot), P::Call),
                T::Minus => (Some(Self::unary), Some(Self::binary), P::Term),
                T::Plus => (None, Some(Self::binary), P::Term),
                T::Slash | T::Star => (None, Some(Self::binary), P::Factor),
                T::Bang => (Some(Self::unary), None, P::None),
                T::BangEqual | T::EqualEqual => (None, Some(Self::binary), P::Equality),
                T::Greater | T::GreaterEqual | T::Less | T::LessEqual => {
                    (None, Some(Self::binary), P::Comparison)
                }
                T::Identifier => (Some(Self::variable), None, P::None),
                T::String => (Some(Self::string), None, P::None),
                T::Number => (Some(Self::number), None, P::None),
                T::And => (None, Some(Self::and), P::And),
                T::Or => (None, Some(Self::or), P::Or),
                T::False | T::Nil | T::True => (Some(Self::literal), None, P::None),
                T::Super => (Some(Self::super_), None, P::None),
                T::This => (Some(Self::this), None, P::None),
                _ => (None, None, P::None),
            };
        ParseRule {
            prefix,
            infix,
            precedence,
        }
    }

    fn parse_precedence(&mut self, precedence: Precedence) {
        if !self.enter() {
            return;
        }
        self.parse_precedence_here(precedence);
        self.leave();
    }

    fn parse_precedence_here(&mut self, precedence: Precedence) {
        self.advance();
        let Some(prefix) = Self::rule(self.previous.kind).prefix else {
            self.error("Expect expression.");
            return;
        };
        let can_assign = precedence <= Precedence::Assignment;
        prefix(self, can_assign);
        while precedence <= Self::rule(self.current.kind).precedence {
            self.advance();
            let infix = Self::rule(self.previous.kind)
                .infix
                .expect("tokens with a precedence have an infix rule");
            infix(self, can_assign);
        }
        if can_assign && self.matches(TokenKind::Equal) {
            self.error("Invalid assignment target.");
        }
    }

    fn expression(&mut self) {
        self.parse_precedence(Precedence::Assignment);
    }

    fn number(&mut self, _can_assign: bool) {
        let value: f64 = self
            .previous
            .lexeme
            .parse()
            .expect("number lexemes are decimal literals");
        self.emit_constant(Constant::Number(value));
    }

    fn string(&mut self, _can_assign: bool) {
        let lexeme = self.previous.lexeme;
        let contents = &lexeme[1..lexeme.len() - 1];
        self.emit_constant(Constant::String(contents.to_string()));
    }

    fn literal(&mut self, _can_assign: bool) {
        match self.previous.kind {
            TokenKind::False => self.emit_op(OpCode::False),
            TokenKind::Nil => self.emit_op(OpCode::Nil),
            TokenKind::True => self.emit_op(OpCode::True),
            _ => unreachable!("literal rule on a non-literal token"),
        }
    }

    fn grouping(&mut self, _can_assign: bool) {
        self.expression();
        self.consume(TokenKind::RightParen, "Expect ')' after expression.");
    }

    fn unary(&mut self, _can_assign: bool) {
        let operator = self.previous.kind;
        self.parse_precedence(Precedence::Unary);
        match operator {
            TokenKind::Bang => self.emit_op(OpCode::Not),
            TokenKind::Minus => self.emit_op(OpCode::Negate),
            _ => unreachable!("unary rule on a non-unary token"),
        }
    }

    fn binary(&mut self, _can_assign: bool) {
        let operator = self.previous.kind;
        let right = self.chunk().len();
        self.parse_precedence(Self::rule(operator).precedence.next());
        match operator {
            TokenKind::BangEqual => {
                self.emit_equal(right);
                self.emit_op(OpCode::Not);
            }
            TokenKind::EqualEqual => self.emit_equal(right),
            TokenKind::Greater => self.emit_op(OpCode::Greater),
            TokenKind::GreaterEqual => {
                self.emit_op(OpCode::Less);
                self.emit_op(OpCode::Not);
            }
            TokenKind::Less => self.emit_op(OpCode::Less),
            TokenKind::LessEqual => {
                self.emit_op(OpCode::Greater);
                self.emit_op(OpCode::Not);
            }
            TokenKind::Plus => self.emit_op(OpCode::Add),
            TokenKind::Minus => self.emit_op(OpCode::Subtract),
            TokenKind::Star => self.emit_op(OpCode::Multiply),
            TokenKind::Slash => self.emit_op(OpCode::Divide),
            _ => unreachable!("binary rule on a non-binary token"),
        }
    }

    /// Emits the comparison of the two operands of `==` whose right one starts at code offset
    /// `right`: `EQUAL`, or, where the right operand is one `CONSTANT` (a literal), that
    /// instruction turned into an `EQUAL_CONSTANT` of the same constant. No jump lands inside a
    /// one-instruction operand; one landing at its start (the end of an `and` or `or` on the
    /// left) now finds the left value compared there, as `CONSTANT` and `EQUAL` did.
    fn emit_equal(&mut self, right: usize) {
        let code = &mut self.chunk().code;
        if code.len() == right + 2 && code[right] == OpCode::Constant as u8 {
            code[right] = OpCode::EqualConstant as u8;
        } else {
            self.emit_op(OpCode::Equal);
        }
    }

    fn and(&mut self, _can_assign: bool) {
        let end_jump = self.emit_jump(OpCode::JumpIfFalse);
        self.emit_op(OpCode::Pop);
        self.parse_precedence(Precedence::And);
        self.patch_jump(end_jump);
    }

    fn or(&mut self, _can_assign: bool) {
        let else_jump = self.emit_jump(OpCode::JumpIfFalse);
        let end_jump = self.emit_jump(OpCode::Jump);
        self.patch_jump(else_jump);
        self.emit_op(OpCode::Pop);
        self.parse_precedence(Precedence::Or);
        self.patch_jump(end_jump);
    }

    fn variable(&mut self, can_assign: bool) {
        self.named_variable(self.previous.lexeme, can_assign);
    }

    fn call(&mut self, _can_assign: bool) {
        let count = self.argument_list();
        self.emit_op_byte(OpCode::Call, count);
    }

    fn dot(&mut self, can_assign: bool) {
        self.consume(TokenKind::Identifier, "Expect property name after '.'.");
        let name = self.identifier_constant(self.previous.lexeme);
        if can_assign && self.matches(TokenKind::Equal) {
            self.expression();
            let at = self.chunk().len();
            self.emit_op_byte(OpCode::SetProperty, name);
            self.function().last_set = Some(at);
        } else if self.matches(TokenKind::LeftParen) {
            let count = self.argument_list();
            self.emit_op_byte(OpCode::Invoke, name);
            self.emit_byte(count);
        } else {
            self.emit_get_property(name);
        }
    }

    /// Emits `GET_PROPERTY name`, or, where the object is a local read just before (the code
    /// ends with the variable's `GET_LOCAL` and no jump lands after it, as one would at the
    /// end of `(a and b)`), turns that `GET_LOCAL slot` into `GET_LOCAL_PROPERTY name slot`.
    fn emit_get_property(&mut self, name: u8) {
        let len = self.chunk().len();
        let function = self.function();
        let fuse = len >= 2
            && function.last_get_local == Some(len - 2)
            && function.last_jump_target != Some(len);
        if fuse {
            function.last_get_local = None;
            let code = &mut self.chunk().code;
            debug_assert_eq!(code[len - 2], OpCode::GetLocal as u8);
            let slot = code[len - 1];
            code[len - 2] = OpCode::GetLocalProperty as u8;
            code[len - 1] = name;
            self.emit_byte(slot);
        } else {
            self.emit_op_byte(OpCode::GetProperty, name);
        }
    }

    fn this(&mut self, _can_assign: bool) {
        if self.classes.is_empty() {
            self.error("Can't use 'this' outside of a class.");
            return;
        }
        self.variable(false);
    }

    fn super_(&mut self, _can_assign: bool) {
        match self.classes.last().map(|class| class.has_superclass) {
            None => self.error("Can't use 'super' outside of a class."),
            Some(false) => self.error("Can't use 'super' in a class with no superclass."),
            Some(true) => {}
        }
        self.consume(TokenKind::Dot, "Expect '.' after 'super'.");
        self.consume(TokenKind::Identifier, "Expect superclass method name.");
        let name = self.identifier_constant(self.previous.lexeme);
        self.named_variable("this", false);
        if self.matches(TokenKind::LeftParen) {
            let count = self.argument_list();
            // In a method (where the compiler allows `super`), `super` is an upvalue: the
            // call reads it itself.
            let depth = self.functions.len() - 1;
            let upvalue = match self.resolve_local(depth, "super") {
                Some(_) => None,
                None => self.resolve_upvalue(depth, "super"),
            };
            match upvalue {
                Some(index) => {
                    self.emit_op_byte(OpCode::SuperInvokeUpvalue, name);
                    self.emit_byte(count);
                    self.emit_byte(index);
                }
                None => {
                    self.named_variable("super", false);
                    self.emit_op_byte(OpCode::SuperInvoke, name);
                    self.emit_byte(count);
                }
            }
        } else {
            self.named_variable("super", false);
            self.emit_op_byte(OpCode::GetSuper, name);
        }
    }

    // ----- Declarations and statements -----

    fn declaration(&mut self) {
        if self.matches(TokenKind::Class) {
            self.class_declaration();
        } else if self.matches(TokenKind::Fun) {
            self.fun_declaration();
        } else if self.matches(TokenKind::Var) {
            self.var_declaration();
        } else {
            self.statement();
        }
        if self.panic_mode {
            self.synchronize();
        }
    }

    /// Leaves panic mode and skips tokens up to a likely statement boundary.
    fn synchronize(&mut self) {
        self.panic_mode = false;
        while self.current.kind != TokenKind::Eof {
            if self.previous.kind == TokenKind::Semicolon {
                return;
            }
            match self.current.kind {
                TokenKind::Class
                | TokenKind::Fun
                | TokenKind::Var
                | TokenKind::For
                | TokenKind::If
                | TokenKind::While
                | TokenKind::Print
                | TokenKind::Return => return,
                _ => self.advance(),
            }
        }
    }

    fn class_declaration(&mut self) {
        self.consume(TokenKind::Identifier, "Expect class name.");
        let class_name = self.previous.lexeme;
        let name_constant = self.identifier_constant(class_name);
        self.declare_variable();
        self.emit_op_byte(OpCode::Class, name_constant);
        self.define_variable(name_constant);

        self.classes.push(ClassState {
            has_superclass: false,
        });
        if self.matches(TokenKind::Less) {
            self.consume(TokenKind::Identifier, "Expect superclass name.");
            self.variable(false);
            if class_name == self.previous.lexeme {
                self.error("A class can't inherit from itself.");
            }
            self.begin_scope();
            self.add_local("super");
            self.define_variable(0);
            self.named_variable(class_name, false);
            self.emit_op(OpCode::Inherit);
            self.classes
                .last_mut()
                .expect("inside a class")
                .has_superclass = true;
        }

        self.named_variable(class_name, false);
        self.consume(TokenKind::LeftBrace, "Expect '{' before class body.");
        while !self.check(TokenKind::RightBrace) && !self.check(TokenKind::Eof) {
            self.method();
        }
        self.consume(TokenKind::RightBrace, "Expect '}' after class body.");
        self.emit_op(OpCode::Pop);

        let class = self.classes.pop().expect("inside a class");
        if class.has_superclass {
            self.end_scope();
        }
    }

    fn method(&mut self) {
        self.consume(TokenKind::Identifier, "Expect method name.");
        let name = self.identifier_constant(self.previous.lexeme);
        let kind = if self.previous.lexeme == "init" {
            FunctionKind::Initializer
        } else {
            FunctionKind::Method
        };
        self.function_body(kind);
        self.emit_op_byte(OpCode::Method, name);
    }

    fn fun_declaration(&mut self) {
        let global = self.parse_variable("Expect function name.");
        // A function may refer to itself (recursion) even as a local.
        self.mark_initialized();
        self.function_body(FunctionKind::Function);
        self.define_variable(global);
    }

    /// Compiles parameters and body of a function whose name was just consumed, then emits the
    /// `CLOSURE` that creates it in the enclosing function.
    fn function_body(&mut self, kind: FunctionKind) {
        if !self.enter() {
            return;
        }
        self.function_body_here(kind);
        self.leave();
    }

    fn function_body_here(&mut self, kind: FunctionKind) {
        self.begin_function(kind);
        self.begin_scope();

        self.consume(TokenKind::LeftParen, "Expect '(' after function name.");
        if !self.check(TokenKind::RightParen) {
            loop {
                self.function().arity += 1;
                if self.function().arity > 255 {
                    self.error_at_current("Can't have more than 255 parameters.");
                }
                let constant = self.parse_variable("Expect parameter name.");
                self.define_variable(constant);
                if !self.matches(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.consume(TokenKind::RightParen, "Expect ')' after parameters.");
        self.consume(TokenKind::LeftBrace, "Expect '{' before function body.");
        self.block();

        let function = self.end_function();
        let upvalues = function.upvalues.clone();
        let constant = self.make_constant(Constant::Function(Arc::new(function)));
        self.emit_op_byte(OpCode::Closure, constant);
        for upvalue in upvalues {
            self.emit_byte(u8::from(upvalue.is_local));
            self.emit_byte(upvalue.index);
        }
    }

    fn var_declaration(&mut self) {
        let global = self.parse_variable("Expect variable name.");
        if self.matches(TokenKind::Equal) {
            self.expression();
        } else {
            self.emit_op(OpCode::Nil);
        }
        self.consume(
            TokenKind::Semicolon,
            "Expect ';' after variable declaration.",
        );
        self.define_variable(global);
    }

    fn statement(&mut self) {
        if !self.enter() {
            return;
        }
        self.statement_here();
        self.leave();
    }

    fn statement_here(&mut self) {
        if self.matches(TokenKind::Print) {
            self.print_statement();
        } else if self.matches(TokenKind::For) {
            self.for_statement();
        } else if self.matches(TokenKind::If) {
            self.if_statement();
        } else if self.matches(TokenKind::Return) {
            self.return_statement();
        } else if self.matches(TokenKind::While) {
            self.while_statement();
        } else if self.matches(TokenKind::LeftBrace) {
            self.begin_scope();
            self.block();
            self.end_scope();
        } else {
            self.expression_statement();
        }
    }

    fn block(&mut self) {
        while !self.check(TokenKind::RightBrace) && !self.check(TokenKind::Eof) {
            self.declaration();
        }
        self.consume(TokenKind::RightBrace, "Expect '}' after block.");
    }

    fn print_statement(&mut self) {
        self.expression();
        self.consume(TokenKind::Semicolon, "Expect ';' after value.");
        self.emit_op(OpCode::Print);
    }

    fn expression_statement(&mut self) {
        self.expression();
        self.consume(TokenKind::Semicolon, "Expect ';' after expression.");
        self.emit_statement_pop();
    }

    /// Emits the `POP` of an expression statement's value, or, where the expression ended
    /// with an assignment to a local or a property (the code ends with its `SET_LOCAL` or
    /// `SET_PROPERTY` and no jump lands after it), turns that instruction into its `_POP`
    /// form.
    fn emit_statement_pop(&mut self) {
        let len = self.chunk().len();
        let function = self.function();
        let fuse = len >= 2
            && function.last_set == Some(len - 2)
            && function.last_jump_target != Some(len);
        if fuse {
            function.last_set = None;
            let code = &mut self.chunk().code;
            code[len - 2] = match OpCode::from_byte(code[len - 2]) {
                Some(OpCode::SetLocal) => OpCode::SetLocalPop as u8,
                Some(OpCode::SetProperty) => OpCode::SetPropertyPop as u8,
                other => unreachable!("an assignment ends with {other:?}"),
            };
        } else {
            self.emit_op(OpCode::Pop);
        }
    }

    fn if_statement(&mut self) {
        self.consume(TokenKind::LeftParen, "Expect '(' after 'if'.");
        self.expression();
        self.consume(TokenKind::RightParen, "Expect ')' after condition.");

        // The condition is popped as it is tested: no `POP` on either path, and without an
        // `else` no jump over one.
        let then_jump = self.emit_jump(OpCode::PopJumpIfFalse);
        self.statement();
        if self.matches(TokenKind::Else) {
            let else_jump = self.emit_jump(OpCode::Jump);
            self.patch_jump(then_jump);
            self.statement();
            self.patch_jump(else_jump);
        } else {
            self.patch_jump(then_jump);
        }
    }

    fn while_statement(&mut self) {
        let loop_start = self.chunk().len();
        self.consume(TokenKind::LeftParen, "Expect '(' after 'while'.");
        self.expression();
        self.consume(TokenKind::RightParen, "Expect ')' after condition.");

        let exit_jump = self.emit_jump(OpCode::PopJumpIfFalse);
        self.statement();
        self.emit_loop(loop_start);

        self.patch_jump(exit_jump);
    }

    fn for_statement(&mut self) {
        self.begin_scope();
        self.consume(TokenKind::LeftParen, "Expect '(' after 'for'.");
        if self.matches(TokenKind::Semicolon) {
            // No initializer.
        } else if self.matches(TokenKind::Var) {
            self.var_declaration();
        } else {
            self.expression_statement();
        }

        let mut loop_start = self.chunk().len();
        let mut exit_jump = None;
        if !self.matches(TokenKind::Semicolon) {
            self.expression();
            self.consume(TokenKind::Semicolon, "Expect ';' after loop condition.");
            exit_jump = Some(self.emit_jump(OpCode::PopJumpIfFalse));
        }

        if !self.matches(TokenKind::RightParen) {
            // The increment runs after the body: jump over it now, loop back to it later.
            let body_jump = self.emit_jump(OpCode::Jump);
            let increment_start = self.chunk().len();
            self.expression();
            self.emit_statement_pop();
            self.consume(TokenKind::RightParen, "Expect ')' after for clauses.");
            self.emit_loop(loop_start);
            loop_start = increment_start;
            self.patch_jump(body_jump);
        }

        self.statement();
        self.emit_loop(loop_start);

        if let Some(exit_jump) = exit_jump {
            self.patch_jump(exit_jump);
        }
        self.end_scope();
    }

    fn return_statement(&mut self) {
        if self.function().kind == FunctionKind::Script {
            self.error("Can't return from top-level code.");
        }
        if self.matches(TokenKind::Semicolon) {
            self.emit_return();
        } else {
            if self.function().kind == FunctionKind::Initializer {
                self.error("Can't return a value from an initializer.");
            }
            self.expression();
            self.consume(TokenKind::Semicolon, "Expect ';' after return value.");
            self.emit_op(OpCode::Return);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instruction::Operands;

    /// The function's chunk as `Op(operands)` words; jumps show their raw offset, `CLOSURE` its
    /// capture pairs. Panics on malformed code.
    fn listing(function: &FunctionProto) -> String {
        let chunk = &function.chunk;
        let mut words = Vec::new();
        let mut i = 0;
        while i < chunk.code.len() {
            let ins = function.decode(i).expect("well-formed code");
            let op = ins.op;
            words.push(match ins.operands {
                Operands::None => format!("{op:?}"),
                Operands::Constant(b) | Operands::Byte(b) => format!("{op:?}({b})"),
                Operands::Jump(d) => format!("{op:?}({d})"),
                Operands::Invoke { name, args } => format!("{op:?}({name},{args})"),
                Operands::LocalProperty { name, slot } => format!("{op:?}({name},{slot})"),
                Operands::SuperInvokeUpvalue {
                    name,
                    args,
                    upvalue,
                } => format!("{op:?}({name},{args},U{upvalue})"),
                Operands::Closure(index) => {
                    let mut w = format!("Closure({index}");
                    for (_, is_local, slot) in ins.captures(chunk) {
                        let kind = if is_local == 1 { "L" } else { "U" };
                        w += &format!(",{kind}{slot}");
                    }
                    w + ")"
                }
            });
            i += ins.len;
        }
        words.join(" ")
    }

    fn script(source: &str) -> FunctionProto {
        match compile(source) {
            Ok(script) => script,
            Err(errors) => panic!("unexpected compile errors:\n{errors}"),
        }
    }

    fn code(source: &str) -> String {
        listing(&script(source))
    }

    /// The `index`th function constant of `function`.
    fn nested(function: &FunctionProto, index: usize) -> &FunctionProto {
        function
            .constants
            .iter()
            .filter_map(|c| match c {
                Constant::Function(f) => Some(&**f),
                _ => None,
            })
            .nth(index)
            .expect("nested function")
    }

    fn errors(source: &str) -> Vec<String> {
        match compile(source) {
            Ok(_) => panic!("expected compile errors for {source:?}"),
            Err(errors) => errors.errors().iter().map(|e| e.to_string()).collect(),
        }
    }

    fn error(source: &str) -> String {
        let all = errors(source);
        assert_eq!(all.len(), 1, "expected exactly one error: {all:?}");
        all.into_iter().next().unwrap()
    }

    #[test]
    fn empty_script_returns_nil() {
        let s = script("");
        assert_eq!(s.name, None);
        assert_eq!(s.arity, 0);
        assert_eq!(listing(&s), "Nil Return");
        assert_eq!(s.chunk.lines, vec![1, 1]);
    }

    #[test]
    fn arithmetic_and_precedence() {
        assert_eq!(
            code("print 1 + 2 * 3;"),
            "Constant(0) Constant(1) Constant(2) Multiply Add Print Nil Return"
        );
        assert_eq!(
            code("print (1 + 2) * 3;"),
            "Constant(0) Constant(1) Add Constant(2) Multiply Print Nil Return"
        );
        assert_eq!(
            code("print 1 - 2 - 3;"),
            "Constant(0) Constant(1) Subtract Constant(2) Subtract Print Nil Return"
        );
        assert_eq!(
            code("print -!x;"),
            "GetGlobal(0) Not Negate Print Nil Return"
        );
        assert_eq!(
            code("1 != 2; 1 >= 2; 1 <= 2; 1 == 2; 1 < 2; 1 > 2; 1 / 2;"),
            "Constant(0) EqualConstant(1) Not Pop \
             Constant(2) Constant(3) Less Not Pop \
             Constant(4) Constant(5) Greater Not Pop \
             Constant(6) EqualConstant(7) Pop \
             Constant(8) Constant(9) Less Pop \
             Constant(10) Constant(11) Greater Pop \
             Constant(12) Constant(13) Divide Pop Nil Return"
        );
        // Comparison binds tighter than equality, which binds tighter than `and`/`or`.
        assert_eq!(
            code("print 1 < 2 == true;"),
            "Constant(0) Constant(1) Less True Equal Print Nil Return"
        );
    }

    #[test]
    fn equality_with_a_literal_is_one_instruction() {
        // A literal on the right: its `CONSTANT` becomes the comparison.
        assert_eq!(
            code("x == \"a\"; x != 2;"),
            "GetGlobal(0) EqualConstant(1) Pop GetGlobal(2) EqualConstant(3) Not Pop Nil Return"
        );
        // Anything longer on the right, or a literal on the left, is `EQUAL`.
        assert_eq!(
            code("x == \"a\" + \"b\"; \"a\" == x; x == -1; x == nil;"),
            "GetGlobal(0) Constant(1) Constant(2) Add Equal Pop \
             Constant(3) GetGlobal(4) Equal Pop \
             GetGlobal(5) Constant(6) Negate Equal Pop \
             GetGlobal(7) Nil Equal Pop Nil Return"
        );
        // The end of an `or` on the left lands on the comparison, which compares its value.
        assert_eq!(
            code("(x or y) == \"a\";"),
            "GetGlobal(0) JumpIfFalse(3) Jump(3) Pop GetGlobal(1) EqualConstant(2) Pop Nil Return"
        );
    }

    #[test]
    fn literals_and_constants() {
        let s = script("print nil; print true; print false; print \"hi\"; print 2.5;");
        assert_eq!(
            listing(&s),
            "Nil Print True Print False Print Constant(0) Print Constant(1) Print Nil Return"
        );
        assert_eq!(
            s.constants,
            vec![Constant::String("hi".into()), Constant::Number(2.5)]
        );
        // Multi-line strings keep their newlines; constants are not deduplicated.
        let s = script("\"a\nb\"; 1; 1;");
        assert_eq!(
            s.constants,
            vec![
                Constant::String("a\nb".into()),
                Constant::Number(1.0),
                Constant::Number(1.0)
            ]
        );
    }

    #[test]
    fn instructions_carry_the_line_of_the_previous_token() {
        let s = script("print 1 +\n\n  2;\nprint\n3;");
        // Constant(0)@1, Constant(1)@3, Add@3, Print@3, Constant(2)@5, Print@5, Nil/Return@5.
        assert_eq!(s.chunk.lines, vec![1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 5]);
    }

    #[test]
    fn globals() {
        let s = script("var a = 1; a = 2; print a; var b;");
        assert_eq!(
            listing(&s),
            "Constant(1) DefineGlobal(0) Constant(3) SetGlobal(2) Pop GetGlobal(4) Print \
             Nil DefineGlobal(5) Nil Return"
        );
        assert_eq!(s.constants[0], Constant::String("a".into()));
        // Assignment is right-associative and an expression.
        assert_eq!(
            code("a = b = c;"),
            "GetGlobal(2) SetGlobal(1) SetGlobal(0) Pop Nil Return"
        );
    }

    #[test]
    fn locals_and_scopes() {
        assert_eq!(
            code("{ var a = 1; var b = a; b = 3; print b; }"),
            "Constant(0) GetLocal(1) Constant(1) SetLocalPop(2) GetLocal(2) Print Pop Pop Nil \
             Return"
        );
        // Shadowing in an inner block resolves to the innermost variable; the inner block pops
        // only its own locals.
        assert_eq!(
            code("{ var a = 1; { var a = 2; print a; } print a; }"),
            "Constant(0) Constant(1) GetLocal(2) Print Pop GetLocal(1) Print Pop Nil Return"
        );
        // A global of the same name is only used outside the block.
        assert_eq!(
            code("var a; { var a; } print a;"),
            "Nil DefineGlobal(0) Nil Pop GetGlobal(1) Print Nil Return"
        );
    }

    #[test]
    fn functions_and_calls() {
        let s = script("fun add(a, b) { return a + b; } print add(1, 2);");
        assert_eq!(
            listing(&s),
            "Closure(1) DefineGlobal(0) GetGlobal(2) Constant(3) Constant(4) Call(2) Print \
             Nil Return"
        );
        let add = nested(&s, 0);
        assert_eq!(add.name.as_deref(), Some("add"));
        assert_eq!(add.arity, 2);
        assert_eq!(add.upvalue_count(), 0);
        assert_eq!(
            listing(add),
            "GetLocal(1) GetLocal(2) Add Return Nil Return"
        );
        // A local function can call itself: its name is initialized before its body.
        let s = script("{ fun f() { f(); } }");
        let f = nested(&s, 0);
        assert_eq!(
            f.upvalues,
            vec![UpvalueCapture {
                is_local: true,
                index: 1
            }]
        );
        assert_eq!(listing(&s), "Closure(0,L1) CloseUpvalue Nil Return");
        assert_eq!(listing(f), "GetUpvalue(0) Call(0) Pop Nil Return");
    }

    #[test]
    fn upvalues_resolve_through_enclosing_functions() {
        let s = script(
            "fun outer() { var x = 1; var y = 2; fun inner() { return y + x + y; } return inner; }",
        );
        let outer = nested(&s, 0);
        let inner = nested(outer, 0);
        // Deduplicated, in order of first use.
        assert_eq!(
            inner.upvalues,
            vec![
                UpvalueCapture {
                    is_local: true,
                    index: 2
                },
                UpvalueCapture {
                    is_local: true,
                    index: 1
                }
            ]
        );
        assert_eq!(
            listing(inner),
            "GetUpvalue(0) GetUpvalue(1) Add GetUpvalue(0) Add Return Nil Return"
        );
        assert_eq!(
            listing(outer),
            "Constant(0) Constant(1) Closure(2,L2,L1) GetLocal(3) Return Nil Return"
        );

        // Three levels: the middle function captures on behalf of the innermost.
        let s = script("fun a() { var x; fun b() { fun c() { x = 3; } } }");
        let a = nested(&s, 0);
        let b = nested(a, 0);
        let c = nested(b, 0);
        assert_eq!(
            b.upvalues,
            vec![UpvalueCapture {
                is_local: true,
                index: 1
            }]
        );
        assert_eq!(
            c.upvalues,
            vec![UpvalueCapture {
                is_local: false,
                index: 0
            }]
        );
        assert_eq!(listing(c), "Constant(0) SetUpvalue(0) Pop Nil Return");
        assert_eq!(listing(b), "Closure(0,U0) Nil Return");
    }

    #[test]
    fn captured_locals_are_closed_at_scope_exit() {
        // x is captured, y is not: y is popped, x closed.
        assert_eq!(
            code("{ var x = 1; var y = 2; fun f() { print x; } }"),
            "Constant(0) Constant(1) Closure(2,L1) Pop Pop CloseUpvalue Nil Return"
        );
        // A loop body's variable is a fresh slot per iteration, closed at the end of each.
        let c = code("while (true) { var i = 1; fun f() { return i; } }");
        assert_eq!(
            c,
            "True PopJumpIfFalse(11) Constant(0) Closure(1,L1) Pop CloseUpvalue Loop(15) Nil Return"
        );
        // Function parameters are locals of the function and can be captured too.
        let s = script("fun f(a) { fun g() { return a; } return g; }");
        assert_eq!(
            nested(nested(&s, 0), 0).upvalues,
            vec![UpvalueCapture {
                is_local: true,
                index: 1
            }]
        );
    }

    #[test]
    fn jumps_are_patched() {
        assert_eq!(
            code("if (true) print 1;"),
            "True PopJumpIfFalse(3) Constant(0) Print Nil Return"
        );
        assert_eq!(
            code("if (true) print 1; else print 2;"),
            "True PopJumpIfFalse(6) Constant(0) Print Jump(3) Constant(1) Print Nil Return"
        );
        assert_eq!(
            code("print true and false;"),
            "True JumpIfFalse(2) Pop False Print Nil Return"
        );
        assert_eq!(
            code("print false or true;"),
            "False JumpIfFalse(3) Jump(2) Pop True Print Nil Return"
        );
        assert_eq!(
            code("while (false) print 1;"),
            "False PopJumpIfFalse(6) Constant(0) Print Loop(10) Nil Return"
        );
        assert_eq!(
            code("for (var i = 0; i < 2; i = i + 1) print i;"),
            "Constant(0) GetLocal(1) Constant(1) Less PopJumpIfFalse(19) Jump(10) \
             GetLocal(1) Constant(2) Add SetLocalPop(1) Loop(21) GetLocal(1) Print Loop(16) \
             Pop Nil Return"
        );
        // No clauses at all: just the body and a loop back to it.
        assert_eq!(
            code("for (;;) print 1;"),
            "Constant(0) Print Loop(6) Nil Return"
        );
        // An expression initializer is evaluated and popped.
        assert_eq!(
            code("for (i = 0; false;) {}"),
            "Constant(1) SetGlobal(0) Pop False PopJumpIfFalse(3) Loop(7) Nil Return"
        );
    }

    #[test]
    fn jump_targets_are_absolute_instruction_boundaries() {
        // Jump offsets count from the byte after the operand. The condition's jump lands on
        // the `else` branch's first instruction (no `POP` there: the jump popped it), the
        // then branch's jump over the `else` on the statement after it.
        let s = script("if (false) { print 1; print 2; } else print 3; print 4;");
        let c = &s.chunk;
        assert_eq!(c.code[1], OpCode::PopJumpIfFalse as u8);
        let target = 1 + 3 + c.read_u16(2) as usize;
        assert_eq!(c.code[target], OpCode::Constant as u8);
        let jump_at = target - 3;
        assert_eq!(c.code[jump_at], OpCode::Jump as u8);
        let end = jump_at + 3 + c.read_u16(jump_at + 1) as usize;
        assert_eq!(end, target + 3, "past `CONSTANT` and `PRINT`");
        assert_eq!(c.code[end], OpCode::Constant as u8);
    }

    #[test]
    fn classes_methods_and_properties() {
        let s = script("class A { m() { return this.x; } } A().y = A().m();");
        assert_eq!(
            listing(&s),
            "Class(0) DefineGlobal(0) GetGlobal(1) Closure(3) Method(2) Pop \
             GetGlobal(4) Call(0) GetGlobal(6) Call(0) Invoke(7,0) SetPropertyPop(5) Nil Return"
        );
        let m = nested(&s, 0);
        assert_eq!(m.name.as_deref(), Some("m"));
        assert_eq!(listing(m), "GetLocalProperty(0,0) Return Nil Return");
        assert_eq!(
            code("a.b(1, 2);"),
            "GetGlobal(0) Constant(2) Constant(3) Invoke(1,2) Pop Nil Return"
        );
        assert_eq!(
            code("print a.b;"),
            "GetGlobal(0) GetProperty(1) Print Nil Return"
        );
        assert_eq!(
            code("a.b.c = 1;"),
            "GetGlobal(0) GetProperty(1) Constant(3) SetPropertyPop(2) Nil Return"
        );
        // A local class.
        assert_eq!(
            code("{ class B {} print B; }"),
            "Class(0) GetLocal(1) Pop GetLocal(1) Print Pop Nil Return"
        );
    }

    #[test]
    fn a_local_property_read_is_one_instruction_where_no_jump_lands_inside() {
        assert_eq!(
            code("{ var a; print a.x; }"),
            "Nil GetLocalProperty(0,1) Print Pop Nil Return"
        );
        // A property of a property: the second read is a `GET_PROPERTY`.
        assert_eq!(
            code("{ var a; print a.x.y; }"),
            "Nil GetLocalProperty(0,1) GetProperty(1) Print Pop Nil Return"
        );
        // Sets and invocations are not reads.
        assert_eq!(
            code("{ var a; a.x = 1; a.m(); }"),
            "Nil GetLocal(1) Constant(1) SetPropertyPop(0) GetLocal(1) Invoke(2,0) Pop Pop Nil \
             Return"
        );
        // The `or`'s jump lands between the read of `b` and the property read: not fused.
        assert_eq!(
            code("{ var a; var b; print (a or b).x; }"),
            "Nil Nil GetLocal(1) JumpIfFalse(3) Jump(3) Pop GetLocal(2) GetProperty(0) Print \
             Pop Pop Nil Return"
        );
        // Globals and upvalues are not fused.
        assert_eq!(
            code("print a.x;"),
            "GetGlobal(0) GetProperty(1) Print Nil Return"
        );
    }

    #[test]
    fn an_assignment_statement_pops_its_value_in_its_set_where_no_jump_lands_after_it() {
        // The outer assignment of a chain takes the `POP`; the inner one keeps its value.
        assert_eq!(
            code("{ var a; var b; a = b = 1; }"),
            "Nil Nil Constant(0) SetLocal(2) SetLocalPop(1) Pop Pop Nil Return"
        );
        assert_eq!(
            code("{ var a; a.x = 1; }"),
            "Nil GetLocal(1) Constant(1) SetPropertyPop(0) Pop Nil Return"
        );
        // Globals and upvalues keep their `POP`.
        assert_eq!(code("a = 1;"), "Constant(1) SetGlobal(0) Pop Nil Return");
        assert_eq!(
            code("{ var a; fun f() { a = 1; } }"),
            "Nil Closure(0,L1) Pop CloseUpvalue Nil Return"
        );
        // The `and`'s jump lands after the assignment: the `POP` stays for both paths.
        assert_eq!(
            code("{ var a; var b; a and (b = 1); }"),
            "Nil Nil GetLocal(1) JumpIfFalse(5) Pop Constant(0) SetLocal(2) Pop Pop Pop Nil \
             Return"
        );
        assert_eq!(
            code("{ var a; a and (a.x = 1); }"),
            "Nil GetLocal(1) JumpIfFalse(7) Pop GetLocal(1) Constant(1) SetProperty(0) Pop \
             Pop Nil Return"
        );
    }

    #[test]
    fn initializers_return_this() {
        let s = script("class A { init(a) { this.a = a; return; } }");
        let init = nested(&s, 0);
        assert_eq!(init.name.as_deref(), Some("init"));
        assert_eq!(init.arity, 1);
        assert_eq!(
            listing(init),
            "GetLocal(0) GetLocal(1) SetPropertyPop(0) GetLocal(0) Return GetLocal(0) Return"
        );
        // Only a method named init is an initializer.
        let s = script("fun init() { return 1; }");
        assert_eq!(listing(nested(&s, 0)), "Constant(0) Return Nil Return");
    }

    #[test]
    fn inheritance_and_super() {
        let s = script("class A < B { m() { super.m(1); return super.n; } }");
        assert_eq!(
            listing(&s),
            "Class(0) DefineGlobal(0) GetGlobal(1) GetGlobal(2) Inherit GetGlobal(3) \
             Closure(5,L1) Method(4) Pop CloseUpvalue Nil Return"
        );
        let m = nested(&s, 0);
        assert_eq!(
            m.upvalues,
            vec![UpvalueCapture {
                is_local: true,
                index: 1
            }]
        );
        assert_eq!(
            listing(m),
            "GetLocal(0) Constant(1) SuperInvokeUpvalue(0,1,U0) Pop \
             GetLocal(0) GetUpvalue(0) GetSuper(2) Return Nil Return"
        );
        // In a closure inside a method, `super` is that closure's own upvalue (here its
        // third, after `x` and `this`).
        let s = script("class A < B { m() { var x; fun f() { x; super.m(); } } }");
        let f = nested(nested(&s, 0), 0);
        assert_eq!(
            listing(f),
            "GetUpvalue(0) Pop GetUpvalue(1) SuperInvokeUpvalue(0,0,U2) Pop Nil Return"
        );
        // `this` inside a closure in a method is an upvalue of slot 0.
        let s = script("class A { m() { fun f() { return this; } } }");
        let f = nested(nested(&s, 0), 0);
        assert_eq!(
            f.upvalues,
            vec![UpvalueCapture {
                is_local: true,
                index: 0
            }]
        );
    }

    #[test]
    fn error_format_and_locations() {
        assert_eq!(
            error("print 1"),
            "[line 1] Error at end: Expect ';' after value."
        );
        assert_eq!(
            error("print 1\nprint 2;"),
            "[line 2] Error at 'print': Expect ';' after value."
        );
        assert_eq!(error("var x = @;"), "[line 1] Error: Unexpected character.");
        assert_eq!(
            error("print \"abc\n\n"),
            "[line 3] Error: Unterminated string."
        );
        assert_eq!(error("print;"), "[line 1] Error at ';': Expect expression.");
    }

    #[test]
    fn every_compile_error_message() {
        let cases: &[(&str, &str)] = &[
            ("f(1;", "Error at ';': Expect ')' after arguments."),
            ("a.1;", "Error at '1': Expect property name after '.'."),
            ("(1;", "Error at ';': Expect ')' after expression."),
            (
                "super.x;",
                "Error at 'super': Can't use 'super' outside of a class.",
            ),
            (
                "class A { m() { super.m(); } }",
                "Error at 'super': Can't use 'super' in a class with no superclass.",
            ),
            (
                "class A < B { m() { super; } }",
                "Error at ';': Expect '.' after 'super'.",
            ),
            (
                "class A < B { m() { super.(); } }",
                "Error at '(': Expect superclass method name.",
            ),
            (
                "print this;",
                "Error at 'this': Can't use 'this' outside of a class.",
            ),
            ("print +;", "Error at '+': Expect expression."),
            ("a + b = c;", "Error at '=': Invalid assignment target."),
            ("{ print 1;", "Error at end: Expect '}' after block."),
            ("fun f {}", "Error at '{': Expect '(' after function name."),
            ("fun f(1) {}", "Error at '1': Expect parameter name."),
            ("fun f(a {}", "Error at '{': Expect ')' after parameters."),
            (
                "fun f() print 1;",
                "Error at 'print': Expect '{' before function body.",
            ),
            ("class A { 1 }", "Error at '1': Expect method name."),
            ("class {}", "Error at '{': Expect class name."),
            ("class A < {}", "Error at '{': Expect superclass name."),
            (
                "class A < A {}",
                "Error at 'A': A class can't inherit from itself.",
            ),
            ("class A;", "Error at ';': Expect '{' before class body."),
            (
                "class A { m() {}",
                "Error at end: Expect '}' after class body.",
            ),
            ("fun () {}", "Error at '(': Expect function name."),
            ("var 1 = 2;", "Error at '1': Expect variable name."),
            (
                "var a = 1 print a;",
                "Error at 'print': Expect ';' after variable declaration.",
            ),
            (
                "1 + 2 print 3;",
                "Error at 'print': Expect ';' after expression.",
            ),
            ("for var i;;) {}", "Error at 'var': Expect '(' after 'for'."),
            (
                "for (;true) {}",
                "Error at ')': Expect ';' after loop condition.",
            ),
            ("for (;;1 {}", "Error at '{': Expect ')' after for clauses."),
            ("if true) {}", "Error at 'true': Expect '(' after 'if'."),
            ("if (true {}", "Error at '{': Expect ')' after condition."),
            (
                "while (true {}",
                "Error at '{': Expect ')' after condition.",
            ),
            (
                "while true) {}",
                "Error at 'true': Expect '(' after 'while'.",
            ),
            ("print 1 2;", "Error at '2': Expect ';' after value."),
            (
                "return 1;",
                "Error at 'return': Can't return from top-level code.",
            ),
            (
                "class A { init() { return 1; } }",
                "Error at 'return': Can't return a value from an initializer.",
            ),
            (
                "fun f() { return 1 2; }",
                "Error at '2': Expect ';' after return value.",
            ),
            (
                "{ var a = a; }",
                "Error at 'a': Can't read local variable in its own initializer.",
            ),
            (
                "{ var a; var a; }",
                "Error at 'a': Already a variable with this name in this scope.",
            ),
            (
                "fun f(a, a) {}",
                "Error at 'a': Already a variable with this name in this scope.",
            ),
            ("print \"abc", "Error: Unterminated string."),
            ("print #;", "Error: Unexpected character."),
        ];
        for (source, expected) in cases {
            // Some cases report a second, consequential error after resynchronizing (e.g. a
            // missing '}' at the end); the first is the one under test.
            assert_eq!(
                errors(source)[0],
                format!("[line 1] {expected}"),
                "source: {source}"
            );
        }
        // Not errors: same name in an inner scope, global redeclaration, reading a global in
        // its own initializer, returning nothing from an initializer.
        script("{ var a = 1; { var b = a; } }");
        script("var a = 1; var a = a;");
        script("class A { init() { return; } }");
        script("{ var a; { var a; } }");
    }

    #[test]
    fn more_invalid_assignment_targets() {
        for source in [
            "-a = 1;",
            "!a = 1;",
            "(a) = 1;",
            "a.b() = 1;",
            "1 = 2;",
            "a * b = c;",
            "this = 1;",
            "\"s\" = 1;",
        ] {
            let source = if source.starts_with("this") {
                format!("class A {{ m() {{ {source} }} }}")
            } else {
                source.to_string()
            };
            let e = error(&source);
            assert!(
                e.ends_with("Error at '=': Invalid assignment target."),
                "{source}: {e}"
            );
        }
        // Assignment inside a higher-precedence operand is not parsed as assignment.
        assert_eq!(
            error("a + b = 1;"),
            "[line 1] Error at '=': Invalid assignment target."
        );
        // But a property or variable at the start of an expression can be assigned.
        script("a.b.c = d = 1;");
    }

    #[test]
    fn panic_mode_reports_one_error_per_statement() {
        // Two broken statements, and a cascade inside the first one that is suppressed.
        assert_eq!(
            errors("print 1 + ;\nvar = 2;\nprint 3;\nprint (4;"),
            vec![
                "[line 1] Error at ';': Expect expression.",
                "[line 2] Error at '=': Expect variable name.",
                "[line 4] Error at ';': Expect ')' after expression.",
            ]
        );
        // Several unexpected characters in one statement: only the first is reported.
        assert_eq!(
            errors("print @@@;"),
            vec!["[line 1] Error: Unexpected character."]
        );
        // Recovery at a keyword that starts a statement.
        assert_eq!(
            errors("var a = (\nfun f() {}\nclass C < C {}"),
            vec![
                "[line 2] Error at 'fun': Expect expression.",
                "[line 3] Error at 'C': A class can't inherit from itself."
            ]
        );
    }

    /// `count` comma-separated `prefix{i}` items.
    fn items(prefix: &str, count: usize) -> String {
        (0..count)
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn limit_constants() {
        let ok: String = (0..256).map(|i| format!("{i};\n")).collect();
        assert_eq!(script(&ok).constants.len(), 256);
        let too_many = format!("{ok}256;\n");
        assert_eq!(
            error(&too_many),
            "[line 257] Error at '256': Too many constants in one chunk."
        );
        // The limit is per chunk: a function has its own pool.
        let in_function = format!("fun f() {{ {ok} }}\n1; 2;");
        script(&in_function);
    }

    #[test]
    fn limit_locals() {
        // Slot 0 is reserved, so 255 locals fit in one function.
        let decls = |n: usize| (0..n).map(|i| format!("var a{i};\n")).collect::<String>();
        script(&format!("{{\n{}}}", decls(255)));
        assert_eq!(
            error(&format!("{{\n{}}}", decls(256))),
            "[line 257] Error at 'a255': Too many local variables in function."
        );
        // Parameters count too.
        script(&format!("fun f({}) {{ {} }}", items("p", 100), decls(155)));
        let e = error(&format!("fun f({}) {{ {} }}", items("p", 100), decls(156)));
        assert!(
            e.ends_with("Error at 'a155': Too many local variables in function."),
            "{e}"
        );
    }

    #[test]
    fn limit_parameters_and_arguments() {
        let s = script(&format!("fun f({}) {{}}", items("p", 255)));
        assert_eq!(nested(&s, 0).arity, 255);
        assert_eq!(
            error(&format!("fun f({}) {{}}", items("p", 256))),
            "[line 1] Error at 'p255': Can't have more than 255 parameters."
        );
        // Method parameters too.
        assert_eq!(
            error(&format!("class A {{ m({}) {{}} }}", items("p", 256))),
            "[line 1] Error at 'p255': Can't have more than 255 parameters."
        );
        // Arguments are a local, so that they need no constants.
        let args = |n: usize| vec!["a"; n].join(", ");
        script(&format!("{{ var a; f({}); }}", args(255)));
        assert_eq!(
            error(&format!("{{ var a; f({}); }}", args(256))),
            "[line 1] Error at 'a': Can't have more than 255 arguments."
        );
        // Invocations count their arguments the same way.
        assert_eq!(
            error(&format!("{{ var a; o.m({}); }}", args(256))),
            "[line 1] Error at 'a': Can't have more than 255 arguments."
        );
    }

    #[test]
    fn limit_upvalues() {
        // 200 locals in `outer`, 100 in `middle`; `inner` captures 256 of them, then one more.
        let locals =
            |p: &str, n: usize| (0..n).map(|i| format!("var {p}{i};\n")).collect::<String>();
        let uses = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i};\n")).collect::<String>();
        let program = |b_uses: usize| {
            format!(
                "fun outer() {{\n{}fun middle() {{\n{}fun inner() {{\n{}{}}}\n}}\n}}\n",
                locals("a", 200),
                locals("b", 100),
                uses("a", 200),
                uses("b", b_uses)
            )
        };
        let s = script(&program(56));
        let inner = nested(nested(nested(&s, 0), 0), 0);
        assert_eq!(inner.upvalue_count(), 256);
        let e = error(&program(57));
        assert!(
            e.ends_with("Error at 'b56': Too many closure variables in function."),
            "{e}"
        );
    }

    #[test]
    fn limit_jumps() {
        // Each `a+a+a+a+a+a+a+a+a+a;` compiles to 30 bytes.
        let statement = "a+a+a+a+a+a+a+a+a+a;\n";
        let body = |n: usize| statement.repeat(n);
        // Just under the limit: 2184 * 30 = 65520 bytes of body.
        // (The statement after the `if` is where the parser resynchronizes after the error.)
        let program = |n| format!("{{ var a = 1;\nif (a) {{\n{}}}\nprint a;\n}}", body(n));
        script(&program(2184));
        let e = error(&program(2185));
        assert_eq!(e, "[line 2188] Error at '}': Too much code to jump over.");
        // Loops: the body plus the condition and the loop instruction itself.
        let program = |n| format!("{{ var a = 1;\nwhile (a) {{\n{}}}\nprint a;\n}}", body(n));
        script(&program(2183));
        let e = error(&program(2185));
        assert_eq!(e, "[line 2188] Error at '}': Loop body too large.");
    }

    /// `depth` repetitions of `open`, then `middle`, then `depth` of `close`.
    fn nest(open: &str, middle: &str, close: &str, depth: usize) -> String {
        format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
    }

    #[test]
    fn limit_nesting_parentheses() {
        // `print` is one level (a statement), its expression one more, each group one more.
        let program = |n| format!("print {};", nest("(", "1", ")", n));
        script(&program(MAX_NESTING - 2));
        // One more: the innermost operand is the level too many.
        let e = error(&program(MAX_NESTING - 1));
        assert_eq!(e, "[line 1] Error at '1': Too much nesting.");
        let e = error(&program(100_000));
        assert_eq!(e, "[line 1] Error at '(': Too much nesting.");
        // Calls nest through their arguments the same way.
        let e = error(&format!("print {};", nest("f(", "1", ")", 100_000)));
        assert_eq!(e, "[line 1] Error at 'f': Too much nesting.");
    }

    #[test]
    fn limit_nesting_blocks_and_statements() {
        script(&nest("{", "", "}", MAX_NESTING));
        let e = error(&nest("{", "", "}", MAX_NESTING + 1));
        assert_eq!(e, "[line 1] Error at '{': Too much nesting.");
        let e = error(&nest("{\n", "", "}\n", 100_000));
        assert_eq!(
            e,
            format!(
                "[line {}] Error at '{{': Too much nesting.",
                MAX_NESTING + 1
            )
        );
        // The condition of the innermost `if` is the level too many.
        let e = error(&nest("if (true) ", "print 1;", "", 100_000));
        assert_eq!(e, "[line 1] Error at 'true': Too much nesting.");
        let e = error(&nest("while (false) ", ";", "", 100_000));
        assert_eq!(e, "[line 1] Error at 'false': Too much nesting.");
    }

    #[test]
    fn limit_nesting_unary_and_assignment() {
        script(&format!("print {}1;", "-".repeat(MAX_NESTING - 2)));
        let e = error(&format!("print {}1;", "-".repeat(1_000_000)));
        assert_eq!(e, "[line 1] Error at '-': Too much nesting.");
        let e = error(&format!("print {}true;", "!".repeat(1_000_000)));
        assert_eq!(e, "[line 1] Error at '!': Too much nesting.");
        let e = error(&format!("var a; {}1;", "a = ".repeat(100_000)));
        assert_eq!(e, "[line 1] Error at 'a': Too much nesting.");
    }

    #[test]
    fn limit_nesting_functions_and_classes() {
        // A function body is one level, the block statements in it none.
        script(&nest("fun f() { ", "", "} ", MAX_NESTING));
        let e = error(&nest("fun f() { ", "", "} ", MAX_NESTING + 1));
        assert_eq!(e, "[line 1] Error at '(': Too much nesting.");
        let e = error(&nest("fun f() {\n", "", "}\n", 100_000));
        assert_eq!(
            e,
            format!("[line {}] Error at '(': Too much nesting.", MAX_NESTING + 1)
        );
        let e = error(&nest("class A { m() { ", "", "} } ", 100_000));
        assert_eq!(e, "[line 1] Error at '(': Too much nesting.");
    }

    #[test]
    fn too_much_nesting_ends_the_compilation() {
        // Errors before it are kept, nothing after it is parsed.
        let source = format!(
            "print 1 +;\nprint {};\nprint 2 +;\n",
            nest("(", "1", ")", 100_000)
        );
        assert_eq!(
            errors(&source),
            [
                "[line 1] Error at ';': Expect expression.",
                "[line 2] Error at '(': Too much nesting."
            ]
        );
    }
}
