//! The price list scored against boots: where the sets hold a boot that
//! turns a kernel mitigation off, the null syscall's measured part for it
//! beside the floor its replayed sequences set (`answer::prices`), and
//! whether the part honours the floor. A part below its floor, beyond both
//! intervals, says the replay does not run as the kernel's sequence does
//! (or the boot turned off less than its files say); a part well above it
//! is what the sequences do not explain: uncounted returns and indirect
//! calls, or effects a replay cannot show (a flushed predictor's misses).

use super::{Attribution, NamedSet, SwitchKind};
use crate::analysis::figure::Figure;
use crate::answer::prices::{self, KernelPrice, sum_of_one_run};
use crate::mitigations::crossing::SYSCALL;
use crate::mitigations::sequences::Occurs;
use serde::Serialize;

/// How many times one null syscall runs a sequence whose count the kernel
/// does not tell (its kernel returns, its indirect calls), as a user
/// supplies it: the prediction adds count x price.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SequenceCount {
    pub occurs: Occurs,
    pub per_syscall: f64,
}

/// One kernel mitigation the sets switch off, scored.
#[derive(Debug, Clone, Serialize)]
pub struct FloorScore {
    /// The switch (a vulnerability file; "all" for every one) and the
    /// mitigations of the price list it turns off.
    pub switch: String,
    /// The boot of the set without it.
    pub off_boot: String,
    pub mitigations: Vec<&'static str>,
    /// The part of getpid its sequences take at least, ns; None where none
    /// runs a known number of times per syscall.
    pub floor_ns: Option<Figure>,
    /// The floor plus each supplied count times its price, ns: labelled a
    /// prediction, never a measurement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_ns: Option<Figure>,
    /// Its sequences priced per occurrence (the counts unknown).
    pub prices: Vec<KernelPrice>,
    /// The measured part of getpid: the present set less the set without
    /// it, ns.
    pub part_ns: Option<Figure>,
    /// The part honours the floor (and the prediction) where its upper end
    /// reaches the floor's lower end.
    pub honours_floor: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub honours_prediction: Option<bool>,
    /// The part less the floor: what the replayed sequences do not explain.
    pub beyond_floor_ns: Option<Figure>,
}

/// The price list scored against the sets' boots.
#[derive(Debug, Clone, Serialize)]
pub struct FloorScores {
    /// The CPU model the scores are of (a record is kept per model), and
    /// the present set's boot.
    pub cpu_model: String,
    pub present_boot: String,
    /// Where the floors come from: the present set's first run.
    pub floors_from: String,
    pub scores: Vec<FloorScore>,
    /// Every kernel mitigation together: the whole toll of getpid against
    /// all the floors, where the sets hold the all-off boot.
    pub whole: Option<FloorScore>,
    /// Why nothing could be scored, where nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unscored: Option<String>,
    /// The history's record on this CPU model: per switch, how many boot
    /// pairs scored and how many honoured the floor.
    pub record: Vec<Held>,
}

/// One switch's record on one CPU model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    pub switch: String,
    pub scored: u32,
    pub honoured: u32,
}

/// Scores the price list of the present set's first run against the null
/// syscall's parts in `a` over `sets`, with the `counts` a user supplied.
pub fn score(a: &Attribution, sets: &[NamedSet], counts: &[SequenceCount]) -> FloorScores {
    let roles = &a.recognised.roles;
    let boot = |set: usize| sets[set].runs[0].inventory.identity.boot_id.clone();
    let present = &sets[roles.present].runs[0];
    let list = prices::of(present);
    let mut scores = FloorScores {
        cpu_model: present.inventory.cpu.model_name.clone(),
        present_boot: boot(roles.present),
        floors_from: format!("the present set's first run ({})", present.started_at),
        scores: Vec::new(),
        whole: None,
        unscored: None,
        record: Vec::new(),
    };
    let Some(row) = a
        .rows
        .iter()
        .find(|r| r.key.id == SYSCALL.probe && r.key.variant == SYSCALL.variant)
    else {
        scores.unscored = Some(format!(
            "the sets did not all measure {} {}",
            SYSCALL.probe, SYSCALL.variant
        ));
        return scores;
    };
    if list.prices.iter().all(|p| p.price_ns.is_none()) {
        scores.unscored = Some(format!(
            "the present set's run priced no kernel sequence: `mitbench run --probe {}` on \
             the present boot prices them",
            crate::mitigations::sequences::PROBE
        ));
        return scores;
    }
    for ((switch, part), without) in a
        .recognised
        .switches
        .iter()
        .zip(&row.parts)
        .zip(&roles.without)
    {
        let Some(without) = without.filter(|_| switch.kind == SwitchKind::Boot) else {
            continue;
        };
        let of_switch: Vec<&KernelPrice> = list
            .prices
            .iter()
            .filter(|p| p.vulnerabilities.contains(&switch.name.as_str()))
            .collect();
        if of_switch.is_empty() {
            continue;
        }
        let measured = part.as_ref().map(|e| e.ns);
        let off = (switch.name.clone(), boot(without));
        scores
            .scores
            .push(scored(off, &of_switch, counts, measured));
    }
    // Every boot switch together, where the sets separate more than one:
    // the whole toll against the floors of what the all-off set turns off.
    let boot_switches: Vec<&str> = a
        .recognised
        .switches
        .iter()
        .filter(|s| s.kind == SwitchKind::Boot)
        .map(|s| s.name.as_str())
        .collect();
    if let (Some(whole), Some(all_off), true) =
        (row.whole.as_ref(), roles.all_off, boot_switches.len() > 1)
    {
        let all: Vec<&KernelPrice> = list
            .prices
            .iter()
            .filter(|p| p.vulnerabilities.iter().any(|f| boot_switches.contains(f)))
            .collect();
        let off = ("all".to_string(), boot(all_off));
        scores.whole = Some(scored(off, &all, counts, Some(whole.ns)));
    }
    scores
}

fn scored(
    (switch, off_boot): (String, String),
    prices: &[&KernelPrice],
    counts: &[SequenceCount],
    part_ns: Option<Figure>,
) -> FloorScore {
    // Prices of one run, added as rows of one run are.
    let floors: Vec<Figure> = prices.iter().filter_map(|p| p.getpid_floor_ns).collect();
    let counted: Vec<Figure> = prices
        .iter()
        .filter_map(|p| {
            let c = counts.iter().find(|c| c.occurs == p.occurs)?;
            Some(p.price_ns?.map(|v| c.per_syscall * v))
        })
        .collect();
    let floor_ns = sum_of_one_run(floors.iter().copied());
    let predicted_ns = if counted.is_empty() {
        None
    } else {
        sum_of_one_run(floors.into_iter().chain(counted))
    };
    let honours = |bound: Option<Figure>| reaches(part_ns?, bound?);
    let mut mitigations: Vec<&'static str> = Vec::new();
    for p in prices {
        if !mitigations.contains(&p.mitigation) {
            mitigations.push(p.mitigation);
        }
    }
    FloorScore {
        switch,
        off_boot,
        mitigations,
        honours_floor: honours(floor_ns),
        honours_prediction: honours(predicted_ns),
        // Measured apart (the part from the sets, the floor from one run's
        // replay): half-widths in quadrature.
        beyond_floor_ns: part_ns
            .zip(floor_ns)
            .map(|(part, floor)| crate::analysis::combine::difference(part, floor)),
        floor_ns,
        predicted_ns,
        prices: prices.iter().map(|p| (*p).clone()).collect(),
        part_ns,
    }
}

/// Whether `part` reaches `bound`: a one-sided test at 5% that the part
/// is below the bound, their difference's half-widths in quadrature (they
/// are measured apart). The overlap of the two intervals it replaces
/// almost never failed: two 95% intervals overlap until the gap is ~2.8
/// standard errors. Unknown (None) where either has no interval: taken as
/// exact, any part short of its floor was said to miss it, with nothing to
/// say how far its noise reaches.
fn reaches(part: Figure, bound: Figure) -> Option<bool> {
    let gap = part.value - bound.value;
    Some(gap + part.half_width()?.hypot(bound.half_width()?) * (1.645 / 1.96) >= 0.0)
}

/// Keeps each score with a part and a floor in `history`, then reads the
/// record of this CPU model back into `scores`.
pub fn keep(
    scores: &mut FloorScores,
    history: &mut crate::store::history::History,
) -> Result<(), crate::store::history::HistoryError> {
    for s in scores.scores.iter().chain(&scores.whole) {
        let (Some(floor), Some(part), Some(honoured)) = (s.floor_ns, s.part_ns, s.honours_floor)
        else {
            continue;
        };
        history.keep_floor_score(
            &scores.cpu_model,
            &s.switch,
            (&scores.present_boot, &s.off_boot),
            (floor.value, part.value, honoured),
        )?;
    }
    scores.record = history
        .floor_record(&scores.cpu_model)?
        .into_iter()
        .map(|(switch, scored, honoured)| Held {
            switch,
            scored,
            honoured,
        })
        .collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(value: f64, half: f64) -> Figure {
        Figure::within(value, Some(half))
    }

    #[test]
    fn a_part_short_of_its_floor_beyond_the_noise_does_not_reach_it() {
        // The intervals overlap (16 + 3 >= 20 - 2), but the gap of 4 is
        // 1.1 half-widths of the difference (3.6): below at 5%.
        assert_eq!(reaches(figure(16.0, 3.0), figure(20.0, 2.0)), Some(false));
        assert_eq!(
            reaches(figure(18.0, 3.0), figure(20.0, 2.0)),
            Some(true),
            "within the noise"
        );
        assert_eq!(reaches(figure(25.0, 1.0), figure(20.0, 2.0)), Some(true));
        // Without an interval nothing says how far the noise reaches.
        assert_eq!(
            reaches(Figure::new(19.0, None), Figure::new(20.0, None)),
            None
        );
        assert_eq!(reaches(figure(19.0, 3.0), Figure::new(20.0, None)), None);
    }
}
