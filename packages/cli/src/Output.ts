/**
 * Where the `spillway` command writes, and how it ends: stdout and stderr
 * with back-pressure, and the exit status to leave with.
 *
 * @since 0.1.0
 */
import { Context, Data, Effect } from "effect"
import { maskPrinted } from "./Printed.js"

/** The command's output streams and exit status. */
export interface Output {
  readonly stdout: (text: string) => Effect.Effect<void>
  readonly stdoutBytes: (bytes: Uint8Array) => Effect.Effect<void>
  /**
   * Text printed whole, unmasked: only a credential the command made for the
   * person who started it (the web view's address with its token).
   */
  readonly stdoutOwn: (text: string) => Effect.Effect<void>
  readonly stderr: (text: string) => Effect.Effect<void>
  readonly setExit: (status: number) => Effect.Effect<void>
}

/** The output service. */
export class OutputTag extends Context.Tag("@spillway/cli/Output")<OutputTag, Output>() {}

/**
 * Bad input or a refusal: one `spillway COMMAND:` line on stderr (or one
 * JSON error with `--json`), then exit with `status` (2 by default). `tag`
 * names the kind of failure in JSON (`UsageError` by default).
 */
export class Exit2 extends Data.TaggedError("Exit2")<{ readonly message: string; readonly status?: number; readonly tag?: string }> {}

/** Records the exit status. */
export const exitCode = (status: number) => Effect.flatMap(OutputTag, (o) => o.setExit(status))

const write = (stream: NodeJS.WriteStream, data: string | Uint8Array) =>
  Effect.async<void>((resume) => {
    if (data.length === 0) return resume(Effect.void)
    stream.write(data, () => resume(Effect.void))
  })

/** Output to the process's own stdout and stderr; `status` holds the exit status. */
export const processOutput = (): Output & { status: number } => {
  const o = {
    status: 0,
    // text is masked on the way out; bytes are saved output, masked when they were kept
    stdout: (text: string) => write(process.stdout, maskPrinted(text)),
    stdoutBytes: (bytes: Uint8Array) => write(process.stdout, bytes),
    stdoutOwn: (text: string) => write(process.stdout, text),
    stderr: (text: string) => write(process.stderr, maskPrinted(text)),
    setExit: (status: number) => Effect.sync(() => void (o.status = status))
  }
  return o
}
