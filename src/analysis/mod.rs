//! The statistical model, in one room: from a round's samples to the
//! figure a row prints, its interval for the next run, and how far a row
//! moves between runs when nothing changed. Pure: it reads numbers and
//! returns numbers, never a clock, a process or a document, so the harness
//! (which times rounds), the results (which hold the document) and
//! compare, attribute and tax (which read documents) all stand on it.
//!
//! - [`stats`]: quantiles, bootstraps, fits, Student's t.
//! - [`round`]: one round's figure from its timed batches.
//! - [`phases`]: a round's phases, each a cost per item and a share.
//! - [`states`]: the machine's speed states and drift, read from the canary.
//! - [`slow_state`]: whether the slow state moves a row, read from its rounds.
//! - [`rounds`]: a variant's headline and interval over its rounds and forks,
//!   and the paired comparison with its baseline.
//! - [`redrawn`]: the next run's figure drawn again from this run's rounds.
//! - [`speed`]: figures at one reference speed: the machine's own speed taken out.
//! - [`spread`]: how far the next run's figure may land, from the forks.
//! - [`figure`]: a record's figure and interval put together.
//! - [`combine`]: sums and differences of figures measured apart.
//! - [`contrast`]: one weighted sum of sets' figures and every level of its noise.
//! - [`noise`]: the between-run noise a verdict is held to ([`noise::RowNoise`]).
//! - [`verdict`]: a change and the verdict its interval and the threshold give.
//! - [`changes`]: change points in one row's series over a machine's runs.

pub mod changes;
pub mod combine;
pub mod contrast;
pub mod figure;
pub mod interval;
pub mod noise;
pub mod phases;
pub mod redrawn;
pub mod round;
pub mod rounds;
pub mod slow_state;
pub mod speed;
pub mod spread;
pub mod states;
pub mod stats;
pub mod verdict;
