//! The answer first: what the mitigations cost on this machine, in one
//! screen, built from a run's records. Each toll names the records its
//! figures come from; a toll the run did not measure is left out, one the
//! machine could not measure says why in one line. The renderings
//! (terminal, Markdown, HTML) and the JSON all start with it.

use super::{Record, RunDocument};
use crate::inventory::switches::{self, InForce};
use crate::probes::FigureRole;
use serde::Serialize;

/// The summary of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The CPU and the kernel release.
    pub machine: String,
    /// The kernel's mitigations in force, by its vulnerability files.
    pub in_force: Vec<InForce>,
    /// The command line's mitigation words (`mitigations=auto`, `nopti`).
    pub command_line: Vec<String>,
    pub tolls: Vec<Toll>,
    /// What the run cannot tell, and the boots that would.
    pub next_step: NextStep,
}

/// Which record a figure comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct From {
    pub probe: String,
    pub variant: String,
}

/// One figure of a toll.
#[derive(Debug, Clone, Serialize)]
pub struct Quantity {
    /// What the figure is ("per call", "retpoline +").
    pub what: String,
    pub value: f64,
    pub unit: Unit,
    pub ci95: Option<[f64; 2]>,
    pub from: From,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    Ns,
    Us,
    /// A ratio against another figure (1.0 = the same).
    Times,
    /// A number of items per batch.
    Batch,
}

/// One toll the summary reports.
#[derive(Debug, Clone, Serialize)]
pub struct Toll {
    pub kind: TollKind,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    Measured { figures: Vec<Quantity> },
    Unsupported { reason: String, from: From },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TollKind {
    NullSyscall,
    IndirectCall,
    PipelineBulk,
    SpeculationControl,
    Seccomp,
    PageTableChange,
    Shootdown,
    ThreadChannel,
    CryptoSection,
    Teardown,
}

impl TollKind {
    pub fn label(self) -> &'static str {
        match self {
            TollKind::NullSyscall => "null syscall",
            TollKind::IndirectCall => "indirect call",
            TollKind::PipelineBulk => "packet pipeline",
            TollKind::SpeculationControl => "SSBD (prctl)",
            TollKind::Seccomp => "seccomp filter",
            TollKind::PageTableChange => "mprotect",
            TollKind::Shootdown => "TLB shootdown",
            TollKind::ThreadChannel => "thread + channel",
            TollKind::CryptoSection => "16 MiB sha256",
            TollKind::Teardown => "lock-held teardown",
        }
    }
}

/// What only another boot can measure.
#[derive(Debug, Clone, Serialize)]
pub struct NextStep {
    /// Boot parameters, each switching one mitigation in force off.
    pub boots: Vec<String>,
    /// What to run on such a boot, and the comparison that follows.
    pub then: String,
}

/// The summary of `doc`.
pub fn of(doc: &RunDocument) -> Summary {
    let in_force = switches::in_force(&doc.inventory.cpu.vulnerabilities);
    let mhz = doc.inventory.tsc_mhz.filter(|m| *m > 0.0);
    let run = Lookup { doc, mhz };
    let tolls = [
        run.null_syscall(),
        run.indirect_call(),
        run.pipeline_bulk(),
        run.speculation_control(),
        run.seccomp(),
        run.page_table_change(),
        run.shootdown(),
        run.thread_channel(),
        run.crypto_section(),
        run.teardown(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut boots: Vec<String> = vec!["mitigations=off".to_string()];
    boots.extend(in_force.iter().map(|f| f.off.clone()));
    Summary {
        machine: format!(
            "{}, kernel {}",
            doc.inventory.cpu.model_name, doc.inventory.kernel.release
        ),
        command_line: crate::inventory::mitigation_words(&doc.inventory.kernel.cmdline),
        in_force,
        tolls,
        next_step: NextStep {
            boots,
            then: "`mitbench run` and `mitbench compare <this run> last`".to_string(),
        },
    }
}

/// The records of one run, looked up by probe and variant.
struct Lookup<'d> {
    doc: &'d RunDocument,
    mhz: Option<f64>,
}

/// A record's figure, or why there is none.
enum Found<'d> {
    Measured(&'d Record),
    Unsupported(Outcome),
}

impl<'d> Lookup<'d> {
    fn record(&self, probe: &str, variant: &str) -> Option<Found<'d>> {
        let r = self
            .doc
            .results
            .iter()
            .find(|r| r.id == probe && r.variant == variant)?;
        match (&r.cost, &r.unsupported) {
            (Some(_), _) => Some(Found::Measured(r)),
            (None, Some(u)) => Some(Found::Unsupported(Outcome::Unsupported {
                reason: u.reason.clone(),
                from: from(r),
            })),
            (None, None) => None,
        }
    }

    /// The measured records of `probe` among `variants`, in that order;
    /// the toll says unsupported where the first is, and is left out where
    /// any is missing.
    fn all(&self, probe: &str, variants: &[&str]) -> Option<Result<Vec<&'d Record>, Outcome>> {
        let mut found = Vec::new();
        for v in variants {
            match self.record(probe, v)? {
                Found::Measured(r) => found.push(r),
                Found::Unsupported(why) => return Some(Err(why)),
            }
        }
        Some(Ok(found))
    }

    fn toll(
        &self,
        kind: TollKind,
        probe: &str,
        variants: &[&str],
        figures: impl FnOnce(&[&'d Record]) -> Vec<Quantity>,
    ) -> Option<Toll> {
        let outcome = match self.all(probe, variants)? {
            Ok(records) => {
                let figures = figures(&records);
                if figures.is_empty() {
                    return None;
                }
                Outcome::Measured { figures }
            }
            Err(why) => why,
        };
        Some(Toll { kind, outcome })
    }

    fn ns(&self, ticks: f64) -> Option<f64> {
        self.mhz.map(|mhz| ticks / mhz * 1000.0)
    }

    /// A record's own cost, in ns.
    fn cost(&self, what: &str, r: &Record) -> Option<Quantity> {
        let cost = r.cost.as_ref()?;
        Some(Quantity {
            what: what.to_string(),
            value: cost.ns,
            unit: Unit::Ns,
            ci95: cost
                .interval_ticks()
                .and_then(|[lo, hi]| Some([self.ns(lo)?, self.ns(hi)?])),
            from: from(r),
        })
    }

    /// What a record adds to its baseline, in ns (the paired difference).
    fn added(&self, what: &str, r: &Record) -> Option<Quantity> {
        let vs = r.vs_baseline.as_ref()?;
        Some(Quantity {
            what: what.to_string(),
            value: self.ns(vs.delta_ticks)?,
            unit: Unit::Ns,
            ci95: vs
                .delta_ci95_ticks
                .and_then(|[lo, hi]| Some([self.ns(lo)?, self.ns(hi)?])),
            from: from(r),
        })
    }

    /// `variant`'s cost over `base`'s, from their headlines.
    fn times(&self, what: &str, r: &Record, base: &Record) -> Option<Quantity> {
        let (a, b) = (r.cost.as_ref()?.ticks, base.cost.as_ref()?.ticks);
        (b > 0.0).then(|| Quantity {
            what: what.to_string(),
            value: a / b,
            unit: Unit::Times,
            ci95: None,
            from: from(r),
        })
    }

    /// A co-runner's p99 wait beside a record, µs.
    fn wait_p99(&self, what: &str, r: &Record) -> Option<Quantity> {
        let f = r
            .figures
            .iter()
            .find(|f| f.role == FigureRole::CoRunnerWaitP99)?;
        Some(Quantity {
            what: what.to_string(),
            value: f.value,
            unit: Unit::Us,
            ci95: f.ci95,
            from: from(r),
        })
    }

    /// A series' batch that wins back 90% of its per-batch toll.
    fn win_back(
        &self,
        what: &str,
        probe: &str,
        group: &str,
        from_variant: &str,
    ) -> Option<Quantity> {
        let advice = self
            .doc
            .advice
            .iter()
            .find(|a| a.id == probe && a.group == group)?;
        Some(Quantity {
            what: what.to_string(),
            value: advice.batch_to_win_back as f64,
            unit: Unit::Batch,
            ci95: None,
            from: From {
                probe: probe.to_string(),
                variant: from_variant.to_string(),
            },
        })
    }

    /// A series' fitted toll per batch (per call) and per item, in ns.
    fn fit(&self, probe: &str, group: &str, from_variant: &str) -> Vec<Quantity> {
        let Some(fit) = self
            .doc
            .amortization
            .iter()
            .find(|f| f.id == probe && f.group == group)
        else {
            return Vec::new();
        };
        let ns = |ticks: f64| self.ns(ticks);
        let q = |what: &str, v: f64, (lo, hi): (f64, f64)| -> Option<Quantity> {
            Some(Quantity {
                what: what.to_string(),
                value: ns(v)?,
                unit: Unit::Ns,
                ci95: Some([ns(lo)?, ns(hi)?]),
                from: From {
                    probe: probe.to_string(),
                    variant: from_variant.to_string(),
                },
            })
        };
        present([
            q("per call", fit.fit.per_batch, fit.fit.per_batch_ci95),
            q(
                &format!("per {}", fit.item),
                fit.fit.per_item,
                fit.fit.per_item_ci95,
            ),
        ])
    }

    fn null_syscall(&self) -> Option<Toll> {
        self.toll(TollKind::NullSyscall, "os/getpid", &["syscall"], |r| {
            present([self.cost("getpid", r[0])])
        })
    }

    fn indirect_call(&self) -> Option<Toll> {
        self.toll(
            TollKind::IndirectCall,
            "indirect/call",
            &["indirect", "retpoline", "return-thunk"],
            |r| {
                present([
                    self.cost("plain", r[0]),
                    self.added("retpoline +", r[1]),
                    self.added("return thunk +", r[2]),
                ])
            },
        )
    }

    fn pipeline_bulk(&self) -> Option<Toll> {
        self.toll(
            TollKind::PipelineBulk,
            "indirect/pipeline-64",
            &["retpoline/B=1"],
            |_| {
                let mut figures = self.fit("indirect/pipeline-64", "retpoline", "retpoline/B=*");
                figures.retain(|q| q.what == "per call");
                if let Some(q) = figures.first_mut() {
                    q.what = "retpoline toll a bulk".to_string();
                }
                figures.extend(self.win_back(
                    "90% back at bulk",
                    "indirect/pipeline-64",
                    "retpoline",
                    "retpoline/B=*",
                ));
                figures
            },
        )
    }

    fn speculation_control(&self) -> Option<Toll> {
        self.toll(
            TollKind::SpeculationControl,
            "syscall/specctrl-storeload",
            &["store_bypass=enable", "store_bypass=disable"],
            |r| present([self.times("store-load loop, SSBD on vs off", r[1], r[0])]),
        )
    }

    fn seccomp(&self) -> Option<Toll> {
        self.toll(
            TollKind::Seccomp,
            "syscall/seccomp",
            &["number/F=1/R=1", "args/F=1/R=1", "args/F=1/R=50"],
            |r| {
                let mut figures: Vec<Quantity> = present([
                    self.added("one filter +", r[0]),
                    self.added("reading arguments +", r[1]),
                ]);
                // From one rule to fifty: what each further rule costs.
                if let (Some(a), Some(b)) = (r[1].cost.as_ref(), r[2].cost.as_ref())
                    && let Some(v) = self.ns((b.ticks - a.ticks) / 49.0)
                {
                    figures.push(Quantity {
                        what: "per rule".to_string(),
                        value: v,
                        unit: Unit::Ns,
                        ci95: None,
                        from: from(r[2]),
                    });
                }
                figures
            },
        )
    }

    fn page_table_change(&self) -> Option<Toll> {
        self.toll(
            TollKind::PageTableChange,
            "memory/mprotect",
            &["B=1"],
            |_| {
                let mut figures = self.fit("memory/mprotect", "", "B=*");
                figures.extend(self.win_back(
                    "90% back at pages a call",
                    "memory/mprotect",
                    "",
                    "B=*",
                ));
                figures
            },
        )
    }

    fn shootdown(&self) -> Option<Toll> {
        self.toll(
            TollKind::Shootdown,
            "memory/shootdown",
            &["mprotect/alone", "mprotect/remote"],
            |r| {
                present([
                    self.cost("mprotect, one CPU", r[0]),
                    self.added("a remote CPU +", r[1]),
                ])
            },
        )
    }

    fn thread_channel(&self) -> Option<Toll> {
        self.toll(
            TollKind::ThreadChannel,
            "thread/churn-T1",
            &["eventfd", "tls"],
            |r| present([self.cost("with eventfd", r[0]), self.cost("with TLS", r[1])]),
        )
    }

    fn crypto_section(&self) -> Option<Toll> {
        self.toll(
            TollKind::CryptoSection,
            "section/chunked",
            &["never/16MiB", "every/4KiB", "waiting/4KiB"],
            |r| {
                present([
                    self.wait_p99("co-runner p99 wait: never yielding", r[0]),
                    self.wait_p99("yielding every 4 KiB", r[1]),
                    self.wait_p99("only when waited for", r[2]),
                ])
            },
        )
    }

    fn teardown(&self) -> Option<Toll> {
        self.toll(
            TollKind::Teardown,
            "teardown/index-2^19",
            &["K=1", "K=4096"],
            |r| {
                present([
                    self.wait_p99("lookup p99 wait at K=1", r[0]),
                    self.wait_p99("at K=4096", r[1]),
                ])
            },
        )
    }
}

/// The figures a toll could read, without the ones its records lack.
fn present<const N: usize>(figures: [Option<Quantity>; N]) -> Vec<Quantity> {
    figures.into_iter().flatten().collect()
}

fn from(r: &Record) -> From {
    From {
        probe: r.id.clone(),
        variant: r.variant.clone(),
    }
}
