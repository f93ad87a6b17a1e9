/**
 * The bundled plugins stand alone: one ES module each, importing nothing but
 * Node's own modules, so a copy in an agent's plugin folder needs no
 * `node_modules` beside it.
 */
import { builtinModules } from "node:module"
import { describe, expect, it } from "vitest"
import { type Agent, bundleText, importedNames } from "./harness.js"

const builtin = (name: string): boolean => name.startsWith("node:") || builtinModules.includes(name.split("/")[0]!) || builtinModules.includes(name)

describe("the bundled plugins", () => {
  for (const agent of ["pi", "opencode"] as ReadonlyArray<Agent>) {
    it(`${agent}: imports only Node's own modules and has one default export`, () => {
      const text = bundleText(agent)
      expect(importedNames(text).filter((name) => !builtin(name))).toEqual([])
      expect(text).toMatch(/export\s*\{\s*\w+\s+as\s+default\s*\}/)
      expect(text).not.toMatch(/@spillway\/|@mariozechner\/|@opencode-ai\//)
    })
  }

  it("finds the imports a bundle would need, so the check above can fail", () => {
    expect(importedNames(`import a from "effect";import{b as c}from"@spillway/cli";const d=require("node:fs");await import("x")`))
      .toEqual(["effect", "@spillway/cli", "x", "node:fs"])
  })
})
