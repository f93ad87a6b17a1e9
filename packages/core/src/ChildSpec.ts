/**
 * What a child runs and how it ended, without Effect: the spec, the argv it
 * becomes (stderr merged into stdout's pipe by a shell when asked) and the
 * exit status as a shell reports it. `Child` re-exports all of it; a
 * program that starts a child before it loads Effect (the short form of
 * `spillway run`) imports this module alone.
 *
 * @since 0.1.0
 */

/** What to run. */
export interface Spec {
  /** The program, or with `shell` a whole line run by `/bin/sh -c`. */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly shell?: boolean | undefined
  readonly cwd?: string | undefined
  /** Variables added to the host's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** "pipe" keeps stdin open for `writeStdin`; closed by default, so programs that read it see its end. */
  readonly stdin?: "pipe" | "closed" | undefined
  /** One pipe for stdout and stderr (as `2>&1` gives), so their lines keep the order the child wrote them in. */
  readonly mergeStderr?: boolean | undefined
}

/** How long the steps of stopping and draining may take. */
export interface Timing {
  /** Between SIGTERM and SIGKILL when the child is stopped. 3 seconds by default. */
  readonly killGraceMillis?: number | undefined
  /** How long output is still read after the exit, for children that leave the pipes open. 2 seconds by default. */
  readonly drainGraceMillis?: number | undefined
}

/** How a child ended, as a shell reports it. */
export interface ExitStatus {
  /** The exit code, or null when a signal ended it. */
  readonly code: number | null
  /** The signal that ended it, or null. */
  readonly signal: string | null
  /** The code, or 128+N for signal N (1 when the signal's number is unknown). */
  readonly status: number
}

/** Signal numbers as Linux numbers them, for 128+N where the platform gives no table of its own. */
export const signalNumbers: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGCHLD: 17,
  SIGCONT: 18,
  SIGSTOP: 19,
  SIGTSTP: 20,
  SIGTTIN: 21,
  SIGTTOU: 22,
  SIGURG: 23,
  SIGXCPU: 24,
  SIGXFSZ: 25,
  SIGVTALRM: 26,
  SIGPROF: 27,
  SIGWINCH: 28,
  SIGIO: 29,
  SIGPWR: 30,
  SIGSYS: 31
}

/** An exit status from a code or a signal. */
export const exitStatus = (code: number | null, signal: string | null, numbers: Readonly<Record<string, number>> = signalNumbers): ExitStatus => ({
  code,
  signal,
  status: code !== null ? code : signal !== null && numbers[signal] !== undefined ? 128 + numbers[signal]! : 1
})

/** The argv a spec runs: the shell line, or the program and its arguments. */
export const argvOf = (spec: Spec): readonly [string, ...Array<string>] =>
  spec.shell === true ? ["/bin/sh", "-c", spec.command] : [spec.command, ...(spec.args ?? [])]

/**
 * The argv a spec runs with stderr sent into stdout's pipe when asked: a
 * shell points its stderr at stdout, then becomes the command (so a command
 * that does not exist still fails as the shell reports it).
 */
export const mergedArgv = (spec: Spec): readonly [string, ...Array<string>] => {
  if (spec.mergeStderr !== true) return argvOf(spec)
  return spec.shell === true
    ? ["/bin/sh", "-c", `exec 2>&1; ${spec.command}`]
    : ["/bin/sh", "-c", `exec 2>&1; exec "$@"`, "sh", spec.command, ...(spec.args ?? [])]
}
