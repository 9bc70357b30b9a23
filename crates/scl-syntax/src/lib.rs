//! The syntax of SCL: the hand-written lexer, the hand-written
//! recursive-descent parser with error recovery, the AST and the lossless
//! trivia table. This crate knows nothing about salsa, types or evaluation.
//!
//! Invariant: [`parse`] never fails and never panics. It returns a tree for
//! any input, plus the syntax errors it recovered from.

pub mod ast;
mod lexer;
mod parser;
pub mod trivia;

pub use lexer::{is_keyword, lex, Token, TokenKind};
pub use parser::{parse, parse_tree};
pub use trivia::{Piece, PieceKind, Trivia};

/// The deepest nesting the syntax accepts: brackets (`( [ { ${`) and `if`
/// constructs, each up to this many levels (`E0007` beyond). Chains of one
/// operator, postfix chains and `with` chains are flat and have no limit.
/// The later stages recurse once per level, so this bounds the stack every
/// stage needs (see `scl_db::with_compiler_stack`).
pub const MAX_NESTING: usize = 256;

use scl_diag::Diagnostic;
use std::sync::Arc;

/// The result of parsing one file: the tree (always present), the syntax
/// errors (codes `E0001`–`E0007`, `E0010`, `E0011`; their `file` is empty
/// until the caller fills it in) and the lossless text table (every byte of
/// the file, see [`trivia`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Parse {
    pub module: Arc<ast::Module>,
    pub errors: Vec<Diagnostic>,
    pub trivia: Arc<Trivia>,
}

/// A [`Parse`] without the trivia table ([`parser::parse_tree`]): the tree
/// and the syntax errors, the same as [`parse`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    pub module: Arc<ast::Module>,
    pub errors: Vec<Diagnostic>,
}
