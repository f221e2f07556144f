/* Multi-TU test: third translation unit using markers (see tu_main.c). */
#include <leanprofiler.h>

#include <stddef.h>

int tu_c_active(void);
unsigned tu_c_work(unsigned n);

int tu_c_active(void)
{
	return LP_ACTIVE() != 0;
}

unsigned tu_c_work(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		LP_SPAN_ENTER_COUNTER("tu_c.work", NULL, i);
		LP_SPAN_EXIT_COUNTER("tu_c.work", i);
	}
	return n;
}
