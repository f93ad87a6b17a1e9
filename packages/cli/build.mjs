// Bundles the command into one plain JavaScript file so it starts fast.
import { build } from "esbuild"

await build({
  entryPoints: ["dist/main.js"],
  outfile: "dist/spillway.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  legalComments: "none",
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
})
