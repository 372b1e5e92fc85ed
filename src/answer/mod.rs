//! The answer a run's document gives: the toll per line with the records
//! it stands on (`summary`), the batch a latency budget allows (`advice`),
//! the return toll (`returns`), the kernel's price list (`prices`) and each
//! attack vector's price (`vectors`). Every reader works it out of the
//! document again; the document stores only what a later read could not
//! make alike, the budget asked and the history of the day being gone
//! (`results::answered`).

pub mod advice;
pub mod prices;
pub mod returns;
pub mod summary;
pub mod vectors;

use crate::store::results::RunDocument;

/// Notes on the rows a reader could take for what they are not: a refill
/// of a toll the run did not find (`returns::note_refill_rows`), a replay
/// of a sequence this kernel does not run here (`prices::note_replays`).
pub fn note_rows_a_reader_could_misread(doc: &mut RunDocument) {
    returns::note_refill_rows(doc);
    prices::note_replays(doc);
}
