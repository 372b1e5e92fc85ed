//! How a figure is written in every text rendering: enough digits to
//! read, thousands grouped, no false precision.

/// A stored time (RFC 3339, as the JSON keeps it) for people: local time
/// to the second; as stored where it does not parse.
pub fn local_time(stored: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(stored).map_or_else(
        |_| stored.to_string(),
        |at| {
            at.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        },
    )
}

/// Enough digits to read, no false precision.
pub fn format_cost(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1000.0 {
        let whole = format!("{:.0}", value.abs());
        let mut grouped = String::new();
        for (i, ch) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(ch);
        }
        if value < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A ratio with two decimals, more where it is small, none where large.
pub fn format_ratio(ratio: f64) -> String {
    if ratio.abs() >= 100.0 {
        format!("{ratio:.0}")
    } else if ratio.abs() >= 0.01 {
        format!("{ratio:.2}")
    } else {
        format!("{ratio:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_get_digits_by_magnitude() {
        assert_eq!(format_cost(0.783), "0.78");
        assert_eq!(format_cost(33.66), "33.7");
        assert_eq!(format_cost(247.98), "248");
        assert_eq!(format_cost(5380.0), "5,380");
        assert_eq!(format_cost(397_321.4), "397,321");
        assert_eq!(format_cost(-1234.0), "-1,234");
    }

    #[test]
    fn ratios_keep_small_ones_readable() {
        assert_eq!(format_ratio(7.2048), "7.20");
        assert_eq!(format_ratio(0.0074), "0.0074");
        assert_eq!(format_ratio(123.4), "123");
    }
}
