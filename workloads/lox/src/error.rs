//! Compile errors, formatted exactly as clox prints them on stderr.
//!
//! One [`CompileError`] per reported error; the compiler's panic mode suppresses the cascade
//! after the first error of a statement, so a [`CompileErrors`] holds one error per broken
//! statement, in source order. `Display` gives clox's lines:
//!
//! ```text
//! [line 3] Error at 'x': Expect ';' after value.
//! [line 9] Error at end: Expect '}' after block.
//! [line 1] Error: Unexpected character.
//! ```

use std::fmt;

/// Where on its line a compile error points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorLocation {
    /// At a token: ` at 'lexeme'`.
    Token(String),
    /// At the end of the source: ` at end`.
    End,
    /// A lexical error from the scanner, which names no token: nothing is printed.
    Scanner,
}

/// One compile error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// Source line of the offending token.
    pub line: u32,
    /// The token the error points at.
    pub location: ErrorLocation,
    /// The message, e.g. `"Expect ';' after value."`.
    pub message: String,
}

impl fmt::Display for CompileError {
    /// `[line N] Error at 'x': message` (or `at end`, or nothing for scanner errors).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[line {}] Error", self.line)?;
        match &self.location {
            ErrorLocation::Token(lexeme) => write!(f, " at '{lexeme}'")?,
            ErrorLocation::End => f.write_str(" at end")?,
            ErrorLocation::Scanner => {}
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for CompileError {}

/// All the errors of one failed compilation (never empty), in source order.
///
/// `Display` writes one error per line, each followed by a newline — exactly what clox writes to
/// stderr — so `eprint!("{errors}")` reproduces its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileErrors(pub Vec<CompileError>);

impl CompileErrors {
    /// The errors, in source order.
    pub fn errors(&self) -> &[CompileError] {
        &self.0
    }
}

impl fmt::Display for CompileErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for error in &self.0 {
            writeln!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CompileErrors {}

impl IntoIterator for CompileErrors {
    type Item = CompileError;
    type IntoIter = std::vec::IntoIter<CompileError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_clox() {
        let at = CompileError {
            line: 3,
            location: ErrorLocation::Token("x".into()),
            message: "Expect ';' after value.".into(),
        };
        let end = CompileError {
            line: 9,
            location: ErrorLocation::End,
            message: "Expect '}' after block.".into(),
        };
        let scan = CompileError {
            line: 1,
            location: ErrorLocation::Scanner,
            message: "Unexpected character.".into(),
        };
        assert_eq!(
            at.to_string(),
            "[line 3] Error at 'x': Expect ';' after value."
        );
        assert_eq!(
            end.to_string(),
            "[line 9] Error at end: Expect '}' after block."
        );
        assert_eq!(scan.to_string(), "[line 1] Error: Unexpected character.");
        let all = CompileErrors(vec![at, end, scan]);
        assert_eq!(
            all.to_string(),
            "[line 3] Error at 'x': Expect ';' after value.\n\
             [line 9] Error at end: Expect '}' after block.\n\
             [line 1] Error: Unexpected character.\n"
        );
        assert_eq!(all.errors().len(), 3);
    }
}
