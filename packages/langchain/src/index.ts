/**
 * @spillway/langchain: Spillway for LangChain.js agents. A middleware that
 * keeps long tool results and hands the model a bounded, masked projection
 * with a marker naming the saved copy, and the tools that read it back.
 *
 * @since 0.1.0
 */

/** The agent middleware that shrinks tool results. */
export * as Middleware from "./Middleware.js"
/** The read tools as LangChain tools. */
export * as Tools from "./Tools.js"
/** The one-call forms, for `import { spillwayMiddleware, spillwayTools } from "@spillway/langchain"`. */
export { spillwayMiddleware } from "./Middleware.js"
export { spillwayTools } from "./Tools.js"
