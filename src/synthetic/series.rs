//! One row's series over a machine's runs, its noise known: stationary
//! (normal or heavy-tailed), with a step, a drift or one outlier run. What
//! change points are tested on (tests/suite/analysis/changes.rs) and compared with Apache
//! Otava on (examples/change_series.rs, bench/otava.sh).

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = rng.f64().max(f64::MIN_POSITIVE);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
}

/// A Student's t draw on 4 degrees of freedom scaled to unit variance:
/// heavier tails than the normal, as a guest's runs have (a run that
/// caught a busy hour).
pub fn heavy(rng: &mut fastrand::Rng) -> f64 {
    let chi2: f64 = (0..4).map(|_| normal(rng).powi(2)).sum();
    // t4's variance is 2.
    normal(rng) / (chi2 / 4.0).sqrt() / 2f64.sqrt()
}

/// A draw of unit spread.
pub type Noise = fn(&mut fastrand::Rng) -> f64;

/// `runs` values of between-run noise of unit spread drawn by `noise`
/// from `seed`, with `shape(i)` added to run i.
pub fn series(runs: usize, seed: u64, noise: Noise, shape: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..runs).map(|i| noise(&mut rng) + shape(i)).collect()
}

/// A case of the comparison: its name, noise, the shape laid on it and
/// the seeds it is drawn from.
pub struct Case {
    pub name: &'static str,
    pub noise: Noise,
    /// What run i of `runs` has added in trial `trial`.
    pub shape: fn(usize, usize, u64) -> f64,
    pub first_seed: u64,
}

/// The cases issue 75 names, each over `runs` runs: stationary (normal and
/// t4), steps of 1.5, 2 and 3 spreads at the middle run, a drift of 4
/// spreads over the series, one run 5 spreads off (its place moving with
/// the trial).
pub const CASES: [Case; 7] = [
    Case {
        name: "stationary-normal",
        noise: normal,
        shape: |_, _, _| 0.0,
        first_seed: 0,
    },
    Case {
        name: "stationary-t4",
        noise: heavy,
        shape: |_, _, _| 0.0,
        first_seed: 0,
    },
    Case {
        name: "step-1.5",
        noise: normal,
        shape: |i, runs, _| if i >= runs / 2 { 1.5 } else { 0.0 },
        first_seed: 1000,
    },
    Case {
        name: "step-2",
        noise: normal,
        shape: |i, runs, _| if i >= runs / 2 { 2.0 } else { 0.0 },
        first_seed: 1000,
    },
    Case {
        name: "step-3",
        noise: normal,
        shape: |i, runs, _| if i >= runs / 2 { 3.0 } else { 0.0 },
        first_seed: 1000,
    },
    Case {
        name: "drift-4",
        noise: normal,
        shape: |i, runs, _| 4.0 * i as f64 / runs as f64,
        first_seed: 3000,
    },
    Case {
        name: "outlier-5",
        noise: normal,
        shape: |i, runs, trial| {
            if i == (trial as usize * 7) % runs {
                5.0
            } else {
                0.0
            }
        },
        first_seed: 2000,
    },
];

impl Case {
    /// Trial `trial`'s series of `runs` runs.
    pub fn draw(&self, runs: usize, trial: u64) -> Vec<f64> {
        series(runs, self.first_seed + trial, self.noise, |i| {
            (self.shape)(i, runs, trial)
        })
    }
}
