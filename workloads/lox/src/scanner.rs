//! The scanner: turns Lox source text into [`Token`]s on demand, one at a time, like clox's
//! `scanToken()`.
//!
//! The compiler pulls tokens as it parses, so the whole token stream never exists at once.
//! Whitespace and `//` comments are skipped; newlines (including those inside string literals)
//! advance the line counter. Lexical errors do not stop scanning: they come back as
//! [`TokenKind::Error`] tokens whose lexeme is the message (`"Unexpected character."` — one per
//! offending byte — or `"Unterminated string."`), and scanning resumes after them.
//!
//! The scanner works on bytes. Only ASCII characters are meaningful outside string literals;
//! any other byte is an unexpected character. Token boundaries always fall on ASCII characters,
//! so lexemes are valid `&str` slices.

use crate::token::{Token, TokenKind};

/// Message of the error token for a byte that starts no token.
pub const UNEXPECTED_CHARACTER: &str = "Unexpected character.";
/// Message of the error token for a string literal that reaches the end of the source.
pub const UNTERMINATED_STRING: &str = "Unterminated string.";

/// An on-demand tokenizer over one source string.
///
/// Call [`Scanner::scan_token`] repeatedly; after the end of the source it keeps returning
/// [`TokenKind::Eof`]. As an [`Iterator`] it yields every token up to and including the first
/// `Eof`, then stops.
#[derive(Clone, Debug)]
pub struct Scanner<'src> {
    source: &'src str,
    start: usize,
    current: usize,
    line: u32,
    done: bool,
}

impl<'src> Scanner<'src> {
    /// A scanner at the start of `source`, on line 1.
    pub fn new(source: &'src str) -> Self {
        Scanner {
            source,
            start: 0,
            current: 0,
            line: 1,
            done: false,
        }
    }

    /// Scans and returns the next token.
    pub fn scan_token(&mut self) -> Token<'src> {
        self.skip_whitespace();
        self.start = self.current;
        let Some(c) = self.advance() else {
            return self.make_token(TokenKind::Eof);
        };
        if is_alpha(c) {
            return self.identifier();
        }
        if c.is_ascii_digit() {
            return self.number();
        }
        let kind = match c {
            b'(' => TokenKind::LeftParen,
            b')' => TokenKind::RightParen,
            b'{' => TokenKind::LeftBrace,
            b'}' => TokenKind::RightBrace,
            b';' => TokenKind::Semicolon,
            b',' => TokenKind::Comma,
            b'.' => TokenKind::Dot,
            b'-' => TokenKind::Minus,
            b'+' => TokenKind::Plus,
            b'/' => TokenKind::Slash,
            b'*' => TokenKind::Star,
            b'!' => self.either(b'=', TokenKind::BangEqual, TokenKind::Bang),
            b'=' => self.either(b'=', TokenKind::EqualEqual, TokenKind::Equal),
            b'<' => self.either(b'=', TokenKind::LessEqual, TokenKind::Less),
            b'>' => self.either(b'=', TokenKind::GreaterEqual, TokenKind::Greater),
            b'"' => return self.string(),
            _ => return self.error_token(UNEXPECTED_CHARACTER),
        };
        self.make_token(kind)
    }

    fn bytes(&self) -> &'src [u8] {
        self.source.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.current).copied()
    }

    fn peek_next(&self) -> Option<u8> {
        self.bytes().get(self.current + 1).copied()
    }

    fn advance(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.current += 1;
        Some(c)
    }

    /// `if_match` when the next byte is `expected` (consuming it), else `otherwise`.
    fn either(&mut self, expected: u8, if_match: TokenKind, otherwise: TokenKind) -> TokenKind {
        if self.peek() == Some(expected) {
            self.current += 1;
            if_match
        } else {
            otherwise
        }
    }

    fn make_token(&self, kind: TokenKind) -> Token<'src> {
        Token {
            kind,
            lexeme: self.lexeme(),
            line: self.line,
        }
    }

    fn lexeme(&self) -> &'src str {
        // Tokens start and end on ASCII bytes (or the end of the source), which are always
        // character boundaries; error tokens never slice.
        &self.source[self.start..self.current]
    }

    fn error_token(&self, message: &'static str) -> Token<'src> {
        Token {
            kind: TokenKind::Error,
            lexeme: message,
            line: self.line,
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\r' | b'\t' => self.current += 1,
                b'\n' => {
                    self.line += 1;
                    self.current += 1;
                }
                b'/' if self.peek_next() == Some(b'/') => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.current += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn identifier(&mut self) -> Token<'src> {
        while self
            .peek()
            .is_some_and(|c| is_alpha(c) || c.is_ascii_digit())
        {
            self.current += 1;
        }
        let kind = TokenKind::keyword(self.lexeme()).unwrap_or(TokenKind::Identifier);
        self.make_token(kind)
    }

    fn number(&mut self) -> Token<'src> {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.current += 1;
        }
        // A fractional part needs a digit after the dot: `1.` is a number and a dot.
        if self.peek() == Some(b'.') && self.peek_next().is_some_and(|c| c.is_ascii_digit()) {
            self.current += 1;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.current += 1;
            }
        }
        self.make_token(TokenKind::Number)
    }

    fn string(&mut self) -> Token<'src> {
        loop {
            match self.advance() {
                None => return self.error_token(UNTERMINATED_STRING),
                Some(b'"') => return self.make_token(TokenKind::String),
                Some(b'\n') => self.line += 1,
                Some(_) => {}
            }
        }
    }
}

impl<'src> Iterator for Scanner<'src> {
    type Item = Token<'src>;

    fn next(&mut self) -> Option<Token<'src>> {
        if self.done {
            return None;
        }
        let token = self.scan_token();
        self.done = token.kind == TokenKind::Eof;
        Some(token)
    }
}

fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    fn kinds(source: &str) -> Vec<TokenKind> {
        Scanner::new(source).map(|t| t.kind).collect()
    }

    fn tokens(source: &str) -> Vec<(TokenKind, &str, u32)> {
        Scanner::new(source)
            .map(|t| (t.kind, t.lexeme, t.line))
            .collect()
    }

    #[test]
    fn punctuation_and_operators() {
        assert_eq!(
            kinds("(){},.-+;/* ! != = == > >= < <="),
            vec![
                LeftParen,
                RightParen,
                LeftBrace,
                RightBrace,
                Comma,
                Dot,
                Minus,
                Plus,
                Semicolon,
                Slash,
                Star,
                Bang,
                BangEqual,
                Equal,
                EqualEqual,
                Greater,
                GreaterEqual,
                Less,
                LessEqual,
                Eof
            ]
        );
        // Maximal munch without spaces.
        assert_eq!(
            kinds("!==<=>==="),
            vec![BangEqual, Equal, LessEqual, GreaterEqual, EqualEqual, Eof]
        );
    }

    #[test]
    fn keywords_and_identifiers() {
        assert_eq!(
            kinds("and class else false for fun if nil or print return super this true var while"),
            vec![
                And, Class, Else, False, For, Fun, If, Nil, Or, Print, Return, Super, This, True,
                Var, While, Eof
            ]
        );
        // Keyword prefixes and extensions are identifiers.
        let toks = tokens("classy orchid _under x1 fo an thisx nil_ Nil");
        assert!(toks[..9].iter().all(|t| t.0 == Identifier), "{toks:?}");
        assert_eq!(toks[0].1, "classy");
        assert_eq!(toks[2].1, "_under");
    }

    #[test]
    fn numbers() {
        assert_eq!(
            tokens("123 4.5 6. .7 8.9.0"),
            vec![
                (Number, "123", 1),
                (Number, "4.5", 1),
                (Number, "6", 1),
                (Dot, ".", 1),
                (Dot, ".", 1),
                (Number, "7", 1),
                (Number, "8.9", 1),
                (Dot, ".", 1),
                (Number, "0", 1),
                (Eof, "", 1)
            ]
        );
        // A minus sign is its own token.
        assert_eq!(kinds("-1"), vec![Minus, Number, Eof]);
    }

    #[test]
    fn strings_keep_quotes_and_count_lines() {
        assert_eq!(
            tokens("\"hi\" \"a\nb\nc\" x"),
            vec![
                (String, "\"hi\"", 1),
                (String, "\"a\nb\nc\"", 3),
                (Identifier, "x", 3),
                (Eof, "", 3)
            ]
        );
        assert_eq!(tokens("\"\"")[0], (String, "\"\"", 1));
        // Non-ASCII text is fine inside strings.
        assert_eq!(tokens("\"héllo\"")[0], (String, "\"héllo\"", 1));
    }

    #[test]
    fn unterminated_string_is_an_error_token_at_the_last_line() {
        assert_eq!(
            tokens("x \"abc\ndef"),
            vec![
                (Identifier, "x", 1),
                (Error, UNTERMINATED_STRING, 2),
                (Eof, "", 2)
            ]
        );
    }

    #[test]
    fn unexpected_characters_are_error_tokens_per_byte() {
        assert_eq!(
            tokens("a | b"),
            vec![
                (Identifier, "a", 1),
                (Error, UNEXPECTED_CHARACTER, 1),
                (Identifier, "b", 1),
                (Eof, "", 1)
            ]
        );
        // A two-byte UTF-8 character outside a string: two error tokens.
        assert_eq!(kinds("é"), vec![Error, Error, Eof]);
        assert_eq!(
            kinds("@#$%^&"),
            vec![Error; 6].into_iter().chain([Eof]).collect::<Vec<_>>()
        );
    }

    #[test]
    fn whitespace_comments_and_lines() {
        let toks = tokens("// comment\n  a // trailing\n\r\tb /not/ // x / y\n\n");
        assert_eq!(
            toks,
            vec![
                (Identifier, "a", 2),
                (Identifier, "b", 3),
                (Slash, "/", 3),
                (Identifier, "not", 3),
                (Slash, "/", 3),
                (Eof, "", 5)
            ]
        );
        // A comment running to the end of the source without a newline.
        assert_eq!(kinds("a // end"), vec![Identifier, Eof]);
    }

    #[test]
    fn eof_repeats_and_iterator_stops() {
        let mut s = Scanner::new("");
        assert_eq!(s.scan_token().kind, Eof);
        assert_eq!(s.scan_token().kind, Eof);
        assert_eq!(Scanner::new("x").count(), 2);
    }
}
