// SPDX-License-Identifier: MIT
//! Every marker form of the crate, mirroring tests/header/markers.c marker for
//! marker, so that a probe reader (bpftrace) sees the same names, flags and
//! counters from both. Usage: markers [ITERATIONS] (default 1000). Output, one
//! "key=value" per line: active_start, active_end (active() before and after
//! the loop), name_calls, meta_calls, counter_calls (how often the arguments
//! with side effects ran: never while no profiler is attached, once per
//! marker while one is), expected_enters, work (the counter after the loop).

use leanprofiler::{enter, exit, span};
use std::cell::Cell;

const ENTERS_PER_ITER: u64 = 5;

thread_local! {
    static NAME_CALLS: Cell<u64> = const { Cell::new(0) };
    static META_CALLS: Cell<u64> = const { Cell::new(0) };
    static COUNTER_CALLS: Cell<u64> = const { Cell::new(0) };
}

fn bump(c: &'static std::thread::LocalKey<Cell<u64>>) {
    c.with(|c| c.set(c.get() + 1));
}

fn counted_name(name: &str) -> &str {
    bump(&NAME_CALLS);
    name
}

fn counted_meta<T>(meta: T) -> T {
    bump(&META_CALLS);
    meta
}

fn counted_counter(work: u64) -> u64 {
    bump(&COUNTER_CALLS);
    work
}

fn main() {
    let iterations: u64 = std::env::args().nth(1).map_or(1000, |a| a.parse().unwrap());
    let mut work: u64 = 0;
    let active_start = leanprofiler::active();

    for i in 0..iterations {
        let name = format!("step.{}", i % 4); // a runtime name
        let scope_name = format!("scope.{}", i % 4);

        enter!("loop", "phase=loop, kind=literal"); // literal name and meta
        enter!(name, None); // runtime name, no meta
        enter!(
            counted_name(&name),
            counted_meta("k=v"),
            counted_counter(work)
        );
        {
            let _outer = span!("outer", "scope=outer");
            {
                // runtime name, a runtime meta that is None
                let _inner = span!(scope_name, counted_meta(None::<&str>));
                work += 1;
            }
        }
        exit!(counted_name(&name), counted_counter(work));
        exit!(name);
        exit!("loop");
    }

    println!("active_start={}", active_start as u8);
    println!("active_end={}", leanprofiler::active() as u8);
    println!("name_calls={}", NAME_CALLS.with(Cell::get));
    println!("meta_calls={}", META_CALLS.with(Cell::get));
    println!("counter_calls={}", COUNTER_CALLS.with(Cell::get));
    println!("expected_enters={}", iterations * ENTERS_PER_ITER);
    println!("work={work}");
}
