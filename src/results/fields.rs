//! The names each document gives a figure's two flat fields: a row's
//! `toll_ns` and `toll_ci95_ns`, a share's `share_pct` and
//! `share_ci95_pct`. The JSON wrote these before a figure had one type,
//! and its readers still read them; the statistics below know a figure
//! only as [`Figure`](crate::analysis::interval::Figure), and how one is
//! written flat ([`flat_as`]).

use crate::analysis::interval::flat_as;

flat_as!(
    /// A figure in ns as `ns` and `ci95_ns`.
    as_ns: "ns", "ci95_ns"
);
flat_as!(
    /// A change in percent as `change_pct` and `change_ci95_pct`.
    as_change_pct: "change_pct", "change_ci95_pct"
);
flat_as!(
    /// A crossing's toll as `toll_ns` and `toll_ci95_ns`.
    as_toll_ns: "toll_ns", "toll_ci95_ns"
);
flat_as!(
    /// A total in ms as `total_ms` and `total_ci95_ms`.
    as_total_ms: "total_ms", "total_ci95_ms"
);
flat_as!(
    /// A share in percent as `share_pct` and `share_ci95_pct`.
    as_share_pct: "share_pct", "share_ci95_pct"
);
flat_as!(
    /// What parts leave, in percent, as `remainder_pct` and
    /// `remainder_ci95_pct`.
    as_remainder_pct: "remainder_pct", "remainder_ci95_pct"
);
flat_as!(
    /// A percentage as `pct` and `ci95_pct`.
    as_pct: "pct", "ci95_pct"
);
flat_as!(
    /// A ratio as `ratio` and `ratio_ci95`.
    as_ratio: "ratio", "ratio_ci95"
);
flat_as!(
    /// A difference in ticks as `delta_ticks` and `delta_ci95_ticks`.
    as_delta_ticks: "delta_ticks", "delta_ci95_ticks"
);
flat_as!(
    /// A cost in ticks as `ticks` and `ticks_ci95`.
    as_ticks: "ticks", "ticks_ci95"
);
flat_as!(
    /// A round's median in ticks as `ticks` and `ci95_ticks`.
    as_round_ticks: "ticks", "ci95_ticks"
);
flat_as!(
    /// A co-runner's p99 wait in us as `wait_p99_us` and `wait_p99_ci95_us`.
    as_wait_p99_us: "wait_p99_us", "wait_p99_ci95_us"
);
flat_as!(
    /// Ticks per item won back as `won_back_ticks_per_item` and
    /// `won_back_ci95_ticks_per_item`.
    as_won_back_ticks_per_item: "won_back_ticks_per_item", "won_back_ci95_ticks_per_item"
);
