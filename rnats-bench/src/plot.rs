//! Line charts as SVG, drawn with plotters' SVG backend: the scale curves
//! ([`crate::scale::svg`]) and `rnats bench --plot` (latency distribution, rate over time)
//! share this one drawing code.
//!
//! A chart is a grid of [`Panel`]s, each with its own axes and one line per [`Series`].
//! Text is written as SVG `<text>` and laid out by the viewer (plotters is built without
//! system fonts), so the output is plain text that diffs well in `docs/`.

use std::fmt;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Line colours, one per series in order (colour-blind safe: blue, orange, green, purple).
const COLOURS: [RGBColor; 4] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
];
/// The widest quantile axis, in nines: 99.9999%.
const MAX_NINES: f64 = 6.0;

/// One line of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// Its points, in x order; points with a non-finite coordinate are left out.
    pub points: Vec<(f64, f64)>,
}

/// How a panel's x axis places its values.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Values as they are.
    Linear,
    /// Quantiles (0.0 to 1.0) spread by their nines, so 90%, 99% and 99.9% are evenly
    /// apart: the usual way to draw a latency distribution.
    Quantiles,
    /// Evenly spaced points with these labels; a series' x is the label's index.
    Labels(Vec<String>),
}

/// One chart of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Its title, above it.
    pub title: String,
    /// What x measures.
    pub x_label: String,
    /// What y measures.
    pub y_label: String,
    /// How x is placed.
    pub x_axis: XAxis,
    /// Its lines.
    pub series: Vec<Series>,
}

/// Why a chart could not be drawn.
#[derive(Debug)]
#[non_exhaustive]
pub struct PlotError(String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot draw the chart: {}", self.0)
    }
}

impl std::error::Error for PlotError {}

/// `panels` in a grid `columns` wide, each `size` pixels, as a complete SVG document.
pub fn svg(panels: &[Panel], columns: usize, size: (u32, u32)) -> Result<String, PlotError> {
    let columns = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(columns).max(1);
    let width = size.0 * columns as u32;
    let height = size.1 * rows as u32;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let areas = root.split_evenly((rows, columns));
        for (area, panel) in areas.iter().zip(panels) {
            draw(area, panel)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(out)
}

/// Draws one panel into `area`.
fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let quantile_end = quantile_end(panel);
    let series: Vec<(&str, Vec<(f64, f64)>)> = panel
        .series
        .iter()
        .map(|s| {
            let points = s
                .points
                .iter()
                .map(|&(x, y)| (place_x(&panel.x_axis, x).min(quantile_end), y))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            (s.name.as_str(), points)
        })
        .collect();
    let (x_range, x_ticks) = x_extent(&panel.x_axis, &series);
    let top = series
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };

    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range, 0.0..top)
        .map_err(failed)?;
    let x_format = |x: &f64| label_x(&panel.x_axis, *x);
    let y_format = |y: &f64| tick(*y);
    chart
        .configure_mesh()
        .x_labels(x_ticks)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .x_desc(panel.x_label.as_str())
        .y_desc(panel.y_label.as_str())
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(failed)?;
    for (i, (name, points)) in series.into_iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let markers = points.len() <= 32;
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(failed)?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(3)));
        if markers {
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(failed)?;
        }
    }
    if panel.series.len() > 1 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(failed)?;
    }
    Ok(())
}

/// Where a quantiles axis ends, in nines: the whole nine above the highest quantile short
/// of 100% (100% itself is drawn there); no limit on other axes.
fn quantile_end(panel: &Panel) -> f64 {
    if panel.x_axis != XAxis::Quantiles {
        return f64::INFINITY;
    }
    let highest = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|q| *q < 1.0)
        .map(nines)
        .fold(0.0_f64, f64::max);
    // A hair added so 99% (two nines, give or take the float) counts as two.
    ((highest + 1e-9).floor() + 1.0).clamp(1.0, MAX_NINES)
}

/// Where `x` goes on an axis of kind `axis`.
fn place_x(axis: &XAxis, x: f64) -> f64 {
    match axis {
        XAxis::Quantiles => nines(x),
        XAxis::Linear | XAxis::Labels(_) => x,
    }
}

/// A quantile as its count of nines: 0.9 is 1, 0.99 is 2; 1.0 is the axis' end.
fn nines(quantile: f64) -> f64 {
    let rest = 1.0 - quantile.clamp(0.0, 1.0);
    if rest <= 10f64.powf(-MAX_NINES) {
        MAX_NINES
    } else {
        -rest.log10()
    }
}

/// The x range of `series` on `axis`, and how many ticks to label.
fn x_extent(axis: &XAxis, series: &[(&str, Vec<(f64, f64)>)]) -> (std::ops::Range<f64>, usize) {
    let xs = || {
        series
            .iter()
            .flat_map(|(_, points)| points.iter().map(|p| p.0))
    };
    match axis {
        XAxis::Labels(labels) => (0.0..(labels.len().max(2) - 1) as f64, labels.len().max(2)),
        XAxis::Quantiles => {
            let end = xs().fold(1.0_f64, f64::max).ceil().clamp(1.0, MAX_NINES);
            (0.0..end, end as usize + 1)
        }
        XAxis::Linear => {
            let low = xs().fold(f64::INFINITY, f64::min);
            let high = xs().fold(f64::NEG_INFINITY, f64::max);
            if low.is_finite() && high > low {
                (low..high, 8)
            } else {
                (0.0..1.0, 2)
            }
        }
    }
}

/// The tick label at `x` on `axis`.
fn label_x(axis: &XAxis, x: f64) -> String {
    match axis {
        XAxis::Linear => tick(x),
        XAxis::Quantiles => {
            let percent = 100.0 * (1.0 - 10f64.powf(-x));
            let decimals = (x.round() as usize).saturating_sub(2);
            format!("{percent:.decimals$}%")
        }
        XAxis::Labels(labels) => {
            let i = x.round();
            if (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            labels.get(i as usize).cloned().unwrap_or_default()
        }
    }
}

/// A tick label with as many decimals as its size needs: `0.25`, `3.5`, `42`, `1.2k`, `3.4M`.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Any plotters error, as text.
fn failed<E: std::error::Error + Send + Sync>(error: E) -> PlotError {
    PlotError(error.to_string())
}

/// The text of every `<text>` element of `svg`, trimmed: what a viewer shows.
#[cfg(test)]
pub(crate) fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|rest| {
            let body = rest.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_owned())
        })
        .collect()
}

/// How many data lines (2 px wide) and legend samples (3 px wide) `svg` draws.
#[cfg(test)]
pub(crate) fn lines(svg: &str) -> (usize, usize) {
    (
        svg.matches("stroke-width=\"2\" points=").count(),
        svg.matches("stroke-width=\"3\" points=").count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(x_axis: XAxis, series: Vec<Series>) -> Panel {
        Panel {
            title: "latency <a&b>".to_owned(),
            x_label: "percentile".to_owned(),
            y_label: "µs".to_owned(),
            x_axis,
            series,
        }
    }

    #[test]
    fn draws_a_line_per_series_in_a_grid() {
        let line = |name: &str| Series {
            name: name.to_owned(),
            points: vec![(0.0, 1.0), (1.0, 2.0), (2.0, f64::NAN), (3.0, 4.0)],
        };
        let labels = XAxis::Labels(vec!["1".into(), "10".into(), "100".into(), "1000".into()]);
        let panels = [
            panel(labels.clone(), vec![line("rnats"), line("async-nats")]),
            panel(labels, vec![line("rnats")]),
        ];
        let svg = svg(&panels, 2, (320, 240)).expect("drawn");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // Three lines, and a legend on the panel with two.
        assert_eq!(lines(&svg), (3, 2), "{svg}");
        let texts = texts(&svg);
        assert!(texts.iter().any(|t| t == "async-nats"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "1000"), "{texts:?}");
        assert!(
            texts.iter().any(|t| t == "latency &lt;a&amp;b&gt;"),
            "{texts:?}"
        );
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn quantiles_are_labelled_by_their_nines() {
        assert_eq!(label_x(&XAxis::Quantiles, 0.0), "0%");
        assert_eq!(label_x(&XAxis::Quantiles, 1.0), "90%");
        assert_eq!(label_x(&XAxis::Quantiles, 2.0), "99%");
        assert_eq!(label_x(&XAxis::Quantiles, 3.0), "99.9%");
        assert!((nines(0.999) - 3.0).abs() < 1e-9);
        assert_eq!(nines(1.0), MAX_NINES);
        let p = panel(
            XAxis::Quantiles,
            vec![Series {
                name: "all".into(),
                points: vec![(0.0, 10.0), (0.99, 20.0), (1.0, 90.0)],
            }],
        );
        let svg = svg(&[p], 1, (480, 300)).expect("drawn");
        assert!(texts(&svg).iter().any(|t| t == "99.9%"), "{svg}");
    }

    #[test]
    fn values_keep_a_sensible_precision() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(3.5), "3.5");
        assert_eq!(tick(42.4), "42");
        assert_eq!(tick(1_500.0), "1.5k");
        assert_eq!(tick(25_000.0), "25k");
        assert_eq!(tick(3_400_000.0), "3.4M");
    }
}
