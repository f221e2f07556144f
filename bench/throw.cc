// SPDX-License-Identifier: MIT
// make bench, row 14: a throw and catch of a std::runtime_error through a call, N times in a
// loop (libstdc++'s throw and catch probes fire once each), timed with CLOCK_MONOTONIC.
// Usage: throw [N]   prints "throw: N throws, X ns each"
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

static long long now_ns()
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((noinline)) static void thrower(int i)
{
	if (i >= 0)
		throw std::runtime_error("bench");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], nullptr, 10) : 200000;
	long caught = 0;
	long long t0 = now_ns();

	for (long i = 0; i < n; i++) {
		try {
			thrower((int)i);
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	printf("throw: %ld throws, %.1f ns each\n", caught, (double)(now_ns() - t0) / (double)n);
	return caught == n ? 0 : 1;
}
