/**
 * What `spillway` prints of its own (errors, notices, previews, hints) is
 * masked like any output: an argument, a command name or an error message
 * can hold a secret.
 *
 * @since 0.1.0
 */
import { ErrorText, Secrets } from "@spillway/core"
import type { Cause } from "effect"

let masker: Secrets.Masker | undefined

/** The masker of what the command prints: the built-in rules and the secret-looking environment values. */
export const printedMasker = (): Secrets.Masker =>
  masker ??= Secrets.unsafeMakeMasker({ knownValues: Secrets.knownValuesFromEnv(process.env) })

/** Masks text the command prints itself, with the built-in rules and the secret-looking environment values. */
export const maskPrinted = (text: string): string => (text.length === 0 ? text : printedMasker().maskText(text))

/** A failure's words as the command prints them (`ErrorText`): bounded and masked. */
export const errorText = (failure: unknown): string => ErrorText.describe(failure, { masker: printedMasker() }).message

/** What a cause says as the command prints it (`ErrorText.ofCause`): bounded and masked. */
export const causeText = (cause: Cause.Cause<unknown>): string => ErrorText.ofCause(cause, { masker: printedMasker() }).message
