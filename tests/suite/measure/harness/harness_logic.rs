//! The harness's and the scheduler's logic on a synthetic machine: samples
//! of a known cost and noise, a clock that advances only by the samples
//! handed out, speed changes, a clock that goes backwards and a Ctrl-C at a
//! chosen sample. Nothing here times the real machine, so every test runs
//! in milliseconds and asserts the same on any CPU, loaded or not.

use mitbench::analysis::rounds::{self, Basis};
use mitbench::analysis::states::{QuietLevel, StateModel};
use mitbench::measure::harness::machine::Machine;
use mitbench::measure::harness::{Harness, Settings, Timed};
use mitbench::measure::probes::{
    Config, Declaration, Described, Kind, Outcome, Placement, Probe, Role, Unsupported,
};
use mitbench::measure::schedule::gate::{self, Gate};
use mitbench::measure::schedule::{ProbeRounds, QUIET_ROUNDS_PER_FORK, Scheduler, Stop};
use mitbench::store::results::MachineStates;
use serde::Serialize;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MHZ: f64 = 2000.0;
/// The synthetic canary's cost in the quiet state, ticks per call.
const CANARY: f64 = 300.0;

/// A machine whose time is the sum of the ticks it has handed out.
struct Synthetic {
    state: Mutex<State>,
    /// How much slower than its quiet state the machine is at a time in
    /// seconds (1.0: quiet).
    slowdown: Box<dyn Fn(f64) -> f64 + Send + Sync>,
    /// How much slower the syscall path alone is (the canary, not the
    /// work): a cost added on it, as a trace event adds one.
    syscall_path: f64,
    /// The run is asked to stop once this many samples were handed out.
    stop_at_sample: Option<u64>,
}

struct State {
    ticks: f64,
    samples: u64,
    rng: fastrand::Rng,
}

impl Synthetic {
    fn new(slowdown: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Synthetic {
        Synthetic {
            state: Mutex::new(State {
                ticks: 0.0,
                samples: 0,
                rng: fastrand::Rng::with_seed(7),
            }),
            slowdown: Box::new(slowdown),
            syscall_path: 1.0,
            stop_at_sample: None,
        }
    }

    fn with_syscall_path(mut self, factor: f64) -> Synthetic {
        self.syscall_path = factor;
        self
    }

    fn steady() -> Synthetic {
        Synthetic::new(|_| 1.0)
    }

    fn stopping_at(mut self, sample: u64) -> Synthetic {
        self.stop_at_sample = Some(sample);
        self
    }

    fn samples_handed_out(&self) -> u64 {
        self.state.lock().unwrap().samples
    }

    fn seconds(ticks: f64) -> f64 {
        ticks / (MHZ * 1e6)
    }

    /// One batch of `n` items of the work `w`: its fixed cost plus n items,
    /// each off by up to `w.noise` of its cost either way, all slowed by
    /// the machine's state at that moment.
    fn sample(&self, w: &Work, n: u64) -> Timed<()> {
        let mut s = self.state.lock().unwrap();
        let slow = (self.slowdown)(Synthetic::seconds(s.ticks));
        let jitter = 1.0 + w.noise * (2.0 * s.rng.f64() - 1.0);
        let ticks = (w.fixed + n as f64 * w.cost * jitter) * slow;
        s.ticks += ticks + 40.0;
        s.samples += 1;
        if w.backwards_every
            .is_some_and(|k| s.samples.is_multiple_of(k))
        {
            return Timed::Backwards;
        }
        Timed::Kept(ticks.round() as u64, ())
    }
}

impl Machine for Synthetic {
    fn now(&self) -> Duration {
        Duration::from_secs_f64(Synthetic::seconds(self.state.lock().unwrap().ticks))
    }

    fn canary(&self) -> Option<f64> {
        let mut s = self.state.lock().unwrap();
        let reading = CANARY
            * self.syscall_path
            * (self.slowdown)(Synthetic::seconds(s.ticks))
            * (1.0 + 0.01 * s.rng.f64());
        s.ticks += reading * 64.0 * 5.0;
        Some(reading)
    }

    fn stop_requested(&self) -> bool {
        let s = self.state.lock().unwrap();
        self.stop_at_sample.is_some_and(|k| s.samples >= k)
    }

    fn pause(&self, d: Duration) {
        self.state.lock().unwrap().ticks += d.as_secs_f64() * MHZ * 1e6;
    }
}

/// A variant of the synthetic probe: work of a known cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct Work {
    name: &'static str,
    /// Ticks per item in the quiet state.
    cost: f64,
    /// Ticks per sample whatever its size (the timer, the call).
    fixed: f64,
    /// Relative noise of an item, uniform either way.
    noise: f64,
    /// Every k-th sample's clock goes backwards.
    backwards_every: Option<u64>,
    baseline: bool,
}

impl Work {
    const fn of(name: &'static str, cost: f64) -> Work {
        Work {
            name,
            cost,
            fixed: 60.0,
            noise: 0.05,
            backwards_every: None,
            baseline: false,
        }
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl Config for Work {
    fn role(&self) -> Role {
        Role::baseline_if(self.baseline)
    }
}

struct SyntheticProbe {
    machine: Arc<Synthetic>,
    variants: Vec<Work>,
}

const DECLARATION: Declaration = Declaration::new("synthetic/work", "none", "item")
    .summary("work of a known cost on a synthetic machine");

impl Described for SyntheticProbe {
    fn declaration(&self) -> &Declaration {
        &DECLARATION
    }
}

impl Probe for SyntheticProbe {
    type Config = Work;

    fn configs(&self) -> Vec<Work> {
        self.variants.clone()
    }

    fn measure(&self, work: &Work, _: &Placement, harness: &Harness) -> Outcome {
        let measured = harness
            .measure_samples(|n| self.machine.sample(work, n))
            .map(|(m, _)| m);
        Outcome::on_cpus(measured, vec![0])
    }
}

/// One round long enough for a median to 0.5% with 1% noise.
fn one_round() -> Settings {
    Settings {
        round_s: 0.03,
        ..settings()
    }
}

/// Small rounds, so the statistics of a round stay cheap in a test.
fn settings() -> Settings {
    Settings {
        round_s: 0.002,
        max_samples: 400,
        ..Settings::quick()
    }
}

fn harness_on(machine: &Arc<Synthetic>, settings: Settings) -> Harness {
    Harness::on(machine.clone(), settings, MHZ)
}

fn close(value: f64, truth: f64, pct: f64) -> bool {
    (value - truth).abs() <= truth * pct / 100.0
}

/// Runs the synthetic probe's rounds to the end, as `mitbench run` does.
fn run(
    machine: &Arc<Synthetic>,
    settings: Settings,
    variants: Vec<Work>,
) -> (ProbeRounds, Vec<f64>, Vec<f64>) {
    let harness = harness_on(machine, settings);
    let placement = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    let probe = SyntheticProbe {
        machine: machine.clone(),
        variants,
    };
    let mut scheduler = Scheduler::new(&harness, &placement, None);
    let rounds = scheduler.run_probe(&probe, 1, |_| {});
    (
        rounds,
        scheduler.canaries.clone(),
        scheduler.canary_times.clone(),
    )
}

fn headline(rounds: &ProbeRounds, variant: usize, model: &StateModel) -> rounds::Estimate {
    rounds::estimate(
        &rounds.variants[variant].figures(model),
        model.two_states,
        0,
    )
    .expect("the variant has rounds")
}

#[test]
fn a_round_recovers_a_known_cost_and_fixed_cost() {
    let machine = Arc::new(Synthetic::steady());
    let work = Work {
        fixed: 300.0,
        noise: 0.01,
        ..Work::of("w", 100.0)
    };
    let (m, _) = harness_on(&machine, one_round())
        .measure_samples(|n| machine.sample(&work, n))
        .expect("a steady machine gives a round");
    assert!(
        close(m.per_item.median.value, 100.0, 0.5),
        "median {}",
        m.per_item.median.value
    );
    assert!(close(m.fit.slope, 100.0, 0.5), "slope {}", m.fit.slope);
    // The empty batches measure the fixed cost itself.
    assert!(
        (m.fit.intercept - 300.0).abs() <= 2.0,
        "intercept {}",
        m.fit.intercept
    );
    let [lo, hi] = m.per_item.median.ci95.unwrap();
    assert!(lo <= m.per_item.median.value && m.per_item.median.value <= hi);
    assert!(!m.interrupted && m.dropped_backwards == 0 && m.dropped_migrated == 0);
    // Calibration made a batch of the base size last about `sample_us`.
    let batch_us = m.base_batch as f64 * 100.0 / MHZ;
    assert!((10.0..=25.0).contains(&batch_us), "{batch_us} us");
}

#[test]
fn a_sweep_many_rounds_long_ends_after_a_batch_and_a_shorter_one_keeps_every_size() {
    let settings = settings();
    let round_ticks = settings.round_s * MHZ * 1e6;
    let sizes = settings.batch_multiples as usize;
    let sweep_items = (sizes * (sizes + 1) / 2) as f64;
    // An item of five rounds: the sweep would take 36 of its items.
    let long = Work::of("long", 5.0 * round_ticks);
    let machine = Arc::new(Synthetic::steady());
    let (m, kept) = harness_on(&machine, settings.clone())
        .measure_samples(|n| machine.sample(&long, n))
        .expect("a round");
    let timed: u64 = kept.iter().map(|(n, _)| n).sum();
    assert_eq!(timed, m.base_batch, "one batch of the base size: {kept:?}");
    assert!(close(
        m.per_item.median.value,
        long.cost,
        long.noise * 100.0
    ));
    assert!(m.items as f64 * long.cost < sweep_items * long.cost / 4.0);

    // An item whose sweep takes under two rounds: every size is timed.
    let short = Work::of("short", 2.0 * round_ticks / sweep_items);
    let machine = Arc::new(Synthetic::steady());
    let (m, _) = harness_on(&machine, settings)
        .measure_samples(|n| machine.sample(&short, n))
        .expect("a round");
    assert_eq!(m.size_medians.len(), sizes + 1, "{:?}", m.size_medians);
}

#[test]
fn a_clock_that_goes_backwards_loses_those_samples_and_says_so() {
    let machine = Arc::new(Synthetic::steady());
    let work = Work {
        backwards_every: Some(7),
        noise: 0.01,
        ..Work::of("w", 100.0)
    };
    let (m, _) = harness_on(&machine, one_round())
        .measure_samples(|n| machine.sample(&work, n))
        .expect("most samples are kept");
    assert!(m.dropped_backwards > 0);
    assert!(
        close(m.per_item.median.value, 100.0, 0.5),
        "median {}",
        m.per_item.median.value
    );

    // A clock that always goes backwards leaves nothing: the variant says
    // why in a kind a program reads, and shows no cost.
    let machine = Arc::new(Synthetic::steady());
    let broken = Work {
        backwards_every: Some(1),
        ..Work::of("broken", 100.0)
    };
    let (rounds, ..) = run(&machine, settings(), vec![broken]);
    let why: &Unsupported = rounds.variants[0]
        .unsupported
        .as_ref()
        .expect("unsupported");
    assert_eq!(why.kind, Kind::SamplesDropped);
    assert!(rounds.variants[0].rounds.is_empty());
}

#[test]
fn an_interrupt_at_a_chosen_sample_ends_the_round_there() {
    // During calibration: no round at all.
    let machine = Arc::new(Synthetic::steady().stopping_at(2));
    let work = Work::of("w", 100.0);
    assert!(
        harness_on(&machine, settings())
            .measure_samples(|n| machine.sample(&work, n))
            .is_none()
    );

    // While sampling: the round keeps what it had and says it was cut short.
    // A full round on the same synthetic machine shows when sampling starts
    // (after calibration and warm-up) and how many samples it takes.
    let machine = Arc::new(Synthetic::steady());
    let (_, full) = harness_on(&machine, one_round())
        .measure_samples(|n| machine.sample(&work, n))
        .expect("a round");
    let before_sampling = machine.samples_handed_out() - full.len() as u64;
    let stop = before_sampling + full.len() as u64 / 2;
    let machine = Arc::new(Synthetic::steady().stopping_at(stop));
    let (m, kept) = harness_on(&machine, one_round())
        .measure_samples(|n| machine.sample(&work, n))
        .expect("samples were kept before the stop");
    assert!(m.interrupted);
    // The stop is seen after the pass over batch sizes in flight.
    let pass = settings().batch_multiples + 1;
    let kept = kept.len() as u64;
    assert!(kept < full.len() as u64 && kept.abs_diff(stop - before_sampling) <= pass);
}

#[test]
fn the_stopping_rule_meets_the_target_and_the_pairs_find_the_ratio() {
    let machine = Arc::new(Synthetic::steady());
    let base = Work {
        baseline: true,
        ..Work::of("base", 100.0)
    };
    let (rounds, canaries, _) = run(&machine, settings(), vec![base, Work::of("dearer", 150.0)]);
    let model = StateModel::fit(&canaries);
    assert!(!model.two_states);
    let s = settings();
    for (i, truth) in [(0, 100.0), (1, 150.0)] {
        let v = &rounds.variants[i];
        assert_eq!(v.stopped, Some(Stop::TargetMet), "{}", v.variant.name);
        assert!(v.rounds.len() >= s.min_rounds && v.counting.is_some());
        let e = headline(&rounds, i, &model);
        assert_eq!(e.basis, Basis::AllRounds);
        let [lo, hi] = e.cost.ci95.expect("an interval");
        let cost = e.cost.value;
        assert!(lo <= cost && cost <= hi);
        assert!(e.cost.half_width().unwrap() <= s.tolerance(cost));
        assert!(close(cost, truth, 1.0), "{} {cost}", v.variant.name);
    }
    // Every round of "dearer" has the baseline's round of its pass beside
    // it, and their ratios find 150/100, as the headlines' own ratio does.
    let dearer = &rounds.variants[1];
    let with_a_base_round = dearer
        .rounds
        .iter()
        .filter(|r| rounds.variants[0].rounds.iter().any(|b| b.pass == r.pass))
        .count();
    let merged = mitbench::measure::schedule::forks::Merged {
        probes: vec![rounds.clone()],
        canaries: canaries.clone(),
        canary_times: vec![0.0; canaries.len()],
        ..Default::default()
    };
    let tsc = mitbench::measure::harness::tsc::TscFrequency {
        mhz: 2000.0,
        source: "test".into(),
        calibrated_mhz: None,
    };
    let (_, records) = mitbench::store::results::analyse(
        &merged,
        &tsc,
        &s,
        mitbench::store::results::RunFacts::default(),
    );
    let vs = records[1].vs_baseline.as_ref().expect("a comparison");
    assert_eq!(vs.pairs, with_a_base_round);
    assert!(vs.pairs >= s.min_rounds, "{}", vs.pairs);
    assert!(close(vs.ratio.value, 1.5, 1.0), "x base {:?}", vs.ratio);
    assert!(close(vs.delta.value, 50.0, 2.0), "delta {:?}", vs.delta);
    assert_eq!(vs.holds_headline_ratio, Some(true), "{vs:?}");
}

#[test]
fn a_variant_that_never_settles_runs_out_of_budget() {
    let machine = Arc::new(Synthetic::steady());
    let wild = Work {
        noise: 0.9,
        ..Work::of("wild", 100.0)
    };
    let unreachable = Settings {
        target_ci_pct: 0.001,
        abs_tolerance_ticks: 0.0,
        ..settings()
    };
    let (rounds, ..) = run(&machine, unreachable.clone(), vec![wild]);
    let v = &rounds.variants[0];
    assert_eq!(v.stopped, Some(Stop::Budget));
    assert!(v.elapsed_s >= unreachable.budget_s);
    assert!(v.rounds.len() < unreachable.max_rounds);
}

#[test]
fn an_interrupt_stops_every_variant_and_keeps_their_rounds() {
    let base = Work {
        baseline: true,
        ..Work::of("base", 100.0)
    };
    let variants = vec![base, Work::of("other", 120.0)];
    let machine = Arc::new(Synthetic::steady());
    run(&machine, settings(), variants.clone());
    let whole_run = machine.samples_handed_out();
    // Two thirds in: past every variant's calibration and warm-up, before
    // the stopping rule is met.
    let machine = Arc::new(Synthetic::steady().stopping_at(whole_run * 2 / 3));
    let (rounds, ..) = run(&machine, settings(), variants);
    for v in &rounds.variants {
        assert_eq!(v.stopped, Some(Stop::Interrupted), "{}", v.variant.name);
        assert!(!v.rounds.is_empty(), "rounds before the stop are kept");
        assert!(v.counting.is_none(), "no counting round after a stop");
    }
}

#[test]
fn a_machine_that_switches_speed_is_seen_and_the_quiet_figure_holds() {
    // Slow by 32% for 40 ms of every 100 ms, as the guests of issue 18 were.
    let machine = Arc::new(Synthetic::new(|t| {
        if (t * 10.0).fract() < 0.4 { 1.32 } else { 1.0 }
    }));
    let base = Work {
        baseline: true,
        ..Work::of("base", 100.0)
    };
    let (rounds, canaries, _) = run(&machine, settings(), vec![base, Work::of("dearer", 150.0)]);
    let model = StateModel::fit(&canaries);
    assert!(model.two_states, "{model:?}");
    assert!(
        (0.2..0.6).contains(&model.slow_share),
        "{}",
        model.slow_share
    );
    for (i, truth) in [(0, 100.0), (1, 150.0)] {
        let e = headline(&rounds, i, &model);
        assert_eq!(e.basis, Basis::QuietRounds);
        assert!(
            close(e.cost.value, truth, 1.0),
            "quiet figure {} against {truth}",
            e.cost.value
        );
        let slow = e.slow_state.expect("slow rounds");
        assert!(close(slow, truth * 1.32, 3.0), "slow figure {slow}");
    }
}

#[test]
fn a_slow_drift_of_the_quiet_speed_is_measured() {
    // 5% slower by the end of the run, nothing else.
    let machine = Arc::new(Synthetic::new(|t| 1.0 + 0.05 * (t / 1.5).min(1.0)));
    let base = Work {
        baseline: true,
        ..Work::of("base", 100.0)
    };
    let long = Settings {
        min_span_s: 1.5,
        ..settings()
    };
    let (_, canaries, times) = run(&machine, long, vec![base, Work::of("other", 120.0)]);
    let model = StateModel::fit(&canaries);
    let states = MachineStates::new(model, &canaries, &times, None, 0);
    let drift = states.drift_pct.expect("enough readings to see drift");
    assert!((2.0..6.0).contains(&drift), "drift {drift}%");
    assert!(states.summary.contains("drifted"), "{}", states.summary);
    let widened_by = states.drift_interval_pct.expect("a drift interval");
    assert!(widened_by > 0.0 && widened_by.is_finite(), "{widened_by}");
}

#[test]
fn the_drift_interval_extrapolates_the_step_between_stretches_to_the_next_run() {
    // Eight stretches each 0.5% above the last: a step of ln(1.005); by the
    // next run (eight stretches on) sqrt(8) steps, times t(0.975, 7).
    let blocks: Vec<f64> = (0..8).map(|i| 100.0 * 1.005f64.powi(i)).collect();
    let pct = mitbench::analysis::states::drift_interval_pct(&blocks, 0.0).unwrap();
    let expected = 2.365 * 8.0f64.sqrt() * 1.005f64.ln() * 100.0;
    assert!((pct - expected).abs() < 1e-9, "{pct}");
    assert_eq!(
        mitbench::analysis::states::drift_interval_pct(&[100.0; 8], 0.0),
        Some(0.0)
    );
    // Five stretches: t(4) and sqrt(5).
    let five = mitbench::analysis::states::drift_interval_pct(&blocks[..5], 0.0).unwrap();
    let expected = 2.776 * 5.0f64.sqrt() * 1.005f64.ln() * 100.0;
    assert!((five - expected).abs() < 1e-9, "{five}");
    // One stretch away and back (a burst the canary's split missed) is not
    // a walk: the steady stretches around it say the speed held.
    let mut odd = [274.2; 8];
    odd[5] = 288.4;
    assert_eq!(
        mitbench::analysis::states::drift_interval_pct(&odd, 0.0),
        Some(0.0)
    );
    // Two stretches say nothing.
    assert_eq!(
        mitbench::analysis::states::drift_interval_pct(&blocks[..2], 0.0),
        None
    );
}

/// A host that is slow (+35%) in stretches: each stretch's length drawn
/// from a mixture like the busy Zen 3 host's (shared/data/zen3-busy: most
/// stretches tens of milliseconds, a fifth of them seconds long, which hold
/// most of the time), scaled so that `quiet_share` of the time is quiet.
/// The slow stretches are kept under the gate's longest wait, so that every
/// wait can end at the quiet level.
fn stretches(quiet_share: f64, seed: u64) -> impl Fn(f64) -> f64 + Send + Sync {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut draw = |mean_s: f64, longest_s: f64| {
        let mean = if rng.f64() < 0.2 {
            20.0 * mean_s
        } else {
            mean_s
        };
        (-mean * (1.0 - rng.f64()).ln()).min(longest_s)
    };
    // Means of a fifth at 20x and the rest at 1x: 4.8x the base mean.
    let slow_mean = 0.1;
    let quiet_mean = slow_mean * quiet_share / (1.0 - quiet_share);
    let mut ends = Vec::new();
    let mut t = 0.0;
    while t < 10_000.0 {
        t += draw(quiet_mean, f64::INFINITY);
        ends.push((t, 1.0));
        t += draw(slow_mean, 0.9 * gate::LONGEST_WAIT_S);
        ends.push((t, 1.35));
    }
    move |now| ends[ends.partition_point(|&(end, _)| end <= now)].1
}

/// What one fork over `probes` synthetic probes of four variants measured
/// on `machine`: each variant's quiet rounds, and the fork's seconds.
fn fork_over(machine: &Arc<Synthetic>, probes: usize, wait: bool) -> (Vec<usize>, f64) {
    let settings = fork_settings(wait);
    let harness = harness_on(machine, settings.clone());
    let placement = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    let variants: Vec<Work> = (0..4)
        .map(|i| Work {
            baseline: i == 0,
            ..Work::of(["a", "b", "c", "d"][i], 100.0 + 50.0 * i as f64)
        })
        .collect();
    let mut scheduler = Scheduler::new(&harness, &placement, None);
    scheduler.gate = Gate::new(wait, settings.budget_s * (4 * probes) as f64);
    let started = machine.now();
    let mut quiet_rounds = Vec::new();
    for p in 0..probes {
        let probe = SyntheticProbe {
            machine: machine.clone(),
            variants: variants.clone(),
        };
        let rounds = scheduler.run_probe(&probe, p as u64, |_| {});
        let model = StateModel::fit(&scheduler.canaries);
        quiet_rounds.extend(
            rounds
                .variants
                .iter()
                .map(|v| v.rounds.iter().filter(|r| r.quiet(&model)).count()),
        );
    }
    (quiet_rounds, (machine.now() - started).as_secs_f64())
}

/// A fork's share of a standard run's settings, as `Job::share` gives the
/// first of three forks: a fifth of a second a variant.
fn fork_settings(wait: bool) -> Settings {
    Settings {
        budget_s: 0.2,
        min_rounds: 4,
        max_rounds: 67,
        min_span_s: 0.3,
        wait_for_quiet: wait,
        ..settings()
    }
}

#[test]
fn waiting_for_the_quiet_level_gives_every_variant_quiet_rounds_in_the_same_time() {
    let probes = 12;
    let budget_s = fork_settings(true).budget_s * (4 * probes) as f64;
    for quiet_share in [0.2, 0.5, 0.9] {
        let (mut gated_rows, mut ungated_rows, mut rows) = (0, 0, 0);
        for seed in 0..4 {
            let host = || Arc::new(Synthetic::new(stretches(quiet_share, seed)));
            let (gated, gated_s) = fork_over(&host(), probes, true);
            let (ungated, ungated_s) = fork_over(&host(), probes, false);
            // The run keeps its length: waiting is paid for by the budget,
            // give or take one wait and a round of each variant.
            let slack = gate::LONGEST_WAIT_S + 4.0 * probes as f64 * 0.05;
            assert!(
                gated_s <= budget_s + slack,
                "{quiet_share}: {gated_s:.1} s against a budget of {budget_s:.1} s"
            );
            assert!(ungated_s <= budget_s + slack, "{ungated_s:.1} s");
            rows += gated.len();
            let enough = |q: &&usize| **q >= QUIET_ROUNDS_PER_FORK;
            gated_rows += gated.iter().filter(enough).count();
            ungated_rows += ungated.iter().filter(enough).count();
        }
        // With every slow stretch shorter than a wait may last, a variant
        // goes without a quiet round only when the fork's time to wait is
        // spent; that is what the budget allows at the least share.
        assert!(
            gated_rows >= ungated_rows,
            "{quiet_share}: {gated_rows} rows with a quiet round gated, {ungated_rows} not"
        );
        if quiet_share >= 0.5 {
            assert_eq!(
                gated_rows, rows,
                "{quiet_share}: every row has a quiet round"
            );
        }
        eprintln!("{quiet_share}: gated {gated_rows}/{rows}, ungated {ungated_rows}/{rows}");
    }
}

#[test]
fn a_slow_stretch_at_the_start_ends_within_the_wait_and_a_moved_level_does_not() {
    let settings = fork_settings(true);
    let placement = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    // Slow for the first 5 s, then at the known level.
    let stretch = Arc::new(Synthetic::new(|t| if t < 5.0 { 1.4 } else { 1.0 }));
    let harness = harness_on(&stretch, settings.clone());
    let mut scheduler = Scheduler::new(&harness, &placement, None);
    scheduler.wait_for_known_level(CANARY * 1.03);
    let waited = scheduler.gate.waited;
    assert!(!waited.known_level_not_reached, "{waited:?}");
    assert!((5.0..5.1).contains(&waited.start_s), "{waited:?}");
    // A level 40% up for good: the wait ends at its limit, said moved.
    let moved = Arc::new(Synthetic::new(|_| 1.4));
    let harness = harness_on(&moved, settings);
    let mut scheduler = Scheduler::new(&harness, &placement, None);
    scheduler.wait_for_known_level(CANARY * 1.03);
    let waited = scheduler.gate.waited;
    assert!(waited.known_level_not_reached, "{waited:?}");
    assert!(waited.start_s >= gate::LEVEL_MOVED_AFTER_S, "{waited:?}");
}

/// The quiet level the boot's earlier runs read on the synthetic machine.
const KNOWN: QuietLevel = QuietLevel {
    canary: CANARY * 1.005,
    band: 0.02,
};

/// One fork of `probes` synthetic probes on `machine` as `mitbench run`
/// runs it where the history knows the boot's quiet level: gated, the
/// wait before its first round; with `--no-wait`, the watch after its
/// last. The run's canary readings fitted as the run's analysis fits
/// them.
fn fork_against_known(machine: &Arc<Synthetic>, probes: usize, wait: bool) -> StateModel {
    let settings = fork_settings(wait);
    let harness = harness_on(machine, settings.clone());
    let placement = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    let mut scheduler = Scheduler::new(&harness, &placement, None);
    scheduler.gate = Gate::new(wait, settings.budget_s * (2 * probes) as f64);
    if wait {
        scheduler.wait_for_known_level(KNOWN.threshold());
    }
    for p in 0..probes {
        let probe = SyntheticProbe {
            machine: machine.clone(),
            variants: vec![
                Work {
                    baseline: true,
                    ..Work::of("a", 100.0)
                },
                Work::of("b", 150.0),
            ],
        };
        scheduler.run_probe(&probe, p as u64, |_| {});
    }
    if !wait {
        scheduler.watch_for_known_level(KNOWN.threshold());
    }
    StateModel::fit_against(
        &scheduler.canaries,
        Some(KNOWN),
        scheduler.gate.waited.known_level_not_reached,
    )
}

#[test]
fn a_level_that_moved_for_a_whole_run_is_told_the_same_with_and_without_the_wait() {
    // The host slow for the whole run (everything 25% slower), and a cost
    // on the syscall path alone (the canary 25% slower, the work not).
    let timelines: [fn() -> Synthetic; 2] = [
        || Synthetic::new(|_| 1.25),
        || Synthetic::steady().with_syscall_path(1.25),
    ];
    let truth = (1.25 / KNOWN.canary * CANARY - 1.0) * 100.0;
    for (i, timeline) in timelines.iter().enumerate() {
        let told: Vec<f64> = [true, false]
            .into_iter()
            .map(|wait| {
                let model = fork_against_known(&Arc::new(timeline()), 2, wait);
                assert_eq!(model.above_known_pct, None, "{i} {wait}: {model:?}");
                let moved = model.moved_pct.expect("a level that never came back moved");
                assert!(
                    (moved - truth).abs() < 1.5,
                    "{i} {wait}: {moved} against {truth}"
                );
                moved
            })
            .collect();
        assert!((told[0] - told[1]).abs() < 1.0, "{i}: {told:?}");
    }
}

#[test]
fn a_slow_stretch_the_watch_outlasts_is_no_shift_with_or_without_the_wait() {
    // Slow 40% for the first 8 s (shorter than the longest stretch seen),
    // then at the known level; the rounds take about a second and a half.
    for wait in [true, false] {
        let stretch = Arc::new(Synthetic::new(|t| if t < 8.0 { 1.4 } else { 1.0 }));
        let model = fork_against_known(&stretch, 2, wait);
        assert_eq!(model.moved_pct, None, "{wait}: {model:?}");
        match wait {
            // The wait outlasts the stretch: the rounds read the known level.
            true => assert_eq!(model.above_known_pct, None, "{model:?}"),
            // Every round in the stretch, which the watch saw end: a slow
            // level, its rows the slow level's, no level that moved.
            false => assert!(model.above_known_pct.is_some(), "{model:?}"),
        }
    }
}

#[test]
fn a_round_after_a_wait_is_classed_by_a_reading_the_wait_did_not_choose() {
    // Slow by 30% but for one 10 us stretch in four, drawn at random: each
    // canary reading (about 50 us) is quiet with a chance of a quarter,
    // whatever the reading before it said. A wait ends on such a dip; the
    // round's own reading is a fresh draw, quiet a quarter of the time.
    let dips = Arc::new(Synthetic::new(|t| {
        if mixed((t * 1e5) as u64) >> 62 == 0 {
            1.0
        } else {
            1.3
        }
    }));
    let settings = fork_settings(true);
    let harness = harness_on(&dips, settings.clone());
    let placement = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    let mut scheduler = Scheduler::new(&harness, &placement, None);
    scheduler.gate = Gate::new(true, settings.budget_s * 8.0);
    let mut rounds = Vec::new();
    for p in 0..4 {
        let probe = SyntheticProbe {
            machine: dips.clone(),
            variants: vec![
                Work {
                    baseline: true,
                    ..Work::of("a", 100.0)
                },
                Work::of("b", 150.0),
            ],
        };
        let measured = scheduler.run_probe(&probe, p, |_| {});
        rounds.extend(measured.variants.into_iter().flat_map(|v| v.rounds));
    }
    rounds.sort_by(|a, b| a.started_s.total_cmp(&b.started_s));
    // A round that waited starts on another reading than the one the
    // round before it ended on.
    let after_a_wait: Vec<bool> = rounds
        .windows(2)
        .filter(|pair| pair[1].canary_before != pair[0].canary_after)
        .map(|pair| {
            pair[1]
                .canary_before
                .is_some_and(|c| c <= KNOWN.threshold())
        })
        .collect();
    let n = after_a_wait.len();
    let quiet = after_a_wait.iter().filter(|&&q| q).count();
    // A quarter expected; the bound is three binomial standard deviations
    // above it at n. The reading that ended the wait reads quiet always.
    assert!(n >= 40, "{n} rounds after a wait");
    let bound = 0.25 + 3.0 * (0.25 * 0.75 / n as f64).sqrt();
    assert!(
        (quiet as f64) <= bound * n as f64,
        "{quiet} of {n} rounds after a wait read quiet (bound {bound:.2})"
    );
}

/// splitmix64's finalizer: neighbouring stretches draw independent bits.
fn mixed(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
