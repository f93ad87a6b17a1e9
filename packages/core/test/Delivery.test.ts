import { describe, expect, it } from "@effect/vitest"
import * as Delivery from "@spillway/core/Delivery"
import { Either, FastCheck as fc } from "effect"

/** Text with the characters JSON escapes long, astral characters and line breaks mixed in. */
const texts = fc.array(fc.constantFrom("a", "\n", "é", "😀", "\"", "\\", "\u0001", "\t", "line\n"), { maxLength: 3_000 }).map((parts) => parts.join(""))

const facts = { exit_code: 0, cursor: "spw1.cursor.sig" }
const deliver = (text: string) => ({ text: `${text}\n[exit code 0]`, facts })
const points = (s: string) => [...s].length

describe("Delivery", () => {
  it("counts a result as a client receives it: one text block and the structured content", () => {
    const d = { text: "a\"b", facts: { n: 1 } }
    expect(Delivery.serialize(d)).toBe(`{"content":[{"type":"text","text":"a\\"b"}],"structuredContent":{"n":1}}`)
    expect(Delivery.sizeOf({ text: "😀", facts: {} })).toBe(`{"content":[{"type":"text","text":"😀"}],"structuredContent":{}}`.length - 1)
  })

  it.prop("squeeze fits the budget, keeps the text whole when it fits, and otherwise its start and end with the count left out", [
    texts,
    fc.integer({ min: 300, max: 6_000 })
  ], ([text, limit]) => {
    const r = Delivery.squeeze(text, deliver, { limit })
    if (Either.isLeft(r)) {
      // only a budget too small for the note itself
      expect(Delivery.sizeOf(deliver(Delivery.squeezed(points(text), limit)))).toBeGreaterThan(limit)
      return
    }
    const d = r.right
    expect(Delivery.sizeOf(d)).toBeLessThanOrEqual(limit)
    const shown = d.text.slice(0, -"\n[exit code 0]".length)
    if (Delivery.sizeOf(deliver(text)) <= limit) {
      expect(shown).toBe(text)
      return
    }
    const note = /\n\[… (\d+) characters left out here to fit the (\d+)-character result …\]\n/.exec(shown)!
    expect(Number(note[2])).toBe(limit)
    const head = shown.slice(0, note.index)
    const tail = shown.slice(note.index + note[0].length)
    expect(text.startsWith(head)).toBe(true)
    expect(text.endsWith(tail)).toBe(true)
    expect(points(head) + points(tail) + Number(note[1])).toBe(points(text))
  })

  it("a marker goes on a line of its own, and a call is the tool and its arguments as a model types them", () => {
    expect(Delivery.withMarker("a\n", "[m]")).toBe("a\n[m]")
    expect(Delivery.withMarker("a", "[m]")).toBe("a\n[m]")
    expect(Delivery.withMarker("", "[m]")).toBe("[m]")
    expect(Delivery.withMarker("a", undefined)).toBe("a")
    expect(Delivery.call("read_spill", [["filename", "x.log"], ["offset", 3]])).toBe("read_spill filename=x.log offset=3")
    expect(Delivery.endsMidLine("a\nb")).toBe(true)
    expect(Delivery.endsMidLine("a\n")).toBe(false)
    expect(Delivery.contentChars("😀a")).toBe(2)
  })
})
