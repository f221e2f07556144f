// SPDX-License-Identifier: MIT
// A marked program that waits, for tests/install/run.sh to complete `record -p PID --span`
// on: prints "ready" inside its span, then reads its standard input until it closes.
#include <stdio.h>
#include <unistd.h>

#include "leanprofiler.h"

int main(void)
{
	char c;

	LP_SPAN_ENTER("install.wait", NULL);
	puts("ready");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	LP_SPAN_EXIT("install.wait");
	return 0;
}
