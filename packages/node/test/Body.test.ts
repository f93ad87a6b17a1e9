import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Errors, Manifests, Retention, Secrets, Utf8 } from "@spillway/core"
import * as NodeBodyFiles from "@spillway/node/NodeBodyFiles"
import * as SqlManifests from "@spillway/node/SqlManifests"
import { Effect, Either, Exit, FastCheck as fc, Layer, Scope, TestClock } from "effect"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-body-")
const SECRET = "sk-proj-SECRETVALUE-0123456789abcdef"
const masker = Secrets.unsafeMakeMasker({ knownValues: [SECRET] })
const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)
const me: Access.Caller = { owner: "alice", channel: "conv-1" }

const services = (
  files: Layer.Layer<BodyFiles.BodyFiles>,
  manifests: Layer.Layer<Manifests.Manifests, unknown>,
  options: { pools?: Record<string, Retention.Pool>; authorizer?: Layer.Layer<Access.Authorizer> } = {}
) =>
  Body.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      files,
      manifests,
      Retention.layer(options.pools),
      Layer.succeed(Secrets.Secrets, masker),
      options.authorizer ?? Access.allowOwners
    )),
    Layer.orDie
  )

const memory = (options?: Parameters<typeof services>[2]) => services(BodyFiles.layerMemory, Manifests.layerMemory, options)
const disk = (options?: Parameters<typeof services>[2]) => {
  const dir = tempDir()
  return services(NodeBodyFiles.layer({ directory: dir }), SqlManifests.layerFor(Path.join(dir, ".manifests.sqlite")), options)
}

/** Writes `chunks` into a new body and seals it; its manifest. */
const keep = (chunks: ReadonlyArray<Uint8Array>, options: Partial<Body.CreateOptions> = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const bodies = yield* Body.Bodies
    const w = yield* bodies.create({ profile: "evidence", owner: me.owner, channel: me.channel, tool: "bash", ...options })
    for (const c of chunks) yield* w.write(c)
    return yield* w.seal()
  }))

const readWhole = (id: string, caller: Access.Caller = me) =>
  Effect.scoped(Effect.gen(function*() {
    const r = yield* (yield* Body.Bodies).open(caller, id)
    return yield* r.read(0, r.size + 16)
  }))

/** Splits bytes at the given cut points. */
const split = (bytes: Uint8Array, cuts: ReadonlyArray<number>) => {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const parts: Array<Uint8Array> = []
  let from = 0
  for (const c of at) {
    parts.push(bytes.subarray(from, c))
    from = c
  }
  parts.push(bytes.subarray(from))
  return parts
}

const behaviour = (name: string, fresh: typeof memory) =>
  describe(`${name}: shared behaviour`, () => {
    it.effect.prop("masks before any cut: a body is always the start of the masked whole, wherever the limit and the chunks fall", [
      fc.string({ maxLength: 300 }),
      fc.string({ maxLength: 300 }),
      fc.integer({ min: 1, max: 700 }),
      fc.constantFrom<Body.Cut>("byte", "code-point", "line"),
      fc.array(fc.nat(800), { maxLength: 8 })
    ], ([before, after, maxBytes, cut, cuts]) =>
      Effect.gen(function*() {
        const whole = enc(`${before}${SECRET}${after}\n`)
        // onMasked sees every masked byte once, in order, each with its own count of line breaks, kept or not
        const seen: Array<Uint8Array> = []
        const m = yield* keep(split(whole, cuts), {
          maxBytes,
          cut,
          onMasked: (bytes, at, newlines) => {
            expect(at).toBe(seen.reduce((n, b) => n + b.length, 0))
            expect(newlines).toBe(bytes.reduce((n, b) => n + (b === 10 ? 1 : 0), 0))
            seen.push(Uint8Array.from(bytes))
          }
        })
        const body = yield* readWhole(m.id)
        const masked = masker.maskBytes(whole)
        expect(Buffer.concat(seen)).toEqual(Buffer.from(masked))
        expect(Uint8Array.from(body)).toEqual(masked.subarray(0, body.length))
        expect(dec(body)).not.toContain(SECRET.slice(0, 12))
        expect(m.bytes).toBe(body.length)
        expect(m.sourceBytes).toBe(whole.length)
        expect(m.kept).toBe(body.length === whole.length ? "whole" : "head")
      }).pipe(Effect.provide(fresh())), { fastCheck: { numRuns: 40 } })

    it.effect.prop("counts code points and checkpoints exactly as lossy UTF-8 decoding does, for any bytes and chunks", [
      fc.uint8Array({ maxLength: 600 }),
      fc.array(fc.nat(700), { maxLength: 6 }),
      fc.integer({ min: 1, max: 40 })
    ], ([raw, cuts, every]) =>
      Effect.gen(function*() {
        const m = yield* keep(split(raw, cuts), { alreadyMasked: true, checkpointEvery: every })
        const { offsets, text } = Utf8.decodeWithOffsets(raw)
        const points = [...text]
        expect(m.codePoints).toBe(points.length)
        let unit = 0
        for (let k = 0; k < points.length; k++) {
          if (k > 0 && k % every === 0) expect(m.checkpoints).toContainEqual({ codePoint: k, byte: offsets[unit] })
          unit += points[k]!.length
        }
        expect(m.checkpoints.length).toBe(points.length === 0 ? 1 : Math.floor((points.length - 1) / every) + 1)
      }).pipe(Effect.provide(fresh())), { fastCheck: { numRuns: 60 } })

    it.effect.prop("concurrent writers never keep more than the quota between them", [
      fc.array(fc.integer({ min: 1, max: 4000 }), { minLength: 1, maxLength: 24 }),
      fc.boolean()
    ], ([sizes, upFront]) =>
      Effect.gen(function*() {
        const bodies = yield* Body.Bodies
        const results = yield* Effect.all(
          sizes.map((size) =>
            Effect.either(keep([enc("x".repeat(size - 1) + "\n")], upFront ? { reserve: size } : {}))
          ),
          { concurrency: "unbounded" }
        )
        const kept = results.filter(Either.isRight).map((r) => r.right)
        expect(kept.reduce((n, m) => n + m.bytes, 0)).toBeLessThanOrEqual(10_000)
        for (const r of results) if (Either.isLeft(r)) expect(r.left._tag).toBe("QuotaExceeded")
        for (const m of kept) expect((yield* readWhole(m.id)).length).toBe(m.bytes)
        expect((yield* bodies.list(me, "evidence")).length).toBe(kept.length)
      }).pipe(Effect.provide(fresh({ pools: { evidence: { bytes: 10_000 } } }))), { fastCheck: { numRuns: 15 } })

    it.effect("every view refuses another owner, another channel where bound, a revoked reader and an expired body", () =>
      Effect.gen(function*() {
        const bodies = yield* Body.Bodies
        const m = yield* keep([enc("evidence\n")])
        const bound = yield* keep([enc("job output\n")], { profile: "spool", channelBound: true })
        expect(dec(yield* readWhole(m.id, { owner: "alice", channel: "another" }))).toBe("evidence\n")
        expect(yield* Effect.flip(readWhole(m.id, { owner: "mallory", channel: me.channel }))).toMatchObject({ _tag: "AccessDenied" })
        expect(yield* Effect.flip(readWhole(bound.id, { owner: "alice", channel: "another" }))).toMatchObject({ _tag: "AccessDenied" })
        expect(yield* Effect.flip(readWhole(m.id, { owner: "revoked", channel: "x" }))).toMatchObject({ _tag: "AccessDenied" })
        expect(yield* Effect.flip(readWhole("never-kept.log"))).toMatchObject({ _tag: "NotFound" })
        yield* TestClock.adjust("25 hours")
        expect(yield* Effect.flip(readWhole(m.id))).toMatchObject({ _tag: "Expired" })
        // another owner learns nothing of expiry
        expect(yield* Effect.flip(readWhole(m.id, { owner: "mallory", channel: me.channel }))).toMatchObject({ _tag: "AccessDenied" })
        expect(yield* bodies.sweep).toBe(2)
        expect(yield* Effect.flip(readWhole(m.id))).toMatchObject({ _tag: "NotFound" })
      }).pipe(Effect.provide(fresh({
        authorizer: Access.fromFunction((caller) => caller.owner !== "revoked"),
        pools: { spool: { ttlMillis: 24 * 3600_000 } }
      }))))

    it.effect("an owner's caller that reads every channel reads a job's output bound to another channel, and acts on none", () =>
      Effect.gen(function*() {
        const bound = yield* keep([enc("job output\n")], { profile: "spool", channelBound: true })
        const person: Access.Caller = { owner: "alice", channel: "cli", readsEveryChannel: true }
        expect(dec(yield* readWhole(bound.id, person))).toBe("job output\n")
        expect((yield* (yield* Body.Bodies).list(person, "spool")).map((m) => m.id)).toEqual([bound.id])
        // still only the owner's, and only to read: a signal or stdin needs the job's own channel
        const denied = yield* Effect.flip(readWhole(bound.id, { owner: "mallory", channel: "cli", readsEveryChannel: true }))
        expect(denied).toMatchObject({ _tag: "AccessDenied" })
        expect(denied.message).toBe(`you may not read job output "${bound.id}"; knowing its name, pid or cursor is not permission`)
        const resource = Body.resourceOf(bound)
        for (const action of ["signal", "stdin", "cancel", "delete"] as const) {
          expect(yield* Effect.flip(Access.check({ allow: () => Effect.succeed(true) }, person, resource, action)), action).toMatchObject({ _tag: "AccessDenied" })
        }
        expect(yield* Effect.either(Access.check({ allow: () => Effect.succeed(true) }, person, resource, "read"))).toEqual(Either.right(undefined))
        // a job named by its pid keeps that word
        expect(new Errors.AccessDenied({ resource: "job", id: "4242", action: "poll" }).message).toContain("job with pid 4242")
      }).pipe(Effect.provide(fresh())))

    it.effect("a short output held in memory never touches the store; a long one does", () =>
      Effect.scoped(Effect.gen(function*() {
        const bodies = yield* Body.Bodies
        const w = yield* bodies.create({ profile: "spill", owner: "alice", channel: "c", tool: "t", deferBytes: 100, name: "short.log" })
        yield* w.write(enc(`token ${SECRET}\n`))
        yield* w.end
        expect(dec(w.deferred()!)).toBe(dec(masker.maskBytes(enc(`token ${SECRET}\n`))))
        yield* w.discard
        expect((yield* Effect.flip(readWhole("short.log")))._tag).toBe("NotFound")
        const m = yield* keep([enc("y".repeat(150) + "\n")], { profile: "spill", deferBytes: 100 })
        expect((yield* readWhole(m.id)).length).toBe(151)
      })).pipe(Effect.provide(fresh())))

    it.effect("a visible body is read as it grows, then sealed with its expiry anchored where asked", () =>
      Effect.gen(function*() {
        const bodies = yield* Body.Bodies
        const scope = yield* Scope.make()
        const w = yield* bodies.create({ profile: "spool", owner: "alice", channel: "conv-1", channelBound: true, tool: "manage_process", visible: true, onFailure: "keep-prefix", cut: "byte", maxBytes: 12 }).pipe(Scope.extend(scope))
        yield* w.write(enc("abc\n"))
        yield* w.save({ status: "running" })
        const running = yield* bodies.manifest(w.name)
        expect(running).toMatchObject({ state: "writing", expiresAt: null, status: "running" })
        yield* w.write(enc("defghijklmnop\n"))
        const sealed = yield* w.seal({ status: "exit 0", anchor: 1000 })
        yield* Scope.close(scope, Exit.void)
        expect(sealed).toMatchObject({ state: "complete", bytes: 12, sourceBytes: 18, kept: "head", expiresAt: 1000 + 24 * 3600_000 })
        expect(dec(yield* readWhole(w.name))).toBe("abc\ndefghijk")
      }).pipe(Effect.provide(fresh())))

    it.effect("a full pool: keep-prefix keeps what fit and says why; abandon keeps nothing", () =>
      Effect.gen(function*() {
        const prefix = yield* keep([enc("a".repeat(60) + "\n"), enc("b".repeat(60) + "\n")], { profile: "spool", onFailure: "keep-prefix", cut: "byte" })
        expect(prefix.bytes).toBe(100)
        expect(prefix.captureError).toContain("quota")
        const refused = yield* Effect.flip(keep([enc("c".repeat(10))]))
        expect(refused._tag).toBe("QuotaExceeded")
        expect((yield* (yield* Body.Bodies).list(me)).map((m) => m.id)).toEqual([prefix.id])
      }).pipe(Effect.provide(fresh({ pools: { spool: { bytes: 100 }, evidence: { bytes: 5 } } }))))

    it.effect("a name already taken is never replaced nor described: keep-prefix too fails and records nothing", () =>
      Effect.gen(function*() {
        const files = yield* BodyFiles.BodyFiles
        // bytes under the name that no manifest describes (another writer's, left by hand)
        yield* Effect.scoped(Effect.gen(function*() {
          const sink = yield* files.create("conv-1/outputs/taken.txt", "on-commit")
          yield* sink.write(enc("first\n"))
          yield* sink.commit
        }))
        for (const visible of [false, true]) {
          const failed = yield* Effect.flip(keep([enc("second\n")], { profile: "scratch", name: "conv-1/outputs/taken.txt", onFailure: "keep-prefix", visible }))
          expect(failed._tag).toBe("StoreFailed")
        }
        expect(yield* (yield* Body.Bodies).manifest("conv-1/outputs/taken.txt")).toBeUndefined()
        const bytes = yield* Effect.scoped(Effect.flatMap(files.open("conv-1/outputs/taken.txt"), (f) => f.read(0, 100)))
        expect(dec(bytes)).toBe("first\n")
      }).pipe(Effect.provide(fresh())))
    it.effect("copies what it is given and what the masker lends, and stores a flood through a few buffers used over and over", () =>
      Effect.gen(function*() {
        // a Node Buffer spoiled right after each write: whatever the writer keeps must be its own copy
        const lines = (i: number) => Buffer.from(`line ${i} ${"x".repeat(i % 50)} ${i === 700 ? SECRET : ""}\n`.repeat(40))
        const lent = Buffer.alloc(64 * 1024)
        const expected: Array<Uint8Array> = []
        const m = yield* Effect.scoped(Effect.gen(function*() {
          const w = yield* (yield* Body.Bodies).create({ profile: "spool", owner: me.owner, channel: me.channel, tool: "bash", cut: "byte" })
          for (let i = 0; i < 2000; i++) {
            const chunk = lines(i)
            expected.push(chunk)
            const view = lent.subarray(0, chunk.length)
            view.set(chunk)
            yield* w.write(view)
            lent.fill(0x23)
          }
          return yield* w.seal()
        }))
        const whole = Buffer.concat(expected)
        const body = yield* readWhole(m.id)
        // compared as buffers: a deep equality of megabytes takes seconds
        expect(Buffer.from(body).equals(Buffer.from(masker.maskBytes(whole)))).toBe(true)
        expect(dec(body)).not.toContain(SECRET)
        expect(body.length).toBe(whole.length)
        expect(body.length).toBeGreaterThan(2 * 1024 * 1024)
      }).pipe(Effect.provide(fresh({ pools: { spool: { bytes: 64 * 1024 * 1024 } } }))))
  })

behaviour("memory", memory)
behaviour("file system and SQLite", disk)

describe("the writer's buffers", () => {
  it.effect("a flood reaches the store through a few slabs used over and over, not a buffer per chunk", () => {
    const buffers = new Set<ArrayBufferLike>()
    let writes = 0
    // the memory store, told which memory each write comes from
    const counting = Layer.effect(
      BodyFiles.BodyFiles,
      Effect.map(BodyFiles.BodyFiles, (files): BodyFiles.Service => ({
        ...files,
        create: (name, visibility) =>
          Effect.map(files.create(name, visibility), (sink) => ({
            ...sink,
            write: (bytes) => {
              buffers.add(bytes.buffer)
              writes++
              return sink.write(bytes)
            }
          }))
      }))
    ).pipe(Layer.provide(BodyFiles.layerMemory))
    return Effect.gen(function*() {
      const chunk = enc("an ordinary line of build output, nothing secret in it\n".repeat(4096))
      const m = yield* keep(Array.from({ length: 128 }, () => chunk), { profile: "spool", cut: "byte" })
      expect(m.bytes).toBe(128 * chunk.length)
      expect(writes).toBeGreaterThan(20)
      expect(buffers.size).toBeLessThanOrEqual(8)
    }).pipe(Effect.provide(services(counting, Manifests.layerMemory, { pools: { spool: { bytes: 64 * 1024 * 1024 } } })))
  })

  it.effect("a body written after another copies into the slabs that one used, and each reads back only its own bytes", () => {
    const used: Array<Set<ArrayBufferLike>> = []
    const counting = Layer.effect(
      BodyFiles.BodyFiles,
      Effect.map(BodyFiles.BodyFiles, (files): BodyFiles.Service => ({
        ...files,
        create: (name, visibility) =>
          Effect.map(files.create(name, visibility), (sink) => {
            const buffers = new Set<ArrayBufferLike>()
            used.push(buffers)
            return {
              ...sink,
              write: (bytes) => {
                buffers.add(bytes.buffer)
                return sink.write(bytes)
              }
            }
          })
      }))
    ).pipe(Layer.provide(BodyFiles.layerMemory))
    return Effect.gen(function*() {
      // a long body, then shorter ones of other bytes: a stale byte of an earlier body would show
      const bodies = [3.5, 2.25, 1.5].map((mib, n) => {
        const line = enc(`body ${n}: ${String.fromCharCode(97 + n).repeat(60)}\n`)
        const out = new Uint8Array(Math.floor(mib * 1024 * 1024))
        for (let at = 0; at < out.length; at += line.length) out.set(line.subarray(0, Math.min(line.length, out.length - at)), at)
        return out
      })
      for (const bytes of bodies) {
        const m = yield* keep(split(bytes, [4097, 70_001, 1_000_003, 2_500_007]), { profile: "spool", cut: "byte" })
        expect(m.bytes).toBe(bytes.length)
        expect(Buffer.compare(Buffer.from(yield* readWhole(m.id)), Buffer.from(bytes))).toBe(0)
      }
      // the later bodies' copies went through memory an earlier body had used
      for (const later of used.slice(1)) expect([...later].some((b) => used[0]!.has(b))).toBe(true)
    }).pipe(Effect.provide(services(counting, Manifests.layerMemory, { pools: { spool: { bytes: 64 * 1024 * 1024 } } })))
  })
})
