#!/bin/sh
# Regenerates the salience corpus: real logs printed by real tools.
#
#   sh test/salience/make-corpus.sh
#
# Every scenario is built from scratch in a temporary directory, run there with
# its output captured as `COMMAND > log 2>&1`, and then written to
# test/salience/corpus/NAME.log with the temporary paths replaced:
#   the scenario's own directory  -> /home/dev/project
#   the rest of the temp tree     -> /home/dev/tmp
#   $HOME                         -> /home/dev
# Beside each log goes NAME.json (tool, command, exit code, whether it failed,
# and the lines that explain the failure), and test/salience/cases.json is
# rebuilt from lines of those logs, so everything stays in step when rerun.
#
# Needs: node 20 + npm/npx (typescript@5.9.3, vitest@3.2.7, pnpm@10.34.8, eslint@9.17.0,
# eslint-formatter-compact@8.40.0, jest@29.7.0, mocha@10.8.2, prettier@3.3.3 and yarn@1.22.22
# are fetched from npm), gcc, make, cmake, ninja, python3 with pytest, go, rustc + cargo,
# javac + java, Maven with the compiler and surefire plugins and JUnit 5 in its
# local repository (it runs offline, `mvn -o`), a Docker daemon and a static
# busybox (see the docker scenarios), git; for the families added later, Debian's
# ruby-rspec, elixir, golang-go, php-cli, mono-mcs and mono-runtime, cmake with
# ctest, perl, and PostgreSQL's initdb, pg_ctl and psql (a server is started on a
# spare port for the psql scenario and stopped after it). Gradle is not run (its
# plugins cannot be fetched offline); documented.json holds lines in its shapes,
# and those of other tools that cannot run here, marked as documented.
# Between runs only timings, clock times, thread ids, build hashes and the
# interleaving of concurrent output change.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/corpus"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
trap 'exit 130' INT TERM

PLACEHOLDER=/home/dev/project
TSC="npx -y -p typescript@5.9.3 tsc"
VITEST="npx -y vitest@3.2.7"

# The same output whoever runs this.
unset CI FORCE_COLOR NO_COLOR NODE_OPTIONS PYTHONUNBUFFERED RUST_BACKTRACE CARGO_TERM_COLOR CARGO_TARGET_DIR
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES="$SCRATCH"
export GIT_AUTHOR_NAME="Dev" GIT_AUTHOR_EMAIL="dev@example.com" GIT_COMMITTER_NAME="Dev" GIT_COMMITTER_EMAIL="dev@example.com"

# ONLY="name ..." reruns just those scenarios and keeps the other logs.
ONLY=${ONLY:-}
if [ -z "$ONLY" ]; then rm -rf "$OUT"; fi
mkdir -p "$OUT"
: > "$SCRATCH/manifest.tsv"

# capture NAME TOOL COMMAND: run COMMAND with sh in $SCRATCH/NAME, keep its
# combined output and exit code.
capture() {
  name=$1 tool=$2 cmd=$3
  dir="$SCRATCH/$name"
  if [ -n "$ONLY" ] && ! printf ' %s ' "$ONLY" | grep -q " $name "; then return 0; fi
  echo "running $name: $cmd" >&2
  (cd "$dir" && sh -c "$cmd" > "$SCRATCH/$name.raw" 2>&1)
  code=$?
  sed -e "s|$dir|$PLACEHOLDER|g" -e "s|$SCRATCH|/home/dev/tmp|g" -e "s|$HOME/|/home/dev/|g" \
    "$SCRATCH/$name.raw" > "$OUT/$name.log"
  printf '%s\t%s\t%s\t%s\n' "$name" "$tool" "$code" "$cmd" >> "$SCRATCH/manifest.tsv"
}

scenario() {
  mkdir -p "$SCRATCH/$1"
  cd "$SCRATCH/$1" || exit 1
}

# Test names shared by the test-runner scenarios; several passing tests have
# "error", "fail", "abort" or "kill" in their names on purpose.
TEST_NAMES='parses an empty document
reports an error for unterminated strings
keeps line numbers after a failure
retries failed requests up to three times
throws a TypeError for non-string input
formats error messages with the file name
does not fail when the cache is cold
kills the child process on timeout
returns 0 errors for a clean file
marks aborted uploads as retryable
normalises CRLF line endings
merges overlapping ranges
rounds half to even
sorts by name then by date
trims trailing whitespace
handles unicode file names
escapes HTML entities
limits the queue to 100 items
expires sessions after 30 minutes
counts words across lines
rejects negative quantities
accepts ISO dates
ignores comments in config files
applies the discount before tax
falls back to the default locale
collects failed assertions into one report
treats warnings as non-fatal
splits the input into chunks of 4 KiB
reuses the connection pool
survives a dropped connection'

names_from() { # names_from START COUNT: COUNT names, wrapping around
  printf '%s\n' "$TEST_NAMES" | awk -v s="$1" -v c="$2" '{ n[NR] = $0 } END { for (i = 0; i < c; i++) print n[(s + i) % NR + 1] }'
}

###########################################################################
# tsc: `tsc -b --verbose` over 48 referenced projects, one type error.
###########################################################################
TS_PACKAGES='config logger env clock ids http-client router auth session cache queue mailer templates i18n search billing invoices payments tax currency accounts ledger reports error-handling exports imports scheduler jobs webhooks audit metrics tracing health admin users teams permissions uploads storage thumbnails notifications feeds comments ratings settings flags sitemap cli'

make_ts_workspace() { # make_ts_workspace WITH_ERROR(0|1)
  refs=""
  for p in $TS_PACKAGES; do
    mkdir -p "packages/$p/src"
    deps=""
    [ "$p" = reports ] && deps='"references": [{ "path": "../ledger" }],'
    cat > "packages/$p/tsconfig.json" <<EOF
{
  "compilerOptions": {
    "composite": true, "strict": true, "target": "es2022", "module": "nodenext",
    "rootDir": "src", "outDir": "dist", "types": []
  },
  $deps
  "include": ["src"]
}
EOF
    cat > "packages/$p/src/model.ts" <<EOF
export interface Item {
  readonly id: string
  readonly createdAt: Date
  readonly tags: readonly string[]
}

export function describe(item: Item): string {
  return \`$p:\${item.id} (\${item.tags.join(", ")})\`
}
EOF
    cat > "packages/$p/src/errors.ts" <<EOF
export class PackageError extends Error {
  constructor(readonly code: string, message: string) {
    super(\`[$p] \${code}: \${message}\`)
  }
}
EOF
    cat > "packages/$p/src/index.ts" <<EOF
export * from "./model.js"
export * from "./errors.js"
EOF
    refs="$refs    { \"path\": \"packages/$p\" },
"
  done
  cat > packages/ledger/src/balance.ts <<'EOF'
export interface Entry {
  readonly account: string
  readonly amount: number
}

export function balance(entries: readonly Entry[]): number {
  let total = 0
  for (const entry of entries) total += entry.amount
  return total
}
EOF
  if [ "$1" = 1 ]; then
    printf '\nexport const openingBalance: number = "0.00"\n' >> packages/ledger/src/balance.ts
  fi
  printf '{\n  "files": [],\n  "references": [\n%s  ]\n}\n' "$(printf '%s' "$refs" | sed '$ s/,$//')
" > tsconfig.json
}

scenario tsc-fail
make_ts_workspace 1
capture tsc-fail tsc "$TSC -b --verbose"

scenario tsc-ok
make_ts_workspace 0
capture tsc-ok tsc "timeout 15 $TSC -p packages/settings --watch --preserveWatchOutput; $TSC -b --verbose"

###########################################################################
# node --test: 150 tests in 10 files, TAP (the default when piped) and spec.
###########################################################################
make_node_tests() { # make_node_tests FAILING(0|1)
  mkdir -p test
  i=0
  for mod in cart csv dates diff glob http-retry invoice markdown paths queue; do
    i=$((i + 1))
    {
      echo "import { describe, test } from 'node:test'"
      echo "import assert from 'node:assert/strict'"
      echo
      echo "const sum = (xs) => xs.reduce((a, b) => a + b, 0)"
      echo
      echo "describe('$mod', () => {"
      j=0
      names_from $((i * 3)) 15 | while IFS= read -r name; do
        j=$((j + 1))
        if [ "$1" = 1 ] && [ "$mod" = http-retry ] && [ $j = 8 ]; then
          echo "  test('applies the discount to every line item', () => {"
          echo "    const lines = [400, 350, 490]"
          echo "    assert.equal(sum(lines.map((x) => x - 0)), 1250)"
          echo "  })"
        else
          echo "  test('$name', () => {"
          echo "    assert.equal(sum([$i, $j]), $((i + j)))"
          echo "  })"
        fi
      done
      echo "})"
    } > "test/$mod.test.mjs"
  done
}

scenario node-test-fail
make_node_tests 1
capture node-test-fail node-test "node --test --test-concurrency=1"

scenario node-test-fail-spec
make_node_tests 1
capture node-test-fail-spec node-test "node --test --test-concurrency=1 --test-reporter=spec"

scenario node-test-ok
make_node_tests 0
capture node-test-ok node-test "node --test --test-concurrency=1"

###########################################################################
# vitest 3.2.7 with the verbose reporter.
###########################################################################
make_vitest_files() { # make_vitest_files DIR PREFIX FILES FAILING(0|1)
  mkdir -p "$1/src"
  k=0
  for f in $(printf '%s\n' format parse retry totals upload | head -n "$3"); do
    k=$((k + 1))
    {
      echo "import { describe, expect, test } from 'vitest'"
      echo
      echo "const total = (lines) => lines.reduce((sum, line) => sum + line.price * line.qty, 0)"
      echo
      echo "describe('$2 $f', () => {"
      j=0
      names_from $((k * 7)) 10 | while IFS= read -r name; do
        j=$((j + 1))
        if [ "$4" = 1 ] && [ "$f" = totals ] && [ $j = 5 ]; then
          echo "  test('applies the loyalty discount before tax', () => {"
          echo "    const lines = [{ price: 400, qty: 2 }, { price: 450, qty: 1 }]"
          echo "    expect(total(lines) - 10).toBe(1250)"
          echo "  })"
        else
          echo "  test('$name', () => {"
          echo "    expect(total([{ price: $j, qty: $k }])).toBe($((j * k)))"
          echo "  })"
        fi
      done
      echo "})"
    } > "$1/src/$f.test.js"
  done
}

scenario vitest-fail
for p in api billing web; do
  mkdir -p "packages/$p"
  printf '{ "name": "@acme/%s", "private": true, "type": "module" }\n' "$p" > "packages/$p/package.json"
  if [ $p = billing ]; then make_vitest_files "packages/$p" $p 5 1; else make_vitest_files "packages/$p" $p 5 0; fi
done
capture vitest-fail vitest "status=0; for p in packages/*; do echo \"== \$p\"; (cd \"\$p\" && $VITEST run --reporter=verbose) || status=1; done; exit \$status"

scenario vitest-ok
printf '{ "name": "acme", "private": true, "type": "module" }\n' > package.json
for p in api billing web; do make_vitest_files "packages/$p" "$p" 5 0; done
capture vitest-ok vitest "$VITEST run --reporter=verbose"

###########################################################################
# make + gcc: recursive make -k over 5 libraries of 25 C files each.
###########################################################################
C_MODULES='alloc arena buffer checksum clock config crc32 dict error_codes error-handling hash heap list lock log parser pool queue ring slab strings timer tokenizer utf8 vector'

make_c_tree() { # make_c_tree WITH_ERROR(0|1)
  libs='libcore libio libparse libnet libfmt'
  printf 'SUBDIRS = %s\n\nall: $(SUBDIRS)\n\n$(SUBDIRS):\n\t$(MAKE) -C $@\n\nclean:\n\tfor d in $(SUBDIRS); do $(MAKE) -C $$d clean; done\n\n.PHONY: all clean $(SUBDIRS)\n' "$libs" > Makefile
  for lib in $libs; do
    mkdir -p "$lib"
    objs=""
    for m in $C_MODULES; do
      fn=$(printf '%s_%s' "$lib" "$m" | tr '-' '_')
      objs="$objs $m.o"
      {
        echo "#include <stddef.h>"
        echo
        echo "int $fn(const int *values, size_t count)"
        echo "{"
        echo "  int acc = 0;"
        echo "  for (size_t i = 0; i < count; i++)"
        echo "    acc += values[i] * (int)(i + 1);"
        echo "  return acc;"
        echo "}"
      } > "$lib/$m.c"
    done
    printf 'CC = gcc\nCFLAGS = -Wall -Wextra -O2 -std=c11\nOBJS =%s\n\nall: %s.a\n\n%s.a: $(OBJS)\n\tar rcs $@ $^\n\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\nclean:\n\trm -f *.o *.a\n\n.PHONY: all clean\n' "$objs" "$lib" "$lib" > "$lib/Makefile"
  done
  # Two warnings that do not stop the build.
  cat > libio/buffer.c <<'EOF'
#include <stddef.h>
#include <string.h>

int libio_buffer(const int *values, size_t count)
{
  int scratch[16];
  int acc = 0;
  for (size_t i = 0; i < count; i++)
    acc += values[i];
  return acc;
}
EOF
  cat > libnet/timer.c <<'EOF'
#include <stddef.h>

int libnet_timer(const int *values, size_t count, int unused_flags)
{
  int acc = 0;
  for (int i = 0; i < count; i++)
    acc += values[i];
  return acc;
}
EOF
  if [ "$1" = 1 ]; then
    cat > libparse/heap.c <<'EOF'
#include <stddef.h>

struct heap {
  int *items;
  size_t len;
};

int libparse_heap(const int *values, size_t count)
{
  struct heap h = { .items = (int *)values, .len = count };
  const char *label = 1.5;
  for (size_t i = 0; i < h.len; i++)
    heap_push(&h, h.items[i]);
  return heap_size;
}
EOF
  fi
}

scenario make-gcc-fail
make_c_tree 1
capture make-gcc-fail make "make -k -j1"

scenario make-gcc-ok
make_c_tree 0
capture make-gcc-ok make "make -j1 && make -j1"

###########################################################################
# python3: a pipeline of 20 steps in a shell loop; one raises.
###########################################################################
make_python_steps() {
  mkdir -p steps data
  n=0
  for step in fetch unpack validate normalise dedupe enrich geocode currency accounts ingest reconcile rollup forecast charts export archive notify cleanup audit report; do
    n=$((n + 1))
    file=$(printf 'steps/s%02d_%s.py' "$n" "$step")
    cat > "$file" <<EOF
import logging
import random

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("$step")

rng = random.Random($n)
rows = 40 + $n * 3
log.info("starting $step on %d rows", rows)
for batch in range(1, 7):
    done = min(rows, batch * 10)
    log.info("batch %d: %d/%d rows, 0 errors", batch, done, rows)
print("$step: wrote data/$step.csv (%d rows, checksum %08x)" % (rows, rng.getrandbits(32)))
EOF
  done
  cat > steps/s10_ingest.py <<'EOF'
import csv
import io
import logging

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("ingest")

SOURCE = "id,account,amount\n" + "".join(
    f"{i},ACC-{i % 7:03d},{'n/a' if i == 57 else i * 3}\n" for i in range(1, 121)
)


class IngestError(Exception):
    pass


def parse_amount(text):
    return int(text)


def parse_row(row):
    return {"id": int(row["id"]), "account": row["account"], "amount": parse_amount(row["amount"])}


def ingest(source):
    rows = []
    for row in csv.DictReader(io.StringIO(source)):
        try:
            rows.append(parse_row(row))
        except ValueError as exc:
            log.error("row %s: could not parse amount %r", row["id"], row["amount"])
            raise IngestError(f"row {row['id']}: bad amount {row['amount']!r}") from exc
        if len(rows) % 20 == 0:
            log.info("ingested %d rows", len(rows))
    return rows


log.info("starting ingest on %d bytes", len(SOURCE))
rows = ingest(SOURCE)
print(f"ingest: wrote data/ingest.csv ({len(rows)} rows)")
EOF
}

scenario python-fail
make_python_steps
capture python-fail python "status=0; for s in steps/*.py; do echo \"==> \$s\"; python3 -u \"\$s\" || status=1; done; exit \$status"

scenario python-ok
mkdir -p tests tools
k=0
for mod in parser totals uploads retry locale; do
  k=$((k + 1))
  {
    echo "import unittest"
    echo
    echo
    echo "class $(echo "$mod" | awk '{ print toupper(substr($0, 1, 1)) substr($0, 2) }')Tests(unittest.TestCase):"
    names_from $((k * 5)) 30 | awk '{ gsub(/[^A-Za-z0-9]+/, "_"); print tolower($0) }' | awk '!seen[$0]++' | while IFS= read -r t; do
      echo "    def test_$t(self):"
      echo "        self.assertEqual(sum([$k, 1]), $((k + 1)))"
      echo
    done
  } > "tests/test_$mod.py"
done
cat > tools/validate.py <<'EOF'
import warnings

files = [f"config/service-{i:02d}.toml" for i in range(1, 41)]
warned = 0
for i, name in enumerate(files, 1):
    if i in (12, 29):
        warnings.warn(f"{name}: key 'timeout' is deprecated, use 'timeout_ms'", DeprecationWarning, stacklevel=1)
        warned += 1
    print(f"checking {name} ... ok")
print(f"checked {len(files)} files: 0 errors, {warned} warnings")
print("errors: 0")
print("no errors found")
EOF
capture python-ok python "python3 -m unittest discover -v -s tests && python3 -u -W default tools/validate.py"

###########################################################################
# rustc: four worker threads, one panics; main joins them.
###########################################################################
scenario rust-panic
cat > main.rs <<'EOF'
use std::thread;
use std::time::Duration;

fn checksum(window: &[u32]) -> u32 {
    window.iter().fold(17u32, |acc, x| acc.wrapping_mul(31).wrapping_add(*x))
}

fn main() {
    let data: Vec<u32> = (0..64).collect();
    let mut workers = Vec::new();
    for w in 0..4u64 {
        let data = data.clone();
        let handle = thread::Builder::new()
            .name(format!("worker-{w}"))
            .spawn(move || {
                for batch in 0..48u64 {
                    thread::sleep(Duration::from_millis(12 + 3 * w));
                    let start = ((batch * (w + 1)) % 49) as usize + if w == 2 && batch == 20 { 40 } else { 0 };
                    let window = &data[start..start + 16];
                    println!("worker-{w}: batch {batch:02} ok, checksum {:08x}", checksum(window));
                }
                w
            })
            .expect("spawn worker");
        workers.push(handle);
    }
    for handle in workers {
        let w = handle.join().expect("worker thread panicked");
        println!("worker-{w}: finished 48 batches");
    }
}
EOF
capture rust-panic rustc "rustc -O main.rs && ./main"

###########################################################################
# rustc: a converter whose main returns Err for one input in a shell loop.
###########################################################################
scenario rust-error
cat > convert.rs <<'EOF'
use std::error::Error;
use std::fs;

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args().nth(1).ok_or("usage: convert FILE")?;
    let text = fs::read_to_string(&path)?;
    println!("{path}: reading {} bytes", text.len());
    let celsius: f64 = text.trim().parse()?;
    println!("{path}: {celsius:.1} C = {:.1} F", celsius * 9.0 / 5.0 + 32.0);
    Ok(())
}
EOF
rustc -O convert.rs
mkdir -p readings
for i in $(seq 1 80); do
  value="$((i % 35)).$((i % 10))"
  [ "$i" = 39 ] && value="12,5"
  echo "$value" > "$(printf 'readings/sensor-%03d.txt' "$i")"
done
capture rust-error rustc "status=0; for f in readings/*.txt; do ./convert \"\$f\" || status=1; done; exit \$status"

###########################################################################
# cargo test: a workspace of three crates, one failing test.
###########################################################################
scenario cargo-test-fail
printf '[workspace]\nmembers = ["accounts", "ledger", "reports"]\nresolver = "2"\n' > Cargo.toml
for c in accounts ledger reports; do
  mkdir -p "$c/src"
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' "$c" > "$c/Cargo.toml"
  {
    echo "pub fn total(amounts: &[i64]) -> i64 {"
    echo "    amounts.iter().sum()"
    echo "}"
    echo
    echo "#[cfg(test)]"
    echo "mod tests {"
    echo "    use super::*;"
    names_from 11 30 | awk '{ gsub(/[^A-Za-z0-9]+/, "_"); print tolower($0) }' | awk '!seen[$0]++' | while IFS= read -r t; do
      if [ "$c" = ledger ] && [ "$t" = applies_the_discount_before_tax ]; then
        echo
        echo "    #[test]"
        echo "    fn $t() {"
        echo "        let lines = [800, 450];"
        echo "        assert_eq!(total(&lines) - 10, 1250);"
        echo "    }"
      else
        echo
        echo "    #[test]"
        echo "    fn $t() {"
        echo "        assert_eq!(total(&[1, 2, 3]), 6);"
        echo "    }"
      fi
      echo
      echo "    #[test]"
      echo "    fn ${t}_in_bulk() {"
      echo "        assert_eq!(total(&[2; 100]), 200);"
      echo "    }"
    done
    echo
    echo "    #[test]"
    echo "    fn no_panic_on_empty_input() {"
    echo "        assert_eq!(total(&[]), 0);"
    echo "    }"
    echo "}"
  } > "$c/src/lib.rs"
done
capture cargo-test-fail cargo "cargo test --offline --no-fail-fast -- --test-threads=1"

###########################################################################
# Signals: a segfault, a failed assert() (abort) and a job killed by timeout,
# each in one iteration of a shell loop run by sh.
###########################################################################
scenario segfault
cat > lookup.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>

struct customer {
  int id;
  const char *name;
  double credit;
};

static struct customer table[100];
static char names[100][16];

static struct customer *find(int id)
{
  for (int i = 0; i < 100; i++)
    if (table[i].id == id)
      return &table[i];
  return NULL;
}

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 0; i < 100; i++) {
    snprintf(names[i], sizeof names[i], "cust-%04d", 1000 + i);
    table[i] = (struct customer){ i == 43 ? 9999 : 1000 + i, names[i], 25.0 * i };
  }
  int rec = atoi(argv[1]);
  printf("record %d: looking up customer %d\n", rec, 1000 + rec);
  struct customer *c = find(1000 + rec);
  printf("record %d: %s has credit %.2f\n", rec, c->name, c->credit);
  return 0;
}
EOF
gcc -O0 -g -o lookup lookup.c
capture segfault sh "ulimit -c unlimited; status=0; for i in \$(seq 1 80); do ./lookup \$i || status=1; done; exit \$status"

scenario abort
cat > crunch.c <<'EOF'
#include <assert.h>
#include <stdio.h>
#include <sys/stat.h>

#define MAX_CHUNK 4096

static size_t blocks(size_t len)
{
  assert(len <= MAX_CHUNK);
  return (len + 511) / 512;
}

int main(int argc, char **argv)
{
  struct stat st;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (stat(argv[1], &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  printf("%s: %lld bytes\n", argv[1], (long long)st.st_size);
  printf("%s: packed into %zu blocks\n", argv[1], blocks((size_t)st.st_size));
  return 0;
}
EOF
gcc -O0 -g -o crunch crunch.c
mkdir -p input
for i in $(seq 1 100); do
  size=$(( (i * 397) % 4000 + 64 ))
  [ "$i" = 47 ] && size=5120
  head -c "$size" /dev/zero > "$(printf 'input/part-%03d.dat' "$i")"
done
capture abort sh "ulimit -c unlimited; status=0; for f in input/*.dat; do ./crunch \"\$f\" || status=1; done; exit \$status"

scenario killed
cat > render.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  int tile = atoi(argv[1]);
  printf("tile %d: rendering 256x256 region at (%d, %d), 4 samples per pixel\n", tile, (tile % 10) * 256, (tile / 10) * 256);
  double err = 1.0;
  long iterations = 0;
  while (err > 1e-9) {
    err = tile == 41 ? err : err * 0.5;
    iterations++;
  }
  printf("tile %d: converged after %ld iterations, residual below 1e-9\n", tile, iterations);
  return 0;
}
EOF
gcc -O0 -o render render.c
capture killed sh "status=0; for i in \$(seq 1 80); do timeout -s KILL 3 ./render \$i || status=1; done; exit \$status"

###########################################################################
# npm: workspaces; one build script throws, one package has no lint script.
###########################################################################
make_npm_workspace() { # make_npm_workspace FAILING_PACKAGE NO_LINT_PACKAGE
  printf '{\n  "name": "acme",\n  "private": true,\n  "workspaces": ["packages/*"]\n}\n' > package.json
  printf 'always-auth=false\n' > .npmrc
  for p in analytics api auth billing cli config docs emails errors ledger mobile payments search web; do
    mkdir -p "packages/$p/src"
    if [ "$p" = "$2" ]; then
      scripts='"build": "node build.js"'
    else
      scripts='"build": "node build.js", "lint": "node lint.js"'
    fi
    printf '{\n  "name": "@acme/%s",\n  "version": "1.4.0",\n  "scripts": { %s }\n}\n' "$p" "$scripts" > "packages/$p/package.json"
    for f in index routes model store view api utils types; do echo "export const $f = '$p'" > "packages/$p/src/$f.js"; done
    cat > "packages/$p/build.js" <<'EOF'
const fs = require('node:fs')
const path = require('node:path')
const files = fs.readdirSync('src').sort()
const config = { entry: 'src/index.js', outDir: 'dist' }
for (const f of files) console.log(`  compiled ${path.join('src', f)} -> ${path.join(config.outDir, f)}`)
console.log(`built ${files.length} files into ${config.outDir}/ (0 errors)`)
EOF
    cat > "packages/$p/lint.js" <<'EOF'
const fs = require('node:fs')
const files = fs.readdirSync('src').sort()
for (const f of files) console.log(`  src/${f}: clean (no-unused-vars, no-undef, eqeqeq, prefer-const)`)
console.log(`${files.length} files linted: 0 problems (0 errors, 0 warnings)`)
EOF
  done
  if [ -n "$1" ]; then
    cat > "packages/$1/build.js" <<'EOF'
const fs = require('node:fs')
const path = require('node:path')
const files = fs.readdirSync('src').sort()
const configs = { production: { entry: 'src/index.js', outDir: 'dist' } }
const config = configs[process.env.BUILD_ENV]
console.log(`building ${files.length} files`)
for (const f of files) console.log(`  compiled ${path.join('src', f)} -> ${path.join(config.outDir, f)}`)
EOF
  fi
}

scenario npm-fail
make_npm_workspace emails ""
capture npm-fail npm "npm run build --workspaces"

scenario npm-missing-script
make_npm_workspace "" docs
capture npm-missing-script npm "npm run lint --workspaces"

###########################################################################
# java: worker threads, one throws; main reports it.
###########################################################################
scenario java-fail
cat > Main.java <<'EOF'
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

public class Main {
  static final AtomicInteger finished = new AtomicInteger();

  static long settle(int worker, int batch) {
    long cents = 0;
    for (int i = 0; i < 100; i++) cents += (long) i * (worker + 1) * (batch + 1);
    if (worker == 2 && batch == 21) {
      throw new IllegalStateException("ledger out of balance by 10 cents in batch " + batch);
    }
    return cents;
  }

  public static void main(String[] args) throws Exception {
    List<Thread> workers = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      final int worker = w;
      Thread t = new Thread(() -> {
        for (int batch = 0; batch < 48; batch++) {
          try {
            Thread.sleep(12 + 3 * worker);
          } catch (InterruptedException e) {
            return;
          }
          System.out.printf("worker-%d: batch %02d settled, %d cents, 0 exceptions%n", worker, batch, settle(worker, batch));
        }
        finished.incrementAndGet();
      }, "worker-" + w);
      workers.add(t);
      t.start();
    }
    for (Thread t : workers) t.join();
    System.out.printf("%d of %d workers finished%n", finished.get(), workers.size());
    if (finished.get() != workers.size()) {
      throw new RuntimeException((workers.size() - finished.get()) + " of " + workers.size() + " workers did not finish");
    }
  }
}
EOF
capture java-fail java "javac Main.java && java Main"

###########################################################################
# git: pushing a dozen repositories, one has no remote; and a log loop over
# directories where one is not a repository.
###########################################################################
COMMIT_MESSAGES='Initial commit
Add config loader
Fix error handling in retry loop
Add tests for failed logins
Treat a missing cache as non-fatal
Bump dependencies
Log fatal errors with the request id
Rename errors module to problems
Speed up startup by 40%
Add abort signal to uploads
Document the release process
Handle killed workers in the supervisor
Fix typo in README
Drop support for Node 16
Release 1.4.0'

make_git_repo() { # make_git_repo DIR SEED
  git init -q -b main "$1"
  n=0
  printf '%s\n' "$COMMIT_MESSAGES" | while IFS= read -r msg; do
    n=$((n + 1))
    echo "$2 $n $msg" >> "$1/CHANGES"
    git -C "$1" add CHANGES
    d="2024-03-$(printf '%02d' "$n")T10:$(printf '%02d' "$2"):00Z"
    GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git -C "$1" commit -q -m "$msg"
  done
}

scenario git-fail
s=0
for r in accounts api auth billing docs emails ledger mobile payments search web worker; do
  s=$((s + 1))
  make_git_repo "repos/$r" "$s"
  git init -q --bare "remotes/$r.git"
  [ "$r" = emails ] || git -C "repos/$r" remote add origin "$SCRATCH/git-fail/remotes/$r.git"
done
capture git-fail git "status=0; for r in repos/*; do echo \"== \$r\"; git -C \"\$r\" log --oneline -n 15 && git -C \"\$r\" push origin main || status=1; done; exit \$status"

scenario git-not-a-repo
s=0
for r in accounts api auth billing docs emails ledger mobile payments search web worker; do
  s=$((s + 1))
  if [ "$r" = emails ]; then mkdir -p "$r"; echo "notes" > "$r/README"; else make_git_repo "$r" "$s"; fi
done
capture git-not-a-repo git "status=0; for d in */; do echo \"== \$d\"; git -C \"\$d\" log --format='%h %ad %s' --date=short -n 15 || status=1; done; exit \$status"

###########################################################################
# Tools from npm, pinned, installed once for the scenarios below.
###########################################################################
TOOLS="$SCRATCH/tools"
mkdir -p "$TOOLS"
(cd "$TOOLS" && npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error \
  eslint@9.17.0 eslint-formatter-compact@8.40.0 jest@29.7.0 mocha@10.8.2 prettier@3.3.3 yarn@1.22.22 > /dev/null 2>&1) ||
  echo "npm install of the JavaScript tools failed" >&2
BIN="$TOOLS/node_modules/.bin"
PNPM="npx -y pnpm@10.34.8"

###########################################################################
# gcc + make: 3 directories of 25 programs each, make -k; one program calls
# a function no object defines, so its link fails.
###########################################################################
scenario link-fail
for d in tools daemons reports; do
  mkdir -p "$d"
  progs=""
  for m in $C_MODULES; do
    prog=$(printf '%s_%s' "$d" "$m" | tr '-' '_')
    progs="$progs $prog"
    {
      echo "#include <stdio.h>"
      echo
      if [ "$prog" = reports_heap ]; then
        echo "long ledger_total(const long *amounts, int count);"
        echo
      fi
      echo "int main(void)"
      echo "{"
      echo "  long amounts[4] = { 12, 30, 7, 1 };"
      if [ "$prog" = reports_heap ]; then
        printf '%s\n' '  printf("%ld\n", ledger_total(amounts, 4));'
      else
        printf '%s\n' '  printf("%ld\n", amounts[0] + amounts[3]);'
      fi
      echo "  return 0;"
      echo "}"
    } > "$d/$prog.c"
  done
  printf 'MAKEFLAGS += --no-builtin-rules\nCC = gcc\nCFLAGS = -Wall -O2\nPROGS =%s\n\nall: $(PROGS)\n\n%%: %%.o\n\t$(CC) -o $@ $<\n\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\n.PHONY: all\n' "$progs" > "$d/Makefile"
done
printf 'SUBDIRS = tools reports daemons\n\nall: $(SUBDIRS)\n\n$(SUBDIRS):\n\t$(MAKE) -C $@\n\n.PHONY: all $(SUBDIRS)\n' > Makefile
capture link-fail make "make -k -j1"

###########################################################################
# make: the same tree, where one Makefile names a source that is not there.
###########################################################################
scenario make-no-rule
make_c_tree 0
sed -i 's/^OBJS = alloc.o/OBJS = allocator.o alloc.o/' libparse/Makefile
capture make-no-rule make "make -k -j1"

###########################################################################
# CMake configure: 40 subdirectories; one links a target that does not exist.
###########################################################################
scenario cmake-config-fail
for lib in core io parse net fmt http json xml; do
  mkdir -p "$lib"
  {
    echo "cmake_minimum_required(VERSION 3.20)"
    echo "project($lib C)"
  } > "$lib/CMakeLists.txt"
  for m in alloc arena buffer checksum clock config crc32 dict hash list; do
    mkdir -p "$lib/$m"
    printf 'int %s_%s(void) { return 0; }\n' "$lib" "$m" > "$lib/$m/$m.c"
    printf 'add_library(%s_%s STATIC %s.c)\nmessage(STATUS "%s/%s: 1 source, static library, position independent code off")\n' "$lib" "$m" "$m" "$lib" "$m" > "$lib/$m/CMakeLists.txt"
    echo "add_subdirectory($m)" >> "$lib/CMakeLists.txt"
  done
done
printf 'add_library(net_clock STATIC clock.c)\ntarget_link_libraries(net_clok PRIVATE net_alloc)\nmessage(STATUS "net/clock: 1 source, static")\n' > net/clock/CMakeLists.txt
capture cmake-config-fail cmake "status=0; for p in core io parse net fmt http json xml; do echo \"== \$p\"; cmake -S \$p -B build/\$p -G Ninja || status=1; done; exit \$status"

###########################################################################
# CMake + Ninja: 60 static libraries, one with a compile error; ninja -k 0
# goes on with the others.
###########################################################################
scenario cmake-ninja-fail
{
  echo "cmake_minimum_required(VERSION 3.20)"
  echo "project(acme C)"
} > CMakeLists.txt
for lib in core io parse net fmt http json; do
  for m in alloc arena buffer checksum clock config crc32 dict hash list lock log; do
    mkdir -p "src/$lib"
    fn="${lib}_${m}"
    printf '#include <stddef.h>\n\nint %s(const int *v, size_t n)\n{\n  int acc = 0;\n  for (size_t i = 0; i < n; i++)\n    acc += v[i];\n  return acc;\n}\n' "$fn" > "src/$lib/$m.c"
    echo "add_library($fn STATIC src/$lib/$m.c)" >> CMakeLists.txt
  done
done
printf '#include <stddef.h>\n\nint parse_dict(const int *v, size_t n)\n{\n  int acc = 0;\n  for (size_t i = 0; i < n; i++)\n    acc += v[i];\n  return acc + bucket_count;\n}\n' > src/parse/dict.c
capture cmake-ninja-fail cmake "cmake -S . -B build -G Ninja && ninja -C build -k 0"

###########################################################################
# eslint 9: 30 files with warnings; in the failing tree one file uses an
# undefined name. Stylish (default) and compact formats.
###########################################################################
make_eslint_tree() { # make_eslint_tree WITH_ERROR(0|1)
  cat > eslint.config.js <<'EOF'
export default [
  {
    files: ["**/*.js"],
    languageOptions: { sourceType: "module", globals: { console: "readonly", process: "readonly" } },
    rules: { "no-unused-vars": "warn", "prefer-const": "warn", "no-undef": "error", eqeqeq: "warn" }
  }
]
EOF
  printf '{ "name": "acme-web", "private": true, "type": "module" }\n' > package.json
  mkdir -p src
  mkdir -p lib
  for m in $(echo "$C_MODULES" | tr '-' '_'); do
    f="src/$(echo "$m" | tr '_' '-').js"
    {
      echo "import { format } from './format.js'"
      echo
      echo "export function ${m}Handler(input, options) {"
      echo "  let count = 0"
      echo "  let errorCount = 0"
      echo "  const unused = options"
      echo "  for (const item of input) {"
      echo "    if (item.kind == 'error') count++"
      echo "  }"
      echo "  return format(count)"
      echo "}"
      echo
      echo "export function ${m}Reset(state) {"
      echo "  let last = state.last"
      echo "  return { ...state, last }"
      echo "}"
    } > "$f"
    sed -e "s/Handler/Task/" -e "s/Reset/Clear/" "$f" > "lib/${m}.js"
  done
  echo "export const format = (n) => String(n)" > src/format.js
  cp src/format.js lib/format.js
  if [ "$1" = 1 ]; then
    cat >> src/heap.js <<'EOF'

export function heapDrain(queue) {
  while (queue.length > 0) queue.pop()
  return clean(queue)
}
EOF
  fi
}

scenario eslint-stylish-fail
make_eslint_tree 1
capture eslint-stylish-fail eslint "$BIN/eslint src lib"

scenario eslint-compact-fail
make_eslint_tree 1
capture eslint-compact-fail eslint "$BIN/eslint -f $TOOLS/node_modules/eslint-formatter-compact/index.js src lib"

scenario eslint-ok
make_eslint_tree 0
capture eslint-ok eslint "$BIN/eslint src lib"

###########################################################################
# prettier --check per package; one file is not formatted.
###########################################################################
scenario prettier-fail
for p in analytics api auth billing cli config docs emails errors ledger mobile payments search web; do
  mkdir -p "packages/$p/src"
  for f in index routes model store view api utils types hooks schema client server cache events errors render; do
    printf 'export const %s = {\n  name: "%s",\n  errors: [],\n};\n' "$f" "$p" > "packages/$p/src/$f.js"
  done
done
printf 'export const render = {name:"emails",errors:[ ]}\n' > packages/emails/src/view.js
capture prettier-fail prettier "status=0; for p in packages/*; do echo \"== \$p\"; wc -c \"\$p\"/src/*.js; $BIN/prettier --check \"\$p/src\" || status=1; done; exit \$status"

###########################################################################
# node: 30 jobs in a shell loop; one runs out of heap.
###########################################################################
scenario node-heap
cat > job.js <<'EOF'
const n = Number(process.argv[2])
console.log(`job ${n}: loading 4 shards`)
const rows = []
if (n === 14) {
  for (let i = 0; ; i++) rows.push({ id: i, payload: 'x'.repeat(64) + i })
}
for (let s = 1; s <= 4; s++) console.log(`job ${n}: shard ${s} merged, ${s * 250} rows`)
console.log(`job ${n}: done`)
EOF
capture node-heap node "ulimit -c 0; status=0; for i in \$(seq 1 30); do node --max-old-space-size=32 job.js \$i || status=1; done; exit \$status"

###########################################################################
# node: jobs in a shell loop; one leaves a promise rejection unhandled.
###########################################################################
scenario node-unhandled
cat > sync.mjs <<'EOF'
const tenant = Number(process.argv[2])
const fetchQuota = async (t) => {
  await new Promise((r) => setTimeout(r, 5))
  if (t === 27) throw 'quota exceeded for tenant 27'
  return 1000 + t
}
console.log(`tenant ${tenant}: syncing 3 calendars`)
for (let c = 1; c <= 3; c++) console.log(`tenant ${tenant}: calendar ${c} synced`)
fetchQuota(tenant).then((q) => console.log(`tenant ${tenant}: quota ${q}`))
EOF
capture node-unhandled node "status=0; for i in \$(seq 1 60); do node sync.mjs \$i || status=1; done; exit \$status"

###########################################################################
# pnpm -r: 14 packages, one build script fails with a plain message.
###########################################################################
make_js_workspace() { # make_js_workspace FAILING_PACKAGE
  for p in analytics api auth billing cli config docs emails errors ledger mobile payments search web; do
    mkdir -p "packages/$p/src"
    printf '{\n  "name": "@acme/%s",\n  "version": "1.4.0",\n  "private": true,\n  "scripts": { "build": "node build.js" }\n}\n' "$p" > "packages/$p/package.json"
    for f in index routes model store view api utils types; do echo "export const $f = '$p'" > "packages/$p/src/$f.js"; done
    cat > "packages/$p/build.js" <<'EOF'
const fs = require('node:fs')
const files = fs.readdirSync('src').sort()
for (const f of files) console.log(`  bundled src/${f} -> dist/${f} (${fs.statSync('src/' + f).size} bytes, minified, source map dist/${f}.map)`)
console.log(`built ${files.length} files (0 errors)`)
EOF
  done
  cat > "packages/$1/build.js" <<'EOF'
const fs = require('node:fs')
const files = fs.readdirSync('src').sort()
for (const f of files.slice(0, 4)) console.log(`  bundled src/${f}`)
console.error('template invoice.html not found in src/templates')
process.exit(1)
EOF
}

scenario pnpm-fail
printf '{ "name": "acme", "private": true }\n' > package.json
printf 'packages:\n  - "packages/*"\n' > pnpm-workspace.yaml
make_js_workspace emails
capture pnpm-fail pnpm "$PNPM -r --workspace-concurrency=1 --no-bail run build"

scenario pnpm-parallel-fail
printf '{ "name": "acme", "private": true }\n' > package.json
printf 'packages:\n  - "packages/*"\n' > pnpm-workspace.yaml
make_js_workspace emails
capture pnpm-parallel-fail pnpm "$PNPM -r --workspace-concurrency=2 --no-bail --reporter=append-only run build"

scenario yarn-fail
printf '{ "name": "acme", "private": true, "workspaces": ["packages/*"] }\n' > package.json
make_js_workspace emails
capture yarn-fail yarn "status=0; for p in packages/*; do echo \"== \$p\"; (cd \"\$p\" && $BIN/yarn run build) || status=1; done; exit \$status"

###########################################################################
# jest 29 --verbose: 8 files of 15 tests; one throws a TypeError.
###########################################################################
scenario jest-fail
for p in api billing web; do
  mkdir -p "packages/$p/src/__tests__"
  printf '{ "name": "@acme/%s", "private": true }\n' "$p" > "packages/$p/package.json"
  k=0
  for f in cart currency discounts invoices ledger refunds tax totals; do
    k=$((k + 1))
    {
      echo "const rates = { EUR: { rate: 1.1 }, USD: { rate: 1 } }"
      echo "const convert = (amount, currency) => amount * rates[currency].rate"
      echo
      echo "describe('$p $f', () => {"
      j=0
      names_from $((k * 4)) 8 | while IFS= read -r name; do
        j=$((j + 1))
        if [ "$p" = billing ] && [ "$f" = ledger ] && [ $j = 5 ]; then
          echo "  test('converts the balance to the ledger currency', () => {"
          echo "    expect(convert(1250, 'GBP')).toBe(1100)"
          echo "  })"
        elif [ "$p" = billing ] && [ "$f" = tax ] && [ $j = 3 ]; then
          echo "  test('converts cents to euros', () => {"
          echo "    expect(convert(3, 'EUR')).toBe(3.3)"
          echo "  })"
        else
          echo "  test('$name', () => {"
          echo "    expect(convert($j, 'USD')).toBe($j)"
          echo "  })"
        fi
      done
      echo "})"
    } > "packages/$p/src/__tests__/$f.test.js"
  done
done
capture jest-fail jest "status=0; for p in packages/*; do echo \"== \$p\"; (cd \"\$p\" && $BIN/jest --verbose --ci --runInBand) || status=1; done; exit \$status"

###########################################################################
# mocha, one run per package; one assertion fails.
###########################################################################
scenario mocha-fail
for p in api billing web; do
  mkdir -p "packages/$p/test"
  k=0
  for f in format parse retry totals upload; do
    k=$((k + 1))
    {
      echo "const assert = require('node:assert/strict')"
      echo
      echo "const total = (lines) => lines.reduce((sum, line) => sum + line.price * line.qty, 0)"
      echo
      echo "describe('$p $f', () => {"
      j=0
      names_from $((k * 7)) 10 | while IFS= read -r name; do
        j=$((j + 1))
        if [ "$p" = billing ] && [ "$f" = totals ] && [ $j = 5 ]; then
          echo "  it('applies the loyalty discount before tax', () => {"
          echo "    assert.equal(total([{ price: 400, qty: 2 }, { price: 450, qty: 1 }]) - 10, 1250)"
          echo "  })"
        else
          echo "  it('$name', () => {"
          echo "    assert.equal(total([{ price: $j, qty: $k }]), $((j * k)))"
          echo "  })"
        fi
      done
      echo "})"
    } > "packages/$p/test/$f.test.js"
  done
done
capture mocha-fail mocha "status=0; for p in packages/*; do echo \"== \$p\"; (cd \"\$p\" && $BIN/mocha) || status=1; done; exit \$status"

###########################################################################
# pytest -v, one run per package; one assertion fails. And a passing run
# whose test ids say error, fatal and fail.
###########################################################################
make_py_packages() { # make_py_packages FAILING(0|1)
  for p in accounts billing money orders reports; do
    mkdir -p "$p/tests"
    {
      echo "import pytest"
      echo
      echo
      echo "def parse_amount(text):"
      echo "    return float(text.replace(',', ''))"
      echo
      echo
      echo "@pytest.mark.parametrize('level', ['debug', 'info', 'warning', 'error', 'fatal'])"
      echo "def test_accepts_log_level(level):"
      echo "    assert level.islower()"
      echo
      echo
      echo "@pytest.mark.parametrize('case', ['fail-fast', 'no-errors', 'retry-failed', 'abort'])"
      echo "def test_parses_flag(case):"
      echo "    assert '-' in case or case.isalpha()"
      echo
      names_from 3 24 | awk '{ gsub(/[^A-Za-z0-9]+/, "_"); print tolower($0) }' | awk '!seen[$0]++' | while IFS= read -r t; do
        echo
        echo "def test_$t():"
        echo "    assert parse_amount('12') == 12"
        echo
      done
      if [ "$1" = 1 ] && [ "$p" = money ]; then
        echo
        echo "def test_parses_thousands_separator():"
        echo "    amount = parse_amount('1.234,56')"
        echo "    assert amount == 1234.56"
      fi
    } > "$p/tests/test_$p.py"
  done
}

scenario pytest-fail
make_py_packages 1
capture pytest-fail pytest "status=0; for p in */; do echo \"== \$p\"; python3 -m pytest -v -p no:cacheprovider \"\$p\" || status=1; done; exit \$status"

scenario pytest-ok
make_py_packages 0
capture pytest-ok pytest "python3 -m pytest -v -p no:cacheprovider ."

###########################################################################
# unittest -v, one run per package; one assertion fails.
###########################################################################
scenario unittest-fail
for p in accounts billing money orders reports; do
  mkdir -p "$p"
  {
    echo "import unittest"
    echo
    echo
    echo "def parse_amount(text):"
    echo "    return float(text.replace(',', ''))"
    echo
    echo
    echo "class $(echo "$p" | awk '{ print toupper(substr($0, 1, 1)) substr($0, 2) }')Tests(unittest.TestCase):"
    names_from 5 25 | awk '{ gsub(/[^A-Za-z0-9]+/, "_"); print tolower($0) }' | awk '!seen[$0]++' | while IFS= read -r t; do
      echo "    def test_$t(self):"
      echo "        self.assertEqual(parse_amount('12'), 12)"
      echo
    done
    if [ "$p" = money ]; then
      echo "    def test_parses_thousands_separator(self):"
      echo "        self.assertEqual(parse_amount('1.234,56'), 1234.56)"
    fi
  } > "$p/test_$p.py"
done
capture unittest-fail unittest "status=0; for p in */; do echo \"== \$p\"; (cd \"\$p\" && python3 -m unittest -v) || status=1; done; exit \$status"

###########################################################################
# go test -v over a module of 9 packages; one assertion fails.
###########################################################################
GO_ENV="GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOCACHE=$SCRATCH/gocache GOPATH=$SCRATCH/gopath"
make_go_module() {
  printf 'module example.com/shop\n\ngo 1.19\n' > go.mod
  for p in accounts billing cart ledger money orders reports stock users; do
    mkdir -p "$p"
    {
      echo "package $p"
      echo
      echo "// Sum adds amounts in cents."
      echo "func Sum(xs []int) int {"
      echo "	t := 0"
      echo "	for _, x := range xs {"
      echo "		t += x"
      echo "	}"
      echo "	return t"
      echo "}"
    } > "$p/$p.go"
    {
      echo "package $p"
      echo
      echo "import \"testing\""
      names_from 9 14 | awk '{ gsub(/[^A-Za-z0-9]+/, " "); n = ""; for (i = 1; i <= NF; i++) n = n toupper(substr($i, 1, 1)) substr($i, 2); print n }' | awk '!seen[$0]++' | while IFS= read -r t; do
        echo
        echo "func Test$t(t *testing.T) {"
        echo "	if got := Sum([]int{1, 2, 3}); got != 6 {"
        echo "		t.Errorf(\"Sum = %d, want 6\", got)"
        echo "	}"
        echo "}"
      done
    } > "$p/${p}_test.go"
  done
}

scenario go-test-fail
make_go_module
cat >> money/money.go <<'EOF'

// Parse reads an amount such as "1,234.56".
func Parse(s string) float64 {
	var whole, frac float64
	for i, r := range s {
		if r == '.' {
			frac = float64(len(s)-i-1) / 100
			break
		}
		if r < '0' || r > '9' {
			break
		}
		whole = whole*10 + float64(r-'0')
	}
	return whole + frac
}
EOF
cat >> money/money_test.go <<'EOF'

func TestParse(t *testing.T) {
	if got := Parse("12"); got != 12 {
		t.Errorf("Parse(%q) = %.2f, want %.2f", "12", got, 12.0)
	}
	if got := Parse("1,234.56"); got != 1234.56 {
		t.Errorf("Parse(%q) = %.2f, want %.2f", "1,234.56", got, 1234.56)
	}
}
EOF
cat >> orders/orders.go <<'EOF'

// Describe names an order for the logs.
func Describe(id string) string {
	return fmt.Sprintf("order %d", id)
}
EOF
sed -i 's/^package orders$/package orders\n\nimport "fmt"/' orders/orders.go
capture go-test-fail go "env $GO_ENV go test -v -count=1 ./..."

scenario go-build-fail
make_go_module
for p in accounts billing stock users; do for i in $(seq 1 40); do printf 'package %s\n\n// Level%d is a reorder level.\nfunc Level%d() int { return %d }\n' "$p" "$i" "$i" "$i" > "$p/reorder_level_$i.go"; done; done
cat >> money/money.go <<'EOF'

// Cents converts a decimal string to cents.
func Cents(s string) int {
	return s
}
EOF
capture go-build-fail go "status=0; for p in */; do echo \"== \$p\"; wc -lc \"\$p\"*.go; env $GO_ENV go vet \"./\$p\" && env $GO_ENV go build -v \"./\$p\" || status=1; done; exit \$status"

###########################################################################
# javac, one class at a time; one refers to a name that does not exist.
###########################################################################
scenario javac-fail
mkdir -p src out
for m in Accounts Billing Cart Currency Discounts Invoices Ledger Orders Payments Refunds Reports Stock Tax Totals Users Vendors; do
  {
    echo "import java.util.ArrayList;"
    echo "import java.util.List;"
    echo
    echo "public class $m {"
    echo "  private final List items = new ArrayList();"
    echo
    echo "  public void add(Object item) {"
    echo "    items.add(item);"
    echo "  }"
    echo
    echo "  public long total() {"
    echo "    long total = 0;"
    echo "    for (Object item : items) total += item.hashCode() % 100;"
    if [ "$m" = Ledger ]; then echo "    return totl;"; else echo "    return total;"; fi
    echo "  }"
    echo "}"
  } > "src/$m.java"
done
capture javac-fail javac "status=0; for f in src/*.java; do echo \"javac \$f\"; javac -Xlint:all -d out \"\$f\" || status=1; done; ls out; exit \$status"

# make_release_tree PAGES: the built site the deploy scenarios copy (build/pages, build/assets;
# logo.svg is the asset the build never made).
make_release_tree() {
  mkdir -p build/pages build/assets
  for i in $(seq 1 "$1"); do echo "page $i" > "build/pages/page-$i.html"; done
  for a in app.css app.js favicon.ico fonts.css print.css; do echo "$a" > "build/assets/$a"; done
}

###########################################################################
# Maven, offline (-o), with --fail-at-end over a reactor of 12 modules:
# one module's test fails; in another build, one module does not compile.
###########################################################################
make_maven_reactor() { # make_maven_reactor BROKEN(test|compile)
  modules=""
  for m in accounts billing cart currency discounts invoices ledger orders payments refunds reports tax; do
    modules="$modules<module>$m</module>"
    mkdir -p "$m/src/main/java/com/acme/$m" "$m/src/test/java/com/acme/$m"
    cat > "$m/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>com.acme</groupId><artifactId>shop</artifactId><version>1.0</version></parent>
  <artifactId>$m</artifactId>
</project>
EOF
    ret=t
    if [ "$m" = ledger ]; then
      case $1 in compile) ret=totl ;; test) ret="t + xs.length / 3" ;; esac
    fi
    cat > "$m/src/main/java/com/acme/$m/Totals.java" <<EOF
package com.acme.$m;

public final class Totals {
  private Totals() {}

  public static long total(long[] xs) { long t = 0; for (long x : xs) t += x; return $ret; }

  public static long largest(long[] xs) { long m = Long.MIN_VALUE; for (long x : xs) m = Math.max(m, x); return m; }
}
EOF
    cat > "$m/src/test/java/com/acme/$m/TotalsTest.java" <<EOF
package com.acme.$m;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class TotalsTest {
  @Test void sumsThreeAmounts() { assertEquals(6L, Totals.total(new long[] {1, 2, 3})); }

  @Test void sumsNothingToZero() { assertEquals(0L, Totals.total(new long[] {})); }

  @Test void findsTheLargest() { assertEquals(9L, Totals.largest(new long[] {4, 9, 2})); }
}
EOF
  done
  cat > pom.xml <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId><artifactId>shop</artifactId><version>1.0</version><packaging>pom</packaging>
  <modules>$modules</modules>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
  </plugins></build>
</project>
EOF
}
scenario maven-test-fail
make_maven_reactor test
capture maven-test-fail maven "mvn -o -B -fae test"

scenario maven-compile-fail
make_maven_reactor compile
capture maven-compile-fail maven "mvn -o -B -fae test"

###########################################################################
# docker build, with BuildKit's plain progress and with the classic builder:
# a release image whose last step copies 80 pages and its assets, one of
# which the build never made, then goes on. The image holds a static
# busybox only (imported, so nothing is pulled), and steps run without a
# network. DOCKER names a client with BuildKit built in (or with buildx).
###########################################################################
DOCKER=${DOCKER:-docker}
docker_base() {
  $DOCKER image inspect spillway-corpus-base:1 > /dev/null 2>&1 && return 0
  root="$SCRATCH/docker-rootfs"
  mkdir -p "$root/bin" "$root/tmp"
  cp "$(command -v busybox)" "$root/bin/busybox"
  for c in $("$root/bin/busybox" --list); do [ "$c" = busybox ] || ln -sf busybox "$root/bin/$c"; done
  tar -C "$root" -c . | $DOCKER import - spillway-corpus-base:1 > /dev/null
}
make_docker_context() {
  make_release_tree 80
  cat > deploy.sh <<'EOF'
status=0
mkdir -p /dist/pages /dist/assets
for f in /build/pages/*.html; do
  cp "$f" /dist/pages/ && echo "copied $f"
done
for a in app.css app.js logo.svg favicon.ico fonts.css print.css; do
  cp "/build/assets/$a" /dist/assets/ || status=1
done
for f in /dist/pages/*.html; do
  gzip -kf "$f" && echo "compressed $f"
done
ls /dist/assets
exit $status
EOF
  cat > Dockerfile <<'EOF'
FROM spillway-corpus-base:1 AS build
COPY build /build
RUN for i in $(seq 1 30); do echo "checking module-$i.js: ok"; done
FROM spillway-corpus-base:1
COPY --from=build /build /build
COPY deploy.sh /deploy.sh
RUN sh /deploy.sh
EOF
}
if [ -z "$ONLY" ] || printf ' %s ' "$ONLY" | grep -q " docker-"; then docker_base; fi
scenario docker-build-fail
make_docker_context
capture docker-build-fail docker "DOCKER_BUILDKIT=1 $DOCKER build --no-cache --network=none --progress=plain -t spillway-corpus-release ."

scenario docker-classic-fail
make_docker_context
capture docker-classic-fail docker "DOCKER_BUILDKIT=0 $DOCKER build --no-cache --network=none -t spillway-corpus-release-classic ."

###########################################################################
# cargo build --keep-going over a workspace of 24 crates; one type error.
###########################################################################
scenario cargo-build-fail
members=""
for c in accounts api auth billing cache cli config currency emails errors feeds health invoices ledger metrics mobile payments queue reports search storage tax users web; do
  mkdir -p "$c/src"
  members="$members\"$c\", "
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' "$c" > "$c/Cargo.toml"
  printf 'pub fn total(amounts: &[i64]) -> i64 {\n    let unused = 0;\n    amounts.iter().sum()\n}\n' > "$c/src/lib.rs"
done
printf 'pub fn total(amounts: &[i64]) -> i64 {\n    let count: usize = amounts.len();\n    let sum: i64 = amounts.iter().sum();\n    sum / count\n}\n' > ledger/src/lib.rs
printf '[workspace]\nmembers = [%s]\nresolver = "2"\n' "$(echo "$members" | sed 's/, $//')" > Cargo.toml
capture cargo-build-fail cargo "cargo build --offline --keep-going -j1"

###########################################################################
# sh -x: a deploy script; one cp names a file the build did not make.
###########################################################################
scenario sh-setx-fail
make_release_tree 40
mkdir -p dist/assets dist/pages
cat > deploy.sh <<'EOF'
set -x
echo "deploying release 1.4.0"
for f in build/pages/*.html; do
  cp "$f" dist/pages/
  echo "copied $f"
done
for a in app.css app.js logo.svg favicon.ico fonts.css print.css; do
  cp "build/assets/$a" dist/assets/
done
for f in dist/pages/*.html; do
  gzip -kf "$f"
done
ls dist/assets
echo "release 1.4.0 deployed"
EOF
capture sh-setx-fail sh "sh deploy.sh"

###########################################################################
# bash: hooks run in a loop; one calls a command that is not installed,
# one is not executable.
###########################################################################
scenario sh-hooks-fail
mkdir -p hooks
for i in $(seq 10 5 95); do
  printf '#!/bin/sh\necho "hook %s: checking release"\nfor s in manifest checksums signatures licenses changelog sbom provenance notices; do echo "hook %s: $s ok (checked against the 1.4.0 release manifest)"; done\n' "$i" "$i" > "hooks/$i-check.sh"
  chmod +x "hooks/$i-check.sh"
done
printf '#!/bin/sh\necho "hook 40: announcing release"\nslack-notify --channel releases "1.4.0 is out"\n' > hooks/40-check.sh
chmod -x hooks/65-check.sh
capture sh-hooks-fail bash "bash -c 'status=0; for h in hooks/*.sh; do echo \"== \$h\"; \"./\$h\" || status=1; done; exit \$status'"

###########################################################################
# git: a rebase that stops on a conflict, between long logs; and pushes
# where one remote has moved on.
###########################################################################
scenario git-conflict
git init -q -b main .
mkdir -p lib
printf 'export function run(task) {\n  return task()\n}\n' > lib/runner.js
git add . && GIT_AUTHOR_DATE=2024-03-01T10:00:00Z GIT_COMMITTER_DATE=2024-03-01T10:00:00Z git commit -q -m "Initial commit"
n=0
printf '%s\n' "$COMMIT_MESSAGES" | while IFS= read -r msg; do
  n=$((n + 1))
  echo "$n $msg" >> CHANGES
  git add CHANGES
  d="2024-03-$(printf '%02d' "$n")T11:00:00Z"
  GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$msg"
done
git checkout -q -b retry HEAD~8
printf 'export function run(task, retries = 3) {\n  for (let i = 0; i < retries; i++) {\n    try { return task() } catch (e) { if (i === retries - 1) throw e }\n  }\n}\n' > lib/runner.js
git add . && GIT_AUTHOR_DATE=2024-03-20T10:00:00Z GIT_COMMITTER_DATE=2024-03-20T10:00:00Z git commit -q -m "Retry failed tasks"
git checkout -q main
printf 'export async function run(task) {\n  return await task()\n}\n' > lib/runner.js
git add . && GIT_AUTHOR_DATE=2024-03-21T10:00:00Z GIT_COMMITTER_DATE=2024-03-21T10:00:00Z git commit -q -m "Await tasks"
git checkout -q retry
capture git-conflict git "git log --stat -n 20 main; git rebase main; status=\$?; git status; git log --stat -n 20 main; exit \$status"

scenario git-push-rejected
s=0
for r in accounts api auth billing docs emails ledger mobile payments search web worker; do
  s=$((s + 1))
  make_git_repo "repos/$r" "$s"
  git init -q --bare -b main "remotes/$r.git"
  git -C "repos/$r" remote add origin "$SCRATCH/git-push-rejected/remotes/$r.git"
  git -C "repos/$r" push -q origin main
  git -C "repos/$r" branch -q -u origin/main
done
git clone -q remotes/ledger.git other
echo "hotfix" >> other/CHANGES
git -C other commit -q -am "Hotfix on the server"
git -C other push -q origin main
echo "local" >> repos/ledger/CHANGES
git -C repos/ledger commit -q -am "Local change"
capture git-push-rejected git "status=0; for r in repos/*; do echo \"== \$r\"; git -C \"\$r\" log --oneline -n 15 && git -C \"\$r\" push origin main || status=1; done; exit \$status"

###########################################################################
# python: jobs under a memory limit; one runs out of memory.
###########################################################################
scenario python-oom
cat > job.py <<'EOF'
import sys

n = int(sys.argv[1])
print(f"job {n}: loading shards", flush=True)
rows = []
if n == 23:
    while True:
        rows.append(bytearray(16 * 1024 * 1024))
for s in range(1, 5):
    print(f"job {n}: shard {s} merged, {s * 250} rows", flush=True)
print(f"job {n}: done", flush=True)
EOF
capture python-oom python "status=0; for i in \$(seq 1 40); do (ulimit -v 400000; python3 job.py \$i) || status=1; done; exit \$status"

###########################################################################
# Clean output that only quotes errors: the history, a search and a listing
# of a project whose code and docs handle and describe failures.
###########################################################################
make_quoting_repo() {
  git init -q -b main .
  mkdir -p src lib tests docs native
  commit() { # commit N MESSAGE
    git add -A
    d="2024-04-01T09:$(printf '%02d' "$1"):00Z"
    GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$2"
  }
  cat > src/config.js <<'EOF'
import fs from 'node:fs'

export function loadConfig(path) {
  if (!fs.existsSync(path)) {
    console.error(`error: could not open ${path}`)
    process.exit(1)
  }
  const text = fs.readFileSync(path, 'utf8')
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new TypeError(`config ${path}: expected JSON, got ${text.slice(0, 20)}`)
  }
}
EOF
  commit 1 "Load the config file"
  cat > src/retry.js <<'EOF'
export async function retry(task, { attempts = 3, log = console } = {}) {
  let lastError
  for (let i = 1; i <= attempts; i++) {
    try {
      return await task()
    } catch (error) {
      lastError = error
      log.warn(`attempt ${i} failed: ${error.message}`)
    }
  }
  log.error('Error: giving up after %d attempts', attempts)
  throw lastError
}
EOF
  commit 2 "Retry failed tasks"
  cat > lib/parse.py <<'EOF'
class ParseError(Exception):
    """Raised when an amount cannot be read.

    Raises:
        ValueError: if the text is empty
    """


def parse_amount(text):
    if not text:
        raise ValueError("empty amount")
    try:
        return int(text)
    except ValueError as exc:
        raise ParseError(f"bad amount {text!r}") from exc
EOF
  commit 3 "Parse amounts and report bad ones"
  cat > tests/test_parse.py <<'EOF'
import pytest
from lib.parse import ParseError, parse_amount


def test_reports_bad_amount():
    with pytest.raises(ParseError, match="bad amount"):
        parse_amount("n/a")


@pytest.mark.parametrize("level", ["error", "fatal", "FAIL"])
def test_levels(level):
    assert level
EOF
  commit 4 "Test error reporting"
  cat > native/checksum.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>

/* Segmentation fault when the table is empty: guard it. */
int checksum(const unsigned char *data, size_t len)
{
  if (data == NULL) {
    fprintf(stderr, "checksum: error: no data\n");
    abort();
  }
  int acc = 0;
  for (size_t i = 0; i < len; i++)
    acc = acc * 31 + data[i];
  return acc;
}
EOF
  commit 5 "Checksum in C"
  cat > docs/troubleshooting.md <<'EOF'
# Troubleshooting

When the build stops, the first error is what matters. A failed compile
ends like this:

```
src/ledger.c:14:10: error: 'heap_size' undeclared (first use in this function)
make[1]: *** [Makefile:11: ledger.o] Error 1
make: *** [Makefile:6: all] Error 2
```

A failing test run prints the assertion, then a summary:

```
FAIL  src/totals.test.js > billing totals > applies the discount
AssertionError: expected 1240 to be 1250 // Object.is equality
Traceback (most recent call last):
ValueError: invalid literal for int() with base 10: 'n/a'
npm error code ELIFECYCLE
fatal: not a git repository (or any of the parent directories): .git
Segmentation fault (core dumped)
--- FAIL: TestParse (0.00s)
```

If you see `Killed`, the machine ran out of memory.
EOF
  commit 6 "Document common failures"
  sed -i 's/console.error(`error: could not open ${path}`)/console.error(`error: cannot read ${path}`)/' src/config.js
  commit 7 "Say cannot read, not could not open"
  cat > tests/retry.test.js <<'EOF'
import { expect, test } from 'vitest'
import { retry } from '../src/retry.js'

test('gives up after three failed attempts', async () => {
  const log = { warn: () => {}, error: () => {} }
  await expect(retry(() => { throw new Error('boom') }, { log })).rejects.toThrow('boom')
})

test('FAIL is not printed for a passing retry', async () => {
  expect(await retry(async () => 'ok')).toBe('ok')
})
EOF
  commit 8 "Test retry"
  for i in $(seq 9 58); do
    printf '\nexport const LIMIT_%d = %d // fail fast above this\n' "$i" "$((i * 100))" >> src/retry.js
    printf '\n\ndef check_%d(value):\n    if value > %d:\n        raise ValueError("over the limit: error %d")\n' "$i" "$((i * 10))" "$i" >> lib/parse.py
    printf '\n\ndef test_check_%d_rejects_error_values():\n    with pytest.raises(ValueError, match="error %d"):\n        check_%d(%d)\n' "$i" "$i" "$i" "$((i * 10 + 1))" >> tests/test_parse.py
    commit "$i" "Add limit $i and its check"
  done
}

scenario git-log-p-clean
make_quoting_repo
capture git-log-p-clean git "git log -p"

scenario grep-clean
make_quoting_repo
capture grep-clean grep "grep -rn -i -E 'error|fail|fatal|abort|killed' --exclude-dir=.git . | sort"

scenario cat-clean
make_quoting_repo
capture cat-clean cat "for f in src/*.js lib/*.py tests/* native/*.c docs/*.md; do echo \"==> \$f <==\"; cat \"\$f\"; done"

###########################################################################
# Written after the first evaluation of the held-out logs, and held out in
# turn: a make recipe whose script explains itself in plain words, tsc with
# --pretty, and two more clean logs (a plain unified diff, a grep with context).
###########################################################################
scenario make-script-fail
make_c_tree 0
mkdir -p scripts
cat > scripts/check-headers.sh <<'EOF'
#!/bin/sh
for f in "$@"; do
  if ! grep -q "SPDX-License-Identifier" "$f"; then
    echo "check-headers: $f has no SPDX-License-Identifier line"
    exit 1
  fi
  echo "check-headers: $f ok"
done
EOF
chmod +x scripts/check-headers.sh
for lib in libcore libio libparse libnet libfmt; do
  for f in "$lib"/*.c; do sed -i '1i /* SPDX-License-Identifier: MIT */' "$f"; done
  printf '\ncheck:\n\t../scripts/check-headers.sh *.c\n\n.PHONY: check\n' >> "$lib/Makefile"
done
sed -i '1d' libnet/pool.c
printf '\ncheck: $(SUBDIRS:%%=check-%%)\n\ncheck-%%:\n\t$(MAKE) -C $* check\n' >> Makefile
capture make-script-fail make "make -k -j1 check all"

scenario tsc-pretty-fail
make_ts_workspace 1
capture tsc-pretty-fail tsc "$TSC -b --verbose --pretty"

scenario diff-clean
make_quoting_repo
git checkout -q HEAD~40 -- src lib tests 2>/dev/null
mkdir -p ../diff-clean-old && cp -r src lib tests native docs ../diff-clean-old/
git checkout -q HEAD -- src lib tests
capture diff-clean diff "diff -ru ../diff-clean-old . -x .git; test \$? -le 1"

scenario grep-context-clean
make_quoting_repo
capture grep-context-clean grep "grep -rn -C2 -E 'error|FAIL|fatal' --exclude-dir=.git src lib tests native docs"
###########################################################################
# Tool families the rules were not written from (see docs/failure-lines.md):
# test frameworks written differently, chains of causes, prefixed logs,
# processes killed from outside, database errors. Logs whose lines carry a
# prefix another program adds (a CI runner's timestamps, docker compose's
# `service-1  | `, kubectl logs --prefix) are real output of the tool run
# here, prefixed the way that program documents it.
###########################################################################

# stamp.pl: GitHub Actions' prefix, an RFC 3339 UTC time with 7 decimals and a space, on every line.
write_stamp() {
  cat > stamp.pl <<'EOF'
use Time::HiRes qw(time); use POSIX qw(strftime); $| = 1;
while (<STDIN>) { my $t = time; printf "%s.%07dZ %s", strftime("%Y-%m-%dT%H:%M:%S", gmtime $t), ($t - int $t) * 1e7, $_ }
EOF
}

# RSpec, documentation format: five spec files run one by one, one failing expectation.
scenario rspec-fail
for p in accounts invoices ledger payments reports; do
  mkdir -p "$p/spec"
  {
    echo "RSpec.describe '$p' do"
    names_from 3 30 | while read -r t; do
      echo "  it '$t' do"
      echo "    expect([1, 2, 3].sum).to eq(6)"
      echo "  end"
    done
    echo "  describe 'with a cold cache' do"
    names_from 11 4 | while read -r t; do
      echo "    it '$t' do"
      echo "      expect([1, 2, 3].sum).to eq(6)"
      echo "    end"
    done
    echo "  end"
    if [ "$p" = ledger ]; then
      cat <<'EOF'
  it 'applies the discount before tax' do
    total = (1300 * 0.95 + 5).round
    expect(total).to eq(1250)
  end
EOF
    fi
    echo "end"
  } > "$p/spec/${p}_spec.rb"
done
capture rspec-fail rspec "status=0; for p in */; do echo \"== \$p\"; (cd \"\$p\" && rspec --format documentation --no-color) || status=1; done; exit \$status"

scenario rspec-ok
mkdir -p spec
{
  echo "RSpec.describe 'errors' do"
  names_from 0 30 | while read -r t; do
    echo "  it '$t' do"
    echo "    expect { raise ArgumentError, 'bad input' }.to raise_error(ArgumentError)"
    echo "  end"
  done
  names_from 5 30 | while read -r t; do
    echo "  it 'still $t' do"
    echo "    expect('Failure/Error: quoted').to include('Error')"
    echo "  end"
  done
  echo "end"
} > spec/errors_spec.rb
capture rspec-ok rspec "for i in 1 2 3; do rspec --format documentation --no-color || exit 1; done"

# ExUnit: six test files run one by one with --trace-like output; one assertion fails.
scenario exunit-fail
for p in accounts invoices ledger payments reports taxes; do
  mod=$(echo "$p" | sed 's/^./\U&/')
  {
    echo "ExUnit.start(trace: true, colors: [enabled: false])"
    echo "defmodule ${mod}Test do"
    echo "  use ExUnit.Case"
    names_from 7 25 | while read -r t; do
      echo "  test \"$t\" do"
      echo "    assert Enum.sum([1, 2, 3]) == 6"
      echo "  end"
    done
    if [ "$p" = ledger ]; then
      cat <<'EOF'
  test "applies the loyalty discount before tax" do
    total = round(1300 * 0.95 + 5)
    assert total == 1250
  end
EOF
    fi
    echo "end"
  } > "${p}_test.exs"
done
capture exunit-fail elixir "status=0; for f in *_test.exs; do echo \"== \$f\"; elixir \"\$f\" || status=1; done; exit \$status"

scenario exunit-ok
{
  echo "ExUnit.start(trace: true, colors: [enabled: false])"
  echo "defmodule ErrorsTest do"
  echo "  use ExUnit.Case"
  names_from 0 30 | while read -r t; do
    echo "  test \"$t\" do"
    echo "    assert_raise ArgumentError, fn -> raise ArgumentError, \"Assertion with == failed\" end"
    echo "  end"
    echo "  test \"again $t\" do"
    echo "    assert {:error, :enoent} == File.read(\"missing\")"
    echo "  end"
  done
  echo "end"
} > errors_test.exs
capture exunit-ok elixir "for i in 1 2 3; do elixir errors_test.exs || exit 1; done"

# CTest with --output-on-failure: 40 tests, one checks a total and fails.
scenario ctest-fail
cat > check.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  printf("case %d: loading fixtures\n", n);
  printf("case %d: 12 rows checked\n", n);
  if (n == 61) {
    long total = (long)(1300 * 0.95 + 5 + 0.5);
    fprintf(stderr, "check_total: expected 1250, got %ld\n", total);
    return 1;
  }
  printf("case %d: ok\n", n);
  return 0;
}
EOF
{
  echo "cmake_minimum_required(VERSION 3.16)"
  echo "project(ledger C)"
  echo "enable_testing()"
  echo "add_executable(check check.c)"
  i=0
  names_from 0 120 | while read -r t; do
    i=$((i + 1))
    echo "add_test(NAME \"$(echo "$t" | tr ' ' '_')_$i\" COMMAND check $i)"
  done
} > CMakeLists.txt
capture ctest-fail ctest "cmake -S . -B build > /dev/null && cmake --build build > /dev/null && cd build && ctest --output-on-failure -j1"

scenario ctest-ok
cp ../ctest-fail/check.c ../ctest-fail/CMakeLists.txt . 2>/dev/null
sed -i 's/n == 61/n == 999/' check.c
capture ctest-ok ctest "cmake -S . -B build > /dev/null && cmake --build build > /dev/null && cd build && ctest -V -j1"

# Java: a batch job whose failure is wrapped twice; the root cause is the last `Caused by:`.
scenario java-chain
mkdir -p com/acme/ledger
cat > com/acme/ledger/Batch.java <<'EOF'
package com.acme.ledger;

import java.io.FileReader;
import java.io.IOException;

public class Batch {
  static class LedgerException extends RuntimeException {
    LedgerException(String m, Throwable c) { super(m, c); }
  }
  static String readRates(String path) throws IOException {
    try (FileReader r = new FileReader(path)) { return "rates"; }
  }
  static void loadRates(int batch) {
    try {
      readRates("config/rates-" + batch + ".csv");
    } catch (IOException e) {
      throw new IllegalStateException("could not load the exchange rates for batch " + batch, e);
    }
  }
  static void settle(int batch) {
    try {
      loadRates(batch);
    } catch (IllegalStateException e) {
      throw new LedgerException("settlement of batch " + batch + " failed", e);
    }
  }
  public static void main(String[] args) throws Exception {
    int batch = Integer.parseInt(args[0]);
    for (int i = 1; i <= 3; i++) System.out.println("batch " + batch + ": step " + i + " of 3, 0 errors, 240 rows posted to the ledger");
    if (batch != 17) { System.out.println("batch " + batch + ": settled"); return; }
    settle(batch);
  }
}
EOF
mkdir -p config
for i in $(seq 1 40); do [ "$i" != 17 ] && : > "config/rates-$i.csv"; done
capture java-chain java "javac com/acme/ledger/Batch.java && status=0; for i in \$(seq 1 40); do java com.acme.ledger.Batch \$i || status=1; done; exit \$status"

# A CI runner's log: pytest -v with every line timestamped as GitHub Actions does.
scenario ci-pytest-fail
mkdir -p tests
for p in accounts invoices ledger payments; do
  {
    names_from 2 30 | while read -r t; do
      echo "def test_$(echo "$t" | tr 'A-Z -' 'a-z__' | tr -cd 'a-z0-9_\n')():"
      echo "    assert sum([1, 2, 3]) == 6"
      echo
    done
    if [ "$p" = ledger ]; then
      printf 'def test_applies_the_discount_before_tax():\n    total = round(1300 * 0.95 + 5)\n    assert total == 1250, "discount applied after tax"\n'
    fi
  } > "tests/test_$p.py"
done
write_stamp
capture ci-pytest-fail ci "{ echo '##[group]Run python3 -m pytest -v'; status=0; for f in tests/*.py; do python3 -m pytest -v -p no:cacheprovider \"\$f\" || status=1; done; echo '##[endgroup]'; [ \$status = 0 ] || echo '##[error]Process completed with exit code 1.'; echo \$status > .status; } 2>&1 | perl stamp.pl; exit \$(cat .status)"

scenario ci-pytest-ok
mkdir -p tests
{
  names_from 0 80 | nl | while read -r i t; do
    n=$(echo "$t" | tr 'A-Z -' 'a-z__' | tr -cd 'a-z0-9_\n')_$i
    echo "def test_$n():"
    echo "    assert 'Error: ' + 'x' == 'Error: x'"
    echo
    echo "def test_${n}_again():"
    echo "    assert 'FAILED' in 'FAILED tests are listed'"
    echo
  done
} > tests/test_errors.py
write_stamp
capture ci-pytest-ok ci "python3 -m pytest -v -p no:cacheprovider tests 2>&1 | perl stamp.pl"

# docker compose's prefix (`service-1  | `) on real PHP and Python output: a web service's fatal error.
scenario compose-php-fail
cat > web.php <<'EOF'
<?php
declare(strict_types=1);
function render_invoice(array $invoice): string {
  return sprintf("invoice %d: %s", $invoice['id'], strtoupper($invoice['customer']));
}
for ($i = 1; $i <= 60; $i++) {
  echo "GET /invoices/$i 200 0 errors\n";
  if ($i === 31) { echo render_invoice(['id' => $i, 'customer' => null]), "\n"; }
}
EOF
cat > worker.py <<'EOF'
import sys
for i in range(1, 150):
    print(f"worker: job {i} done, 0 failed", flush=True)
EOF
capture compose-php-fail compose "python3 -u worker.py 2>&1 | sed -u 's/^/worker-1  | /' & (php -d display_errors=stderr -d log_errors=0 web.php; echo \$? > .web) 2>&1 | sed -u 's/^/web-1     | /'; wait; echo \"web-1 exited with code \$(cat .web)\"; exit 1"

# kubectl logs --prefix on a Node service whose config file is missing.
scenario k8s-node-fail
cat > server.js <<'EOF'
const fs = require('node:fs')
for (let i = 1; i <= 70; i++) console.log(`GET /health 200 ${i} ms`)
const config = JSON.parse(fs.readFileSync('/home/dev/project/config/app.json', 'utf8'))
console.log(config)
EOF
capture k8s-node-fail kubernetes "status=0; for pod in api-7d9f8b6c4-x2k9q api-7d9f8b6c4-m4t7z; do node server.js 2>&1 | sed \"s|^|[pod/\$pod/api] |\" || status=1; done; for i in \$(seq 1 40); do echo \"[pod/api-7d9f8b6c4-p8w2n/api] GET /health 200 \$i ms\"; done; exit 1"

# Go: a worker pool panics with an index out of range, and a CLI's wrapped error.
scenario go-panic
cat > main.go <<'EOF'
package main

import (
	"fmt"
	"os"
)

func shard(rows []int, n int) int { return rows[n] }

func main() {
	var rows = []int{1, 2, 3, 4, 5}
	for i := 0; i < 60; i++ {
		fmt.Printf("worker: shard %d of 60 merged into the ledger, 0 errors, 12 rows\n", i)
		if len(os.Args) > 1 && i == 30 {
			fmt.Println(shard(rows, len(rows)+i-30))
		}
	}
}
EOF
cat > go.mod <<'EOF'
module example.com/shards

go 1.19
EOF
capture go-panic go "env GOFLAGS=-mod=mod GOCACHE=\$PWD/.cache GOPATH=\$PWD/.gopath go build -o shards . && ./shards && ./shards crash; status=\$?; ./shards; exit \$status"

scenario go-wrapped
cat > main.go <<'EOF'
package main

import (
	"fmt"
	"os"
)

func readRates(path string) error {
	_, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read rates: %w", err)
	}
	return nil
}

func main() {
	for i := 1; i <= 80; i++ {
		fmt.Printf("sync: account %d reconciled against the bank statement, 0 differences\n", i)
		if i == 41 {
			if err := readRates("/home/dev/project/config/rates.csv"); err != nil {
				fmt.Fprintf(os.Stderr, "Error: settle batch 41: %v\n", err)
				defer os.Exit(1)
			}
		}
	}
	for i := 81; i <= 160; i++ {
		fmt.Printf("sync: account %d reconciled against the bank statement, 0 differences\n", i)
	}
}
EOF
printf 'module example.com/sync\n\ngo 1.19\n' > go.mod
capture go-wrapped go "env GOCACHE=\$PWD/.cache GOPATH=\$PWD/.gopath go run ."

# .NET on Mono: an unhandled exception with an inner exception.
scenario dotnet-fail
cat > Batch.cs <<'EOF'
using System;
using System.IO;
class Batch {
  static string ReadRates(string path) { return File.ReadAllText(path); }
  static void Settle(int batch) {
    try { ReadRates("/home/dev/project/config/rates-" + batch + ".csv"); }
    catch (IOException e) { throw new InvalidOperationException("settlement of batch " + batch + " failed", e); }
  }
  static int Main(string[] args) {
    int b = int.Parse(args[0]);
    for (int s = 1; s <= 30; s++) Console.WriteLine("batch " + b + ": step " + s + " of 30, 0 errors");
    if (b == 3) Settle(b);
    return 0;
  }
}
EOF
capture dotnet-fail dotnet "mcs -nologo Batch.cs && status=0; for b in 1 2 3 4 5 6; do mono Batch.exe \$b || status=1; done; exit \$status"

# PostgreSQL: three migrations run with psql -a against a server started here
# (initdb and pg_ctl on a spare port, as the postgres user when run as root;
# stopped after); the second migration inserts a duplicate key.
scenario psql-fail
for m in 1 2 3; do
  {
    [ "$m" = 1 ] && echo "CREATE TABLE accounts (id integer PRIMARY KEY, name text NOT NULL, note text);"
    for i in $(seq $(( (m - 1) * 30 + 1 )) $(( m * 30 ))); do
      echo "INSERT INTO accounts VALUES ($i, 'account $i', 'opened by the migration, no errors');"
      [ "$i" = 45 ] && echo "INSERT INTO accounts VALUES (12, 'account 12 again', 'duplicate');"
    done
    echo "SELECT count(*) FROM accounts;"
  } > "00$m-accounts.sql"
done
PGBASE=$(mktemp -d)
chmod 755 "$PGBASE"
PGPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg() { if [ "$(id -u)" = 0 ]; then chown -R postgres "$PGBASE"; runuser -u postgres -- "$@"; else "$@"; fi; }
if as_pg initdb -D "$PGBASE/data" -A trust -U postgres > "$PGBASE/initdb.log" 2>&1 &&
  as_pg pg_ctl -D "$PGBASE/data" -o "-p $PGPORT -k $PGBASE -c listen_addresses=127.0.0.1" -l "$PGBASE/server.log" -w start > /dev/null; then
  capture psql-fail postgres "status=0; for f in 00*.sql; do echo \"== \$f\"; psql -X -a -h 127.0.0.1 -p $PGPORT -U postgres -d postgres -v ON_ERROR_STOP=1 -f \"\$f\" || status=\$?; done; exit \$status"
  as_pg pg_ctl -D "$PGBASE/data" -m fast -w stop > /dev/null
else
  echo "psql-fail: PostgreSQL did not start (see $PGBASE)" >&2
fi
rm -rf "$PGBASE"

# Python: an error wrapped with `raise ... from`, and one raised while handling another.
scenario python-chain
cat > job.py <<'EOF'
import json, sys

class ConfigError(Exception):
    pass

def load(path):
    with open(path) as f:
        return json.load(f)

def settle(n):
    try:
        return load(f"/home/dev/project/config/batch-{n}.json")
    except FileNotFoundError as e:
        raise ConfigError(f"batch {n} has no configuration") from e

n = int(sys.argv[1])
for s in range(1, 4):
    print(f"job {n}: step {s} of 3, 0 errors, 240 rows posted to the ledger", flush=True)
if n == 21:
    settle(n)
print(f"job {n}: done", flush=True)
EOF
capture python-chain python "status=0; for i in \$(seq 1 40); do python3 job.py \$i || status=1; done; exit \$status"

# Node: an error with a cause (`new Error(m, { cause })`).
scenario node-cause
cat > job.mjs <<'EOF'
import { readFileSync } from 'node:fs'
const n = Number(process.argv[2])
const settle = () => {
  try {
    return readFileSync(`/home/dev/project/config/batch-${n}.json`, 'utf8')
  } catch (cause) {
    throw new Error(`settlement of batch ${n} failed`, { cause })
  }
}
for (let s = 1; s <= 3; s++) console.log(`job ${n}: step ${s} of 3, 0 errors, 240 rows posted to the ledger`)
if (n === 19) settle()
console.log(`job ${n}: done`)
EOF
capture node-cause node "status=0; for i in \$(seq 1 40); do node job.mjs \$i || status=1; done; exit \$status"

# bash: a command killed from outside (SIGKILL, as the kernel's OOM killer sends it); bash names it.
scenario bash-killed
cat > job.sh <<'EOF'
n=$1
for s in 1 2 3; do echo "job $n: shard $s of 3 merged into the ledger, 0 errors"; done
if [ "$n" = 22 ]; then kill -KILL $$; fi
echo "job $n: done"
EOF
capture bash-killed bash "bash -c 'status=0; for i in \$(seq 1 45); do bash job.sh \$i; s=\$?; [ \$s = 0 ] || status=\$s; done; exit \$status'"


###########################################################################
# JSON beside each log, cases.json, and the table.
###########################################################################
cat > "$SCRATCH/finish.mjs" <<'EOF'
import fs from 'node:fs'
import path from 'node:path'

const [outDir, casesFile, manifestFile] = process.argv.slice(2)

// Which logs failed, and the lines that explain why (regexes over whole lines).
const EXPLAINS = {
  'tsc-fail': [/^packages\/ledger\/src\/balance\.ts\(\d+,\d+\): error TS2322: /],
  'tsc-ok': null,
  'node-test-fail': [/^ {8}Expected values to be strictly equal:$/, /^ {8}1240 !== 1250$/],
  'node-test-fail-spec': [/^ {4}AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:$/, /^ {4}1240 !== 1250$/],
  'node-test-ok': null,
  'vitest-fail': [/^ {3}→ expected 1240 to be 1250/, /^AssertionError: expected 1240 to be 1250/],
  'vitest-ok': null,
  'make-gcc-fail': [/^heap\.c:\d+:\d+: error: /],
  'make-gcc-ok': null,
  'make-no-rule': [/No rule to make target 'allocator\.o'/],
  'cmake-config-fail': [/^CMake Error at clock\/CMakeLists\.txt:\d+ \(target_link_libraries\):$/, /^ +Cannot specify link libraries for target "net_clok"/],
  'python-fail': [/^ERROR:ingest:/, /^ValueError: /, /^IngestError: /],
  'python-ok': null,
  'rust-panic': [/^thread 'worker-2' (\(\d+\) )?panicked at /, /^range end index \d+ out of range/],
  'rust-error': [/^Error: ParseFloatError/],
  'cargo-test-fail': [/^thread 'tests::applies_the_discount_before_tax' (\(\d+\) )?panicked at /, /^assertion `left == right` failed$/, /^ {2}left: 1240$/, /^ right: 1250$/],
  'segfault': [/^Segmentation fault/],
  'abort': [/^crunch: crunch\.c:\d+: blocks: Assertion/, /^Aborted/],
  'killed': [/^Killed$/],
  'npm-fail': [/^TypeError: /],
  'npm-missing-script': [/^npm error Missing script: "lint"$/],
  'java-fail': [/^Exception in thread "worker-2" java\.lang\.IllegalStateException: /],
  'git-fail': [/^fatal: 'origin' does not appear to be a git repository$/, /^fatal: Could not read from remote repository\.$/],
  'git-not-a-repo': [/^fatal: not a git repository/],
  'link-fail': [/undefined reference to `ledger_total'/],
  'cmake-ninja-fail': [/dict\.c:\d+:\d+: error: /],
  'eslint-stylish-fail': [/^ +\d+:\d+ +error +'clean' is not defined/],
  'eslint-compact-fail': [/heap\.js: line \d+, col \d+, Error - 'clean' is not defined/],
  'eslint-ok': null,
  'prettier-fail': [/^\[warn\] packages\/emails\/src\/view\.js$/],
  'node-heap': [/JavaScript heap out of memory/],
  'node-unhandled': [/quota exceeded for tenant 27/],
  'pnpm-fail': [/template invoice\.html not found/],
  'yarn-fail': [/template invoice\.html not found/],
  'pnpm-parallel-fail': [/template invoice\.html not found/],
  'jest-fail': [/TypeError: Cannot read properties of undefined \(reading 'rate'\)/, /expect\(received\)\.toBe\(expected\)/, /^ +Received: 3\.3000000000000003$/],
  'mocha-fail': [/AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:/, /^\s*1240 !== 1250$/],
  'pytest-fail': [/^E\s+assert /],
  'pytest-ok': null,
  'unittest-fail': [/^AssertionError: /],
  'go-test-fail': [/money_test\.go:\d+: Parse\("1,234\.56"\) = /, /orders\.go:\d+:\d+: fmt\.Sprintf format %d has arg id of wrong type string/],
  'go-build-fail': [/money\.go:\d+:\d+: cannot use s/],
  'javac-fail': [/Ledger\.java:\d+: error: cannot find symbol/],
  'maven-test-fail': [/^org\.opentest4j\.AssertionFailedError: expected: <6> but was: <7>$/, /^\[ERROR\] +TotalsTest\.sumsThreeAmounts:\d+ expected: <6> but was: <7>$/],
  'docker-build-fail': [/^#\d+ [\d.]+ cp: can't stat '\/build\/assets\/logo\.svg': No such file or directory$/],
  'docker-classic-fail': [/^(?:\x1b\[\d+m)?cp: can't stat '\/build\/assets\/logo\.svg': No such file or directory$/],
  'maven-compile-fail': [/Totals\.java:\[\d+,\d+\] cannot find symbol$/],
  'cargo-build-fail': [/^error\[E\d+\]: /],
  'sh-setx-fail': [/^cp: cannot stat 'build\/assets\/logo\.svg': No such file or directory$/],
  'sh-hooks-fail': [/slack-notify: (command )?not found/, /65-check\.sh: Permission denied/],
  'git-conflict': [/^CONFLICT \(content\): Merge conflict in lib\/runner\.js$/],
  'git-push-rejected': [/^ ! \[rejected\] +main -> main/],
  'python-oom': [/^MemoryError/],
  'git-log-p-clean': null,
  'grep-clean': null,
  'cat-clean': null,
  'make-script-fail': [/^check-headers: pool\.c has no SPDX-License-Identifier line$/],
  'tsc-pretty-fail': [/balance\.ts.*error.*TS2322/],
  'diff-clean': null,
  'grep-context-clean': null,
  // families the rules were not written from (see docs/failure-lines.md)
  'rspec-fail': [/^ +Failure\/Error: expect\(total\)\.to eq\(1250\)$/, /^ +got: 1240$/],
  'rspec-ok': null,
  'exunit-fail': [/^ +Assertion with == failed$/, /^ +code: +assert total == 1250$/, /^ +left: +1240$/],
  'exunit-ok': null,
  'ctest-fail': [/^check_total: expected 1250, got 1240$/],
  'ctest-ok': null,
  'java-chain': [/^Caused by: java\.io\.FileNotFoundException: config\/rates-17\.csv/],
  'ci-pytest-fail': [/Z E +AssertionError: discount applied after tax$/, /Z E +assert 1240 == 1250$/],
  'ci-pytest-ok': null,
  'compose-php-fail': [/^web-1 +\| (?:PHP )?Fatal error: +Uncaught TypeError: strtoupper\(\)/],
  'k8s-node-fail': [/^\[pod\/[\w-]+\/api\] Error: ENOENT: no such file or directory, open '\/home\/dev\/project\/config\/app\.json'$/],
  'go-panic': [/^panic: runtime error: index out of range \[5\] with length 5$/],
  'go-wrapped': [/^Error: settle batch 41: read rates: open .*: no such file or directory$/],
  'dotnet-fail': [/^System\.InvalidOperationException: settlement of batch 3 failed ---> System\.IO\.DirectoryNotFoundException: /, /^\[ERROR\] FATAL UNHANDLED EXCEPTION: System\.InvalidOperationException: settlement of batch 3 failed ---> /],
  'psql-fail': [/^psql:002-accounts\.sql:\d+: ERROR: +duplicate key value violates unique constraint "accounts_pkey"$/, /^DETAIL: +Key \(id\)=\(12\) already exists\.$/],
  'python-chain': [/^FileNotFoundError: \[Errno 2\] No such file or directory: '\/home\/dev\/project\/config\/batch-21\.json'$/],
  'node-cause': [/^ +\[cause\]: Error: ENOENT: no such file or directory, open '\/home\/dev\/project\/config\/batch-19\.json'$/],
  'bash-killed': [/^bash: line \d+: +\d+ Killed +bash job\.sh \$i$/],
}

// Logs kept out of tuning: the rules were written without looking at them,
// and the tests report them apart.
// node-unhandled, cat-clean and tsc-pretty-fail were held out at first, and
// tuned after their first evaluation (two missed, one false claim).
const HELD_OUT = new Set(['eslint-compact-fail', 'yarn-fail', 'mocha-fail', 'unittest-fail', 'go-build-fail',
  'cargo-build-fail', 'sh-hooks-fail', 'git-push-rejected', 'python-oom',
  'make-script-fail', 'diff-clean', 'grep-context-clean',
  // families held out from the start: written down, run, and counted without tuning on them
  'exunit-fail', 'exunit-ok', 'go-panic', 'go-wrapped', 'dotnet-fail', 'psql-fail', 'python-chain', 'node-cause',
  'k8s-node-fail'])

// Each log's tool family, for the figures per family (a log not listed is its own tool's family).
const FAMILY = {
  'rspec-fail': 'tests', 'rspec-ok': 'tests', 'exunit-fail': 'tests', 'exunit-ok': 'tests', 'ctest-fail': 'tests',
  'ctest-ok': 'tests', 'java-chain': 'chains', 'python-chain': 'chains', 'node-cause': 'chains', 'dotnet-fail': 'chains',
  'go-panic': 'go', 'go-wrapped': 'chains', 'ci-pytest-fail': 'prefixes', 'ci-pytest-ok': 'prefixes',
  'compose-php-fail': 'prefixes', 'k8s-node-fail': 'prefixes', 'psql-fail': 'databases', 'bash-killed': 'signals',
}

// cases.json: [log, regex] pairs; each picks the first matching line of that log.
const CASES = {
  linker: {
    salient: [
      ['link-fail', /undefined reference to `ledger_total'/],
      ['link-fail', /^collect2: error: ld returned 1 exit status$/],
    ],
    quiet: [
      ['link-fail', /^\/usr\/bin\/ld: reports_heap\.o: in function/],
      ['link-fail', /^gcc -o reports_error_handling /],
      ['link-fail', /^gcc -Wall -O2 -c -o reports_error_handling\.o /],
    ],
  },
  cmake: {
    salient: [
      ['cmake-config-fail', /^CMake Error at /],
      ['cmake-ninja-fail', /^FAILED: /],
      ['cmake-ninja-fail', /^ninja: build stopped/],
      ['cmake-ninja-fail', /dict\.c:\d+:\d+: error: /],
    ],
    quiet: [
      ['cmake-config-fail', /^-- Configuring incomplete, errors occurred!$/],
      ['cmake-config-fail', /^ +Cannot specify link libraries/],
      ['cmake-ninja-fail', /^\[\d+\/\d+\] Building C object CMakeFiles\/parse_dict\.dir/],
      ['cmake-ninja-fail', /dict\.c: In function/],
    ],
  },
  eslint: {
    salient: [
      ['eslint-stylish-fail', /^ +\d+:\d+ +error +'clean' is not defined/],
      ['eslint-stylish-fail', /^✖ \d+ problems \(1 error/],
    ],
    quiet: [
      ['eslint-ok', /^✖ \d+ problems \(0 errors/],
      ['eslint-stylish-fail', /^ +\d+:\d+ +warning +'errorCount' is assigned/],
      ['eslint-stylish-fail', /^ +0 errors and \d+ warnings potentially fixable/],
      ['eslint-stylish-fail', /^\/home\/dev\/project\/src\/error-handling\.js$/],
    ],
  },
  prettier: {
    salient: [
      ['prettier-fail', /^\[warn\] Code style issues/],
    ],
    quiet: [
      ['prettier-fail', /^\[warn\] packages\/emails\/src\/view\.js$/],
      ['prettier-fail', /^Checking formatting\.\.\.$/],
      ['prettier-fail', /^All matched files use Prettier code style!$/],
      ['prettier-fail', /packages\/errors\/src\/errors\.js$/],
    ],
  },
  go: {
    salient: [
      ['go-test-fail', /^--- FAIL: TestParse /],
      ['go-test-fail', /orders\.go:\d+:\d+: fmt\.Sprintf format/],
    ],
    quiet: [
      ['go-test-fail', /^ +money_test\.go:\d+: Parse/],
      ['go-test-fail', /^--- PASS: Test/],
      ['go-test-fail', /^# example\.com\/shop\/orders$/],
      ['go-test-fail', /^=== RUN +TestParse$/],
    ],
  },
  jest: {
    salient: [
      ['jest-fail', /^ +● billing ledger › converts/],
      ['jest-fail', /^ +expect\(received\)\.toBe\(expected\)/],
      ['jest-fail', /^ +TypeError: Cannot read properties/],
      ['jest-fail', /^FAIL src\/__tests__\/ledger\.test\.js$/],
      ['jest-fail', /^ +✕ converts the balance/],
    ],
    quiet: [
      ['jest-fail', /^ +✓ throws a TypeError for non-string input/],
      ['jest-fail', /^PASS src\/__tests__\/refunds\.test\.js$/],
      ['jest-fail', /^ +Expected: 3\.3$/],
      ['jest-fail', /^ +at rate \(/],
    ],
  },
  pytest: {
    salient: [
      ['pytest-fail', /^E +assert /],
      ['pytest-fail', /^FAILED money\/tests\//],
      ['pytest-fail', /::test_parses_thousands_separator FAILED/],
    ],
    quiet: [
      ['pytest-ok', /test_accepts_log_level\[error\] PASSED/],
      ['pytest-ok', /test_accepts_log_level\[fatal\] PASSED/],
      ['pytest-ok', /test_parses_flag\[no-errors\] PASSED/],
      ['pytest-fail', /^money\/tests\/test_money\.py:\d+: AssertionError$/],
    ],
  },
  node: {
    salient: [
      ['node-heap', /^FATAL ERROR: /],
      ['node-unhandled', /^UnhandledPromiseRejection: /],
    ],
    quiet: [
      ['node-heap', /^<--- Last few GCs --->$/],
      ['node-heap', /^ 1: 0x[0-9a-f]+ node::OOMErrorHandler/],
      ['node-unhandled', /^ +code: 'ERR_UNHANDLED_REJECTION'$/],
    ],
  },
  pnpm: {
    salient: [
      ['pnpm-parallel-fail', /^packages\/emails build: Failed$/],
      ['pnpm-fail', /^\s+ERROR\s+@acme\/emails@1\.4\.0 build: /],
    ],
    quiet: [
      ['pnpm-parallel-fail', /^packages\/emails build: template invoice\.html not found/],
      ['pnpm-parallel-fail', /^packages\/web build: Done$/],
      ['pnpm-fail', /^> @acme\/errors@1\.4\.0 build /],
      ['pnpm-fail', /^built 8 files \(0 errors\)$/],
    ],
  },
  shell: {
    salient: [
      ['sh-setx-fail', /^cp: cannot stat /],
    ],
    quiet: [
      ['sh-setx-fail', /^\+ cp build\/assets\/logo\.svg dist\/assets\/$/],
      ['sh-setx-fail', /^copied build\/pages\/page-9\.html$/],
    ],
  },
  git: {
    salient: [
      ['git-conflict', /^CONFLICT \(content\): /],
      ['git-conflict', /^error: could not apply /],
    ],
    quiet: [
      ['git-conflict', /^hint: Resolve all conflicts manually/],
      ['git-conflict', /^Could not apply /],
      ['git-conflict', /both modified: +lib\/runner\.js$/],
    ],
  },
  quoting: {
    salient: [
      ['make-gcc-fail', /^heap\.c:\d+:\d+: error: /],
    ],
    quiet: [
      ['grep-clean', /^\.\/src\/config\.js:\d+: +console\.error/],
      ['grep-clean', /^\.\/docs\/troubleshooting\.md:\d+:src\/ledger\.c:14:10: error:/],
      ['grep-clean', /^\.\/docs\/troubleshooting\.md:\d+:fatal: not a git repository/],
      ['grep-clean', /^\.\/lib\/parse\.py:\d+: +raise ValueError\("empty amount"\)$/],
    ],
  },
  compiler: {
    salient: [
      ['tsc-fail', /error TS2322: /],
      ['make-gcc-fail', /^heap\.c:\d+:\d+: error: incompatible types/],
      ['make-gcc-fail', /^heap\.c:\d+:\d+: error: ‘heap_size’ undeclared/],
    ],
    quiet: [
      ['make-gcc-ok', /^buffer\.c:\d+:\d+: warning: unused variable/],
      ['make-gcc-ok', /^timer\.c:\d+:\d+: warning: comparison of integer expressions/],
      ['make-gcc-fail', /^heap\.c:\d+:\d+: warning: implicit declaration/],
      ['make-gcc-ok', /-c -o error_codes\.o error_codes\.c$/],
      ['make-gcc-ok', /-c -o error-handling\.o error-handling\.c$/],
      ['tsc-ok', /Found 0 errors\. Watching for file changes\.$/],
      ['tsc-ok', /Building project '.*\/error-handling\/tsconfig\.json'/],
      ['tsc-ok', /^ {4}\* packages\/error-handling\/tsconfig\.json$/],
    ],
  },
  'test-runner': {
    salient: [
      ['node-test-fail', /^ {4}not ok \d+ - applies the discount/],
      ['node-test-fail-spec', /^ {4}AssertionError \[ERR_ASSERTION\]: /],
      ['vitest-fail', /^ × .* applies the loyalty discount before tax/],
      ['vitest-fail', /^ FAIL {2}/],
      ['vitest-fail', /^AssertionError: expected 1240 to be 1250/],
      ['vitest-fail', /^ {3}→ expected 1240 to be 1250/],
      ['cargo-test-fail', /^test tests::applies_the_discount_before_tax \.\.\. FAILED$/],
    ],
    quiet: [
      ['node-test-ok', /^# fail 0$/],
      ['node-test-ok', /^ {4}ok \d+ - reports an error for unterminated strings$/],
      ['node-test-ok', /^ {4}ok \d+ - collects failed assertions into one report$/],
      ['node-test-fail-spec', /^ {2}✔ keeps line numbers after a failure/],
      ['vitest-ok', /^ ✓ .* formats error messages with the file name/],
      ['vitest-ok', /^ ✓ .* does not fail when the cache is cold/],
      ['vitest-ok', /^ {6}Tests {2}\d+ passed/],
      ['python-ok', /^test_reports_an_error_for_unterminated_strings .* \.\.\. ok$/],
      ['cargo-test-fail', /^test result: ok\. \d+ passed; 0 failed;/],
    ],
  },
  traceback: {
    salient: [
      ['python-fail', /^Traceback \(most recent call last\):$/],
      ['python-fail', /^ValueError: /],
      ['python-fail', /^IngestError: /],
      ['npm-fail', /^TypeError: /],
      ['java-fail', /^Exception in thread "worker-2" /],
      ['java-fail', /^Exception in thread "main" /],
    ],
    quiet: [
      ['node-test-ok', /^ {4}ok \d+ - throws a TypeError for non-string input$/],
      ['python-ok', /^test_throws_a_typeerror_for_non_string_input .* \.\.\. ok$/],
      ['java-fail', /^worker-0: batch 00 settled, \d+ cents, 0 exceptions$/],
      ['vitest-ok', /^ ✓ .* throws a TypeError for non-string input/],
    ],
  },
  panic: {
    salient: [
      ['rust-panic', /^thread 'worker-2' (\(\d+\) )?panicked at /],
      ['rust-panic', /^thread 'main' (\(\d+\) )?panicked at /],
      ['cargo-test-fail', /^thread 'tests::applies_the_discount_before_tax' (\(\d+\) )?panicked at /],
      ['cargo-test-fail', /^assertion `left == right` failed$/],
    ],
    quiet: [
      ['cargo-test-fail', /^test tests::no_panic_on_empty_input \.\.\. ok$/],
      ['cargo-test-fail', /^test result: ok\. \d+ passed; 0 failed;/],
      ['rust-panic', /^worker-1: batch 39 ok, checksum/],
      ['cargo-test-fail', /^ {5}Running unittests src\/lib\.rs/],
    ],
  },
  signal: {
    salient: [
      ['segfault', /^Segmentation fault/],
      ['abort', /^Aborted/],
      ['abort', /^crunch: crunch\.c:\d+: blocks: Assertion/],
      ['killed', /^Killed$/],
    ],
    quiet: [
      ['node-test-ok', /^ {4}ok \d+ - kills the child process on timeout$/],
      ['node-test-ok', /^ {4}ok \d+ - marks aborted uploads as retryable$/],
      ['vitest-ok', /^ ✓ .* kills the child process on timeout/],
      ['git-fail', /^[0-9a-f]{7} Handle killed workers in the supervisor$/],
      ['git-fail', /^[0-9a-f]{7} Add abort signal to uploads$/],
    ],
  },
  npm: {
    salient: [
      ['npm-fail', /^npm error Lifecycle script `build` failed with error:$/],
      ['npm-fail', /^npm error code 1$/],
      ['npm-fail', /^npm error command failed$/],
      ['npm-missing-script', /^npm error Missing script: "lint"$/],
    ],
    quiet: [
      ['npm-fail', /^npm warn Unknown project config "always-auth"/],
      ['npm-fail', /^> @acme\/errors@1\.4\.0 build$/],
      ['npm-fail', /^built 8 files into dist\/ \(0 errors\)$/],
      ['npm-missing-script', /^8 files linted: 0 problems \(0 errors, 0 warnings\)$/],
    ],
  },
  docker: {
    salient: [
      ['docker-build-fail', /^#\d+ [\d.]+ cp: can't stat /],
      ['docker-build-fail', /^#\d+ ERROR: executor failed running \[\/bin\/sh -c sh \/deploy\.sh\]: exit code: 1$/],
      ['docker-build-fail', /^executor failed running \[\/bin\/sh -c sh \/deploy\.sh\]: exit code: 1$/],
      ['docker-classic-fail', /cp: can't stat /],
      ['docker-classic-fail', /^The command '\/bin\/sh -c sh \/deploy\.sh' returned a non-zero code: 1$/],
    ],
    quiet: [
      ['docker-build-fail', /^#\d+ \[stage-1 4\/4\] RUN sh \/deploy\.sh$/],
      ['docker-build-fail', /^#\d+ sha256:/],
      ['docker-build-fail', /^#\d+ DONE [\d.]+s$/],
      ['docker-build-fail', /^#\d+ [\d.]+ checking module-7\.js: ok$/],
      ['docker-build-fail', /^#\d+ [\d.]+ copied \/build\/pages\/page-3\.html$/],
      ['docker-build-fail', /^ > \[stage-1 4\/4\] RUN sh \/deploy\.sh:$/],
      ['docker-classic-fail', /^Step 7\/7 : RUN sh \/deploy\.sh$/],
      ['docker-classic-fail', /^ ---> Running in /],
    ],
  },
  maven: {
    salient: [
      ['maven-compile-fail', /^\[ERROR\] \/home\/dev\/project\/ledger\/src\/main\/java\/com\/acme\/ledger\/Totals\.java:\[\d+,\d+\] cannot find symbol$/],
      ['maven-compile-fail', /^\[ERROR\] Failed to execute goal /],
      ['maven-test-fail', /^\[ERROR\] com\.acme\.ledger\.TotalsTest\.sumsThreeAmounts -- Time elapsed: .* <<< FAILURE!$/],
      ['maven-test-fail', /^\[ERROR\] Tests run: 3, Failures: 1, .* <<< FAILURE! -- in /],
      ['maven-test-fail', /^org\.opentest4j\.AssertionFailedError: /],
      ['maven-test-fail', /^\[ERROR\] +TotalsTest\.sumsThreeAmounts:\d+ expected: /],
    ],
    quiet: [
      ['maven-compile-fail', /^\[ERROR\] COMPILATION ERROR : $/],
      ['maven-compile-fail', /^\[ERROR\] -> \[Help 1\]$/],
      ['maven-compile-fail', /^\[ERROR\] +mvn <args> -rf :ledger$/],
      ['maven-test-fail', /^\[ERROR\] $/],
      ['maven-test-fail', /^\[ERROR\] Failures: $/],
      ['maven-test-fail', /^\[ERROR\] To see the full stack trace/],
      ['maven-test-fail', /^\[ERROR\] Please refer to .*surefire-reports/],
      ['maven-test-fail', /^\[INFO\] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: /],
      ['maven-test-fail', /^\[INFO\] Building ledger 1\.0/],
    ],
  },
  make: {
    salient: [
      ['make-gcc-fail', /^make\[1\]: \*\*\* \[Makefile:\d+: heap\.o\] Error 1$/],
      ['make-gcc-fail', /^make: \*\*\* \[Makefile:\d+: libparse\] Error 2$/],
      ['make-gcc-fail', /^make\[1\]: Target 'all' not remade because of errors\.$/],
      ['make-gcc-fail', /^make: Target 'all' not remade because of errors\.$/],
      ['make-no-rule', /No rule to make target 'allocator\.o'/],
    ],
    quiet: [
      ['make-gcc-ok', /^make\[1\]: Nothing to be done for 'all'\.$/],
      ['make-gcc-ok', /^make\[1\]: Entering directory /],
      ['make-gcc-ok', /^make\[1\]: Leaving directory /],
      ['make-gcc-ok', /-c -o error_codes\.o error_codes\.c$/],
      ['make-gcc-ok', /^ar rcs libcore\.a /],
    ],
  },
  fatal: {
    salient: [
      ['git-fail', /^fatal: 'origin' does not appear to be a git repository$/],
      ['git-fail', /^fatal: Could not read from remote repository\.$/],
      ['git-not-a-repo', /^fatal: not a git repository/],
    ],
    quiet: [
      ['git-fail', /^[0-9a-f]{7} Treat a missing cache as non-fatal$/],
      ['git-fail', /^[0-9a-f]{7} Log fatal errors with the request id$/],
      ['node-test-ok', /^ {4}ok \d+ - treats warnings as non-fatal$/],
      ['python-ok', /^test_treats_warnings_as_non_fatal .* \.\.\. ok$/],
    ],
  },
  'generic-error': {
    salient: [
      ['python-fail', /^ERROR:ingest:/],
      ['cargo-test-fail', /^error: test failed, to rerun pass /],
      ['cargo-test-fail', /^error: 1 target failed:$/],
      ['rust-error', /^Error: ParseFloatError/],
    ],
    quiet: [
      ['python-ok', /^checked 40 files: 0 errors, 2 warnings$/],
      ['python-ok', /^errors: 0$/],
      ['python-ok', /^no errors found$/],
      ['python-fail', /^INFO:ingest:ingested 20 rows$/],
      ['python-fail', /^INFO:fetch:batch 1: \d+\/\d+ rows, 0 errors$/],
      ['git-fail', /^[0-9a-f]{7} Fix error handling in retry loop$/],
      ['npm-fail', /^built 8 files into dist\/ \(0 errors\)$/],
      ['python-ok', /DeprecationWarning: /],
    ],
  },
}

Object.assign(CASES, {
  chains: {
    salient: [
      ['java-chain', /^Caused by: java\.io\.FileNotFoundException: /],
      ['java-chain', /^Caused by: java\.lang\.IllegalStateException: /],
      ['node-cause', /^ +\[cause\]: Error: ENOENT: /],
      ['python-chain', /^FileNotFoundError: /],
      ['dotnet-fail', /^System\.InvalidOperationException: .* ---> System\.IO\./],
    ],
    quiet: [
      ['python-chain', /^The above exception was the direct cause of the following exception:$/],
      ['java-chain', /^\s+at java\.base\//],
      ['java-chain', /^\s+\.\.\. \d+ more$/],
      ['java-chain', /^batch \d+: step 1 of 3, 0 errors/],
      ['node-cause', /^ +\.\.\. \d+ lines matching cause stack trace \.\.\.$/],
    ],
  },
  'test-frameworks': {
    salient: [
      ['rspec-fail', /^ +Failure\/Error: /],
      ['rspec-fail', /^\d+ examples, 1 failure$/],
      ['exunit-fail', /^ +Assertion with == failed$/],
      ['exunit-fail', /^ +1\) test applies the loyalty discount before tax \(LedgerTest\)$/],
      ['exunit-fail', /^\d+ tests, 1 failure$/],
      ['ctest-fail', /\*\*\*Failed/],
      ['ctest-fail', /^The following tests FAILED:$/],
      ['ctest-fail', /tests failed out of/],
      ['ctest-fail', /^check_total: expected 1250, got 1240$/],
    ],
    quiet: [
      ['rspec-ok', /^\d+ examples, 0 failures$/],
      ['rspec-ok', /still reports an error for unterminated strings/],
      ['exunit-ok', /^\d+ tests, 0 failures$/],
      ['ctest-fail', /Test +#\d+: .* Passed/],
      ['ctest-ok', /tests passed, 0 tests failed out of/],
      ['rspec-fail', /^ +expected: 1250$/],
      ['exunit-fail', /^ +left: +1240$/],
      ['exunit-fail', /^ +code: +assert total == 1250$/],
    ],
  },
  databases: {
    salient: [
      ['psql-fail', /^psql:002-accounts\.sql:\d+: ERROR: /],
    ],
    quiet: [
      ['psql-fail', /^DETAIL: /],
      ['psql-fail', /^INSERT 0 1$/],
      ['psql-fail', /^INSERT INTO accounts VALUES \(3, /],
    ],
  },
})

const logs = {}
const manifest = fs.readFileSync(manifestFile, 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => l.split('\t'))
// With ONLY set, the logs not rerun keep what their JSON says.
for (const f of fs.readdirSync(outDir).filter((f) => f.endsWith('.json'))) {
  const name = f.replace(/\.json$/, '')
  if (manifest.some(([n]) => n === name)) continue
  const old = JSON.parse(fs.readFileSync(path.join(outDir, f), 'utf8'))
  manifest.push([name, old.tool, String(old.exitCode), old.command])
}
manifest.sort((a, b) => a[0].localeCompare(b[0]))
let problems = 0
const complain = (msg) => { problems++; console.error(`PROBLEM: ${msg}`) }

const rows = []
for (const [name, tool, code, command] of manifest) {
  const text = fs.readFileSync(path.join(outDir, `${name}.log`), 'utf8')
  const lines = text.replace(/\r?\n$/, '').split(/\r?\n/)
  logs[name] = lines
  if (!(name in EXPLAINS)) { complain(`${name}: no entry in EXPLAINS`); continue }
  const spec = EXPLAINS[name]
  const failed = spec !== null
  const explains = []
  const at = []
  for (const re of spec ?? []) {
    const hits = lines.map((l, i) => [l, i + 1]).filter(([l]) => re.test(l))
    if (hits.length === 0) complain(`${name}: nothing matches ${re}`)
    for (const [l, n] of hits) {
      if (!explains.includes(l)) explains.push(l)
      at.push(n)
    }
  }
  at.sort((a, b) => a - b)
  const exitCode = Number(code)
  // a deploy script without set -e reports success after a failed step
  if (failed && exitCode === 0 && name !== 'sh-setx-fail') complain(`${name}: failed but exit code 0`)
  if (!failed && exitCode !== 0) complain(`${name}: expected success, exit code ${exitCode}`)
  if (lines.length < 150) complain(`${name}: only ${lines.length} lines`)
  if (text.length < 6000) complain(`${name}: only ${text.length} characters`)
  if (Buffer.byteLength(text) > 200 * 1024) complain(`${name}: larger than 200 KB`)
  const lo = lines.length * 0.15, hi = lines.length * 0.85
  const middle = at.filter((n) => n > lo && n <= hi)
  if (failed && middle.length === 0) complain(`${name}: no explaining line in the middle 70%`)
  if (/\/tmp\/|\/root\/|\/work\//.test(text)) complain(`${name}: a machine path is left in the log`)
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify({ tool, family: FAMILY[name] ?? tool, command, exitCode, failed, heldOut: HELD_OUT.has(name), explains }, null, 2) + '\n')
  rows.push([name, String(exitCode), String(lines.length), String(text.length),
    failed ? at.map((n) => `${n} (${Math.round((100 * n) / lines.length)}%)`).join(', ') : '-'])
}

const cases = {}
for (const [group, kinds] of Object.entries(CASES)) {
  cases[group] = {}
  for (const kind of ['salient', 'quiet']) {
    cases[group][kind] = []
    for (const [log, re] of kinds[kind]) {
      const line = (logs[log] ?? []).find((l) => re.test(l))
      if (line === undefined) complain(`cases ${group}/${kind}: nothing in ${log} matches ${re}`)
      else if (!cases[group][kind].includes(line)) cases[group][kind].push(line)
    }
  }
}
fs.writeFileSync(casesFile, JSON.stringify(cases, null, 2) + '\n')

const head = ['name', 'exit', 'lines', 'chars', 'explaining lines (line number, % of log)']
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
const fmt = (r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')
console.log(fmt(head))
for (const r of rows) console.log(fmt(r))
console.log()
for (const [group, kinds] of Object.entries(cases)) console.log(`cases ${group}: ${kinds.salient.length} salient, ${kinds.quiet.length} quiet`)
if (problems > 0) {
  console.error(`${problems} problem(s)`)
  process.exit(1)
}
EOF

node "$SCRATCH/finish.mjs" "$OUT" "$HERE/cases.json" "$SCRATCH/manifest.tsv"
