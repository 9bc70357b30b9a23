//! What salsa did: the queries it ran and the results it re-used, for the
//! tests that pin down what an edit re-computes (a comment anywhere
//! re-evaluates nothing; an edit inside one env re-evaluates that env and
//! what uses it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One query execution: the query's name (`decl_value`, `parse`, …) and
/// the salsa id of its key (compare with `salsa::plumbing::AsId::as_id`
/// of the key, e.g. a [`crate::DeclId`] or a [`crate::SourceFile`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executed {
    pub query: String,
    pub key: salsa::Id,
}

/// The events of a database made with
/// [`crate::Database::with_event_log`], since the last [`EventLog::take`].
#[derive(Default)]
pub struct EventLog {
    executed: Mutex<Vec<Executed>>,
    validated: AtomicUsize,
    validated_by_query: Mutex<BTreeMap<String, usize>>,
}

/// A query's name: its ingredient's debug name, read through the database
/// attached while salsa runs it (`decl_value(Id(..))` → `decl_value`).
fn query_name(key: &salsa::DatabaseKeyIndex) -> String {
    let name = format!("{key:?}");
    name.split('(').next().unwrap_or("").to_string()
}

impl EventLog {
    pub(crate) fn record(&self, e: &salsa::Event) {
        match &e.kind {
            salsa::EventKind::WillExecute { database_key } => {
                self.executed.lock().unwrap().push(Executed {
                    query: query_name(database_key),
                    key: database_key.key_index(),
                });
            }
            salsa::EventKind::DidValidateMemoizedValue { database_key } => {
                self.validated.fetch_add(1, Ordering::Relaxed);
                *self
                    .validated_by_query
                    .lock()
                    .unwrap()
                    .entry(query_name(database_key))
                    .or_default() += 1;
            }
            _ => {}
        }
    }

    /// The queries run since the last call, in order, and how many
    /// memoized results salsa verified and re-used instead of running.
    pub fn take(&self) -> (Vec<Executed>, usize) {
        let run = std::mem::take(&mut *self.executed.lock().unwrap());
        (run, self.validated.swap(0, Ordering::Relaxed))
    }

    /// How many memoized results of each query salsa verified and re-used
    /// since the last call (by query name; [`EventLog::take`] leaves these
    /// counts alone): what a re-check costs besides the queries it runs.
    pub fn take_validated_by_query(&self) -> BTreeMap<String, usize> {
        std::mem::take(&mut *self.validated_by_query.lock().unwrap())
    }
}
