// SPDX-License-Identifier: MIT
/*
 * pictures: what tests/integration/test_pictures.c draws. One root span per
 * thread; under it, spans whose names and metadata try to break out of the
 * pictures: out of an SVG text (XML markup, a forbidden character), out of
 * the page's JSON script element (</script>, U+2028, U+2029), into the page's
 * objects (a metadata key __proto__), into the terminal (controls), and
 * invalid UTF-8; then TINY spans of a few ns, narrower than any pixel, which
 * the pictures must merge. A second thread does the same under its own root,
 * so there are two lanes. Prints nothing; exits 0.
 *
 *   pictures [TINY]   (default 20000)
 */
#include <pthread.h>
#include <stdlib.h>

#include "leanprofiler.h"

static long tiny = 20000;

/* A span with literal name and metadata: both are sent once, then by address. */
#define SPAN(name, meta)                        \
	do {                                    \
		LP_SPAN_ENTER(name, meta);      \
		LP_SPAN_EXIT(name);             \
	} while (0)

static void hostile(void)
{
	SPAN("</script><script>alert(1)</script>", "__proto__=polluted, constructor=yes, <b>=&amp;");
	SPAN("</script><script>document.documentElement.setAttribute('data-pwned','1')</script>",
	     "toString=1");
	SPAN("<img src=x onerror=alert(2)>", "k=<!-- ]]> -->");
	SPAN("line\xe2\x80\xa8" "sep\xe2\x80\xa9" "end", "v=\xe2\x80\xa8");
	SPAN("ctl\x01\x1b[31mred\x7f", "bell=\x07");
	SPAN("bad\xff\xfe utf8", NULL);
	SPAN("nonchar\xef\xbf\xbe\xef\xbf\xbf", NULL);
	SPAN("quote\"apos'amp&lt", "q=\"'");
}

static void *worker(void *arg)
{
	const char *root = arg;

	if (root[0] == 'm')
		LP_SPAN_ENTER("pictures.main", "thread=main");
	else
		LP_SPAN_ENTER("pictures.worker", "thread=worker");
	hostile();
	for (long i = 0; i < tiny; i++)
		SPAN("pictures.tiny", "size=tiny");
	if (root[0] == 'm')
		LP_SPAN_EXIT("pictures.main");
	else
		LP_SPAN_EXIT("pictures.worker");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		tiny = atol(argv[1]);
	if (pthread_create(&t, NULL, worker, "worker"))
		return 1;
	worker("main");
	pthread_join(t, NULL);
	return 0;
}
