//! The catalogue of mitigations mitbench knows, in one place: each
//! mitigation, the inventory entries that switch it, the probes it taxes
//! and why, with the document behind the entry ([`MITIGATIONS`]); the
//! kernel's own switches and the one rule for "in force" ([`kernel`]); the
//! process controls a task can set and the one rule for "on" ([`process`]).
//! Compare explains changes by it, the summary and the plan name what is in
//! force by it, attribute recognises boots and wrappers by it, and tax
//! names what a workload's tolls hold by it.

pub mod crossing;
pub mod kernel;
pub mod process;
pub mod sequences;
pub mod vectors;

use vectors::Vector;
// The kernel's table names them by their attack vectors; so does the catalogue.
const UK: Vector = Vector::UserKernel;
const UU: Vector = Vector::UserUser;
const GH: Vector = Vector::GuestHost;
const GG: Vector = Vector::GuestGuest;

/// A catalogue entry's key: what the price list, tax, the summary's
/// mitigations in force and the metrics name a mitigation by, so a reader
/// joins them without matching display names, and a misspelt one does not
/// compile. Declared in [`MITIGATIONS`]' order (a test holds the two to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Id {
    Pti,
    Retpoline,
    ReturnThunks,
    RsbFilling,
    Ibpb,
    Ssbd,
    VerwClearing,
    L1dFlush,
    BhiClearing,
    BhiDisS,
    SpectreV1Barriers,
    ItsThunks,
    Srbds,
    Gds,
    Vmscape,
    ItlbMultihit,
    SeccompFilters,
    CompilerHardening,
}

impl Id {
    /// Its word in JSON and in metric labels.
    pub const fn key(self) -> &'static str {
        match self {
            Id::Pti => "pti",
            Id::Retpoline => "retpoline",
            Id::ReturnThunks => "return-thunks",
            Id::RsbFilling => "rsb-filling",
            Id::Ibpb => "ibpb",
            Id::Ssbd => "ssbd",
            Id::VerwClearing => "verw-clearing",
            Id::L1dFlush => "l1d-flush",
            Id::BhiClearing => "bhi-clearing",
            Id::BhiDisS => "bhi-dis-s",
            Id::SpectreV1Barriers => "spectre-v1-barriers",
            Id::ItsThunks => "its-thunks",
            Id::Srbds => "srbds",
            Id::Gds => "gds",
            Id::Vmscape => "vmscape",
            Id::ItlbMultihit => "itlb-multihit",
            Id::SeccompFilters => "seccomp-filters",
            Id::CompilerHardening => "compiler-hardening",
        }
    }

    /// Its catalogue entry.
    pub fn entry(self) -> &'static Mitigation {
        &MITIGATIONS[self as usize]
    }
}

impl serde::Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

/// One mitigation mitbench knows.
#[derive(Debug, Clone, Copy)]
pub struct Mitigation {
    pub id: Id,
    pub name: &'static str,
    /// The vulnerability files (/sys/devices/system/cpu/vulnerabilities)
    /// whose "Mitigation: ..." line can mean it runs; each file's boot
    /// word that turns it off is in [`kernel::SWITCHES`].
    pub files: &'static [&'static str],
    /// Where one file reports several mitigations (spectre_v2 names
    /// retpolines, RSB filling, IBPB and BHI), the words of the line that
    /// say this one runs; empty: the file's mitigation is this one.
    pub in_line: &'static [&'static str],
    /// Further inventory keys (a command-line parameter, a kconfig option,
    /// a process control) whose change can switch it; matched, with
    /// `files`, as lower-case substrings of the changed key.
    pub switched_by: &'static [&'static str],
    /// Probe ids it taxes, as globs; empty where it taxes nothing a
    /// probe measures (`why` says what it does tax).
    pub taxes: &'static [&'static str],
    /// The attack vectors whose control keeps it (the kernel's table,
    /// per mitigation: IBPB and BHI share spectre_v2's file but not its
    /// vectors); empty where no vector control turns it off.
    pub vectors: &'static [Vector],
    pub why: &'static str,
    pub source: &'static str,
}

/// Rows of probes that cross into the kernel at least once per item.
const KERNEL_CROSSINGS: &[&str] = &[
    "os/getpid",
    "os/syscall-return",
    "os/clock_gettime",
    "os/ctxswitch",
    "os/thread",
    "os/fork",
    "os/exec",
    "memory/*",
    "syscall/*",
    "thread/*",
];

/// The synthetic machine's syscall-like probe, whose rows cross into its
/// kernel once per item as os/getpid's do: what a cost it adds on every
/// crossing moves (`synthetic::host`). No mitigation taxes it.
pub const SYNTHETIC_SYSCALL: &str = "synthetic/syscall";

pub const MITIGATIONS: &[Mitigation] = &[
    Mitigation {
        id: Id::Pti,
        name: "PTI (page-table isolation)",
        vectors: &[UK],
        files: &["meltdown"],
        in_line: &[],
        switched_by: &["pti", "page_table_isolation"],
        taxes: KERNEL_CROSSINGS,
        why: "every kernel entry and exit switches page tables (CR3), and without PCID flushes the TLB",
        source: "https://docs.kernel.org/arch/x86/pti.html",
    },
    Mitigation {
        id: Id::Retpoline,
        name: "retpoline / IBRS / eIBRS",
        vectors: &[UK, GH],
        files: &["spectre_v2"],
        in_line: &[],
        switched_by: &["retpoline", "ibrs"],
        taxes: KERNEL_CROSSINGS,
        why: "the kernel's indirect branches go through retpoline thunks, or run with IBRS set on entry",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        id: Id::ReturnThunks,
        name: "return thunks / SRSO safe-RET",
        vectors: &[UK, GH],
        files: &["retbleed", "spec_rstack_overflow"],
        in_line: &[],
        switched_by: &["rethunk", "srso"],
        taxes: KERNEL_CROSSINGS,
        why: "every kernel return goes through a return thunk; on AMD Zen the SRSO safe-RET sequence",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/srso.html",
    },
    Mitigation {
        id: Id::RsbFilling,
        name: "RSB filling",
        vectors: &[UK, GH],
        files: &["spectre_v2", "retbleed"],
        in_line: &["RSB filling"],
        switched_by: &[],
        taxes: &[
            "os/ctxswitch",
            "os/thread",
            "os/fork",
            "os/exec",
            "thread/*",
        ],
        why: "the return stack buffer is refilled on context switch so user returns cannot be steered",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        id: Id::Ibpb,
        name: "IBPB",
        vectors: &[UU, GG],
        files: &["spectre_v2"],
        in_line: &["IBPB: conditional", "IBPB: always-on"],
        switched_by: &["spectre_v2_user", "ibpb", "speculationindirectbranch"],
        taxes: &["os/ctxswitch", "os/fork", "os/exec", "thread/*"],
        why: "a prediction barrier on switches between tasks that may not share predictor state",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        id: Id::Ssbd,
        name: "SSBD (speculative store bypass disable)",
        // In its prctl mode (the default since 6.17): only a process that
        // asks pays, and only while user_user is enabled.
        vectors: &[UU],
        files: &["spec_store_bypass"],
        in_line: &[],
        switched_by: &["ssbd", "speculation_store_bypass"],
        taxes: &[
            "syscall/specctrl-*",
            "indirect/pipeline-*",
            "cflags/*",
            "section/*",
        ],
        why: "loads wait for older stores' addresses: store-to-load heavy user code slows down",
        source: "https://docs.kernel.org/userspace-api/spec_ctrl.html",
    },
    Mitigation {
        id: Id::VerwClearing,
        name: "VERW buffer clearing (MDS / TAA / MMIO)",
        vectors: &[UK, UU, GH, GG],
        files: &[
            "mds",
            "tsx_async_abort",
            "mmio_stale_data",
            "reg_file_data_sampling",
            "tsa",
        ],
        in_line: &[],
        switched_by: &["md_clear"],
        taxes: KERNEL_CROSSINGS,
        why: "VERW clears the CPU buffers on every return to user space (on AMD, for TSA too)",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/mds.html",
    },
    Mitigation {
        id: Id::L1dFlush,
        name: "L1D flush",
        vectors: &[UK, GH],
        files: &["l1tf"],
        in_line: &[],
        switched_by: &["l1d_flush"],
        taxes: &["os/ctxswitch", "thread/*"],
        why: "L1D is flushed on VM entry, or on switching to a task that asked for it",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/l1d_flush.html",
    },
    // The kernel names three BHI states on the spectre_v2 line, and only
    // "BHI: SW loop" runs the clearing loop on entry; "BHI: Retpoline"
    // means the retpolines already stop the attack and nothing more runs
    // (priced as the retpoline entry), "BHI: BHI_DIS_S" a hardware control.
    Mitigation {
        id: Id::BhiClearing,
        name: "BHI (branch history clearing)",
        vectors: &[UK, GH],
        files: &["spectre_v2"],
        in_line: &["BHI: SW loop"],
        switched_by: &["spectre_bhi", "bhi"],
        taxes: KERNEL_CROSSINGS,
        why: "the branch history is cleared by a loop of calls and jumps on syscall entry",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        id: Id::BhiDisS,
        name: "BHI (BHI_DIS_S)",
        vectors: &[UK, GH],
        files: &["spectre_v2"],
        in_line: &["BHI: BHI_DIS_S"],
        switched_by: &["spectre_bhi", "bhi"],
        taxes: KERNEL_CROSSINGS,
        why: "the CPU keeps user branch history from steering the kernel's indirect branches \
              (BHI_DIS_S set in SPEC_CTRL)",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        id: Id::SpectreV1Barriers,
        name: "spectre_v1 barriers",
        vectors: &[UK],
        files: &["spectre_v1"],
        in_line: &[],
        switched_by: &["nospectre_v1"],
        taxes: KERNEL_CROSSINGS,
        why: "an LFENCE after SWAPGS on kernel entry, and user pointers masked before use",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        id: Id::ItsThunks,
        name: "ITS (indirect target selection thunks)",
        vectors: &[UK, GH],
        files: &["indirect_target_selection"],
        in_line: &[],
        switched_by: &[],
        taxes: KERNEL_CROSSINGS,
        why: "the kernel's indirect branches and returns in the lower half of a cache line go \
              through ITS thunks",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/indirect-target-selection.html",
    },
    Mitigation {
        id: Id::Srbds,
        name: "SRBDS (RDRAND/RDSEED serialised)",
        vectors: &[UK, UU, GH, GG],
        files: &["srbds"],
        in_line: &[],
        switched_by: &[],
        taxes: &[],
        why: "microcode serialises RDRAND and RDSEED: only code that draws random numbers \
              that way pays",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/special-register-buffer-data-sampling.html",
    },
    Mitigation {
        id: Id::Gds,
        name: "GDS (gather data sampling microcode)",
        vectors: &[UK, UU, GH, GG],
        files: &["gather_data_sampling"],
        in_line: &[],
        switched_by: &[],
        taxes: &[],
        why: "microcode slows AVX gather instructions: only vector code that gathers pays",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/gather_data_sampling.html",
    },
    Mitigation {
        id: Id::Vmscape,
        name: "VMSCAPE (IBPB before returning to the VMM)",
        vectors: &[GH],
        files: &["vmscape"],
        in_line: &[],
        switched_by: &[],
        taxes: &[],
        why: "a prediction barrier on the way from a guest's exit to the user-space VMM: \
              only a KVM host's VMM pays",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/vmscape.html",
    },
    Mitigation {
        id: Id::ItlbMultihit,
        name: "iTLB multihit (no executable huge pages in guests)",
        vectors: &[],
        files: &["itlb_multihit"],
        in_line: &[],
        switched_by: &["nx_huge_pages"],
        taxes: &[],
        why: "KVM maps a guest's executable pages small: only a KVM host's guests pay",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/multihit.html",
    },
    Mitigation {
        id: Id::SeccompFilters,
        name: "seccomp filters",
        vectors: &[],
        files: &[],
        in_line: &[],
        switched_by: &["seccomp"],
        taxes: KERNEL_CROSSINGS,
        why: "every syscall of the process runs each of its filters before the call",
        source: "https://docs.kernel.org/userspace-api/seccomp_filter.html",
    },
    Mitigation {
        id: Id::CompilerHardening,
        name: "compiler hardening",
        vectors: &[],
        files: &[],
        in_line: &[],
        switched_by: &["c_compiler", "rustc"],
        taxes: &["cflags/*", "indirect/*"],
        why: "the measured code itself was built otherwise (thunks, CFI, stack protection)",
        source: "https://gcc.gnu.org/onlinedocs/gcc/Instrumentation-Options.html",
    },
];

/// The mitigations a change of this inventory key can switch.
pub fn switched_by(key: &str) -> Vec<&'static Mitigation> {
    let key = key.to_ascii_lowercase();
    if key.ends_with("cmdline: mitigations") {
        // mitigations=off|auto|auto,nosmt switches them all.
        return MITIGATIONS
            .iter()
            .filter(|m| m.id != Id::SeccompFilters && m.id != Id::CompilerHardening)
            .collect();
    }
    MITIGATIONS
        .iter()
        .filter(|m| {
            m.files
                .iter()
                .chain(m.switched_by)
                .any(|word| key.contains(word))
        })
        .collect()
}

/// The mitigations a change of this inventory key from `old` to `new` can
/// switch: where both are `mitigations=` words that leave some vector on,
/// those whose vectors (one enabled keeps it) differ between the two;
/// else every one [`switched_by`] names.
pub fn switched_by_change(key: &str, old: &str, new: &str) -> Vec<&'static Mitigation> {
    let all = switched_by(key);
    if !key.to_ascii_lowercase().ends_with("cmdline: mitigations") {
        return all;
    }
    // The release only decides whether options are read; a change of them
    // is read as a kernel that reads them would.
    let enabled = |word: &str| {
        let word = if word == "absent" { "auto" } else { word };
        vectors::read(&format!("mitigations={word}"), "6.17").enabled
    };
    let (before, after) = (enabled(old), enabled(new));
    if before.is_empty() || after.is_empty() || before == after {
        return all;
    }
    let kept = |on: &[Vector], m: &Mitigation| m.vectors.iter().any(|v| on.contains(v));
    all.into_iter()
        .filter(|m| !m.vectors.is_empty() && kept(&before, m) != kept(&after, m))
        .collect()
}

/// The mitigations a vulnerability file's line says run: those of the
/// file whose words stand in the line, or that need none. Empty where the
/// line says none runs ([`kernel::mitigated`]).
pub fn of_file(file: &str, line: &str) -> Vec<&'static Mitigation> {
    if !kernel::mitigated(line) {
        return Vec::new();
    }
    MITIGATIONS
        .iter()
        .filter(|m| m.files.contains(&file))
        .filter(|m| m.in_line.is_empty() || m.in_line.iter().any(|w| line.contains(w)))
        .collect()
}

/// Whether the probe's rows cross into the kernel at least once per item:
/// what a cost on every syscall (a seccomp filter, a hook) can move.
pub fn crosses_kernel(probe: &str) -> bool {
    probe == SYNTHETIC_SYSCALL
        || KERNEL_CROSSINGS
            .iter()
            .any(|glob| wildmatch::WildMatch::new(glob).matches(probe))
}

/// Whether a mitigation taxes this probe.
pub fn taxes(mitigation: &Mitigation, probe: &str) -> bool {
    mitigation
        .taxes
        .iter()
        .any(|glob| wildmatch::WildMatch::new(glob).matches(probe))
}

/// Lines by name (a vulnerability file's, a /proc status line's) from
/// pairs, as the inventory holds them: for tests.
#[cfg(test)]
pub(crate) fn lines_of(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

// Every key has its entry: `Id::entry` indexes by the declaration order.
const _: () = assert!(MITIGATIONS.len() == Id::CompilerHardening as usize + 1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_sits_at_its_keys_place_and_keys_are_distinct_words() {
        for (at, m) in MITIGATIONS.iter().enumerate() {
            assert_eq!(m.id as usize, at, "{} is out of Id's order", m.name);
            assert_eq!(m.id.entry().name, m.name);
        }
        let mut keys: Vec<&str> = MITIGATIONS.iter().map(|m| m.id.key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), MITIGATIONS.len());
    }

    #[test]
    fn every_vulnerability_file_names_a_mitigation_whatever_its_line_says() {
        // A file's mitigation with no words of its own stands for the
        // file, so a line this catalogue has not seen still names one.
        for (file, _) in kernel::SWITCHES {
            let found = of_file(file, "Mitigation: something new");
            assert!(!found.is_empty(), "{file} names no mitigation");
            assert!(MITIGATIONS.iter().all(|m| {
                m.files
                    .iter()
                    .all(|f| kernel::SWITCHES.iter().any(|(known, _)| known == f))
            }));
        }
        let line = "Mitigation: Retpolines; STIBP: disabled; RSB filling; BHI: Not affected";
        let names: Vec<&str> = of_file("spectre_v2", line).iter().map(|m| m.name).collect();
        assert_eq!(names, ["retpoline / IBRS / eIBRS", "RSB filling"]);
        assert!(of_file("spectre_v2", "Not affected").is_empty());
    }

    #[test]
    fn bhi_is_the_clearing_loop_only_where_the_line_says_it_runs() {
        let bhi = |line: &str| -> Vec<&str> {
            of_file("spectre_v2", line)
                .iter()
                .map(|m| m.name)
                .filter(|n| n.starts_with("BHI"))
                .collect()
        };
        // Intel guests of this project read each of these three.
        let retpoline = "Mitigation: Retpolines; IBPB: conditional; IBRS_FW; STIBP: disabled; \
                         RSB filling; PBRSB-eIBRS: Not affected; BHI: Retpoline";
        assert!(bhi(retpoline).is_empty(), "{:?}", bhi(retpoline));
        let looped = "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; \
                      PBRSB-eIBRS: SW sequence; BHI: SW loop, KVM: SW loop";
        assert_eq!(bhi(looped), ["BHI (branch history clearing)"]);
        let hardware = "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; \
                        PBRSB-eIBRS: Not affected; BHI: BHI_DIS_S";
        assert_eq!(bhi(hardware), ["BHI (BHI_DIS_S)"]);
    }

    #[test]
    fn a_seccomp_change_explains_syscalls_and_not_user_code() {
        let found = switched_by("process: Seccomp_filters");
        assert_eq!(found.len(), 1);
        assert!(taxes(found[0], "os/getpid"));
        assert!(!taxes(found[0], "indirect/call"));
        assert!(!taxes(found[0], "section/crypto-1KiB"));
    }

    #[test]
    fn mitigations_off_switches_every_kernel_mitigation() {
        let found = switched_by("cmdline: mitigations");
        assert!(found.len() >= 8);
        assert!(found.iter().all(|m| m.id != Id::SeccompFilters));
    }

    #[test]
    fn each_mitigation_is_kept_by_the_vectors_the_kernels_table_gives_its_vulnerabilities() {
        // The kernel's names for the vulnerabilities each entry answers;
        // IBPB is Spectre_v2_user's though spectre_v2's file reports it.
        let kernel_names: &[(Id, &[&str])] = &[
            (Id::Pti, &["Meltdown"]),
            (Id::Retpoline, &["Spectre_v2"]),
            (Id::ReturnThunks, &["Retbleed", "SRSO"]),
            (Id::RsbFilling, &["Spectre_v2"]),
            (Id::Ibpb, &["Spectre_v2_user"]),
            (Id::Ssbd, &["SSB"]),
            (Id::VerwClearing, &["MDS", "TAA", "MMIO", "RFDS", "TSA"]),
            (Id::L1dFlush, &["L1TF"]),
            (Id::BhiClearing, &["BHI"]),
            (Id::BhiDisS, &["BHI"]),
            (Id::SpectreV1Barriers, &["Spectre_v1"]),
            (Id::ItsThunks, &["ITS"]),
            (Id::Srbds, &["SRBDS"]),
            (Id::Gds, &["GDS"]),
            (Id::Vmscape, &["VMSCAPE"]),
        ];
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/attack-vectors.tsv"
        );
        let table = std::fs::read_to_string(path).unwrap();
        let mut rows = table.lines().filter(|l| !l.starts_with('#'));
        let header: Vec<&str> = rows.next().unwrap().split('\t').collect();
        let columns: Vec<(usize, Vector)> = vectors::ALL
            .iter()
            .filter(|v| **v != Vector::CrossThread)
            .map(|v| (header.iter().position(|h| *h == v.name()).unwrap(), *v))
            .collect();
        // Each row's cells: X (mitigated in full while the vector is
        // enabled), prctl (a process pays only if it asks), microcode (a
        // weaker mode), or -.
        let cells: std::collections::BTreeMap<&str, Vec<(Vector, &str)>> = rows
            .map(|l| {
                let cells: Vec<&str> = l.split('\t').collect();
                let marked = columns.iter().map(|(i, v)| (*v, cells[*i]));
                (cells[0], marked.filter(|(_, c)| *c != "-").collect())
            })
            .collect();
        let kinds: Vec<&str> = cells.values().flatten().map(|(_, c)| *c).collect();
        assert!(
            kinds
                .iter()
                .all(|c| ["X", "prctl", "microcode"].contains(c)),
            "{kinds:?}"
        );
        let marked = |vulnerability: &str, kind: &str| -> Vec<Vector> {
            cells[vulnerability]
                .iter()
                .filter(|(_, c)| *c == kind)
                .map(|(v, _)| *v)
                .collect()
        };
        for (id, vulnerabilities) in kernel_names {
            // SSBD is kept in its prctl mode; every other entry in full.
            let kind = if *id == Id::Ssbd { "prctl" } else { "X" };
            let mut wanted: Vec<Vector> = vulnerabilities
                .iter()
                .flat_map(|v| marked(v, kind))
                .collect();
            wanted.sort();
            wanted.dedup();
            assert_eq!(id.entry().vectors, wanted, "{id:?}");
        }
        // SRSO's microcode-only mode is what the vectors that keep it
        // leave once safe-RET's go.
        let weaker: Vec<Vector> = vectors::WEAKER_MODES
            .iter()
            .filter(|w| w.mitigation == Id::ReturnThunks)
            .map(|w| w.kept_by)
            .collect();
        assert_eq!(weaker, marked("SRSO", "microcode"));
        // The rest are not in the table: the process's own controls, the
        // build, KVM's page size.
        for m in MITIGATIONS {
            let listed = kernel_names.iter().any(|(id, _)| *id == m.id);
            assert!(listed || m.vectors.len() <= 1, "{}", m.name);
        }
    }

    #[test]
    fn a_vector_option_switches_only_what_no_other_enabled_vector_keeps() {
        let names = |old: &str, new: &str| -> Vec<&str> {
            switched_by_change("cmdline: mitigations", old, new)
                .iter()
                .map(|m| m.name)
                .collect()
        };
        let guest = "auto,no_guest_host,no_guest_guest";
        let switched = names(guest, &format!("{guest},no_user_user"));
        // SSBD's prctl mode goes with user_user (bugs.c as of 6.18).
        assert_eq!(
            switched,
            ["IBPB", "SSBD (speculative store bypass disable)"],
            "VERW stays for user_kernel"
        );
        let switched = names(guest, &format!("{guest},no_user_kernel"));
        assert!(switched.contains(&"PTI (page-table isolation)"));
        assert!(switched.contains(&"retpoline / IBRS / eIBRS"));
        assert!(!switched.contains(&"IBPB"));
        // Off, or a change the vectors do not tell (nosmt): every one.
        assert_eq!(names("auto", "off"), names("absent", "off"));
        assert!(names("auto", "auto,nosmt").len() >= 8);
        let other = switched_by_change("cmdline: nopti", "absent", "set");
        assert_eq!(other.len(), switched_by("cmdline: nopti").len());
    }

    #[test]
    fn every_entry_names_its_source() {
        for m in MITIGATIONS {
            assert!(m.source.starts_with("https://"), "{}", m.name);
            assert!(
                !m.files.is_empty() || !m.switched_by.is_empty(),
                "{}: nothing switches it",
                m.name
            );
        }
    }
}
