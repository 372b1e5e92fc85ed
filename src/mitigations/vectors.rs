//! The kernel's attack-vector controls (Linux 6.17 and later): the
//! `mitigations=` options that choose mitigations by threat rather than by
//! vulnerability (Documentation/admin-guide/hw-vuln/
//! attack_vector_controls.rst). This module reads the options off a
//! command line the way the kernel does, and says which of the
//! catalogue's mitigations each vector keeps ([`super::Mitigation::vectors`]
//! holds the kernel's table per mitigation, not per file).

use super::Mitigation;
use serde::Serialize;

/// One attack vector the kernel mitigates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vector {
    UserKernel,
    UserUser,
    GuestHost,
    GuestGuest,
    CrossThread,
}

pub const ALL: [Vector; 5] = [
    Vector::UserKernel,
    Vector::UserUser,
    Vector::GuestHost,
    Vector::GuestGuest,
    Vector::CrossThread,
];

/// The first kernel release that reads the vector options.
pub const FIRST_RELEASE: (u32, u32) = (6, 17);

impl Vector {
    /// Its name as the JSON and the metrics' `vector` label spell it.
    pub fn name(self) -> &'static str {
        match self {
            Vector::UserKernel => "user_kernel",
            Vector::UserUser => "user_user",
            Vector::GuestHost => "guest_host",
            Vector::GuestGuest => "guest_guest",
            Vector::CrossThread => "cross_thread",
        }
    }

    /// The `mitigations=` option that turns it off.
    pub fn option(self) -> &'static str {
        match self {
            Vector::UserKernel => "no_user_kernel",
            Vector::UserUser => "no_user_user",
            Vector::GuestHost => "no_guest_host",
            Vector::GuestGuest => "no_guest_guest",
            Vector::CrossThread => "no_cross_thread",
        }
    }

    /// What it protects, in a line: so that a price is never read as
    /// advice to turn it off.
    pub fn protects(self) -> &'static str {
        match self {
            Vector::UserKernel => "the kernel's memory from any program this machine runs",
            Vector::UserUser => "each program's data from the other programs on this machine",
            Vector::GuestHost => "this machine's kernel and VMM from the guests it runs",
            Vector::GuestGuest => "each guest this machine runs from the other guests",
            Vector::CrossThread => "a task from code on the sibling hyperthread of its core",
        }
    }

    /// Whether it guards against guests this machine runs, relevant only
    /// where it runs them.
    pub fn is_guest(self) -> bool {
        matches!(self, Vector::GuestHost | Vector::GuestGuest)
    }

    fn of_option(word: &str) -> Option<Vector> {
        ALL.into_iter().find(|v| v.option() == word)
    }
}

/// The vector controls a command line sets, as the kernel reads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Controls {
    /// The `mitigations=` words, in order (the kernel reads each in turn).
    pub words: Vec<String>,
    /// Whether this kernel reads vector options; the reason where not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The vectors still mitigated, and those the words turned off.
    pub enabled: Vec<Vector>,
    pub disabled: Vec<Vector>,
    /// What of the words the kernel does not take as written, a line each.
    pub problems: Vec<String>,
}

impl Controls {
    pub fn enables(&self, vector: Vector) -> bool {
        self.enabled.contains(&vector)
    }
}

/// The kernel release's (major, minor), where it reads as one.
pub fn release_of(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The vector controls of `cmdline` on a kernel of `release`. Every vector
/// starts enabled (the kernel's default, `auto`); each `mitigations=` word
/// is applied in order: `off` disables all, `auto` and `auto,nosmt` leave
/// them, and each `no_<vector>` after a comma disables one. An option the
/// kernel does not know stops its reading of that word, as the kernel
/// does ("Unsupported mitigations options").
pub fn read(cmdline: &str, release: &str) -> Controls {
    let words: Vec<String> = kernel_words(cmdline)
        .filter_map(|w| w.strip_prefix("mitigations="))
        .map(str::to_string)
        .collect();
    let mut enabled: Vec<Vector> = ALL.to_vec();
    let mut problems = Vec::new();
    let unavailable = match release_of(release) {
        Some(r) if r >= FIRST_RELEASE => None,
        Some((major, minor)) => Some(format!(
            "kernel {major}.{minor} has no attack-vector controls (they came in {}.{})",
            FIRST_RELEASE.0, FIRST_RELEASE.1
        )),
        None => Some(format!(
            "kernel release {release:?} does not read as a version: vector controls unknown"
        )),
    };
    if words.len() > 1 {
        problems.push(format!(
            "mitigations= is given {} times; the kernel reads each in turn, and so does this",
            words.len()
        ));
    }
    for word in &words {
        apply(word, unavailable.is_none(), &mut enabled, &mut problems);
    }
    let disabled = ALL.into_iter().filter(|v| !enabled.contains(v)).collect();
    Controls {
        words,
        unavailable,
        enabled,
        disabled,
        problems,
    }
}

/// The kernel's part of a command line: the words before a `--`, which
/// belong to init.
fn kernel_words(cmdline: &str) -> impl Iterator<Item = &str> {
    cmdline.split_whitespace().take_while(|w| *w != "--")
}

fn apply(word: &str, vectors_read: bool, enabled: &mut Vec<Vector>, problems: &mut Vec<String>) {
    let (global, options) = match word {
        "" => {
            problems.push("mitigations= is empty: the kernel keeps its default, auto".into());
            return;
        }
        w if w == "off" || w.starts_with("off,") => ("off", &w[3..]),
        w if w == "auto,nosmt" || w.starts_with("auto,nosmt,") => ("auto,nosmt", &w[10..]),
        w if w == "auto" || w.starts_with("auto,") => ("auto", &w[4..]),
        w => {
            problems.push(format!(
                "mitigations={w}: the kernel wants off, auto or auto,nosmt first and \
                 ignores the word"
            ));
            return;
        }
    };
    if global == "off" {
        enabled.clear();
    }
    let Some(options) = options.strip_prefix(',') else {
        return;
    };
    if !vectors_read {
        problems.push(format!(
            "mitigations={word}: this kernel reads no options after {global} and ignores them"
        ));
        return;
    }
    if global == "off" {
        problems.push(format!(
            "mitigations={word}: off turns every vector off; the options after it change nothing"
        ));
    }
    let mut seen: Vec<Vector> = Vec::new();
    for option in options.split(',') {
        let Some(vector) = Vector::of_option(option) else {
            problems.push(format!(
                "mitigations={word}: the kernel does not know {option:?} and reads no \
                 option after it"
            ));
            return;
        };
        if seen.contains(&vector) {
            problems.push(format!("mitigations={word}: {option} is given twice"));
        }
        seen.push(vector);
        enabled.retain(|v| *v != vector);
    }
}

/// The present `mitigations=` word with `no_<vector>` added: the options a
/// boot already has are kept (a new `mitigations=off` or `auto` word in
/// its place would drop them).
pub fn word_without(controls: &Controls, vector: Vector) -> String {
    let present = controls
        .words
        .last()
        .filter(|w| w.starts_with("auto"))
        .map_or("auto", String::as_str);
    format!("mitigations={present},{}", vector.option())
}

/// What one vector keeps of the mitigations in force.
#[derive(Debug, Clone)]
pub struct Kept {
    pub vector: Vector,
    /// Every mitigation in force that this vector needs.
    pub keeps: Vec<&'static Mitigation>,
    /// Those `no_<vector>` would turn off: no other enabled vector needs
    /// them and no option of their own holds them.
    pub turns_off: Vec<&'static Mitigation>,
}

/// For each enabled vector, the mitigations of `in_force` it keeps. A
/// mitigation turns off only when no enabled vector needs it, and its
/// vulnerability's own option (`retbleed=`, `spectre_v2=`) sets it
/// whatever the vectors say.
/// A mitigation that a vector keeps in a weaker mode once the vectors that
/// keep it in full are off (the kernel's table marks the cell).
pub struct WeakerMode {
    pub mitigation: super::Id,
    pub kept_by: Vector,
    /// The vulnerability file and the words of its line that say the full
    /// mode is the one in force (a Zen 2 whose SRSO is mitigated by SMT
    /// being off has no safe return to weaken).
    pub where_line_says: (&'static str, &'static str),
    /// What is left, in a phrase.
    pub leaves: &'static str,
}

/// SRSO's auto mode is safe-RET while user_kernel or guest_host is
/// enabled, else the microcode-only mode (the IBPB-extending microcode, no
/// safe-RET) while user_user or guest_guest is (bugs.c as of 6.18,
/// `srso_select_mitigation`).
pub const WEAKER_MODES: &[WeakerMode] = &[
    WeakerMode {
        mitigation: super::Id::ReturnThunks,
        kept_by: Vector::UserUser,
        where_line_says: SRSO_SAFE_RET,
        leaves: SRSO_MICROCODE_ONLY,
    },
    WeakerMode {
        mitigation: super::Id::ReturnThunks,
        kept_by: Vector::GuestGuest,
        where_line_says: SRSO_SAFE_RET,
        leaves: SRSO_MICROCODE_ONLY,
    },
];

// Only the full "Mitigation: Safe RET": without the IBPB-extending
// microcode ("Vulnerable: Safe RET, no microcode") the weaker mode is
// "Vulnerable: No microcode", which runs nothing and leaves nothing.
const SRSO_SAFE_RET: (&str, &str) = ("spec_rstack_overflow", "Mitigation: Safe RET");
const SRSO_MICROCODE_ONLY: &str =
    "SRSO's microcode-only mode (the IBPB-extending microcode on its own; no safe-RET)";

/// What `turned_off` leaves in a weaker mode where `controls` still
/// enable a vector that keeps it so and the vulnerability files
/// (name -> line) say its full mode is in force, each once.
pub fn left_weaker(
    controls: &Controls,
    turned_off: &[&'static Mitigation],
    without: Vector,
    vulnerabilities: &std::collections::BTreeMap<String, String>,
) -> Vec<&'static str> {
    let in_full = |(file, words): (&str, &str)| {
        vulnerabilities
            .get(file)
            .is_some_and(|line| line.contains(words))
    };
    let mut left: Vec<&'static str> = WEAKER_MODES
        .iter()
        .filter(|w| turned_off.iter().any(|m| m.id == w.mitigation))
        .filter(|w| in_full(w.where_line_says))
        .filter(|w| w.kept_by != without && controls.enables(w.kept_by))
        .map(|w| w.leaves)
        .collect();
    left.dedup();
    left
}

pub fn kept(controls: &Controls, in_force: &[&'static Mitigation], cmdline: &str) -> Vec<Kept> {
    let own_option = |m: &Mitigation| {
        let parameters: Vec<&str> = m
            .files
            .iter()
            .filter_map(|f| super::kernel::SWITCHES.iter().find(|(file, _)| file == f))
            .map(|(_, off)| off.split_once('=').map_or(*off, |(name, _)| name))
            .collect();
        kernel_words(cmdline).any(|w| {
            let name = w.split_once('=').map_or(w, |(name, _)| name);
            parameters.contains(&name)
        })
    };
    controls
        .enabled
        .iter()
        .map(|&vector| {
            let keeps: Vec<&'static Mitigation> = in_force
                .iter()
                .copied()
                .filter(|m| m.vectors.contains(&vector))
                .collect();
            let turns_off = keeps
                .iter()
                .copied()
                .filter(|m| {
                    let others = m.vectors.iter().filter(|v| **v != vector);
                    !own_option(m) && !others.into_iter().any(|v| controls.enables(*v))
                })
                .collect();
            Kept {
                vector,
                keeps,
                turns_off,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUEST: &str = "mitigations=auto,no_guest_host,no_guest_guest console=ttyS0 -- \
                         mitigations=off";

    #[test]
    fn the_options_disable_their_vectors_and_init_arguments_are_not_the_kernels() {
        let c = read(GUEST, "6.18.44-fc-v595");
        assert_eq!(c.unavailable, None);
        assert_eq!(
            c.enabled,
            [Vector::UserKernel, Vector::UserUser, Vector::CrossThread]
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(
            word_without(&c, Vector::UserUser),
            "mitigations=auto,no_guest_host,no_guest_guest,no_user_user"
        );
        assert_eq!(read("ro quiet", "6.17.0").enabled, ALL);
        assert_eq!(
            word_without(&read("ro", "6.17.0"), Vector::GuestHost),
            "mitigations=auto,no_guest_host"
        );
    }

    #[test]
    fn hostile_words_each_say_one_line_of_what_the_kernel_makes_of_them() {
        let one = |cmdline: &str| {
            let c = read(cmdline, "6.18.1");
            assert_eq!(c.problems.len(), 1, "{cmdline}: {:?}", c.problems);
            c
        };
        let c = one("mitigations=auto,no_user_kernel,frobnicate,no_user_user");
        assert_eq!(c.enabled.len(), 4, "stops at the unknown option");
        assert!(c.problems[0].contains("\"frobnicate\""));
        assert!(one("mitigations=").problems[0].contains("empty"));
        assert!(one("mitigations=off,no_user_kernel").enabled.is_empty());
        assert!(!one("mitigations=auto,no_user_user,no_user_user").enables(Vector::UserUser));
        assert_eq!(one("mitigations=no_user_kernel").enabled, ALL);
        let twice = one("mitigations=off mitigations=auto");
        assert!(twice.enabled.is_empty(), "auto does not bring vectors back");
        let old = read("mitigations=auto,no_user_kernel", "5.15.0-91-generic");
        assert!(old.unavailable.as_deref().unwrap().contains("5.15"));
        assert_eq!(old.enabled, ALL);
        assert_eq!(old.problems.len(), 1);
        assert!(read("", "weird").unavailable.is_some());
    }

    #[test]
    fn a_vector_turns_off_only_what_no_other_enabled_vector_and_no_own_option_holds() {
        use super::super::Id;
        let in_force = [
            Id::Retpoline.entry(),
            Id::VerwClearing.entry(),
            Id::Ibpb.entry(),
            Id::SpectreV1Barriers.entry(),
        ];
        let names = |ms: &[&Mitigation]| ms.iter().map(|m| m.name).collect::<Vec<_>>();
        let kept_here = |cmdline: &str| kept(&read(cmdline, "6.18.0"), &in_force, cmdline);
        let guest = kept_here("mitigations=auto,no_guest_host,no_guest_guest");
        let user_kernel = &guest[0];
        assert_eq!(user_kernel.vector, Vector::UserKernel);
        assert_eq!(names(&user_kernel.keeps).len(), 3);
        assert_eq!(
            names(&user_kernel.turns_off),
            ["retpoline / IBRS / eIBRS", "spectre_v1 barriers"],
            "VERW stays for user_user"
        );
        assert_eq!(names(&guest[1].turns_off), ["IBPB"]);
        assert!(guest[2].keeps.is_empty(), "cross_thread");
        // Where guest_host is on, the retpolines stay for it.
        let all = kept_here("mitigations=auto");
        assert_eq!(names(&all[0].turns_off), ["spectre_v1 barriers"]);
        // spectre_v2= holds the retpolines whatever the vectors say.
        let own = kept_here("mitigations=auto,no_guest_host spectre_v2=retpoline");
        assert_eq!(names(&own[0].turns_off), ["spectre_v1 barriers"]);
    }
}
