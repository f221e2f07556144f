// SPDX-License-Identifier: MIT
/*
 * suidsecret SECRETFILE: built without PIE and made setuid root by
 * tests/integration/test_security.c. Reads a root-only secret into `secret`
 * (a fixed address), names a span by it, says "ready" on fd 3, waits for its
 * children, exits. Nothing of it may reach a profile of the unprivileged
 * program that exec'ed it.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leanprofiler.h"

char secret[64];

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;

	if (!f || !fgets(secret, sizeof(secret), f))
		return 2;
	fclose(f);
	LP_SPAN_ENTER(secret, secret);
	LP_SPAN_EXIT(secret);
	if (write(3, "ready\n", 6) != 6)
		return 3;
	while (wait(NULL) > 0)
		;
	return 0;
}
