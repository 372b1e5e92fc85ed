//! The TLS channel the thread probes pay for really is one, and each
//! channel kind is split into the phases it has.

use crate::common;

use mitbench::measure::probes::thread::tls;

#[test]
fn tls_channel_handshakes_and_carries_a_byte_each_way() {
    assert_eq!(tls::exchange(0x5a, 0xa5), Ok((0x5a, 0xa5)));
    // Sessions are independent: a second exchange works on a new pair.
    assert_eq!(tls::exchange(1, 2), Ok((1, 2)));
}

#[test]
fn churn_phases_are_the_ones_each_channel_has() {
    let probe = mitbench::measure::probes::select(&["thread/churn-T1".to_string()]).unwrap()[0];
    let baseline = probe.variants().into_iter().find(|v| v.is_baseline());
    assert_eq!(baseline.map(|v| v.name), Some("tls".to_string()));
    let cpu = common::measuring_cpu();
    for (variant, expected) in [
        ("none", &["create", "join"][..]),
        ("eventfd", &["channel", "create", "signal", "join"][..]),
        (
            "tls",
            &["channel", "create", "handshake", "signal", "join"][..],
        ),
    ] {
        let m = cpu.measure("thread/churn-T1", variant);
        let names: Vec<_> = m
            .measurement
            .phases
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, expected, "{variant}");
        let tiled: f64 = m.measurement.phases.iter().map(|p| p.ticks.value).sum();
        assert!(tiled > 0.0, "{variant}: phases add up to {tiled}");
    }
}
