#!/bin/sh
# Builds the fuzz seed corpus in OUT_DIR (default /tmp/hta-fuzz-corpus) from
# the real traces in TRACES_DIR (default ../shared/traces/hta beside the
# checkout) and the hand-written seeds in fuzz/seeds/.  The traces are
# never copied into the repository: the corpus is made at fuzz time.
#
# For every trace: the first 2, 8, 32 and 60 KB of its JSON as they are
# (truncated input), and closed-off variants (valid documents under 60 KB:
# the metadata plus the events of a time window, so CPU launches travel
# with their GPU kernels).  Each input gets the harness's leading byte:
# a refill size for the reader, an options byte for the analyses
# (fuzz/targets.c).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
traces="${1:-$here/../../shared/traces/hta}"
out="${2:-/tmp/hta-fuzz-corpus}"
rm -rf "$out"
mkdir -p "$out/reader" "$out/analyses"
/usr/bin/python3 - "$traces" "$here/seeds" "$out" <<'PY'
import gzip, hashlib, json, os, sys

traces, seeds, out = sys.argv[1:4]
LIMIT = 60 * 1024
READER_BYTES = [0, 1, 7, 64, 255]     # refill sizes
ANALYSES_BYTES = [0, 1, 2, 4, 8, 0x3D] # defaults, round, last step, detail, two ranks, mixed

def save(kind, lead, data):
    blob = bytes([lead]) + data
    name = hashlib.sha1(blob).hexdigest()[:16]
    with open(os.path.join(out, kind, name), "wb") as f:
        f.write(blob)

def save_both(data, i):
    save("reader", READER_BYTES[i % len(READER_BYTES)], data)
    save("analyses", ANALYSES_BYTES[i % len(ANALYSES_BYTES)], data)

def windows(doc):
    """Valid documents holding the events of successive time windows."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    meta = {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else None
    timed = sorted((e for e in events if isinstance(e.get("ts"), (int, float))), key=lambda e: e["ts"])
    untimed = [e for e in events if not isinstance(e.get("ts"), (int, float))][:20]
    i = 0
    while i < len(timed) and i < 20000:
        n = 200
        while True:
            chunk = untimed + timed[i:i + n]
            body = dict(meta or {}, traceEvents=chunk) if meta is not None else chunk
            text = json.dumps(body, separators=(",", ":")).encode()
            if len(text) <= LIMIT or n <= 1:
                break
            n //= 2
        if len(text) <= LIMIT:
            yield text
        i += max(n, 1) * 7  # skip ahead: windows from the whole trace

k = 0
for folder in sorted(os.listdir(traces)):
    for name in sorted(os.listdir(os.path.join(traces, folder))):
        path = os.path.join(traces, folder, name)
        raw = open(path, "rb").read()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        for size in (2, 8, 32, 60):
            save_both(text[:size * 1024], k); k += 1
        for w, piece in enumerate(windows(json.loads(text))):
            if w >= 12:
                break
            save_both(piece, k); k += 1
for name in sorted(os.listdir(seeds)):
    data = open(os.path.join(seeds, name), "rb").read()
    for i in range(len(ANALYSES_BYTES)):
        save_both(data, k + i)
    k += 1
print(f"corpus: {len(os.listdir(os.path.join(out, 'reader')))} reader inputs, "
      f"{len(os.listdir(os.path.join(out, 'analyses')))} analyses inputs in {out}")
PY
