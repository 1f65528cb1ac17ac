//! The curves of one axis as an SVG line chart: one panel per metric, side by side, a line
//! per client, the points evenly spaced along x (they grow by powers of ten, and the headers
//! axis starts at 0, which a log scale cannot place).
//!
//! Written by hand rather than with plotters: the chart is a few lines and polylines, the
//! output is plain text that diffs well in docs/, and it needs no font handling or new
//! dependency in the workspace.

use std::fmt::Write;

use super::{Axis, Curve, format_value};

const PANEL_W: f64 = 320.0;
const PANEL_H: f64 = 240.0;
const MARGIN_L: f64 = 56.0;
const MARGIN_R: f64 = 16.0;
const MARGIN_T: f64 = 36.0;
const MARGIN_B: f64 = 44.0;
const LEGEND_H: f64 = 28.0;
/// Line colours, one per client in order (colour-blind safe: blue, orange, green, purple).
const COLOURS: [&str; 4] = ["#0072b2", "#e69f00", "#009e73", "#cc79a7"];

/// The chart of `curves` along `axis`, as a complete SVG document.
pub fn chart(axis: Axis, curves: &[Curve]) -> String {
    let metrics = axis.metrics();
    let width = PANEL_W * metrics.len() as f64;
    let height = PANEL_H + LEGEND_H;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let mut points: Vec<usize> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|(n, _)| *n))
        .collect();
    points.sort_unstable();
    points.dedup();
    for (m, metric) in metrics.iter().enumerate() {
        let x0 = PANEL_W * m as f64;
        let series: Vec<Vec<(usize, f64)>> = curves.iter().map(|c| c.series(m)).collect();
        let top = series
            .iter()
            .flatten()
            .map(|(_, v)| *v)
            .fold(0.0_f64, f64::max);
        let top = if top > 0.0 { top * 1.1 } else { 1.0 };
        let (left, right) = (x0 + MARGIN_L, x0 + PANEL_W - MARGIN_R);
        let (upper, lower) = (MARGIN_T, PANEL_H - MARGIN_B);
        let x_of = |n: usize| {
            let i = points.iter().position(|p| *p == n).unwrap_or(0);
            let steps = points.len().saturating_sub(1).max(1) as f64;
            left + (right - left) * i as f64 / steps
        };
        let y_of = |v: f64| lower - (lower - upper) * v / top;
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"16\" text-anchor=\"middle\" font-weight=\"bold\">{} ({})</text>",
            (left + right) / 2.0,
            escape(metric.name),
            escape(metric.unit)
        );
        // Axes, y grid and labels.
        let _ = writeln!(
            svg,
            "<path d=\"M{left:.1},{upper:.1} V{lower:.1} H{right:.1}\" stroke=\"#333\" fill=\"none\"/>"
        );
        for tick in 0..=4 {
            let v = top * f64::from(tick) / 4.0;
            let y = y_of(v);
            let _ = writeln!(
                svg,
                "<line x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{right:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 4.0,
                y + 4.0,
                format_value(v)
            );
        }
        for &n in &points {
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{n}</text>",
                x_of(n),
                lower + 14.0
            );
        }
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
            (left + right) / 2.0,
            lower + 32.0,
            escape(axis.unit())
        );
        for (c, line) in series.iter().enumerate() {
            let colour = COLOURS[c % COLOURS.len()];
            let coords: Vec<String> = line
                .iter()
                .map(|&(n, v)| format!("{:.1},{:.1}", x_of(n), y_of(v)))
                .collect();
            let _ = writeln!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                coords.join(" ")
            );
            for &(n, v) in line {
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\"><title>{}: {} at {n}</title></circle>",
                    x_of(n),
                    y_of(v),
                    escape(&curves[c].client),
                    format_value(v)
                );
            }
        }
    }
    for (c, curve) in curves.iter().enumerate() {
        let x = 16.0 + 140.0 * c as f64;
        let y = PANEL_H + LEGEND_H / 2.0;
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x + 20.0,
            COLOURS[c % COLOURS.len()],
            x + 26.0,
            y + 4.0,
            escape(&curve.client)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_panel_per_metric_and_a_line_per_client() {
        let curve = |client: &str, scale: f64| Curve {
            client: client.to_owned(),
            points: [1usize, 1000, 10_000, 100_000]
                .iter()
                .map(|&n| (n, Ok(vec![scale, scale * 2.0, scale * 3.0])))
                .collect(),
        };
        let svg = chart(Axis::Subs, &[curve("rnats", 1.0), curve("a<b", 2.0)]);
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 6);
        assert_eq!(svg.matches("<circle").count(), 24);
        assert!(svg.contains("subscribe (µs/sub)"));
        assert!(svg.contains("a&lt;b"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn points_are_evenly_spaced_and_a_failed_point_is_left_out() {
        let curve = Curve {
            client: "rnats".into(),
            points: vec![
                (0, Ok(vec![1.0, f64::NAN])),
                (10, Ok(vec![2.0, 1.0])),
                (100, Err("x".into())),
            ],
        };
        let svg = chart(Axis::Headers, &[curve]);
        assert_eq!(svg.matches("<circle").count(), 3);
        // Three x labels, evenly spaced across the first panel.
        assert!(svg.contains(">0</text>") && svg.contains(">100</text>"));
        assert!(!svg.contains("NaN"));
    }
}
