/**
 * @spillway/web: a web view for people over kept output.
 *
 * @since 0.1.0
 */

/** The body store's read capability alone. */
export * as BodyRead from "./BodyRead.js"
/** The web view: routes, pages and the guard in front of them. */
export * as WebView from "./WebView.js"
