// SPDX-License-Identifier: MIT
//! The probe sites: the very bytes `include/leanprofiler.h` emits (the same
//! symbols, COMDAT groups, USDT notes, semaphore, fork sites and warm-up), so
//! that `leanprofiler record` finds a Rust binary's markers as it finds a C
//! one's, and a program that links both C code using the header and this crate
//! keeps exactly one copy of each (the linker drops the duplicate group).
//! Read the header's comments for why each piece is there.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::MARKER_WARMUP;

// The header's asm, byte for byte (its default sites: a 5-byte nop the kernel
// may turn into a trampoline call, and the forked child's 1-byte nop sites).
global_asm!(
    ".ifndef lp__probe_enter",
    ".pushsection .text.lp__probe,\"axG\",@progbits,lp__probe,comdat",
    ".weak lp__probe_enter",
    ".hidden lp__probe_enter",
    ".type lp__probe_enter, @function",
    "lp__probe_enter:",
    "991: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
    "ret",
    ".size lp__probe_enter, .-lp__probe_enter",
    ".weak lp__probe_exit",
    ".hidden lp__probe_exit",
    ".type lp__probe_exit, @function",
    "lp__probe_exit:",
    "992: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
    "ret",
    ".size lp__probe_exit, .-lp__probe_exit",
    // The child's sites, their notes, the state byte and its atfork handler.
    ".weak lp__probe_enter_forked",
    ".hidden lp__probe_enter_forked",
    ".type lp__probe_enter_forked, @function",
    "lp__probe_enter_forked:",
    "981: nop",
    "ret",
    ".size lp__probe_enter_forked, .-lp__probe_enter_forked",
    ".weak lp__probe_exit_forked",
    ".hidden lp__probe_exit_forked",
    ".type lp__probe_exit_forked, @function",
    "lp__probe_exit_forked:",
    "982: nop",
    "ret",
    ".size lp__probe_exit_forked, .-lp__probe_exit_forked",
    ".weak lp__atfork_child",
    ".hidden lp__atfork_child",
    ".type lp__atfork_child, @function",
    "lp__atfork_child:",
    "endbr64",
    "movb $2, lp__state(%rip)",
    "ret",
    ".size lp__atfork_child, .-lp__atfork_child",
    ".weak lp__init",
    ".hidden lp__init",
    ".type lp__init, @function",
    "lp__init:",
    "endbr64",
    "xorl %edi, %edi",
    "xorl %esi, %esi",
    "leaq lp__atfork_child(%rip), %rdx",
    "jmp pthread_atfork@PLT",
    ".size lp__init, .-lp__init",
    ".pushsection .init_array,\"aw?\",@init_array",
    ".balign 8",
    ".8byte lp__init",
    ".popsection",
    ".pushsection .data.lp__state,\"aw?\",@progbits",
    ".weak lp__state",
    ".hidden lp__state",
    ".type lp__state, @object",
    "lp__state: .byte 0",
    ".size lp__state, 1",
    ".popsection",
    ".pushsection .note.stapsdt,\"?\",\"note\"",
    ".balign 4",
    ".4byte 9712f-9711f, 9714f-9713f, 3",
    "9711: .asciz \"stapsdt\"",
    "9712: .balign 4",
    "9713: .8byte 981b",
    ".8byte _.stapsdt.base",
    ".8byte lp__semaphore",
    ".asciz \"leanprofiler\"",
    ".asciz \"span_enter\"",
    ".asciz \"8@%rdi 8@%rsi 8@%rdx 8@%rcx\"",
    "9714: .balign 4",
    ".4byte 9716f-9715f, 9718f-9717f, 3",
    "9715: .asciz \"stapsdt\"",
    "9716: .balign 4",
    "9717: .8byte 982b",
    ".8byte _.stapsdt.base",
    ".8byte lp__semaphore",
    ".asciz \"leanprofiler\"",
    ".asciz \"span_exit\"",
    ".asciz \"8@%rdi 8@%rsi 8@%rdx\"",
    "9718: .balign 4",
    ".popsection",
    // The semaphore the kernel raises while a profiler is attached.
    ".pushsection .probes,\"aw?\",@progbits",
    ".weak lp__semaphore",
    ".hidden lp__semaphore",
    ".type lp__semaphore, @object",
    ".balign 2",
    "lp__semaphore: .2byte 0",
    ".size lp__semaphore, 2",
    ".popsection",
    ".pushsection .note.stapsdt,\"?\",\"note\"",
    ".balign 4",
    ".4byte 994f-993f, 996f-995f, 3",
    "993: .asciz \"stapsdt\"",
    "994: .balign 4",
    "995: .8byte 991b",
    ".8byte _.stapsdt.base",
    ".8byte lp__semaphore",
    ".asciz \"leanprofiler\"",
    ".asciz \"span_enter\"",
    ".asciz \"8@%rdi 8@%rsi 8@%rdx 8@%rcx\"",
    "996: .balign 4",
    ".4byte 998f-997f, 9990f-999f, 3",
    "997: .asciz \"stapsdt\"",
    "998: .balign 4",
    "999: .8byte 992b",
    ".8byte _.stapsdt.base",
    ".8byte lp__semaphore",
    ".asciz \"leanprofiler\"",
    ".asciz \"span_exit\"",
    ".asciz \"8@%rdi 8@%rsi 8@%rdx\"",
    "9990: .balign 4",
    ".popsection",
    ".popsection",
    ".ifndef _.stapsdt.base",
    ".pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat",
    ".weak _.stapsdt.base",
    ".hidden _.stapsdt.base",
    "_.stapsdt.base: .space 1",
    ".size _.stapsdt.base, 1",
    ".popsection",
    ".endif",
    ".endif",
    options(att_syntax)
);

const COLD: u8 = 0; // the sites were not hit yet in this process
const WARM: u8 = 1; // they were: the kernel has rewritten them
const FORKED: u8 = 2; // a forked child: the 1-byte nop sites

#[allow(non_upper_case_globals)]
extern "C" {
    // The probe functions: their first instruction is the probe site, the
    // arguments in rdi, rsi, rdx, rcx as the notes say (the C calling convention).
    fn lp__probe_enter(name: *const u8, meta: *const u8, counter: u64, flags: u64);
    fn lp__probe_exit(name: *const u8, counter: u64, flags: u64);
    fn lp__probe_enter_forked(name: *const u8, meta: *const u8, counter: u64, flags: u64);
    fn lp__probe_exit_forked(name: *const u8, counter: u64, flags: u64);
    static mut lp__state: u8;
}

/// One load of the semaphore (as the C header's `LP_ACTIVE()`): written in asm
/// so that it is the single `lp__semaphore(%rip)` load C makes, not a GOT
/// load first, and never merged with another (the kernel changes it).
#[inline(always)]
pub fn active() -> bool {
    let sem: u32;
    // SAFETY: reads the 2-byte semaphore the global_asm above defines.
    unsafe {
        asm!(
            "movzwl lp__semaphore(%rip), {0:e}",
            out(reg) sem,
            options(att_syntax, nostack, preserves_flags, readonly)
        );
    }
    sem != 0
}

#[inline(always)]
fn state() -> u8 {
    // SAFETY: a byte the asm defines; written only by the markers and the atfork handler.
    unsafe { read_volatile(addr_of!(lp__state)) }
}

/// Both sites hit once, flagged LP_MARKER_WARMUP, so that the kernel rewrites
/// them before a span is recorded (the header's lp__warm_up()).
#[cold]
#[inline(never)]
unsafe fn warm_up() {
    lp__probe_enter(core::ptr::null(), core::ptr::null(), 0, MARKER_WARMUP);
    lp__probe_exit(core::ptr::null(), 0, MARKER_WARMUP);
    write_volatile(addr_of_mut!(lp__state), WARM);
}

#[cold]
#[inline(never)]
unsafe fn enter_slow(name: *const u8, meta: *const u8, counter: u64, flags: u64) {
    if state() == FORKED {
        lp__probe_enter_forked(name, meta, counter, flags);
        return;
    }
    warm_up();
    lp__probe_enter(name, meta, counter, flags);
}

#[cold]
#[inline(never)]
unsafe fn exit_slow(name: *const u8, counter: u64, flags: u64) {
    if state() == FORKED {
        lp__probe_exit_forked(name, counter, flags);
        return;
    }
    warm_up();
    lp__probe_exit(name, counter, flags);
}

/// The enter probe; only called while attached. name and meta: NUL-terminated
/// text that stays valid during the call (or null).
#[inline(always)]
pub unsafe fn enter(name: *const u8, meta: *const u8, counter: u64, flags: u64) {
    if state() == WARM {
        lp__probe_enter(name, meta, counter, flags);
    } else {
        enter_slow(name, meta, counter, flags);
    }
}

/// The exit probe; only called while attached.
#[inline(always)]
pub unsafe fn exit(name: *const u8, counter: u64, flags: u64) {
    if state() == WARM {
        lp__probe_exit(name, counter, flags);
    } else {
        exit_slow(name, counter, flags);
    }
}

// COLD is the state's initial value (the asm's `.byte 0`).
const _: () = assert!(COLD == 0);
