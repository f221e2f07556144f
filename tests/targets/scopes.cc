// SPDX-License-Identifier: MIT
/*
 * scopes: LP_SPAN_SCOPE as C++ code writes it, with names that are temporaries
 * (destroyed before the scope's body runs), for tests/integration/test_core.c.
 * Usage: scopes N
 * Runs N "job.K" scopes (K = i % 4; the name is 60 bytes: "job.K" and '-'
 * padding, so it lives on the heap), each with a nested scope named by a
 * 300-byte temporary ("long." and 'y' padding: longer than a name keeps) and a
 * heap allocation of the same size in between that takes the freed memory.
 * Prints "scopes=N".
 */
#include <cstdio>
#include <cstdlib>
#include <string>

#include "leanprofiler.h"

static std::string padded(const std::string &head, char pad, size_t len)
{
	return head + std::string(len - head.size(), pad);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	volatile size_t sink = 0;

	for (int i = 0; i < n; i++) {
		LP_SPAN_SCOPE(padded("job." + std::to_string(i % 4), '-', 60).c_str(), nullptr);
		std::string other(60, 'Z'); /* likely where the temporary was */
		sink += other.size();
		{
			LP_SPAN_SCOPE(padded("long.", 'y', 300).c_str(), "kind=long");
			std::string more(300, 'W');
			sink += more.size();
		}
	}
	printf("scopes=%d\n", n);
	return sink == 0;
}
