//! How runs and sides are named on the command line, and found.

use super::{History, HistoryError};
use crate::store::results::RunDocument;
use crate::store::results::load;
use std::path::PathBuf;

/// How a run is named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// `last` (0) or `last~N`.
    Last(u64),
    Id(i64),
    File(PathBuf),
}

impl RunRef {
    pub fn parse(text: &str) -> Result<RunRef, String> {
        if text == "last" {
            return Ok(RunRef::Last(0));
        }
        if let Some(back) = text.strip_prefix("last~") {
            return back
                .parse()
                .map(RunRef::Last)
                .map_err(|_| format!("'{text}': after last~ comes a whole number of runs back"));
        }
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return text
                .parse()
                .map(RunRef::Id)
                .map_err(|_| format!("'{text}' is too large for a run id"));
        }
        if text.is_empty() {
            return Err("a run is named by an id, last, last~N or a JSON file".into());
        }
        Ok(RunRef::File(PathBuf::from(text)))
    }

    /// The run this names: read from the file, or from `history`.
    pub fn resolve(&self, history: Option<&History>) -> Result<RunDocument, HistoryError> {
        let history = || history.ok_or(HistoryError::NoSuchRun(self.to_string()));
        match self {
            RunRef::File(path) => Ok(load::document_from_file(path)?),
            RunRef::Id(id) => history()?.load(*id),
            RunRef::Last(back) => {
                let history = history()?;
                history.load(history.nth_last(*back)?)
            }
        }
    }
}

/// One side of a comparison as the command line names it: one run, a
/// range of the history (`last~9..last~5`, `12..15`), or several runs
/// separated by commas (`a.json,b.json,c.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideRef {
    Runs(Vec<RunRef>),
    Range(RunRef, RunRef),
}

impl SideRef {
    pub fn parse(text: &str) -> Result<SideRef, String> {
        // A range is two history names; a path with ".." in it is a file.
        if let Some((from, to)) = text.split_once("..") {
            let (from, to) = (RunRef::parse(from), RunRef::parse(to));
            if let (Ok(from), Ok(to)) = (&from, &to)
                && !matches!(from, RunRef::File(_))
                && !matches!(to, RunRef::File(_))
            {
                return Ok(SideRef::Range(from.clone(), to.clone()));
            }
        }
        text.split(',')
            .map(RunRef::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(SideRef::Runs)
    }

    /// Whether naming it needs the history (a name that is not a file).
    pub fn needs_history(&self) -> bool {
        match self {
            SideRef::Range(..) => true,
            SideRef::Runs(runs) => runs.iter().any(|r| !matches!(r, RunRef::File(_))),
        }
    }

    /// The runs it names, oldest first for a range.
    pub fn resolve(&self, history: Option<&History>) -> Result<Vec<RunDocument>, HistoryError> {
        match self {
            SideRef::Runs(runs) => runs.iter().map(|r| r.resolve(history)).collect(),
            SideRef::Range(from, to) => {
                let history = history.ok_or_else(|| HistoryError::NoSuchRun(self.to_string()))?;
                let ids = history.ids_between(history.id_of(from)?, history.id_of(to)?)?;
                ids.into_iter().map(|id| history.load(id)).collect()
            }
        }
    }
}

impl std::fmt::Display for SideRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SideRef::Range(from, to) => write!(f, "{from}..{to}"),
            SideRef::Runs(runs) => {
                let names: Vec<String> = runs.iter().map(ToString::to_string).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

impl std::fmt::Display for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunRef::Last(0) => f.write_str("last"),
            RunRef::Last(n) => write!(f, "last~{n}"),
            RunRef::Id(id) => write!(f, "{id}"),
            RunRef::File(path) => write!(f, "{}", path.display()),
        }
    }
}
