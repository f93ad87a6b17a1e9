// One controller of the fleet simulation (bench/fleet.mjs forks it C times):
// a `Controller` per host over TCP, all sharing one PostgreSQL record store,
// driven over the IPC channel by the fleet's load. Each message names a host,
// a conversation (the caller) and an operation; the reply carries what the
// call returned (or its error's tag and message) and how long it took. The
// operation `hosts` answers this controller's view of which hosts are up.
//
//   FLEET_PG_URL     the records' PostgreSQL URL
//   FLEET_HOSTS      JSON: [{ "port": 4100, "credential": "..." }, ...]
//   FLEET_CALL_MS    the controllers' call timeout (5000 by default)
import { Controller, HostHealth } from "@spillway/remote"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { setTimeout } from "node:timers"

const url = process.env.FLEET_PG_URL
const hosts = JSON.parse(process.env.FLEET_HOSTS ?? "[]")
const callTimeout = `${Number(process.env.FLEET_CALL_MS ?? 5000)} millis`

// one record store (one PostgreSQL pool) and one view of the hosts for every host connection of this controller
const runtime = ManagedRuntime.make(Layer.merge(
  Controller.manifestsAt(url),
  HostHealth.layer({ pingEvery: "2 seconds", pingTimeout: "2 seconds", upFor: "6 seconds" })
))
const scope = Effect.runSync(Scope.make())

/** One host's connection and capability, built on first use. */
const connections = new Map()
const connection = (h) => {
  let built = connections.get(h)
  if (built === undefined) {
    const layer = Controller.layer({ callTimeout }).pipe(
      Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port: hosts[h].port }))
    )
    built = runtime.runPromise(Layer.buildWithScope(layer, scope))
    built.catch(() => connections.delete(h))
    connections.set(h, built)
  }
  return built
}

/** Leases per host and conversation; a refused or failed lease is asked for again next time. */
const leases = new Map()
const leaseFor = (h, conv, credential) => {
  const key = `${h}|${conv}|${credential}`
  let lease = leases.get(key)
  if (lease === undefined) {
    lease = connection(h).then((context) =>
      runtime.runPromise(
        Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, { owner: `agent-${conv}`, channel: `conv-${conv}` })).pipe(
          Effect.provide(context)
        )
      )
    )
    lease.catch(() => leases.delete(key))
    leases.set(key, lease)
  }
  return lease
}

/** What a call's failure was: its tag and message, or the defect. */
const failureOf = (cause) => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const e = failure.value
    return { tag: e?._tag ?? "Unknown", message: String(e?.message ?? e).slice(0, 400), reason: e?.reason }
  }
  return { tag: "Defect", message: Cause.pretty(cause).split("\n").slice(0, 3).join(" ").slice(0, 400) }
}

const operations = {
  start: (l, m) => l.start({ command: m.command, keep: m.keep }),
  poll: (l, m) => l.poll(m.pid),
  page: (l, m) => l.poll(m.pid, m.cursor !== undefined ? { cursor: m.cursor, limit: m.limit } : { offset: m.offset, limit: m.limit }),
  wait: (l, m) => l.wait(m.pid, m.millis, m.pattern),
  search: (l, m) => l.search(m.pid, { pattern: m.pattern }),
  signal: (l, m) => l.signal(m.pid, m.signal),
  expire: (l, m) => l.expire(m.pid),
  jobs: (l) => l.jobs
}

/** Only the fields the fleet checks, so the IPC channel carries little. */
const slim = (op, value) => {
  if (value === undefined || value === null) return value
  if (op === "page" && value._tag === "Page") {
    const { offset, next_offset, shown_bytes, content, retained_bytes, emitted_bytes, truncated, next_cursor, status } = value
    return { _tag: "Page", offset, next_offset, shown_bytes, content, retained_bytes, emitted_bytes, truncated, next_cursor, status }
  }
  if (value._tag === "StatusView") return { _tag: "StatusView", retention: value.retention, output: value.output }
  if (value._tag === "Matches") {
    return { _tag: "Matches", total_lines: value.total_lines, more: value.more, matches: value.matches.map((x) => ({ line: x.line, text: x.text })) }
  }
  return value
}

/** Replies to the fleet; once it is gone there is nobody to tell. */
const reply = (message) => {
  if (process.connected) process.send(message, () => {})
}

/** The view of the hosts, each by the address it is dialled at. */
const hostsView = Effect.map(Effect.flatMap(HostHealth.HostHealth, (h) => h.hosts), (all) =>
  all.map((x) => ({ address: x.address, state: x.liveness.state, reason: x.liveness.reason })))

process.on("message", async (m) => {
  const began = performance.now()
  if (m.op === "hosts") {
    const value = await runtime.runPromise(hostsView)
    return reply({ id: m.id, ok: true, value, ms: performance.now() - began })
  }
  try {
    const lease = await leaseFor(m.host, m.conv, m.credential ?? hosts[m.host].credential)
    const exit = await runtime.runPromiseExit(operations[m.op](lease, m))
    const ms = performance.now() - began
    if (Exit.isSuccess(exit)) return reply({ id: m.id, ok: true, value: slim(m.op, exit.value), ms })
    const error = failureOf(exit.cause)
    // a refused lease is asked for again on the next call, as a controller does after a refusal
    if (error.reason === "LeaseRefused") leases.delete(`${m.host}|${m.conv}|${m.credential ?? hosts[m.host].credential}`)
    reply({ id: m.id, ok: false, error, ms })
  } catch (e) {
    // a lease that failed, or a connection that could not be built
    const error = e !== null && typeof e === "object" && "_tag" in e && e._tag !== "FiberFailure"
      ? { tag: e._tag, message: String(e.message).slice(0, 400) }
      : failureOfThrown(e)
    reply({ id: m.id, ok: false, error, ms: performance.now() - began })
  }
})

/** A rejected promise from the runtime carries the cause under a symbol; read its failure when there is one. */
function failureOfThrown(e) {
  const cause = e?.[Symbol.for("effect/Runtime/FiberFailure/Cause")]
  if (cause !== undefined) return failureOf(cause)
  return { tag: "Defect", message: String(e?.message ?? e).slice(0, 400) }
}

const stop = () => {
  Effect.runPromise(Scope.close(scope, Exit.void)).finally(() => runtime.dispose().finally(() => process.exit(0)))
  setTimeout(() => process.exit(0), 3000).unref()
}
process.on("SIGTERM", stop)
process.on("disconnect", stop)
process.send({ ready: true })
