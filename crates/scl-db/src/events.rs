//! What salsa did: the queries it ran and the results it re-used, for the
//! tests that pin down what an edit re-computes (a comment anywhere
//! re-evaluates nothing; an edit inside one env re-evaluates that env and
//! what uses it).

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
}

impl EventLog {
    pub(crate) fn record(&self, e: &salsa::Event) {
        match &e.kind {
            salsa::EventKind::WillExecute { database_key } => {
                // The query's name is its ingredient's debug name, read
                // through the database attached while salsa runs it.
                let name = format!("{database_key:?}");
                let query = name.split('(').next().unwrap_or("").to_string();
                self.executed.lock().unwrap().push(Executed {
                    query,
                    key: database_key.key_index(),
                });
            }
            salsa::EventKind::DidValidateMemoizedValue { .. } => {
                self.validated.fetch_add(1, Ordering::Relaxed);
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
}
