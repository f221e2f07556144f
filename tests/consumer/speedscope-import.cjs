// Run speedscope's real profile importer (from its release bundle) on one file, in Node.
// Called by tests/consumer/check-trace; usage: node speedscope-import.cjs BUNDLE FILE
//
// Why this works: the bundle is one esbuild IIFE. It defines
//   async function NAME(t,e){return(await MOD).importProfilesFromArrayBuffer(t,e)}
// (the app's entry point for #profileURL=; the speedscope CLI's path differs only by a
// base64 step) and, at its very end, renders the UI. We insert
// `globalThis.<hook>=NAME;return;` right after that definition, so the script stops before
// touching the DOM, and call the importer with the file's bytes. Up to that point the
// bundle only needs window.location, localStorage and matchMedia.
// Checked once against the same bundle in headless Chromium: identical console warnings
// for every case in selftest.sh.
//
// Exit: 0 imported as Trace Event Format with >=1 profile and no console warning/error;
//       1 anything else about the file; 2 the bundle is not the one this was written for.
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const util = require('node:util')
const vm = require('node:vm')

const [bundlePath, tracePath] = process.argv.slice(2)
const MAX_SHOWN = 20 // warnings printed; the rest are only counted

function die(code, msg) {
  process.stderr.write(`check-trace: ${msg}\n`)
  process.exit(code)
}

// --- load the bundle, stopping before the UI --------------------------------------------
const src = fs.readFileSync(bundlePath, 'utf8')
const anchor = /async function ([\w$]+)\(t,e\)\{return\(await [\w$]+\)\.importProfilesFromArrayBuffer\(t,e\)\}/g
const hits = [...src.matchAll(anchor)]
// The inserted `return` is only legal inside the IIFE the bundle starts with.
if (hits.length !== 1 || !src.startsWith('"use strict";(()=>{'))
  die(2, `${bundlePath}: importer entry point not found (${hits.length} matches); speedscope version changed?`)
const cut = hits[0].index + hits[0][0].length
const patched = `${src.slice(0, cut)};globalThis.__leanprofilerImport=${hits[0][1]};return;${src.slice(cut)}`

const problems = [] // console.warn/error/assert/trace output and exceptions
const logs = [] // console.log/info/debug output (e.g. "Importing as ...")
const fmt = args => args.map(a => (typeof a === 'string' ? a : util.inspect(a, { depth: 3 }))).join(' ')
const con = {}
for (const k of ['log', 'info', 'debug', 'dir', 'table', 'time', 'timeEnd', 'group', 'groupEnd'])
  con[k] = (...a) => logs.push(fmt(a))
for (const k of ['warn', 'error', 'trace']) con[k] = (...a) => problems.push(`console.${k}: ${fmt(a)}`)
con.assert = (ok, ...a) => ok || problems.push(`console.assert: ${fmt(a)}`)

// Minimal browser globals the bundle reads at load time (all outside the importer).
const ctx = {
  console: con,
  TextDecoder,
  TextEncoder,
  URL,
  setTimeout,
  clearTimeout,
  location: { hash: '', protocol: 'file:', href: 'file:///speedscope/index.html' },
  localStorage: {},
  matchMedia: () => ({ matches: false, addListener() {}, addEventListener() {} }),
}
ctx.window = ctx.self = ctx
vm.createContext(ctx)
try {
  vm.runInContext(patched, ctx, { filename: path.basename(bundlePath), timeout: 20000 })
} catch (e) {
  die(2, `loading ${bundlePath} failed: ${e && e.message}`)
}
if (typeof ctx.__leanprofilerImport !== 'function') die(2, 'importer hook was not set')
// Load-time chatter ("speedscope vX" etc.) is not about the trace.
if (problems.length) die(2, `bundle warned while loading: ${problems.join('; ')}`)
logs.length = 0

process.on('unhandledRejection', e => problems.push(`unhandled rejection: ${e && e.stack ? e.stack : e}`))

// --- import ----------------------------------------------------------------------------
function summarize(p) {
  let frames = 0, calls = 0, depth = 0, maxDepth = 0
  p.forEachFrame(() => frames++)
  p.forEachCall(
    () => { calls++; maxDepth = Math.max(maxDepth, ++depth) },
    () => depth--,
  )
  const total = p.getTotalWeight()
  const samples = Array.isArray(p.samples) ? `, ${p.samples.length} samples` : ''
  return `  "${p.getName()}": ${frames} frames, ${calls} calls, max depth ${maxDepth}${samples}, ` +
    `total ${+total.toFixed(3)} ${p.getWeightUnit()} (${p.formatValue(total)})`
}

async function main() {
  // The file name matters to speedscope (e.g. *.chrome.json picks another importer),
  // so pass the real one, as a user opening the file would.
  const name = path.basename(tracePath)
  let group = null
  try {
    const buf = fs.readFileSync(tracePath)
    group = await ctx.__leanprofilerImport(name, buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length))
  } catch (e) {
    problems.push(`importer threw: ${e && e.stack ? e.stack : e}`)
  }
  await new Promise(r => setImmediate(r)) // let stray rejections surface

  const how = logs.find(l => l.startsWith('Importing as ')) || 'not recognised by any importer'
  if (how !== 'Importing as Trace Event Format profile') problems.push(`speedscope: ${how} (want Trace Event Format)`)
  const profiles = group && Array.isArray(group.profiles) ? group.profiles : []
  if (profiles.length === 0) problems.push('no profile was imported')

  console.log(`speedscope importer: ${tracePath}: ${how.replace(/^Importing as /, '')}, ${profiles.length} profile(s)`)
  for (const p of profiles) console.log(summarize(p))

  if (problems.length) {
    for (const w of problems.slice(0, MAX_SHOWN)) console.error(`check-trace: ${w}`)
    if (problems.length > MAX_SHOWN) console.error(`check-trace: ... and ${problems.length - MAX_SHOWN} more`)
    console.error(`check-trace: FAIL (${problems.length} problem(s))`)
    process.exit(1)
  }
  console.log('check-trace: OK (no warnings)')
  process.exit(0) // do not wait for any timer the bundle may have left
}
main().catch(e => die(1, `internal error: ${e && e.stack ? e.stack : e}`))
