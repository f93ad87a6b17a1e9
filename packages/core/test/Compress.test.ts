import { describe, expect, it } from "@effect/vitest"
import * as Compress from "@spillway/core/Compress"
import { Either, FastCheck as fc } from "effect"

const size = (out: ReadonlyArray<Compress.Compressed>) => [...out.map((c) => c.text).join("\n")].length

const held = (id: string, preview: string): Compress.Held => {
  const pointer = `get_tool_output cursor=spw1.${id}.c2ln`
  return { id, preview, instructions: `Call get_tool_output with cursor=spw1.${id}.c2ln for the rest, page by page. (${pointer})`, pointer }
}

const three = [held("a", "A".repeat(100)), held("b", "B".repeat(100)), held("c", "C".repeat(100))]
const full = size(three.map((h) => ({ id: h.id, text: Compress.render(h, "all"), dropped: "nothing" as const })))
const sizeOf = (text: string) => [...text].length

describe("Compress.compress", () => {
  it("leaves everything as it is when it fits", () => {
    const out = Either.getOrThrow(Compress.compress(three, full))
    expect(out.map((c) => c.dropped)).toEqual(["nothing", "nothing", "nothing"])
    expect(out.map((c) => c.text)).toEqual(three.map((h) => `${h.preview}\n${h.instructions}`))
    expect(out.map((c) => c.id)).toEqual(["a", "b", "c"])
    expect(Either.getOrThrow(Compress.compress([], 0))).toEqual([])
  })

  it("drops previews oldest first, and only as many as needed", () => {
    const one = Either.getOrThrow(Compress.compress(three, full - 1))
    expect(one.map((c) => c.dropped)).toEqual(["preview", "nothing", "nothing"])
    expect(one[0]!.text).toBe(three[0]!.instructions)
    const two = Either.getOrThrow(Compress.compress(three, full - 102))
    expect(two.map((c) => c.dropped)).toEqual(["preview", "preview", "nothing"])
    expect(size(two)).toBeLessThanOrEqual(full - 102)
  })

  it("then shortens instructions to the bare pointer, oldest first", () => {
    const noPreviews = full - 3 * 101
    const out = Either.getOrThrow(Compress.compress(three, noPreviews - 1))
    expect(out.map((c) => c.dropped)).toEqual(["preview-and-instructions", "preview", "preview"])
    expect(out[0]!.text).toBe(three[0]!.pointer)
    expect(out[1]!.text).toBe(three[1]!.instructions)
    const pointers = three.map((h) => h.pointer).join("\n")
    const all = Either.getOrThrow(Compress.compress(three, sizeOf(pointers)))
    expect(all.map((c) => c.dropped)).toEqual(["preview-and-instructions", "preview-and-instructions", "preview-and-instructions"])
    expect(all.map((c) => c.text).join("\n")).toBe(pointers)
  })

  it("fails with ContextOverflow when even the pointers do not fit", () => {
    const pointers = sizeOf(three.map((h) => h.pointer).join("\n"))
    const r = Compress.compress(three, pointers - 1)
    expect(Either.isLeft(r) && r.left._tag).toBe("ContextOverflow")
    if (Either.isLeft(r)) {
      expect(r.left.needed).toBe(pointers)
      expect(r.left.limit).toBe(pointers - 1)
      expect(r.left.message).toContain("even the bare retrieval pointers")
      expect(r.left.message).toContain(`${pointers} characters, over the context budget of ${pointers - 1}`)
    }
  })

  it("keeps a pointer that the instructions or a custom rendering leave out, and never cuts a JSON text", () => {
    const json = JSON.stringify({ tool: "search", results: ["x", "y"], next_cursor: "spw1.q.c2ln" })
    const h = { id: "j", preview: json, instructions: "call get_tool_output with cursor=spw1.q.c2ln", pointer: "get_tool_output cursor=spw1.q.c2ln" }
    const fits = Either.getOrThrow(Compress.compress([h], 10_000))
    expect(fits[0]!.text).toBe(`${json}\n${h.instructions}\n${h.pointer}`)
    const custom = Either.getOrThrow(Compress.compress([h], 10_000, (x, keep) => (keep === "all" ? x.preview : "")))
    expect(custom[0]!.text).toBe(`${json}\n${h.pointer}`)
    // the JSON preview goes whole or not at all
    const small = Either.getOrThrow(Compress.compress([h], sizeOf(json) + 10))
    expect(small[0]!.text).not.toContain("{")
  })

  it("skips a step that would not make a result smaller", () => {
    const bare = { id: "p", preview: "", instructions: "get_tool_output cursor=spw1.p", pointer: "get_tool_output cursor=spw1.p" }
    const other = held("o", "O".repeat(50))
    const out = Either.getOrThrow(Compress.compress([bare, other], sizeOf(bare.pointer) + 1 + sizeOf(other.instructions)))
    expect(out.map((c) => c.dropped)).toEqual(["nothing", "preview"])
  })

  const text = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: "grapheme", maxLength: 100 }),
    fc.json({ maxDepth: 2 })
  )
  const helds = fc.uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 6 }),
      preview: text,
      instructions: text,
      pointer: fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).map((p) => `get_tool_output cursor=${p}`)
    }),
    { maxLength: 12, selector: (h) => h.id }
  )

  /** A rendering as the results get it: with the pointer on its own line when the rendering lacks it. */
  const level = (h: Compress.Held, keep: Compress.Keep) => {
    const t = Compress.render(h, keep)
    return t.includes(h.pointer) ? t : t === "" ? h.pointer : `${t}\n${h.pointer}`
  }

  it.prop("fits the limit whenever it succeeds, keeps every pointer verbatim, and never grows a result", [
    helds,
    fc.integer({ min: 0, max: 1100 })
  ], ([hs, permille]) => {
    // limits from nothing to a little over everything, so that every order of sacrifice is reached
    const limit = Math.floor((sizeOf(hs.map((h) => level(h, "all")).join("\n")) * permille) / 1000)
    const r = Compress.compress(hs, limit)
    const smallest = hs.map((h) => h.pointer).join("\n")
    if (Either.isLeft(r)) {
      expect(r.left.needed).toBeGreaterThan(limit)
      expect(sizeOf(smallest)).toBeGreaterThan(limit)
      return
    }
    const out = r.right
    expect(size(out)).toBeLessThanOrEqual(limit)
    expect(out.map((c) => c.id)).toEqual(hs.map((h) => h.id))
    for (const [i, c] of out.entries()) {
      const h = hs[i]!
      expect(c.text).toContain(h.pointer)
      expect(sizeOf(c.text)).toBeLessThanOrEqual(sizeOf(level(h, "all")))
      if (c.dropped === "nothing") expect(c.text).toBe(level(h, "all"))
      if (c.dropped === "preview") expect(c.text).toBe(level(h, "instructions"))
      if (c.dropped === "preview-and-instructions") expect(c.text).toBe(h.pointer)
    }
    // oldest first: before a result gives something up, every older one has given up as much (or cannot shrink)
    for (const [j, c] of out.entries()) {
      if (c.dropped === "nothing") continue
      const deepest = c.dropped === "preview" ? "instructions" : "pointer"
      for (const [i, o] of out.slice(0, j).entries()) expect(sizeOf(o.text)).toBeLessThanOrEqual(sizeOf(level(hs[i]!, deepest)))
    }
    // and only as many as needed: undoing the last step would not fit
    const lastWith = (d: Compress.Compressed["dropped"]) => out.map((c) => c.dropped).lastIndexOf(d)
    const last = lastWith("preview-and-instructions")
    const undo = last >= 0 ? last : lastWith("preview")
    if (undo >= 0) {
      const h = hs[undo]!
      const all = level(h, "all")
      const instructions = level(h, "instructions")
      const before = last >= 0 && sizeOf(instructions) < sizeOf(all) ? instructions : all
      const texts = out.map((c, i) => (i === undo ? before : c.text))
      expect(sizeOf(texts.join("\n"))).toBeGreaterThan(limit)
    }
  }, { fastCheck: { numRuns: 300 } })
})
