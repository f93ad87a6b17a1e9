import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    alias: [
      // the one package's names, as the examples import them
      { find: /^spillway$/, replacement: fileURLToPath(new URL("./packages/node/src/Spillway.ts", import.meta.url)) },
      { find: /^spillway\/(ai-sdk|langchain)$/, replacement: fileURLToPath(new URL("./packages/$1/src/index.ts", import.meta.url)) },
      { find: /^@spillway\/(core|node|tools|agents|remote|web|ai-sdk|langchain)$/, replacement: fileURLToPath(new URL("./packages/$1/src/index.ts", import.meta.url)) },
      { find: /^@spillway\/(core|node|tools|agents|remote|web|ai-sdk|langchain)\/(.*)$/, replacement: fileURLToPath(new URL("./packages/$1/src/$2.ts", import.meta.url)) }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts", "examples/**/*.test.ts", "integrations/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // one test file per core: the default in run mode leaves one core idle, which on two cores runs the files one at a time
    maxWorkers: availableParallelism()
  }
})
