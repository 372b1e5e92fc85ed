//! The HTML pages' one renderer: every page (the run's report, a
//! comparison, an attribution, tax) is a minijinja template of
//! templates/, sharing its style sheet.

use super::ExportError;
use serde::Serialize;

/// The page templates and the style they share.
const TEMPLATES: [(&str, &str); 5] = [
    ("style.css", include_str!("templates/style.css")),
    ("report.html", include_str!("templates/report.html")),
    ("compare.html", include_str!("templates/compare.html")),
    ("tax.html", include_str!("templates/tax.html")),
    ("attribute.html", include_str!("templates/attribute.html")),
];

/// Renders `template` with `context`.
pub fn render_page(template: &str, context: impl Serialize) -> Result<Vec<u8>, ExportError> {
    let mut env = minijinja::Environment::new();
    for (name, source) in TEMPLATES {
        env.add_template(name, source).map_err(template_error)?;
    }
    env.get_template(template)
        .and_then(|t| t.render(context))
        .map(String::into_bytes)
        .map_err(template_error)
}

fn template_error(e: minijinja::Error) -> ExportError {
    ExportError::Io(std::io::Error::other(format!("the report template: {e}")))
}
