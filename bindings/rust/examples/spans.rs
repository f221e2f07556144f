// SPDX-License-Identifier: MIT
//! A Rust program with a known span tree, for tests/integration/test_rust.c,
//! which records it and compares span by span with what it logs here.
//!
//!   spans [--wait] OUT THREADS ROUNDS
//!
//! Each thread runs ROUNDS rounds of: a recursion (`span!` guards, literal
//! name, runtime metadata, depth 1..4), a span with a runtime name and
//! metadata whose texts change after the enter (`enter`/`exit` functions), a
//! literal span with a counter (`enter!`/`exit!`) and a runtime name with a
//! literal meta (`span!`). The main thread then runs spans that a panic
//! unwinds, and spans with hostile runtime names. Every span's four clock
//! readings (CLOCK_MONOTONIC, before and after its enter and its exit), its
//! counter delta and its texts go to OUT, one line per span in pre-order:
//!
//!   tid depth t_before_enter t_after_enter t_before_exit t_after_exit COUNTER NAME META
//!
//! COUNTER is `-` without a counter; NAME and META are the bytes passed, in
//! hex (`-`: none or empty). With --wait it prints "ready PID" and waits for a
//! line on stdin before the first span (to be attached to with `record -p`).

use leanprofiler::{enter, exit, span};
use std::fmt::Write as _;
use std::io::{BufRead, Write};

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
    fn gettid() -> i32;
}

fn now_ns() -> u64 {
    let mut ts = [0i64; 2];
    // SAFETY: CLOCK_MONOTONIC (1) into a struct timespec.
    unsafe { clock_gettime(1, &mut ts) };
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}

fn spin_us(us: u64) {
    let end = now_ns() + us * 1000;
    while now_ns() < end {}
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

struct Rec {
    depth: usize,
    clk: [u64; 4],
    counter: Option<u64>,
    name: Vec<u8>,
    meta: Vec<u8>,
}

/// One thread's spans, in pre-order.
struct Log {
    tid: i32,
    depth: usize,
    spans: Vec<Rec>,
}

impl Log {
    fn new() -> Log {
        // SAFETY: gettid() has no preconditions.
        Log {
            tid: unsafe { gettid() },
            depth: 0,
            spans: Vec::new(),
        }
    }

    /// Before an enter marker: the span's slot, its first clock reading.
    fn before_enter(&mut self, name: &[u8], meta: &[u8]) -> usize {
        self.spans.push(Rec {
            depth: self.depth,
            clk: [now_ns(), 0, 0, 0],
            counter: None,
            name: name.to_vec(),
            meta: meta.to_vec(),
        });
        self.depth += 1;
        self.spans.len() - 1
    }

    fn after_enter(&mut self, i: usize) {
        self.spans[i].clk[1] = now_ns();
    }

    fn before_exit(&mut self, i: usize) {
        self.spans[i].clk[2] = now_ns();
    }

    fn after_exit(&mut self, i: usize) {
        self.spans[i].clk[3] = now_ns();
        self.depth -= 1;
    }

    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        for s in &self.spans {
            let c = s.counter.map_or("-".to_string(), |c| c.to_string());
            writeln!(
                out,
                "{} {} {} {} {} {} {} {} {}",
                self.tid,
                s.depth,
                s.clk[0],
                s.clk[1],
                s.clk[2],
                s.clk[3],
                c,
                hex(&s.name),
                hex(&s.meta)
            )?;
        }
        Ok(())
    }
}

/// A recursion of guards: literal name, runtime metadata.
fn recurse(log: &mut Log, level: u32) {
    let meta = format!("level={level}");
    let i = log.before_enter(b"recurse", meta.as_bytes());
    let g = span!("recurse", meta);
    log.after_enter(i);
    spin_us(5);
    if level > 1 {
        recurse(log, level - 1);
    }
    log.before_exit(i);
    drop(g);
    log.after_exit(i);
}

fn run(index: usize, rounds: u32) -> Log {
    let mut log = Log::new();
    let mut work: u64 = 0;
    let meta = format!("thread={index}");
    let root = log.before_enter(b"thread.root", meta.as_bytes());
    enter!("thread.root", meta);
    log.after_enter(root);
    for r in 0..rounds {
        recurse(&mut log, 1 + r % 4);
        // Runtime name and metadata in buffers that change before the exit.
        let mut name = format!("item-{}-{}", index, r % 150);
        let mut meta = format!(
            "round={}, parity={}",
            r,
            if r % 2 == 1 { "odd" } else { "even" }
        );
        let item = log.before_enter(name.as_bytes(), meta.as_bytes());
        leanprofiler::enter(&name, &meta);
        log.after_enter(item);
        meta.clear();
        meta.push_str("clobbered=yes");
        spin_us(3);
        {
            let leaf = log.before_enter(b"leaf", b"kind=literal");
            let c0 = work;
            enter!("leaf", "kind=literal", work);
            log.after_enter(leaf);
            work += 7;
            log.before_exit(leaf);
            exit!("leaf", work);
            log.after_exit(leaf);
            log.spans[leaf].counter = Some(work - c0);
        }
        let logged = std::mem::replace(&mut name, "clobbered".into());
        log.before_exit(item);
        leanprofiler::exit(&logged);
        log.after_exit(item);
        // A runtime name with literal metadata, through the macro.
        let job = format!("job.{}", r % 3);
        let j = log.before_enter(job.as_bytes(), b"kind=runtime-name");
        let g = span!(job, "kind=runtime-name");
        log.after_enter(j);
        log.before_exit(j);
        drop(g);
        log.after_exit(j);
    }
    log.before_exit(root);
    exit!("thread.root");
    log.after_exit(root);
    log
}

/// Spans that a panic unwinds: their guards exit on the way out.
fn panics(log: &mut Log) {
    std::panic::set_hook(Box::new(|_| {})); // the panic is expected: no message
    let outer = log.before_enter(b"unwind.outer", b"panics=yes");
    let inner = log.before_enter(b"unwind.inner", b"");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _o = span!("unwind.outer", "panics=yes");
        log.after_enter(outer);
        let name = String::from("unwind.inner");
        let _i = span!(name);
        log.after_enter(inner);
        log.before_exit(inner);
        log.before_exit(outer);
        panic!("unwinds through two spans");
    }));
    assert!(r.is_err());
    log.after_exit(inner);
    log.after_exit(outer);
    let _ = std::panic::take_hook();
}

/// Runtime names another program could pass: quotes, backslashes, control
/// characters, markup, bytes that are not UTF-8, an embedded NUL, too long.
fn hostile(log: &mut Log) {
    let mut long = b"long.".to_vec();
    long.resize(300, b'x');
    let names: [Vec<u8>; 5] = [
        b"q\"uote\\back\nnl\ttab\x1besc</script>&{}".to_vec(),
        "utf8.\u{e9}\u{1f600}\u{202e}rtl".as_bytes().to_vec(),
        b"bad.\xff\xfe.bytes".to_vec(),
        b"nul.before\0after".to_vec(),
        long,
    ];
    for n in &names {
        let i = log.before_enter(n, b"hostile=yes");
        let g = span!(n.as_slice(), "hostile=yes");
        log.after_enter(i);
        log.before_exit(i);
        drop(g);
        log.after_exit(i);
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let wait = args.first().map_or(false, |a| a == "--wait");
    if wait {
        args.remove(0);
    }
    if args.len() != 3 {
        eprintln!("usage: spans [--wait] OUT THREADS ROUNDS");
        std::process::exit(2);
    }
    let (threads, rounds): (usize, u32) = match (args[1].parse(), args[2].parse()) {
        (Ok(t), Ok(r)) => (t, r),
        _ => {
            eprintln!("spans: THREADS and ROUNDS must be numbers");
            std::process::exit(2);
        }
    };
    if wait {
        println!("ready {}", std::process::id());
        std::io::stdout().flush().unwrap();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).unwrap();
    }
    let mut main_log = Log::new();
    let m = main_log.before_enter(b"main", b"");
    let g = span!("main");
    main_log.after_enter(m);
    let logs: Vec<Log> = (0..threads)
        .map(|i| std::thread::spawn(move || run(i, rounds)))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    panics(&mut main_log);
    hostile(&mut main_log);
    main_log.before_exit(m);
    drop(g);
    main_log.after_exit(m);

    let out = std::fs::File::create(&args[0]).unwrap_or_else(|e| {
        eprintln!("spans: cannot write {}: {e}", args[0]);
        std::process::exit(2);
    });
    let mut out = std::io::BufWriter::new(out);
    for l in std::iter::once(&main_log).chain(logs.iter()) {
        l.write(&mut out).unwrap();
    }
    out.flush().unwrap();
}
