/**
 * Spillway from a program without Effect: keep a long output, page and
 * search it, run a command, watch a job, and close.
 */
import * as Spillway from "spillway"

export const tour = async (dir: string) => {
  await using sw = await Spillway.open({ dir, owner: { owner: "dev", channel: "build" } })

  // a long output: the model reads `text`, a bounded, masked preview naming the saved copy
  const log = Array.from({ length: 10_000 }, (_, i) => `step ${i + 1} ok`).join("\n") + "\nerror: disk full\n"
  const kept = await sw.keepOutput(log, { exitCode: 1, label: "build" })

  // page and search the saved copy by name
  const page = await sw.read(kept.filename!, { offset: 10_001, limit: 1 })
  const found = await sw.grep("^error", kept.filename!)

  // run a command to its end, as `spillway run` does
  const ran = await sw.run(["sh", "-c", "seq 1 5000; echo 'FAILED: 2 tests' >&2; exit 1"])

  // a job in the background: start it, wait for a line, stop it
  // (a pattern matches lines printed after the call; fromLine: 1 counts those already printed)
  const job = await sw.start("echo serving on :8080; sleep 60")
  const ready = await sw.wait(job.pid, { timeoutMs: 10_000, pattern: "serving on", fromLine: 1 })
  await sw.kill(job.pid)

  // a refusal is a tagged error
  const missing = await sw.read("2020-01-01T00-00-00-000Z-000000.log").catch((e: unknown) => e)
  const tag = Spillway.isError(missing) ? missing._tag : "unexpected"

  return { kept, page, found, ran, ready, tag }
}
