//! How much of a CPU's time the hypervisor gave to something else, from
//! /proc/stat: read before and after a run, stated beside its figures.

/// Steal and total jiffies of one CPU from /proc/stat.
pub fn cpu_steal(cpu: usize) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_steal(&stat, cpu)
}

/// The share of a CPU's time stolen between two readings of
/// [`cpu_steal`], percent; None where no time passed between them.
pub fn share_pct(
    (steal_before, total_before): (u64, u64),
    (steal, total): (u64, u64),
) -> Option<f64> {
    (total > total_before)
        .then(|| steal.saturating_sub(steal_before) as f64 / (total - total_before) as f64 * 100.0)
}

/// `cpuN user nice system idle iowait irq softirq steal ...`: steal is the
/// eighth figure; the total counts the first eight (guest time is already
/// inside user time).
pub fn parse_cpu_steal(stat: &str, cpu: usize) -> Option<(u64, u64)> {
    let label = format!("cpu{cpu}");
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label.as_str()))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    (fields.len() == 8).then(|| (fields[7], fields.iter().sum()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_comes_from_the_cpu_line() {
        let stat =
            "cpu  10 0 10 100 0 0 0 5 0 0\ncpu0 5 0 5 50 0 0 0 1 0 0\ncpu1 5 0 5 50 0 0 0 4 0 0\n";
        assert_eq!(parse_cpu_steal(stat, 1), Some((4, 64)));
        assert_eq!(parse_cpu_steal(stat, 2), None);
        assert_eq!(parse_cpu_steal("cpu1 1 2\n", 1), None);
    }
}
