import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Manifests, Retention, Secrets, Slabs } from "@spillway/core"
import { Effect, Layer } from "effect"

const SECRET = "sk-proj-SECRETVALUE-0123456789abcdef"
const masker = Secrets.unsafeMakeMasker({ knownValues: [SECRET] })

describe("a view lent where it was filled", () => {
  it("is lent from the current slab's free part, skipping what lies before it; a view elsewhere is refused", () => {
    const pool = Slabs.pool({ first: 64, large: 256 })
    const free = pool.free(40)
    const view = free.subarray(5, 25)
    view.fill(7)
    const region = pool.lend(view)!
    expect(region.slab).toBeDefined()
    expect(region.bytes).toBe(view)
    expect(region.slab!.lent).toBe(1)
    // what comes next starts past the view: it is never handed out twice
    const next = pool.take(10)
    expect(next.bytes.byteOffset).toBe(view.byteOffset + view.length)
    // lent already, or outside the slab: refused, and the pool is unchanged
    expect(pool.lend(view)).toBeUndefined()
    expect(pool.lend(new Uint8Array(8))).toBeUndefined()
    expect(pool.take(4).bytes.byteOffset).toBe(next.bytes.byteOffset + 10)
  })

  it("keeps a slab lent in place from being read into again until it is given back", () => {
    const pool = Slabs.pool({ first: 16, large: 32 })
    pool.free(32)
    const a = pool.lend(pool.free(32).subarray(0, 30))!
    a.bytes.fill(1)
    // a's slab is too full for the next: others are made while a is lent
    for (let i = 0; i < 5; i++) Slabs.giveBack(pool.take(30))
    expect([...a.bytes].every((b) => b === 1)).toBe(true)
  })
})

describe("a body whose masking windows are built in the writer's slabs", () => {
  it.live("reads back as the masked whole when the store is slower than the producer, for chunks of every size", () => {
    const writes: Array<number> = []
    // the memory store, a millisecond per write: the writer's queue fills and its slabs stay lent meanwhile
    const slow = Layer.effect(
      BodyFiles.BodyFiles,
      Effect.map(BodyFiles.BodyFiles, (files): BodyFiles.Service => ({
        ...files,
        create: (name, visibility) =>
          Effect.map(files.create(name, visibility), (sink) => ({
            ...sink,
            write: (bytes) => Effect.zipRight(Effect.sleep("1 millis"), Effect.suspend(() => (writes.push(bytes.length), sink.write(bytes))))
          }))
      }))
    ).pipe(Layer.provide(BodyFiles.layerMemory))
    const layer = Body.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(
        slow,
        Manifests.layerMemory,
        Retention.layer({ spool: { bytes: 256 * 1024 * 1024 } }),
        Layer.succeed(Secrets.Secrets, masker),
        Access.allowOwners
      )),
      Layer.orDie
    )
    return Effect.gen(function*() {
      // lines of many lengths, secrets among them, cut into chunks from a few bytes to more than a slab holds
      const lines: Array<string> = []
      for (let i = 0, length = 0; length < 12_000_000; i++) {
        const line = `line ${i} ${"y".repeat((i * 7919) % 300)}${i % 997 === 0 ? ` token=${SECRET}` : ""}\n`
        lines.push(line)
        length += line.length
      }
      const whole = Buffer.from(lines.join(""))
      const sizes = [3, 70_001, 1_000_003, 4096, 1_500_007, 262_144, 17, 2_100_000, 999_999]
      // a buffer reused for every chunk, spoiled after each write: what the writer keeps must be its own
      const lent = Buffer.alloc(2_200_000)
      const m = yield* Effect.scoped(Effect.gen(function*() {
        const w = yield* (yield* Body.Bodies).create({ profile: "spool", owner: "alice", channel: "c", tool: "bash", cut: "byte" })
        for (let at = 0, i = 0; at < whole.length; i++) {
          const n = Math.min(sizes[i % sizes.length]!, whole.length - at)
          whole.copy(lent, 0, at, at + n)
          yield* w.write(lent.subarray(0, n))
          lent.fill(0x23, 0, n)
          at += n
        }
        return yield* w.seal()
      }))
      const body = yield* Effect.scoped(Effect.gen(function*() {
        const r = yield* (yield* Body.Bodies).open({ owner: "alice", channel: "c" }, m.id)
        return yield* r.read(0, r.size + 16)
      }))
      expect(body.length).toBe(whole.length)
      expect(Buffer.from(body).equals(Buffer.from(masker.maskBytes(whole)))).toBe(true)
      expect(Buffer.from(body).includes(SECRET)).toBe(false)
      expect(writes.length).toBeGreaterThan(8)
    }).pipe(Effect.provide(layer))
  }, 60_000)
})
