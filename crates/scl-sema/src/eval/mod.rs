//! The evaluator: module declarations on demand, expressions with an expected
//! type (bidirectional, so enum literals and record literals know their
//! type), and envs by applying their linearized layers to an empty record.
//!
//! One idea per file: [`module`] (a module's declarations in dependency
//! order), [`decls`] (one declaration, cycles), [`params`] (`param` with
//! `--set` and `where`), [`names`] (names, members, type expressions),
//! [`expr`] (expressions and operators), [`calls`] (functions, templates,
//! arguments), [`linearize`] (an env's layers), [`fixpoint`] (an env's final
//! value, the `self` fixpoint), [`diamond`] (the diamond rule), [`apply`]
//! (applying an env body's items), [`builder`] (the record being built, with
//! its writes and provenance), [`coerce`] (checking a value against a type),
//! [`equality`] (`==`), [`paths`] (values at a path), [`budget`] (charging steps
//! and bytes against [`crate::limits`]).

use crate::builtins;
use crate::normalize;
use crate::ty::{EnumDef, RecordTy, Ty};
use crate::value::*;
use crate::{Host, ModuleId, ModuleValues};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use scl_diag::{did_you_mean, Diagnostic, Span};
use scl_ir::{path::Seg, FieldPath};
use scl_syntax::ast::Name;
use scl_syntax::ast::{self, AssignOp, BinaryOp, Decl, ExprKind, ItemKind, UnaryOp};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;

mod apply;
mod budget;
mod builder;
mod calls;
mod coerce;
mod decls;
mod diamond;
mod equality;
mod expr;
mod fixpoint;
mod linearize;
mod module;
mod names;
mod params;
mod paths;

pub(crate) use self::equality::values_equal;
pub use self::fixpoint::MAX_SELF_ROUNDS;
pub(crate) use self::module::evaluation_order;
pub use self::module::{
    assemble_module, evaluate_cyclic, evaluate_decl, unknown_overrides, CyclicValues, DeclOutcome,
    Spent,
};
use self::{apply::*, builder::*, decls::*, equality::*, fixpoint::*, paths::*};
pub(crate) use crate::limits::*;
pub(crate) use crate::outcome::{all_ok, Reported, R};

/// The context of one expression: the module its names resolve in, local
/// bindings (arguments, comprehension variables), and `self`.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a> {
    pub module: ModuleId,
    pub locals: &'a [(Name, Value)],
    pub selfcx: Option<&'a SelfCx>,
}

pub(crate) struct Evaluator<'h> {
    pub host: &'h dyn Host,
    pub root: ModuleId,
    /// The outline of the root module.
    pub items: Arc<crate::Items>,
    /// The declaration this evaluation is for ([`evaluate_decl`]), or
    /// `None` for the declarations on cycles ([`evaluate_cyclic`]): which
    /// declarations are computed here, the rest coming from the host.
    own: Option<usize>,
    /// The declarations computed here (one, for [`evaluate_decl`]), by index.
    slots: RefCell<HashMap<usize, Slot>>,
    pub diags: RefCell<Vec<Diagnostic>>,
    env_stack: RefCell<Vec<String>>,
    finals: RefCell<HashMap<usize, R<Arc<FinalEnv>>>>,
    depth: Cell<u32>,
    /// Functions and templates being called: calling one again is recursion.
    calls: RefCell<Vec<(ModuleId, usize)>>,
    /// Envs whose final value is being computed.
    finalizing: RefCell<Vec<Arc<EnvValue>>>,
    /// Whether the budget ran out (E0316 is reported once).
    exhausted: Cell<bool>,
    /// The root module's declarations whose cost was added to this
    /// evaluation's (see [`Evaluator::decl_value`]).
    charged: RefCell<HashSet<usize>>,
    /// Evaluation steps taken, against [`MAX_STEPS`].
    steps: Cell<u64>,
    /// Bytes of strings and lists produced so far, against [`MAX_PRODUCED`].
    produced: Cell<u64>,
    /// Where code of another module is being used (a call, an inherited
    /// template instance): module, span and what to call it in a label.
    uses: RefCell<Vec<(ModuleId, Span, String)>>,
    /// Set once `self` is read: only then can a value be (or hold) `Pending`.
    self_seen: Cell<bool>,
    /// [`Evaluator::pending`] of large lists and records, by address.
    pending_known: RefCell<HashMap<usize, (Value, bool)>>,
    /// While a `--set` value is evaluated: the text its spans point into
    /// (`let __set = VALUE`), not the module's.
    set_text: RefCell<Option<Arc<str>>>,
    /// The did-you-mean budget of the evaluation (see [`Evaluator::suggest`]).
    suggestions: RefCell<scl_diag::Suggestions>,
}

impl<'h> Evaluator<'h> {
    fn new(host: &'h dyn Host, m: ModuleId, own: Option<usize>) -> Self {
        let items = host.items(m);
        Evaluator {
            host,
            root: m,
            items,
            own,
            slots: RefCell::default(),
            diags: RefCell::new(Vec::new()),
            env_stack: RefCell::new(Vec::new()),
            finals: RefCell::new(HashMap::default()),
            depth: Cell::new(0),
            calls: RefCell::new(Vec::new()),
            finalizing: RefCell::new(Vec::new()),
            exhausted: Cell::new(false),
            charged: RefCell::default(),
            steps: Cell::new(0),
            produced: Cell::new(0),
            uses: RefCell::new(Vec::new()),
            suggestions: RefCell::default(),
            self_seen: Cell::new(false),
            pending_known: RefCell::default(),
            set_text: RefCell::default(),
        }
    }

    /// Records a diagnostic located in module `m` and returns `Reported`.
    ///
    /// A diagnostic met inside code of another module (a function body, a
    /// template's body, parents or default arguments, evaluated for a use in
    /// this module) points at that use: its primary location is the call
    /// or `extends` in this module's file, where the user can act (and where
    /// a CI annotation lands), and the place inside the other module is a
    /// label ("this key", or what the diagnostic said there).
    pub fn report(&self, m: ModuleId, d: Diagnostic) -> Reported {
        let d = if m == self.root {
            d
        } else {
            let used = self
                .uses
                .borrow()
                .iter()
                .rev()
                .find(|u| u.0 == self.root)
                .cloned();
            let mut d = d.in_file(&self.host.display_path(m));
            if let Some((_, span, what)) = used {
                let inside = std::mem::replace(
                    &mut d.at,
                    scl_diag::Location {
                        file: self.host.display_path(self.root),
                        span,
                    },
                );
                let label = d
                    .primary_label
                    .replace(what)
                    .unwrap_or_else(|| "here".into());
                d.labels.insert(
                    0,
                    scl_diag::Label {
                        at: inside,
                        message: label,
                    },
                );
            }
            d
        };
        self.diags.borrow_mut().push(d);
        Reported
    }

    /// A did-you-mean for `name` among `candidates` (made only if needed),
    /// within the evaluation's budget ([`scl_diag::Suggestions`]): each
    /// costs a pass over the candidates, which can be every name of a large
    /// module.
    fn suggest<'c>(
        &self,
        name: &str,
        candidates: impl FnOnce() -> Vec<&'c str>,
    ) -> Option<&'c str> {
        self.suggestions.borrow_mut().suggest(name, candidates)
    }

    /// Runs `f` with `(module, span, what)` on the stack of places where
    /// another module's code is being used (see [`Evaluator::report`]).
    fn using<T>(
        &self,
        module: ModuleId,
        span: Span,
        what: impl FnOnce() -> String,
        f: impl FnOnce() -> T,
    ) -> T {
        self.uses.borrow_mut().push((module, span, what()));
        let r = f();
        self.uses.borrow_mut().pop();
        r
    }

    pub fn err<T>(
        &self,
        m: ModuleId,
        code: &'static str,
        span: Span,
        msg: impl Into<String>,
    ) -> R<T> {
        Err(self.report(m, Diagnostic::error(code, span, msg)))
    }

    pub fn warn(
        &self,
        m: ModuleId,
        code: &'static str,
        span: Span,
        msg: impl Into<String>,
        help: &str,
    ) {
        let mut d = Diagnostic::warning(code, span, msg);
        if !help.is_empty() {
            d = d.with_help(help);
        }
        self.report(m, d);
    }

    /// Declaration `decl` of module `m`, anchored (from the host: reading
    /// it is what makes a query depend on its text).
    fn decl_ast(&self, m: ModuleId, decl: usize) -> Arc<crate::AnchoredDecl> {
        self.host.decl(m, decl)
    }

    /// What this evaluation spent of the budget.
    fn spent(&self) -> Spent {
        Spent {
            produced: self.produced.get(),
            steps: self.steps.get(),
        }
    }

    /// The diagnostics reported so far, in the root module's file, each
    /// once.
    fn take_diagnostics(self) -> Vec<Diagnostic> {
        let file = self.host.display_path(self.root);
        let mut seen = HashSet::default();
        self.diags
            .into_inner()
            .into_iter()
            .map(|d| d.in_file(&file))
            .filter(|d| seen.insert((d.code, d.at.clone(), d.message.clone())))
            .collect()
    }
}

/// "a list", "an Int", "an enum literal": the type name with its article.
fn a_type(name: &str) -> String {
    let vowel = name
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// The keys of a map for a help line: at most 12, in the map's order; when
/// every key is a dotted version (`"2.1.2"`), in numeric order and, past 12,
/// the newest (`…, "2.10.0", "2.11.0"`), not the first in text order.
fn keys_list(r: &Record) -> String {
    use scl_domain::version::Dotted;
    const SHOWN: usize = 12;
    let mut versions: Option<Vec<(Dotted, &str)>> =
        r.keys().map(|k| Some((Dotted::parse(k)?, &**k))).collect();
    let ks: Vec<String> = match versions.as_mut() {
        Some(vs) if !vs.is_empty() => {
            vs.sort();
            let from = vs.len().saturating_sub(SHOWN);
            let mut ks: Vec<String> = vs[from..].iter().map(|(_, k)| format!("{k:?}")).collect();
            if from > 0 {
                ks.insert(0, "…".into());
            }
            ks
        }
        _ => {
            let mut ks: Vec<String> = r.keys().map(|k| format!("{k:?}")).take(SHOWN).collect();
            if r.len() > SHOWN {
                ks.push("…".into());
            }
            ks
        }
    };
    ks.join(", ")
}
