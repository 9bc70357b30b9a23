//! The static type checker: gives every expression of a module one type
//! without evaluating or instantiating anything (the book's "Typing rules"
//! chapter, `book/src/reference/typing.md`). It checks the bodies of
//! templates at their declared parameter types, functions against their
//! return types, `let`s, `param` defaults and `where` clauses, both blocks
//! of every `if`, comprehensions and env bodies against the Env schema.
//!
//! Entry: [`type_module`] → [`Typed`] (diagnostics, the type of every
//! expression by span for hover, and the declarations' types that importers
//! see). Other modules' declaration types come through [`ImportTypes`], so
//! this crate stays free of salsa; the database implements it with a query.
//!
//! Cost: one pass over the syntax tree, each expression typed once; a
//! declaration's type is computed once, in dependency order (no recursion
//! along `let` chains).
//!
//! Files: [`types`] (the types, `fits`, `join`), `infer` (expressions),
//! `items` (env bodies, record literals), `calls` (calls of functions,
//! templates and builtins), `decls` (declarations and their order),
//! `messages` (mismatch messages and their hints).

mod calls;
mod decls;
mod infer;
mod items;
mod messages;
pub mod types;

pub use types::{fits, join, ModuleTypes, Param, Signature, Type};

use scl_diag::{Diagnostic, Span};
use scl_syntax::ast::{Decl, Module};
use std::sync::Arc;

/// What the checker needs from outside the module.
pub trait ImportTypes {
    /// The declaration types of the module imported by the `import`
    /// declaration at index `decl`, or `None` when the import did not
    /// resolve (already reported) or is part of a cycle.
    fn import_types(&self, decl: usize) -> Option<Arc<ModuleTypes>>;
}

/// No imports resolve: imported names have no known type (and are not
/// checked). What [`crate::check_module`] uses when it is given the syntax
/// tree only.
pub struct NoImports;

impl ImportTypes for NoImports {
    fn import_types(&self, _decl: usize) -> Option<Arc<ModuleTypes>> {
        None
    }
}

/// The inputs of [`type_module`] besides the syntax tree.
pub struct Context<'a> {
    /// The module's text, for quoting what was written in messages (may be
    /// empty: then nothing is quoted).
    pub text: &'a str,
    pub imports: &'a dyn ImportTypes,
    /// Where an anchored span of the declarations is in `text` (see
    /// `scl_diag::Span`), for quoting it; `None` when the declarations'
    /// spans are absolute. The diagnostics keep the spans as the
    /// declarations have them.
    pub absolute: Option<&'a dyn Fn(Span) -> Span>,
}

/// The declarations of one module as the static pass reads them, in
/// order, each with whether it had a syntax error of its own (a recovered
/// declaration: see `Module::recovered`; it is not checked, and what uses
/// it is not checked against it). A list of references: the database
/// checks its anchored declarations where they are kept, without a copy.
pub struct Declarations<'a> {
    pub list: Vec<&'a Decl>,
    /// By declaration index.
    pub recovered: Vec<bool>,
}

impl<'a> Declarations<'a> {
    /// The declarations of a parsed module (absolute spans), recovered
    /// where a span of `module.recovered` overlaps them
    /// (`Module::recovered_ranges`, the outline's rule).
    pub fn of(module: &'a Module) -> Declarations<'a> {
        let ranges = module.recovered_ranges();
        Declarations {
            list: module.decls.iter().collect(),
            recovered: module
                .decls
                .iter()
                .map(|d| {
                    let s = d.span();
                    ranges.overlaps(s.start, s.end.max(s.start + 1))
                })
                .collect(),
        }
    }
}

/// The type of every expression of a module, by span.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeTable {
    /// `(span, type)` of every typed expression, in the order they were
    /// typed (an expression's parts may come before or after it).
    pub entries: Vec<(Span, Type)>,
}

impl TypeTable {
    /// The type of the innermost expression whose span contains byte
    /// `offset`; when none does, of the innermost one that ends there (a
    /// cursor just after a name finds the name). O(number of expressions).
    pub fn type_at(&self, offset: u32) -> Option<&Type> {
        let innermost = |inside: &dyn Fn(&Span) -> bool| {
            self.entries
                .iter()
                .filter(|(s, _)| inside(s))
                .min_by_key(|(s, _)| s.end - s.start)
                .map(|(_, t)| t)
        };
        innermost(&|s| s.start <= offset && offset < s.end)
            .or_else(|| innermost(&|s| s.start < offset && offset == s.end))
    }
}

/// The result of [`type_module`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Typed {
    /// Type errors; their files are left empty (the caller sets them).
    pub diagnostics: Vec<Diagnostic>,
    pub types: TypeTable,
    /// The types of the top-level declarations (what an importer sees);
    /// [`ModuleTypes::path`] is left empty for the caller to set.
    pub signatures: ModuleTypes,
}

impl Typed {
    /// The type of the innermost expression at byte `offset`, for hover.
    pub fn type_at(&self, offset: u32) -> Option<&Type> {
        self.types.type_at(offset)
    }
}

/// Type-checks one module. Names that are unknown, types that are unknown
/// and recursion are the static pass's other checks
/// ([`crate::check_module`]); this one says nothing about them.
pub fn type_module(module: &Module, cx: &Context) -> Typed {
    decls::check(&Declarations::of(module), cx)
}

/// [`type_module`] on a list of declarations (anchored ones among them:
/// the diagnostics and the table keep the spans the declarations have).
pub fn type_declarations(decls: &Declarations, cx: &Context) -> Typed {
    decls::check(decls, cx)
}

#[cfg(test)]
mod tests;
