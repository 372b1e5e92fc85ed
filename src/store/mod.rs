//! Storing: the run document, one typed record per variant built from the
//! analysis (`results`), and the SQLite history of runs (`history`).

pub mod history;
pub mod results;
