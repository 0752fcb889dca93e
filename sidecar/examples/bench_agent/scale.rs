//! The scale series (issue 25, Benchmark): `snapshot -i` (Playwright MCP: its one snapshot)
//! of the generated page at 5,000, 20,000 and 80,000 elements, each tool in the same run.
//! Target: Porthole's p50 ≤ 500 ms at 20,000 elements, and linear growth: the time per
//! element at 80,000 no more than at 20,000 (a ratio ≤ 1, give or take the noise).

use std::time::Instant;

use super::{big_elements, Driver};
use crate::common::percentile;

/// Rows of the generated page per step (five elements a row).
pub const ROWS: [usize; 3] = [1_000, 4_000, 16_000];

/// One tool's timings: per step, its elements and its sorted snapshot times in ms.
pub struct Series {
    pub tool: String,
    pub steps: Vec<(usize, Vec<f64>)>,
}

/// Steps Playwright MCP is run at: at 80,000 elements its `browser_navigate`, which answers
/// with a snapshot of the page, passes its own 30 s tool timeout.
pub const PLAYWRIGHT_STEPS: usize = 2;

/// Times `n` snapshots (after one untimed, which warms the document's first read) at each
/// of the first `steps` of [`ROWS`].
pub async fn run<D: Driver>(d: &mut D, tool: &str, base: &str, n: usize, steps_run: usize) -> Series {
    let mut steps = Vec::new();
    for rows in ROWS.into_iter().take(steps_run) {
        eprintln!("bench agent: {tool}: scale, {} elements", big_elements(rows));
        d.open(&format!("{base}/big.html?rows={rows}")).await;
        d.snapshot(D::INTERACTIVE).await;
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            d.snapshot(D::INTERACTIVE).await;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        steps.push((big_elements(rows), times));
    }
    Series { tool: tool.into(), steps }
}

/// Prints the series as a table: p50/p95 per step, ms per 1,000 elements, and the growth
/// ratio (ms per element at each step ÷ at the 20,000 step).
pub fn print(ours: &Series, theirs: Option<&Series>) {
    println!("\nscale: snapshot -i (Playwright MCP: its snapshot), n = {} per step", ours.steps[0].1.len());
    println!("{:<18} {:>10} {:>16} {:>14} {:>10}", "tool", "elements", "p50/p95 ms", "ms per 1k el.", "growth");
    for s in [Some(ours), theirs].into_iter().flatten() {
        let per = |(e, t): &(usize, Vec<f64>)| percentile(t, 0.5) / (*e as f64 / 1000.0);
        let mid = s.steps.get(1).map(per).unwrap_or(f64::NAN);
        for step in &s.steps {
            let (p50, p95) = (percentile(&step.1, 0.5), percentile(&step.1, 0.95));
            println!(
                "{:<18} {:>10} {:>16} {:>14.1} {:>10.2}",
                s.tool,
                step.0,
                format!("{p50:.0} / {p95:.0}"),
                per(step),
                per(step) / mid
            );
        }
    }
    let p50_20k = percentile(&ours.steps[1].1, 0.5);
    let verdict = if p50_20k <= 500.0 { "met" } else { "missed" };
    println!("target: p50 ≤ 500 ms at 20,000 elements: {p50_20k:.0} ms, {verdict}");
    if let Some(t) = theirs {
        if let Some(step) = t.steps.get(1) {
            println!("ratio at 20,000 (theirs p50 ÷ ours p50): {:.2}", percentile(&step.1, 0.5) / p50_20k);
        }
        if t.steps.len() < ROWS.len() {
            println!(
                "({} not run past {} elements: its navigate answers with a snapshot and passes its 30 s timeout)",
                t.tool,
                t.steps.last().map_or(0, |s| s.0)
            );
        }
    }
}
