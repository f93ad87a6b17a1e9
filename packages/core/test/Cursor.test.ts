import { describe, expect, it, vi } from "@effect/vitest"
import * as Cursor from "@spillway/core/Cursor"
import { Cause, Effect, Either, Exit, FastCheck as fc, Layer } from "effect"
import { createHmac } from "node:crypto"
import { hmacSha256 } from "../src/internal/sha256.js"

const keyBytes = Uint8Array.from({ length: 32 }, (_, i) => i)
const otherKeyBytes = Uint8Array.from({ length: 32 }, (_, i) => 255 - i)
const keyLayer = Cursor.layerKey(keyBytes)

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
const base64urlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const id = (maxLength: number) => fc.string({ unit: fc.constantFrom(...idAlphabet), minLength: 1, maxLength })

const position: fc.Arbitrary<Cursor.Position> = fc.record({
  tool: fc.oneof(fc.constantFrom("get_tool_output", "manage_process", "get_agent_results"), id(64)),
  evidence: id(128),
  offset: fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER)),
  unit: fc.constantFrom<Cursor.Unit>("code_point", "byte", "line"),
  generation: id(64)
}, { requiredKeys: ["tool", "evidence", "offset", "unit"] })

/** Characters to put in a cursor: its own alphabet, its separators, and things that are neither. */
const replacement = fc.oneof(
  fc.constantFrom(...base64urlAlphabet, ".", "=", "+", "/", " ", "\n", "!", "%", "\u0000", "\u00e9", "\u{1F600}"),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 })
)

const run = <A, E>(effect: Effect.Effect<A, E, Cursor.CursorKey>, layer: Layer.Layer<Cursor.CursorKey> = keyLayer) =>
  Effect.runSync(Effect.either(Effect.provide(effect, layer)))

const encode = (p: Cursor.Position, layer?: Layer.Layer<Cursor.CursorKey>) =>
  Either.getOrThrow(run(Cursor.encode(p), layer))

const reasonOf = (result: Either.Either<Cursor.Position, Cursor.CursorError>) =>
  Either.isLeft(result) ? result.left.reason : "accepted"

const decode = (
  cursor: string,
  expect: { readonly tool: string; readonly unit?: Cursor.Unit },
  layer?: Layer.Layer<Cursor.CursorKey>
) => run(Cursor.decode(cursor, expect), layer)

const dieMessage = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const defect = Cause.dieOption(exit.cause)
  if (defect._tag === "None") return "failed without dying"
  return defect.value instanceof Error ? defect.value.message : String(defect.value)
}

/** Signs an arbitrary payload text the way the module does, to reach the checks behind the signature. */
const signRaw = (payloadText: string, key: Uint8Array = keyBytes) => {
  const payload = Buffer.from(payloadText, "utf8").toString("base64url")
  const tag = createHmac("sha256", key).update(`spw1.${payload}`).digest().subarray(0, 16).toString("base64url")
  return `spw1.${payload}.${tag}`
}

describe("Cursor format", () => {
  it("is spw1, a base64url JSON array, and a 128-bit truncated HMAC-SHA256", () => {
    const cursor = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 42, unit: "byte" })
    expect(cursor).toMatch(/^spw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
    const [, payload, tag] = cursor.split(".")
    expect(Buffer.from(payload, "base64url").toString("utf8")).toBe("[\"get_tool_output\",\"ev_1\",42,1]")
    const expected = createHmac("sha256", keyBytes).update(`spw1.${payload}`).digest().subarray(0, 16)
    expect(Buffer.from(tag, "base64url").equals(expected)).toBe(true)
    expect(cursor).toBe(signRaw("[\"get_tool_output\",\"ev_1\",42,1]"))
  })

  it("writes the generation as a fifth field and code points as unit 0", () => {
    const cursor = encode({ tool: "manage_process", evidence: "job-7", offset: 0, unit: "code_point", generation: "g.1:a" })
    expect(Buffer.from(cursor.split(".")[1], "base64url").toString("utf8")).toBe("[\"manage_process\",\"job-7\",0,0,\"g.1:a\"]")
  })

  it.prop("round-trips every valid position exactly", [position], ([p]) => {
    const cursor = encode(p)
    expect(cursor.length).toBeLessThanOrEqual(Cursor.MAX_CURSOR_LENGTH)
    expect(cursor).not.toMatch(/[/\\]/)
    const decoded = Either.getOrThrow(decode(cursor, { tool: p.tool }))
    expect(decoded).toStrictEqual(p)
    expect("generation" in decoded).toBe("generation" in p)
    expect(Either.getOrThrow(decode(cursor, { tool: p.tool, unit: p.unit }))).toStrictEqual(p)
  })

  it.prop("is the same cursor for the same position and key", [position], ([p]) => {
    expect(encode(p)).toBe(encode({ ...p }))
  })

  it.effect("works through the service in an Effect program", () =>
    Effect.gen(function*() {
      const p: Cursor.Position = { tool: "get_agent_results", evidence: "agent:3", offset: 1024, unit: "code_point" }
      const cursor = yield* Cursor.encode(p)
      expect(yield* Cursor.decode(cursor, { tool: "get_agent_results", unit: "code_point" })).toStrictEqual(p)
    }).pipe(Effect.provide(keyLayer)))
})

describe("Cursor refusals", () => {
  it.prop("refuses every single-character change anywhere in a cursor", [position, fc.nat(), replacement], ([p, at, ch]) => {
    const cursor = encode(p)
    const i = at % cursor.length
    fc.pre(cursor[i] !== ch)
    const changed = cursor.slice(0, i) + ch + cursor.slice(i + 1)
    const result = decode(changed, { tool: p.tool })
    expect(Either.isLeft(result), changed).toBe(true)
  }, { fastCheck: { numRuns: 2000 } })

  it.prop("refuses every single-character deletion and insertion", [position, fc.nat(), replacement], ([p, at, ch]) => {
    const cursor = encode(p)
    const i = at % cursor.length
    expect(Either.isLeft(decode(cursor.slice(0, i) + cursor.slice(i + 1), { tool: p.tool }))).toBe(true)
    expect(Either.isLeft(decode(cursor.slice(0, i) + ch + cursor.slice(i), { tool: p.tool }))).toBe(true)
    expect(Either.isLeft(decode(cursor + ch, { tool: p.tool }))).toBe(true)
  })

  it.prop("refuses a cursor cut at any length, from either end", [position], ([p]) => {
    const cursor = encode(p)
    for (let k = 0; k < cursor.length; k++) {
      expect(Either.isLeft(decode(cursor.slice(0, k), { tool: p.tool })), `head ${k}`).toBe(true)
      expect(Either.isLeft(decode(cursor.slice(cursor.length - k), { tool: p.tool })), `tail ${k}`).toBe(true)
    }
  }, { fastCheck: { numRuns: 50 } })

  it("says a cut cursor is malformed", () => {
    const cursor = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 7, unit: "byte" })
    expect(reasonOf(decode(cursor.slice(0, -1), { tool: "get_tool_output" }))).toBe("malformed")
    expect(reasonOf(decode(cursor.slice(0, cursor.lastIndexOf(".")), { tool: "get_tool_output" }))).toBe("malformed")
    expect(reasonOf(decode(cursor.slice(0, 5), { tool: "get_tool_output" }))).toBe("malformed")
    expect(reasonOf(decode("spw1", { tool: "get_tool_output" }))).toBe("malformed")
  })

  it("refuses a tag that decodes to the same bytes but is spelled differently", () => {
    const cursor = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 7, unit: "byte" })
    const last = cursor[cursor.length - 1]
    // The last of 22 base64url characters carries 2 bits; its low 4 bits are padding.
    const index = base64urlAlphabet.indexOf(last)
    const twin = base64urlAlphabet[index ^ 1]
    const changed = cursor.slice(0, -1) + twin
    expect(Buffer.from(changed.split(".")[2], "base64url").equals(Buffer.from(cursor.split(".")[2], "base64url"))).toBe(true)
    expect(reasonOf(decode(changed, { tool: "get_tool_output" }))).toBe("malformed")
  })

  it.prop("says a cursor signed with another key is tampered", [position], ([p]) => {
    const cursor = encode(p, Cursor.layerKey(otherKeyBytes))
    const result = decode(cursor, { tool: p.tool })
    expect(reasonOf(result)).toBe("tampered")
  })

  it("says a cursor from before a restart (another random key) is tampered", () => {
    const p: Cursor.Position = { tool: "manage_process", evidence: "job1", offset: 3, unit: "byte", generation: "abc" }
    const first = encode(p, Cursor.layerRandomKey)
    expect(reasonOf(decode(first, { tool: "manage_process" }, Cursor.layerRandomKey))).toBe("tampered")
    const sharedKey = Effect.runSync(Effect.provide(Cursor.CursorKey, Cursor.layerRandomKey))
    const shared = Layer.succeed(Cursor.CursorKey, sharedKey)
    expect(Either.getOrThrow(decode(encode(p, shared), { tool: "manage_process" }, shared))).toStrictEqual(p)
  })

  it("does not parse the payload of a cursor whose signature fails", () => {
    const cursor = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 7, unit: "byte" }, Cursor.layerKey(otherKeyBytes))
    const parse = vi.spyOn(JSON, "parse")
    try {
      expect(reasonOf(decode(cursor, { tool: "get_tool_output" }))).toBe("tampered")
      expect(parse).not.toHaveBeenCalled()
    } finally {
      parse.mockRestore()
    }
  })

  it.prop("says a cursor of one tool passed to another is foreign-tool", [position, id(64)], ([p, other]) => {
    fc.pre(other !== p.tool)
    const result = decode(encode(p), { tool: other })
    expect(reasonOf(result)).toBe("foreign-tool")
    if (Either.isLeft(result)) {
      expect(result.left.tool).toBe(other)
      expect(result.left.message).toContain(`not issued by ${other}`)
      expect(result.left.message).toContain(p.tool)
    }
  })

  it("says a cursor counting another unit is unit", () => {
    const bytes = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 7, unit: "byte" })
    const chars = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 7, unit: "code_point" })
    const refused = decode(bytes, { tool: "get_tool_output", unit: "code_point" })
    expect(reasonOf(refused)).toBe("unit")
    if (Either.isLeft(refused)) expect(refused.left.message).toContain("counts bytes, this read counts code points")
    expect(reasonOf(decode(chars, { tool: "get_tool_output", unit: "byte" }))).toBe("unit")
    expect(reasonOf(decode(bytes, { tool: "get_tool_output", unit: "byte" }))).toBe("accepted")
    expect(reasonOf(decode(chars, { tool: "get_tool_output" }))).toBe("accepted")
    const lines = encode({ tool: "manage_process.grep", evidence: "42", offset: 1501, unit: "line", generation: "g1" })
    expect(reasonOf(decode(lines, { tool: "manage_process.grep", unit: "byte" }))).toBe("unit")
    expect(reasonOf(decode(lines, { tool: "manage_process.grep", unit: "line" }))).toBe("accepted")
  })

  it("checks the tool before the unit", () => {
    const cursor = encode({ tool: "manage_process", evidence: "job", offset: 7, unit: "byte" })
    expect(reasonOf(decode(cursor, { tool: "get_tool_output", unit: "code_point" }))).toBe("foreign-tool")
  })

  it("says an unknown spw version is version, and anything else malformed", () => {
    const cursor = encode({ tool: "get_tool_output", evidence: "ev_1", offset: 7, unit: "byte" })
    const rest = cursor.slice(4)
    for (const prefix of ["spw2", "spw0", "spw10", "spw"]) {
      const result = decode(prefix + rest, { tool: "get_tool_output" })
      expect(reasonOf(result), prefix).toBe("version")
      if (Either.isLeft(result)) expect(result.left.message).toContain("start again without a cursor")
    }
    for (const prefix of ["SPW1", "xyz1", ""]) expect(reasonOf(decode(prefix + rest, { tool: "get_tool_output" })), prefix).toBe("malformed")
  })

  it("says empty, non-string and over-long cursors are malformed", () => {
    const tool = { tool: "get_tool_output" }
    expect(reasonOf(decode("", tool))).toBe("malformed")
    for (const value of [undefined, null, 42, {}, ["spw1"]]) {
      expect(reasonOf(decode(value as unknown as string, tool)), String(value)).toBe("malformed")
    }
    const long = decode(`spw1.${"A".repeat(2000)}.${"A".repeat(22)}`, tool)
    expect(reasonOf(long)).toBe("malformed")
    if (Either.isLeft(long)) expect(long.left.detail).toContain("longer than 1024")
    expect(reasonOf(decode("spw1..", tool))).toBe("malformed")
    expect(reasonOf(decode("spw1.a.b.c", tool))).toBe("malformed")
    expect(reasonOf(decode("not a cursor", tool))).toBe("malformed")
  })

  it("refuses payloads that carry a valid signature but are not what encode writes", () => {
    const tool = { tool: "t" }
    expect(reasonOf(decode(signRaw("[\"t\",\"e\",5,0]"), tool))).toBe("accepted")
    for (
      const text of [
        "[\"t\",\"e\",-1,0]",
        "[\"t\",\"e\",1.5,0]",
        "[\"t\",\"e\",9007199254740992,0]",
        "[\"t\",\"e\",-0,0]",
        "[\"t\",\"e\",5,3]",
        "[\"t\",\"e\",5,\"byte\"]",
        "[\"t\",\"../etc/passwd\",5,0]",
        "[\"t\",\"\",5,0]",
        "[\"t\",\"e\",5,0,null]",
        "[\"t\",\"e\",5,0,\"\"]",
        "[\"t\",\"e\",5,0,\"g\",1]",
        "[\"t\",\"e\",5]",
        "[\"t\", \"e\",5,0]",
        "[\"t\",\"e\",5e0,0]",
        "[\"\\u0074\",\"e\",5,0]",
        "{\"tool\":\"t\"}",
        "not json",
        "\uFFFD"
      ]
    ) expect(reasonOf(decode(signRaw(text), tool)), text).toBe("malformed")
    // Invalid UTF-8 in the payload.
    const payload = Buffer.from([0xff, 0xfe]).toString("base64url")
    const tag = createHmac("sha256", keyBytes).update(`spw1.${payload}`).digest().subarray(0, 16).toString("base64url")
    expect(reasonOf(decode(`spw1.${payload}.${tag}`, tool))).toBe("malformed")
  })

  it("says what was wrong and what to do in every message", () => {
    const messages = (["malformed", "version", "tampered", "foreign-tool", "unit"] as const).map((reason) =>
      new Cursor.CursorError({ reason, tool: "get_tool_output", detail: "some detail" }).message
    )
    for (const message of messages) {
      expect(message).toContain("get_tool_output")
      expect(message).toContain("some detail")
      expect(message).toMatch(/pass the cursor|start again/)
    }
    expect(messages[3]).toBe(
      "this cursor was not issued by get_tool_output (some detail); pass the cursor from this tool's last result"
    )
  })
})

describe("Cursor encode refusals", () => {
  const valid: Cursor.Position = { tool: "get_tool_output", evidence: "ev_1", offset: 0, unit: "byte" }
  const encodeExit = (p: Cursor.Position, layer: Layer.Layer<Cursor.CursorKey> = keyLayer) =>
    Effect.runSyncExit(Effect.provide(Cursor.encode(p), layer))

  it("dies on a position a host should never build", () => {
    const bad: Array<Cursor.Position> = [
      { ...valid, evidence: "a/b" },
      { ...valid, evidence: "../../etc/passwd" },
      { ...valid, evidence: "" },
      { ...valid, evidence: "x".repeat(129) },
      { ...valid, evidence: "caf\u00e9" },
      { ...valid, tool: "" },
      { ...valid, tool: "get tool output" },
      { ...valid, offset: -1 },
      { ...valid, offset: 1.5 },
      { ...valid, offset: Number.NaN },
      { ...valid, offset: Number.MAX_SAFE_INTEGER + 1 },
      { ...valid, unit: "page" as Cursor.Unit },
      { ...valid, generation: "" },
      { ...valid, generation: "g".repeat(65) },
      { ...valid, generation: "g/1" }
    ]
    for (const p of bad) {
      expect(Cursor.positionProblem(p), JSON.stringify(p)).toBeDefined()
      expect(dieMessage(encodeExit(p)), JSON.stringify(p)).toMatch(/^cannot encode cursor position: /)
    }
    expect(dieMessage(encodeExit({ ...valid, evidence: "a/b" }))).toContain("evidence must be 1 to 128 characters")
    expect(Cursor.positionProblem(valid)).toBeUndefined()
    expect(Cursor.positionProblem({ ...valid, evidence: "x".repeat(128), generation: "g".repeat(64) })).toBeUndefined()
  })

  it.prop("dies on evidence with any character outside [A-Za-z0-9._:-]", [
    id(60),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((c) => !idAlphabet.includes(c)),
    id(60)
  ], ([head, bad, tail]) => {
    expect(Exit.isFailure(encodeExit({ ...valid, evidence: head + bad + tail }))).toBe(true)
    expect(Cursor.positionProblem({ ...valid, evidence: head + bad + tail })).toBeDefined()
  })

  it("refuses keys shorter than 32 bytes when the layer is built", () => {
    expect(dieMessage(encodeExit(valid, Cursor.layerKey(new Uint8Array(31))))).toContain(
      "cursor key is 31 bytes; it must be at least 32 random bytes"
    )
    expect(dieMessage(encodeExit(valid, Cursor.layerKey(new Uint8Array(0))))).toContain("at least 32")
    expect(Exit.isSuccess(encodeExit(valid, Cursor.layerKey(new Uint8Array(32))))).toBe(true)
    expect(Exit.isSuccess(encodeExit(valid, Cursor.layerKey(new Uint8Array(64))))).toBe(true)
  })

  it("refuses a short key given to the service directly", () => {
    const short = Layer.succeed(Cursor.CursorKey, { key: new Uint8Array(8) })
    expect(dieMessage(encodeExit(valid, short))).toContain("at least 32")
    const decoded = Effect.runSyncExit(Effect.provide(Cursor.decode("spw1.a.b", { tool: "t" }), short))
    expect(dieMessage(decoded)).toContain("at least 32")
  })

  it("keeps its own copy of the key", () => {
    const key = Uint8Array.from(keyBytes)
    const service = Effect.runSync(Effect.provide(Cursor.CursorKey, Cursor.layerKey(key)))
    const built = Layer.succeed(Cursor.CursorKey, service)
    const cursor = encode(valid, built)
    key.fill(0)
    expect(service.key).toEqual(keyBytes)
    expect(Either.getOrThrow(decode(cursor, { tool: "get_tool_output" }, built))).toStrictEqual(valid)
  })
})

describe("the pure codec", () => {
  it.prop("signs exactly as HMAC-SHA256 does, for keys and messages of any length", [
    fc.uint8Array({ minLength: 0, maxLength: 200 }),
    fc.uint8Array({ minLength: 0, maxLength: 300 })
  ], ([key, message]) => {
    const expected = createHmac("sha256", key).update(message).digest()
    expect(Buffer.from(hmacSha256(key, message)).equals(expected)).toBe(true)
  })

  it.prop("a codec's cursors decode to what was encoded, and only for its own tool and unit", [position], ([p]) => {
    const c = Cursor.codec(keyBytes, p.tool, p.unit)
    const cursor = c.encode(p.evidence, p.offset, p.generation)
    expect(cursor).toBe(encode(p))
    expect(Either.getOrThrow(c.decode(cursor))).toStrictEqual(p)
    const otherUnit = Cursor.codec(keyBytes, p.tool, p.unit === "byte" ? "code_point" : "byte")
    expect(Either.isLeft(otherUnit.decode(cursor)) && otherUnit.decode(cursor).pipe(Either.flip, Either.getOrThrow).reason).toBe("unit")
    expect(Either.isLeft(Cursor.codec(otherKeyBytes, p.tool, p.unit).decode(cursor))).toBe(true)
  })
})
