/**
 * @spillway/ai-sdk: Spillway for the AI SDK. Tools whose results the model
 * reads as a bounded, masked projection with a marker naming the saved copy
 * (`spill`), the tools that read kept output back (`spillwayTools`), and a
 * middleware that shrinks the results of other tools (`spillwayMiddleware`);
 * `spillMastra` does what `spill` does for Mastra's `createTool`.
 *
 * @since 0.1.0
 */

/** Tools whose results the model reads as Spillway's projection. */
export * as Spill from "./Spill.js"
/** The read tools as AI SDK tools. */
export * as Tools from "./Tools.js"
/** A language model middleware that shrinks other tools' results. */
export * as Middleware from "./Middleware.js"
/** `spill` for Mastra's `createTool`. */
export * as Mastra from "./Mastra.js"
/** The one-call forms, for `import { spill, spillwayTools, spillwayMiddleware } from "@spillway/ai-sdk"`. */
export { spill } from "./Spill.js"
export { spillwayTools } from "./Tools.js"
export { spillwayMiddleware } from "./Middleware.js"
export { spillMastra, spillwayMastraTools } from "./Mastra.js"
