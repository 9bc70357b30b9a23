//! The position-independent outline of a module: its declarations' names,
//! kinds and import paths, in order, and which of them can be evaluated on
//! their own. Compared by value, so an edit that changes no name (a comment,
//! a body, blank lines) leaves it equal and re-runs nothing that reads it.

use crate::eval::evaluation_order;
use rustc_hash::FxHashMap as HashMap;
use scl_syntax::ast::Name;
use scl_syntax::ast::{self, Decl};

/// What a declaration is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeclKind {
    Import,
    Param,
    Let,
    Enum,
    Fn,
    /// A plain env: built or checked, with a final value.
    Env,
    /// An env with parameters.
    Template,
}

/// One declaration of the outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemInfo {
    pub name: String,
    /// How many earlier declarations have the same name (0 but for
    /// duplicates): with the name, what anchors the declaration's spans.
    pub occurrence: u32,
    pub kind: DeclKind,
    /// The import path as written, for imports.
    pub import: Option<Name>,
    /// Whether the declaration's value needs no cycle of declarations of
    /// this module (see [`Items::clean`]).
    pub clean: bool,
    /// Whether it has a syntax error of its own (`ast::Module::recovered`).
    pub recovered: bool,
}

/// A module's outline (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Items {
    pub items: Vec<ItemInfo>,
    /// The first declaration of each name, for an outline of more than
    /// [`Items::INDEXED`] declarations (empty for a smaller one, which
    /// [`Items::get`] scans: every module keeps its outline, and most
    /// declare a handful of names).
    pub index: HashMap<String, usize>,
    /// The clean declarations, each after every declaration of the module
    /// it names: evaluated in this order, evaluating one never recurses
    /// into another (a chain of 5,000 `extends` costs no stack).
    pub order: Vec<usize>,
}

impl Items {
    /// The outline of a parsed module.
    pub fn of(module: &ast::Module) -> Items {
        let mut index = HashMap::default();
        let mut seen: HashMap<&str, u32> = HashMap::default();
        let mut items = Vec::with_capacity(module.decls.len());
        let recovered_at = module.recovered_ranges();
        for (i, d) in module.decls.iter().enumerate() {
            let name = d.name().name.as_str();
            index.entry(name.to_string()).or_insert(i);
            let k = seen.entry(name).or_insert(0);
            let occurrence = *k;
            *k += 1;
            let (kind, import) = match d {
                Decl::Import(imp) => (DeclKind::Import, Some(imp.path.clone())),
                Decl::Param(_) => (DeclKind::Param, None),
                Decl::Let(_) => (DeclKind::Let, None),
                Decl::Enum(_) => (DeclKind::Enum, None),
                Decl::Fn(_) => (DeclKind::Fn, None),
                Decl::Env(e) if e.params.is_some() => (DeclKind::Template, None),
                Decl::Env(_) => (DeclKind::Env, None),
            };
            let s = d.span();
            let recovered = recovered_at.overlaps(s.start, s.end.max(s.start + 1));
            items.push(ItemInfo {
                name: name.to_string(),
                occurrence,
                kind,
                import,
                clean: false,
                recovered,
            });
        }
        let order = evaluation_order(module, &index);
        for &i in &order {
            items[i].clean = true;
        }
        if items.len() <= Items::INDEXED {
            index = HashMap::default();
        }
        Items {
            items,
            index,
            order,
        }
    }

    /// Whether declaration `i` is evaluated on its own: it is on no cycle
    /// of references between this module's declarations and reaches none.
    /// The others are evaluated together, in declaration order, so that a
    /// cycle is reported where the user reads it first.
    pub fn clean(&self, i: usize) -> bool {
        self.items.get(i).is_some_and(|x| x.clean)
    }

    /// Whether every declaration is [`Items::clean`]: the module has
    /// nothing to evaluate together.
    pub fn all_clean(&self) -> bool {
        self.items.iter().all(|x| x.clean)
    }

    /// How many declarations an outline has at most without an index.
    pub const INDEXED: usize = 8;

    /// The first declaration named `name`.
    pub fn get(&self, name: &str) -> Option<usize> {
        if self.items.len() <= Items::INDEXED {
            return self.items.iter().position(|x| x.name == name);
        }
        self.index.get(name).copied()
    }

    /// The names, in declaration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.items.iter().map(|x| x.name.as_str())
    }
}

/// One declaration in its position- and layout-independent form
/// ([`Decl::anchored`]). Its source text is not part of it (a comment in
/// it would make it differ); messages that quote the source ask the host
/// ([`crate::Host::span_text`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AnchoredDecl {
    pub decl: Decl,
}
