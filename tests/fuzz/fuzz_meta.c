// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the metadata parser (user/core/meta.c) and the text functions
 * that make target text safe (user/core/text.c, jw_write_string of user/core/jsonw.c),
 * each checked against a reference model written here.
 *
 * Input: a 12-byte header, then the text (any bytes; a short input is padded
 * with zero bytes to the header):
 *   byte 0      max items for lp_meta_parse (0..69)
 *   byte 1      width for lp_fit_columns (0..99)
 *   byte 2      bit 0: pad; bit 1: the reserved keys for the first lp_meta_keys
 *   byte 3      outsz for lp_fit_columns (0..255); the buffer is exactly that big
 *   bytes 4-11  ns for lp_fmt_duration (little-endian)
 *
 * Invariants (abort() when broken):
 *  - lp_meta_parse: at most max items, every pointer and length inside the
 *    text, and exactly the items meta.h describes (split at ',', trimmed,
 *    empty ones skipped, key up to the first '=', dup = earlier uses of the
 *    key, the rest of the text as "_rest" once max is reached);
 *  - lp_meta_keys: keys all distinct, none reserved, valid UTF-8, len ==
 *    strlen, each the sanitized key cut to LP_META_KEY_MAX bytes between
 *    characters, "meta."-prefixed when reserved, then "#N" when taken;
 *  - lp_utf8_seq agrees with an independent decoder at every offset;
 *  - lp_utf8_sanitize appends the text with each invalid byte as U+FFFD;
 *  - lp_text_display: the same with controls (C0, DEL, C1) escaped; valid
 *    UTF-8 without any control byte;
 *  - lp_fit_columns on valid text: NUL-terminated inside the buffer, valid
 *    UTF-8, at most width code points, and exactly text.h's result (the text,
 *    padded to width with spaces if pad; or width-1 code points and "…")
 *    whenever the buffer can hold it; on raw bytes: stays inside the buffer;
 *  - jw_write_string: JSON (json-c, strict) whose value is the sanitized text;
 *  - lp_fmt_duration: "N.NN unit", below 1000.00 unless the unit is s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "jsonw.h"
#include "meta.h"
#include "text.h"

#define HDR 12
#define MAX_ITEMS (LP_META_MAX_ITEMS + 6)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void ref_trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s))
		(*s)++, (*len)--;
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

static bool inside(const char *text, size_t len, const char *p, size_t n)
{
	return p >= text && p <= text + len && n <= (size_t)(text + len - p);
}

static void check_meta(const char *text, size_t len, size_t max)
{
	struct lp_meta_item items[MAX_ITEMS + 1];
	/* The reference: non-empty trimmed segments between commas. */
	const char *seg[MAX_ITEMS + 1];
	size_t seglen[MAX_ITEMS + 1], nseg = 0, n, pos = 0;

	while (pos < len && nseg <= max) {
		const char *s = text + pos, *c = memchr(s, ',', len - pos);
		size_t l = c ? (size_t)(c - s) : len - pos;

		pos += l + (c ? 1 : 0);
		ref_trim(&s, &l);
		if (l)
			seg[nseg] = s, seglen[nseg++] = l;
	}

	memset(items, 0xa5, sizeof(items));
	n = lp_meta_parse(text, len, items, max);
	FUZZ_CHECK(n <= max, "%zu items, max %zu", n, max);
	FUZZ_CHECK(n == (nseg < max ? nseg : max), "%zu items, %zu expected (max %zu)", n,
		   nseg < max ? nseg : max, max);
	for (size_t i = 0; i < n; i++) {
		const struct lp_meta_item *it = &items[i];
		bool rest = nseg > max && i == max - 1;

		FUZZ_CHECK(inside(text, len, it->val, it->val_len), "item %zu: value outside", i);
		if (rest) {
			FUZZ_CHECK(it->key_len == 5 && !memcmp(it->key, "_rest", 5) && !it->dup,
				   "item %zu: not _rest", i);
			FUZZ_CHECK(it->val == seg[i] && it->val + it->val_len == text + len,
				   "_rest is not the rest of the text");
			continue;
		}
		FUZZ_CHECK(inside(text, len, it->key, it->key_len), "item %zu: key outside", i);
		{
			const char *s = seg[i], *eq = memchr(s, '=', seglen[i]), *k = s, *v;
			size_t kl = eq ? (size_t)(eq - s) : seglen[i], vl;

			v = eq ? eq + 1 : s + seglen[i];
			vl = eq ? seglen[i] - kl - 1 : 0;
			ref_trim(&k, &kl);
			ref_trim(&v, &vl);
			FUZZ_CHECK(it->key == k && it->key_len == kl, "item %zu: key", i);
			FUZZ_CHECK(it->val_len == vl && (vl == 0 || it->val == v), "item %zu: value",
				   i);
		}
		{
			unsigned dup = 0;

			for (size_t j = 0; j < i; j++)
				dup += items[j].key_len == it->key_len &&
				       !memcmp(items[j].key, it->key, it->key_len);
			FUZZ_CHECK(it->dup == dup, "item %zu: dup %u, want %u", i, it->dup, dup);
		}
	}
}

static const char *const reserved[] = { "counter", "self_counter", "unterminated", "uncertain",
					"started_before_recording", NULL };

static bool is_reserved(const char *s, size_t len)
{
	for (const char *const *r = reserved; *r; r++)
		if (strlen(*r) == len && !memcmp(*r, s, len))
			return true;
	return false;
}

static void ref_text(struct lp_buf *b, const char *s, size_t len, bool display);

static void check_keys(const char *text, size_t len, size_t max, bool with_reserved)
{
	struct lp_meta_item items[MAX_ITEMS + 1];
	struct lp_meta_key keys[MAX_ITEMS + 1];
	size_t n = lp_meta_parse(text, len, items, max);

	memset(keys, 0xa5, sizeof(keys));
	lp_meta_keys(items, n, with_reserved ? reserved : NULL, keys);
	for (size_t i = 0; i < n; i++) {
		const struct lp_meta_key *k = &keys[i];
		struct lp_buf b = { 0 };
		size_t cut;
		bool res;

		FUZZ_CHECK(k->len < sizeof(k->s) && k->s[k->len] == '\0' && strlen(k->s) == k->len,
			   "key %zu: len %zu", i, k->len);
		FUZZ_CHECK(fz_valid_utf8(k->s, k->len), "key %zu: not valid UTF-8", i);
		FUZZ_CHECK(!with_reserved || !is_reserved(k->s, k->len), "key %zu: reserved %s", i,
			   k->s);
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(keys[j].len != k->len || memcmp(keys[j].s, k->s, k->len),
				   "keys %zu and %zu are both \"%s\"", j, i, k->s);
		/* Its base: the sanitized key, cut between characters. */
		ref_text(&b, items[i].key, items[i].key_len, false);
		cut = b.len < LP_META_KEY_MAX ? b.len : LP_META_KEY_MAX;
		while (cut > 0 && cut < b.len && ((unsigned char)b.p[cut] & 0xc0) == 0x80)
			cut--;
		cut = strnlen(b.p, cut); /* keys are C strings: a NUL ends one */
		res = with_reserved && is_reserved(b.p, cut);
		FUZZ_CHECK(!res || !strncmp(k->s, "meta.", 5), "key %zu: %s not renamed", i, k->s);
		{
			const char *rest = k->s + (res ? 5 : 0);

			FUZZ_CHECK(!memcmp(rest, b.p, cut), "key %zu: \"%s\" is not its key", i, k->s);
			FUZZ_CHECK(rest[cut] == '\0' || rest[cut] == '#', "key %zu: \"%s\"", i, k->s);
		}
		lp_buf_free(&b);
	}
}

/*
 * text.h's list of characters a terminal does not show as themselves (bidi
 * controls, invisible ones, line and paragraph separators, BOM, tags), as
 * ranges of code points.
 */
static const uint32_t invisible_ranges[][2] = {
	{ 0x00ad, 0x00ad }, { 0x061c, 0x061c }, { 0x180e, 0x180e }, { 0x200b, 0x200f },
	{ 0x2028, 0x202e }, { 0x2060, 0x2069 }, { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb },
	{ 0xe0000, 0xe007f },
};

/* The code point of a valid sequence of n bytes, by the book (RFC 3629). */
static uint32_t ref_code_point(const unsigned char *u, size_t n)
{
	static const unsigned char lead_mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = u[0] & lead_mask[n];

	for (size_t k = 1; k < n; k++)
		cp = cp * 64 + (u[k] - 0x80);
	return cp;
}

static bool ref_invisible(uint32_t cp)
{
	for (size_t k = 0; k < sizeof(invisible_ranges) / sizeof(invisible_ranges[0]); k++)
		if (cp >= invisible_ranges[k][0] && cp <= invisible_ranges[k][1])
			return true;
	return false;
}

/* text.h's sanitize (display = false) or display, built byte by byte. */
static void ref_text(struct lp_buf *b, const char *s, size_t len, bool display)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0, n; i < len; i += n) {
		char esc[8];

		n = fz_utf8_seq(u + i, len - i);
		if (!n) {
			lp_buf_put(b, "\xef\xbf\xbd", 3);
			n = 1;
		} else if (display && (u[i] < 0x20 || u[i] == 0x7f)) {
			if (u[i] == '\n' || u[i] == '\t' || u[i] == '\r')
				snprintf(esc, sizeof(esc), "\\%c",
					 u[i] == '\n' ? 'n' : u[i] == '\t' ? 't' : 'r');
			else
				snprintf(esc, sizeof(esc), "\\x%02x", u[i]);
			lp_buf_put(b, esc, strlen(esc));
		} else if (display && n == 2 && u[i] == 0xc2 && u[i + 1] <= 0x9f) {
			snprintf(esc, sizeof(esc), "\\x%02x", u[i + 1]);
			lp_buf_put(b, esc, strlen(esc));
		} else if (display && n > 1 && ref_invisible(ref_code_point(u + i, n))) {
			char u_esc[16];

			snprintf(u_esc, sizeof(u_esc), "\\u%04x",
				 (unsigned)ref_code_point(u + i, n));
			lp_buf_put(b, u_esc, strlen(u_esc));
		} else {
			lp_buf_put(b, s + i, n);
		}
	}
	lp_buf_put(b, "", 0);
}

static void check_text(const char *text, size_t len, struct lp_buf *clean)
{
	static const char prefix[] = "pre\xc3\xa9";
	struct lp_buf got = { 0 }, want = { 0 };

	for (size_t i = 0; i < len; i++) {
		size_t a = lp_utf8_seq((const unsigned char *)text + i, len - i),
		       b = fz_utf8_seq((const unsigned char *)text + i, len - i);

		FUZZ_CHECK(a == b, "lp_utf8_seq at %zu: %zu, want %zu", i, a, b);
	}

	/* Sanitize appends. */
	lp_buf_put(&got, prefix, sizeof(prefix) - 1);
	lp_buf_put(&want, prefix, sizeof(prefix) - 1);
	FUZZ_CHECK(lp_utf8_sanitize(&got, text, len) == 0, "lp_utf8_sanitize failed");
	ref_text(&want, text, len, false);
	FUZZ_CHECK(got.len == want.len && !memcmp(got.p, want.p, got.len), "sanitize");
	FUZZ_CHECK(fz_valid_utf8(got.p, got.len), "sanitize: not valid UTF-8");
	FUZZ_CHECK(fz_valid_utf8(text, len) == (got.len == len + sizeof(prefix) - 1),
		   "sanitize changed valid text or kept invalid text");
	lp_buf_put(clean, got.p + sizeof(prefix) - 1, got.len - (sizeof(prefix) - 1));
	lp_buf_free(&got);
	lp_buf_free(&want);

	FUZZ_CHECK(lp_text_display(&got, text, len) == 0, "lp_text_display failed");
	ref_text(&want, text, len, true);
	FUZZ_CHECK(got.len == want.len && !memcmp(got.p, want.p, got.len), "display");
	FUZZ_CHECK(fz_valid_utf8(got.p, got.len), "display: not valid UTF-8");
	for (size_t i = 0; i < got.len; i++) {
		unsigned char c = (unsigned char)got.p[i];

		FUZZ_CHECK(c >= 0x20 && c != 0x7f, "display: control byte %#x", c);
		FUZZ_CHECK(!(c == 0xc2 && i + 1 < got.len && (unsigned char)got.p[i + 1] < 0xa0),
			   "display: C1 control");
	}
	for (size_t i = 0, n; i < got.len; i += n) {
		n = fz_utf8_seq((const unsigned char *)got.p + i, got.len - i);
		FUZZ_CHECK(n > 0, "display: invalid UTF-8 at %zu", i);
		FUZZ_CHECK(!ref_invisible(ref_code_point((const unsigned char *)got.p + i, n)),
			   "display: an invisible or bidi character at %zu", i);
	}
	lp_buf_free(&got);
	lp_buf_free(&want);
}

/* What text.h promises lp_fit_columns writes, given room. */
static void ref_fit(struct lp_buf *b, const char *s, size_t len, size_t width, bool pad)
{
	size_t cps = fz_codepoints(s, len);

	if (cps <= width) {
		lp_buf_put(b, s, len);
	} else if (width > 0) {
		lp_buf_put(b, s, fz_cp_offset(s, len, width - 1));
		lp_buf_put(b, "\xe2\x80\xa6", 3);
		cps = width;
	} else {
		cps = 0;
	}
	while (pad && cps++ < width)
		lp_buf_putc(b, ' ');
	lp_buf_put(b, "", 0);
}

static void check_fit(const char *text, size_t len, const char *clean, size_t clen,
		      size_t width, bool pad, size_t outsz)
{
	char *out = malloc(outsz ? outsz : 1); /* exactly outsz: ASan sees overflows */
	struct lp_buf want = { 0 };
	size_t n;

	FUZZ_CHECK(out, "out of memory");
	/* Raw bytes break the precondition: only memory safety is asked. */
	n = lp_fit_columns(text, len, width, pad, out, outsz);
	FUZZ_CHECK(outsz ? n < outsz && out[n] == '\0' : n == 0, "raw: %zu of %zu", n, outsz);

	n = lp_fit_columns(clean, clen, width, pad, out, outsz);
	if (outsz == 0) {
		FUZZ_CHECK(n == 0, "wrote %zu into 0 bytes", n);
		free(out);
		return;
	}
	FUZZ_CHECK(n < outsz && out[n] == '\0', "%zu bytes into %zu", n, outsz);
	FUZZ_CHECK(fz_valid_utf8(out, n), "not valid UTF-8");
	FUZZ_CHECK(fz_codepoints(out, n) <= width, "%zu code points, width %zu",
		   fz_codepoints(out, n), width);
	ref_fit(&want, clean, clen, width, pad);
	if (want.len < outsz)
		FUZZ_CHECK(n == want.len && !memcmp(out, want.p, n),
			   "width %zu pad %d outsz %zu: got \"%s\", want \"%s\"", width, pad, outsz,
			   out, want.p);
	lp_buf_free(&want);
	free(out);
}

static void check_json_string(const char *text, size_t len, const char *clean, size_t clen)
{
	char *js = NULL;
	size_t jlen = 0;
	FILE *m = open_memstream(&js, &jlen);
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	FUZZ_CHECK(m && tok, "out of memory");
	jw_write_string(m, text, len);
	fclose(m);
	FUZZ_CHECK(fz_valid_utf8(js, jlen), "JSON string is not valid UTF-8");
	for (size_t i = 0; i < jlen; i++)
		FUZZ_CHECK((unsigned char)js[i] >= 0x20 && js[i] != 0x7f,
			   "raw control byte in a JSON string");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, js, (int)jlen);
	FUZZ_CHECK(o && json_object_is_type(o, json_type_string) &&
			   json_tokener_get_parse_end(tok) == jlen,
		   "not a JSON string: %s", js);
	FUZZ_CHECK((size_t)json_object_get_string_len(o) == clen &&
			   !memcmp(json_object_get_string(o), clean, clen),
		   "JSON string differs from the sanitized text");
	json_object_put(o);
	json_tokener_free(tok);
	free(js);
}

static void check_duration(uint64_t ns)
{
	char out[32], unit[8];
	double v;
	int k = 0;

	lp_fmt_duration(ns, out, sizeof(out));
	FUZZ_CHECK(sscanf(out, "%lf %7s%n", &v, unit, &k) == 2 && (size_t)k == strlen(out),
		   "\"%s\"", out);
	FUZZ_CHECK(!strcmp(unit, "ns") || !strcmp(unit, "us") || !strcmp(unit, "ms") ||
			   !strcmp(unit, "s"),
		   "unit of \"%s\"", out);
	FUZZ_CHECK(!strcmp(unit, "s") || v < 1000.0, "\"%s\" for %llu ns", out,
		   (unsigned long long)ns);
	FUZZ_CHECK(strchr(out, '.') && strlen(strchr(out, '.')) == 4 + strlen(unit),
		   "two decimals: \"%s\"", out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[HDR] = { 0 };
	const char *text;
	size_t len;
	uint64_t ns = 0;
	struct lp_buf clean = { 0 };

	memcpy(hdr, data, size < HDR ? size : HDR);
	text = size > HDR ? (const char *)data + HDR : "";
	len = size > HDR ? size - HDR : 0;
	for (int i = 7; i >= 0; i--)
		ns = (ns << 8) | hdr[4 + i];

	check_meta(text, len, hdr[0] % (MAX_ITEMS - 1));
	check_meta(text, len, LP_META_MAX_ITEMS);
	check_keys(text, len, hdr[0] % (MAX_ITEMS - 1), hdr[2] & 2);
	check_keys(text, len, LP_META_MAX_ITEMS, !(hdr[2] & 2));
	check_text(text, len, &clean);
	check_fit(text, len, clean.p ? clean.p : "", clean.len, hdr[1] % 100, hdr[2] & 1, hdr[3]);
	check_fit(text, len, clean.p ? clean.p : "", clean.len, 40, true, 40 * 4 + 8);
	check_json_string(text, len, clean.p ? clean.p : "", clean.len);
	check_duration(ns);
	lp_buf_free(&clean);
	return 0;
}
