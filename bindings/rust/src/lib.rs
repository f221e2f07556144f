// SPDX-License-Identifier: MIT
//! Span markers for the leanprofiler eBPF span profiler.
//!
//! Mark a region of a program; `sudo leanprofiler record -- ./prog` (or
//! `record -p PID`) records it, with no change to the program's build:
//!
//! ```
//! use leanprofiler::{enter, exit, span};
//!
//! fn forward(layer: usize, work: &mut u64) {
//!     // A guard: the span exits when it is dropped (also while a panic unwinds).
//!     let _g = span!("model.forward", "phase=forward, module=encoder");
//!     // Counter form: a u64 work counter at the enter and at the exit.
//!     enter!("layer", "kind=dense", *work);
//!     *work += 7;
//!     exit!("layer", *work);
//!     // Runtime text: copied (bounded) and recorded as it was at the marker.
//!     let name = format!("layer.{layer}");
//!     let _l = span!(name, format!("index={layer}"));
//! }
//! forward(3, &mut 0);
//! if leanprofiler::active() { /* a profiler is attached */ }
//! ```
//!
//! The probes are exactly those of the C header `include/leanprofiler.h`:
//! provider `leanprofiler`, `span_enter(name, meta, counter, flags)` and
//! `span_exit(name, counter, flags)`, the same flag bits, the same shared
//! semaphore, the same sites (a 5-byte nop, a forked child's 1-byte nop) and
//! the same warm-up of the first hit. A Rust program's spans are recorded
//! exactly as a C program's.
//!
//! - `name` and `meta` given as string literals are passed as pointers to
//!   static NUL-terminated copies and flagged as literals, as C's literals are:
//!   the profiler reads their text once per process. Any other value (`&str`,
//!   `String`, `&[u8]`, `Option<_>` of those) is runtime text: copied with a
//!   NUL into a buffer on the stack at each marker, cut at [`NAME_MAX`] + 1 and
//!   [`META_MAX`] + 1 bytes (the most the profiler reads: it shows the cut with
//!   "…"), and flagged as not literal. Text after a NUL byte is not recorded (C
//!   strings end there). Bytes that are not UTF-8 are recorded as U+FFFD each.
//! - `meta` is `"key=value, key=value"`, or `None`.
//! - Not attached, a marker is one load of the semaphore and a branch not
//!   taken, and the macros do not evaluate their arguments.
//! - A [`Span`] keeps its own copy of a runtime name for its exit. One begun
//!   while no profiler was attached ends without an exit when its name was
//!   runtime text (it had no enter), with one when it was a literal (a profiler
//!   that attached meanwhile shows it as begun before the recording), as C's
//!   `LP_SPAN_SCOPE` does. A `Span` cannot move to another thread: each thread
//!   has its own nesting.
//! - Only x86-64 Linux emits probes; elsewhere, or with the feature `disable`,
//!   markers do nothing.

#[cfg(all(
    target_arch = "x86_64",
    target_os = "linux",
    target_pointer_width = "64",
    not(feature = "disable")
))]
mod sys;

#[cfg(not(all(
    target_arch = "x86_64",
    target_os = "linux",
    target_pointer_width = "64",
    not(feature = "disable")
)))]
mod sys {
    #[inline(always)]
    pub fn active() -> bool {
        false
    }
    pub unsafe fn enter(_: *const u8, _: *const u8, _: u64, _: u64) {}
    pub unsafe fn exit(_: *const u8, _: u64, _: u64) {}
}

mod text;
pub use text::Text;

use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::null;

/// The marker ABI version passed in bits 8-11 of the flags (`LP_MARKER_ABI`).
pub const MARKER_ABI: u64 = 1;
/// `LP_MARKER_ABI_SHIFT`.
pub const MARKER_ABI_SHIFT: u32 = 8;
/// The name is a literal (immutable): its text is read once per process.
pub const MARKER_NAME_LITERAL: u64 = 0x1;
/// The metadata is a literal or null.
pub const MARKER_META_LITERAL: u64 = 0x2;
/// The counter argument is meaningful.
pub const MARKER_HAS_COUNTER: u64 = 0x4;
/// Not a span: a process's first hits of the sites, which the profiler ignores.
pub const MARKER_WARMUP: u64 = 0x8;
/// Bytes of a name the profiler keeps (`LP_NAME_MAX`); longer names are cut, with "…".
pub const NAME_MAX: usize = 256;
/// Bytes of metadata the profiler keeps (`LP_META_MAX`).
pub const META_MAX: usize = 512;

/// A copy of runtime text holds the profiler's read: the limit, one more byte
/// to mark a cut, and the NUL (the header's LP__SCOPE_NAME_BUF for names).
const NAME_BUF: usize = NAME_MAX + 2;
const META_BUF: usize = META_MAX + 2;
const ABI: u64 = MARKER_ABI << MARKER_ABI_SHIFT;

/// Whether a profiler is attached to this binary's markers (`LP_ACTIVE()`).
#[inline(always)]
pub fn active() -> bool {
    sys::active()
}

/// A marker's name or metadata: a literal, or runtime text to copy.
#[doc(hidden)]
pub trait Arg {
    /// A literal (or the constant `None`): static text a span may keep, flagged
    /// literal. As in C, where a constant is literal and any other value is
    /// not, even one that turns out NULL at run time.
    const STATIC: bool;
    /// A pointer the probe may read: the literal's, or a NUL-terminated copy in buf (null: none).
    fn ptr<const N: usize>(&self, buf: &mut [MaybeUninit<u8>; N]) -> *const u8;
}

/// A string literal with its NUL (`concat!(lit, "\0")`), made by the macros.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Lit(*const u8);

#[doc(hidden)]
#[inline(always)]
pub const fn lit(with_nul: &'static str) -> Lit {
    Lit(with_nul.as_ptr())
}

/// No metadata (C's NULL): `None` in the macros.
#[doc(hidden)]
pub const NULL: Lit = Lit(null());

impl Arg for Lit {
    const STATIC: bool = true;
    #[inline(always)]
    fn ptr<const N: usize>(&self, _: &mut [MaybeUninit<u8>; N]) -> *const u8 {
        self.0
    }
}

impl<T: Text + ?Sized> Arg for &T {
    const STATIC: bool = false;
    #[inline(always)]
    fn ptr<const N: usize>(&self, buf: &mut [MaybeUninit<u8>; N]) -> *const u8 {
        match self.text() {
            Some(bytes) => copy_text(bytes, buf),
            None => null(),
        }
    }
}

/// bytes, cut to N - 1, and a NUL, into buf: what the kernel reads at the probe.
#[inline]
fn copy_text<const N: usize>(bytes: &[u8], buf: &mut [MaybeUninit<u8>; N]) -> *const u8 {
    if N == 0 {
        return null();
    }
    let n = if bytes.len() < N { bytes.len() } else { N - 1 };
    let dst = buf.as_mut_ptr() as *mut u8;

    // SAFETY: n < N bytes into a buffer of N, then the NUL at n.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, n);
        dst.add(n).write(0);
    }
    dst
}

#[inline(always)]
fn flags(name_literal: bool, meta_literal: bool, extra: u64) -> u64 {
    ABI | extra
        | if name_literal { MARKER_NAME_LITERAL } else { 0 }
        | if meta_literal { MARKER_META_LITERAL } else { 0 }
}

/// The enter marker, attached (the macros test [`active`] first). Out of the
/// caller's line: the dormant path stays a load and a branch.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn __enter<N: Arg, M: Arg>(name: N, meta: M, counter: u64, extra: u64) {
    let mut nbuf = [MaybeUninit::<u8>::uninit(); NAME_BUF];
    let mut mbuf = [MaybeUninit::<u8>::uninit(); META_BUF];
    let n = name.ptr(&mut nbuf);
    let m = meta.ptr(&mut mbuf);

    // SAFETY: n and m are null, static literals or copies that live past the call.
    unsafe { sys::enter(n, m, counter, flags(N::STATIC, M::STATIC, extra)) }
}

/// The exit marker, attached.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn __exit<N: Arg>(name: N, counter: u64, extra: u64) {
    let mut nbuf = [MaybeUninit::<u8>::uninit(); NAME_BUF];
    let n = name.ptr(&mut nbuf);

    // SAFETY: as in __enter. An exit passes no metadata: C's NULL, flagged literal.
    unsafe { sys::exit(n, counter, flags(N::STATIC, true, extra)) }
}

/// Enter marker for runtime text (never flagged literal): `name`, `meta` as
/// [`Text`] (`&str`, `String`, `&[u8]`, `Option<&str>`, ...). The same as
/// `enter!(name, meta)` with non-literal arguments.
#[inline]
pub fn enter<N: Text + ?Sized, M: Text + ?Sized>(name: &N, meta: &M) {
    if active() {
        __enter(name, meta, 0, 0);
    }
}

/// Enter marker with a work counter (`LP_SPAN_ENTER_COUNTER`), runtime text.
#[inline]
pub fn enter_counter<N: Text + ?Sized, M: Text + ?Sized>(name: &N, meta: &M, counter: u64) {
    if active() {
        __enter(name, meta, counter, MARKER_HAS_COUNTER);
    }
}

/// Exit marker for a runtime name (`LP_SPAN_EXIT`).
#[inline]
pub fn exit<N: Text + ?Sized>(name: &N) {
    if active() {
        __exit(name, 0, 0);
    }
}

/// Exit marker with a work counter (`LP_SPAN_EXIT_COUNTER`), runtime name.
#[inline]
pub fn exit_counter<N: Text + ?Sized>(name: &N, counter: u64) {
    if active() {
        __exit(name, counter, MARKER_HAS_COUNTER);
    }
}

// The copy lives in the guard, on the caller's stack: no allocation per span.
#[allow(clippy::large_enum_variant)]
enum Name {
    /// Began dormant with a runtime name: no enter, so no exit.
    None,
    Literal(*const u8),
    Copy([MaybeUninit<u8>; NAME_BUF]),
}

/// A span that exits when dropped: made by [`span!`] or [`Span::new`].
#[must_use = "the span ends when this guard is dropped: bind it, `let _g = span!(...);`"]
pub struct Span {
    name: Name,
    exit_flags: u64,
    /// The exit must come from the thread of the enter (its nesting).
    _not_send: PhantomData<*const ()>,
}

impl Span {
    /// A span with runtime text (see [`enter`]); `Span::new(&name, &None::<&str>)`: no metadata.
    #[inline]
    pub fn new<N: Text + ?Sized, M: Text + ?Sized>(name: &N, meta: &M) -> Span {
        if active() {
            Span::__begin(name, meta)
        } else {
            Span::__dormant()
        }
    }

    /// Attached: the enter now, with the name the exit will pass.
    #[doc(hidden)]
    #[cold]
    #[inline(never)]
    pub fn __begin<N: Arg, M: Arg>(name: N, meta: M) -> Span {
        let mut s = Span {
            name: Name::None,
            exit_flags: flags(N::STATIC, true, 0),
            _not_send: PhantomData,
        };
        let mut mbuf = [MaybeUninit::<u8>::uninit(); META_BUF];
        let m = meta.ptr(&mut mbuf);
        let n;

        if N::STATIC {
            let mut none: [MaybeUninit<u8>; 0] = [];
            n = name.ptr(&mut none);
            s.name = Name::Literal(n);
        } else {
            s.name = Name::Copy([MaybeUninit::uninit(); NAME_BUF]);
            let Name::Copy(buf) = &mut s.name else {
                unreachable!()
            };
            n = name.ptr(buf);
            if n.is_null() {
                s.name = Name::Literal(n); // no name (None): the exit passes NULL too
            }
        }
        // SAFETY: as in __enter; the copy lives in s until the call returns.
        unsafe { sys::enter(n, m, 0, flags(N::STATIC, M::STATIC, 0)) }
        s
    }

    /// Not attached, a literal name: exits if a profiler attached meanwhile.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __dormant_literal(name: Lit) -> Span {
        Span {
            name: Name::Literal(name.0),
            exit_flags: flags(true, true, 0),
            _not_send: PhantomData,
        }
    }

    /// Not attached, a runtime name: no enter, no exit.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __dormant() -> Span {
        Span {
            name: Name::None,
            exit_flags: 0,
            _not_send: PhantomData,
        }
    }
}

impl Drop for Span {
    #[inline(always)]
    fn drop(&mut self) {
        let name = match &self.name {
            Name::None => return,
            Name::Literal(p) => *p,
            Name::Copy(buf) => buf.as_ptr() as *const u8,
        };
        if active() {
            span_exit(name, self.exit_flags);
        }
    }
}

#[cold]
#[inline(never)]
fn span_exit(name: *const u8, flags: u64) {
    // SAFETY: a static literal or the span's own NUL-terminated copy.
    unsafe { sys::exit(name, 0, flags) }
}

/// A name or metadata argument of the macros: a string literal (static, flagged
/// literal), `None` (no metadata), or any other expression (runtime text).
#[doc(hidden)]
#[macro_export]
macro_rules! __lp_arg {
    (None) => {
        $crate::NULL
    };
    ($l:literal) => {
        $crate::lit(::core::concat!($l, "\0"))
    };
    ($e:expr) => {
        &$e
    };
}

/// A span that exits when the returned [`Span`] is dropped:
/// `let _g = span!("name");`, `span!("name", "k=v, k2=v2")`, `span!(name_expr, meta_expr)`.
/// Literals are passed as C's literals are; other expressions are runtime text
/// ([`Text`]), evaluated only while a profiler is attached. `None` as meta: none.
#[macro_export]
macro_rules! span {
    ($name:literal $(,)?) => {
        $crate::span!($name, None)
    };
    ($name:literal, $($meta:tt)+) => {
        if $crate::active() {
            $crate::Span::__begin($crate::__lp_arg!($name), $crate::__span_meta!($($meta)+))
        } else {
            $crate::Span::__dormant_literal($crate::__lp_arg!($name))
        }
    };
    ($name:expr $(,)?) => {
        $crate::span!($name, None)
    };
    ($name:expr, $($meta:tt)+) => {
        if $crate::active() {
            $crate::Span::__begin($crate::__lp_arg!($name), $crate::__span_meta!($($meta)+))
        } else {
            $crate::Span::__dormant()
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __span_meta {
    (None $(,)?) => {
        $crate::NULL
    };
    ($meta:literal $(,)?) => {
        $crate::__lp_arg!($meta)
    };
    ($meta:expr $(,)?) => {
        $crate::__lp_arg!($meta)
    };
}

/// The enter marker: `enter!(name)`, `enter!(name, meta)`, `enter!(name, meta, counter)`
/// (`LP_SPAN_ENTER`, `LP_SPAN_ENTER_COUNTER`: counter is a `u64` work counter).
/// Arguments as in [`span!`]; none is evaluated while no profiler is attached.
#[macro_export]
macro_rules! enter {
    ($name:literal $(,)?) => {
        $crate::enter!($name, None)
    };
    ($name:literal, $($rest:tt)+) => {
        $crate::__enter_meta!(($crate::__lp_arg!($name)) $($rest)+)
    };
    ($name:expr $(,)?) => {
        $crate::enter!($name, None)
    };
    ($name:expr, $($rest:tt)+) => {
        $crate::__enter_meta!(($crate::__lp_arg!($name)) $($rest)+)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __enter_meta {
    (($($n:tt)*) None $(, $($c:tt)*)?) => {
        $crate::__lp_marker!(__enter ($($n)*, $crate::NULL) $($($c)*)?)
    };
    (($($n:tt)*) $meta:literal $(, $($c:tt)*)?) => {
        $crate::__lp_marker!(__enter ($($n)*, $crate::__lp_arg!($meta)) $($($c)*)?)
    };
    (($($n:tt)*) $meta:expr $(, $($c:tt)*)?) => {
        $crate::__lp_marker!(__enter ($($n)*, $crate::__lp_arg!($meta)) $($($c)*)?)
    };
}

/// A marker call, made only while attached, with its counter if one is given.
#[doc(hidden)]
#[macro_export]
macro_rules! __lp_marker {
    ($f:ident ($($a:tt)*)) => {
        if $crate::active() {
            $crate::$f($($a)*, 0, 0)
        }
    };
    ($f:ident ($($a:tt)*) $counter:expr $(,)?) => {
        if $crate::active() {
            $crate::$f($($a)*, $counter, $crate::MARKER_HAS_COUNTER)
        }
    };
}

/// The exit marker: `exit!(name)`, `exit!(name, counter)` (`LP_SPAN_EXIT`,
/// `LP_SPAN_EXIT_COUNTER`). Arguments as in [`span!`].
#[macro_export]
macro_rules! exit {
    ($name:literal $(, $($c:tt)*)?) => {
        $crate::__lp_marker!(__exit ($crate::__lp_arg!($name)) $($($c)*)?)
    };
    ($name:expr $(, $($c:tt)*)?) => {
        $crate::__lp_marker!(__exit ($crate::__lp_arg!($name)) $($($c)*)?)
    };
}
