//! Crossings times their price, and that as a share of CPU time: the one
//! rule tax's table, its vectors, hooks and parts, and `--check` read.

/// What `count` crossings of `ns` each take, ms.
pub fn total_ms(count: f64, ns: f64) -> f64 {
    count * ns / 1e6
}

/// `ms` of CPU time as a percentage of `cpu_s` seconds.
pub fn pct_of_cpu(ms: f64, cpu_s: f64) -> f64 {
    ms / 1e3 / cpu_s * 100.0
}

/// `count` crossings of `ns` each as a percentage of `cpu_s` seconds.
pub fn share_pct(count: f64, ns: f64, cpu_s: f64) -> f64 {
    pct_of_cpu(total_ms(count, ns), cpu_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_crossings_of_a_microsecond_are_a_second() {
        assert_eq!(total_ms(1e6, 1e3), 1e3);
        assert_eq!(pct_of_cpu(1e3, 4.0), 25.0);
        assert_eq!(share_pct(1e6, 1e3, 4.0), 25.0);
    }
}
