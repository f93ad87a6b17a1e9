/**
 * Passes this process's stdin on to a child a chunk at a time: the next is
 * read once the child took the last, so a child that reads slowly holds no
 * more than one chunk here; its stdin is closed at the end of ours. Without
 * Effect, for the short run as for the run program.
 *
 * @internal
 */

/** Where the chunks go. */
export interface Target {
  /** Writes a chunk, then calls `next` with whether the child still takes more. */
  readonly write: (chunk: Buffer, next: (open: boolean) => void) => void
  /** Closes the child's stdin, then calls `done`. */
  readonly close: (done: () => void) => void
}

/** Starts passing stdin on; `finished` is called once, when it stops. Returns the function that stops it. */
export const forward = (target: Target, finished: () => void = () => undefined): (() => void) => {
  const input = process.stdin
  let done = false
  const finish = () => {
    if (done) return
    done = true
    input.removeListener("data", onData)
    input.destroy()
    finished()
  }
  const onData = (chunk: Buffer) => {
    input.pause()
    target.write(chunk, (open) => (open ? input.resume() : finish()))
  }
  const close = () => target.close(finish)
  input.on("data", onData)
  input.once("end", close)
  input.once("error", close)
  return finish
}
