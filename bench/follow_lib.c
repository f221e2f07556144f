// SPDX-License-Identifier: MIT
/*
 * The library bench/follow dlopen()s: built with markers (-DMARKED) and
 * without, and as a program (-DMAIN) for its exec row.
 */
#ifdef MARKED
#include "leanprofiler.h" /* its probe sites and notes land in every object that includes it */
#endif

void bench_lib_span(void)
{
#ifdef MARKED
	LP_SPAN_ENTER("lib.span", NULL);
	LP_SPAN_EXIT("lib.span");
#endif
}

#ifdef MAIN
int main(void)
{
	bench_lib_span();
	return 0;
}
#endif
