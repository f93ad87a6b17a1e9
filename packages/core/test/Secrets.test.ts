import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { Effect, Either, FastCheck as fc, Layer } from "effect"

// Example credentials are generated or built by concatenation, so this file
// holds no literal token for secret scanners to flag.

const T = Secrets.STREAM_CONTEXT_BYTES
const enc = (text: string) => Buffer.from(text, "utf8")
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")
const stars = (value: string) => "*".repeat(Buffer.byteLength(value, "utf8"))

const concat = (parts: ReadonlyArray<Uint8Array>): Buffer => Buffer.concat(parts)

/** Streams `bytes` cut at `cuts`, checking the held-bytes bound after every push. */
const streamAll = (
  masker: Secrets.Masker,
  bytes: Uint8Array,
  cuts: ReadonlyArray<number>,
  maxHeld = Secrets.DEFAULT_MAX_HELD,
  reuseOutput = false
): Buffer => {
  const stream = masker.stream(undefined, { reuseOutput })
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  const parts: Array<Uint8Array> = []
  // lent output is good only until the next call: kept as a copy, then spoiled
  const take = (out: Uint8Array) => {
    parts.push(reuseOutput ? Uint8Array.from(out) : out)
    if (reuseOutput) out.fill(0x23)
  }
  let previous = 0
  for (const point of [...points, bytes.length]) {
    const chunk = bytes.subarray(previous, point)
    take(stream.push(chunk))
    expect(stream.heldBytes()).toBeLessThanOrEqual(maxHeld + T + chunk.length)
    previous = point
  }
  take(stream.end())
  expect(stream.heldBytes()).toBe(0)
  return concat(parts)
}

/** As `streamAll`, each output built in a fresh buffer from `into`, which is spoiled once the output is copied out. */
const streamInto = (masker: Secrets.Masker, bytes: Uint8Array, cuts: ReadonlyArray<number>): Buffer => {
  let given: Uint8Array | undefined
  const stream = masker.stream(undefined, {
    into: (length) => {
      given = new Uint8Array(length + 7)
      return given
    }
  })
  const parts: Array<Uint8Array> = []
  const take = (out: Uint8Array) => {
    if (out.length === 0) return
    // built in the buffer given last, which is the caller's again once the call returns
    expect(out.buffer).toBe(given!.buffer)
    parts.push(out.slice())
    // with a letter: context read from here would join a token's start to a word
    given!.fill(0x61)
  }
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  let previous = 0
  for (const point of [...points, bytes.length]) {
    take(stream.push(bytes.subarray(previous, point)))
    previous = point
  }
  take(stream.end())
  return concat(parts)
}

const everyByte = (bytes: Uint8Array) => Array.from({ length: bytes.length }, (_, i) => i)

const ghToken = () => "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

describe("maskText and maskBytes", () => {
  const masker = Secrets.unsafeMakeMasker()

  it("replaces a credential with as many stars as it has bytes", () => {
    const token = ghToken()
    expect(masker.maskText(`export GITHUB_TOKEN=${token}\n`)).toBe(`export GITHUB_TOKEN=${stars(token)}\n`)
  })

  it("counts UTF-8 bytes, not characters", () => {
    const value = "ñandú-Ünïcødé-" + "9x7Qz"
    const input = `héllo password=${value} ✓`
    const output = masker.maskText(input)
    expect(output).toBe(`héllo password=${stars(value)} ✓`)
    expect(Buffer.byteLength(output)).toBe(Buffer.byteLength(input))
  })

  it("preserves UTF-8 byte length for any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), (a, b) => {
        const input = `${a} password=${b}${b}x9Q! token: ${ghToken()}${a}`
        expect(Buffer.byteLength(masker.maskText(input))).toBe(Buffer.byteLength(input))
      })
    )
  })

  it("preserves length on arbitrary bytes, including invalid UTF-8 and binary", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        const input = concat([bytes, enc(` ${ghToken()} `), bytes])
        const output = masker.maskBytes(input)
        expect(output.length).toBe(input.length)
        expect(Buffer.from(output).includes(enc(ghToken()))).toBe(false)
      })
    )
    const binary = concat([Uint8Array.of(0xff, 0xfe, 0x00, 0xa0), enc(ghToken()), Uint8Array.of(0xc3)])
    const output = masker.maskBytes(binary)
    expect([...output.subarray(0, 4)]).toEqual([0xff, 0xfe, 0x00, 0xa0])
    expect(output.subarray(4, 4 + 40).every((byte) => byte === 0x2a)).toBe(true)
    expect(output[44]).toBe(0xc3)
  })

  it("finds credentials at any position and memory alignment, up to the last byte", () => {
    const known = "kv-" + "9Zq8Yw7X"
    const m = Secrets.unsafeMakeMasker({ knownValues: [known] })
    const twilio = "SK" + "0123456789abcdef".repeat(2)
    for (const secret of [ghToken(), known, twilio, "sk-" + "ant-" + "api03-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8"]) {
      for (let pad = 0; pad < 12; pad++) {
        for (let offset = 0; offset < 4; offset++) {
          const backing = Buffer.alloc(offset + pad + secret.length + 1)
          backing.write("-".repeat(pad) + secret, offset, "latin1")
          const input = backing.subarray(offset, offset + pad + secret.length)
          expect(Buffer.from(m.maskBytes(input)).toString("latin1")).toBe("-".repeat(pad) + stars(secret))
        }
      }
    }
  })

  it("does not change its input", () => {
    const input = enc(`token ${ghToken()}`)
    const copy = Buffer.from(input)
    masker.maskBytes(input)
    expect(copy.equals(input)).toBe(true)
  })

  it("keeps private key markers and line breaks, and masks an unterminated block through its body lines", () => {
    const body = ["MIIEow" + "IBAAKCAQEA7", "Zx9" + "k2Lq=="]
    const block = `-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}\n-----END RSA PRIVATE KEY-----\n`
    expect(masker.maskText(`a\n${block}b\n`)).toBe(
      `a\n-----BEGIN RSA PRIVATE KEY-----\n${body.map(stars).join("\n")}\n-----END RSA PRIVATE KEY-----\nb\n`
    )
    const open = `-----BEGIN PRIVATE KEY-----\n${body.join("\n")}\nanything after`
    expect(masker.maskText(open)).toBe(`-----BEGIN PRIVATE KEY-----\n${body.map(stars).join("\n")}\nanything after`)
  })
})

describe("custom rules", () => {
  it("runs rules without anchors over the whole text, masking the chosen group", () => {
    const rule: Secrets.SecretRule = {
      id: "ticket-secret",
      description: "Internal ticket secrets",
      pattern: /ticket=([A-Z]{3}-[0-9]{6})/,
      group: 1
    }
    const masker = Secrets.unsafeMakeMasker({ rules: [rule] })
    expect(masker.maskText("a ticket=ABC-123456 b ticket=XYZ-654321")).toBe("a ticket=********** b ticket=**********")
  })

  it("applies minEntropy and allow to the masked value", () => {
    const rule: Secrets.SecretRule = {
      id: "code",
      description: "Codes",
      pattern: /code:([a-z0-9]{8})/,
      group: 1,
      minEntropy: 2.5,
      allow: (value) => value.startsWith("test"),
      anchors: ["code:"]
    }
    const masker = Secrets.unsafeMakeMasker({ rules: [rule] })
    expect(masker.maskText("code:aaaaaaaa code:test1234 code:q8w7e6r5")).toBe("code:aaaaaaaa code:test1234 code:********")
  })

  it("supports block rules of its own", () => {
    const rule: Secrets.SecretRule = {
      id: "vault-dump",
      description: "Dumped vault sections",
      pattern: /BEGIN VAULT/,
      end: /END VAULT/,
      anchors: ["BEGIN VAULT"]
    }
    const masker = Secrets.unsafeMakeMasker({ rules: [rule] })
    expect(masker.maskText("x\nBEGIN VAULT\nab\ncd\nEND VAULT\ny")).toBe("x\nBEGIN VAULT\n**\n**\nEND VAULT\ny")
  })

  it("never widens a mask over a line break, even on invalid UTF-8", () => {
    const rule: Secrets.SecretRule = { id: "high", description: "High bytes", pattern: /[\x80-\xbf]{4}/ }
    const masker = Secrets.unsafeMakeMasker({ rules: [rule] })
    const input = Uint8Array.of(0x61, 0x0a, 0x80, 0x81, 0x82, 0x83, 0x0a)
    expect([...masker.maskBytes(input)]).toEqual([0x61, 0x0a, 0x2a, 0x2a, 0x2a, 0x2a, 0x0a])
    const split = Uint8Array.of(0x61, 0xe2, 0x80, 0x81, 0x82, 0x83)
    expect([...masker.maskBytes(split)]).toEqual([0x61, 0x2a, 0x2a, 0x2a, 0x2a, 0x2a])
  })
})

describe("known values", () => {
  const secret = "s3cr3t-" + "Hunter2-" + "ünï"
  const masker = Secrets.unsafeMakeMasker({ knownValues: [secret] })
  const masks = (form: string, around = (s: string) => `before ${s} after`) => {
    const input = around(form)
    expect(masker.maskText(input)).toBe(input.split(form).join(stars(form)))
  }

  it("masks the value wherever it appears", () => {
    masks(secret)
    masks(secret, (s) => `${s}${s}`)
  })

  it("masks its base64 forms, standard and URL-safe, padded or not", () => {
    const base64 = Buffer.from(secret).toString("base64")
    masks(base64)
    masks(base64.replace(/=+$/, ""))
    masks(Buffer.from(secret).toString("base64url"))
  })

  it("masks it inside longer base64 text at every alignment", () => {
    for (const prefix of ["", "u:", "us:", "use:"]) {
      const encoded = Buffer.from(`${prefix}${secret}:tail`).toString("base64")
      const output = masker.maskText(`Authorization: Basic ${encoded}`)
      const shifted = Buffer.concat([Buffer.alloc(prefix.length % 3), enc(secret)]).toString("base64")
      const core = shifted.slice(Math.ceil(((prefix.length % 3) * 8) / 6), Math.floor(((prefix.length % 3 + enc(secret).length) * 8) / 6))
      expect(output).not.toContain(core)
      expect(output.length).toBe(`Authorization: Basic ${encoded}`.length)
    }
  })

  it("masks its URL-encoded and JSON-escaped forms", () => {
    const tricky = "p@ss w/\"quote\"\\slash-é"
    const m = Secrets.unsafeMakeMasker({ knownValues: [tricky] })
    for (const form of [encodeURIComponent(tricky), JSON.stringify(tricky).slice(1, -1)]) {
      const input = `x=${form}&y`
      expect(m.maskText(input)).toBe(`x=${stars(form)}&y`)
    }
    const json = JSON.stringify({ password: tricky })
    expect(m.maskText(json)).not.toContain("quote")
  })

  it("masks every URL encoding a tool prints: RFC 3986, forms and encodeURIComponent, with either hex case", () => {
    const tricky = "p+ss!w*rd'(x)~ /y" + "9Zq"
    const m = Secrets.unsafeMakeMasker({ knownValues: [tricky] })
    const percent = (value: string, keep: RegExp, plus: boolean) =>
      Array.from(Buffer.from(value, "utf8"), (byte) => {
        const c = String.fromCharCode(byte)
        if (/[A-Za-z0-9]/.test(c) || keep.test(c)) return c
        if (c === " " && plus) return "+"
        return "%" + byte.toString(16).toUpperCase().padStart(2, "0")
      }).join("")
    const forms = [
      encodeURIComponent(tricky),
      percent(tricky, /[-_.~]/, false), // RFC 3986 unreserved only
      new URLSearchParams({ v: tricky }).toString().slice(2), // HTML forms
      percent(tricky, /[-_.~/]/, false), // Python quote
      percent(tricky, /[-_.~]/, true), // Python quote_plus
      percent(tricky, /[-_.]/, true) // PHP urlencode
    ]
    for (const form of [...forms, ...forms.map((f) => f.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()))]) {
      expect(m.maskText(`GET /login?user=a&secret=${form}&x=1`)).toBe(`GET /login?user=a&secret=${stars(form)}&x=1`)
    }
  })

  it("masks a value printed with its surrounding whitespace trimmed", () => {
    const m = Secrets.unsafeMakeMasker({ knownValues: ["  tr1mmed-" + "value\t"] })
    expect(m.maskText("value: tr1mmed-value.")).toBe(`value: ${stars("tr1mmed-value")}.`)
  })

  it("masks it in base64 wrapped at 64 and 76 columns, at any alignment, when most of it sits on one line", () => {
    const core = (bytes: Buffer, shift: number) =>
      Buffer.concat([Buffer.alloc(shift), bytes]).toString("base64").slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6))
    const value = Buffer.from(secret)
    for (const width of [64, 76]) {
      for (let before = 0; before < 80; before += 7) {
        const blob = Buffer.concat([Buffer.from("x".repeat(before) + "config:"), value, Buffer.from(";end of file\n".repeat(3))])
        const wrapped = blob.toString("base64").match(new RegExp(`.{1,${width}}`, "g"))!.join("\n")
        const output = masker.maskText(wrapped)
        expect(output.split("\n").map((l) => l.length)).toEqual(wrapped.split("\n").map((l) => l.length))
        const forms = [0, 1, 2].map((shift) => core(value, shift))
        for (const line of output.split("\n")) {
          for (const form of forms) {
            for (let i = 0; i + 8 <= form.length; i++) expect(line).not.toContain(form.slice(i, i + 8))
          }
        }
      }
    }
  })

  it("masks its shell-escaped forms", () => {
    const quoted = "it's a \"s3cret\" $x`y`"
    const m = Secrets.unsafeMakeMasker({ knownValues: [quoted] })
    const forms = [
      quoted.replace(/[ \t!"#$&'()*,;<>?[\\\]^`{|}~]/g, "\\$&"), // printf %q
      quoted.replace(/'/g, "'\\''"), // inside single quotes
      quoted.replace(/[\\"$`]/g, "\\$&") // inside double quotes
    ]
    for (const form of forms) expect(m.maskText(`+ login ${form} done`)).toBe(`+ login ${stars(form)} done`)
  })

  it("refuses values shorter than 8 bytes", () => {
    expect(() => Secrets.unsafeMakeMasker({ knownValues: ["short"] })).toThrow(Secrets.SecretTooShort)
    const error = Either.getLeft(Effect.runSync(Effect.either(Secrets.makeMasker({ knownValues: [{ name: "PIN", value: "1234" }] }))))
    expect(error._tag === "Some" && error.value).toMatchObject({ _tag: "SecretTooShort", name: "PIN", bytes: 4, minimum: 8 })
    expect(error._tag === "Some" && error.value.message).toContain("PIN")
    // 3 characters but 9 bytes is fine: the minimum is in bytes.
    expect(() => Secrets.unsafeMakeMasker({ knownValues: ["ééé€"] })).not.toThrow()
  })

  it("refuses values with line breaks", () => {
    expect(() => Secrets.unsafeMakeMasker({ knownValues: ["line one\nline two"] })).toThrow(Secrets.InvalidSecret)
    expect(() => Secrets.unsafeMakeMasker({ knownValues: ["line one\rline two"] })).toThrow(/each line/)
  })

  it.effect("fails makeMasker with the tagged errors", () =>
    Effect.gen(function*() {
      const short = yield* Effect.flip(Secrets.makeMasker({ knownValues: ["abc"] }))
      expect(short._tag).toBe("SecretTooShort")
      const invalid = yield* Effect.flip(Secrets.makeMasker({ knownValues: ["abcdefgh\nijklmnop"] }))
      expect(invalid._tag).toBe("InvalidSecret")
      expect(invalid.message).toContain("register each line")
    }))
})

describe("knownValuesFromEnv", () => {
  const env = {
    GITHUB_TOKEN: "gh-" + "value-1234567",
    AWS_SECRET_ACCESS_KEY: "aws-" + "secret-value-000",
    db_password: "short",
    API_KEY: "",
    HOME: "/home/runner-not-a-secret",
    UNSET_TOKEN: undefined,
    SSH_PRIVATE_KEY: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nxyz\n-----END OPENSSH PRIVATE KEY-----\n"
  }

  it("takes the values of secret-looking names, line by line, leaving short ones out", () => {
    const values = Secrets.knownValuesFromEnv(env)
    expect(values.map((v) => v.name)).toEqual([
      "AWS_SECRET_ACCESS_KEY",
      "GITHUB_TOKEN",
      "SSH_PRIVATE_KEY",
      "SSH_PRIVATE_KEY",
      "SSH_PRIVATE_KEY"
    ])
    expect(values.map((v) => v.value)).toContain("b3BlbnNzaC1rZXktdjEAAAAA")
    expect(values.every((v) => Buffer.byteLength(v.value) >= 8)).toBe(true)
  })

  it("lists the values it left out, without the values", () => {
    const skipped = Secrets.skippedValuesFromEnv(env)
    expect(skipped).toEqual([
      { name: "SSH_PRIVATE_KEY", bytes: 3, reason: "shorter than 8 bytes" },
      { name: "db_password", bytes: 5, reason: "shorter than 8 bytes" }
    ])
    expect(JSON.stringify(skipped)).not.toContain("short\"")
  })

  it("builds a masker from them", () => {
    const masker = Secrets.unsafeMakeMasker({ knownValues: Secrets.knownValuesFromEnv(env) })
    expect(masker.maskText(`using ${env.GITHUB_TOKEN}`)).toBe(`using ${stars(env.GITHUB_TOKEN)}`)
  })
})

describe("layers", () => {
  it.effect("layer provides a masker with the options", () =>
    Effect.gen(function*() {
      const masker = yield* Secrets.Secrets
      expect(masker.maskText("value: custom-known-1")).toBe(`value: ${stars("custom-known-1")}`)
    }).pipe(Effect.provide(Secrets.layer({ knownValues: ["custom-known-1"] }))))

  it.effect("layer fails on a refused value", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(Secrets.layer({ knownValues: ["tiny"] })).pipe(Effect.scoped))
      expect(error._tag).toBe("SecretTooShort")
    }))

  it.effect("layerFromEnv masks secret-looking environment values", () => {
    const name = "SPILLWAY_TEST_TOKEN"
    const value = "env-" + "secret-" + Math.random().toString(36).slice(2)
    return Effect.acquireUseRelease(
      Effect.sync(() => {
        process.env[name] = value
      }),
      () =>
        Effect.gen(function*() {
          const masker = yield* Secrets.Secrets
          expect(masker.maskText(`echo ${value}`)).toBe(`echo ${stars(value)}`)
          expect(masker.maskText(`token ${ghToken()}`)).toBe(`token ${stars(ghToken())}`)
        }).pipe(Effect.provide(Secrets.layerFromEnv)),
      () =>
        Effect.sync(() => {
          delete process.env[name]
        })
    )
  })
})

// --- Streaming ---------------------------------------------------------------

const DIGITS = "0123456789"
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const HEX = "0123456789abcdef"

/** Random secret text: every fourth character a digit, so no 8 bytes of it can come from the digit-free noise. */
const secretChars = (alphabet: string, length: number) =>
  fc.array(fc.nat(alphabet.length - 1), { minLength: length, maxLength: length }).map((picks) =>
    picks.map((k, i) => (i % 4 === 0 ? DIGITS[k % 10] : alphabet[k])).join("")
  ).filter((secret) => new Set(secret).size >= Math.min(8, length / 3)) // a run of one or two characters reads as a placeholder

const noiseWords = ["build", "the", "compile", "ok", "warning:", "src/index.ts", "passed", "module", "-", "=", "token", "key", "basic", "secret", "://", "a.b", "ñandú", "é", "✓"]
const noiseLine = fc.array(fc.constantFrom(...noiseWords), { maxLength: 12 }).map((words) => words.join(" "))

interface Plant {
  readonly lines: ReadonlyArray<string>
  /** Parts that must never appear in the output, not even 8 bytes of them. */
  readonly secrets: ReadonlyArray<string>
}

const knownSecret = "known-" + "0a1b2c3d4e5f"

const plant: fc.Arbitrary<Plant> = fc.oneof(
  secretChars(ALNUM, 36).map((s) => ({ lines: [`export GITHUB_TOKEN=ghp_${s}`], secrets: [s] })),
  secretChars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16).map((s) => ({ lines: [`aws_access_key_id = AKIA${s}`], secrets: [s] })),
  fc.tuple(secretChars(DIGITS, 12), secretChars(ALNUM, 24)).map(([a, s]) => ({ lines: [`xoxb-${a}-${s} posted`], secrets: [s] })),
  secretChars(ALNUM, 24).map((s) => ({ lines: [`STRIPE=sk_${"live"}_${s};`], secrets: [s] })),
  fc.tuple(secretChars(ALNUM, 20), secretChars(ALNUM, 40), secretChars(ALNUM, 30)).map(([a, b, c]) => ({
    lines: [`Authorization: Bearer eyJ${a}.eyJ${b}.${c}`],
    secrets: [a, b, c]
  })),
  secretChars(ALNUM, 18).map((s) => ({ lines: [`git clone https://ci:${s}@example.com/r.git`], secrets: [s] })),
  secretChars(ALNUM, 22).map((s) => ({ lines: [`DB_PASSWORD=${s}`], secrets: [s] })),
  fc.constant({ lines: [`echo ${knownSecret} | login`], secrets: [knownSecret] }),
  fc.constant({
    lines: [`auth ${Buffer.from(knownSecret).toString("base64")}`],
    secrets: [Buffer.from(knownSecret).toString("base64").slice(0, 20)]
  }),
  fc.array(secretChars(ALNUM + "+/", 64), { minLength: 1, maxLength: 4 }).map((body) => ({
    lines: ["-----BEGIN RSA PRIVATE KEY-----", ...body, "-----END RSA PRIVATE KEY-----"],
    secrets: body
  })),
  secretChars(HEX, 40).map((s) => ({ lines: ["-----BEGIN OPENSSH PRIVATE KEY-----", s], secrets: [s] }))
)

const document = fc.array(fc.oneof(noiseLine.map((line): Plant => ({ lines: [line], secrets: [] })), plant), { maxLength: 14 })
  .chain((items) => fc.tuple(fc.constant(items), fc.boolean()))
  .map(([items, trailingNewline]) => {
    const text = items.flatMap((item) => item.lines).join("\n") + (trailingNewline ? "\n" : "")
    return { bytes: enc(text), secrets: items.flatMap((item) => item.secrets) }
  })

const cuts = fc.array(fc.nat(), { maxLength: 40 })

/** Fails when the output holds a secret or any 8 bytes of one. */
const expectNoLeak = (output: Uint8Array, secrets: ReadonlyArray<string>) => {
  const haystack = Buffer.from(output)
  for (const secret of secrets) {
    expect(haystack.includes(enc(secret)), secret).toBe(false)
    for (let i = 0; i + 8 <= secret.length; i++) {
      expect(haystack.includes(enc(secret.slice(i, i + 8))), `${secret} at ${i}`).toBe(false)
    }
  }
}

describe("stream", () => {
  const masker = Secrets.unsafeMakeMasker({ knownValues: [knownSecret] })

  it("emits complete lines at once and holds the incomplete last line", () => {
    const stream = masker.stream()
    expect(text(stream.push(enc("first line\nsecond")))).toBe("first line\n")
    expect(stream.heldBytes()).toBe(6)
    expect(text(stream.push(enc(` ${ghToken().slice(0, 10)}`)))).toBe("")
    expect(text(stream.push(enc(`${ghToken().slice(10)}\nthird`)))).toBe(`second ${stars(ghToken())}\n`)
    expect(text(stream.end())).toBe("third")
    expect(text(stream.end())).toBe("")
  })

  it("masks a credential split at any byte, in two or in one-byte chunks", () => {
    const input = enc(`run ${ghToken()} and ${knownSecret} and ${Buffer.from(knownSecret).toString("base64")}\nnext`)
    const whole = Buffer.from(masker.maskBytes(input))
    for (let i = 0; i <= input.length; i++) expect(streamAll(masker, input, [i])).toEqual(whole)
    expect(streamAll(masker, input, everyByte(input))).toEqual(whole)
  })

  it("masks a private key block arriving one byte at a time, terminated or not", () => {
    const block = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE" + "IKq9x2\nAwEHoUQD\n-----END EC PRIVATE KEY-----\nok\n"
    const input = enc(block + block.slice(0, 60))
    const output = streamAll(masker, input, everyByte(input))
    expect(output).toEqual(Buffer.from(masker.maskBytes(input)))
    expect(text(output)).not.toContain("IKq9x2")
    expect(text(output)).not.toContain("MHcC")
  })

  it("keeps a key block open across emitted lines", () => {
    const stream = masker.stream()
    const out = [
      stream.push(enc("-----BEGIN PRIVATE KEY-----\nMIIE" + "vQIBADAN\n")),
      stream.push(enc("BgkqhkiG" + "9w0BAQEF\n")),
      stream.push(enc("-----END PRIVATE KEY-----\nGGGG" + "HHHH\n")),
      stream.end()
    ]
    expect(text(concat(out))).toBe(
      `-----BEGIN PRIVATE KEY-----\n${stars("MIIEvQIBADAN")}\n${stars("BgkqhkiG9w0BAQEF")}\n-----END PRIVATE KEY-----\nGGGGHHHH\n`
    )
  })

  it("cuts lines longer than maxHeldBytes without letting a credential through", () => {
    const small = Secrets.unsafeMakeMasker({ knownValues: [knownSecret], maxHeldBytes: 100 })
    const filler = "lorem ipsum dolor sit amet ".repeat(700)
    const input = enc(`${filler}${ghToken()} ${filler} ${knownSecret} ${filler}`)
    const stream = small.stream()
    const parts: Array<Uint8Array> = []
    let emittedBeforeEnd = 0
    for (let i = 0; i < input.length; i += 1000) {
      const part = stream.push(input.subarray(i, i + 1000))
      emittedBeforeEnd += part.length
      parts.push(part)
      expect(stream.heldBytes()).toBeLessThanOrEqual(100 + T + 1000)
    }
    parts.push(stream.end())
    expect(emittedBeforeEnd).toBeGreaterThan(input.length - 2 * T - 1000)
    const output = concat(parts)
    expect(output.length).toBe(input.length)
    expectNoLeak(output, [ghToken().slice(4), knownSecret])
  })

  it("masks a credential that a long-line cut falls inside", () => {
    const small = Secrets.unsafeMakeMasker({ maxHeldBytes: 100 })
    const token = ghToken()
    for (let d = 1; d < token.length; d++) {
      // One push makes the stream cut the line `T` bytes before its end, `d` bytes into the token.
      const input = enc("x".repeat(1000) + ` ${token} ` + "y".repeat(T + d - token.length - 1))
      const stream = small.stream()
      const first = stream.push(input)
      expect(first.length).toBe(1001 + d)
      const output = concat([first, stream.end()])
      expect(text(output)).toBe("x".repeat(1000) + ` ${stars(token)} ` + "y".repeat(T + d - token.length - 1))
    }
  })

  it("holds back the last CONTEXT bytes of a long line, so a long credential is seen whole", () => {
    const small = Secrets.unsafeMakeMasker({ maxHeldBytes: 100 })
    const header = "eyJ" + "hbGciOiJSUzI1NiJ9".repeat(50)
    const payload = "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0".repeat(100)
    const signature = "c2lnbmF0dXJl".repeat(20)
    const stream = small.stream()
    const parts = [
      stream.push(enc("z".repeat(20000) + " " + header)),
      stream.push(enc("." + payload)),
      stream.push(enc("." + signature + " done")),
      stream.end()
    ]
    const output = text(concat(parts))
    expect(output).toBe("z".repeat(20000) + " " + stars(`${header}.${payload}.${signature}`) + " done")
  })

  it("keeps the output length equal to the input length, for any bytes and chunking", () => {
    const small = Secrets.unsafeMakeMasker({ maxHeldBytes: 64 })
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), cuts, (bytes, at) => {
        expect(streamAll(masker, bytes, at).length).toBe(bytes.length)
        expect(streamAll(small, bytes, at, 64).length).toBe(bytes.length)
      })
    )
  })

  it("gives exactly the whole-text result when lines fit in maxHeldBytes", () => {
    fc.assert(
      fc.property(document, cuts, ({ bytes }, at) => {
        expect(streamAll(masker, bytes, at)).toEqual(Buffer.from(masker.maskBytes(bytes)))
      }),
      { numRuns: 200 }
    )
  })

  it("gives exactly the whole-text result when it reuses its output buffer, whose bytes are spoiled after each call", () => {
    fc.assert(
      fc.property(document, cuts, fc.integer({ min: 16, max: 300 }), ({ bytes, secrets }, at, maxHeld) => {
        const small = Secrets.unsafeMakeMasker({ knownValues: [knownSecret], maxHeldBytes: maxHeld })
        expect(streamAll(masker, bytes, at, Secrets.DEFAULT_MAX_HELD, true)).toEqual(Buffer.from(masker.maskBytes(bytes)))
        const cutLines = streamAll(small, bytes, at, maxHeld, true)
        expect(cutLines).toEqual(streamAll(small, bytes, at, maxHeld))
        expectNoLeak(cutLines, secrets)
      }),
      { numRuns: 200 }
    )
  })

  it("with into, builds each output in the buffer given and keeps nothing there once it returns", () => {
    fc.assert(
      fc.property(document, cuts, fc.integer({ min: 16, max: 300 }), ({ bytes, secrets }, at, maxHeld) => {
        const small = Secrets.unsafeMakeMasker({ knownValues: [knownSecret], maxHeldBytes: maxHeld })
        expect(streamInto(masker, bytes, at)).toEqual(streamAll(masker, bytes, at))
        const cutLines = streamInto(small, bytes, at)
        expect(cutLines).toEqual(streamAll(small, bytes, at, maxHeld))
        expectNoLeak(cutLines, secrets)
      }),
      { numRuns: 200 }
    )
  })

  it("builds a window where its largest part lies at that part's offset modulo 16, in a buffer of its own or one given", () => {
    // a large copy whose destination lies 1 to 15 bytes past its source modulo 4096 is many times slower on some processors
    const given = new Uint8Array(1 << 20)
    for (const into of [undefined, (length: number) => given.subarray(3, 3 + length)]) {
      for (let offset = 0; offset < 20; offset++) {
        for (const held of [0, 1, 7, 16, 33]) {
          const stream = masker.stream(undefined, { reuseOutput: true, into })
          // a line begun and held, then a large part that ends it and more lines
          expect(stream.push(enc("x".repeat(held)))).toHaveLength(0)
          const backing = new Uint8Array(offset + 65536).fill(0x61)
          const part = backing.subarray(offset)
          for (let i = 99; i < part.length; i += 100) part[i] = 10
          const out = stream.push(part)
          expect(out.length).toBe(held + 65500)
          if (into !== undefined) expect(out.buffer).toBe(given.buffer)
          // the window starts with the held bytes: the part's copy starts `held` bytes into it
          expect((out.byteOffset + held - part.byteOffset) & 15, `held ${held}, ${offset} bytes in`).toBe(0)
          expect(text(out)).toBe("x".repeat(held) + text(part.subarray(0, 65500)))
        }
      }
    }
  })

  it("with into, a token a long line's cut goes through is masked from the context the stream kept", () => {
    // past the long-line bound a line is cut every few hundred bytes: over these shifts some cuts fall inside the token
    const small = Secrets.unsafeMakeMasker({ maxHeldBytes: 256 })
    for (let shift = 0; shift < 270; shift += 9) {
      const line = enc("x".repeat(shift) + " lorem ipsum ".repeat(1000) + ghToken() + " dolor ".repeat(2000) + "\n")
      const pushes = Array.from({ length: Math.ceil(line.length / 7) }, (_, i) => 7 * (i + 1))
      const output = streamInto(small, line, pushes)
      expectNoLeak(output, [ghToken()])
      if (shift === 0) expect(Buffer.compare(output, streamAll(small, line, pushes, 256))).toBe(0)
    }
  })

  it("with reuseOutput, hands out views of one buffer instead of a new one per chunk", () => {
    const stream = masker.stream(undefined, { reuseOutput: true })
    const buffers = new Set<ArrayBufferLike>()
    for (let i = 0; i < 50; i++) buffers.add(stream.push(enc(`line ${i} of plain output\n`.repeat(100))).buffer)
    // one buffer, grown once when a longer chunk came
    expect(buffers.size).toBeLessThanOrEqual(2)
    const fresh = masker.stream()
    const own = new Set<ArrayBufferLike>()
    for (let i = 0; i < 50; i++) own.add(fresh.push(enc(`line ${i}\n`)).buffer)
    expect(own.size).toBe(50)
  })

  it("gives exactly the whole-text result on arbitrary bytes", () => {
    const pieces = fc.array(
      fc.oneof(
        fc.uint8Array({ maxLength: 40 }),
        fc.constantFrom(enc("\n"), enc(` ${ghToken()} `), enc(knownSecret), enc("password=\u00e9\u00e8Zq9!x7Lp\n")),
        fc.constantFrom(enc("-----BEGIN PRIVATE KEY-----\n"), enc("-----END PRIVATE KEY-----"))
      ),
      { maxLength: 30 }
    ).map((parts) => concat(parts))
    fc.assert(
      fc.property(pieces, cuts, (bytes, at) => {
        expect(streamAll(masker, bytes, at)).toEqual(Buffer.from(masker.maskBytes(bytes)))
      }),
      { numRuns: 300 }
    )
  })

  it("gives exactly the whole-text result with one-byte chunks", () => {
    fc.assert(
      fc.property(document, ({ bytes }) => {
        expect(streamAll(masker, bytes, everyByte(bytes))).toEqual(Buffer.from(masker.maskBytes(bytes)))
      }),
      { numRuns: 40 }
    )
  })

  it("never lets a planted secret or 8 bytes of it through, whatever the chunking", () => {
    fc.assert(
      fc.property(document, cuts, ({ bytes, secrets }, at) => {
        expectNoLeak(masker.maskBytes(bytes), secrets)
        expectNoLeak(streamAll(masker, bytes, at), secrets)
      }),
      { numRuns: 200 }
    )
  })

  it("never lets a secret through in lines far longer than maxHeldBytes", () => {
    const small = Secrets.unsafeMakeMasker({ knownValues: [knownSecret], maxHeldBytes: 256 })
    const longDocument = fc
      .array(fc.tuple(fc.nat(3000), plant), { minLength: 1, maxLength: 10 })
      .map((items) => {
        const text = items
          .map(([pad, p]) => "lorem ipsum dolor ".repeat(pad % 1500) + p.lines.join("\n") + "\n")
          .join("")
        return { bytes: enc(text), secrets: items.flatMap(([, p]) => p.secrets) }
      })
    fc.assert(
      fc.property(longDocument, cuts, ({ bytes, secrets }, at) => {
        const output = streamAll(small, bytes, at, 256)
        expect(output.length).toBe(bytes.length)
        expectNoLeak(output, secrets)
        // the context carried over a cut is the stream's own, not the buffer it built the last output in
        expect(Buffer.compare(streamInto(small, bytes, at), output)).toBe(0)
      }),
      { numRuns: 60 }
    )
  })

  it("starts over after end", () => {
    const stream = masker.stream()
    expect(text(stream.push(enc("-----BEGIN PRIVATE KEY-----\nMIIE" + "vQIB")))).toBe("-----BEGIN PRIVATE KEY-----\n")
    expect(text(stream.end())).toBe("********")
    expect(text(concat([stream.push(enc("plain\n")), stream.end()]))).toBe("plain\n")
  })

  it("does not keep a reference to pushed chunks", () => {
    const stream = masker.stream()
    const chunk = enc(`x ${ghToken().slice(0, 20)}`)
    stream.push(chunk)
    chunk.fill(0x41)
    const rest = enc(`${ghToken().slice(20)}\n`)
    expect(text(concat([stream.push(rest), stream.end()]))).toBe(`x ${stars(ghToken())}\n`)
  })
})
