//! Figures put together: measured apart (in other rows, runs or
//! processes), their errors are independent and the 95% half-widths of a
//! sum or a difference add in quadrature; read from the same run sets,
//! their errors covary (a set's run level and its speed move its rows
//! alike) by an amount not measured, and the half-width of a sum is at
//! most the sum of the half-widths (Cauchy-Schwarz), whatever that
//! covariance. Where one term's half-width is unknown, so is the result's:
//! a narrower interval would claim what was not measured.

/// `a` less `b`, each a figure with its half-width where one is known: in
/// quadrature, which errors that covary positively (rows of one run) only
/// narrow.
pub fn difference(a: (f64, Option<f64>), b: (f64, Option<f64>)) -> (f64, Option<f64>) {
    (a.0 - b.0, a.1.zip(b.1).map(|(x, y)| x.hypot(y)))
}

/// [`difference`] of two figures, the result's interval symmetric about
/// it (each side's wider half-width counts).
pub fn less(a: super::figure::Figure, b: super::figure::Figure) -> super::figure::Figure {
    let (value, half) = difference((a.value, a.half_width()), (b.value, b.half_width()));
    super::figure::Figure::within(value, half)
}

/// A running sum of figures with their half-widths.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sum {
    value: f64,
    /// Σ half-width² (measured apart).
    var: f64,
    /// Σ half-width (read from the same sets).
    linear: f64,
    same_sets: bool,
    terms: bool,
    half_unknown: bool,
}

impl Sum {
    /// A sum of figures read from the same run sets (different rows of
    /// them): half-widths add, the bound whatever their covariance.
    pub fn of_same_sets() -> Sum {
        Sum {
            same_sets: true,
            ..Sum::default()
        }
    }

    pub fn add(&mut self, value: f64, half: Option<f64>) {
        self.value += value;
        match half {
            Some(h) => {
                self.var += h * h;
                self.linear += h.abs();
            }
            None => self.half_unknown = true,
        }
        self.terms = true;
    }

    pub fn has_terms(&self) -> bool {
        self.terms
    }

    /// The sum and its 95% interval: None with no term, and no interval
    /// where some term had none.
    pub fn read(self) -> Option<super::figure::Figure> {
        let half = match self.same_sets {
            true => self.linear,
            false => self.var.sqrt(),
        };
        self.terms.then(|| {
            super::figure::Figure::within(self.value, (!self.half_unknown).then_some(half))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::figure::Figure;

    #[test]
    fn half_widths_of_figures_measured_apart_add_in_quadrature() {
        assert_eq!(
            difference((10.0, Some(3.0)), (4.0, Some(4.0))),
            (6.0, Some(5.0))
        );
        assert_eq!(difference((10.0, Some(3.0)), (4.0, None)), (6.0, None));
        let mut sum = Sum::default();
        assert_eq!(sum.read(), None);
        sum.add(1.0, Some(3.0));
        sum.add(2.0, Some(4.0));
        assert_eq!(sum.read(), Some(Figure::new(3.0, Some([-2.0, 8.0]))));
        sum.add(1.0, None);
        assert_eq!(sum.read(), Some(Figure::new(4.0, None)));
    }

    #[test]
    fn half_widths_of_figures_from_the_same_sets_add_as_they_are() {
        let mut sum = Sum::of_same_sets();
        sum.add(1.0, Some(3.0));
        sum.add(2.0, Some(4.0));
        assert_eq!(sum.read(), Some(Figure::new(3.0, Some([-4.0, 10.0]))));
        // Two terms that move together in full: the sum's error is the
        // sum of theirs, which quadrature (5) would understate.
        sum.add(1.0, None);
        assert_eq!(sum.read(), Some(Figure::new(4.0, None)));
    }
}
