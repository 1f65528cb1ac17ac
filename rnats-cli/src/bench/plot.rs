//! `--plot FILE.svg`: the run as a chart, drawn by rnats-bench's plotting code (the one the
//! scale curves use): the latency distribution, when the run timed each operation, beside
//! the rate over time.

use rnats_bench::plot::{self, Panel, PlotError, Series, XAxis};

use super::report::BenchReport;

/// The size of each panel, in pixels.
const PANEL: (u32, u32) = (560, 360);

/// The SVG document of `report`'s chart.
pub(super) fn render(report: &BenchReport) -> Result<String, PlotError> {
    let figures = &report.figures;
    let mut panels = Vec::with_capacity(2);
    if let Some(histogram) = &figures.histogram {
        panels.push(Panel {
            title: format!("{} latency by percentile", report.kind.name()),
            x_label: "percentile".to_owned(),
            y_label: "latency (µs)".to_owned(),
            x_axis: XAxis::Quantiles,
            series: vec![Series {
                name: "all clients".to_owned(),
                points: histogram.distribution(),
            }],
        });
    }
    panels.push(Panel {
        title: format!("{} rate over time", report.kind.name()),
        x_label: "seconds".to_owned(),
        y_label: "msgs/s".to_owned(),
        x_axis: XAxis::Linear,
        series: vec![Series {
            name: "all clients".to_owned(),
            points: figures.timeline.clone(),
        }],
    });
    plot::svg(&panels, panels.len(), PANEL)
}
