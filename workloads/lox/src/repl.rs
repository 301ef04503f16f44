//! The interactive prompt: `lox` without a script.
//!
//! Lines are read with rustyline (editing, history in `~/.lox_history`). An entry continues on
//! the next line (prompt `... `) while its parentheses or braces are unbalanced or a string is
//! unterminated, so a function or class can be typed over several lines. Each entry is
//! compiled and run on the same [`Lox`], so global definitions persist. Ctrl-C discards the
//! current entry; Ctrl-D exits.

use crate::scanner::Scanner;
use crate::token::TokenKind;
use crate::vm::{InterpretError, Lox};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::path::PathBuf;

/// True if `source` is an incomplete entry: more `(` than `)` or `{` than `}`, or an
/// unterminated string.
pub fn needs_more_input(source: &str) -> bool {
    let mut scanner = Scanner::new(source);
    let (mut parens, mut braces) = (0i64, 0i64);
    loop {
        let token = scanner.scan_token();
        match token.kind {
            TokenKind::LeftParen => parens += 1,
            TokenKind::RightParen => parens -= 1,
            TokenKind::LeftBrace => braces += 1,
            TokenKind::RightBrace => braces -= 1,
            TokenKind::Error if token.lexeme == "Unterminated string." => return true,
            TokenKind::Eof => break,
            _ => {}
        }
    }
    parens > 0 || braces > 0
}

fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".lox_history"))
}

/// Runs the prompt until end of input; returns the exit status.
pub fn run(lox: &mut Lox) -> u8 {
    let mut editor = match DefaultEditor::new() {
        Ok(editor) => editor,
        Err(e) => {
            eprintln!("lox: cannot start the line editor: {e}");
            return crate::cli::EXIT_IO_ERROR;
        }
    };
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    'entries: loop {
        let mut entry = String::new();
        let mut prompt = "> ";
        loop {
            match editor.readline(prompt) {
                Ok(line) => {
                    entry.push_str(&line);
                    entry.push('\n');
                    if !needs_more_input(&entry) {
                        break;
                    }
                    prompt = "... ";
                }
                Err(ReadlineError::Interrupted) => continue 'entries,
                Err(ReadlineError::Eof) => break 'entries,
                Err(e) => {
                    eprintln!("lox: {e}");
                    break 'entries;
                }
            }
        }
        if entry.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(entry.trim_end());
        match lox.interpret(&entry) {
            Ok(()) | Err(InterpretError::Runtime) => {}
            Err(InterpretError::Compile(errors)) => eprint!("{errors}"),
        }
        lox.flush();
    }
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    crate::cli::EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::needs_more_input;

    #[test]
    fn balanced_entries() {
        assert!(!needs_more_input("print 1;\n"));
        assert!(needs_more_input("fun f() {\n"));
        assert!(needs_more_input("print (1 +\n"));
        assert!(!needs_more_input("fun f() {\n return 1;\n}\n"));
        assert!(!needs_more_input("print \"{\";\n"));
        assert!(!needs_more_input("// {\n"));
        assert!(needs_more_input("print \"abc\n"));
        assert!(!needs_more_input("}\n"));
    }
}
