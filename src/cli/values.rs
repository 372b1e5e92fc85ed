//! Readers for the values options take: each turns the text a user typed
//! into a typed value or a sentence saying what is wrong, before anything
//! runs. clap shows the sentence under the option's name.

use super::duration::{Bare, Syntax};
use std::time::Duration;

/// A percentage above 0 and below 100 (`--threshold`, `--target-ci`,
/// `--fail-above`).
pub fn percentage(text: &str) -> Result<f64, String> {
    let value = number(text)?;
    if value.is_finite() && value > 0.0 && value < 100.0 {
        Ok(value)
    } else {
        Err("must be a percentage above 0 and below 100".into())
    }
}

/// Seconds above 0 and at most an hour (`--budget`).
pub fn seconds(text: &str) -> Result<f64, String> {
    let value = number(text)?;
    if value.is_finite() && value > 0.0 && value <= 3600.0 {
        Ok(value)
    } else {
        Err("must be a number of seconds above 0 and at most 3600".into())
    }
}

/// How many times one null syscall runs a sequence the kernel cannot
/// count here (`attribute --count`): `per-kernel-return=N` or
/// `per-kernel-indirect-call=N` or `per-call-depth-underflow=N`, N a number
/// from 0 to a million.
pub fn kernel_count(text: &str) -> Result<crate::attribute::floors::SequenceCount, String> {
    use crate::mitigations::sequences::Occurs;
    let uncounted = [
        Occurs::PerKernelReturn,
        Occurs::PerKernelIndirectCall,
        Occurs::PerCallDepthUnderflow,
    ];
    let names = || uncounted.map(|o| format!("{}=N", o.name())).join(" or ");
    let (name, n) = text
        .split_once('=')
        .ok_or_else(|| format!("must be {}", names()))?;
    let occurs = uncounted
        .into_iter()
        .find(|o| o.name() == name)
        .ok_or_else(|| format!("'{name}' is not counted here: give {}", names()))?;
    let per_syscall = number(n)?;
    if !(per_syscall.is_finite() && (0.0..=1e6).contains(&per_syscall)) {
        return Err("the count must be a number from 0 to 1000000".into());
    }
    Ok(crate::attribute::floors::SequenceCount {
        occurs,
        per_syscall,
    })
}

fn number(text: &str) -> Result<f64, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not a number"))
}

/// How long a workload may run or be watched (`tax --timeout`, `--for`):
/// a number with an optional unit, s (the default), m or h; above 0 and at
/// most 7 days.
pub fn workload_time(text: &str) -> Result<Duration, String> {
    const WORKLOAD_TIME: Syntax = Syntax {
        units: &[(&["s"], 1e9), (&["m"], 60e9), (&["h"], 3600e9)],
        bare: Bare::In(1e9),
        min_ns: 0.0,
        max_ns: 7.0 * 86400e9,
        range: "0s..7 days",
    };
    WORKLOAD_TIME.parse(text)
}

/// A latency budget (`--latency-budget`): a number and a unit, `ns`, `us`
/// (or `µs`), `ms` or `s` (`50us`, `1.5ms`); between `1ns` and `10s`.
pub fn latency_budget(text: &str) -> Result<Duration, String> {
    const BUDGET: Syntax = Syntax {
        units: &[
            (&["ns"], 1.0),
            (&["us", "µs"], 1e3),
            (&["ms"], 1e6),
            (&["s"], 1e9),
        ],
        bare: Bare::Refused {
            example: "50us, 2ms",
        },
        min_ns: 1.0,
        max_ns: 10e9,
        range: "1ns..10s",
    };
    BUDGET.parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_count_names_an_uncounted_sequence_and_a_number() {
        use crate::mitigations::sequences::Occurs;
        let c = kernel_count("per-kernel-return=40").unwrap();
        assert_eq!((c.occurs, c.per_syscall), (Occurs::PerKernelReturn, 40.0));
        assert!(kernel_count("per-kernel-indirect-call=0").is_ok());
        for bad in [
            "per-entry=1",
            "per-kernel-return",
            "per-kernel-return=-1",
            "per-kernel-return=nan",
            "per-kernel-return=1e9",
            "returns=3",
            "",
        ] {
            assert!(kernel_count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn percentages_are_inside_0_to_100() {
        assert_eq!(percentage("2.5"), Ok(2.5));
        for bad in ["0", "100", "-1", "nan", "inf", "two"] {
            assert!(percentage(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seconds_are_above_0_and_at_most_an_hour() {
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert_eq!(seconds("3600"), Ok(3600.0));
        for bad in ["0", "3600.5", "-3", "NaN", ""] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn workload_time_takes_bare_seconds_and_minutes() {
        assert_eq!(workload_time("30"), Ok(Duration::from_secs(30)));
        assert_eq!(workload_time("2m"), Ok(Duration::from_secs(120)));
        assert!(workload_time("8d").is_err());
        assert!(workload_time("0").is_err());
    }
}
