/* leanprofiler report --html: draws the page from the JSON in #lp-data (inlined by user/pictures/html.c).
 * Every text from the recording goes into the page with textContent, never as markup; metadata
 * comes as [key, value] pairs and stays in arrays. When drawn, <html data-lp-ready="1"> (or
 * "error", with data-lp-error) tells a test, and a person's browser, that the page is whole. */
(function () {
	'use strict';
	const doc = document;
	const root = doc.documentElement;
	const SVGNS = 'http://www.w3.org/2000/svg';

	function fail(e) {
		root.dataset.lpReady = 'error';
		root.dataset.lpError = String((e && e.message) || e);
	}
	window.addEventListener('error', (ev) => fail(ev.error || ev.message));

	/* ---- helpers ---- */

	function h(tag, cls, text) {
		const e = doc.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}

	/* An SVG element; attribute names are always this script's own. */
	function s(tag, attrs) {
		const e = doc.createElementNS(SVGNS, tag);
		for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
		return e;
	}

	function stext(x, y, str, attrs) {
		const t = s('text', Object.assign({ x: x, y: y }, attrs || {}));
		t.textContent = str;
		return t;
	}

	/* As the table prints durations (lp_fmt_duration). */
	function fmtDur(ns) {
		if (ns === 0) return '0';
		const u = [[1, 1e3, 'ns'], [1e3, 999995, 'us'], [1e6, 999995000, 'ms'], [1e9, Infinity, 's']];
		let i = 0;
		while (i < 3 && ns >= u[i][1]) i++;
		return (ns / u[i][0]).toFixed(2) + ' ' + u[i][2];
	}

	function niceStep(range, maxTicks) {
		const raw = range / Math.max(1, maxTicks);
		const mag = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
		for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
		return 10 * mag;
	}

	function fmtTick(ns, step) {
		const u = [[1, 'ns'], [1e3, 'us'], [1e6, 'ms'], [1e9, 's']];
		let i = 0;
		while (i < 3 && step >= u[i + 1][0]) i++;
		let dec = 0;
		for (let v = step / u[i][0]; v < 0.999 && dec < 3; v *= 10) dec++;
		return (ns / u[i][0]).toFixed(dec) + ' ' + u[i][1];
	}

	function label(name, pairs) {
		if (!pairs.length) return name;
		return name + ' [' + pairs.map((p) => (p[1] === '' ? p[0] : p[0] + '=' + p[1])).join(', ') + ']';
	}

	function fit(str, px, charW) {
		const n = Math.floor(px / (charW || 6.6));
		if (n <= 1) return '';
		const chars = Array.from(str);
		return chars.length <= n ? str : chars.slice(0, n - 1).join('') + '\u2026';
	}

	const plural = (n, word) => n + ' ' + word + (n === 1 ? '' : 's');

	/* The name with its metadata when both fit in px, else the name alone, cut. */
	function fitLabel(g, px) {
		const full = groupLabel(g);
		if (g < 0) return fit(full, px);
		return Array.from(full).length <= Math.floor(px / 6.6) ? full : fit(groups[g][0], px);
	}

	function clear(e) {
		while (e.firstChild) e.removeChild(e.firstChild);
	}

	/* One tooltip for the page: lines of text, near the pointer. */
	const tip = h('div', 'lp-tip');
	tip.hidden = true;
	tip.id = 'lp-tip';
	function showTip(ev, lines) {
		tip.textContent = lines.join('\n');
		tip.hidden = false;
		const w = tip.offsetWidth, ht = tip.offsetHeight;
		tip.style.left = Math.max(4, Math.min(ev.clientX + 14, window.innerWidth - w - 8)) + 'px';
		tip.style.top = Math.max(4, Math.min(ev.clientY + 14, window.innerHeight - ht - 8)) + 'px';
	}
	function hideTip() {
		tip.hidden = true;
	}

	/* Redraws at the next frame, once however many events ask. */
	function scheduler(fn) {
		let queued = false;
		return () => {
			if (queued) return;
			queued = true;
			requestAnimationFrame(() => {
				queued = false;
				fn();
			});
		};
	}

	/* ---- the data ---- */

	const data = JSON.parse(doc.getElementById('lp-data').textContent);
	const groups = data.groups; /* [name, [[key, value]...], colour, has counter] */
	const palette = data.palette;
	const MIXED = '#cfcfcf';
	const groupLabel = (g) => (g < 0 ? 'several names' : label(groups[g][0], groups[g][1]));
	const groupColor = (g) => (g < 0 ? MIXED : palette[groups[g][2]]);

	/* ---- the header ---- */

	function header(body) {
		const hd = h('header');
		hd.append(h('h1', null, 'leanprofiler report'));
		const facts = h('ul', 'lp-facts');
		for (const f of data.facts) facts.append(h('li', null, f));
		hd.append(facts);
		const warns = h('ul', 'lp-warnings');
		warns.id = 'lp-warnings';
		for (const w of data.warnings) warns.append(h('li', null, w));
		hd.append(warns);
		body.append(hd);
	}

	/* ---- the rows table ---- */

	function rowsTable(body) {
		/*
		 * [name, meta_text, pairs, calls, self, total, mean, p95, p95_exact, self_counter, %, colour,
		 *  and with --off-cpu: cpu, runq, blocked, steal]
		 */
		const cols = [
			{ t: 'Name', k: 0 },
			{ t: 'Metadata', k: 1 },
			{ t: 'Self', k: 4, dur: true },
			{ t: 'Total', k: 5, dur: true },
			{ t: 'Calls', k: 3, num: true },
			{ t: 'Mean', k: 6, dur: true },
			{ t: 'P95', k: 7, dur: true },
			{ t: data.counter_column, k: 9, num: true },
			{ t: '%', k: 10, num: true },
		].filter((c) => c.t !== null); /* no marker passed a counter: as the table, no column */
		if (data.off_cpu) {
			cols.push({ t: 'CPU %', k: 12, share: true });
			/* As the table: a Steal column only when the hypervisor took time from a row. */
			if (data.rows.some((r) => r[15] > 0))
				cols.push({ t: 'Steal', k: 15, dur: true });
			cols.push({ t: 'Runq', k: 13, dur: true }, { t: 'Blocked', k: 14, dur: true });
		}
		const sec = h('section');
		sec.id = 'lp-rows-section';
		sec.append(h('h2', null, 'Rows'));
		sec.append(h('p', 'lp-note', data.rows_total > data.rows.length
			? 'The first ' + data.rows.length + ' of ' + data.rows_total + ' rows by self time. Click a header to sort.'
			: plural(data.rows.length, 'row') + ': spans grouped by name and metadata. Click a header to sort.'));
		const wrap = h('div', 'lp-table-wrap');
		const table = h('table', 'lp-rows');
		table.id = 'lp-rows';
		const tr = h('tr');
		const tbody = h('tbody');
		let sortCol = 2, desc = true;

		function cell(r, c) {
			const v = r[c.k];
			if (c.share) return r[5] ? (100 * v / r[5]).toFixed(1) + '%' : '-';
			if (c.dur) return fmtDur(v) + (c.k === 7 && !r[8] ? ' ~' : '');
			if (c.k === 10) return v.toFixed(1) + '%';
			if (v === null) return '-';
			return String(v);
		}
		function fill() {
			const c = cols[sortCol];
			const rows = data.rows.slice();
			rows.sort((a, b) => {
				const x = c.share ? (a[5] ? a[c.k] / a[5] : 0) : a[c.k];
				const y = c.share ? (b[5] ? b[c.k] / b[5] : 0) : b[c.k];
				if (x === y) return 0;
				if (x === null) return 1;
				if (y === null) return -1;
				const r = typeof x === 'string' ? x.localeCompare(y) : x - y;
				return desc ? -r : r;
			});
			clear(tbody);
			for (const r of rows) {
				const row = h('tr');
				cols.forEach((c, i) => {
					const td = h('td');
					if (i === 0) {
						const sw = h('span', 'lp-swatch');
						sw.style.background = palette[r[11]];
						td.append(sw);
					}
					td.append(doc.createTextNode(cell(r, c)));
					row.append(td);
				});
				tbody.append(row);
			}
			Array.from(tr.children).forEach((th, i) =>
				th.setAttribute('aria-sort', i === sortCol ? (desc ? 'descending' : 'ascending') : 'none'));
			table.dataset.sort = c.t + ':' + (desc ? 'desc' : 'asc');
		}
		cols.forEach((c, i) => {
			const th = h('th');
			const b = h('button', null, c.t);
			b.type = 'button';
			b.addEventListener('click', () => {
				if (sortCol === i) desc = !desc;
				else {
					sortCol = i;
					desc = c.k >= 3; /* numbers: largest first; text: A to Z */
				}
				fill();
			});
			th.append(b);
			tr.append(th);
		});
		const thead = h('thead');
		thead.append(tr);
		table.append(thead, tbody);
		fill();
		wrap.append(table);
		sec.append(wrap);
		body.append(sec);
	}

	/* ---- the timeline ---- */

	function decodeLevel(lv) {
		const n = lv.s.length;
		const start = new Float64Array(n);
		let t = 0;
		for (let i = 0; i < n; i++) start[i] = t += lv.s[i];
		const zero = (a) => a || new Array(n).fill(0);
		return { n: n, s: start, d: lv.d, z: lv.z, g: lv.g, c: lv.n, b: zero(lv.b), k: zero(lv.c), f: zero(lv.f) };
	}

	function timeline(body) {
		const tl = data.timeline;
		const sec = h('section');
		sec.id = 'lp-timeline-section';
		sec.append(h('h2', null, 'Timeline'));
		body.append(sec);
		if (!tl) {
			sec.append(h('p', 'lp-note', 'This recording has no trace (--summary-only): no timeline.'));
			return null;
		}
		const LW = 190, ROW = 18, GAP = 8, AXIS = 24, MINW = 50;
		const threads = tl.threads.map((t) => ({
			pid: t.pid, tid: t.tid, name: t.name, depth: t.depth, spans: t.spans,
			levels: t.levels.map(decodeLevel),
		}));
		threads.sort((a, b) => a.pid - b.pid || a.tid - b.tid);
		let y = AXIS;
		for (const t of threads) {
			t.y = y;
			y += t.depth * ROW + GAP;
		}
		const height = y;
		const pad = Math.max(1, (tl.last - tl.first) * 0.01);
		const home = [Math.max(0, tl.first - pad), tl.last + pad];
		let v0 = home[0], v1 = home[1];

		sec.append(h('p', 'lp-note', plural(tl.spans, 'span') + ' on ' + plural(threads.length, 'thread') +
			'. Wheel: zoom (shift+wheel: scroll); drag: pan; hover: what a span is. Spans narrower than a pixel are drawn merged.'));
		const bar = h('div', 'lp-toolbar');
		const reset = h('button', null, 'Reset zoom');
		reset.type = 'button';
		const info = h('span');
		bar.append(reset, info);
		sec.append(bar);
		const wrap = h('div', 'lp-tl-wrap');
		wrap.id = 'lp-timeline';
		const svg = s('svg', { height: height });
		wrap.append(svg);
		sec.append(wrap);
		let drawn = [];

		function level(pxNs) {
			for (let l = 0; l < tl.px.length; l++) if (tl.px[l] <= pxNs) return l;
			return tl.px.length - 1;
		}

		function render() {
			const W = Math.max(400, wrap.clientWidth || 1000);
			const plotW = W - LW - 12;
			const scale = plotW / (v1 - v0);
			const lvl = level((v1 - v0) / plotW);
			const top = wrap.scrollTop - ROW, bottom = wrap.scrollTop + (wrap.clientHeight || height) + ROW;
			svg.setAttribute('width', W);
			svg.setAttribute('viewBox', '0 0 ' + W + ' ' + height);
			clear(svg);
			drawn = [];
			const grid = s('g', { class: 'lp-axis', 'font-size': 11, fill: '#555' });
			const step = niceStep(v1 - v0, Math.floor(plotW / 110));
			for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
				const x = LW + (t - v0) * scale;
				grid.append(s('line', { x1: x, x2: x, y1: AXIS - 6, y2: height, stroke: '#e8e8e8' }));
				grid.append(stext(x, AXIS - 10, fmtTick(t, step), { 'text-anchor': 'middle' }));
			}
			svg.append(grid);
			const items = s('g');
			svg.append(items);
			threads.forEach((t) => {
				if (t.y + t.depth * ROW < top || t.y > bottom) return;
				items.append(s('rect', { x: 0, y: t.y, width: W, height: t.depth * ROW, fill: '#f6f6f6' }));
				const name = (t.name || 'thread') + (t.pid === t.tid ? ' (' + t.tid + ')' : ' (' + t.pid + '/' + t.tid + ')');
				items.append(stext(8, t.y + 13, fit(name, LW - 12), { 'font-size': 12, fill: '#222' }));
				drawThread(t, t.levels[Math.min(lvl, t.levels.length - 1)], items, scale, LW, plotW, ROW);
			});
			info.textContent = fmtDur(v0) + ' \u2013 ' + fmtDur(v1) + ' from the recording\'s start; zoom level ' +
				(lvl + 1) + ' of ' + tl.px.length;
			wrap.dataset.view = v0 + ',' + v1;
			wrap.dataset.level = lvl;
			wrap.dataset.rects = drawn.length;
		}

		/* Items narrower than a pixel that touch are drawn as one rectangle. */
		function drawThread(t, L, parent, scale, LW, plotW, ROW) {
			const pend = [];
			const flush = (p) => {
				if (!p) return;
				const w = Math.max(0.6, p.x1 - p.x0);
				const k = drawn.length;
				drawn.push(p);
				const r = s('rect', {
					x: p.x0.toFixed(2), y: t.y + p.z * ROW + 1, width: w.toFixed(2), height: ROW - 2,
					fill: groupColor(p.g), class: 'lp-hit', 'data-k': k,
				});
				if (w >= 3) r.setAttribute('stroke', '#fff');
				parent.append(r);
				if (w >= 40 && p.g >= 0) {
					const str = fitLabel(p.g, w - 6);
					if (str) parent.append(stext((p.x0 + 3).toFixed(2), t.y + p.z * ROW + 13, str, { 'font-size': 11, fill: '#1a1a1a' }));
				}
			};
			for (let i = 0; i < L.n; i++) {
				const st = L.s[i], en = st + L.d[i];
				if (en < v0 || st > v1) continue;
				const x0 = Math.max(LW - 1, LW + (st - v0) * scale), x1 = Math.min(LW + plotW + 1, LW + (en - v0) * scale);
				const z = L.z[i], narrow = x1 - x0 < 1;
				const p = pend[z];
				if (p && narrow && p.narrow && x0 - p.x1 < 1) {
					p.x1 = Math.max(p.x1, x1);
					p.end = Math.max(p.end, en);
					p.count += L.c[i];
					p.busy += L.c[i] > 1 ? L.b[i] : L.d[i];
					p.counter += L.k[i];
					p.flags |= L.f[i];
					if (p.g !== L.g[i]) p.g = -1;
					continue;
				}
				flush(p);
				pend[z] = {
					x0: x0, x1: x1, z: z, narrow: narrow, start: st, end: en, g: L.g[i], count: L.c[i],
					busy: L.c[i] > 1 ? L.b[i] : L.d[i], counter: L.k[i], flags: L.f[i], thread: t,
				};
			}
			pend.forEach(flush);
		}

		function tipLines(p) {
			const lines = [];
			const flags = (f) => {
				if (f & 1) lines.push('unterminated: closed without its exit');
				if (f & 2) lines.push('uncertain: its thread lost events meanwhile');
				if (f & 4) lines.push('started before the recording');
			};
			if (p.count === 1 && p.g >= 0) {
				lines.push(groups[p.g][0]);
				for (const [k, v] of groups[p.g][1]) lines.push('  ' + k + ': ' + v);
				lines.push('duration ' + fmtDur(p.end - p.start) + ', starts at ' + fmtDur(p.start));
				if (data.counter !== null && groups[p.g][3]) lines.push(data.counter + ': ' + p.counter);
			} else {
				lines.push(p.count + ' spans, merged: ' + groupLabel(p.g));
				lines.push('busy ' + fmtDur(p.busy) + ' within ' + fmtDur(p.end - p.start) + ', from ' + fmtDur(p.start));
				if (data.counter !== null && p.counter) lines.push(data.counter + ': ' + p.counter);
			}
			flags(p.flags);
			const t = p.thread;
			lines.push('thread ' + (t.name || '') + ' (' + t.pid + '/' + t.tid + ')');
			return lines;
		}

		const redraw = scheduler(render);
		wrap.addEventListener('scroll', redraw);
		svg.addEventListener('wheel', (ev) => {
			if (ev.shiftKey) return; /* the lanes scroll */
			ev.preventDefault();
			const rect = svg.getBoundingClientRect();
			const plotW = rect.width - LW - 12;
			const frac = Math.min(1, Math.max(0, (ev.clientX - rect.left - LW) / plotW));
			const at = v0 + frac * (v1 - v0);
			const limit = Math.max(tl.extent, tl.last) * 1.05;
			const w = Math.min(limit, Math.max(MINW, (v1 - v0) * Math.exp(ev.deltaY * 0.0015)));
			v0 = Math.max(0, at - frac * w);
			v1 = v0 + w;
			hideTip();
			redraw();
		}, { passive: false });
		let drag = null;
		svg.addEventListener('pointerdown', (ev) => {
			drag = { x: ev.clientX, v0: v0, v1: v1 };
			wrap.classList.add('lp-dragging');
			svg.setPointerCapture(ev.pointerId);
		});
		svg.addEventListener('pointermove', (ev) => {
			if (drag) {
				const plotW = svg.getBoundingClientRect().width - LW - 12;
				const dt = ((ev.clientX - drag.x) / plotW) * (drag.v1 - drag.v0);
				v0 = Math.max(0, drag.v0 - dt);
				v1 = v0 + (drag.v1 - drag.v0);
				hideTip();
				redraw();
				return;
			}
			const k = ev.target.dataset ? ev.target.dataset.k : undefined;
			if (k === undefined) hideTip();
			else showTip(ev, tipLines(drawn[+k]));
		});
		const end = () => {
			drag = null;
			wrap.classList.remove('lp-dragging');
		};
		svg.addEventListener('pointerup', end);
		svg.addEventListener('pointercancel', end);
		svg.addEventListener('pointerleave', hideTip);
		reset.addEventListener('click', () => {
			v0 = home[0];
			v1 = home[1];
			redraw();
		});
		render();
		return render;
	}

	/* ---- inclusive against self time ---- */

	function bars(body) {
		const rows = data.rows.slice(0, data.bars_max);
		const sec = h('section');
		sec.id = 'lp-bars-section';
		sec.append(h('h2', null, 'Inclusive and self time'));
		sec.append(h('p', 'lp-note', 'Per row' + (data.rows.length > rows.length ? ' (the first ' + rows.length + ' by self time)' : '') +
			': total (inclusive: the spans with everything they called, light) and self (less the spans they called, dark).'));
		const fig = h('div', 'lp-fig');
		fig.id = 'lp-bars';
		sec.append(fig);
		body.append(sec);
		const LW = 330, RH = 32, TOP = 24;
		const max = Math.max(1, ...rows.map((r) => r[5]));
		function render() {
			const W = Math.max(500, fig.clientWidth || 1000);
			const plotW = W - LW - 150;
			const scale = plotW / max;
			const svg = s('svg', { width: W, height: TOP + rows.length * RH + 8 });
			const step = niceStep(max, Math.floor(plotW / 110));
			for (let t = 0; t <= max; t += step) {
				const x = LW + t * scale;
				svg.append(s('line', { x1: x, x2: x, y1: TOP - 6, y2: TOP + rows.length * RH, stroke: '#e8e8e8' }));
				svg.append(stext(x, TOP - 10, fmtTick(t, step), { 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }));
			}
			rows.forEach((r, i) => {
				const y = TOP + i * RH, c = palette[r[11]];
				const g = s('g', { class: 'lp-hit' });
				const lines = [label(r[0], r[2]), 'total ' + fmtDur(r[5]) + ', self ' + fmtDur(r[4]) + ', ' + r[3] + ' calls'];
				g.addEventListener('pointermove', (ev) => showTip(ev, lines));
				g.addEventListener('pointerleave', hideTip);
				g.append(s('rect', { x: 0, y: y, width: W, height: RH, fill: i % 2 ? '#fff' : '#fafafa' }));
				g.append(stext(8, y + 20, fit(r[1] ? r[0] + ' [' + r[1] + ']' : r[0], LW - 16), { 'font-size': 12, fill: '#222' }));
				g.append(s('rect', { x: LW, y: y + 3, width: Math.max(0.6, r[5] * scale), height: 12, fill: c, 'fill-opacity': 0.4, stroke: c }));
				g.append(s('rect', { x: LW, y: y + 17, width: Math.max(0.6, r[4] * scale), height: 12, fill: c, stroke: '#555', 'stroke-width': 0.5 }));
				g.append(stext(LW + r[5] * scale + 5, y + 13, 'total ' + fmtDur(r[5]), { 'font-size': 11, fill: '#333' }));
				g.append(stext(LW + r[4] * scale + 5, y + 27, 'self ' + fmtDur(r[4]), { 'font-size': 11, fill: '#333' }));
				svg.append(g);
			});
			clear(fig);
			fig.append(svg);
		}
		render();
		return render;
	}

	/* ---- the flame graph ---- */

	function flame(body) {
		const fl = data.flame;
		const sec = h('section');
		sec.id = 'lp-flame-section';
		sec.append(h('h2', null, 'Flame graph'));
		body.append(sec);
		if (!fl || fl.p.length < 2) {
			sec.append(h('p', 'lp-note', data.timeline ? 'No call tree: the trace has no spans.'
				: 'No call tree: the recording has no trace, and its summary no paths.'));
			return null;
		}
		const n = fl.p.length, ROW = 18;
		const depth = new Int32Array(n), x = new Float64Array(n), used = new Float64Array(n);
		let maxDepth = 0;
		for (let i = 1; i < n; i++) {
			const p = fl.p[i];
			depth[i] = depth[p] + 1;
			x[i] = x[p] + used[p];
			used[p] += fl.t[i];
			if (depth[i] > maxDepth) maxDepth = depth[i];
		}
		const all = fl.t[0] || 1;
		sec.append(h('p', 'lp-note', 'The call tree of ' + (fl.source === 'summary' ? 'the summary\'s paths' : 'the trace\'s nesting') +
			', all threads together, callers above callees; width is total time. Click a frame to zoom into it, the top one to zoom out.' +
			(fl.nodes > n ? ' The ' + n + ' widest of ' + fl.nodes + ' paths.' : '')));
		const fig = h('div', 'lp-fig');
		fig.id = 'lp-flame';
		sec.append(fig);
		let focus = 0;
		function name(i) {
			return i === 0 ? 'all threads' : groupLabel(fl.g[i]);
		}
		function render() {
			const W = Math.max(400, fig.clientWidth || 1000);
			const chain = new Set();
			for (let i = focus; i > 0; i = fl.p[i]) chain.add(i);
			chain.add(0);
			const x0 = x[focus], scale = W / (fl.t[focus] || 1);
			const svg = s('svg', { width: W, height: (maxDepth + 1) * ROW + 2 });
			let count = 0;
			for (let i = 0; i < n; i++) {
				let left, w;
				if (chain.has(i)) {
					left = 0;
					w = W;
				} else {
					if (depth[i] <= depth[focus]) continue;
					left = (x[i] - x0) * scale;
					w = fl.t[i] * scale;
					if (w < 0.5 || left >= W || left + w <= 0) continue;
				}
				const g = s('g', { class: 'lp-hit' });
				g.append(s('rect', {
					x: left.toFixed(2), y: depth[i] * ROW, width: Math.max(0.5, w - 0.5).toFixed(2), height: ROW - 1,
					fill: i === 0 ? '#e0e0e0' : groupColor(fl.g[i]),
				}));
				if (w >= 40) g.append(stext((left + 3).toFixed(2), depth[i] * ROW + 13, i ? fitLabel(fl.g[i], w - 6) : name(0), { 'font-size': 11, fill: '#1a1a1a' }));
				const lines = [name(i), 'total ' + fmtDur(fl.t[i]) + ' (' + ((100 * fl.t[i]) / all).toFixed(1) + '% of all)',
					'self ' + fmtDur(fl.s[i]) + ', ' + fl.c[i] + ' calls'];
				g.addEventListener('pointermove', (ev) => showTip(ev, lines));
				g.addEventListener('pointerleave', hideTip);
				g.addEventListener('click', () => {
					focus = i === focus ? fl.p[i] : i;
					if (focus < 0) focus = 0;
					render();
				});
				svg.append(g);
				count++;
			}
			clear(fig);
			fig.append(svg);
			fig.dataset.frames = count;
			fig.dataset.focus = focus;
		}
		render();
		return render;
	}

	/* ---- the page ---- */

	try {
		const body = doc.body;
		document.title = 'leanprofiler report';
		header(body);
		rowsTable(body);
		const redraws = [timeline(body), bars(body), flame(body)].filter(Boolean);
		body.append(tip);
		/* The first drawing had no final width before the page was laid out: once more now. */
		redraws.forEach((f) => f());
		window.addEventListener('resize', scheduler(() => redraws.forEach((f) => f())));
		root.dataset.lpReady = '1';
	} catch (e) {
		fail(e);
		console.error(e);
	}
})();
