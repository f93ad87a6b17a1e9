import { describe, expect, it } from "@effect/vitest"
import { Errors, ErrorText, Secrets } from "@spillway/core"
import { Cause, Effect } from "effect"

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

/** The one error-to-text path: a failure's own words, bounded, paths hidden, masked. */
describe("ErrorText", () => {
  it("masks a secret an error quotes, and keeps the words around it", () => {
    const masker = Secrets.unsafeMakeMasker()
    const d = ErrorText.describe(new Errors.NotFound({ resource: "output", id: `${TOKEN}.log` }), { masker })
    expect(d.tag).toBe("NotFound")
    expect(d.message).not.toContain(TOKEN)
    expect(d.message).toContain("no saved output")
  })

  it("bounds a hostile error's words, saying how much was left out, and shows paths by name", () => {
    const d = ErrorText.describe(new Error(`/srv/data/secret/${"x".repeat(100_000)}`), { paths: [["/srv/data", "the output directory"]] })
    expect(d.message.length).toBeLessThanOrEqual(ErrorText.MAX_CHARS + 60)
    expect(d.message).toContain("characters left out")
    expect(d.message.startsWith("the output directory/secret/")).toBe(true)
  })

  it("words a defect by its first line, as Internal, masked", () => {
    const masker = Secrets.unsafeMakeMasker()
    const d = ErrorText.ofCause(Cause.die(new Error(`boom ${TOKEN}\n    at somewhere`)), { masker })
    expect(d).toEqual({ tag: "Internal", message: expect.stringMatching(/^boom /) })
    expect(d.message).not.toContain(TOKEN)
    expect(d.message).not.toContain("somewhere")
  })

  it.effect("masks with the Secrets service in context", () =>
    Effect.gen(function*() {
      const d = yield* ErrorText.describeMasked(new Errors.InvalidRequest({ argument: "pattern", reason: `bad ${TOKEN}(` }))
      expect(d).toMatchObject({ tag: "InvalidRequest", message: expect.stringMatching(/^pattern: bad /) })
      expect(d.message).not.toContain(TOKEN)
    }).pipe(Effect.provide(Secrets.layer())))
})
