"""Serve a GGUF model on loopback with the prebuilt ``xllamacpp`` wheel (no llama.cpp build).

    python bench/xllamacpp_serve.py MODEL.gguf PORT ALIAS [THREADS] [BATCH]

Run it with a Python that has ``xllamacpp`` (bench/real_llm_qwen.sh makes a venv for it).
llama.cpp's own server inside the wheel answers ``/health``, ``/slots``, ``/v1/models`` and
``/v1/chat/completions`` with ``json_schema``. One slot, 8,192 context tokens, and a small
prompt batch (``BATCH``, default 256): llama.cpp notices a cancelled request only between
batches, so a small one frees the slot sooner (docs/planning.md, issue 39.8). ``THREADS``
defaults to 1: on 2 busy cores, 2 threads collapsed (shared/real-llm.md). Stops on SIGTERM.
"""

from __future__ import annotations

import signal
import sys
import threading

import xllamacpp  # type: ignore[import-not-found]


def main() -> None:
    """Start the server and wait for SIGTERM."""
    model, port, alias = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    batch = int(sys.argv[5]) if len(sys.argv) > 5 else 256
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = alias
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = 8192
    params.n_parallel = 1
    params.n_batch = batch
    params.n_ubatch = batch
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.endpoint_slots = True
    params.warmup = False
    server = xllamacpp.Server(params)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("serving", model, "on port", port, flush=True)
    stop.wait()
    del server


if __name__ == "__main__":
    main()
