//! What measuring a variant gives back: a measurement with the CPUs it ran
//! on, its notes and extra figures; or an interruption; or why it could
//! not run.

use super::Unsupported;
use crate::analysis::figure::Figure;
use crate::harness::Measurement;
use serde::{Deserialize, Serialize};

/// A successful measurement and the facts needed to read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    pub measurement: Measurement,
    /// Every CPU the measured work ran on, measuring thread first.
    pub cpus: Vec<usize>,
    /// What the reader should know about this measurement.
    pub notes: Vec<String>,
    /// Figures measured beside the cost per item (a co-runner's latency,
    /// yields per item), each named with its unit.
    pub figures: Vec<NamedFigure>,
    /// For a probe that keeps a thread of its own on another CPU: the share
    /// of the measurement during which that thread made no progress (on a
    /// guest, its vCPU descheduled by the host), 0 to 1. Such a round ran
    /// in another host state ([`crate::schedule::Round::partner_away`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_stalled: Option<f64>,
}

/// A figure a probe measured beside the harness's cost per item: the one
/// figure type (its value, and in a record the 95% interval of the median
/// over rounds, from five rounds on), named, with its unit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NamedFigure {
    pub name: String,
    #[serde(flatten)]
    pub figure: Figure,
    pub unit: String,
    /// What a reader of the results may use the figure for beyond showing it.
    #[serde(default, skip_serializing_if = "FigureRole::is_plain")]
    pub role: FigureRole,
}

/// What a figure is to the results beyond its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureRole {
    #[default]
    Plain,
    /// The 99th percentile of how long a co-runner on the measured CPU
    /// waited for it, in µs: what the latency advice reads.
    CoRunnerWaitP99,
}

impl FigureRole {
    fn is_plain(&self) -> bool {
        *self == FigureRole::Plain
    }
}

impl NamedFigure {
    pub fn new(name: &str, value: f64, unit: &str) -> NamedFigure {
        NamedFigure {
            name: name.to_string(),
            figure: Figure::new(value, None),
            unit: unit.to_string(),
            role: FigureRole::Plain,
        }
    }

    /// The p99 of a same-CPU co-runner's wait, in µs.
    pub fn co_runner_wait_p99(name: &str, us: f64) -> NamedFigure {
        NamedFigure {
            role: FigureRole::CoRunnerWaitP99,
            ..NamedFigure::new(name, us, " us")
        }
    }
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Measured(Box<Measured>),
    Unsupported(Unsupported),
    Interrupted,
}

impl Outcome {
    /// The usual outcome: a harness result on the measuring CPU alone.
    pub fn on_cpus(measurement: Option<Measurement>, cpus: Vec<usize>) -> Outcome {
        match measurement {
            Some(measurement) => Outcome::Measured(Box::new(Measured {
                measurement,
                cpus,
                notes: Vec::new(),
                figures: Vec::new(),
                partner_stalled: None,
            })),
            None => Outcome::Interrupted,
        }
    }

    /// A measurement with how long the thread it kept on another CPU
    /// stalled ([`Measured::partner_stalled`]); any other outcome as it is.
    pub fn with_partner_stalled(self, share: f64) -> Outcome {
        match self {
            Outcome::Measured(mut measured) => {
                measured.partner_stalled = Some(share);
                Outcome::Measured(measured)
            }
            other => other,
        }
    }
}

/// Measures on a thread of its own, pinned to `cpu`, for probes that change
/// per-task state (a seccomp filter, a speculation control): the state ends
/// with the thread, and the process that goes on measuring never carries
/// it. `work` returns the measurement (None when interrupted) and notes, or
/// why it could not run.
pub fn measure_in_own_thread<W>(cpu: usize, work: W) -> Outcome
where
    W: FnOnce() -> Result<(Option<Measurement>, Vec<String>), Unsupported> + Send,
{
    let result = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                crate::harness::affinity::pin_current_thread_forever(cpu)
                    .map_err(|e| Unsupported::io("sched_setaffinity", &e))?;
                work()
            })
            .join()
            .unwrap_or_else(|_| Err(Unsupported::probe_failed("the measuring thread panicked")))
    });
    match result {
        Ok((Some(measurement), notes)) => Outcome::Measured(Box::new(Measured {
            measurement,
            cpus: vec![cpu],
            notes,
            figures: Vec::new(),
            partner_stalled: None,
        })),
        Ok((None, _)) => Outcome::Interrupted,
        Err(reason) => Outcome::Unsupported(reason),
    }
}
