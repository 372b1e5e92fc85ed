//! The time-stamp counter: the clock every sample is read from.
//!
//! Both ends are read with `rdtscp; lfence`. rdtscp waits until every earlier
//! instruction has executed, and the lfence keeps later ones from starting
//! before the read, so the pair brackets exactly the code between them.
//! rdtscp also returns IA32_TSC_AUX, which Linux sets to the CPU number, so a
//! sample that migrated between its two reads is recognised and dropped.

use serde::{Deserialize, Serialize};
use std::arch::x86_64::{__rdtscp, _mm_lfence};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub ticks: u64,
    pub cpu: u32,
}

/// The counter now, unfenced: for a cheap timestamp where a few
/// instructions of reordering do not matter (a deadline check per chunk, a
/// co-runner's lock wait), not for the harness's samples.
#[inline(always)]
pub fn now() -> u64 {
    // SAFETY: rdtsc exists on every x86-64 CPU.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[inline(always)]
pub fn read() -> Stamp {
    let mut aux = 0u32;
    // SAFETY: rdtscp and lfence exist on every x86-64 CPU Linux runs this
    // binary on; rdtscp's presence is checked by `rdtscp_available` first.
    let ticks = unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    };
    // Linux stores (node << 12) | cpu in TSC_AUX.
    Stamp {
        ticks,
        cpu: aux & 0xfff,
    }
}

pub fn rdtscp_available() -> bool {
    let ext = std::arch::x86_64::__cpuid(0x8000_0001);
    ext.edx & (1 << 27) != 0
}

/// Where the TSC frequency used to convert ticks to ns came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TscFrequency {
    /// The frequency used for conversions.
    pub mhz: f64,
    /// "kernel log: <line>" or "calibrated against CLOCK_MONOTONIC_RAW".
    pub source: String,
    /// Our own calibration, kept beside the kernel's figure as a cross-check.
    pub calibrated_mhz: Option<f64>,
}

impl TscFrequency {
    /// Prefers the kernel's figure when it reports one, since the kernel
    /// calibrates once against a reference clock for longer than we can
    /// afford; otherwise uses our calibration.
    pub fn choose(
        kernel: Option<(f64, String)>,
        calibrated_mhz: Option<f64>,
    ) -> Option<TscFrequency> {
        match (kernel, calibrated_mhz) {
            (Some((mhz, line)), calibrated_mhz) => Some(TscFrequency {
                mhz,
                source: format!("kernel log: {line}"),
                calibrated_mhz,
            }),
            (None, Some(mhz)) => Some(TscFrequency {
                mhz,
                source: "calibrated against CLOCK_MONOTONIC_RAW".to_string(),
                calibrated_mhz: Some(mhz),
            }),
            (None, None) => None,
        }
    }

    pub fn ticks_to_ns(&self, ticks: f64) -> f64 {
        ticks * 1000.0 / self.mhz
    }
}

/// A kernel figure and our calibration further apart than this disagree.
pub const MAX_FREQUENCY_DISAGREEMENT: f64 = 0.001;

/// What makes ns figures unreliable on this machine, one sentence each:
/// the kernel's TSC frequency disagreeing with our calibration, a TSC that
/// is not invariant (`constant_tsc` and `nonstop_tsc`), or a clocksource
/// other than the TSC (the kernel did not trust it). Empty when the clock
/// checks out. `flags` answers whether the CPU has a flag, None when the
/// flags are unknown.
pub fn clock_warnings(
    frequency: Option<&TscFrequency>,
    flag: impl Fn(&str) -> Option<bool>,
    clocksource: &str,
) -> Vec<String> {
    let mut warnings = Vec::new();
    match frequency {
        None => warnings.push("the TSC frequency is unknown: no ns figures".to_string()),
        Some(f) => match f.calibrated_mhz {
            Some(calibrated) if (f.mhz - calibrated).abs() / f.mhz > MAX_FREQUENCY_DISAGREEMENT => {
                warnings.push(format!(
                    "the TSC frequency used ({:.3} MHz, {}) and our calibration against \
                     CLOCK_MONOTONIC_RAW ({calibrated:.3} MHz) differ by {:.2}%",
                    f.mhz,
                    f.source,
                    (f.mhz - calibrated).abs() / f.mhz * 100.0
                ));
            }
            Some(_) => {}
            None => warnings.push(format!(
                "the TSC frequency ({:.3} MHz, {}) could not be checked against a calibration",
                f.mhz, f.source
            )),
        },
    }
    for name in ["constant_tsc", "nonstop_tsc"] {
        match flag(name) {
            Some(true) => {}
            Some(false) => warnings.push(format!(
                "the CPU lacks {name}: the TSC may not tick at one rate throughout"
            )),
            None => warnings.push(format!("whether the CPU has {name} is unknown")),
        }
    }
    if clocksource != "tsc" {
        warnings.push(format!(
            "the kernel's clocksource is {clocksource}, not tsc: it did not trust the TSC"
        ));
    }
    warnings
}

/// The kernel's TSC frequency from its boot log, with the line it came from.
/// A refined calibration beats the early one; an explicit "MHz TSC" line beats
/// the "MHz processor" line, which is the TSC only when no TSC line follows.
pub fn frequency_from_kernel_log(log: &str) -> Option<(f64, String)> {
    let find = |needle: &str, suffix: &str| {
        log.lines().rev().find_map(|line| {
            let at = line.find(needle)?;
            let number = line[at + needle.len()..].trim().strip_suffix(suffix)?;
            let mhz: f64 = number.trim().parse().ok()?;
            (mhz.is_finite() && mhz > 0.0).then(|| (mhz, line[at..].trim().to_string()))
        })
    };
    find("tsc: Refined TSC clocksource calibration:", "MHz")
        .or_else(|| find("tsc: Detected", "MHz TSC"))
        .or_else(|| find("tsc: Detected", "MHz processor"))
}

/// Measures the TSC rate against CLOCK_MONOTONIC_RAW over `span`, taking the
/// median of a few rounds so one preempted round cannot skew it.
pub fn calibrate_mhz(span: Duration, rounds: usize) -> Option<f64> {
    let rates: Vec<f64> = (0..rounds)
        .filter_map(|_| {
            let (t0, n0) = paired_read()?;
            std::thread::sleep(span);
            let (t1, n1) = paired_read()?;
            let ns = n1.checked_sub(n0)? as f64;
            (ns > 0.0).then(|| (t1 - t0) as f64 * 1000.0 / ns)
        })
        .collect();
    crate::analysis::stats::median_of(&rates)
}

/// A TSC reading and a CLOCK_MONOTONIC_RAW reading taken as close together as
/// possible: the read with the smallest TSC window around the clock call.
fn paired_read() -> Option<(u64, u64)> {
    (0..5)
        .filter_map(|_| {
            let before = read();
            let ns = monotonic_raw_ns()?;
            let after = read();
            Some((
                after.ticks - before.ticks,
                before.ticks / 2 + after.ticks / 2,
                ns,
            ))
        })
        .min_by_key(|&(window, _, _)| window)
        .map(|(_, ticks, ns)| (ticks, ns))
}

fn monotonic_raw_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_log_lines_in_order_of_trust() {
        let log =
            "[0.0] tsc: Detected 2400.000 MHz processor\n[0.0] tsc: Detected 2394.374 MHz TSC\n";
        assert_eq!(frequency_from_kernel_log(log).unwrap().0, 2394.374);
        let refined =
            format!("{log}[1.7] tsc: Refined TSC clocksource calibration: 2394.381 MHz\n");
        let (mhz, line) = frequency_from_kernel_log(&refined).unwrap();
        assert_eq!(mhz, 2394.381);
        assert!(line.starts_with("tsc: Refined"), "{line}");
        assert_eq!(
            frequency_from_kernel_log("<6>[ 0.000024] tsc: Detected 1996.249 MHz processor")
                .unwrap()
                .0,
            1996.249
        );
    }

    #[test]
    fn kernel_log_rejects_nonsense() {
        assert!(frequency_from_kernel_log("").is_none());
        assert!(frequency_from_kernel_log("tsc: Detected 0 MHz processor").is_none());
        assert!(frequency_from_kernel_log("tsc: Detected inf MHz processor").is_none());
        assert!(frequency_from_kernel_log("tsc: Detected fast MHz processor").is_none());
        assert!(frequency_from_kernel_log("tsc: Detected 2000 GHz processor").is_none());
    }

    #[test]
    fn the_clock_is_checked() {
        let kernel = |calibrated| TscFrequency {
            mhz: 2000.0,
            source: "kernel log: tsc: Detected 2000.000 MHz processor".into(),
            calibrated_mhz: calibrated,
        };
        let all = |_: &str| Some(true);
        assert!(clock_warnings(Some(&kernel(Some(2000.5))), all, "tsc").is_empty());
        let off = clock_warnings(Some(&kernel(Some(2010.0))), all, "tsc");
        assert_eq!(off.len(), 1);
        assert!(off[0].contains("differ by 0.50%"), "{off:?}");
        assert_eq!(clock_warnings(Some(&kernel(None)), all, "tsc").len(), 1);
        let variant = clock_warnings(
            Some(&kernel(Some(2000.0))),
            |f| Some(f != "nonstop_tsc"),
            "hpet",
        );
        assert_eq!(variant.len(), 2, "{variant:?}");
        assert!(variant[1].contains("hpet"));
        assert_eq!(clock_warnings(None, |_| None, "tsc").len(), 3);
    }

    #[test]
    fn choosing_the_frequency() {
        let kernel = Some((2000.0, "tsc: Detected 2000.000 MHz processor".to_string()));
        let chosen = TscFrequency::choose(kernel, Some(2001.0)).unwrap();
        assert_eq!((chosen.mhz, chosen.calibrated_mhz), (2000.0, Some(2001.0)));
        let calibrated = TscFrequency::choose(None, Some(2001.0)).unwrap();
        assert_eq!(calibrated.source, "calibrated against CLOCK_MONOTONIC_RAW");
        assert!(TscFrequency::choose(None, None).is_none());
        assert_eq!(chosen.ticks_to_ns(4000.0), 2000.0);
    }
}
