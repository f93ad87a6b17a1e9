import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { FastCheck as fc } from "effect"

// Private key blocks: which lines of an output are masked because of a
// BEGIN marker. Key material is generated, so this file holds no literal key.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(7)
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const base64Line = (length: number) => Array.from({ length }, (_, i) => (i % 7 === 3 ? "7" : B64[Math.floor(random() * 64)])).join("")
const body = (lines: number, width = 64) => [...Array.from({ length: lines - 1 }, () => base64Line(width)), base64Line(22) + "=="]

const masker = Secrets.unsafeMakeMasker()

/** The 1-based numbers of the lines masking changed, and checks that a changed line is all stars but for its indentation. */
const maskedLines = (text: string): Array<number> => {
  const before = text.split("\n")
  const after = masker.maskText(text).split("\n")
  expect(after.length).toBe(before.length)
  const changed: Array<number> = []
  before.forEach((line, i) => {
    if (after[i] !== line) changed.push(i + 1)
  })
  return changed
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

const grepOutput = [
  "src/pem.ts:3:const BEGIN = \"-----BEGIN RSA PRIVATE KEY-----\"",
  "src/pem.ts:4:const END = \"-----END RSA PRIVATE KEY-----\"",
  "src/pem.ts:5:export const isKey = (text: string) => text.startsWith(BEGIN)",
  ...Array.from({ length: 40 }, (_, i) => `src/module${i}.ts:${i + 10}:  return values.map((v) => v * ${i})`)
]

describe("private key blocks", () => {
  it("masks nothing for a marker in a line of code (grep -rn output)", () => {
    expect(maskedLines(grepOutput.join("\n") + "\n")).toEqual([])
  })

  it("masks nothing for markers in a diff of code", () => {
    const diff = [
      "diff --git a/test/keys.test.ts b/test/keys.test.ts",
      "+const fixture = \"-----BEGIN RSA PRIVATE KEY-----\\n\" +",
      "+  \"line one of the fixture\\n\" +",
      "+  \"-----END RSA PRIVATE KEY-----\\n\"",
      "+it(\"parses\", () => expect(parse(fixture)).toBeDefined())",
      " export {}"
    ]
    expect(maskedLines(diff.join("\n"))).toEqual([])
  })

  it("masks exactly the body lines of a whole key, and nothing after it", () => {
    const key = body(26)
    const text = ["$ cat id_rsa", "-----BEGIN RSA PRIVATE KEY-----", ...key, "-----END RSA PRIVATE KEY-----", "$ ls", "id_rsa id_rsa.pub", ...grepOutput].join("\n")
    expect(maskedLines(text)).toEqual(range(3, 28))
    const masked = masker.maskText(text)
    for (const line of key) expect(masked).not.toContain(line)
  })

  it("masks the body lines of a key without END, and stops at the first line that cannot belong to it", () => {
    const text = ["-----BEGIN OPENSSH PRIVATE KEY-----", ...body(8, 70), "npm ERR! code ELIFECYCLE", "done in 3.2s", "MIIEow"].join("\n")
    expect(maskedLines(text)).toEqual(range(2, 9))
  })

  it("leaves a malformed END line and everything after it visible", () => {
    const text = ["-----BEGIN PRIVATE KEY-----", ...body(5), "-----END PRIVATE KEY----", "build finished", ...grepOutput.slice(3)].join("\n")
    expect(maskedLines(text)).toEqual(range(2, 6))
  })

  it("masks a key followed by ordinary lines, but none of them", () => {
    const ordinary = ["", "Starting server on :8080", "GET /healthz 200 1ms", "AbCdEf is not a key line but looks close", "ok"]
    const text = ["-----BEGIN EC PRIVATE KEY-----", ...body(3), "-----END EC PRIVATE KEY-----", ...ordinary].join("\n")
    expect(maskedLines(text)).toEqual([2, 3, 4])
  })

  it("masks an indented key in YAML and a key in a diff of a .pem file", () => {
    const yaml = ["tls:", "  key: |", "    -----BEGIN PRIVATE KEY-----", ...body(4).map((l) => `    ${l}`), "    -----END PRIVATE KEY-----", "  cert: ./cert.pem"].join("\n")
    expect(maskedLines(yaml)).toEqual(range(4, 7))
    const masked = masker.maskText(yaml).split("\n")
    expect(masked[3]).toMatch(/^ {4}\*+$/)
    const diff = ["--- /dev/null", "+++ b/deploy.pem", "@@ -0,0 +1,5 @@", "+-----BEGIN RSA PRIVATE KEY-----", ...body(3).map((l) => `+${l}`), "+-----END RSA PRIVATE KEY-----", " unchanged"].join("\n")
    expect(maskedLines(diff)).toEqual([5, 6, 7])
  })

  it("masks the headers and body of an encrypted PEM key and of a PGP key, checksum included", () => {
    const pem = ["-----BEGIN RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,3F17F5316E2BAC89", "", ...body(4), "-----END RSA PRIVATE KEY-----", "next"].join("\n")
    expect(maskedLines(pem)).toEqual([2, 3, 5, 6, 7, 8])
    const pgp = ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "Version: GnuPG v2", "", ...body(3), "=" + base64Line(4), "-----END PGP PRIVATE KEY BLOCK-----", "gpg: done"].join("\n")
    expect(maskedLines(pgp)).toEqual([2, 4, 5, 6, 7])
  })

  it("keeps CRLF line breaks and masks the base64 before an END marker on its line", () => {
    const lines = body(3)
    const text = `-----BEGIN PRIVATE KEY-----\r\n${lines[0]}\r\n${lines[1]}\r\n${lines[2]}-----END PRIVATE KEY-----\r\nafter\r\n`
    expect(masker.maskText(text)).toBe(
      `-----BEGIN PRIVATE KEY-----\r\n${"*".repeat(64)}\r\n${"*".repeat(64)}\r\n${"*".repeat(24)}-----END PRIVATE KEY-----\r\nafter\r\n`
    )
  })

  it("masks at most 4096 body lines", () => {
    const text = ["-----BEGIN PRIVATE KEY-----", ...Array.from({ length: 4100 }, () => base64Line(64))].join("\n")
    expect(maskedLines(text)).toEqual(range(2, 4097))
  })

  it("masks a key written on one line, as JSON holds one", () => {
    const lines = body(3)
    const json = `{"private_key": "-----BEGIN PRIVATE KEY-----\\n${lines.join("\\n")}\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@example.iam.gserviceaccount.com"}`
    const masked = masker.maskText(json)
    for (const line of lines) expect(masked).not.toContain(line)
    expect(masked).toContain("\"client_email\": \"ci@example.iam.gserviceaccount.com\"")
  })

  it("masks the same lines however the output is cut into chunks", () => {
    const documents = [
      [...grepOutput.slice(0, 4), "-----BEGIN RSA PRIVATE KEY-----", ...body(6), "-----END RSA PRIVATE KEY-----", "tail"].join("\n"),
      ["-----BEGIN OPENSSH PRIVATE KEY-----", ...body(5, 70), "not a key", "-----BEGIN PRIVATE KEY-----", ...body(3)].join("\n"),
      ["-----BEGIN PRIVATE KEY-----", ...body(4), "-----END PRIVATE KEY----", "after"].join("\r\n")
    ]
    fc.assert(
      fc.property(fc.constantFrom(...documents), fc.array(fc.nat(), { maxLength: 30 }), fc.integer({ min: 0, max: 200 }), (text, cuts, held) => {
        const small = Secrets.unsafeMakeMasker({ maxHeldBytes: held })
        const bytes = new TextEncoder().encode(text)
        const stream = small.stream()
        const parts: Array<Uint8Array> = []
        let previous = 0
        for (const point of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
          parts.push(stream.push(bytes.subarray(previous, point)))
          previous = point
        }
        parts.push(stream.push(bytes.subarray(previous)), stream.end())
        expect(Buffer.concat(parts).toString("utf8")).toBe(small.maskText(text))
      }),
      { numRuns: 300 }
    )
  })
})

describe("a body line that starts with +", () => {
  // `+` is a base64 character: a key's line may start with it, and a diff's mark before a line must not keep it visible
  const plusLines = (lines: ReadonlyArray<string>) => lines.map((l, i) => (i % 3 === 1 ? "+" + l.slice(1) : l))

  it("masks the + with the rest of the line in a key as it is printed", () => {
    const key = ["-----BEGIN RSA PRIVATE KEY-----", ...plusLines(body(12)), "-----END RSA PRIVATE KEY-----"]
    const masked = masker.maskText(key.join("\n")).split("\n")
    for (const line of masked.slice(1, -1)) expect(line).toMatch(/^\*+$/)
    expect(masked[0]).toBe(key[0])
  })

  it("masks a diff's added key lines whole, mark and all, and keeps a mark with a blank after it", () => {
    const lines = plusLines(body(8))
    const diff = ["+-----BEGIN OPENSSH PRIVATE KEY-----", ...lines.map((l) => "+" + l), "+-----END OPENSSH PRIVATE KEY-----"]
    const masked = masker.maskText(diff.join("\n")).split("\n")
    for (const line of masked.slice(1, -1)) expect(line).toMatch(/^\*+$/)
    const quoted = ["+ -----BEGIN OPENSSH PRIVATE KEY-----", ...lines.map((l) => "+ " + l), "+ -----END OPENSSH PRIVATE KEY-----"]
    const kept = masker.maskText(quoted.join("\n")).split("\n")
    for (const line of kept.slice(1, -1)) expect(line).toMatch(/^\+ \*+$/)
  })
})
