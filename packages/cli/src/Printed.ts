/**
 * What `spillway` prints of its own (errors, notices, previews, hints) is
 * masked like any output: an argument, a command name or an error message
 * can hold a secret.
 *
 * @since 0.1.0
 */
import { Secrets } from "@spillway/core"

let masker: Secrets.Masker | undefined

/** Masks text the command prints itself, with the built-in rules and the secret-looking environment values. */
export const maskPrinted = (text: string): string => {
  if (text.length === 0) return text
  masker ??= Secrets.unsafeMakeMasker({ knownValues: Secrets.knownValuesFromEnv(process.env) })
  return masker.maskText(text)
}
