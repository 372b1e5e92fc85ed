//! Which conditions each run set of an attribution ran under, read from its
//! inventory: the boot (its command line, recognised against the plan's
//! boots, and its vulnerability files, which must agree that the kernel
//! took the parameter) and the controls a wrapper can set for a process
//! and its children (a seccomp filter, SSBD or indirect branch speculation
//! by prctl). From these, which set is the present one (every mitigation
//! on), which has them all off, and which lacks one mitigation only.

use crate::mitigations::kernel::{self as switches, InForce};
use crate::mitigations::process;
use crate::plan;
use crate::store::results::RunDocument;
use serde::Serialize;
use std::collections::BTreeSet;

/// A run set as the user named it.
pub struct NamedSet {
    pub name: String,
    pub runs: Vec<RunDocument>,
}

/// One mitigation an attribution separates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Switch {
    /// The vulnerability file's name ("spectre_v2"), or the process
    /// control's ("seccomp filter").
    pub name: String,
    /// "boot" for the kernel's own, "process" for one a wrapper sets.
    pub kind: SwitchKind,
    /// How the present set has it: the vulnerability file's line, or the
    /// /proc/self/status line.
    pub present: String,
    /// What switches it off: the boot parameter, or "run without the
    /// wrapper".
    pub off_by: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchKind {
    Boot,
    Process,
}

/// What a set is to the attribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "is", content = "off")]
pub enum SetRole {
    /// Every mitigation of the attribution on.
    Present,
    /// Every one off: the whole toll's other end.
    AllOff,
    /// Only this one off: its part's other end (with one mitigation to
    /// separate, the all-off set is this too).
    Without(String),
}

/// The sets recognised: each set's conditions, the mitigations they
/// separate, which set is which, and what they leave unseparated.
#[derive(Debug, Clone, Serialize)]
pub struct Recognised {
    /// The mitigations some set has off, which the attribution separates.
    pub switches: Vec<Switch>,
    pub sets: Vec<SetConditions>,
    pub roles: Roles,
    pub not_separated: NotSeparated,
}

impl Recognised {
    /// The separated mitigations' names, in order: the parts' columns.
    pub fn names(&self) -> Vec<String> {
        self.switches.iter().map(|s| s.name.clone()).collect()
    }
}

/// Which set is which, as indices into the sets.
#[derive(Debug, Clone, Serialize)]
pub struct Roles {
    /// The set with every mitigation on.
    pub present: usize,
    /// The set with every separated mitigation off, where one is.
    pub all_off: Option<usize>,
    /// Per switch (in `switches`' order), the set without it only.
    pub without: Vec<Option<usize>>,
}

/// What the sets do not separate.
#[derive(Debug, Clone, Serialize)]
pub struct NotSeparated {
    /// Mitigations in force in every set.
    pub in_force: Vec<Switch>,
    /// The plan's boots no set was made on.
    pub boots: Vec<plan::Boot>,
}

/// What one set ran under, as recognised.
#[derive(Debug, Clone, Serialize)]
pub struct SetConditions {
    /// How the user named it (a range, ids, files).
    pub name: String,
    pub runs: usize,
    /// The plan's boot it ran on ("present", "mitigations=off", "without
    /// spectre_v2"), with its command line.
    pub boot: plan::Boot,
    /// The separated mitigations it has off, and what that makes it.
    pub off: Vec<String>,
    pub roles: Vec<SetRole>,
}

/// Why sets cannot be attributed: said to the user, exit 2.
pub type Refusal = String;

/// The process controls on in a run, with their lines, in the table's
/// order.
fn process_on(doc: &RunDocument) -> Vec<(&'static str, String)> {
    process::on(&doc.inventory.identity.process_controls)
        .into_iter()
        .map(|(control, value)| (control.name, format!("{}: {value}", control.status_line)))
        .collect()
}

fn cmdline(doc: &RunDocument) -> String {
    plan::without_boot_image(doc.inventory.kernel.cmdline.trim())
}

/// Refuses sets that are not of one machine, kernel and mitbench build,
/// or whose runs disagree among themselves about their conditions.
fn check_alike(sets: &[NamedSet]) -> Result<(), Refusal> {
    let first = sets
        .iter()
        .find_map(|s| s.runs.first())
        .ok_or("no run to attribute")?;
    let same = |what: &str, of: &dyn Fn(&RunDocument) -> String| -> Result<(), Refusal> {
        for set in sets {
            for doc in &set.runs {
                if of(doc) != of(first) {
                    return Err(format!(
                        "{} has a run of {what} {:?} where the first run has {:?}: an attribution \
                         compares boots of one machine, one kernel and one mitbench build",
                        set.name,
                        of(doc),
                        of(first)
                    ));
                }
            }
        }
        Ok(())
    };
    same("machine", &|d| {
        format!(
            "{} ({})",
            d.inventory.identity.hostname, d.inventory.identity.machine_id
        )
    })?;
    same("CPU", &|d| d.inventory.cpu.model_name.clone())?;
    same("kernel", &|d| d.inventory.kernel.release.clone())?;
    same("mitbench build", &|d| d.build.git_commit.clone())?;
    same_hooks(sets, first)?;
    for set in sets {
        let Some(one) = set.runs.first() else {
            return Err(format!("{} names no run", set.name));
        };
        for doc in &set.runs[1..] {
            let conditions = |d: &RunDocument| {
                (
                    cmdline(d),
                    switches::in_force(&d.inventory.cpu.vulnerabilities),
                    process_on(d),
                )
            };
            if conditions(doc) != conditions(one) {
                return Err(format!(
                    "{}'s runs were not all made under the same boot and process controls \
                     (runs started {} and {}): a set is runs of one condition",
                    set.name, one.started_at, doc.started_at
                ));
            }
        }
    }
    Ok(())
}

/// The hooks every syscall pays for, named, as one line ("none").
fn hooks_on_path(doc: &RunDocument) -> String {
    let hooks = doc.hooks_on_path();
    crate::inventory::hooks::listed(&hooks.iter().map(|h| h.hook.as_str()).collect::<Vec<_>>())
}

/// Refuses sets whose runs had other hooks on the syscall path than the
/// first run: a hook's toll would be read as a mitigation's part.
fn same_hooks(sets: &[NamedSet], first: &RunDocument) -> Result<(), Refusal> {
    for set in sets {
        for doc in &set.runs {
            if hooks_on_path(doc) != hooks_on_path(first) {
                return Err(format!(
                    "{} has a run with hooks on the syscall path {:?} where the first run has {:?}: \
                     every syscall pays for them, so their toll would be read as a mitigation's \
                     part; attribute sets made under the same hooks (`mitbench plan` names what \
                     removes each)",
                    set.name,
                    hooks_on_path(doc),
                    hooks_on_path(first)
                ));
            }
        }
    }
    Ok(())
}

/// Recognises each set's conditions; refuses what an attribution cannot
/// read (see [`Refusal`]).
pub fn recognise(sets: &[NamedSet]) -> Result<Recognised, Refusal> {
    check_alike(sets)?;
    let in_force: Vec<Vec<InForce>> = sets
        .iter()
        .map(|s| switches::in_force(&s.runs[0].inventory.cpu.vulnerabilities))
        .collect();
    let processes: Vec<Vec<(&str, String)>> = sets.iter().map(|s| process_on(&s.runs[0])).collect();
    let present = present_set(sets, &in_force, &processes)?;
    let present_doc = &sets[present].runs[0];
    let the_plan = plan::plan(&present_doc.inventory, plan::DEFAULT_RUNS);
    let mut switches: Vec<Switch> = in_force[present]
        .iter()
        .map(|f| Switch {
            name: f.vulnerability.clone(),
            kind: SwitchKind::Boot,
            present: f.line.clone(),
            off_by: f.off.clone(),
        })
        .collect();
    switches.extend(processes[present].iter().map(|(name, line)| Switch {
        name: name.to_string(),
        kind: SwitchKind::Process,
        present: line.clone(),
        off_by: "run without the wrapper that sets it".to_string(),
    }));
    let mut recognised = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let boot = boot_of(set, &the_plan)?;
        let mut off = kernel_off(set, &boot, &in_force[present], &in_force[i])?;
        off.extend(
            processes[present]
                .iter()
                .filter(|(name, _)| !processes[i].iter().any(|(n, _)| n == name))
                .map(|(name, _)| name.to_string()),
        );
        recognised.push(SetConditions {
            name: set.name.clone(),
            runs: set.runs.len(),
            boot,
            off,
            roles: Vec::new(),
        });
    }
    // A mitigation no set has off is in force throughout: nothing here
    // separates it, and the all-off set is the one without every other.
    let (switches, constant): (Vec<Switch>, Vec<Switch>) = switches
        .into_iter()
        .partition(|s| recognised.iter().any(|set| set.off.contains(&s.name)));
    let (all_off, without) = assign_roles(&mut recognised, &switches, sets, present)?;
    let missing = the_plan
        .boots
        .iter()
        .filter(|b| !recognised.iter().any(|s| s.boot.name == b.name))
        .cloned()
        .collect();
    Ok(Recognised {
        switches,
        sets: recognised,
        roles: Roles {
            present,
            all_off,
            without,
        },
        not_separated: NotSeparated {
            in_force: constant,
            boots: missing,
        },
    })
}

/// The present set: of the boot with the most kernel mitigations in
/// force, the set with every process control any set has.
fn present_set(
    sets: &[NamedSet],
    in_force: &[Vec<InForce>],
    processes: &[Vec<(&str, String)>],
) -> Result<usize, Refusal> {
    // The present boot is the one with the most kernel mitigations in
    // force; among its sets, the present set has every process control any
    // set has.
    let most = in_force.iter().map(Vec::len).max().unwrap_or(0);
    let all_controls: BTreeSet<&str> = processes
        .iter()
        .flat_map(|p| p.iter().map(|(name, _)| *name))
        .collect();
    let mut present = (0..sets.len())
        .filter(|&i| in_force[i].len() == most)
        .filter(|&i| processes[i].len() == all_controls.len())
        .collect::<Vec<_>>();
    // A boot whose parameter the kernel did not take has the present
    // boot's files; its command line, which asks for a mitigation off,
    // tells it apart.
    if present.len() > 1 {
        let asks_off = |i: &usize| {
            let line = cmdline(&sets[*i].runs[0]);
            line.split_whitespace().any(|w| {
                w == "mitigations=off" || switches::SWITCHES.iter().any(|(_, off)| *off == w)
            })
        };
        if present.iter().any(|i| !asks_off(i)) {
            present.retain(|i| !asks_off(i));
        }
    }
    match present[..] {
        [one] => Ok(one),
        [] => Err(format!(
            "no set has every mitigation the others show on (the most kernel mitigations in \
             force, and the process controls {}): name the set of the present boot with every \
             control on",
            list(all_controls.iter().copied())
        )),
        [a, b, ..] => Err(same_conditions(&sets[a].name, &sets[b].name)),
    }
}

/// Each set's roles from the mitigations it has off: the present set (none
/// off), the all-off set, the set without exactly one; a set with some off
/// between, or a second of one role, is refused.
fn assign_roles(
    recognised: &mut [SetConditions],
    switches: &[Switch],
    sets: &[NamedSet],
    present: usize,
) -> Result<(Option<usize>, Vec<Option<usize>>), Refusal> {
    let mut all_off = None;
    let mut without = vec![None; switches.len()];
    for i in 0..recognised.len() {
        let off = recognised[i].off.clone();
        let mut roles = Vec::new();
        if off.is_empty() {
            roles.push(SetRole::Present);
        }
        if !switches.is_empty() && off.len() == switches.len() {
            roles.push(SetRole::AllOff);
            claim(&mut all_off, i, sets)?;
        }
        if let [one] = &off[..] {
            let k = switches
                .iter()
                .position(|s| &s.name == one)
                .expect("off names a switch");
            roles.push(SetRole::Without(one.clone()));
            claim(&mut without[k], i, sets)?;
        }
        if roles.is_empty() {
            return Err(format!(
                "{} has {} mitigations off ({}): the plan has boots with one off, or all; a set \
                 with some off between cannot be read as a part",
                sets[i].name,
                off.len(),
                off.join(", ")
            ));
        }
        if off.is_empty() && i != present {
            return Err(same_conditions(&sets[present].name, &sets[i].name));
        }
        recognised[i].roles = roles;
    }
    Ok((all_off, without))
}

fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

fn same_conditions(a: &str, b: &str) -> Refusal {
    format!(
        "{a} and {b} ran under the same boot and process controls: name them as one set \
         ({a},{b}, or a range)"
    )
}

/// Takes a role for set `i`; two sets with the same role are refused.
fn claim(slot: &mut Option<usize>, i: usize, sets: &[NamedSet]) -> Result<(), Refusal> {
    match *slot {
        Some(j) => Err(same_conditions(&sets[j].name, &sets[i].name)),
        None => {
            *slot = Some(i);
            Ok(())
        }
    }
}

/// The plan's boot a set's command line is.
fn boot_of(set: &NamedSet, the_plan: &plan::Plan) -> Result<plan::Boot, Refusal> {
    let line = cmdline(&set.runs[0]);
    // A vector boot turns several mitigations off at once, which no part
    // of this table is: compare reads it against the present boot and
    // names what its option switched.
    if let Some(v) = the_plan.vector_boots.iter().find(|b| b.cmdline == line) {
        return Err(format!(
            "{} ran under the plan's boot without the {} attack vector ({}), which turns off              {} at once: attribute reads boots with one mitigation off or all; `mitbench compare`              reads this set against the present boot's and names what the option switched",
            set.name,
            v.vector.name(),
            v.adds,
            v.turns_off.join(", ")
        ));
    }
    the_plan
        .boots
        .iter()
        .find(|b| b.cmdline == line)
        .cloned()
        .ok_or_else(|| {
            let present = &the_plan.boots[0].cmdline;
            let words = |l: &str| l.split_whitespace().map(str::to_string).collect();
            let (mine, theirs): (BTreeSet<String>, BTreeSet<String>) =
                (words(&line), words(present));
            let added: Vec<&String> = mine.difference(&theirs).collect();
            let dropped: Vec<&String> = theirs.difference(&mine).collect();
            format!(
                "{}'s boot matches no boot of the plan (`mitbench plan`): its command line adds \
                 [{}] and drops [{}] against the present boot's; the plan's boots each change \
                 one mitigation word",
                set.name,
                added
                    .iter()
                    .map(|w| w.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                dropped
                    .iter()
                    .map(|w| w.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
}

/// The kernel mitigations a set's boot has off, where its vulnerability
/// files agree with its command line: a parameter the kernel did not take
/// leaves its file as the present boot's, and the set would measure
/// nothing of it.
fn kernel_off(
    set: &NamedSet,
    boot: &plan::Boot,
    present: &[InForce],
    mine: &[InForce],
) -> Result<Vec<String>, Refusal> {
    let vulnerabilities = &set.runs[0].inventory.cpu.vulnerabilities;
    let line_of = |name: &str| vulnerabilities.get(name).map(|l| l.trim().to_string());
    let switched: Vec<&InForce> = match boot.adds.as_deref() {
        None => Vec::new(),
        Some("mitigations=off") => present.iter().collect(),
        Some(word) => present.iter().filter(|f| f.off == word).collect(),
    };
    for f in &switched {
        if line_of(&f.vulnerability).as_deref() == Some(f.line.as_str()) {
            return Err(format!(
                "{}'s command line has {} but its {} file still says \"{}\": the kernel did not \
                 take the parameter, so the set measures the present boot",
                set.name,
                boot.adds.as_deref().unwrap_or_default(),
                f.vulnerability,
                f.line
            ));
        }
    }
    if boot.adds.is_none() {
        let lost: Vec<&str> = present
            .iter()
            .filter(|f| !mine.contains(f))
            .map(|f| f.vulnerability.as_str())
            .collect();
        if !lost.is_empty() {
            return Err(format!(
                "{} has the present boot's command line but its vulnerability files differ \
                 ({}): another kernel or microcode, not a boot of the plan",
                set.name,
                lost.join(", ")
            ));
        }
    }
    Ok(switched.iter().map(|f| f.vulnerability.clone()).collect())
}
