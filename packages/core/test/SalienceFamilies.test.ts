/**
 * Failure lines by family, in the shapes the tools' documentation shows:
 * prefixes learned from the output, chains of causes, test frameworks,
 * processes ended from outside. Each test states exactly which lines are
 * picked and in which role.
 */
import { describe, expect, it } from "@effect/vitest"
import { Preview, ProcessView, Salience } from "@spillway/core"

/** `[line, role, text]` of what a whole text holds. */
const picked = (text: string) =>
  Salience.find(text).lines.map((l) => [l.line, l.role ?? "explains", l.text] as const)

/** `n` quiet lines made by `f`. */
const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1))

describe("prefixes learned from the output", () => {
  it("a CI runner's timestamps: pytest's assertion is judged after them", () => {
    const ts = (i: number) => `2026-03-02T10:15:${String(i % 60).padStart(2, "0")}.1234567Z `
    const text = [
      ...lines(10, (i) => `${ts(i)}tests/test_ledger.py::test_case_${i} PASSED`),
      `${ts(11)}    def test_discount():`,
      `${ts(12)}>       assert total == 1250`,
      `${ts(13)}E       assert 1240 == 1250`,
      ...lines(5, (i) => `${ts(14 + i)}tests/test_more.py::test_again_${i} PASSED`)
    ].join("\n")
    expect(picked(text)).toEqual([[13, "explains", `${ts(13)}E       assert 1240 == 1250`]])
  })

  it("docker compose's `service-1  | `: a PHP fatal error among two services", () => {
    const text = [
      ...lines(8, (i) => i % 2 === 0 ? `worker-1  | job ${i} done, 0 failed` : `web-1     | GET /invoices/${i} 200`),
      "web-1     | PHP Fatal error:  Uncaught Error: Call to undefined function render() in /app/web.php:4",
      ...lines(4, (i) => `worker-1  | job ${10 + i} done, 0 failed`)
    ].join("\n")
    expect(picked(text)).toEqual([
      [9, "explains", "web-1     | PHP Fatal error:  Uncaught Error: Call to undefined function render() in /app/web.php:4"]
    ])
  })

  it("kubectl logs --prefix: Node's ENOENT with the first frame of the service's code", () => {
    const p = "[pod/api-7d9f8b6c4-x2k9q/api] "
    const text = [
      ...lines(8, (i) => `${p}GET /health 200 ${i} ms`),
      `${p}node:fs:573`,
      `${p}Error: ENOENT: no such file or directory, open '/config/app.json'`,
      `${p}    at Object.openSync (node:fs:573:18)`,
      `${p}    at Object.readFileSync (node:fs:452:35)`,
      `${p}    at loadConfig (/app/server.js:3:25)`,
      ...lines(3, (i) => `${p}GET /health 200 ${9 + i} ms`)
    ].join("\n")
    expect(picked(text)).toEqual([
      [10, "explains", `${p}Error: ENOENT: no such file or directory, open '/config/app.json'`],
      [13, "context", `${p}    at loadConfig (/app/server.js:3:25)`]
    ])
  })

  it("syslog's `Mon DD hh:mm:ss host proc[pid]:` columns, with colour and carriage returns stripped before judging", () => {
    const text = [
      ...lines(8, (i) => `Mar  2 10:15:0${i} build-7 deploy[4121]: step ${i} of 9 ok\r`),
      "Mar  2 10:15:09 build-7 deploy[4121]: \x1b[31mERROR\x1b[0m could not reach registry.example.com\r",
      "Mar  2 10:15:10 build-7 deploy[4121]: giving up\r"
    ].join("\n")
    expect(picked(text)).toEqual([[9, "explains", "Mar  2 10:15:09 build-7 deploy[4121]: ERROR could not reach registry.example.com"]])
  })

  it("a timestamped verbose passing run whose names mention errors claims nothing", () => {
    const names = ["reports an error for bad input", "retries failed requests", "kills the child on timeout", "returns 0 errors"]
    const text = lines(40, (i) => `2026-03-02T10:15:${String(i % 60).padStart(2, "0")}.1234567Z test_${i} ${names[i % 4]} ... ok`)
      .join("\n")
    expect(Salience.find(text).total).toBe(0)
  })
})

describe("chains of causes: the deepest cause explains", () => {
  it("Java: the last `Caused by:` explains, with its first frame of the project's code; the ones above report", () => {
    const text = [
      "Exception in thread \"main\" com.acme.Batch$LedgerException: settlement of batch 17 failed",
      "\tat com.acme.Batch.settle(Batch.java:24)",
      "\tat com.acme.Batch.main(Batch.java:31)",
      "Caused by: java.lang.IllegalStateException: could not load the exchange rates for batch 17",
      "\tat com.acme.Batch.loadRates(Batch.java:17)",
      "\t... 2 more",
      "Caused by: java.io.FileNotFoundException: config/rates-17.csv (No such file or directory)",
      "\tat java.base/java.io.FileInputStream.open0(Native Method)",
      "\tat java.base/java.io.FileInputStream.open(FileInputStream.java:216)",
      "\tat com.acme.Batch.readRates(Batch.java:11)",
      "\t... 3 more"
    ].join("\n")
    expect(picked(text)).toEqual([
      [1, "reports", "Exception in thread \"main\" com.acme.Batch$LedgerException: settlement of batch 17 failed"],
      [2, "context", "\tat com.acme.Batch.settle(Batch.java:24)"],
      [4, "reports", "Caused by: java.lang.IllegalStateException: could not load the exchange rates for batch 17"],
      [5, "context", "\tat com.acme.Batch.loadRates(Batch.java:17)"],
      [7, "explains", "Caused by: java.io.FileNotFoundException: config/rates-17.csv (No such file or directory)"],
      [10, "context", "\tat com.acme.Batch.readRates(Batch.java:11)"]
    ])
    // the root cause comes first in what a view shows
    expect(Salience.ranked(Salience.find(text))[0]!.line).toBe(7)
  })

  it("Python: with `raise … from`, the first exception is the root; the one after the marker reports", () => {
    const text = [
      "Traceback (most recent call last):",
      "  File \"/srv/job.py\", line 7, in load",
      "    with open(path) as f:",
      "FileNotFoundError: [Errno 2] No such file or directory: 'batch-21.json'",
      "",
      "The above exception was the direct cause of the following exception:",
      "",
      "Traceback (most recent call last):",
      "  File \"/srv/job.py\", line 14, in settle",
      "    raise ConfigError(f\"batch {n} has no configuration\") from e",
      "ConfigError: batch 21 has no configuration"
    ].join("\n")
    expect(picked(text).filter(([, role]) => role !== "context")).toEqual([
      [1, "reports", "Traceback (most recent call last):"],
      [4, "explains", "FileNotFoundError: [Errno 2] No such file or directory: 'batch-21.json'"],
      [8, "reports", "Traceback (most recent call last):"],
      [11, "reports", "ConfigError: batch 21 has no configuration"]
    ])
  })

  it("Node: `[cause]:` explains; the error that wraps it reports", () => {
    const text = [
      "Error: settlement of batch 19 failed",
      "    at settle (file:///srv/job.mjs:7:11)",
      "    at file:///srv/job.mjs:11:16 {",
      "  [cause]: Error: ENOENT: no such file or directory, open 'batch-19.json'",
      "      at Object.openSync (node:fs:573:18)",
      "      at settle (file:///srv/job.mjs:5:12)",
      "      at file:///srv/job.mjs:11:16 {",
      "    errno: -2,",
      "    code: 'ENOENT'",
      "  }",
      "}"
    ].join("\n")
    expect(picked(text)).toEqual([
      [1, "reports", "Error: settlement of batch 19 failed"],
      [2, "context", "    at settle (file:///srv/job.mjs:7:11)"],
      [4, "explains", "  [cause]: Error: ENOENT: no such file or directory, open 'batch-19.json'"],
      [6, "context", "      at settle (file:///srv/job.mjs:5:12)"]
    ])
  })

  it("Rust's anyhow: the last entry under `Caused by:` explains; the error above it reports", () => {
    const text = [
      "Error: settlement of batch 3 failed",
      "",
      "Caused by:",
      "    0: could not load the exchange rates",
      "    1: No such file or directory (os error 2)",
      "",
      "Stack backtrace:"
    ].join("\n")
    expect(picked(text)).toEqual([
      [1, "reports", "Error: settlement of batch 3 failed"],
      [3, "reports", "Caused by:"],
      [4, "context", "    0: could not load the exchange rates"],
      [5, "explains", "    1: No such file or directory (os error 2)"]
    ])
  })
})

describe("families, not tools", () => {
  it("RSpec: `Failure/Error:` with its expected and got lines; the summary reports", () => {
    const text = [
      "  applies the discount before tax (FAILED - 1)",
      "",
      "Failures:",
      "",
      "  1) ledger applies the discount before tax",
      "     Failure/Error: expect(total).to eq(1250)",
      "",
      "       expected: 1250",
      "            got: 1240",
      "",
      "       (compared using ==)",
      "",
      "35 examples, 1 failure"
    ].join("\n")
    expect(picked(text)).toEqual([
      [6, "explains", "     Failure/Error: expect(total).to eq(1250)"],
      [8, "context", "       expected: 1250"],
      [9, "context", "            got: 1240"],
      [13, "reports", "35 examples, 1 failure"]
    ])
  })

  it("ExUnit: the failure's header reports; `Assertion with == failed` explains with code, left and right", () => {
    const text = [
      "  1) test applies the discount before tax (LedgerTest)",
      "     ledger_test.exs:79",
      "     Assertion with == failed",
      "     code:  assert total == 1250",
      "     left:  1240",
      "     right: 1250",
      "     stacktrace:",
      "       ledger_test.exs:81: (test)",
      "",
      "26 tests, 1 failure"
    ].join("\n")
    expect(picked(text)).toEqual([
      [1, "reports", "  1) test applies the discount before tax (LedgerTest)"],
      [3, "explains", "     Assertion with == failed"],
      [4, "context", "     code:  assert total == 1250"],
      [5, "context", "     left:  1240"],
      [6, "context", "     right: 1250"],
      [10, "reports", "26 tests, 1 failure"]
    ])
  })

  it("CTest --output-on-failure: the failed test reports, the check in its output explains, the summary reports", () => {
    const text = [
      "60/120 Test  #60: merges_overlapping_ranges_60 .......   Passed    0.00 sec",
      "61/120 Test  #61: parses_an_empty_document_61 .......***Failed    0.00 sec",
      "case 61: loading fixtures",
      "check_total: expected 1250, got 1240",
      "",
      "99% tests passed, 1 tests failed out of 120",
      "",
      "The following tests FAILED:",
      "\t 61 - parses_an_empty_document_61 (Failed)"
    ].join("\n")
    expect(picked(text)).toEqual([
      [2, "reports", "61/120 Test  #61: parses_an_empty_document_61 .......***Failed    0.00 sec"],
      [4, "explains", "check_total: expected 1250, got 1240"],
      [6, "reports", "99% tests passed, 1 tests failed out of 120"],
      [8, "reports", "The following tests FAILED:"],
      [9, "context", "\t 61 - parses_an_empty_document_61 (Failed)"]
    ])
  })

  it("process ends: the shell's `Killed` for a command the kernel stopped, a named signal, an exit code of a signal's death", () => {
    const text = [
      "job 22: shard 3 merged",
      "bash: line 1: 12122 Killed                  bash job.sh $i",
      "error: signal: killed",
      "command terminated with exit code 137",
      "Process completed with exit code 1."
    ].join("\n")
    expect(picked(text)).toEqual([
      [2, "explains", "bash: line 1: 12122 Killed                  bash job.sh $i"],
      [3, "explains", "error: signal: killed"],
      [4, "explains", "command terminated with exit code 137"]
    ])
  })

  it("a database's error with its place, and the detail under it", () => {
    const text = [
      "INSERT INTO accounts VALUES (12, 'account 12 again', 'duplicate');",
      "psql:002-accounts.sql:16: ERROR:  duplicate key value violates unique constraint \"accounts_pkey\"",
      "DETAIL:  Key (id)=(12) already exists."
    ].join("\n")
    expect(picked(text)).toEqual([
      [2, "explains", "psql:002-accounts.sql:16: ERROR:  duplicate key value violates unique constraint \"accounts_pkey\""],
      [3, "context", "DETAIL:  Key (id)=(12) already exists."]
    ])
  })

  it("quoting stays quiet: a diff of timestamped lines and a source line that builds a message", () => {
    const text = [
      "diff --git a/ci.log b/ci.log",
      "@@ -1,3 +1,3 @@",
      " 2026-03-02T10:15:01.1234567Z step 1",
      "-2026-03-02T10:15:02.1234567Z E       assert 1240 == 1250",
      "+2026-03-02T10:15:02.1234567Z E       assert 1250 == 1250",
      "    throw new TypeError(`config ${path}: expected JSON, got ${text}`)"
    ].join("\n")
    expect(Salience.find(text).total).toBe(0)
  })
})

describe("one picker", () => {
  const text = [
    ...lines(300, (i) => `step ${i}: compiled module ${i} of 300 without trouble`),
    "Exception in thread \"main\" com.acme.Batch$LedgerException: settlement failed",
    "\tat com.acme.Batch.settle(Batch.java:24)",
    "Caused by: java.io.FileNotFoundException: config/rates.csv (No such file or directory)",
    "\tat com.acme.Batch.readRates(Batch.java:11)",
    ...lines(300, (i) => `step ${300 + i}: compiled module ${i} of 300 without trouble`)
  ].join("\n")
  const found = Salience.find(text)

  it("the preview, a job's view and a kept result's first page show what `Salience.pick` picks", () => {
    const all = text.split("\n")
    const preview = Preview.make({
      exitCode: 1,
      head: text.slice(0, 8000),
      headIsWhole: false,
      tail: text.slice(-8000),
      tailAtLineStart: false,
      totalLines: all.length,
      totalBytes: text.length,
      saved: "out-1.log",
      maxChars: 2000,
      salient: { lines: found.lines, total: found.total }
    })
    expect(preview.salient).toEqual([301, 302, 303, 304])
    for (const n of preview.salient) expect(preview.text).toContain(`\n${n}: ${all[n - 1]!}`)
    const job = ProcessView.pickFailures({ lines: found.lines, total: found.total }, 110)
    const same = Salience.pick(found.lines, { limit: 110, base: 2, cost: (row) => JSON.stringify(row).length, separator: 1 })
    expect(job).toEqual(same)
    // the root cause first: with room for one row, it is the one shown
    expect(job.map((r) => r.line)).toEqual([303])
  })
})
