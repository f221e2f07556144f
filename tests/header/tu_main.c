/*
 * Multi-TU test, main translation unit. Linked either with tu_b.c and tu_c.c
 * into one executable, or against a shared library built from them.
 * Prints the LP_ACTIVE() seen by code in each translation unit and how many
 * span_enter markers each part of the program ran.
 */
#include <leanprofiler.h>

#include <stdio.h>

int tu_b_active(void);
int tu_c_active(void);
unsigned tu_b_work(unsigned n); /* returns the span_enter markers it ran */
unsigned tu_c_work(unsigned n);

int main(void)
{
	unsigned lib_enters;

	LP_SPAN_ENTER("main", NULL);
	lib_enters = tu_b_work(10) + tu_c_work(20);
	LP_SPAN_EXIT("main");

	printf("main_active=%d\n", LP_ACTIVE() != 0);
	printf("b_active=%d\n", tu_b_active());
	printf("c_active=%d\n", tu_c_active());
	printf("main_enters=1\n");
	printf("bc_enters=%u\n", lib_enters);
	return 0;
}
