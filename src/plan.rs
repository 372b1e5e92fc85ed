//! Which boots separate the kernel's mitigations in force on this machine:
//! the present boot, one with `mitigations=off`, and one per mitigation in
//! force with only that one switched off, each as its whole kernel command
//! line. mitbench never reboots or changes a boot setting; the plan says
//! how a user makes each boot once, and what to run on it.

use crate::analysis::figure::Figure;
use crate::inventory::Inventory;
use crate::mitigations::crossing::RETURN_TOLL_CAUSE;
use crate::mitigations::kernel::{self as switches, InForce};
use crate::mitigations::vectors::{self, Vector};
use serde::Serialize;

/// Ways to make a boot with another command line once, for the user to
/// take: mitbench never reboots.
pub const HOW_TO_BOOT: &[&str] = &[
    "kexec: kexec -l /boot/vmlinuz-$(uname -r) --initrd=/boot/initrd.img-$(uname -r) \
     --append=\"<command line>\" && systemctl kexec",
    "GRUB: a menu entry with the command line in /etc/grub.d/40_custom, update-grub, then \
     grub-reboot \"<entry title>\" && reboot (one boot, then the default again)",
    "systemd-boot: an entry with `options <command line>`, then bootctl set-oneshot \
     <entry>.conf && reboot",
];

/// Runs a set on each boot is made of, unless the user asks otherwise.
pub const DEFAULT_RUNS: usize = 5;

/// The probes every kernel entry and return mitigation taxes: they cross
/// into the kernel at least once per item (the attribution table's
/// kernel crossings).
pub const SELECTION: &[&str] = &["os", "syscall", "memory", "thread"];

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The CPU and the kernel release.
    pub machine: String,
    pub in_force: Vec<InForce>,
    pub boots: Vec<Boot>,
    /// What to run on each boot.
    pub run: String,
    /// Why there is nothing to separate, where that is so.
    pub note: Option<String>,
    /// Whether the boots' `measured` were read from a history.
    pub history_read: bool,
    /// The attack-vector controls of the present command line, and a boot
    /// for each vector whose `no_<vector>` would turn off a mitigation in
    /// force here (none where the kernel has no vector controls).
    pub vectors: crate::mitigations::vectors::Controls,
    pub vector_boots: Vec<VectorBoot>,
    /// The boots that would tell whether a mitigation leaves the return
    /// toll (`answer::returns`), and the toll the history last measured.
    pub return_toll: ReturnTollBoots,
    /// The hooks every syscall pays for (not boots: each goes where it
    /// was added), what removes each, and their price where the history's
    /// last run of this machine read one.
    pub hooks: Vec<crate::inventory::hooks::OnPath>,
    pub hook_toll: Option<HookTollFrom>,
    /// On a guest: the boots of its host that would separate the host's
    /// guest_host mitigations, which the guest pays on its exits (absent
    /// off a guest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_boots: Vec<HostBoot>,
}

/// A boot of a guest's host: a word on the host's command line, what it
/// turns off there, and which of the guest's exits would show it.
#[derive(Debug, Clone, Serialize)]
pub struct HostBoot {
    pub adds: &'static str,
    pub turns_off: &'static str,
    pub shows_in: &'static str,
    /// The CPUs whose host has the word (the guest runs on the host's
    /// CPU); None: every CPU.
    #[serde(skip)]
    only_on: Option<HostCpus>,
}

/// CPUs by cpuinfo's vendor and family.
#[derive(Debug, Clone, Copy)]
struct HostCpus {
    vendor: &'static str,
    families: &'static [&'static str],
}

/// The host's words that move what a guest's exits pay, as the kernel's
/// admin guide names them; SRSO's only on a Zen 1-4 (families 0x17 and
/// 0x19).
const HOST_BOOTS: &[HostBoot] = &[
    HostBoot {
        adds: "mitigations=auto,no_guest_host",
        turns_off: "every mitigation of the host's guest_host vector (a host kernel with \
                    attack-vector controls, 6.17 or later)",
        shows_in: "every exit: guest/exit cpuid, and the shootdowns and wake-ups between vCPUs",
        only_on: None,
    },
    HostBoot {
        adds: "vmscape=off",
        turns_off: "VMSCAPE's IBPB before the host's first return to its VMM after an exit",
        shows_in: "only exits the VMM handles in user space (a device's I/O): not CPUID's, \
                   which the host's kernel answers, so guest/exit stays",
        only_on: None,
    },
    HostBoot {
        adds: "spec_rstack_overflow=ibpb-vmexit",
        turns_off: "SRSO's safe return on the host's own entries, for an IBPB on each exit of \
                    a guest",
        shows_in: "every exit, dearer by an IBPB: guest/exit cpuid",
        only_on: Some(HostCpus {
            vendor: "AuthenticAMD",
            families: &["23", "25"],
        }),
    },
];

/// The host boots that would separate what a guest pays its host: none
/// where the inventory is no guest's.
fn host_boots(inventory: &Inventory) -> Vec<HostBoot> {
    let cpu = &inventory.cpu;
    if cpu.flags.get("hypervisor") != Some(&true) {
        return Vec::new();
    }
    HOST_BOOTS
        .iter()
        .filter(|b| {
            b.only_on
                .is_none_or(|c| cpu.vendor == c.vendor && c.families.contains(&cpu.family.as_str()))
        })
        .cloned()
        .collect()
}

/// The hooks' price per syscall and the run it was read in.
#[derive(Debug, Clone, Serialize)]
pub struct HookTollFrom {
    #[serde(flatten)]
    pub toll: crate::store::results::answered::HookToll,
    pub from_run: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReturnTollBoots {
    /// What the toll belongs to (`mitigations::crossing::RETURN_TOLL_CAUSE`),
    /// the evidence, and whether this kernel runs it.
    pub cause: &'static str,
    pub evidence: &'static str,
    pub cause_in_force: bool,
    /// The plan's boots (by name) that turn the cause off.
    pub boots: Vec<String>,
    /// getpid's toll from a function in the history's last run of this
    /// machine, where that run measured it, and the run.
    pub present_ns: Option<Figure>,
    pub from_run: Option<i64>,
}

/// A boot with one more attack vector off: the present `mitigations=` word
/// with `no_<vector>` added, so the options it has stay.
#[derive(Debug, Clone, Serialize)]
pub struct VectorBoot {
    pub vector: Vector,
    pub protects: &'static str,
    /// The `mitigations=` word this boot has in place of the present one.
    pub adds: String,
    pub cmdline: String,
    /// The mitigations in force here it would turn off.
    pub turns_off: Vec<&'static str>,
    /// What of those stays in a weaker mode, kept by a vector still on
    /// (SRSO's microcode-only mode where safe-RET goes).
    pub leaves: Vec<&'static str>,
    /// What the last stored run's replay predicts it saves, where a run
    /// of this machine priced them: per getpid at least, per switch.
    pub predicted: Option<Predicted>,
    /// As [`Boot::measured`].
    pub measured: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Predicted {
    /// The run whose price list this is.
    pub from_run: i64,
    pub getpid_floor_ns: Option<Figure>,
    pub per_switch_ns: Option<Figure>,
}

/// One boot of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct Boot {
    /// Which boot it is, as the other commands look it up.
    #[serde(skip)]
    pub key: BootKey,
    /// "present", "mitigations=off", or "without <vulnerability>".
    pub name: String,
    /// The parameter this boot adds to the present command line (none for
    /// the present boot).
    pub adds: Option<String>,
    /// The whole command line, without the boot loader's own BOOT_IMAGE=.
    pub cmdline: String,
    /// The history's newest run set made under this command line (its run
    /// ids), where the history holds one; None: still to do.
    pub measured: Option<String>,
}

/// A boot of the plan by what it turns off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootKey {
    Present,
    /// `mitigations=off`.
    AllOff,
    /// The vulnerability file whose mitigation its parameter turns off.
    Without(String),
}

impl BootKey {
    /// The name a boot is shown and stored under.
    fn name(&self) -> String {
        match self {
            BootKey::Present => "present".to_string(),
            BootKey::AllOff => "mitigations=off".to_string(),
            BootKey::Without(vulnerability) => format!("without {vulnerability}"),
        }
    }
}

/// The plan for the machine `inventory` describes, with `runs` runs a set.
pub fn plan(inventory: &Inventory, runs: usize) -> Plan {
    let present = inventory.kernel.cmdline.trim().to_string();
    let in_force = switches::in_force(&inventory.cpu.vulnerabilities);
    let base = without_boot_image(&present);
    let already_off = crate::inventory::mitigation_words(&present)
        .iter()
        .any(|w| w == "mitigations=off");
    let mut boots = vec![Boot {
        key: BootKey::Present,
        name: BootKey::Present.name(),
        adds: None,
        cmdline: base.clone(),
        measured: None,
    }];
    let note = if already_off {
        Some(
            "this boot runs with mitigations=off: the boot to compare it with is one without \
             that word"
                .to_string(),
        )
    } else if in_force.is_empty() {
        Some("no vulnerability file says a mitigation is in force here".to_string())
    } else {
        None
    };
    if note.is_none() {
        boots.push(boot(BootKey::AllOff, "mitigations=off", &base));
        for f in &in_force {
            let key = BootKey::Without(f.vulnerability.clone());
            boots.push(boot(key, &f.off, &base));
        }
    }
    let probes: Vec<String> = SELECTION.iter().map(|p| format!("--probe {p}")).collect();
    let controls = vectors::read(&present, &inventory.kernel.release);
    let vector_boots = match (&controls.unavailable, already_off) {
        (None, false) => vector_boots(inventory, &controls, &base),
        _ => Vec::new(),
    };
    Plan {
        machine: format!(
            "{}, kernel {}",
            inventory.cpu.model_name, inventory.kernel.release
        ),
        in_force,
        run: format!("mitbench run --runs {runs} {}", probes.join(" ")),
        note,
        history_read: false,
        vectors: controls,
        vector_boots,
        return_toll: ReturnTollBoots {
            cause: RETURN_TOLL_CAUSE.what,
            evidence: RETURN_TOLL_CAUSE.evidence,
            cause_in_force: RETURN_TOLL_CAUSE.in_force(&inventory.cpu.vulnerabilities),
            boots: return_boots(&boots),
            present_ns: None,
            from_run: None,
        },
        boots,
        hooks: inventory.hooks.on_syscall_path(),
        hook_toll: None,
        host_boots: host_boots(inventory),
    }
}

/// The boots of `boots` that turn the return toll's cause off:
/// mitigations=off and the cause's own.
fn return_boots(boots: &[Boot]) -> Vec<String> {
    boots
        .iter()
        .filter(|b| match &b.key {
            BootKey::AllOff => true,
            BootKey::Without(v) => v == RETURN_TOLL_CAUSE.vulnerability,
            BootKey::Present => false,
        })
        .map(|b| b.name.clone())
        .collect()
}

/// A boot per enabled vector whose option would turn something off here.
fn vector_boots(
    inventory: &Inventory,
    controls: &vectors::Controls,
    base: &str,
) -> Vec<VectorBoot> {
    let in_force = crate::answer::vectors::in_force(inventory);
    vectors::kept(controls, &in_force, &inventory.kernel.cmdline)
        .into_iter()
        .filter(|k| !k.turns_off.is_empty())
        .map(|k| {
            let adds = vectors::word_without(controls, k.vector);
            VectorBoot {
                vector: k.vector,
                protects: k.vector.protects(),
                cmdline: with_word(base, &adds),
                adds,
                turns_off: k.turns_off.iter().map(|m| m.name).collect(),
                leaves: vectors::left_weaker(
                    controls,
                    &k.turns_off,
                    k.vector,
                    &inventory.cpu.vulnerabilities,
                ),
                predicted: None,
                measured: None,
            }
        })
        .collect()
}

fn boot(key: BootKey, word: &str, base: &str) -> Boot {
    Boot {
        name: key.name(),
        key,
        adds: Some(word.to_string()),
        cmdline: with_word(base, word),
        measured: None,
    }
}

impl Plan {
    /// The boot of `key`, where the plan has it.
    pub fn boot(&self, key: &BootKey) -> Option<&Boot> {
        self.boots.iter().find(|b| b.key == *key)
    }

    /// Marks each boot (and vector boot) measured where one of `sets` (the
    /// history's newest of each command line) ran under its command line:
    /// the set with the fewest process controls on, as the boot's own.
    pub fn mark_measured(&mut self, sets: &[crate::store::history::StoredSet]) {
        self.history_read = true;
        let newest = |cmdline: &str| {
            sets.iter()
                .filter(|s| without_boot_image(&s.cmdline) == cmdline)
                .min_by_key(|s| crate::mitigations::process::on(&s.controls).len())
                .map(|s| {
                    format!(
                        "{} ({} run(s) from {})",
                        s.side(),
                        s.ids.len(),
                        s.started_at
                    )
                })
        };
        for boot in &mut self.vector_boots {
            boot.measured = newest(&boot.cmdline);
        }
        for boot in &mut self.boots {
            boot.measured = newest(&boot.cmdline);
        }
    }

    /// Each vector boot's saving as the stored run `id` (`doc`) priced
    /// its sequences, where that run measured this machine's command line.
    pub fn predict(&mut self, id: i64, doc: &crate::store::results::RunDocument) {
        let machine = format!(
            "{}, kernel {}",
            doc.inventory.cpu.model_name, doc.inventory.kernel.release
        );
        if machine != self.machine
            || without_boot_image(&doc.inventory.kernel.cmdline) != self.boots[0].cmdline
        {
            return;
        }
        if !self.hooks.is_empty() {
            self.hook_toll = doc
                .hook_toll
                .clone()
                .map(|toll| HookTollFrom { toll, from_run: id });
        }
        if let Some(toll) =
            crate::answer::returns::of_one(doc, crate::mitigations::crossing::RETURN_TOLL_SYSCALL)
                .and_then(|t| t.extra_ns)
        {
            self.return_toll.present_ns = Some(toll);
            self.return_toll.from_run = Some(id);
        }
        let prices = crate::answer::prices::of(doc);
        let costs = crate::answer::vectors::of(&doc.inventory, &prices).vectors;
        for boot in &mut self.vector_boots {
            boot.predicted = costs
                .iter()
                .find(|c| c.vector == boot.vector)
                .filter(|c| c.getpid_floor_ns.is_some() || c.per_switch_ns.is_some())
                .map(|c| Predicted {
                    from_run: id,
                    getpid_floor_ns: c.getpid_floor_ns,
                    per_switch_ns: c.per_switch_ns,
                });
        }
    }

    /// Where the last stored run, `id`, of the present boot read audit on
    /// or knew a run that did (`RunDocument::audit_enabled_in_run`), and it
    /// is off now with no `never,task` rule, that hook too: the kernel does
    /// not say it.
    pub fn audit_enabled_earlier(
        &mut self,
        present: &Inventory,
        id: i64,
        last: &crate::store::results::RunDocument,
    ) {
        let still_off = present
            .hooks
            .audit
            .read()
            .is_some_and(|a| a.off_and_unkept());
        let this_boot = last.inventory.identity.boot_id == present.identity.boot_id;
        let on_then = last
            .inventory
            .hooks
            .audit
            .read()
            .is_some_and(|a| a.enabled > 0);
        let run = last.audit_enabled_in_run.or(on_then.then_some(id));
        if let (Some(run), true, true) = (run, still_off, this_boot) {
            self.hooks
                .push(crate::inventory::hooks::audit_enabled_earlier(run));
        }
    }

    /// The boots the history holds no set of yet.
    pub fn to_do(&self) -> impl Iterator<Item = &Boot> {
        self.boots.iter().filter(|b| b.measured.is_none())
    }
}

/// The command line without the boot loader's BOOT_IMAGE= (GRUB adds it
/// itself; kexec and other loaders take the rest).
pub fn without_boot_image(cmdline: &str) -> String {
    cmdline
        .split_whitespace()
        .filter(|w| !w.starts_with("BOOT_IMAGE="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `cmdline` with `word` in place of any word of the same parameter (the
/// kernel takes the last, but one of each reads plainly), else appended
/// before a `--` that ends the kernel's part.
pub fn with_word(cmdline: &str, word: &str) -> String {
    let name = |w: &str| w.split_once('=').map_or(w, |(n, _)| n).to_string();
    let wanted = name(word);
    let mut words: Vec<&str> = cmdline.split_whitespace().collect();
    let end = words.iter().position(|w| *w == "--").unwrap_or(words.len());
    if let Some(i) = words[..end].iter().position(|w| name(w) == wanted) {
        words[i] = word;
    } else {
        words.insert(end, word);
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_replaces_its_own_parameter_or_joins_before_the_init_arguments() {
        assert_eq!(
            with_word("ro mitigations=auto,nosmt quiet", "mitigations=off"),
            "ro mitigations=off quiet"
        );
        assert_eq!(
            with_word("ro quiet -- --init-arg", "spectre_v2=off"),
            "ro quiet spectre_v2=off -- --init-arg"
        );
        assert_eq!(with_word("", "nospectre_v1"), "nospectre_v1");
        assert_eq!(
            without_boot_image("BOOT_IMAGE=/vmlinuz root=/dev/sda ro"),
            "root=/dev/sda ro"
        );
    }
}
