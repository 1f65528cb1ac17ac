//! The curves of one axis as an SVG line chart: one panel per metric, side by side, a line
//! per client, the points evenly spaced along x (they grow by powers of ten, and the headers
//! axis starts at 0, which a log scale cannot place). Drawn by [`crate::plot`], the code
//! `rnats bench --plot` draws with too.

use super::{Axis, Curve};
use crate::plot::{self, Panel, PlotError, Series, XAxis};

/// The width and height of one metric's panel, in pixels.
const PANEL: (u32, u32) = (360, 280);

/// The chart of `curves` along `axis`, as a complete SVG document.
pub fn chart(axis: Axis, curves: &[Curve]) -> Result<String, PlotError> {
    let metrics = axis.metrics();
    let mut points: Vec<usize> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|(n, _)| *n))
        .collect();
    points.sort_unstable();
    points.dedup();
    let index = |n: usize| points.iter().position(|p| *p == n).unwrap_or(0) as f64;
    let labels = XAxis::Labels(points.iter().map(usize::to_string).collect());
    let panels: Vec<Panel> = metrics
        .iter()
        .enumerate()
        .map(|(m, metric)| Panel {
            title: format!("{} ({})", metric.name, metric.unit),
            x_label: axis.unit().to_owned(),
            y_label: metric.unit.to_owned(),
            x_axis: labels.clone(),
            series: curves
                .iter()
                .map(|curve| Series {
                    name: curve.client.clone(),
                    points: curve
                        .series(m)
                        .into_iter()
                        .map(|(n, v)| (index(n), v))
                        .collect(),
                })
                .collect(),
        })
        .collect();
    plot::svg(&panels, panels.len(), PANEL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{lines, texts};

    #[test]
    fn draws_a_panel_per_metric_and_a_line_per_client() {
        let curve = |client: &str, scale: f64| Curve {
            client: client.to_owned(),
            points: [1usize, 1000, 10_000, 100_000]
                .iter()
                .map(|&n| (n, Ok(vec![scale, scale * 2.0, scale * 3.0])))
                .collect(),
        };
        let svg = chart(Axis::Subs, &[curve("rnats", 1.0), curve("a<b", 2.0)]).expect("drawn");
        assert!(svg.starts_with("<svg"));
        // Three panels of two lines, and the two legend entries of each panel.
        assert_eq!(lines(&svg), (6, 6), "{svg}");
        let texts = texts(&svg);
        assert!(texts.iter().any(|t| t == "subscribe (µs/sub)"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "a&lt;b"), "{texts:?}");
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn a_failed_point_is_left_out_and_every_point_is_labelled() {
        let curve = Curve {
            client: "rnats".into(),
            points: vec![
                (0, Ok(vec![1.0, f64::NAN])),
                (10, Ok(vec![2.0, 1.0])),
                (100, Err("x".into())),
            ],
        };
        let svg = chart(Axis::Headers, &[curve]).expect("drawn");
        let texts = texts(&svg);
        for label in ["0", "10", "100"] {
            assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
        }
        assert!(!svg.contains("NaN"));
    }
}
