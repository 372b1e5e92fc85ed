//! `mitbench list` as a table.

use super::text_table::{Style, table};
use crate::measure::probes::Listed;
use comfy_table::{ContentArrangement, presets};

pub fn render_listing(listing: &[Listed], width: usize) -> String {
    let header = [
        "probe",
        "seed",
        "item",
        "variants (* baseline)",
        "requirements",
        "here",
    ];
    // Rules between rows only: a probe's cells wrap over several lines.
    let mut table = table(Style::Terminal, ContentArrangement::Dynamic, header, []);
    table.load_style(presets::UTF8_HORIZONTAL_ONLY);
    super::text_table::fit(&mut table, Some(width));
    for listed in listing {
        let info = &listed.declaration;
        let variants: Vec<String> = listed
            .variants
            .iter()
            .map(|v| format!("{}{}", v.name, if v.is_baseline() { "*" } else { "" }))
            .collect();
        let problems: Vec<String> = listed
            .unsupported
            .iter()
            .filter_map(|(variant, reason)| {
                reason
                    .as_ref()
                    .map(|r| format!("{variant}: unsupported: {}", r.reason))
            })
            .collect();
        let here = if problems.is_empty() {
            "supported".to_string()
        } else {
            problems.join("\n")
        };
        table.add_row([
            format!("{}\n{}", info.id, info.summary),
            info.seed.to_string(),
            info.item.to_string(),
            variants.join("\n"),
            if info.requirements.is_empty() {
                "-".to_string()
            } else {
                info.requirements.join("\n")
            },
            here,
        ]);
    }
    format!(
        "{table}\n{}Variant parameters: mitbench list --json\n",
        flag_sets(listing)
    )
}

/// The exact flags of every compiler flag set, once, with the compiler and
/// whether it accepted them.
fn flag_sets(listing: &[Listed]) -> String {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for listed in listing {
        for v in &listed.variants {
            let Some(flags) = v.params.get("flags").and_then(|f| f.as_str()) else {
                continue;
            };
            if out.is_empty() {
                let compiler = v
                    .params
                    .get("compiler")
                    .and_then(|c| c.as_str())
                    .unwrap_or("unknown");
                out.push_str(&format!(
                    "Compiler flag sets of the {} family ({compiler}):\n",
                    listed.declaration.family()
                ));
            }
            if !seen.insert(v.name.as_str()) {
                continue;
            }
            let refused = match listed.unsupported.get(&v.name) {
                Some(Some(why)) => format!("\n      unsupported: {}", why.reason),
                _ => String::new(),
            };
            out.push_str(&format!("  {:<24} {flags}{refused}\n", v.name));
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The runs `mitbench history` lists.
pub fn render_history(runs: &[crate::store::history::StoredRun], width: usize) -> String {
    let header = [
        "id",
        "started",
        "host",
        "kernel",
        "mitigation words",
        "probes",
        "rows",
    ];
    let mut table = table(Style::Terminal, ContentArrangement::Dynamic, header, []);
    super::text_table::fit(&mut table, Some(width));
    for r in runs {
        table.add_row(vec![
            r.id.to_string(),
            super::number::local_time(&r.started_at),
            r.host.clone(),
            r.kernel.clone(),
            if r.mitigations.is_empty() {
                "-".to_string()
            } else {
                r.mitigations.clone()
            },
            r.probes.split(' ').count().to_string(),
            r.rows.to_string(),
        ]);
    }
    format!("{table}\n")
}
