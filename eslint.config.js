import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist/**", "**/.tsbuild/**", "**/node_modules/**", "bench/.data/**", "examples/.readme-snippets/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", performance: "readonly", TextEncoder: "readonly", TextDecoder: "readonly" } },
    rules: {
      "no-invalid-regexp": ["error", { allowConstructorFlags: ["l"] }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "no-control-regex": "off"
    }
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", __dirname: "readonly", module: "writable" } },
    rules: { "@typescript-eslint/no-require-imports": "off" }
  }
)
