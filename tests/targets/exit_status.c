// SPDX-License-Identifier: MIT
/* exit_status CODE | exit_status -SIGNAL: one span, then exit with CODE or die of SIGNAL. */
#include <signal.h>
#include <stdlib.h>

#include "leanprofiler.h"

int main(int argc, char **argv)
{
	int v = argc > 1 ? atoi(argv[1]) : 0;

	LP_SPAN_ENTER("before.exit", NULL);
	LP_SPAN_EXIT("before.exit");
	LP_SPAN_ENTER("never.closed", "state=open");
	if (v < 0) {
		signal(-v, SIG_DFL);
		raise(-v);
	}
	return v;
}
