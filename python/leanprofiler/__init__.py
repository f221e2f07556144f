# SPDX-License-Identifier: MIT
"""Span markers for the leanprofiler eBPF span profiler.

Mark where a program spends its time; `sudo leanprofiler record -- python3 app.py`
(or `record -p PID` on a running program) records every span, per thread, with
its metadata, nesting and counters, exactly as it records a C program's
(the markers are include/leanprofiler.h's own USDT probes)::

    import leanprofiler

    with leanprofiler.span("model.forward", phase="forward", module="encoder"):
        ...                       # metadata: "phase=forward, module=encoder"

    @leanprofiler.spanned         # the span is named after the function
    def load(path): ...

    @leanprofiler.spanned("db.query", kind="read")
    async def query(sql): ...     # ends when the coroutine finishes

    leanprofiler.enter("step", "k=v", counter=heartbeats)
    leanprofiler.exit("step", counter=heartbeats)

    if leanprofiler.active():     # True while a profiler is attached
        ...

Nothing attached, a span costs the call that makes it and its `with`: no text is
encoded and no metadata formatted. A span is closed when its block ends, also by
an exception; each thread has its own nesting. See docs/markers.md, "Python".
"""

import functools as _functools
import inspect as _inspect

from ._native import Span, active, enter, exit, span

__all__ = ["span", "spanned", "enter", "exit", "active", "Span"]


def _decorate(func, name, meta):
    if _inspect.isgeneratorfunction(func) or _inspect.isasyncgenfunction(func):
        raise TypeError(
            "leanprofiler.spanned: %r is a generator function: its body runs at each "
            "next(), not in the call; use `with leanprofiler.span(...)` inside it" % (func,))
    s = span(func.__qualname__ if name is None else name, **meta)
    if _inspect.iscoroutinefunction(func):
        # The span begins when the coroutine first runs and ends when it returns
        # or raises, not at its first await.
        @_functools.wraps(func)
        async def spanned_coroutine(*args, **kwargs):
            with s:
                return await func(*args, **kwargs)
        return spanned_coroutine

    @_functools.wraps(func)
    def spanned_function(*args, **kwargs):
        with s:
            return func(*args, **kwargs)
    return spanned_function


def spanned(func_or_name=None, /, **meta):
    """Decorator: every call of the function is a span.

    `@spanned` names the span after the function (its __qualname__, such as
    "Model.forward"); `@spanned("name", k=v, ...)` gives the name and metadata
    (see span()); `@spanned(k=v)` the metadata only. On an `async def`
    function the span covers the coroutine from its first step until it returns
    or raises, its awaits included. Generator functions are refused (TypeError):
    use `with span(...)` inside them.

    Spans of coroutines that run concurrently on one thread (asyncio tasks,
    gather) overlap without nesting; the recording closes the inner one at the
    outer one's exit, flagged unterminated.
    """
    if callable(func_or_name) and not isinstance(func_or_name, (str, bytes)):
        if meta:
            raise TypeError("leanprofiler.spanned: metadata goes with a name: "
                            "@spanned('name', k=v) or @spanned(k=v)")
        return _decorate(func_or_name, None, {})
    if func_or_name is not None and not isinstance(func_or_name, (str, bytes)):
        raise TypeError("leanprofiler.spanned: the span name must be str or bytes, not %s"
                        % type(func_or_name).__name__)
    name = func_or_name
    span(b"" if name is None else name, **meta)  # the same checks span() makes, now

    def decorator(func):
        return _decorate(func, name, meta)
    return decorator
