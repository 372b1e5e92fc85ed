//! Figures measured apart (in other rows, runs or processes) put together:
//! their errors are independent, so the 95% half-widths of a sum or a
//! difference add in quadrature. Where one term's half-width is unknown,
//! so is the result's: a narrower interval would claim what was not
//! measured.

/// `a` less `b`, each a figure with its half-width where one is known.
pub fn difference(a: (f64, Option<f64>), b: (f64, Option<f64>)) -> (f64, Option<f64>) {
    (a.0 - b.0, a.1.zip(b.1).map(|(x, y)| x.hypot(y)))
}

/// A running sum of figures with their half-widths.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sum {
    value: f64,
    /// Σ half-width².
    var: f64,
    terms: bool,
    half_unknown: bool,
}

impl Sum {
    pub fn add(&mut self, value: f64, half: Option<f64>) {
        self.value += value;
        match half {
            Some(h) => self.var += h * h,
            None => self.half_unknown = true,
        }
        self.terms = true;
    }

    pub fn has_terms(&self) -> bool {
        self.terms
    }

    /// The sum and its 95% interval: None with no term, and no interval
    /// where some term had none.
    pub fn read(self) -> (Option<f64>, Option<[f64; 2]>) {
        let half = self.var.sqrt();
        (
            self.terms.then_some(self.value),
            (self.terms && !self.half_unknown).then_some([self.value - half, self.value + half]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_widths_of_figures_measured_apart_add_in_quadrature() {
        assert_eq!(
            difference((10.0, Some(3.0)), (4.0, Some(4.0))),
            (6.0, Some(5.0))
        );
        assert_eq!(difference((10.0, Some(3.0)), (4.0, None)), (6.0, None));
        let mut sum = Sum::default();
        assert_eq!(sum.read(), (None, None));
        sum.add(1.0, Some(3.0));
        sum.add(2.0, Some(4.0));
        assert_eq!(sum.read(), (Some(3.0), Some([-2.0, 8.0])));
        sum.add(1.0, None);
        assert_eq!(sum.read(), (Some(4.0), None));
    }
}
