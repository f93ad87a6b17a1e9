/**
 * What the tools that shape their own results deliver: pages of a saved
 * file, search results, and the list of jobs, each with the marker that
 * says what it shows and the exact call that continues. Pure functions; the
 * handlers fit them to the budget.
 *
 * @internal
 */
import { Delivery, Errors, Marker, type Process, type Spill, Utf8 } from "@spillway/core"
import type { GrepSpillFacts, JobsFacts, ReadSpillFacts } from "../Tools.js"

/** A marker with the call that continues put inside its brackets. */
const withNext = (marker: string, next: string | undefined) => (next === undefined ? marker : `${marker.slice(0, -1)}. Next: ${next}]`)

/** The lines of a page's text, each with the break that ends it. @internal */
export const linesOf = (text: string): Array<string> => (text === "" ? [] : text.match(/[^\n]*\n|[^\n]+$/g) ?? [])

const readCall = (filename: string, offset: number) => Delivery.call("read_spill", [["filename", filename], ["offset", offset]])

/** The first `k` whole lines of a `read_spill` page, with a marker when they are not the whole file. @internal */
export const whole = (page: Spill.SpillPage, lines: ReadonlyArray<string>, k: number): Delivery.Delivered<typeof ReadSpillFacts.Type> => {
  const content = lines.slice(0, k).join("")
  const nextOffset = k < lines.length ? page.offset + k : page.nextOffset
  const marker = page.offset > 1 || nextOffset !== undefined
    ? withNext(
      Marker.format({ ranges: k === 0 ? [] : [{ from: page.offset, to: page.offset + k - 1 }], totalLines: page.totalLines }),
      nextOffset !== undefined ? readCall(page.filename, nextOffset) : undefined
    )
    : undefined
  return {
    text: Delivery.withMarker(content, marker),
    facts: {
      filename: page.filename,
      offset: page.offset,
      lines: k,
      total_lines: page.totalLines,
      total_bytes: page.totalBytes,
      ...(nextOffset !== undefined ? { next_offset: nextOffset } : {}),
      content_chars: Delivery.contentChars(content)
    }
  }
}

/** The start of a `read_spill` page's first line, too long for the result: the rest is read by cursor. @internal */
export const cut = (page: Spill.SpillPage, part: string, cursor: string): Delivery.Delivered<typeof ReadSpillFacts.Type> => {
  const line = page.offset
  const nextOffset = line < page.totalLines ? line + 1 : undefined
  const chars = Delivery.contentChars(part)
  const following = nextOffset !== undefined ? `; the line after it: ${readCall(page.filename, nextOffset)}` : ""
  return {
    text: Delivery.withMarker(part, `[Showing line ${line} of ${page.totalLines} in part, its first ${chars} characters${following}. Next, the rest of line ${line}: ${Delivery.call("get_tool_output", [["cursor", cursor]])}]`),
    facts: {
      filename: page.filename,
      offset: line,
      lines: 1,
      total_lines: page.totalLines,
      total_bytes: page.totalBytes,
      ...(nextOffset !== undefined ? { next_offset: nextOffset } : {}),
      content_chars: chars,
      cut_line: { line, shown_chars: chars },
      cursor
    }
  }
}

/** The first `k` matches of a search, with a marker saying where it goes on when it does. @internal */
export const shown = (r: Spill.GrepResult, from: number, k: number): Delivery.Delivered<typeof GrepSpillFacts.Type> => {
  const matches = r.matches.slice(0, k)
  const left = k < r.matches.length
  const last = matches.length > 0 ? matches[matches.length - 1]!.line : from - 1
  // where the search goes on: the first match not shown, past the last shown, or where the deadline stopped it
  const nextOffset = left ? r.matches[k]!.line : r.stoppedAtLine !== undefined ? r.stoppedAtLine : r.more ? last + 1 : undefined
  const next = nextOffset !== undefined
    ? Delivery.call("grep_spill", [["filename", r.filename], ["pattern", Delivery.patternArgument(r.pattern)], ["offset", nextOffset]])
    : undefined
  const cutLines = matches.some((m) => m.cut)
    ? `; a line marked [line cut] reads whole with ${Delivery.call("read_spill", [["filename", r.filename], ["offset", "LINE"], ["limit", 1]])}`
    : ""
  const marker = r.stoppedAtLine !== undefined
    ? `[the search stopped at its deadline at line ${r.stoppedAtLine} of ${r.totalLines}: ${r.matches.length === 0 ? "no" : r.matches.length} matching lines before it${left ? `, ${k} shown` : ""}; narrow the pattern${cutLines}]`
    : r.matches.length === 0
    ? `[no line of ${r.filename}${from > 1 ? ` from line ${from} on` : ""} matches ${Errors.quote(r.pattern)}]`
    : left || r.more
    ? `[${k} matching lines shown; more may match from line ${nextOffset}${cutLines}]`
    : cutLines !== ""
    ? `[${k} matching lines${cutLines}]`
    : undefined
  const lines = matches.map((m) => `${m.line}: ${m.text}${m.cut ? " [line cut]" : ""}`).join("\n")
  return {
    text: marker === undefined ? lines : Delivery.withMarker(lines, withNext(marker, next)),
    facts: {
      filename: r.filename,
      matches: matches.map((m) => ({ line: m.line, cut: m.cut })),
      more: left || r.more || r.stoppedAtLine !== undefined,
      total_lines: r.totalLines,
      ...(r.stoppedAtLine !== undefined ? { stopped_at_line: r.stoppedAtLine } : {}),
      ...(nextOffset !== undefined ? { next_offset: nextOffset } : {})
    }
  }
}

/** The longest command a job listing shows, in characters. */
const COMMAND_CHARS = 200

/** A job as a listing shows it: its command cut to a bounded length, saying how long it was. */
const listed = (job: Process.JobSummary): Process.JobSummary => {
  const length = Utf8.codePointLength(job.command)
  return length <= COMMAND_CHARS ? job : { ...job, command: `${Utf8.takeCodePoints(job.command, COMMAND_CHARS)}… (${length} characters)` }
}

/** `k` jobs of a listing from `skip`, with a marker when they are not all of them. @internal */
export const jobs = (all: ReadonlyArray<Process.JobSummary>, skip: number, k: number): Delivery.Delivered<typeof JobsFacts.Type> => {
  const shownJobs = all.slice(skip, skip + k).map(listed)
  const lines = shownJobs.map((j) =>
    `pid ${j.pid}: ${j.status}${j.exit_code !== undefined ? ` (exit ${j.exit_code})` : j.signal !== undefined ? ` (${j.signal})` : ""}, ${j.emitted_bytes} bytes, ${j.command}`
  ).join("\n")
  const nextOffset = skip + k < all.length ? skip + k : undefined
  const marker = skip > 0 || nextOffset !== undefined
    ? withNext(
      `[Showing jobs ${k === 0 ? "none" : `${skip + 1}-${skip + k}`} of ${all.length}]`,
      nextOffset !== undefined ? Delivery.call("manage_process", [["action", "list"], ["offset", nextOffset]]) : undefined
    )
    : undefined
  return {
    text: all.length === 0 ? "no jobs" : Delivery.withMarker(lines, marker),
    facts: { view: "jobs", jobs: shownJobs, total: all.length, ...(nextOffset !== undefined ? { next_offset: nextOffset } : {}) }
  }
}
