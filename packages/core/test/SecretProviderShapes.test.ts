import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { publishedValueList } from "../src/internal/secrets/publishedValues.js"

// Values whose provider is known (by the key that holds them or by their own
// prefix) and that break its documented shape are kept; published example
// credentials are kept; a random secret stays masked whatever its shape.
// Tokens are generated here (seeded), so this file holds no literal token.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(40_2026)
const LOWER = "abcdefghijklmnopqrstuvwxyz"
const DIGITS = "0123456789"
const ALNUM = LOWER.toUpperCase() + LOWER + DIGITS
const URLSAFE = ALNUM + "_-"
/** Random characters of `chars`, a digit every fifth so no draw reads as words. */
const gen = (chars: string, n: number) =>
  Array.from({ length: n }, (_, i) => (i % 5 === 2 ? DIGITS : chars)[Math.floor(random() * (i % 5 === 2 ? 10 : chars.length))]).join("")
const digits = (n: number) => String(1 + Math.floor(random() * 9)) + gen(DIGITS, n - 1)

const masker = Secrets.unsafeMakeMasker()
const mask = (text: string) => masker.maskText(text)
const kept = (text: string) => expect(mask(text), text).toBe(text)
/** `text` with `value` (which occurs in it once) all stars and the rest byte for byte. */
const hidden = (text: string, value: string) => {
  const at = text.indexOf(value)
  expect(mask(text), text).toBe(text.slice(0, at) + "*".repeat(value.length) + text.slice(at + value.length))
}

describe("published example credentials", () => {
  it("keeps each value the catalogue lists as published, bare and under a key", () => {
    expect(publishedValueList.length).toBeGreaterThanOrEqual(15)
    for (const [value] of publishedValueList) {
      kept(value)
      kept(`SERVICE_API_KEY="${value}"`)
      kept(`<add key="ClearTextPassword" value="${value}" />`)
    }
  })

  it("masks a value one character away from a published one: only the exact value is public", () => {
    // a value that runs through the alphabet is a placeholder whatever its last character
    for (const [value] of publishedValueList.filter(([v]) => !/abcdefg/.test(v))) {
      const last = value[value.length - 1]!
      const changed = value.slice(0, -1) + (/[0-9]/.test(last) ? (last === "7" ? "3" : "7") : last === "q" ? "k" : "q")
      hidden(`<add key="ClearTextPassword" value="${changed}" />`, changed)
    }
  })
})

describe("values that break the documented shape of the provider their key names", () => {
  const id = () => digits(9)

  it("masks a Telegram bot token of the documented shape under a key naming Telegram", () => {
    for (const key of ["TELEGRAM_BOT_TOKEN", "telegram_api_token", "telegramToken"]) {
      const token = `${id()}:AA${gen(URLSAFE, 33)}`
      hidden(`${key} = "${token}"`, token)
    }
  })

  it("keeps a malformed one: an id of 4 or 17 digits, or 34 or 36 characters after the colon", () => {
    for (const token of [
      `${digits(4)}:A${gen(LOWER + DIGITS, 34)}`,
      `${digits(17)}:A${gen(LOWER + DIGITS, 34)}`,
      `${id()}:A${gen(LOWER + DIGITS, 33)}`,
      `${id()}:A_${gen(LOWER + DIGITS, 34)}`,
      `${id()}:Ahello-${gen(LOWER + DIGITS, 34)}`
    ]) {
      kept(`telegram_api_token = "${token}"`)
      kept(`TELEGRAM_BOT_TOKEN=${token}`)
    }
  })

  it("masks a random value of no known shape under the same key: a new format must not leak", () => {
    for (const n of [16, 40, 64]) {
      const token = gen(URLSAFE, n)
      hidden(`TELEGRAM_BOT_TOKEN=${token}`, token)
    }
  })

  it("judges a value under a password key as a password, whatever provider the key names", () => {
    const value = `${digits(4)}:A${gen(LOWER + DIGITS, 34)}`
    hidden(`TELEGRAM_PASSWORD=${value}`, value)
  })

  it("keeps a short value under a key naming Sumo Logic, and masks its documented key and any random one", () => {
    kept("SUMO_ACCESS_KEY: AbCeFG123")
    kept("sumologic_access_key = \"Secret12\"")
    for (const value of [gen(ALNUM, 64), gen(ALNUM, 20)]) hidden(`SUMO_ACCESS_KEY: ${value}`, value)
  })

  it("does not take a word that only starts like a provider's name for it (consumo, summary)", () => {
    const value = "Ab" + gen(ALNUM, 9)
    hidden(`consumo_token = "${value}"`, value)
    hidden(`summaryToken = "${value}"`, value)
  })
})

describe("values that start with a format's prefix and break that format", () => {
  it("keeps a prefix with a body too short to be a secret of its own", () => {
    for (const prefix of ["sm_aat_", "sm_sat_", "dckr_pat_", "glpat-"]) {
      const value = prefix + gen(LOWER + DIGITS, 10)
      kept(`nonMatchingToken := "${value}"`)
    }
  })

  it("masks a prefix with a long random body, whether the format takes it or not", () => {
    for (const value of ["sm_aat_" + gen(ALNUM, 16), "sm_aat_" + gen(ALNUM, 24), "glpat-" + gen(URLSAFE, 20)]) {
      hidden(`api_token = "${value}"`, value)
    }
  })
})

describe("templates with the secret left out", () => {
  it("keeps a token whose last part is a filler of #, and masks the token whole", () => {
    const head = `xoxp-${digits(12)}-${digits(12)}-${digits(12)}-`
    kept(`"token4": "${head}${"#".repeat(20)}"`)
    kept(`${head}${"#".repeat(32)}`)
    const token = head + gen(LOWER + DIGITS, 32)
    hidden(`"token4": "${token}"`, token)
  })

  it("keeps values SOPS has encrypted under stringData:, and the list item after the entries", () => {
    const encrypted = `ENC[AES256_GCM,data:${gen(ALNUM, 8)}==,iv:${gen(ALNUM, 43)}=,tag:${gen(ALNUM, 22)}==,type:str]`
    kept(`    stringData:\n        db-password: ${encrypted}\n`)
    const password = gen(ALNUM, 14)
    const text = `  stringData:\n    db-password: ${password}\n  - name: my-secret-name-1\n`
    hidden(text, password)
  })
})

describe("hostile input", () => {
  it("masks megabytes of malformed and random values under provider keys in bounded time, keeping the length", () => {
    const lines: Array<string> = []
    for (let i = 0; i < 20_000; i++) {
      lines.push(
        i % 3 === 0
          ? `telegram_api_token = "${digits(4)}:A${"a1".repeat(2000)}"`
          : i % 3 === 1
          ? `sm_aat_${"z".repeat(3000)} TELEGRAM_TOKEN=${":".repeat(1500)}`
          : `SUMO_ACCESS_KEY: ${gen(ALNUM, 12)}`
      )
    }
    const text = lines.join("\n")
    const bytes = new TextEncoder().encode(text)
    expect(bytes.length).toBeGreaterThan(20 * 1024 * 1024)
    const started = performance.now()
    const out = masker.maskBytes(bytes)
    const took = performance.now() - started
    expect(out.length).toBe(bytes.length)
    expect(took).toBeLessThan(20_000)
  }, 60_000)
})
