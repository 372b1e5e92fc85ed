//! Phases marked inside a measured batch tile it: the harness splits a
//! batch's time where the work says, and the split follows the work.

use crate::common;

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
    for p in &m.phases {
        assert!(
            p.median_ticks.is_finite() && p.median_ticks > 0.0,
            "{}",
            p.name
        );
        assert!(p.ci95_ticks.0 <= p.median_ticks && p.median_ticks <= p.ci95_ticks.1);
        assert!(p.share_ci95_pct.0 <= p.share_pct && p.share_pct <= p.share_ci95_pct.1);
        assert!((0.0..=100.0).contains(&p.share_pct), "{}", p.name);
    }
    // Three times the work: about three quarters of the time.
    let (light, heavy) = (&m.phases[0], &m.phases[1]);
    assert!(
        (60.0..90.0).contains(&heavy.share_pct),
        "heavy share {}",
        heavy.share_pct
    );
    assert!(
        (10.0..40.0).contains(&light.share_pct),
        "light share {}",
        light.share_pct
    );
    // The phases tile the item: together they are its cost.
    let sum = light.median_ticks + heavy.median_ticks;
    let whole = m.per_item.median;
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
