/**
 * The fleet simulation, small: `node bench/fleet.mjs --quick` starts a
 * private PostgreSQL, three hosts and two controller processes, drives
 * conversations through them with faults injected (a host SIGKILLed and
 * restarted, PostgreSQL restarted, a controller replaced, a credential
 * revoked, a host cut off), checks every byte read against what each job
 * printed, and must end by itself with status 0 and its summary line last.
 * It runs where PostgreSQL's server programs are installed, which is where
 * `SPILLWAY_TEST_PG_URL` is set (scripts/postgres-for-tests.sh does both).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const pgUrl = process.env.SPILLWAY_TEST_PG_URL !== undefined && process.env.SPILLWAY_TEST_PG_URL !== ""

/** Runs the bench to its end (or kills it after `limitMs`); its status and everything it printed. */
const runFleet = (limitMs: number) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [Path.join(root, "bench", "fleet.mjs"), "--quick"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d: Buffer) => (output += d.toString()))
    child.stderr.on("data", (d: Buffer) => (output += d.toString()))
    // SIGINT: the bench stops everything it started before it exits
    const timer = setTimeout(() => child.kill("SIGINT"), limitMs)
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, output })
    })
  })

describe.skipIf(!pgUrl)("the fleet simulation (needs PostgreSQL's server programs, present where SPILLWAY_TEST_PG_URL is set)", () => {
  it("ends by itself with nothing lost or duplicated and every fault survived, the summary line last", async () => {
    const { code, signal, output } = await runFleet(200_000)
    const last = output.trim().split("\n").at(-1) ?? ""
    expect(last).toMatch(
      /^fleet: 3 hosts, 2 controllers, \d+ jobs, \d+ reads, lost 0 bytes, duplicated 0, p50\/p99 poll [\d.]+\/[\d.]+ ms, p99 page [\d.]+ ms, PG connections \d+, host RSS \d+ MiB, faults (\d+)\/\1 survived$/
    )
    expect(Number(/(\d+) jobs/.exec(last)![1])).toBeGreaterThanOrEqual(30)
    expect(Number(/faults (\d+)\//.exec(last)![1])).toBe(5)
    // the controllers' views of their hosts saw the host killed go down and come back; reads of a job looked up before went on while PostgreSQL was down
    const liveness = /liveness: (\d+) answers.*seen unreachable (\d+) ms after, up (\d+) ms after its restart; reads served while PostgreSQL was down (\d+)\/(\d+)/.exec(output)
    expect(liveness).not.toBeNull()
    expect(Number(liveness![4])).toBeGreaterThan(0)
    expect({ code, signal, output: code === 0 ? "" : output }).toEqual({ code: 0, signal: null, output: "" })
  }, 240_000)
})
