/* Multi-TU test: second translation unit using markers (see tu_main.c). */
#include <leanprofiler.h>

int tu_b_active(void);
unsigned tu_b_work(unsigned n);

int tu_b_active(void)
{
	return LP_ACTIVE() != 0;
}

unsigned tu_b_work(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		LP_SPAN_SCOPE("tu_b.work", "tu=b");
	}
	return n;
}
