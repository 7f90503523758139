//! SVG plots of a replay: allocation and queue length over time, since people would rather
//! look at those than read them. Drawn with `plotters` into a string; the caller writes it.

use plotters::prelude::*;

/// One line of a plot: `(seconds, value)` points in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// The points.
    pub points: Vec<(f64, f64)>,
}

/// Why a plot could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the plot: {0}")]
pub struct PlotError(String);

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Room above the highest value, as a share of it: the legend sits there, in the upper right,
/// so it never covers a line.
const LEGEND_HEADROOM: f64 = 0.3;

/// The points of a step function drawn as steps: each value holds until the next point,
/// where the line rises or falls vertically (a straight line between two samples would draw
/// a step as a slope that never happened).
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut drawn = Vec::with_capacity(points.len() * 2);
    for (index, point) in points.iter().enumerate() {
        if index > 0 {
            drawn.push((point.0, points[index - 1].1));
        }
        drawn.push(*point);
    }
    drawn
}

/// A step chart of `series` (values that hold until the next point) titled `title`, with
/// time in hours on x and `y_label` on y.
pub fn line_chart(title: &str, y_label: &str, series: &[Series]) -> Result<String, PlotError> {
    let fail = |error: &dyn std::fmt::Display| PlotError(error.to_string());
    let x_max = series.iter().flat_map(|line| &line.points).map(|point| point.0 / 3600.0).fold(0.0_f64, f64::max).max(1e-3);
    let y_max = series.iter().flat_map(|line| &line.points).map(|point| point.1).filter(|value| value.is_finite()).fold(0.0_f64, f64::max);
    let y_max = if y_max > 0.0 { y_max * (1.0 + LEGEND_HEADROOM) } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|error| fail(&error))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(|error| fail(&error))?;
        chart.configure_mesh().x_desc("hours").y_desc(y_label).draw().map_err(|error| fail(&error))?;
        for (index, line) in series.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(steps(&line.points).into_iter().map(|(x, y)| (x / 3600.0, y)), color.stroke_width(2)))
                .map_err(|error| fail(&error))?
                .label(line.name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|error| fail(&error))?;
        root.present().map_err(|error| fail(&error))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::{Series, line_chart, steps};

    #[test]
    fn a_step_holds_its_value_until_the_next_point() {
        let drawn = steps(&[(0.0, 1.0), (10.0, 3.0), (20.0, 2.0)]);
        assert_eq!(drawn, [(0.0, 1.0), (10.0, 1.0), (10.0, 3.0), (20.0, 3.0), (20.0, 2.0)]);
    }

    #[test]
    fn a_chart_is_an_svg_with_its_title_and_legend() {
        let series = [Series { name: "P1".into(), points: vec![(0.0, 0.0), (3600.0, 0.5), (7200.0, 0.25)] }];
        let svg = line_chart("GPU allocation", "allocated", &series).expect("draws");
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        assert!(svg.contains("GPU allocation") && svg.contains("\nP1\n"), "title and legend are text");
        assert!(svg.contains("<polyline") || svg.contains("<path"), "the line is drawn");
    }
}
