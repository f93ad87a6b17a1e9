;; The byte kernel: the passes over every byte of captured output, in
;; WebAssembly with 128-bit SIMD. `kernel.ts` copies bytes into this
;; module's memory, calls these functions and reads back what they wrote;
;; it falls back to plain JavaScript with the same results where
;; WebAssembly is missing. `scripts/kernel.mjs` assembles this file into
;; `kernelBytes.ts`, and a test checks that the two agree.

(module
  (memory (export "memory") 1)

  ;; 1 once a byte of 0x80 or more was seen by `lines`; the caller resets it.
  (global $nonAscii (export "nonAscii") (mut i32) (i32.const 0))

  ;; The anchor scan's first pass (see ../secrets/anchors.ts). Its tables
  ;; sit at fixed places: the kind of each 16-bit window hash at [0, 65536)
  ;; (0 none, 1 a three-byte anchor's window, 2 only longer anchors'), one
  ;; byte per byte pair at [65536, 131072), and one per 16-bit hash of the
  ;; longer anchors' four-byte keys at [131072, 196608). For each 4-byte word
  ;; k in [0, count) at `data`, looks up the hashes of the 3-byte windows
  ;; starting at its bytes 0 and 2 and the pairs at its bytes 0 and 2. A pair,
  ;; or a window of kind 1, is a hit; a window of kind 2 is one only when the
  ;; four bytes an anchor there would have (at the word's bytes -1, 0, 1 or 2)
  ;; hash to a key. Writes k to `hits` (one i32 each) for every hit; returns
  ;; how many. `data` must hold a byte before the first word (the one before
  ;; it in the input, or any byte where there is none) and a word after the
  ;; last: the second window of a word, and the keys, reach into them.
  (func (export "collect") (param $data i32) (param $count i32) (param $mul i32) (param $hits i32) (result i32)
    (local $p i32) (local $end i32) (local $word i32) (local $out i32) (local $set i32)
    (local.set $p (local.get $data))
    (local.set $out (local.get $hits))
    (local.set $end (i32.add (local.get $data) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $word (i32.load (local.get $p)))
        (local.set $set
          (i32.or
            (i32.or
              (i32.load8_u
                (i32.shr_u (i32.mul (i32.and (local.get $word) (i32.const 0xffffff)) (local.get $mul)) (i32.const 16)))
              (i32.load8_u
                (i32.shr_u (i32.mul (i32.and (i32.load offset=2 align=1 (local.get $p)) (i32.const 0xffffff)) (local.get $mul)) (i32.const 16))))
            (i32.or
              (i32.load8_u offset=65536 (i32.and (local.get $word) (i32.const 0xffff)))
              (i32.load8_u offset=65536 (i32.shr_u (local.get $word) (i32.const 16))))))
        (if (local.get $set)
          (then
            (if (i32.or
                  (i32.and (local.get $set) (i32.const 1))
                  (i32.or
                    (i32.or
                      (i32.load8_u offset=131072
                        (i32.shr_u (i32.mul (i32.load align=1 (i32.sub (local.get $p) (i32.const 1))) (i32.const 0x9e3779b1)) (i32.const 16)))
                      (i32.load8_u offset=131072
                        (i32.shr_u (i32.mul (local.get $word) (i32.const 0x9e3779b1)) (i32.const 16))))
                    (i32.or
                      (i32.load8_u offset=131072
                        (i32.shr_u (i32.mul (i32.load offset=1 align=1 (local.get $p)) (i32.const 0x9e3779b1)) (i32.const 16)))
                      (i32.load8_u offset=131072
                        (i32.shr_u (i32.mul (i32.load offset=2 align=1 (local.get $p)) (i32.const 0x9e3779b1)) (i32.const 16))))))
              (then
                (i32.store (local.get $out) (i32.shr_u (i32.sub (local.get $p) (local.get $data)) (i32.const 2)))
                (local.set $out (i32.add (local.get $out) (i32.const 4)))))))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $next)))
    (i32.shr_u (i32.sub (local.get $out) (local.get $hits)) (i32.const 2)))

  ;; Counts the line breaks (0x0A) in [p, p + n), and sets $nonAscii when a
  ;; byte is 0x80 or more. With `want` > 0, also writes to `out` (one i32
  ;; each) the offset from `p` just past the want-th break, the
  ;; (want + every)-th, and so on: where the lines a line index keeps begin.
  (func (export "lines") (param $p i32) (param $n i32) (param $want i32) (param $every i32) (param $out i32) (result i32)
    (local $start i32) (local $end i32) (local $blocks i32) (local $v v128) (local $or v128)
    (local $mask i32) (local $c i32) (local $count i32) (local $byte i32) (local $high i32)
    (local.set $start (local.get $p))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $blocks (i32.add (local.get $p) (i32.and (local.get $n) (i32.const -16))))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $p) (local.get $blocks)))
        (local.set $v (v128.load align=1 (local.get $p)))
        (local.set $or (v128.or (local.get $or) (local.get $v)))
        (local.set $mask (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))))
        (if (local.get $mask)
          (then
            (local.set $c (i32.popcnt (local.get $mask)))
            (if (i32.and (i32.ne (local.get $want) (i32.const 0)) (i32.ge_u (i32.add (local.get $count) (local.get $c)) (local.get $want)))
              (then
                ;; a wanted break is in this block: one break at a time
                (loop $bit
                  (local.set $count (i32.add (local.get $count) (i32.const 1)))
                  (if (i32.eq (local.get $count) (local.get $want))
                    (then
                      (i32.store (local.get $out)
                        (i32.add (i32.sub (local.get $p) (local.get $start)) (i32.add (i32.ctz (local.get $mask)) (i32.const 1))))
                      (local.set $out (i32.add (local.get $out) (i32.const 4)))
                      (local.set $want (i32.add (local.get $want) (local.get $every)))))
                  (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
                  (br_if $bit (local.get $mask))))
              (else (local.set $count (i32.add (local.get $count) (local.get $c)))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $block)))
    (block $tail
      (loop $byte
        (br_if $tail (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $byte (i32.load8_u (local.get $p)))
        (local.set $high (i32.or (local.get $high) (local.get $byte)))
        (if (i32.eq (local.get $byte) (i32.const 10))
          (then
            (local.set $count (i32.add (local.get $count) (i32.const 1)))
            (if (i32.eq (local.get $count) (local.get $want))
              (then
                (i32.store (local.get $out) (i32.add (i32.sub (local.get $p) (local.get $start)) (i32.const 1)))
                (local.set $out (i32.add (local.get $out) (i32.const 4)))
                (local.set $want (i32.add (local.get $want) (local.get $every)))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $byte)))
    (if (i32.or (i8x16.bitmask (local.get $or)) (i32.and (local.get $high) (i32.const 0x80)))
      (then (global.set $nonAscii (i32.const 1))))
    (local.get $count))
)
