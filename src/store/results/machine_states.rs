//! The machine's states as a run's document states them: the speed model
//! (`analysis::states`), the drift read over the run, the steal time, and
//! the one line under the tables.

use super::Record;
use super::speed::RunSpeed;
use crate::analysis::noise::RunTime;
use crate::analysis::spread::RunToRun;
use crate::analysis::states::{Drift, MIN_READINGS, StateModel, drift_blocks, drift_interval_pct};
use crate::analysis::stats::{max_of, median_of};
use crate::measure::schedule::gate::Waited;
use serde::{Deserialize, Serialize};

/// The run's states as the report states them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MachineStates {
    /// The workload timed between rounds.
    pub canary: String,
    #[serde(flatten)]
    pub model: StateModel,
    /// Slow state's canary over the quiet state's, when there are two.
    pub slowdown: Option<f64>,
    /// Percent of the measuring CPU's time over the run that the hypervisor
    /// ran something else (`steal` in /proc/stat); None where unreadable.
    pub steal_pct: Option<f64>,
    /// How far the machine's quiet speed moved over the run: the medians of
    /// the quiet canary readings in consecutive stretches of time, and their
    /// spread as a percentage of their median. A quiet state that drifts
    /// moves every figure with it, between runs as well as within one, and
    /// no interval from one run covers what comes after it.
    pub drift_block_medians: Vec<f64>,
    pub drift_pct: Option<f64>,
    /// How far a stretch's canary median strays from the canary's own
    /// sampling alone, percent (one standard deviation): the part of the
    /// steps between stretches that is not the speed moving. None in
    /// documents before it (their walk was read with it in).
    #[serde(default)]
    pub drift_sampling_pct: Option<f64>,
    /// 95% half-width, in percent, of how far the machine's quiet speed may
    /// move by the next run: the quiet speed wanders like a random walk, so
    /// the step between consecutive stretches of this run (the root mean
    /// square of the log ratios of their canary medians, leaving out steps
    /// beyond three deviations of the median step, so one odd stretch does
    /// not count as a walk, less what the medians' own sampling puts in
    /// every step, `drift_sampling_pct`) grows to sqrt(k)
    /// steps between one run of k stretches and the next, times Student's
    /// t for k - 1. Every figure's interval for the next run includes it
    /// (see `Cost::next_run_ticks`). None when the run had too few
    /// quiet readings for three stretches.
    #[serde(default)]
    pub drift_interval_pct: Option<f64>,
    /// The one line under the tables.
    pub summary: String,
    /// The reference beside the canary: the machine's own speed, read by
    /// work no mitigation touches. None in documents before it.
    #[serde(default)]
    pub reference: Option<ReferenceSpeed>,
    /// How long the rounds waited for the quiet level
    /// (`crate::measure::schedule::gate`); None in documents before it.
    #[serde(default)]
    pub waited: Option<Waited>,
    /// How far rows moved between the history's earlier runs of these
    /// conditions, read before the run; None where the history held too
    /// few (or none was kept), and the next run's floor is the stated
    /// share ([`MachineStates::floor_share`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_to_run: Option<RunToRun>,
}

/// Says how many rows and waits have floors of their own, wider than the
/// typical one, where any has.
fn own_floors(r: &RunToRun) -> Option<String> {
    let count = |n: usize, what: &str| match n {
        0 => None,
        1 => Some(format!("1 {what}")),
        n => Some(format!("{n} {what}s")),
    };
    let counted: Vec<String> = [count(r.rows.len(), "row"), count(r.waits.len(), "wait")]
        .into_iter()
        .flatten()
        .collect();
    (!counted.is_empty()).then(|| {
        format!(
            "; {} have floors of their own from their stored runs, wider than the typical one",
            counted.join(" and ")
        )
    })
}

/// The run's reference speed, how far it moved, and how much of the rows'
/// round-to-round variance it took out.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReferenceSpeed {
    pub description: String,
    /// The run's reference speed: the median reading, ticks per step. Every
    /// record's `cost.at_reference` is at this speed.
    pub ticks: f64,
    /// How far the machine's speed moved over the run: the medians of the
    /// reference beside the rounds the headlines use, in eight stretches of
    /// time, their spread (highest over lowest, less one) in percent.
    pub moved_pct: Option<f64>,
    /// Rows with a speed coefficient, and the median over them of the share
    /// of their rounds' variance the reference explains, percent.
    pub rows: usize,
    pub explained_pct: Option<f64>,
    /// The canary over the reference beside it: its medians in stretches
    /// of the run, and their sampling spread (percent); how far the
    /// syscall path's speed moved that the reference did not see.
    #[serde(default)]
    pub beyond_block_medians: Vec<f64>,
    #[serde(default)]
    pub beyond_sampling_pct: Option<f64>,
    /// Where the run showed two speed states: how much of the slow state's
    /// slowdown the reference did not see (the canary over the reference in
    /// the slow state against the quiet state's, percent), and whether the
    /// figures at the reference speed stand on the slow rounds too (the
    /// reference saw the state to within 0.5%).
    #[serde(default)]
    pub slow_state_unseen_pct: Option<f64>,
    #[serde(default)]
    pub slow_rounds_used: bool,
}

impl ReferenceSpeed {
    /// The reference of a run as `speed` read it, and the records made at
    /// it; None where the run read no reference.
    pub fn of(speed: &RunSpeed, records: &[Record]) -> Option<ReferenceSpeed> {
        let ticks = speed.reference?;
        let explained: Vec<f64> = records
            .iter()
            .filter_map(|r| r.cost.as_ref()?.at_reference?.explained_pct)
            .collect();
        Some(ReferenceSpeed {
            description: crate::measure::harness::reference::DESCRIPTION.to_string(),
            ticks,
            moved_pct: speed.moved_pct,
            rows: explained.len(),
            explained_pct: median_of(&explained),
            beyond_block_medians: speed.beyond.medians.clone(),
            beyond_sampling_pct: (!speed.beyond.medians.is_empty())
                .then(|| speed.beyond.sampling_var.sqrt() * 100.0),
            slow_state_unseen_pct: speed.slow_state_unseen.map(|u| u.exp_m1() * 100.0),
            slow_rounds_used: speed.sees_slow_state(),
        })
    }
}

/// The machine line's first part: the speed levels the canary read (or
/// the level it sat above), and the steal time.
fn levels_line(model: &StateModel, steal: &str) -> String {
    let slow_levels_pct = model.slow_levels_pct.filter(|_| model.two_states);
    match (slow_levels_pct, model.above_known_pct) {
        (_, Some(above)) => format!(
            "machine: the whole run sat above the quiet canary this boot read before ({:.0} \
             ticks), its fastest canary readings +{above:.0}% above it, and the canary came \
             back to that level when watched, or the watch was cut short: a host's slow \
             stretch as far as the run can tell, so every figure is that slow level's, its \
             interval reaching down to the quiet level (a run later tells a level that \
             stays); {steal}",
            model.quiet_canary,
        ),
        (Some(levels), None) => format!(
            "machine: a quiet level (canary {:.0} ticks, up to +{:.0}%) in {:.0}% of {} \
             readings, the rest in slow levels {}; {steal}",
            model.quiet_canary,
            model.quiet_band * 100.0,
            (1.0 - model.slow_share) * 100.0,
            model.readings,
            slow_levels(levels[0]..levels[1]),
        ),
        _ if model.readings < MIN_READINGS => format!(
            "machine: {} canary readings, too few to tell speed levels apart; {steal}",
            model.readings
        ),
        _ => format!(
            "machine: one speed level over {} canary readings ({:.0} ticks, up to +{:.0}%){}; \
             {steal}",
            model.readings,
            model.quiet_canary,
            model.quiet_band * 100.0,
            if model.slow_share > 0.0 {
                format!(
                    ", {:.1}% of them disturbed and left out",
                    model.slow_share * 100.0
                )
            } else {
                String::new()
            },
        ),
    }
}

impl MachineStates {
    /// `readings` and `times` (seconds into the run) are the run's canary
    /// readings in the order taken.
    pub fn new(
        model: StateModel,
        readings: &[f64],
        times: &[f64],
        steal_pct: Option<f64>,
        cpu: usize,
    ) -> MachineStates {
        let Drift {
            medians: drift_block_medians,
            sampling_var,
        } = drift_blocks(&model, readings, times);
        // (lowest, highest, spread as a percentage of their median)
        let drift = (drift_block_medians.len() >= 2).then(|| {
            let blocks = &drift_block_medians;
            let lo = blocks.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = max_of(blocks).unwrap_or(lo);
            let median = median_of(blocks).unwrap_or(1.0);
            (lo, hi, (hi - lo) / median * 100.0)
        });
        let steal = steal_pct.map_or_else(
            || "steal time unreadable".to_string(),
            |pct| format!("steal {pct:.1}% of CPU {cpu}'s time"),
        );
        let summary = levels_line(&model, &steal);
        // A sharp level above the boot's recent one: said as a finding,
        // since every figure of the run moved with it.
        let summary = match (model.moved_pct, model.known_quiet) {
            (Some(pct), Some(known)) => format!(
                "{summary}; the quiet level sat {pct:+.0}% above the one this boot's recent runs \
                 read ({known:.0} ticks): the canary never came back to it in the run and stayed \
                 above it for {:.0} s on end, longer than a host's slow stretch lasts, so the \
                 level moved (a cost added on the syscall path, or the host's speed), not a slow \
                 level; `mitbench compare` tells which rows moved with it",
                crate::measure::schedule::gate::LEVEL_MOVED_AFTER_S
            ),
            _ => summary,
        };
        let interval = drift_interval_pct(&drift_block_medians, sampling_var);
        let summary = match (drift, interval) {
            (Some((lo, hi, pct)), Some(within)) => format!(
                "{summary}; the quiet speed drifted {pct:.1}% over the run (canary medians of {} \
                 stretches {lo:.0}-{hi:.0} ticks), so every interval includes ±{within:.1}% for it",
                drift_block_medians.len(),
            ),
            _ => summary,
        };
        MachineStates {
            canary: crate::measure::harness::canary::DESCRIPTION.to_string(),
            slowdown: model.slowdown(),
            model,
            steal_pct,
            drift_sampling_pct: (!drift_block_medians.is_empty())
                .then(|| sampling_var.sqrt() * 100.0),
            drift_block_medians,
            drift_pct: drift.map(|(_, _, pct)| pct),
            drift_interval_pct: interval,
            summary,
            reference: None,
            waited: None,
            run_to_run: None,
        }
    }

    /// The share of a typical row no interval for the next run is narrower
    /// than (a row whose own stored runs say more has its own:
    /// `RunToRun::rows`).
    pub fn floor_share(&self) -> f64 {
        RunToRun::floor_share(self.run_to_run.as_ref())
    }

    /// Says how far the history's runs moved, where it read them.
    pub fn set_run_to_run(&mut self, run_to_run: Option<RunToRun>) {
        self.run_to_run = run_to_run;
        if let Some(r) = &self.run_to_run {
            self.summary += &format!(
                "; the {} runs of these conditions before it moved a row a median {:.2}% from one to \
                 the next, so no interval for the next run is under ±{:.1}%",
                r.runs,
                r.median_step * 100.0,
                self.floor_share() * 100.0
            );
            if let Some((step, floor)) = r.wait_median_step.zip(r.wait_floor()) {
                self.summary += &format!(
                    ", and a co-runner's p99 wait a median {:.0}%, so no wait's interval is \
                     narrower than x/{:.2}",
                    step * 100.0,
                    floor.exp()
                );
            }
            if let Some(own) = own_floors(r) {
                self.summary += &own;
            }
        }
    }

    /// Says how long the rounds waited for the quiet level and how much of
    /// the time the machine was quiet, where any round waited.
    pub fn set_waited(&mut self, waited: Waited) {
        if waited.waits > 0 {
            let share = waited.quiet_share().map_or_else(String::new, |q| {
                format!(", quiet {:.0}% of the time", q * 100.0)
            });
            let slow = match waited.ended_slow {
                0 => String::new(),
                n => format!(
                    "; {n} ended still slow, the host slow over {:.0} s or the time to wait \
                     spent, and those rounds count as slow",
                    crate::measure::schedule::gate::LONGEST_WAIT_S
                ),
            };
            let waits = match waited.waits {
                1 => "1 wait".to_string(),
                n => format!("{n} waits"),
            };
            self.summary = format!(
                "{}; rounds waited {:.1} s for the quiet level{share} ({waits}{slow})",
                self.summary, waited.seconds
            );
        }
        // Where it never came back, the model's `moved_pct` says so.
        if !waited.known_level_not_reached && waited.start_s >= 0.1 {
            self.summary = format!(
                "{}; the run waited {:.1} s at its start for the boot's quiet level",
                self.summary, waited.start_s
            );
        }
        if waited.revisited_rounds > 0 {
            self.summary = format!(
                "{}; {} rounds of the answer's rows measured again at a fork's end, a slow \
                 stretch having covered all of a row's rounds there",
                self.summary, waited.revisited_rounds
            );
        }
        if waited.end_s >= 0.1 {
            self.summary = format!(
                "{}; the canary was watched {:.1} s after the last round for the boot's quiet \
                 level",
                self.summary, waited.end_s
            );
        }
        self.waited = Some(waited);
    }

    /// When the run ran (seconds on one clock: its start and end) with its
    /// `forks`, and how fast the machine walked in it (`noise::RunTime`):
    /// the canary's quiet stretches, and the canary over the reference.
    pub fn run_time(&self, span: std::ops::Range<f64>, forks: usize) -> Option<RunTime> {
        let drift = |medians: &[f64], sampling_pct: Option<f64>| Drift {
            medians: medians.to_vec(),
            sampling_var: sampling_pct.map_or(0.0, |pct| (pct / 100.0).powi(2)),
        };
        let beyond = self.reference.as_ref().map_or_else(Drift::default, |r| {
            drift(&r.beyond_block_medians, r.beyond_sampling_pct)
        });
        RunTime::new(
            [span.start, span.end],
            forks,
            &drift(&self.drift_block_medians, self.drift_sampling_pct),
            &beyond,
        )
    }

    /// Sets the run's reference speed and says it on the machine line: how
    /// far the machine's own speed moved, that the figures are shown at the
    /// run's reference speed, and how much of the rows' variance that took
    /// out.
    pub fn set_reference(&mut self, reference: ReferenceSpeed) {
        let moved = reference.moved_pct.map_or_else(String::new, |pct| {
            format!(" and moved {pct:.1}% over the run")
        });
        let explained = reference.explained_pct.map_or_else(String::new, |pct| {
            format!(
                "; the reference explained {pct:.0}% of the rounds' variance (median of {} rows)",
                reference.rows
            )
        });
        // The drift term is in the raw figures' intervals only: the figures
        // shown at one speed have the machine's speed taken out instead.
        if let Some(within) = self.drift_interval_pct {
            self.summary = self.summary.replace(
                &format!("so every interval includes ±{within:.1}% for it"),
                &format!("which the raw figures' intervals include (±{within:.1}%)"),
            );
        }
        let state = match reference.slow_state_unseen_pct {
            Some(_) if reference.slow_rounds_used => {
                "; the reference slowed with the slow state, so the slow rounds count at its \
                 speed too"
                    .to_string()
            }
            Some(pct) => format!(
                "; the slow state slowed the canary {pct:+.1}% more than the reference, so \
                 figures stand on the quiet rounds"
            ),
            None => String::new(),
        };
        self.summary = format!(
            "{}; the machine's own speed (a reference no mitigation touches) read {:.3} ticks a \
             step{moved}, and figures are shown at that speed{explained}{state}",
            self.summary, reference.ticks
        );
        self.reference = Some(reference);
    }
}

/// Where the slow readings lay (their 10th and 90th percentile above the
/// quiet canary): a spread of levels, or about one.
fn slow_levels(
    std::ops::Range {
        start: low,
        end: high,
    }: std::ops::Range<f64>,
) -> String {
    if high - low >= 4.0 {
        format!("from +{low:.0}% to +{high:.0}% (10th-90th percentile)")
    } else {
        format!("at +{:.0}%", (low + high) / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::states::DRIFT_BLOCKS;

    #[test]
    fn a_drifting_quiet_state_is_measured() {
        let times: Vec<f64> = (0..800).map(|i| i as f64 * 0.1).collect();
        // Quiet speed rising 4% over the run, with a slow state now and then.
        let readings: Vec<f64> = times
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i % 10 == 0 {
                    400.0
                } else {
                    300.0 * (1.0 + 0.04 * t / 80.0)
                }
            })
            .collect();
        let model = StateModel::fit(&readings);
        let states = MachineStates::new(model, &readings, &times, Some(0.0), 1);
        assert_eq!(states.drift_block_medians.len(), DRIFT_BLOCKS);
        let drift = states.drift_pct.unwrap();
        assert!((3.0..4.5).contains(&drift), "{drift}");
        assert!(states.summary.contains("drifted"), "{}", states.summary);
        let flat = vec![300.0; 800];
        let model = StateModel::fit(&flat);
        let states = MachineStates::new(model, &flat, &times, None, 1);
        assert_eq!(states.drift_pct, Some(0.0));
        let short = MachineStates::new(
            StateModel::fit(&flat[..30]),
            &flat[..30],
            &times[..30],
            None,
            1,
        );
        assert!(short.drift_pct.is_none(), "too few readings per stretch");
    }

    #[test]
    fn a_run_with_long_slow_stretches_still_measures_its_drift() {
        // 120 readings over 60 s; slow (400) in all but the first 16
        // readings of each 20 s: 48 quiet readings, too few for eight
        // stretches of twelve, enough for three. Unmeasured, the drift
        // counted as none and the noisiest runs printed the narrowest
        // intervals.
        let times: Vec<f64> = (0..120).map(|i| f64::from(i) * 0.5).collect();
        let readings: Vec<f64> = times
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i % 40 < 16 {
                    300.0 * (1.0 + 0.03 * t / 60.0)
                } else {
                    400.0
                }
            })
            .collect();
        let model = StateModel::fit(&readings);
        assert!(model.two_states);
        let states = MachineStates::new(model, &readings, &times, None, 1);
        assert_eq!(states.drift_block_medians.len(), 3, "{states:?}");
        assert!(states.drift_interval_pct.is_some_and(|p| p > 0.0));
    }

    #[test]
    fn with_a_reference_the_drift_term_is_said_of_the_raw_intervals_only() {
        let times: Vec<f64> = (0..800).map(|i| f64::from(i) * 0.1).collect();
        let readings: Vec<f64> = times
            .iter()
            .map(|t| 300.0 * (1.0 + 0.04 * t / 80.0))
            .collect();
        let mut states = MachineStates::new(StateModel::fit(&readings), &readings, &times, None, 1);
        assert!(
            states.summary.contains("so every interval includes"),
            "{}",
            states.summary
        );
        states.set_reference(ReferenceSpeed {
            description: String::new(),
            ticks: 2.5,
            moved_pct: Some(4.0),
            rows: 10,
            explained_pct: Some(60.0),
            beyond_block_medians: Vec::new(),
            beyond_sampling_pct: None,
            slow_state_unseen_pct: None,
            slow_rounds_used: false,
        });
        assert!(
            !states.summary.contains("so every interval includes"),
            "{}",
            states.summary
        );
        assert!(
            states
                .summary
                .contains("which the raw figures' intervals include")
        );
        assert!(
            states
                .summary
                .contains("read 2.500 ticks a step and moved 4.0%")
        );
    }

    #[test]
    fn the_machine_line_says_whether_the_slow_rounds_count_at_the_reference_speed() {
        let line = |unseen: Option<f64>, used: bool| {
            let flat = vec![300.0; 100];
            let mut states = MachineStates::new(StateModel::fit(&flat), &flat, &flat, None, 1);
            states.set_reference(ReferenceSpeed {
                description: String::new(),
                ticks: 2.5,
                moved_pct: None,
                rows: 0,
                explained_pct: None,
                beyond_block_medians: Vec::new(),
                beyond_sampling_pct: None,
                slow_state_unseen_pct: unseen,
                slow_rounds_used: used,
            });
            states.summary
        };
        assert!(line(Some(0.2), true).contains("the slow rounds count at its speed too"));
        let unseen = line(Some(14.0), false);
        assert!(
            unseen.contains("slowed the canary +14.0% more than the reference"),
            "{unseen}"
        );
        assert!(!line(None, false).contains("slow"));
    }
}
