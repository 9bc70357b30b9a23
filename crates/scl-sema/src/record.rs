//! The map behind a record value: [`Fields`] (defined with the IR, whose
//! `labels` and `vars` use it too), `BTreeMap`'s interface over a sorted
//! vector while small.

pub use scl_ir::fields::{Fields, IntoIter, Iter, IterMut, SMALL};
