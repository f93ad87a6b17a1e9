// What the catalogue readers share: the commit a checkout is at, and the
// layout of the JSON they write.
import { execFileSync } from "node:child_process"

/** The commit a checkout is at: its git HEAD, or CATALOGUE_COMMIT for an exported tree. */
export const commitOf = (checkout) => {
  if (process.env.CATALOGUE_COMMIT) return process.env.CATALOGUE_COMMIT
  try {
    return execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    throw new Error(`${checkout} is not a git checkout: set CATALOGUE_COMMIT to the commit it was exported from`)
  }
}

/** JSON with one line per sample, so a new catalogue version reads as a diff of samples. */
export const formatCatalogue = ({ rules, ...head }) => {
  const field = (key, value, indent) =>
    Array.isArray(value) && value.length > 0 && typeof value[0] === "object"
      ? `${indent}${JSON.stringify(key)}: [\n${value.map((v) => `${indent}  ${JSON.stringify(v)}`).join(",\n")}\n${indent}]`
      : `${indent}${JSON.stringify(key)}: ${JSON.stringify(value)}`
  const rule = (r) => `    {\n${Object.entries(r).map(([k, v]) => field(k, v, "      ")).join(",\n")}\n    }`
  return `{\n${Object.entries(head).map(([k, v]) => field(k, v, "  ")).join(",\n")},\n  "rules": [\n${rules.map(rule).join(",\n")}\n  ]\n}\n`
}
