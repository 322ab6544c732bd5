#!/usr/bin/env bash
# The GPU check of issue 18, in one command, on a machine with an NVIDIA GPU and no internet.
#
#   bash bench/gpu_check.sh                 # on the GPU machine: CuPy and PyTorch CUDA
#   bash bench/gpu_check.sh --cpu           # the rehearsal, any machine: NumPy and PyTorch CPU
#   bash bench/gpu_check.sh --fetch-wheels  # here, with internet: fill bench/wheels/ first
#
# What the GPU machine must have: python3 with NumPy, CuPy (cupy-cuda13x or cupy-cuda12x),
# PyTorch with CUDA, pytest and hypothesis. What it may lack, array-api-compat and
# array-api-strict (pure Python), comes as wheels in bench/wheels/ (git-ignored: fetched here
# by --fetch-wheels, carried to the machine with the working tree) and is installed into a
# temporary folder, never into the machine's Python.
#
# Steps, each with its own time limit so that the whole ends within 4 minutes:
#   1. the machine: GPU, driver, versions (nvidia-smi, python3);
#   2. the carried wheels, where the machine lacks them;
#   3. the engine's tests on CuPy: every namespace-parametrised test, with
#      MINIGRAD_TEST_NAMESPACES=cupy, and tests/test_gpu.py   (python -m bench.gpu_check tests)
#   4. moons MLP, LeNet-5 at batch 256 and a 4096-wide MLP at batch 1024 on CuPy and on PyTorch
#      CUDA from the same weights: losses must agree (float32, TF32 off, rtol 1e-4), times and
#      ratios printed                                          (python -m bench.gpu_check bench)
#
# Output: the whole log in $GPU_CHECK_OUT/gpu_check.log and the table in
# $GPU_CHECK_OUT/gpu_check.txt (+ .json); GPU_CHECK_OUT defaults to $OUT (the device tool's
# folder that comes back) or else bench/results/. Exit status 0 only if every step passed.
set -u -o pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
WHEELS=bench/wheels
# The versions the project is tested with here (pure-Python wheels, any Python >= 3.10).
WHEEL_PINS=(array-api-compat==1.16.0 array-api-strict==2.6.1)

if [[ "${1:-}" == "--fetch-wheels" ]]; then
    mkdir -p "$WHEELS"
    exec "$PY" -m pip download --no-deps --only-binary=:all: --dest "$WHEELS" "${WHEEL_PINS[@]}"
fi

MODE=gpu
[[ "${1:-}" == "--cpu" ]] && MODE=cpu
if [[ $# -gt 0 && "$1" != "--cpu" ]]; then
    echo "usage: bash bench/gpu_check.sh [--cpu | --fetch-wheels]" >&2
    exit 2
fi
CPU_FLAG=()
[[ $MODE == cpu ]] && CPU_FLAG=(--cpu)

OUTDIR=${GPU_CHECK_OUT:-${OUT:-bench/results}}
mkdir -p "$OUTDIR"
LOG="$OUTDIR/gpu_check.log"
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
export PYTHONUNBUFFERED=1 CUPY_TF32=0 HYPOTHESIS_PROFILE=ci
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
STATUS=0

check() {
    echo "== gpu_check ($MODE) $(date -u '+%Y-%m-%d %H:%M:%S UTC') in $ROOT"
    echo "== 1. the machine"
    if [[ $MODE == gpu ]]; then
        timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv \
            || echo "nvidia-smi: not available"
    fi
    "$PY" -c 'import sys, numpy; print("python", sys.version.split()[0], sys.executable, "| numpy", numpy.__version__)'

    echo "== 2. array-api-compat and array-api-strict [$(elapsed) s]"
    if ! "$PY" -c 'import array_api_compat, array_api_strict' 2>/dev/null; then
        if ! ls "$WHEELS"/*.whl >/dev/null 2>&1; then
            echo "missing, and no wheels in $WHEELS: run 'bash bench/gpu_check.sh --fetch-wheels'" \
                 "on a machine with internet and carry $WHEELS along"
            return 2
        fi
        SITE=$(mktemp -d /tmp/gpu_check_site.XXXX)
        if "$PY" -m pip install --quiet --no-index --no-deps --target "$SITE" "$WHEELS"/*.whl; then
            export PYTHONPATH="$PYTHONPATH:$SITE"
            echo "installed from $WHEELS into $SITE"
        else  # no pip: pure-Python wheels import straight from the zip files
            for w in "$ROOT/$WHEELS"/*.whl; do export PYTHONPATH="$PYTHONPATH:$w"; done
            echo "pip failed: importing the wheels of $WHEELS directly"
        fi
    fi
    "$PY" -c 'import array_api_compat, array_api_strict; print("array-api-compat", array_api_compat.__version__, "| array-api-strict", array_api_strict.__version__)'

    echo "== 3. the engine's tests on $([[ $MODE == gpu ]] && echo CuPy || echo NumPy) [$(elapsed) s]"
    TESTS_LIMIT=140
    [[ $MODE == cpu ]] && TESTS_LIMIT=600  # two shared cores run the tests slower than 16
    timeout $(( TESTS_LIMIT + 20 )) "$PY" -m bench.gpu_check tests "${CPU_FLAG[@]}" \
        --limit "$TESTS_LIMIT"
    rc=$?
    echo "tests: exit $rc"
    [[ $rc -ne 0 ]] && STATUS=1

    echo "== 4. training steps: minigrad against PyTorch [$(elapsed) s]"
    BENCH_LIMIT=$(( 225 - $(elapsed) ))   # what is left of 4 minutes, less a margin
    [[ $MODE == cpu ]] && BENCH_LIMIT=600  # the rehearsal on a small CPU may take longer
    [[ $BENCH_LIMIT -lt 30 ]] && BENCH_LIMIT=30
    timeout "$BENCH_LIMIT" "$PY" -m bench.gpu_check bench "${CPU_FLAG[@]}" --out "$OUTDIR/gpu_check.txt"
    rc=$?
    [[ $rc -eq 124 ]] && echo "bench: stopped after $BENCH_LIMIT s"
    echo "bench: exit $rc"
    [[ $rc -ne 0 ]] && STATUS=1

    echo "== gpu_check ($MODE): $([[ $STATUS -eq 0 ]] && echo PASSED || echo FAILED) in $(elapsed) s;" \
         "log $LOG"
    return $STATUS
}

check 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
