//! Durations as the command line takes them: a number, then a unit. One
//! reader for every option that takes one (`--latency-budget`, `tax
//! --timeout` and `--for`); each says which units it takes and its range.

use std::time::Duration;

/// How one option writes its durations.
pub struct Syntax {
    /// Each unit's spellings and its length in ns, in the order the error
    /// message lists them (by their first spelling).
    pub units: &'static [(&'static [&'static str], f64)],
    /// What a number written without a unit means.
    pub bare: Bare,
    /// The range allowed, in ns (above 0, from `min_ns` to `max_ns`), and
    /// how the message names it.
    pub min_ns: f64,
    pub max_ns: f64,
    pub range: &'static str,
}

/// A number without a unit: in a default unit (its length in ns), or
/// refused with an example of what to write.
#[derive(Clone, Copy)]
pub enum Bare {
    In(f64),
    Refused { example: &'static str },
}

impl Syntax {
    pub fn parse(&self, text: &str) -> Result<Duration, String> {
        let text = text.trim();
        let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'));
        let (number, unit) = match (split, self.bare) {
            (Some(at), _) => text.split_at(at),
            (None, Bare::In(_)) => (text, ""),
            (None, Bare::Refused { example }) => {
                return Err(format!("'{text}' has no unit: write e.g. {example}"));
            }
        };
        let value: f64 = number
            .parse()
            .map_err(|_| format!("'{text}' does not start with a number"))?;
        let unit = unit.trim();
        let ns_per = match (unit, self.bare) {
            ("", Bare::In(ns)) => ns,
            _ => self
                .units
                .iter()
                .find(|(names, _)| names.contains(&unit))
                .map(|&(_, ns)| ns)
                .ok_or_else(|| format!("unknown unit '{unit}': use {}", self.unit_list()))?,
        };
        let ns = value * ns_per;
        if ns > 0.0 && (self.min_ns..=self.max_ns).contains(&ns) {
            Ok(Duration::from_nanos(ns.round() as u64))
        } else {
            Err(format!("'{text}' is outside {}", self.range))
        }
    }

    /// "ns, us, ms or s".
    fn unit_list(&self) -> String {
        let names: Vec<&str> = self.units.iter().map(|(names, _)| names[0]).collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECONDS: Syntax = Syntax {
        units: &[(&["s"], 1e9), (&["m"], 60e9)],
        bare: Bare::In(1e9),
        min_ns: 0.0,
        max_ns: 3600e9,
        range: "0s..1 h",
    };

    #[test]
    fn a_bare_number_takes_the_default_unit_where_there_is_one() {
        assert_eq!(SECONDS.parse("2"), Ok(Duration::from_secs(2)));
        assert_eq!(SECONDS.parse(" 1.5m "), Ok(Duration::from_secs(90)));
        assert_eq!(SECONDS.parse("0.3 s"), Ok(Duration::from_millis(300)));
        let strict = Syntax {
            bare: Bare::Refused { example: "2s" },
            ..SECONDS
        };
        assert_eq!(
            strict.parse("2"),
            Err("'2' has no unit: write e.g. 2s".to_string())
        );
    }

    #[test]
    fn bad_text_says_what_is_wrong() {
        assert_eq!(
            SECONDS.parse("3 weeks"),
            Err("unknown unit 'weeks': use s or m".to_string())
        );
        assert_eq!(
            SECONDS.parse("-1s"),
            Err("'-1s' does not start with a number".to_string())
        );
        for outside in ["0", "0s", "61m"] {
            assert_eq!(
                SECONDS.parse(outside),
                Err(format!("'{outside}' is outside 0s..1 h"))
            );
        }
    }
}
