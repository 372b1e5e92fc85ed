//! Figures put together, two rules, each where it is right:
//!
//! - **A difference of two figures** ([`difference`]): 95% half-widths add
//!   in quadrature. Measured apart (other runs, processes, boots) their
//!   errors are independent and that is the difference's. Two rows of one
//!   run, or two rows less one baseline, have errors that covary
//!   positively (the run's drift and speed, the shared baseline move them
//!   alike), and Var(a - b) = Var a + Var b - 2 Cov is then less than the
//!   quadrature sum: it stays a bound.
//! - **A sum of rows of the same run sets** ([`Sum::of_same_sets`]): there
//!   the same positive covariance adds, Var(a + b) = Var a + Var b +
//!   2 Cov, by an amount not measured; the half-width of the sum is at most
//!   the sum of the half-widths (Cauchy-Schwarz), whatever the covariance.
//!   A sum of figures measured apart adds in quadrature ([`Sum::default`]).
//!
//! Where one term's half-width is unknown, so is the result's: a narrower
//! interval would claim what was not measured.

use super::figure::Figure;

/// `a` less `b` with its 95% interval, symmetric about it (each side's
/// wider half-width counts): half-widths in quadrature, the difference's
/// for figures measured apart and a bound for rows of one run (see the
/// module's note).
pub fn difference(a: Figure, b: Figure) -> Figure {
    let half = a.half_width().zip(b.half_width()).map(|(x, y)| x.hypot(y));
    Figure::within(a.value - b.value, half)
}

/// `a` over `b` with its 95% interval: each figure's wider half-width on
/// the log scale, in quadrature (the same rule as [`difference`], for
/// figures that scale); none where either has no interval or either is
/// not positive.
pub fn ratio(a: Figure, b: Figure) -> Figure {
    let log_half = |f: Figure| -> Option<f64> {
        let [lo, hi] = f.ci95?;
        (f.value > 0.0 && lo > 0.0).then(|| (f.value / lo).ln().max((hi / f.value).ln()))
    };
    let value = a.value / b.value;
    let half = log_half(a).zip(log_half(b)).map(|(x, y)| x.hypot(y));
    Figure::new(
        value,
        half.filter(|_| value > 0.0)
            .map(|h| [value * (-h).exp(), value * h.exp()]),
    )
}

/// A running sum of figures with the two sides of their intervals, each
/// side summed apart: a sum of one figure is that figure, interval and
/// all, and a lopsided interval is not widened to its wider side (a
/// floor read from the sum would then fall below its parts').
#[derive(Debug, Default, Clone, Copy)]
pub struct Sum {
    value: f64,
    /// Σ side² (measured apart), the lower side and the upper.
    var: [f64; 2],
    /// Σ side (read from the same sets).
    linear: [f64; 2],
    same_sets: bool,
    terms: bool,
    half_unknown: bool,
}

impl Sum {
    /// A sum of figures read from the same run sets (different rows of
    /// them): each side's widths add, the bound whatever their covariance.
    pub fn of_same_sets() -> Sum {
        Sum {
            same_sets: true,
            ..Sum::default()
        }
    }

    /// Adds `value` with a symmetric interval of half-width `half`.
    pub fn add(&mut self, value: f64, half: Option<f64>) {
        self.add_sides(value, half.map(|h| [h.abs(); 2]));
    }

    /// Adds `f` with its interval as it is, each side apart.
    pub fn add_figure(&mut self, f: Figure) {
        let sides = f
            .ci95
            .map(|[lo, hi]| [(f.value - lo).max(0.0), (hi - f.value).max(0.0)]);
        self.add_sides(f.value, sides);
    }

    fn add_sides(&mut self, value: f64, sides: Option<[f64; 2]>) {
        self.value += value;
        match sides {
            Some(sides) => {
                for (i, side) in sides.into_iter().enumerate() {
                    self.var[i] += side * side;
                    self.linear[i] += side;
                }
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
    pub fn read(self) -> Option<Figure> {
        let [below, above] = match self.same_sets {
            true => self.linear,
            false => self.var.map(f64::sqrt),
        };
        let ends = [self.value - below, self.value + above];
        self.terms
            .then(|| Figure::new(self.value, (!self.half_unknown).then_some(ends)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_widths_of_figures_measured_apart_add_in_quadrature() {
        let within = |value: f64, half: Option<f64>| Figure::within(value, half);
        assert_eq!(
            difference(within(10.0, Some(3.0)), within(4.0, Some(4.0))),
            within(6.0, Some(5.0))
        );
        // The wider side of an interval that is not symmetric counts.
        let lopsided = Figure::new(4.0, Some([3.0, 8.0]));
        assert_eq!(
            difference(within(10.0, Some(3.0)), lopsided),
            within(6.0, Some(5.0))
        );
        assert_eq!(
            difference(within(10.0, Some(3.0)), within(4.0, None)),
            within(6.0, None)
        );
        let mut sum = Sum::default();
        assert_eq!(sum.read(), None);
        sum.add(1.0, Some(3.0));
        sum.add(2.0, Some(4.0));
        assert_eq!(sum.read(), Some(Figure::new(3.0, Some([-2.0, 8.0]))));
        sum.add(1.0, None);
        assert_eq!(sum.read(), Some(Figure::new(4.0, None)));
    }

    #[test]
    fn a_lopsided_interval_keeps_its_sides_in_a_sum() {
        // One term: the sum is the term, its interval unchanged.
        let part = Figure::new(20.0, Some([18.64, 30.0]));
        let mut one = Sum::of_same_sets();
        one.add_figure(part);
        assert_eq!(one.read(), Some(part));
        // Two terms of non-negative lower ends: the sum's lower end is at
        // least either part's, which the wider side read as a symmetric
        // half-width (20 - 10 + 0.5 = 10.5 below 18.64) broke.
        let mut two = Sum::of_same_sets();
        two.add_figure(part);
        two.add_figure(Figure::new(1.0, Some([0.5, 1.5])));
        let [lo, hi] = two.read().unwrap().ends();
        assert!(
            (lo - 19.14).abs() < 1e-9 && (hi - 31.5).abs() < 1e-9,
            "[{lo}, {hi}]"
        );
        // Measured apart: each side in quadrature.
        let mut apart = Sum::default();
        apart.add_figure(Figure::new(10.0, Some([7.0, 14.0])));
        apart.add_figure(Figure::new(5.0, Some([1.0, 8.0])));
        let [lo, hi] = apart.read().unwrap().ends();
        assert!(
            (lo - 10.0).abs() < 1e-9 && (hi - 20.0).abs() < 1e-9,
            "[{lo}, {hi}]"
        );
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
