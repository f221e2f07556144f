# SPDX-License-Identifier: MIT
"""Builds the leanprofiler module with setuptools: pip install ./python --no-build-isolation.

The extension includes ../include/leanprofiler.h from the source tree it is built in
(pip builds in place), the only file it needs besides its own.
"""
import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
include = os.path.join(here, os.pardir, "include")
if not os.path.isfile(os.path.join(include, "leanprofiler.h")):
    raise SystemExit("leanprofiler: no %s/leanprofiler.h: build from leanprofiler's source tree"
                     % os.path.normpath(include))

setup(
    name="leanprofiler",
    version="0.1.0",
    description="Span markers for the leanprofiler eBPF span profiler",
    license="MIT",
    python_requires=">=3.8",
    packages=["leanprofiler"],
    ext_modules=[Extension("leanprofiler._native", ["leanprofiler/_native.c"],
                           include_dirs=[os.path.normpath(include)],
                           extra_compile_args=["-std=gnu11", "-fvisibility=hidden"])],
)
