// SPDX-License-Identifier: MIT
/*
 * sizedargs: USDT probes "sized:enter" and "sized:exit" whose notes declare
 * arguments of every size, signed and not (-4@%edi 4@%esi 2@%dx -8@%rcx), for
 * tests/integration/test_presets.c: a template formats a number at its
 * declared size. Main fires the pair once with -5, 0xfffffffb, 0xfffe, -5;
 * a second thread fires an exit alone, whose thread has no span.
 */
#include <pthread.h>

#include "stapsdt.h"

#define SIZED_SITE(sym, name) STAPSDT_SITE(sym, "sized", name, "-4@%edi 4@%esi 2@%dx -8@%rcx")

SIZED_SITE("sized_enter_site", "enter");
SIZED_SITE("sized_exit_site", "exit");

void sized_enter_site(int a, unsigned b, unsigned short c, long d);
void sized_exit_site(int a, unsigned b, unsigned short c, long d);

static void *exit_alone(void *arg)
{
	(void)arg;
	sized_exit_site(1, 1, 1, 1);
	return NULL;
}

int main(void)
{
	pthread_t t;

	sized_enter_site(-5, 0xfffffffbu, 0xfffe, -5);
	sized_exit_site(-5, 0xfffffffbu, 0xfffe, -5);
	if (pthread_create(&t, NULL, exit_alone, NULL))
		return 1;
	return pthread_join(t, NULL) ? 1 : 0;
}
