#!/usr/bin/env node
"use strict"
// Loads the bundled command with V8's code cache (see build.mjs).
const fs = require("node:fs")
const path = require("node:path")
const vm = require("node:vm")
const Module = require("node:module")

// a package directory installed before it was built holds no bundles: say so, rather than fail on a missing module
if (!fs.existsSync(path.join(__dirname, "..", "dist", "spillway.cjs"))) {
  process.stderr.write("spillway: this copy of @spillway/cli was never built: in the clone it came from, run `npx --yes pnpm@10.34.8 install && npx --yes pnpm@10.34.8 build`, then install it again\n")
  process.exitCode = 1
  return
}

// `read` and `run` have small programs of their own for their common forms (see src/fastRead.ts and
// src/quickRun.ts); SPILLWAY_QUICK=0 sends every one to the whole command
const quick = process.env.SPILLWAY_QUICK !== "0"

if (quick && process.argv[2] === "read" && require("../dist/read.cjs").tryFastRead(process.argv.slice(2), process.env)) return
// `grep` for a pattern with a literal has one too (see src/fastGrep.ts)
if (quick && process.argv[2] === "grep" && require("../dist/grep.cjs").tryFastGrep(process.argv.slice(2), process.env)) return

// `mcp`, `host`, `hook` and `serve` are programs of their own, so the rest of the command never loads what they need
// (their help, asked for before any --, is answered by the command, which holds every help page)
const flags = process.argv.indexOf("--") === -1 ? process.argv : process.argv.slice(0, process.argv.indexOf("--"))
const help = flags.includes("--help") || flags.includes("-h")
const own = !help && ["mcp", "host", "hook", "serve"].includes(process.argv[2])
if (own) {
  // the MCP server starts with its code cache too: it compiles less, and holds less memory for the rest of its life
  // (which every command it spawns pays for, as the kernel copies the server's memory map at each fork)
  if (process.argv[2] === "mcp") load("mcp")
  else require(`../dist/${process.argv[2]}.cjs`)
  return
}

/** Loads dist/<name>.cjs with its code cache (written by the build with SPILLWAY_WRITE_CODE_CACHE=1) and returns its exports. */
function load(name) {
  // A command's young generation stays at V8's first size (1 MiB a half): V8 would double it up to 16 MiB a half
  // while the command loads and under a flood of output, which its short-lived objects never need. Set before the
  // bundle compiles: V8 takes a code cache only under the flags it was made with, and the build makes it under
  // this one. The servers keep V8's default.
  if (name === "run" || name === "spillway") require("node:v8").setFlagsFromString("--semi-space-growth-factor=1")
  const filename = path.join(__dirname, "..", "dist", `${name}.cjs`)
  const cacheFile = path.join(__dirname, "..", "dist", `${name}.cache`)
  let cachedData
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(filename, "utf8")), { filename, cachedData })
  // V8 has taken what it needs from the cache: do not keep its megabytes alive for as long as the command runs
  cachedData = undefined
  if (process.env.SPILLWAY_WRITE_CODE_CACHE === "1") {
    process.once("exit", () => fs.writeFileSync(cacheFile, script.createCachedData()))
  }
  const mod = { exports: {} }
  script.runInThisContext()(mod.exports, Module.createRequire(filename), mod, filename, path.dirname(filename))
  return mod.exports
}

// the run program takes only a command after -- or a line after -c: anything else is not loaded twice
const runForm = process.argv[2] === "run" && !help && (process.argv.includes("--") || process.argv.includes("-c"))
if (quick && runForm) {
  const args = process.argv.slice(2)
  // the short run starts the command before Effect is loaded, and finishes it when its output is short; a long one
  // goes on in the run program (see src/shortRun.ts)
  const handOff = (started) => {
    if (!load("run").continueRun(args, started)) load("spillway")
  }
  const taken = require("../dist/short.cjs").tryShortRun(args, process.env, handOff)
  if (taken === "started") return
  if (taken === "run" && load("run").tryQuickRun(args)) return
}

load("spillway")
