//! The syntax of SCL: lexer, parser (chumsky 0.13) with error recovery, and
//! the AST. This crate knows nothing about salsa, types or evaluation.
//!
//! Invariant: [`parse`] never fails and never panics. It returns a tree for
//! any input, plus the syntax errors it recovered from.

pub mod ast;
mod lexer;
mod parser;

pub use lexer::{is_keyword, lex, Token, TokenKind};
pub use parser::parse;

use scl_diag::Diagnostic;
use std::sync::Arc;

/// The result of parsing one file: the tree (always present) and the syntax
/// errors (codes `E0001`–`E0006`; their `file` is empty until the caller
/// fills it in).
#[derive(Clone, Debug, PartialEq)]
pub struct Parse {
    pub module: Arc<ast::Module>,
    pub errors: Vec<Diagnostic>,
}
