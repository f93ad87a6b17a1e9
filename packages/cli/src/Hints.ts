/**
 * The continuation hints the command prints, shared by every way it reads.
 *
 * @since 0.1.0
 */

/** Lines `spillway read` prints when no `--limit` is given. */
export const READ_LIMIT = 200

/** What `spillway read` prints on stderr after a page; `--limit` is repeated when it is not the default. */
export const readHint = (
  name: string,
  page: { readonly offset: number; readonly lines: number; readonly totalLines: number; readonly nextOffset?: number | undefined },
  limit: number
): string => {
  const shown = page.lines === 0 ? "no lines" : `lines ${page.offset}-${page.offset + page.lines - 1}`
  const next = page.nextOffset !== undefined
    ? `continue with: spillway read ${name} --offset ${page.nextOffset}${limit > 0 && limit !== READ_LIMIT ? ` --limit ${limit}` : ""}`
    : "end of file"
  return `[${shown} of ${page.totalLines}; ${next}]\n`
}

/** How a preview of `spillway run` says to read the saved file on. */
export const cliHint = (filename: string, next: number) => ({
  read: `Read more: spillway read ${filename} --offset ${next} --limit 200`,
  search: `search: spillway grep PATTERN ${filename}`
})

const quoteAlways = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/** How a preview of `spillway run` says to search the saved file. */
export const cliGrepHint = (pattern: string, filename: string) => `spillway grep ${quoteAlways(pattern)} ${filename}`

/** A word for a POSIX shell: as it is when it is plain, in single quotes otherwise. */
export const shellWord = (s: string) => /^[\w./:=@%+-]+$/.test(s) ? s : quoteAlways(s)
