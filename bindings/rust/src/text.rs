// SPDX-License-Identifier: MIT
//! What runtime names and metadata may be: anything that is bytes, or nothing.

use std::borrow::Cow;
use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

/// Runtime text for a marker: its bytes, or `None` (no metadata; a null name).
/// The bytes need not be UTF-8 (each invalid byte is recorded as U+FFFD) and are
/// cut at the first NUL byte, as a C string is.
pub trait Text {
    fn text(&self) -> Option<&[u8]>;
}

impl Text for str {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl Text for [u8] {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl<const N: usize> Text for [u8; N] {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl Text for String {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl Text for Vec<u8> {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl Text for Box<str> {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl Text for Cow<'_, str> {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl<T: Text + ?Sized> Text for &T {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        (**self).text()
    }
}

impl<T: Text> Text for Option<T> {
    #[inline(always)]
    fn text(&self) -> Option<&[u8]> {
        self.as_ref().and_then(|t| t.text())
    }
}
