// SPDX-License-Identifier: MIT
//! What a span costs, as examples/span_cost.c measures it for C: N spans
//! (enter + exit, literal name and metadata, with a counter) in a tight loop,
//! minus the same loop without markers, in ns per span. `--guard` times
//! `span!` guards (literal name and metadata, no counter) instead. Run it alone
//! for the dormant cost, under the profiler for the attached cost:
//!
//!   build/rust/release/examples/span_cost 10000000
//!   sudo build/leanprofiler record -- build/rust/release/examples/span_cost 200000

use leanprofiler::{enter, exit, span};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let guard = args.iter().any(|a| a == "--guard");
    let n: u64 = args
        .iter()
        .find(|a| *a != "--guard")
        .map_or(1_000_000, |a| a.parse().unwrap());
    let mut work: u64 = 0;

    // The same loop without markers, to subtract the loop's own cost.
    let t0 = Instant::now();
    for _ in 0..n {
        work = black_box(work + 1);
    }
    let t1 = Instant::now();
    if guard {
        for _ in 0..n {
            let _g = span!("cost.span", "kind=literal");
            work = black_box(work + 1);
        }
    } else {
        for _ in 0..n {
            enter!("cost.span", "kind=literal", work);
            work = black_box(work + 1);
            exit!("cost.span", work);
        }
    }
    let t2 = Instant::now();
    let ns = ((t2 - t1).as_nanos() as f64 - (t1 - t0).as_nanos() as f64) / n as f64;
    println!(
        "{}: {} spans, {:.2} ns per span (enter + exit)",
        if leanprofiler::active() {
            "attached"
        } else {
            "not attached"
        },
        n,
        ns
    );
}
