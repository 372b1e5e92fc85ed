//! A run document of an older schema made this one's shape before it is
//! typed: schemas 3 and 4 wrote a record's cost as flat fields (a figure's
//! value, its interval and each again in ns); schema 5 writes typed
//! figures in ticks and one ns-per-tick. Reading the old fields here, in
//! JSON, keeps their names out of the types.

use serde_json::{Map, Value, json};

/// The fields of a schema 3 or 4 cost that schema 5 holds in its figures
/// or makes when it writes one.
const FLAT_FIELDS: [&str; 17] = [
    "ticks",
    "ns",
    "ci95_ticks",
    "ci95_ns",
    "ci_half_width_pct",
    "run_to_run_ci95_ticks",
    "run_to_run_ci95_ns",
    "run_to_run_half_width_pct",
    "speed_coefficient",
    "speed_coefficient_fitted",
    "speed_coefficient_se",
    "speed_explained_pct",
    "speed_normalized_ticks",
    "speed_normalized_ns",
    "speed_normalized_ci95_ticks",
    "speed_normalized_ci95_ns",
    "speed_normalized_half_width_pct",
];

/// Rewrites each record's cost of `document` that is in the flat shape;
/// a cost already typed, and anything not a cost, is left as it is.
pub fn to_this_schema(document: &mut Value) {
    let Some(records) = document.get_mut("results").and_then(Value::as_array_mut) else {
        return;
    };
    for record in records.iter_mut() {
        if let Some(cost) = record.get_mut("cost").and_then(Value::as_object_mut)
            && !cost.contains_key("rounds_ticks")
            && cost.contains_key("ticks")
        {
            typed_cost(cost);
        }
        if let Some(vs) = record.get_mut("vs_baseline").and_then(Value::as_object_mut) {
            typed_next_run_delta(vs);
        }
    }
}

/// A comparison's next-run interval of its difference, written alone as
/// `next_run_delta_ci95_ticks` before schema 5, as the figure
/// `next_run_delta_ticks`: the difference with that interval.
fn typed_next_run_delta(vs: &mut Map<String, Value>) {
    if let Some(interval) = vs.remove("next_run_delta_ci95_ticks")
        && !interval.is_null()
    {
        let value = vs.get("delta_ticks").cloned().unwrap_or(Value::Null);
        vs.insert(
            "next_run_delta_ticks".into(),
            json!({"value": value, "ci95": interval}),
        );
    }
}

/// One flat cost in the typed shape. A field the old document lacks (one
/// of schema 3 before the next-run interval or the reference speed) gives
/// a figure without it, as the old reader did.
fn typed_cost(cost: &mut Map<String, Value>) {
    let field = |name: &str| cost.get(name).cloned().unwrap_or(Value::Null);
    let number = |name: &str| cost.get(name).and_then(Value::as_f64);
    let ticks = field("ticks");
    let next_run = match field("run_to_run_ci95_ticks") {
        Value::Null => Value::Null,
        interval => json!({"value": ticks, "ci95": interval}),
    };
    let at_reference = match (field("speed_normalized_ticks"), field("speed_coefficient")) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (value, coefficient) => json!({
            "ticks": {"value": value, "ci95": field("speed_normalized_ci95_ticks")},
            "df": field("speed_normalized_df"),
            "coefficient": coefficient,
            "coefficient_fitted": field("speed_coefficient_fitted"),
            "coefficient_se": field("speed_coefficient_se"),
            "explained_pct": field("speed_explained_pct"),
        }),
    };
    // The old documents wrote ns beside ticks; their ratio is the run's
    // one factor (a zero cost has none: its reference-speed twin may).
    let ratio = |t: &str, n: &str| {
        let (t, n) = (number(t)?, number(n)?);
        (t != 0.0).then(|| n / t)
    };
    let ns_per_tick = ratio("ticks", "ns")
        .or_else(|| ratio("speed_normalized_ticks", "speed_normalized_ns"))
        .unwrap_or(0.0);
    let rounds = json!({"value": ticks, "ci95": field("ci95_ticks")});
    for name in FLAT_FIELDS.iter().chain(&["speed_normalized_df"]) {
        cost.remove(*name);
    }
    cost.insert("ns_per_tick".into(), json!(ns_per_tick));
    cost.insert("rounds_ticks".into(), rounds);
    cost.insert("next_run_ticks".into(), next_run);
    cost.insert("at_reference".into(), at_reference);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(cost: Value) -> Value {
        json!({"schema": 4, "results": [{"id": "os/getpid", "cost": cost}, {"cost": null}]})
    }

    #[test]
    fn a_flat_cost_becomes_typed_figures_with_one_factor() {
        let mut doc = document(json!({
            "ticks": 300.0, "ns": 100.0, "ci95_ticks": [290.0, 310.0], "ci95_ns": [96.7, 103.3],
            "run_to_run_ci95_ticks": [280.0, 330.0], "speed_coefficient": 0.9,
            "speed_coefficient_se": 0.1, "speed_normalized_ticks": 306.0,
            "speed_normalized_ns": 102.0, "speed_normalized_ci95_ticks": [300.0, 312.0],
            "speed_normalized_df": 4.0, "estimator": "quiet-rounds"
        }));
        to_this_schema(&mut doc);
        let cost = &doc["results"][0]["cost"];
        assert_eq!(
            cost["rounds_ticks"],
            json!({"value": 300.0, "ci95": [290.0, 310.0]})
        );
        assert_eq!(
            cost["next_run_ticks"],
            json!({"value": 300.0, "ci95": [280.0, 330.0]})
        );
        assert_eq!(cost["at_reference"]["ticks"]["ci95"], json!([300.0, 312.0]));
        assert_eq!(cost["at_reference"]["coefficient_fitted"], Value::Null);
        assert_eq!(cost["at_reference"]["df"], json!(4.0));
        assert!((cost["ns_per_tick"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        for gone in FLAT_FIELDS {
            assert!(cost.get(gone).is_none(), "{gone}");
        }
        assert_eq!(cost["estimator"], "quiet-rounds");
        assert_eq!(doc["results"][1]["cost"], Value::Null);
    }

    #[test]
    fn a_comparisons_next_run_interval_becomes_a_figure_of_its_difference() {
        let mut doc = json!({"schema": 4, "results": [
            {"vs_baseline": {"delta_ticks": 8.0, "next_run_delta_ci95_ticks": [6.0, 11.0]}},
            {"vs_baseline": {"delta_ticks": 8.0}},
        ]});
        to_this_schema(&mut doc);
        let vs = &doc["results"][0]["vs_baseline"];
        assert_eq!(
            vs["next_run_delta_ticks"],
            json!({"value": 8.0, "ci95": [6.0, 11.0]})
        );
        assert!(vs.get("next_run_delta_ci95_ticks").is_none());
        assert!(
            doc["results"][1]["vs_baseline"]
                .get("next_run_delta_ticks")
                .is_none()
        );
    }

    #[test]
    fn a_cost_without_its_later_fields_gets_none_of_them() {
        let mut doc = document(json!({"ticks": 0.0, "ns": 0.0, "ci95_ticks": null}));
        to_this_schema(&mut doc);
        let cost = &doc["results"][0]["cost"];
        assert_eq!(cost["next_run_ticks"], Value::Null);
        assert_eq!(cost["at_reference"], Value::Null);
        assert_eq!(cost["ns_per_tick"], json!(0.0));
    }

    #[test]
    fn a_typed_cost_and_hostile_shapes_are_left_alone() {
        let typed = json!({"rounds_ticks": {"value": 1.0, "ci95": null}, "ticks": "kept"});
        let mut doc = document(typed.clone());
        to_this_schema(&mut doc);
        assert_eq!(doc["results"][0]["cost"], typed);
        for mut hostile in [
            json!(null),
            json!({"results": 3}),
            json!({"results": [1, "x"]}),
        ] {
            let before = hostile.clone();
            to_this_schema(&mut hostile);
            assert_eq!(hostile, before);
        }
    }
}
