# SPDX-License-Identifier: MIT
"""Prints where `make install` puts the leanprofiler package for this Python, under PREFIX.

The platform's own scheme for a prefix: Debian's python3 reads /usr/lib/python3/dist-packages
and /usr/local/lib/python3.X/dist-packages (its "posix_local" scheme, which adds "local/" to
the base it is given); any other CPython reads PREFIX/lib/pythonX.Y/site-packages.
"""
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/") or "/"
schemes = sysconfig.get_scheme_names()
if "deb_system" in schemes and prefix == "/usr":
    path = sysconfig.get_path("platlib", "deb_system", vars={"base": "/usr", "platbase": "/usr"})
elif "posix_local" in schemes and prefix == "/usr/local":
    path = sysconfig.get_path("platlib", "posix_local", vars={"base": "/usr", "platbase": "/usr"})
else:
    path = sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix})
print(path)
