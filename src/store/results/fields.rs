//! The names each document gives a figure's two flat fields: a row's
//! `toll_ns` and `toll_ci95_ns`, a share's `share_pct` and
//! `share_ci95_pct`. The JSON wrote these before a figure had one type,
//! and its readers still read them; the statistics below know a figure
//! only as [`Figure`], and how one is written flat ([`flat_as`]). The
//! analysis's own values a document stores (an amortization fit, a
//! round's phases) are written here under their names too.

use crate::analysis::interval::{Figure, flat_as};
use crate::analysis::phases::PhaseCost;
use crate::analysis::stats::Amortization;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
flat_as!(
    /// The work every item pays as `per_item` and `per_item_ci95`.
    as_per_item: "per_item", "per_item_ci95"
);
flat_as!(
    /// The toll a batch pays as `per_batch` and `per_batch_ci95`.
    as_per_batch: "per_batch", "per_batch_ci95"
);
flat_as!(
    /// A phase's ticks per item as `median_ticks` and `ci95_ticks`.
    as_median_ticks: "median_ticks", "ci95_ticks"
);

/// An amortization fit as a document writes it: `per_item`,
/// `per_item_ci95`, `per_batch`, `per_batch_ci95`, `r2`, `points`.
#[derive(Serialize, Deserialize)]
#[serde(remote = "Amortization")]
pub struct AmortizationFields {
    #[serde(flatten, with = "as_per_item")]
    per_item: Figure,
    #[serde(flatten, with = "as_per_batch")]
    per_batch: Figure,
    r2: f64,
    points: usize,
}

/// A phase as a document writes it: `name`, its ticks per item as
/// `median_ticks` and `ci95_ticks`, its share as `share_pct` and
/// `share_ci95_pct`.
#[derive(Serialize, Deserialize)]
#[serde(remote = "PhaseCost")]
struct PhaseFields {
    name: String,
    #[serde(flatten, with = "as_median_ticks")]
    ticks: Figure,
    #[serde(flatten, with = "as_share_pct")]
    share_pct: Figure,
}

/// A record's phases, each as [`PhaseFields`] writes it, for
/// `#[serde(with = ...)]`.
pub mod phases {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Phase(#[serde(with = "PhaseFields")] PhaseCost);

    pub fn serialize<S: Serializer>(
        phases: &[PhaseCost],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(phases.iter().cloned().map(Phase))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<PhaseCost>, D::Error> {
        let phases = Vec::<Phase>::deserialize(deserializer)?;
        Ok(phases.into_iter().map(|Phase(p)| p).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Stored {
        #[serde(with = "phases")]
        phases: Vec<PhaseCost>,
        #[serde(flatten, with = "AmortizationFields")]
        fit: Amortization,
    }

    #[test]
    fn phases_and_fits_are_written_under_the_documents_names_and_read_back() {
        let stored = Stored {
            phases: vec![PhaseCost {
                name: "create".into(),
                ticks: Figure::new(19_000.0, Some([18_900.0, 19_200.0])),
                share_pct: Figure::new(27.5, Some([27.0, 28.0])),
            }],
            fit: Amortization {
                per_item: Figure::new(3.0, Some([2.5, 3.5])),
                per_batch: Figure::new(800.0, None),
                r2: 0.99,
                points: 6,
            },
        };
        let json = serde_json::to_value(&stored).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "phases": [{
                    "name": "create",
                    "median_ticks": 19_000.0, "ci95_ticks": [18_900.0, 19_200.0],
                    "share_pct": 27.5, "share_ci95_pct": [27.0, 28.0],
                }],
                "per_item": 3.0, "per_item_ci95": [2.5, 3.5],
                "per_batch": 800.0, "per_batch_ci95": null,
                "r2": 0.99, "points": 6,
            })
        );
        assert_eq!(serde_json::from_value::<Stored>(json).unwrap(), stored);
    }
}
