//! What each mitigation takes of a workload's CPU time: the crossings
//! counted, each priced by a mitigation's part of the rows that price it
//! (`mitbench attribute` over the run sets of the plan's boots and of
//! wrappers), summed per mitigation. Where no set separates a mitigation,
//! the boot of `mitbench plan` that would separate it is named instead;
//! where only the present boot is measured, a process control that an
//! in-run A/B of the tolls' run measured (SSBD by prctl) is still priced.

use super::crossing::Crossing;
use super::{TOLLS, Tax, TollSource};
use crate::analysis::combine::{self, Sum};
use crate::analysis::figure::Figure;
use crate::attribute::{Attributed, Attribution, RowParts, Switch, SwitchKind};
use crate::mitigations::Id;
use crate::mitigations::process::{PROCESS_CONTROLS, ProcessControl};
use crate::plan::{BootKey, Plan};
use serde::Serialize;

/// One mitigation's part of the workload's CPU time, or what would measure
/// it.
#[derive(Debug, Clone, Serialize)]
pub struct MitigationShare {
    /// A vulnerability file, a process control or a catalogue name: what
    /// the run sets or the plan switch.
    pub mitigation: String,
    /// The catalogue's mitigations it stands for (a file's line may put
    /// several in force) and their vulnerability files: the keys the
    /// price list and `summary.in_force` use.
    pub ids: Vec<Id>,
    pub vulnerabilities: Vec<String>,
    /// Percent of the workload's CPU time, with its 95% interval.
    #[serde(flatten, with = "crate::store::results::fields::as_share_pct")]
    pub share: Option<Figure>,
    /// The boot of `mitbench plan` that would separate it, where nothing
    /// measured separates it.
    pub needs_boot: Option<String>,
    /// What the share stands on, or why there is none.
    pub from: String,
}

/// Every mitigation's part, and what the parts leave of the whole toll.
#[derive(Debug, Clone, Serialize)]
pub struct PerMitigation {
    pub parts: Vec<MitigationShare>,
    /// The whole toll less the parts (mitigations that overlap leave it
    /// negative), where every part and the whole are attributed.
    #[serde(flatten, with = "crate::store::results::fields::as_remainder_pct")]
    pub remainder: Option<Figure>,
    /// The run sets the parts are attributed over; None: none were.
    pub attributed_over: Option<String>,
    /// Per priced crossing, each attributed mitigation's share of the
    /// workload's CPU time (in `parts`' order; None where it takes none of
    /// that crossing), and the remainder: what the report stacks.
    pub by_crossing: Vec<CrossingParts>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrossingParts {
    pub kind: Crossing,
    pub shares_pct: Vec<Option<f64>>,
    pub remainder_pct: Option<f64>,
}

/// Each mitigation's part of `tax`'s workload: over `attribution` where
/// there is one, else the plan's boots named and the in-run parts priced.
pub fn per_mitigation(tax: &Tax, attribution: Option<&Attribution>, plan: &Plan) -> PerMitigation {
    match attribution {
        Some(a) => attributed(tax, a, plan),
        None => present_boot_only(tax, plan),
    }
}

/// The part, ns per crossing, of estimate `pick` of `source`'s rows in the
/// attribution (the row less the row it takes off), with its half-width.
/// None where a row is missing, or its sets' figures are not comparable
/// (some of the slow state's, some of the quiet one's): its parts then
/// carry the slow state's 20% or more, not the mitigation's.
fn per_crossing(
    source: &TollSource,
    rows: &[RowParts],
    pick: impl Fn(&RowParts) -> Option<Attributed>,
) -> Option<(f64, Option<f64>)> {
    let find = |probe: &str, variant: &str| -> Option<Figure> {
        let row = rows
            .iter()
            .find(|r| r.key.id == probe && r.key.variant == variant)
            .filter(|r| r.note.is_none())?;
        Some(pick(row)?.ns)
    };
    let mut part = find(source.probe, source.variant)?;
    if let Some((probe, variant)) = source.less {
        part = combine::difference(part, find(probe, variant)?);
    }
    let (ns, half) = (part.value, part.half_width());
    let per = source.crossings_per_item;
    Some((ns / per, half.map(|h| h / per)))
}

/// Percent of `cpu_s` that `count` crossings of `ns` each take.
fn pct_of(count: u64, ns: f64, cpu_s: f64) -> f64 {
    super::share::share_pct(count as f64, ns, cpu_s)
}

fn attributed(tax: &Tax, a: &Attribution, plan: &Plan) -> PerMitigation {
    let taxes = taxed_kinds(tax, a);
    let not_comparable = not_comparable_rows(tax, a, &taxes);
    let (sums, remainder, mut by_crossing) = summed_by_crossing(tax, a, &taxes);
    let sets: Vec<&str> = a.recognised.sets.iter().map(|s| s.name.as_str()).collect();
    let over = format!("attributed over run sets {}", sets.join(", "));
    // A process control taxes the workload only where the workload runs
    // under it; the kernel's are in every crossing.
    let workload_has: Vec<(&str, String)> = crate::mitigations::process::on(&tax.counted.controls)
        .iter()
        .map(|(control, value)| (control.name, format!("{}: {value}", control.status_line)))
        .collect();
    let mut parts: Vec<MitigationShare> = a
        .recognised
        .switches
        .iter()
        .zip(sums)
        .zip(&not_comparable)
        .map(|((switch, sum), not_comparable)| {
            let workload_line = workload_has
                .iter()
                .find(|(name, _)| *name == switch.name)
                .map(|(_, line)| line.as_str());
            mitigation_share(switch, &sum, not_comparable, workload_line, &over, plan)
        })
        .collect();
    // The parts leave a remainder of the whole toll the sets measured; a
    // part the workload does not pay is in that whole, not in its own.
    let all_apply = parts.iter().all(|p| p.share.is_some());
    for vulnerability in &a.recognised.not_separated.in_force {
        parts.push(needing_boot(&vulnerability.name, plan));
    }
    let remainder = remainder.read().filter(|_| all_apply);
    // A part the workload does not pay is not stacked.
    for crossing in &mut by_crossing {
        for (share, part) in crossing.shares_pct.iter_mut().zip(&parts) {
            if part.share.is_none() {
                *share = None;
            }
        }
        if !all_apply {
            crossing.remainder_pct = None;
        }
    }
    PerMitigation {
        parts,
        remainder,
        attributed_over: Some(sets.join(", ")),
        by_crossing,
    }
}

/// The crossings each switched mitigation can tax: a process control only
/// those the catalogue names for it (a filter runs on syscalls, not on
/// page faults), so the other crossings' noise stays out of its share;
/// None for a kernel mitigation, which is on every crossing.
fn taxed_kinds(tax: &Tax, a: &Attribution) -> Vec<Option<Vec<Crossing>>> {
    a.recognised
        .switches
        .iter()
        .map(|switch| {
            let control =
                control_named(&switch.name).filter(|_| switch.kind == SwitchKind::Process)?;
            Some(
                tax.mitigations
                    .iter()
                    .find(|m| m.id == control.mitigation)
                    .map_or_else(Vec::new, |m| m.kinds.clone()),
            )
        })
        .collect()
}

/// Per mitigation, the rows that price a counted crossing it taxes but
/// whose sets are not comparable.
fn not_comparable_rows(
    tax: &Tax,
    a: &Attribution,
    taxes: &[Option<Vec<Crossing>>],
) -> Vec<Vec<String>> {
    taxes
        .iter()
        .map(|kinds| {
            let mut rows: Vec<String> = tax
                .rows
                .iter()
                .filter(|row| row.count.is_some())
                .filter(|row| kinds.as_ref().is_none_or(|k| k.contains(&row.kind)))
                .filter_map(|row| TOLLS.iter().find(|t| t.kind == row.kind))
                .flat_map(|source| source.rows())
                .filter(|&(probe, variant)| {
                    a.rows
                        .iter()
                        .any(|r| r.key.id == probe && r.key.variant == variant && r.note.is_some())
                })
                .map(|(probe, variant)| format!("{probe} {variant}"))
                .collect();
            rows.sort();
            rows.dedup();
            rows
        })
        .collect()
}

/// Each mitigation's share summed over the counted crossings, the
/// remainder's, and each crossing's parts. Every crossing's part is read
/// from the same sets (other rows of them): the shares' half-widths add,
/// whatever their covariance.
fn summed_by_crossing(
    tax: &Tax,
    a: &Attribution,
    taxes: &[Option<Vec<Crossing>>],
) -> (Vec<Sum>, Sum, Vec<CrossingParts>) {
    let cpu_s = tax.cpu_s();
    let mut sums = vec![Sum::of_same_sets(); taxes.len()];
    let mut remainder = Sum::of_same_sets();
    let mut by_crossing = Vec::new();
    for row in &tax.rows {
        let (Some(count), Some(source)) = (row.count, TOLLS.iter().find(|t| t.kind == row.kind))
        else {
            continue;
        };
        if cpu_s <= 0.0 {
            continue;
        }
        let mut shares = Vec::new();
        for (k, sum) in sums.iter_mut().enumerate() {
            let taxed = taxes[k]
                .as_ref()
                .is_none_or(|kinds| kinds.contains(&row.kind));
            let part = per_crossing(source, &a.rows, |r| r.parts[k]).filter(|_| taxed);
            if let Some((ns, half)) = part {
                sum.add(
                    pct_of(count, ns, cpu_s),
                    half.map(|h| pct_of(count, h, cpu_s)),
                );
            }
            shares.push(part.map(|(ns, _)| pct_of(count, ns, cpu_s)));
        }
        let left = per_crossing(source, &a.rows, |r| r.residual);
        if let Some((ns, half)) = left {
            remainder.add(
                pct_of(count, ns, cpu_s),
                half.map(|h| pct_of(count, h, cpu_s)),
            );
        }
        by_crossing.push(CrossingParts {
            kind: row.kind,
            shares_pct: shares,
            remainder_pct: left.map(|(ns, _)| pct_of(count, ns, cpu_s)),
        });
    }
    (sums, remainder, by_crossing)
}

/// One switched mitigation's share of the workload, and what it stands on
/// or why there is none: `workload_line` is the workload's own line of a
/// process control, where it runs under it.
fn mitigation_share(
    switch: &Switch,
    sum: &Sum,
    not_comparable: &[String],
    workload_line: Option<&str>,
    over: &str,
    plan: &Plan,
) -> MitigationShare {
    let applies = switch.kind == SwitchKind::Boot || workload_line.is_some();
    // A filter of other rules, or more of them, costs otherwise.
    let unlike = workload_line
        .filter(|line| *line != switch.present)
        .map_or_else(String::new, |line| {
            format!(
                "; the sets ran with {}, the workload with {line}: the part is the sets'",
                switch.present
            )
        });
    let (ids, vulnerabilities) = match switch.kind {
        SwitchKind::Boot => keys_of_file(&switch.name, plan),
        SwitchKind::Process => keys_of_control(&switch.name),
    };
    MitigationShare {
        mitigation: switch.name.clone(),
        ids,
        vulnerabilities,
        share: sum.read().filter(|_| applies),
        needs_boot: None,
        from: if !applies {
            "not on in the workload's process: it takes nothing of it".to_string()
        } else if sum.has_terms() && !not_comparable.is_empty() {
            format!(
                "{over}{unlike}; without the crossings {} price (the sets' figures of \
                 them are of different machine states: not comparable)",
                not_comparable.join(", ")
            )
        } else if sum.has_terms() {
            format!("{over}{unlike}")
        } else if !not_comparable.is_empty() {
            format!(
                "the sets' figures of {} are of different machine states (a set \
                 with no quiet round): not comparable; run the sets again",
                not_comparable.join(", ")
            )
        } else {
            "no counted crossing is priced by a row it was attributed on".to_string()
        },
    }
}

/// The catalogue's keys of a vulnerability file: the mitigations its line
/// in the plan's boot puts in force.
fn keys_of_file(vulnerability: &str, plan: &Plan) -> (Vec<Id>, Vec<String>) {
    let ids = plan
        .in_force
        .iter()
        .find(|f| f.vulnerability == vulnerability)
        .map_or_else(Vec::new, |f| f.mitigations.clone());
    (ids, vec![vulnerability.to_string()])
}

/// The process control attribute names as a switch by `name`.
fn control_named(name: &str) -> Option<&'static ProcessControl> {
    PROCESS_CONTROLS.iter().find(|c| c.name == name)
}

/// The catalogue's key of a process control attribute names as a switch.
fn keys_of_control(name: &str) -> (Vec<Id>, Vec<String>) {
    let id = control_named(name).map(|c| c.mitigation);
    (id.into_iter().collect(), Vec::new())
}

/// A kernel mitigation no set separates: the plan's boot without it.
fn needing_boot(vulnerability: &str, plan: &Plan) -> MitigationShare {
    let boot = plan
        .boot(&BootKey::Without(vulnerability.to_string()))
        .or_else(|| plan.boot(&BootKey::AllOff));
    let (ids, vulnerabilities) = keys_of_file(vulnerability, plan);
    MitigationShare {
        mitigation: vulnerability.to_string(),
        ids,
        vulnerabilities,
        share: None,
        needs_boot: boot.map(|b| {
            format!(
                "{} (adds {})",
                b.name,
                b.adds.as_deref().unwrap_or("nothing")
            )
        }),
        from: "in force in every set measured: only another boot separates it".to_string(),
    }
}

fn present_boot_only(tax: &Tax, plan: &Plan) -> PerMitigation {
    let cpu_s = tax.cpu_s();
    let mut parts: Vec<MitigationShare> = plan
        .in_force
        .iter()
        .map(|f| needing_boot(&f.vulnerability, plan))
        .collect();
    // A process control an in-run A/B of the tolls' run measured: its part
    // of each crossing it taxes, times the counts.
    for m in &tax.mitigations {
        let Some(part) = m.part_ns else { continue };
        // One A/B row prices every crossing: its half-widths add.
        let mut sum = Sum::of_same_sets();
        for row in tax.rows.iter().filter(|r| m.kinds.contains(&r.kind)) {
            if let (Some(count), true) = (row.count, cpu_s > 0.0) {
                sum.add(
                    pct_of(count, part.value, cpu_s),
                    part.half_width().map(|h| pct_of(count, h, cpu_s)),
                );
            }
        }
        parts.push(MitigationShare {
            mitigation: m.mitigation.to_string(),
            ids: vec![m.id],
            vulnerabilities: m.vulnerabilities.iter().map(|f| f.to_string()).collect(),
            share: sum.read(),
            needs_boot: None,
            from: m.part_from.clone(),
        });
    }
    PerMitigation {
        parts,
        remainder: None,
        attributed_over: None,
        by_crossing: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::Sum;
    use crate::analysis::figure::Figure;

    #[test]
    fn shares_from_the_same_sets_add_with_their_half_widths_only_where_all_are_known() {
        let mut sum = Sum::of_same_sets();
        assert_eq!(sum.read(), None, "nothing priced");
        sum.add(1.0, Some(0.3));
        sum.add(2.0, Some(0.4));
        let share = sum.read().unwrap();
        assert_eq!(share.value, 3.0);
        let [lo, hi] = share.ci95.unwrap();
        assert!((lo - 2.3).abs() < 1e-12 && (hi - 3.7).abs() < 1e-12);
        // A term without an interval leaves the sum without one.
        sum.add(0.5, None);
        assert_eq!(sum.read(), Some(Figure::new(3.5, None)));
    }
}
