//! Tokens: the unit the [scanner](crate::scanner) hands to the [compiler](crate::compiler).
//!
//! A [`Token`] borrows its text from the source (no allocation per token), carries its
//! [`TokenKind`] and the line it ends on. Error tokens are how the scanner reports lexical errors
//! without stopping: their `lexeme` is the error message, exactly as in clox, and the compiler
//! reports them as `[line N] Error: message`.

/// The kind of a token: punctuation, operators, literals, keywords, and the two special kinds
/// [`TokenKind::Error`] and [`TokenKind::Eof`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    // Single-character tokens.
    /// `(`
    LeftParen,
    /// `)`
    RightParen,
    /// `{`
    LeftBrace,
    /// `}`
    RightBrace,
    /// `,`
    Comma,
    /// `.`
    Dot,
    /// `-`
    Minus,
    /// `+`
    Plus,
    /// `;`
    Semicolon,
    /// `/`
    Slash,
    /// `*`
    Star,
    // One or two character tokens.
    /// `!`
    Bang,
    /// `!=`
    BangEqual,
    /// `=`
    Equal,
    /// `==`
    EqualEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterEqual,
    /// `<`
    Less,
    /// `<=`
    LessEqual,
    // Literals.
    /// A name: a letter or `_`, then letters, digits and `_`.
    Identifier,
    /// A string literal; the lexeme includes both quotes.
    String,
    /// A number literal: digits, optionally `.` and more digits.
    Number,
    // Keywords.
    /// `and`
    And,
    /// `class`
    Class,
    /// `else`
    Else,
    /// `false`
    False,
    /// `for`
    For,
    /// `fun`
    Fun,
    /// `if`
    If,
    /// `nil`
    Nil,
    /// `or`
    Or,
    /// `print`
    Print,
    /// `return`
    Return,
    /// `super`
    Super,
    /// `this`
    This,
    /// `true`
    True,
    /// `var`
    Var,
    /// `while`
    While,
    /// A lexical error; the token's lexeme is the message.
    Error,
    /// End of the source; the lexeme is empty.
    Eof,
}

impl TokenKind {
    /// The keyword spelled `text`, if it is one.
    pub fn keyword(text: &str) -> Option<TokenKind> {
        Some(match text {
            "and" => TokenKind::And,
            "class" => TokenKind::Class,
            "else" => TokenKind::Else,
            "false" => TokenKind::False,
            "for" => TokenKind::For,
            "fun" => TokenKind::Fun,
            "if" => TokenKind::If,
            "nil" => TokenKind::Nil,
            "or" => TokenKind::Or,
            "print" => TokenKind::Print,
            "return" => TokenKind::Return,
            "super" => TokenKind::Super,
            "this" => TokenKind::This,
            "true" => TokenKind::True,
            "var" => TokenKind::Var,
            "while" => TokenKind::While,
            _ => return None,
        })
    }
}

/// One token of Lox source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'src> {
    /// What kind of token this is.
    pub kind: TokenKind,
    /// The token's text in the source (a string literal keeps its quotes). For an
    /// [`TokenKind::Error`] token, the error message; for [`TokenKind::Eof`], empty.
    pub lexeme: &'src str,
    /// The line the token ends on (1-based). A multi-line string literal reports its last line,
    /// as clox does.
    pub line: u32,
}
