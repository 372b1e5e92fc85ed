//! Phases marked inside a measured batch tile it: the harness splits a
//! batch's time where the work says, and the split follows the work.

use crate::common;
use mitbench::analysis::interval::Figure;

use std::hint::black_box;

/// Work whose cost grows with `rounds`, the same kind of work at any size.
fn spin(rounds: u64) -> u64 {
    (0..rounds).fold(0u64, |acc, i| {
        black_box(acc.wrapping_mul(31).wrapping_add(i))
    })
}

#[test]
fn phase_shares_follow_the_work_and_add_up_to_the_whole() {
    let _cpu = common::measuring_cpu();
    let harness = common::tiny_harness();
    let m = harness
        .measure_phased(&["light", "never", "heavy"], |n, laps| {
            for _ in 0..n {
                black_box(spin(2_000));
                laps.end(0);
                black_box(spin(6_000));
                laps.end(2);
            }
        })
        .expect("measured");
    let names: Vec<_> = m.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["light", "heavy"],
        "a phase never marked is left out"
    );
    let within = |f: &Figure| {
        f.ci95
            .is_some_and(|[lo, hi]| lo <= f.value && f.value <= hi)
    };
    for p in &m.phases {
        assert!(
            p.ticks.value.is_finite() && p.ticks.value > 0.0,
            "{}",
            p.name
        );
        assert!(within(&p.ticks) && within(&p.share_pct), "{p:?}");
        assert!((0.0..=100.0).contains(&p.share_pct.value), "{}", p.name);
    }
    // Three times the work: about three quarters of the time.
    let (light, heavy) = (m.phases[0].share_pct.value, m.phases[1].share_pct.value);
    assert!((60.0..90.0).contains(&heavy), "heavy share {heavy}");
    assert!((10.0..40.0).contains(&light), "light share {light}");
    // The phases tile the item: together they are its cost.
    let sum = m.phases[0].ticks.value + m.phases[1].ticks.value;
    let whole = m.per_item.median.value;
    assert!(
        (sum - whole).abs() < 0.2 * whole,
        "phases {sum} against the item's {whole} ticks"
    );
}

#[test]
fn unphased_measurements_carry_no_phases() {
    let harness = common::tiny_harness();
    let m = harness.measure_each(|| spin(10)).expect("measured");
    assert!(m.phases.is_empty());
}
