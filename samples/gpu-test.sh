#!/usr/bin/env bash
# gpu-test.sh: GPU check of graphshim with the samples in samples/.
#
#   bash samples/gpu-test.sh [sample ...]        (from the repo root; needs a GPU)
#
# For every sample (and, for the CUDA ones, every runtime: static, shared) it
# runs
#   plain   without the shim
#   off     LD_PRELOAD=<shim> GRAPHSHIM=0
#   trace   LD_PRELOAD=<shim> GRAPHSHIM_TRACE=<file>
#   report  LD_PRELOAD=<shim> GRAPHSHIM_REPORT=<file>.json   (engine on: default)
# and requires: exit code 0 everywhere, stdout of off/trace/report byte-identical
# to plain, launch lines in the trace matching the program's `launches <N>`
# (see the table below) and, unless GS_CHECK_REPORT=0, the report's replays /
# hit_rate matching the expectation.
# tiny_stream's report is also checked row by row (check_rows: sequence rows
# against their stream, streams against the totals).  Then, for tiny_stream
# and each runtime, unless GS_EXTRA=0:
#   nvtx    under the shim with tests/nvtxprobe (built here with cc) as the
#           NVTX tool: stdout identical to plain, and the "graphshim" domain's
#           replay, chunk, capture and bail ranges agree with the report
#           (check_nvtx)
#   san     compute-sanitizer --tool memcheck <build>/graphshim run -- sample 20:
#           stdout identical to a plain run with 20 iterations, 0 sanitizer
#           errors once graphshim's own layout-probe reports are set aside (as
#           in make sanitize), and the shim's report written.  SKIP with a note
#           where compute-sanitizer is absent.
# The checks of reports can be run by hand on files:
#   bash samples/gpu-test.sh --check-rows REPORT.json [ITERS]
#   bash samples/gpu-test.sh --check-nvtx PROBE_OUT REPORT.json
# Multi-process samples (type tr in the table) run as torchrun --standalone
# --nproc-per-node N (a worker per GPU, NCCL, NCCL_NVLS_ENABLE=0), N = 4 where
# nvidia-smi -L lists 4 GPUs or more, else 2 (GS_NPROC sets it), only where
# there are N GPUs (else a SKIP line, naming the GPUs needed, not a failure);
# each rank writes its own report (GRAPHSHIM_REPORT=<dir>/report.%r.json), and
# the ranks' reports, summed by `graphshim report --json`, are what is checked;
# each rank's hit rate is listed in <dir>/ranks.txt and in the summary.  Where
# N GPUs are there, samples/ranks-test.sh then checks that no rank is stranded
# (GS_RANKS=0: not run).
# Python samples also run
#   plain2  without the shim, a second time
# and their two plain runs must print the same stdout; if not, the sample is
# reported NONDETERMINISTIC (a problem of the sample, not of the shim: its
# shim runs are not compared) and the script fails.  A Python sample whose
# plain run exits with 77 (its framework, e.g. JAX or CuPy, is not installed)
# is reported SKIP and not run further.
#
# Environment:
#   OUT=dir              logs (default build/gpu-test; old results there are removed)
#   GRAPHSHIM_LIB=path   the shim (default build/libgraphshim.so)
#   GS_BUILD=dir         build dir given to samples/Makefile (default build)
#   GS_CHECK_REPORT=0    do not check the JSON reports (engine not built yet)
#   GS_MIN_HIT_RATE=x    also require hit_rate >= x where replays are expected >0
#   GS_RUNTIMES="static shared"   CUDA runtimes to test
#   GS_SKIP_TORCH=1      skip the PyTorch samples (torch_*.py)
#   GS_SKIP_PY=1         skip all Python samples (PyTorch, JAX, CuPy)
#   GS_PLAIN2=0          do not run the Python samples' second plain run
#   GS_TIMEOUT=120       per-run timeout (s);  GS_JOBS=8: make -j
#   GS_KEEP_TRACE=1      keep full traces gzipped (default: head -200 + counts)
#   GS_NO_BUILD=1        do not run make (binaries already in $GS_BUILD/samples)
#   GS_SHIM_ENV="GRAPHSHIM_XSTREAM=1"  settings of the runs under the shim (the
#                        caller's own GRAPHSHIM_* never reach a run)
#   GS_PACK_LOGS=1       at the end, pack the per-run logs into $OUT/logs.tar.gz
#                        (leaves 4 files: summary.txt env.txt build.log logs.tar.gz)
#   GS_EXTRA=0           skip the nvtx and compute-sanitizer runs
#   GS_SHIM_RUNS="off trace"  the Python samples' runs under the shim besides
#                        report (e.g. GS_SHIM_RUNS=report: that one alone)
#   GS_RANKS=0           skip samples/ranks-test.sh ("ranks" as a sample name
#                        runs it alone); GS_NPROC: processes of torchrun samples
#   GS_EXTRA_SAMPLE=tiny_stream   the CUDA sample they run
#   COMPUTE_SANITIZER    the tool (default: on the PATH, else $CUDA_HOME/bin)
#   PYTHON=python3       interpreter for the PyTorch samples
#   NVCC_ARCH, NVCC, CUDA_HOME are passed through to samples/Makefile.

set -u -o pipefail

CALLER_DIR=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
T0=$SECONDS

abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$ROOT/$1" ;; esac; }

OUT=$(abspath "${OUT:-build/gpu-test}")
SHIM=$(abspath "${GRAPHSHIM_LIB:-build/libgraphshim.so}")
GS_BUILD=$(abspath "${GS_BUILD:-build}")
CHECK_REPORT=${GS_CHECK_REPORT:-1}
MIN_HIT_RATE=${GS_MIN_HIT_RATE:-}
RUNTIMES=${GS_RUNTIMES:-static shared}
SKIP_TORCH=${GS_SKIP_TORCH:-0}
SKIP_PY=${GS_SKIP_PY:-0}
PLAIN2=${GS_PLAIN2:-1}
SKIP_RC=77             # a Python sample's plain run exits with it: framework missing
RUN_TIMEOUT=${GS_TIMEOUT:-120}
JOBS=${GS_JOBS:-8}
KEEP_TRACE=${GS_KEEP_TRACE:-0}
NO_BUILD=${GS_NO_BUILD:-0}
PACK_LOGS=${GS_PACK_LOGS:-0}
PYTHON=${PYTHON:-python3}
EXTRA=${GS_EXTRA:-1}
EXTRA_SAMPLE=${GS_EXTRA_SAMPLE:-tiny_stream}
OWN_PREFIX=gsamp_      # all kernels of the C/CUDA samples are named gsamp_*
RANKS=${GS_RANKS:-1}   # samples/ranks-test.sh where every sample is selected
# The runs under the shim of a Python sample: always report; off and trace
# unless GS_SHIM_RUNS leaves them out (C samples run all three).
PY_SHIM_RUNS=$(printf '%s\n' ${GS_SHIM_RUNS:-off trace} report | awk '!seen[$0]++' | tr '\n' ' ')

# ------------------------------------------------------------------ expectations
# sample         type  launches  replays  extra
#   type     cu: samples/<name>.cu built as .static/.shared; py: samples/<name>.py;
#            tr: samples/<name>.py under torchrun, N processes (needs N GPUs)
#   launches eq: launch lines in the trace == program's `launches N`
#            ge: >= (libraries add their own) and the trace's gsamp_* launches == N
#            -:  program does not count (python)
#   replays  >0: report's replays must be > 0;  any: whatever the shim decides
#            body>0: graphs of loop bodies (the report's body_graphs) must be > 0
#   extra    gemms: >= `gemms N` launches of kernels not named gsamp_*
#            tids4: launch lines from >= 4 distinct tids
#            ex:    launches through cuLaunchKernel[_ptsz] AND cuLaunchKernelEx[_ptsz]
#            rows:  the report passes check_rows, with the program's `iters N`
#            ctx2:  streams of two contexts (the report's ctx) replayed
# torch_basic checks PyTorch's launch paths and bytes; its sequences rarely repeat
# exactly (a scalar argument of period 4, the caching allocator's addresses), and
# its replays varied between 0 and 36 across GPU runs, so they are not required.
# loop_body's segments never repeat as a whole (each loop runs one more time than
# the last): only its loop bodies can be graphed.
# The real clients: cufft_loop (cuFFT's own kernels between the program's);
# torch_resnet (cuDNN convolutions), torch_encoder (fused encoder fast path) and
# jax_tanh (XLA, command buffers off) issue the same work between every pair of
# syncs: replays expected.
# torch_cnn_train (forward, backward, SGD; inputs rotate with period 4) and
# torch_decode (16 decode steps per sync, argmax feedback) are not required to
# replay.  cupy_loop's memory pool hands out addresses that change from
# iteration to iteration: its launches are patched (0 replays before patching,
# 297 after, on an H100), so replays are expected.  jax_tanh and cupy_loop exit
# 77 (SKIP) where JAX / CuPy is missing, torch_resnet where torchvision is.
# smem_attr sets its kernel's dynamic shared memory limit before every launch,
# raising and lowering it, as PyTorch does: replays expected (before, every
# such set dropped every graph).
# two_ctx: two contexts in one process (two devices, or two contexts on one),
# a stream each, an event and a peer copy each way every iteration: each
# context's 21 kernels are a sequence of their own, replayed in its own context
# (ctx2).  torch_allreduce and torch_ddp run under torchrun, 2 ranks, and only
# where 2 GPUs are present: the work between torch_allreduce's collectives is
# the same every iteration (replays expected); DDP's backward interleaves with
# its gradient buckets' all-reduces (replays not required).  The jobs of
# several GPUs (torch_ddp_adamw: data parallel, buckets, AdamW, dropout;
# torch_fsdp: FSDP2 with bf16 parameters; torch_tp: tensor parallel by hand;
# torch_pipeline: two stages, send/recv, 4 micro-batches; torch_ranks_differ:
# odd ranks launch an extra kernel on even steps) repeat their work between
# collectives every step: replays expected on the ranks summed.  peer_threads:
# a thread per GPU (two on one GPU), peer copies and events across devices.
# The memory-kind samples (mem_*, large_param; samples/mem_common.cuh) run in
# rounds of >= 20 iterations whose buffers grow 4x per round and are freed and
# allocated again between rounds (often at the same address, with another size
# or kind).  Replays are expected where each iteration is plain copies and
# kernels between synchronizes (pageable, pinned, registered, symbol, rounds);
# not required where the host polls mapped memory (zerocopy), where prefetches,
# stream attachments, stream-ordered allocations, 2-D copies or host functions
# cut every iteration (managed, pool, 2d, hostfn), nor yet for large_param
# (1,000 launches of a 32,000-byte-parameter kernel per synchronize, replayed
# as graphs of a loop body).  mem_symbol pokes its __device__ state from host
# memory at an offset of period 4 (a copy's host side is matched, never set in
# place; its device side, the symbol's offset, is set in place in the rounds
# that poke from pinned memory, and matched whole from pageable memory).
# copy_args: device copies and memsets whose addresses, sizes and values change
# every iteration, in four memory kinds in turn, and copies between pinned host
# memory and a device buffer that changes: their nodes are set in place, so
# replays are expected.
# decode_loop: an LLM engine's decode loop (64 tokens of 22 layers, 355
# kernels a token by cudaLaunchKernelEx with programmatic stream
# serialization, the token id back and the next one's inputs in by small
# copies, a synchronize a token); its arguments change once, where the
# position crosses 256: replays expected.
# two_branch (each step forks to a second stream by an event and joins it
# back) and copy_overlap (a copy stream brings the previous step's result to
# the host, ordered by events), and torch_two_stream (PyTorch's
# Stream.wait_stream fork and join every iteration, a copy stream every other):
# steps that span streams, graphed as one only with GRAPHSHIM_XSTREAM=1 (without
# it each stream's sequence ends at the events): replays not required, output
# identical.
EXPECT='
tiny_stream     cu  eq  >0   rows
tiny_legacy     cu  eq  >0   -
tiny_ptds       cu  eq  >0   -
cublas_gemm     cu  ge  >0   gemms
h2d_pinned      cu  eq  >0   -
h2d_pageable    cu  eq  >0   -
pingpong        cu  eq  >0   -
two_seqs        cu  eq  >0   -
events_timing   cu  eq  >0   -
threads4        cu  eq  >0   tids4
own_graph       cu  eq  any  -
malloc_async    cu  eq  any  -
host_func       cu  eq  any  -
mapped_poll     cu  eq  any  -
torch_basic     py  -   any  ex
torch_mlp       py  -   >0   -
cufft_loop      cu  ge  >0   -
torch_resnet    py  -   >0   -
torch_encoder   py  -   >0   -
torch_cnn_train py  -   any  -
torch_decode    py  -   any  -
torch_bail_sites py -   any  -
torch_two_stream py -   any  -
jax_tanh        py  -   >0   -
cupy_loop       py  -   >0   -
loop_body       cu  eq  body>0 -
two_ctx         cu  eq  >0   ctx2
smem_attr       cu  eq  >0   -
torch_allreduce tr  -   >0   -
torch_ddp       tr  -   any  -
torch_ddp_adamw tr  -   >0   -
torch_fsdp      tr  -   >0   -
torch_tp        tr  -   >0   -
torch_pipeline  tr  -   >0   -
torch_ranks_differ tr - >0   -
peer_threads    cu  eq  >0   -
mem_pageable    cu  eq  >0   -
mem_pinned      cu  eq  >0   -
mem_registered  cu  eq  >0   -
mem_zerocopy    cu  eq  any  -
mem_managed     cu  eq  any  -
mem_pool        cu  eq  any  -
mem_symbol      cu  eq  >0   -
mem_2d          cu  eq  any  -
mem_hostfn      cu  eq  any  -
mem_rounds      cu  eq  >0   -
large_param     cu  eq  any  -
um_perf         cu  eq  >0   -
copy_args       cu  eq  >0   -
decode_loop     cu  eq  >0   -
two_branch      cu  eq  any  -
copy_overlap    cu  eq  any  -
'

# ------------------------------------------------------------------ report checks

# check_rows REPORT [ITERS]: the report's rows against each other.  Prints one
# line per problem found, nothing when all hold.  Per stream: a stream that
# replayed lists its sequences; each row's launches_saved is replays * (ops - 1)
# and seen >= replays; the rows' replays add up to the stream's (when it lists
# fewer than 32); sum(ops * replays) equals ops_replayed when the stream had no
# bail (every op of a replayed segment went out as a graph, in early chunks or
# the last launch), and is at most it otherwise; ops_replayed <= ops_held <= ops;
# hit_rate and launches_saved (where the report has it per stream) as defined;
# the rows' graph_launches (at least each row's replays) add up to at most the
# stream's replays + chunks, their nodes_set to at most its nodes_patched, and
# their eager_us and replay_us, where present, are positive.  The totals are the streams' sums, bails by reason included, and a graph was
# captured for every replayed row.  With ITERS (a program that ends one segment
# per iteration, each a sequence of its own: tiny_stream): the rows' seen add up
# to ITERS, and each row ran at least GRAPHSHIM_WARMUP (2) times before replaying.
check_rows() {
    python3 - "$1" "${2:-}" <<'PYEOF'
import json, sys
path, iters = sys.argv[1], sys.argv[2]
bad = []
try:
    with open(path) as f:
        d = json.load(f)
except Exception as e:
    print("rows: cannot read %s: %s" % (path, e)); sys.exit(0)
def num(o, k):
    v = o.get(k) if isinstance(o, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None
t = d.get("totals") if isinstance(d, dict) else None
S = d.get("streams") if isinstance(d, dict) else None
if not isinstance(t, dict) or not isinstance(S, list):
    print("rows: no totals or streams"); sys.exit(0)
if d.get("engine") is not True:
    bad.append("engine is not on")
if not S:
    bad.append("no streams")
keys = ["ops", "ops_held", "ops_replayed", "replays"]
sums = dict((k, 0) for k in keys + ["chunks"])
all_chunks = True
bails = {}
seen_sum = replayed_rows = nrows = 0
for s in S:
    sid = "stream %s (%s)" % (s.get("id"), s.get("kind"))
    v = dict((k, num(s, k)) for k in keys + ["chunks", "launches_saved"])
    if any(v[k] is None for k in keys):
        bad.append("%s: %s missing" % (sid, [k for k in keys if v[k] is None])); continue
    for k in keys:
        sums[k] += v[k]
    if v["chunks"] is None:
        all_chunks = False
    else:
        sums["chunks"] += v["chunks"]
        if v["launches_saved"] != v["ops_replayed"] - v["replays"] - v["chunks"]:
            bad.append("%s: launches_saved %s != ops_replayed - replays - chunks" % (sid, v["launches_saved"]))
    sb = s.get("bails") if isinstance(s.get("bails"), dict) else {}
    for r, n in sb.items():
        bails[r] = bails.get(r, 0) + n
    if not v["ops_replayed"] <= v["ops_held"] <= v["ops"]:
        bad.append("%s: not ops_replayed %d <= ops_held %d <= ops %d" % (sid, v["ops_replayed"], v["ops_held"], v["ops"]))
    hr = s.get("hit_rate")
    want = v["ops_replayed"] / v["ops"] if v["ops"] else 0.0
    if not isinstance(hr, (int, float)) or abs(hr - want) > 0.00006:
        bad.append("%s: hit_rate %r, ops_replayed/ops is %.4f" % (sid, hr, want))
    rows = s.get("sequences") if isinstance(s.get("sequences"), list) else []
    nrows += len(rows)
    if v["replays"] > 0 and not rows:
        bad.append("%s: %d replays but no sequence rows" % (sid, v["replays"]))
    rsum = opsrep = glsum = nssum = 0
    for i, q in enumerate(rows):
        rid = "%s row %d" % (sid, i)
        o, seen, rep, saved = num(q, "ops"), num(q, "seen"), num(q, "replays"), num(q, "launches_saved")
        if None in (o, seen, rep, saved):
            bad.append("%s: a count is missing" % rid); continue
        if q.get("graph") not in (True, False, "failed", "dropped"):
            bad.append("%s: graph is %r" % (rid, q.get("graph")))
        if saved != rep * (o - 1):
            bad.append("%s: launches_saved %d != replays %d * (ops %d - 1)" % (rid, saved, rep, o))
        if seen < rep:
            bad.append("%s: seen %d < replays %d" % (rid, seen, rep))
        if rep and o < 2:
            bad.append("%s: %d replays of a %d-op sequence (GRAPHSHIM_MIN_OPS is 2)" % (rid, rep, o))
        if iters and rep and seen - rep < 2:
            bad.append("%s: replayed %d of %d times: fewer than 2 warm-up runs" % (rid, rep, seen))
        gl, ns = num(q, "graph_launches"), num(q, "nodes_set")
        if gl is not None and gl < rep:
            bad.append("%s: graph_launches %d < replays %d" % (rid, gl, rep))
        glsum += gl or 0
        nssum += ns or 0
        for k in ("eager_us", "replay_us"):
            if k in q and not (isinstance(q[k], (int, float)) and q[k] > 0):
                bad.append("%s: %s is %r" % (rid, k, q[k]))
        rsum += rep
        opsrep += o * rep
        seen_sum += seen
        replayed_rows += rep > 0
    if len(rows) < 32 and rsum != v["replays"]:
        bad.append("%s: rows' replays add up to %d, the stream has %d" % (sid, rsum, v["replays"]))
    if len(rows) < 32 and not sb and opsrep != v["ops_replayed"]:
        bad.append("%s: sum of ops * replays over rows is %d, ops_replayed %d (no bails)" % (sid, opsrep, v["ops_replayed"]))
    if v["chunks"] is not None and glsum > v["replays"] + v["chunks"]:
        bad.append("%s: rows' graph_launches add up to %d > replays + chunks %d" % (sid, glsum, v["replays"] + v["chunks"]))
    if num(s, "nodes_patched") is not None and nssum > num(s, "nodes_patched"):
        bad.append("%s: rows' nodes_set add up to %d > nodes_patched %d" % (sid, nssum, num(s, "nodes_patched")))
    if opsrep > v["ops_replayed"]:
        bad.append("%s: sum of ops * replays over rows %d > ops_replayed %d" % (sid, opsrep, v["ops_replayed"]))
for k in keys + (["chunks"] if all_chunks else []):
    if num(t, k) != sums[k]:
        bad.append("totals.%s %s != %d, the streams' sum" % (k, num(t, k), sums[k]))
tb = t.get("bails") if isinstance(t.get("bails"), dict) else None
if tb != bails:
    bad.append("totals.bails %r != the streams' %r" % (tb, bails))
if None not in (num(t, "launches_saved"), num(t, "chunks")) and \
        num(t, "launches_saved") != sums["ops_replayed"] - sums["replays"] - num(t, "chunks"):
    bad.append("totals.launches_saved %d != ops_replayed - replays - chunks" % num(t, "launches_saved"))
if (num(t, "graphs_captured") or 0) < replayed_rows:
    bad.append("graphs_captured %s < %d replayed rows" % (num(t, "graphs_captured"), replayed_rows))
if iters:
    if seen_sum != int(iters):
        bad.append("the rows' seen add up to %d, the program ran %s iterations" % (seen_sum, iters))
for b in bad:
    print("rows: " + b)
PYEOF
}

# check_nvtx PROBE_OUT REPORT: the ranges tests/nvtxprobe saw in the domain
# "graphshim" against the report of the same run.  Prints one line per problem.
# replay ranges == replays (a replay whose ops all went out in early chunks has
# none: not so in tiny_stream, 21 ops chunked at 8 and 16), chunk ranges ==
# chunks, body ranges == body_graphs, their ops (payloads) add up to
# ops_replayed, capture ranges ==
# graphs_captured + graph_failures, one range per bail (a mark for no-gain),
# every range popped.
check_nvtx() {
    python3 - "$1" "$2" <<'PYEOF'
import json, sys
bad = []
try:
    lines = open(sys.argv[1]).read().split("\n")
except Exception as e:
    print("nvtx: the tool wrote no file (%s): it was never loaded, or the program did not exit normally" % e); sys.exit(0)
try:
    t = json.load(open(sys.argv[2]))["totals"]
except Exception as e:
    print("nvtx: no report: %s" % e); sys.exit(0)
ev = {}
for l in lines:
    w = l.split()
    if len(w) == 5 and w[1] == "graphshim":
        ev[(w[0], w[2])] = (int(w[3]), int(w[4]))
def n(e, m): return ev.get((e, m), (0, 0))[0]
def p(e, m): return ev.get((e, m), (0, 0))[1]
if "domain graphshim" not in lines:
    bad.append("no graphshim domain")
if n("push", "replay") != t["replays"] or t["replays"] == 0:
    bad.append("replay ranges %d, report replays %d" % (n("push", "replay"), t["replays"]))
if n("push", "chunk") != t["chunks"]:
    bad.append("chunk ranges %d, report chunks %d" % (n("push", "chunk"), t["chunks"]))
if n("push", "body") != t.get("body_graphs", 0):
    bad.append("body ranges %d, report body_graphs %d" % (n("push", "body"), t.get("body_graphs", 0)))
ops = p("push", "replay") + p("push", "chunk") + p("push", "body")
if ops != t["ops_replayed"]:
    bad.append("ops of replay, chunk and body ranges %d, ops_replayed %d" % (ops, t["ops_replayed"]))
if n("push", "capture") != t["graphs_captured"] + t["graph_failures"]:
    bad.append("capture ranges %d, graphs captured + failed %d" % (n("push", "capture"), t["graphs_captured"] + t["graph_failures"]))
for r, c in t["bails"].items():
    got = n("mark", r) if r == "no-gain" else n("push", r)
    if got != c:
        bad.append("bail %s: %d ranges, report %d" % (r, got, c))
for (e, m), (c, _) in ev.items():
    if e == "push" and n("pop", m) != c:
        bad.append("%s: %d pushed, %d popped" % (m, c, n("pop", m)))
if "open 0" not in lines or "unmatched 0" not in lines:
    bad.append("unbalanced ranges: %s" % [l for l in lines if l.startswith(("open", "unmatched"))])
for b in bad:
    print("nvtx: " + b)
PYEOF
}

# A file named on the command line, from the directory the script was started in.
argpath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$CALLER_DIR/$1" ;; esac; }
case ${1:-} in
--check-rows) check_rows "$(argpath "${2:?report}")" "${3:-}"; exit 0 ;;
--check-nvtx) check_nvtx "$(argpath "${2:?probe output}")" "$(argpath "${3:?report}")"; exit 0 ;;
esac

# ------------------------------------------------------------------ setup
mkdir -p "$OUT" || exit 2
# remove only what an earlier run of this script left there
for f in "$OUT"/*.static "$OUT"/*.shared "$OUT"/*.py "$OUT"/*.tr "$OUT"/summary.txt "$OUT"/env.txt "$OUT"/build.log \
    "$OUT"/logs.tar.gz "$OUT"/nvtxprobe.so "$OUT"/nvtxprobe.log; do
    [ -e "$f" ] && rm -rf -- "$f"
done
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/gs-gpu-test.XXXXXX") || exit 2
trap 'rm -rf "$TMPD"' EXIT

log() { printf '%s\n' "$*"; }

REPORT_TOOL="$(dirname "$SHIM")/graphshim"
if [ ! -f "$SHIM" ]; then
    log "gpu-test: shim not found: $SHIM (build it first: make)"
    log "gpu-test: 0 passed, 1 failed"
    exit 2
fi

# selected samples
declare -a SEL=()
if [ $# -gt 0 ]; then
    RANKS=0
    for a in "$@"; do
        if [ "$a" = ranks ]; then
            RANKS=1
            continue
        fi
        if ! printf '%s\n' "$EXPECT" | awk -v n="$a" '$1==n{f=1} END{exit !f}'; then
            log "gpu-test: unknown sample '$a'"
            exit 2
        fi
        SEL+=("$a")
    done
else
    while read -r n _; do
        [ -n "${n:-}" ] && SEL+=("$n")
    done <<<"$EXPECT"
fi
for f in samples/*.cu; do
    n=$(basename "$f" .cu)
    printf '%s\n' "$EXPECT" | awk -v n="$n" '$1==n{f=1} END{exit !f}' ||
        log "gpu-test: warning: $f has no entry in the expectation table (not run)"
done
for f in samples/*.py; do
    n=$(basename "$f" .py)
    [ "$n" = torch_util ] && continue
    printf '%s\n' "$EXPECT" | awk -v n="$n" '$1==n{f=1} END{exit !f}' ||
        log "gpu-test: warning: $f has no entry in the expectation table (not run)"
done

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "shim: $SHIM"
    echo "check_report: $CHECK_REPORT"
    nvidia-smi -L 2>&1 | head -8
    "${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}" --version 2>&1 | tail -2
} >"$OUT/env.txt"

# GPUs of this machine: the torchrun samples (type tr) need 2.
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if ! [ "${NGPU:-0}" -gt 0 ] 2>/dev/null; then
    NGPU=$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
fi
echo "gpus: $NGPU" >>"$OUT/env.txt"
# Processes of a torchrun sample: 4 where there are 4 GPUs, else 2.
NPROC=${GS_NPROC:-$( [ "${NGPU:-0}" -ge 4 ] 2>/dev/null && echo 4 || echo 2)}
echo "torchrun processes: $NPROC" >>"$OUT/env.txt"

tb=$SECONDS
if [ "$NO_BUILD" = 1 ]; then
    log "gpu-test: not building the samples (GS_NO_BUILD=1)"
elif log "gpu-test: building samples (log: $OUT/build.log)" &&
    ! make -C samples -j"$JOBS" BUILD="$GS_BUILD" >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    log "gpu-test: building the samples failed"
    log "gpu-test: 0 passed, 1 failed"
    exit 1
fi
[ "$NO_BUILD" = 1 ] || log "gpu-test: samples built in $((SECONDS - tb)) s"
BIN="$GS_BUILD/samples"

# variables of the caller that must not leak into the runs (GS_SHIM_ENV's go to
# the runs under the shim)
declare -a UNSET=(-u LD_PRELOAD -u NVTX_INJECTION64_PATH -u NVTXPROBE_OUT)
read -r -a SHIM_ENV <<<"${GS_SHIM_ENV:-}"
while read -r v; do
    [ -n "$v" ] && UNSET+=(-u "$v")
done < <(compgen -e | grep '^GRAPHSHIM' || true)

# ------------------------------------------------------------------ helpers

# cap_file FILE MAX: keep head and tail of FILE if it is larger than MAX bytes
cap_file() {
    local f=$1 max=$2 sz
    [ -f "$f" ] || return 0
    sz=$(stat -c %s "$f" 2>/dev/null || echo 0)
    if [ "$sz" -gt "$max" ]; then
        { head -c $((max / 2)) "$f"
          printf '\n... [%d bytes cut by gpu-test] ...\n' $((sz - max))
          tail -c $((max / 2)) "$f"; } >"$f.cap" && mv "$f.cap" "$f"
    fi
}

# run_variant DIR VARIANT [VAR=value ...] CMD...
# writes DIR/VARIANT.stdout, DIR/VARIANT.stderr and a line
# "VARIANT rc=<rc> time=<s> cmd=<command>" to DIR/runs.txt
run_variant() {
    local dir=$1 v=$2 t rc dt
    shift 2
    t=$(date +%s.%N)
    timeout -k 10 "$RUN_TIMEOUT" env "${UNSET[@]}" PYTHONDONTWRITEBYTECODE=1 "$@" \
        >"$dir/$v.stdout" 2>"$dir/$v.stderr" </dev/null
    rc=$?
    dt=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}')
    printf '%s rc=%s time=%s cmd=%s\n' "$v" "$rc" "$dt" "$(printf '%q ' "$@")" >>"$dir/runs.txt"
    cap_file "$dir/$v.stderr" 65536
}

# run_field DIR VARIANT FIELD: rc or time of a run from DIR/runs.txt
run_field() { awk -v v="$2" -v f="$3=" '$1 == v { for (i = 2; i <= NF; i++) if (index($i, f) == 1) { print substr($i, length(f) + 1); exit } }' "$1/runs.txt"; }

# analyze_trace TRACE -> key value lines
analyze_trace() {
    awk -v own="$OWN_PREFIX" '
    { calls[$2 " " $NF]++ }
    $2 ~ /^cuLaunchKernel/ {
        L++
        if ($2 ~ /^cuLaunchKernelEx/) ex++; else pl++
        by[$2]++
        rc = ""
        if (match($0, / rc=-?[0-9]+/)) rc = substr($0, RSTART + 4, RLENGTH - 4)
        if (rc != "0") bad++
        k = ""
        if (index($0, " kernel=")) { k = $0; sub(/.* kernel=/, "", k); sub(/ grid=.*/, "", k) }
        if (k == "") noname++
        else if (index(k, own)) mine++
        else foreign++
        if (match($0, /^tid=[0-9]+/)) tids[substr($0, 5, RLENGTH - 4)] = 1
    }
    END {
        nt = 0
        for (t in tids) nt++
        printf "lines %d\nlaunches %d\nlaunch_plain %d\nlaunch_ex %d\n", NR, L, pl, ex
        printf "launch_rc_nonzero %d\nown %d\nforeign %d\nnoname %d\nlaunch_tids %d\n", bad, mine, foreign, noname, nt
        for (e in by) printf "ep.%s %d\n", e, by[e]
        for (c in calls) printf "call.%s %d\n", c, calls[c]
    }' "$1"
}

# kv FILE KEY: value of "KEY value" line (empty if none)
kv() { awk -v k="$2" '$1 == k { print $2; exit }' "$1" 2>/dev/null; }

# parse_report FILE -> "replays hit_rate status"
parse_report() {
    python3 - "$1" <<'PYEOF'
import json, math, sys
p = sys.argv[1]
try:
    with open(p) as f:
        d = json.load(f)
except FileNotFoundError:
    print("NA NA missing"); sys.exit(0)
except Exception:
    print("NA NA badjson"); sys.exit(0)
if not isinstance(d, dict):
    print("NA NA badjson"); sys.exit(0)
t = d.get("totals")
if not isinstance(t, dict):
    t = {}
def get(k):
    return t[k] if k in t else d.get(k)
def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
r, h, b = get("replays"), get("hit_rate"), get("body_graphs")
rs = ("%d" % r if float(r).is_integer() else repr(r)) if num(r) else "NA"
hs = ("%.4f" % h) if num(h) else "NA"
bs = ("%d" % b) if num(b) else "NA"
print(rs, hs, "ok" if num(r) else "noreplays", bs)
PYEOF
}

# rank_rates REPORT...: a line per rank's report: its hit rate, replays and
# ops, and the bail it met most.
rank_rates() {
    python3 - "$@" <<'PYEOF'
import json, re, sys
for f in sys.argv[1:]:
    m = re.search(r"report\.([0-9]+)\.json$", f)
    try:
        t = json.load(open(f)).get("totals", {})
    except Exception as e:
        print(f"rank {m.group(1) if m else f}: unreadable report ({type(e).__name__})")
        continue
    bails = t.get("bails") or {}
    top = max(bails, key=bails.get) if bails else None
    print(f"rank {m.group(1) if m else f}: hit_rate {t.get('hit_rate', 'NA')}, replays {t.get('replays', 'NA')}, "
          f"ops {t.get('ops', 'NA')}" + (f", most bails: {top} ({bails[top]})" if top else ", no bail"))
PYEOF
}

# ------------------------------------------------------------------ one case
declare -a ROWS=() FAILS=()
NPASS=0
NFAIL=0
NSKIP=0
NNONDET=0

run_case() {
    local name=$1 type=$2 lmode=$3 rexp=$4 extra=$5 rt=$6
    local dir="$OUT/$name.$rt" tfile="$TMPD/$name.$rt.trace"
    local -a cmd
    local -a why=()
    mkdir -p "$dir"
    local rfile="$dir/report.json"
    local SHIM_RUNS="off trace report"
    [ "$type" = cu ] || SHIM_RUNS=$PY_SHIM_RUNS
    if [ "$type" = cu ]; then
        cmd=("$BIN/$name.$rt")
    elif [ "$type" = tr ]; then
        # NVLink multicast off: graphshim is not tested with multicast objects.
        cmd=(NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMP_NUM_THREADS=1
            "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$NPROC" "$ROOT/samples/$name.py")
        rfile="$dir/report.%r.json"
    else
        cmd=("$PYTHON" "$ROOT/samples/$name.py")
    fi
    local tc=$SECONDS

    run_variant "$dir" plain "${cmd[@]}"
    if [ "$type" != cu ] && [ "$(run_field "$dir" plain rc)" = "$SKIP_RC" ]; then
        local sw
        sw=$(grep -v '^[[:space:]]*$' "$dir/plain.stderr" | tail -1 | cut -c1-160)
        printf '%s\n' "$sw" >"$dir/SKIP"
        NSKIP=$((NSKIP + 1))
        ROWS+=("$(printf '%-16s %-7s %9s %9s %-9s %8s %8s %s' "$name" "$rt" - - - - - SKIP)")
        log "  $(printf '%-16s %-7s %s  (%s)' "$name" "$rt" SKIP "$sw")"
        return 0
    fi
    local p2=no
    if [ "$type" != cu ] && [ "$PLAIN2" != 0 ]; then
        run_variant "$dir" plain2 "${cmd[@]}"
        p2=yes
    fi
    rm -f "$tfile"
    [[ " $SHIM_RUNS " != *" off "* ]] || run_variant "$dir" off LD_PRELOAD="$SHIM" "${SHIM_ENV[@]}" GRAPHSHIM=0 "${cmd[@]}"
    [[ " $SHIM_RUNS " != *" trace "* ]] ||
        run_variant "$dir" trace LD_PRELOAD="$SHIM" "${SHIM_ENV[@]}" GRAPHSHIM_TRACE="$tfile" "${cmd[@]}"
    run_variant "$dir" report LD_PRELOAD="$SHIM" "${SHIM_ENV[@]}" GRAPHSHIM_REPORT="$rfile" "${cmd[@]}"
    if [ "$type" = tr ]; then
        # One report per rank (a launcher process that touched CUDA writes
        # report.x.json, left out): summed into report.json.
        local -a ranks=("$dir"/report.[0-9]*.json)
        [ -e "${ranks[0]}" ] || ranks=()
        [ ${#ranks[@]} -eq "$NPROC" ] || why+=("report: ${#ranks[@]} rank reports, $NPROC expected (one per worker)")
        if [ ${#ranks[@]} -gt 0 ]; then
            "$REPORT_TOOL" report --json "${ranks[@]}" >"$dir/report.json" 2>"$dir/report-sum.err" ||
                why+=("report: graphshim report could not sum the ranks' reports ($(head -1 "$dir/report-sum.err"))")
            rank_rates "${ranks[@]}" >"$dir/ranks.txt"
        fi
    fi

    # exit codes
    local v rc
    local -a variants=(plain $SHIM_RUNS)
    [ "$p2" = yes ] && variants=(plain plain2 $SHIM_RUNS)
    for v in "${variants[@]}"; do
        rc=$(run_field "$dir" "$v" rc)
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            why+=("$v: timeout (${RUN_TIMEOUT}s)")
        elif [ "$rc" != 0 ]; then
            why+=("$v: exit $rc ($(grep -v '^[[:space:]]*$' "$dir/$v.stderr" | tail -1 | cut -c1-160))")
        fi
    done

    # stdout identity; first, is the program itself reproducible?
    local ident=yes nondet=no
    if [ ! -s "$dir/plain.stdout" ]; then
        why+=("plain: empty stdout")
        ident=no
    fi
    if [ "$p2" = yes ] && ! cmp -s "$dir/plain.stdout" "$dir/plain2.stdout"; then
        nondet=yes
        ident=nondet
        diff "$dir/plain.stdout" "$dir/plain2.stdout" >"$dir/plain2.stdout.diff" 2>&1
        cap_file "$dir/plain2.stdout.diff" 16384
    fi
    for v in $SHIM_RUNS; do
        if ! cmp -s "$dir/plain.stdout" "$dir/$v.stdout"; then
            diff "$dir/plain.stdout" "$dir/$v.stdout" >"$dir/$v.stdout.diff" 2>&1
            cap_file "$dir/$v.stdout.diff" 16384
            if [ "$nondet" = yes ]; then
                echo "note: $v: stdout differs from plain (not judged: the two plain runs differ)" \
                    >>"$dir/notes"
            else
                ident=no
                why+=("$v: stdout differs from plain")
            fi
        fi
    done

    # launches counted by the program
    local prog="-" gemms=""
    if [ "$type" = cu ]; then
        prog=$(kv "$dir/plain.stdout" launches)
        gemms=$(kv "$dir/plain.stdout" gemms)
        [ -n "$prog" ] || { prog="?"; why+=("plain: no 'launches N' line"); }
    else
        grep -q '^out.sha256 ' "$dir/plain.stdout" || why+=("plain: no 'out.sha256' line")
    fi

    # trace
    local seen="-"
    if [ -f "$tfile" ]; then
        analyze_trace "$tfile" >"$dir/trace.counts"
        head -200 "$tfile" >"$dir/trace.head"
        if [ "$KEEP_TRACE" = 1 ]; then gzip -c "$tfile" >"$dir/trace.gz"; fi
        rm -f "$tfile"
        seen=$(kv "$dir/trace.counts" launches)
        local own foreign noname lpl lex ntid
        own=$(kv "$dir/trace.counts" own)
        foreign=$(kv "$dir/trace.counts" foreign)
        noname=$(kv "$dir/trace.counts" noname)
        lpl=$(kv "$dir/trace.counts" launch_plain)
        lex=$(kv "$dir/trace.counts" launch_ex)
        ntid=$(kv "$dir/trace.counts" launch_tids)
        if [[ "$prog" =~ ^[0-9]+$ ]]; then
            case $lmode in
            eq) [ "$seen" -eq "$prog" ] || why+=("trace: $seen launch lines, program issued $prog") ;;
            ge) [ "$seen" -ge "$prog" ] || why+=("trace: $seen launch lines < program's $prog")
                [ "$own" -eq "$prog" ] || why+=("trace: $own ${OWN_PREFIX}* launches, program issued $prog") ;;
            esac
        fi
        case $extra in
        gemms)
            if [[ "$gemms" =~ ^[0-9]+$ ]]; then
                [ "$foreign" -ge "$gemms" ] || why+=("trace: $foreign non-${OWN_PREFIX} (library) launches < gemms $gemms")
            else
                why+=("plain: no 'gemms N' line")
            fi ;;
        tids4) [ "$ntid" -ge 4 ] || why+=("trace: launches from $ntid distinct tids (< 4)") ;;
        ex)
            [ "$lpl" -gt 0 ] || why+=("trace: no launches through cuLaunchKernel[_ptsz]")
            [ "$lex" -gt 0 ] || why+=("trace: no launches through cuLaunchKernelEx[_ptsz]") ;;
        esac
        [ "$noname" -eq 0 ] || echo "note: $noname launch lines without kernel=" >>"$dir/notes"
    elif [[ " $SHIM_RUNS " == *" trace "* ]]; then
        why+=("trace: no trace file written")
    fi

    # report
    local rep="NA NA missing NA" replays hit rstat bodyg
    rep=$(parse_report "$dir/report.json")
    read -r replays hit rstat bodyg <<<"$rep"
    replays=${replays:-NA} hit=${hit:-NA} rstat=${rstat:-noparse} bodyg=${bodyg:-NA}
    if [ -f "$dir/report.json" ]; then
        cap_file "$dir/report.json" 262144
    fi
    if [ "$CHECK_REPORT" != 0 ]; then
        if [ "$rstat" != ok ]; then
            why+=("report: $rstat (replays not a number)")
        elif [ "$rexp" = "body>0" ]; then
            awk -v r="$bodyg" 'BEGIN{exit !(r > 0)}' || why+=("report: body_graphs=$bodyg, expected > 0")
        elif [ "$rexp" = ">0" ]; then
            awk -v r="$replays" 'BEGIN{exit !(r > 0)}' || why+=("report: replays=$replays, expected > 0")
            if [ "$hit" = NA ]; then
                why+=("report: hit_rate missing or not a number")
            elif [ -n "$MIN_HIT_RATE" ]; then
                awk -v h="$hit" -v m="$MIN_HIT_RATE" 'BEGIN{exit !(h >= m)}' ||
                    why+=("report: hit_rate=$hit < GS_MIN_HIT_RATE=$MIN_HIT_RATE")
            fi
        fi
        if [ "$extra" = ctx2 ] && [ -f "$dir/report.json" ]; then
            local nctx
            nctx=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len(set(s.get("ctx") for s in d.get("streams", []) if s.get("replays", 0) > 0 and s.get("ctx") is not None)))' \
                "$dir/report.json" 2>/dev/null || echo 0)
            [ "${nctx:-0}" -ge 2 ] || why+=("report: streams of ${nctx:-0} context(s) replayed, 2 expected (ctx2)")
        fi
        if [ "$extra" = rows ] && [ -f "$dir/report.json" ]; then
            local w
            check_rows "$dir/report.json" "$(kv "$dir/plain.stdout" iters)" >"$dir/rows.txt"
            while IFS= read -r w; do why+=("report $w"); done <"$dir/rows.txt"
        fi
    fi

    local res=PASS
    local ndmsg="NONDETERMINISTIC: two plain runs (no shim) printed different stdout (see plain2.stdout.diff); a problem of the sample, not of the shim"
    if [ ${#why[@]} -gt 0 ]; then
        res=FAIL
        NFAIL=$((NFAIL + 1))
        [ "$nondet" = yes ] && why+=("$ndmsg")
        local w
        for w in "${why[@]}"; do FAILS+=("$name/$rt: $w"); done
        printf '%s\n' "${why[@]}" >"$dir/FAIL"
    elif [ "$nondet" = yes ]; then
        res=NONDET
        NNONDET=$((NNONDET + 1))
        FAILS+=("$name/$rt: $ndmsg")
        printf '%s\n' "$ndmsg" >"$dir/NONDETERMINISTIC"
    else
        NPASS=$((NPASS + 1))
    fi
    local rcol=$replays
    [ "$bodyg" != NA ] && [ "$bodyg" != 0 ] && rcol="$replays+${bodyg}b"
    ROWS+=("$(printf '%-16s %-7s %9s %9s %-9s %8s %8s %s' "$name" "$rt" "$prog" "$seen" "$ident" \
        "$rcol" "$hit" "$res")")
    local p2t=""
    [ "$p2" = yes ] && p2t=", plain2 $(run_field "$dir" plain2 time)s"
    log "  $(printf '%-16s %-7s %s  (%ds; plain %ss%s, off %ss, trace %ss, report %ss)' "$name" "$rt" "$res" \
        $((SECONDS - tc)) "$(run_field "$dir" plain time)" "$p2t" "$(run_field "$dir" off time)" \
        "$(run_field "$dir" trace time)" "$(run_field "$dir" report time)")"
    if [ -s "$dir/ranks.txt" ]; then
        while IFS= read -r w; do log "      $w"; done <"$dir/ranks.txt"
    fi
}

# ------------------------------------------------------------------ main loop
log "gpu-test: running (report checks: $([ "$CHECK_REPORT" != 0 ] && echo on || echo off); logs: $OUT)"
for name in "${SEL[@]}"; do
    read -r _ type lmode rexp extra < <(printf '%s\n' "$EXPECT" | awk -v n="$name" '$1==n')
    if [ "$type" = py ] || [ "$type" = tr ]; then
        if [ "$SKIP_PY" = 1 ]; then
            log "  $name: not run (GS_SKIP_PY=1)"
            continue
        fi
        if [ "$SKIP_TORCH" = 1 ] && [[ "$name" == torch_* ]]; then
            log "  $name: not run (GS_SKIP_TORCH=1)"
            continue
        fi
        if [ "$type" = tr ] && ! [ "${NGPU:-0}" -ge "$NPROC" ] 2>/dev/null; then
            NSKIP=$((NSKIP + 1))
            ROWS+=("$(printf '%-16s %-7s %9s %9s %-9s %8s %8s %s' "$name" tr - - - - - SKIP)")
            log "  $(printf '%-16s %-7s %s  (needs %s GPUs for torchrun --nproc-per-node %s; this machine has %s)' \
                "$name" tr SKIP "$NPROC" "$NPROC" "${NGPU:-0}")"
            continue
        fi
        run_case "$name" "$type" "$lmode" "$rexp" "$extra" "$([ "$type" = tr ] && echo tr || echo py)"
    else
        for rt in $RUNTIMES; do
            run_case "$name" "$type" "$lmode" "$rexp" "$extra" "$rt"
        done
    fi
done

# ------------------------------------------------------------------ no rank stranded
# With every sample of the table selected (or "ranks" named) and N GPUs:
# samples/ranks-test.sh (a rank's captures or graph launches failing, a rank
# killed), its cases counted with the samples'.
if [ "$RANKS" = 1 ] && [ "$SKIP_PY" != 1 ] && [ "$SKIP_TORCH" != 1 ]; then
    if [ "${NGPU:-0}" -ge "$NPROC" ] 2>/dev/null; then
        log "gpu-test: no rank stranded (samples/ranks-test.sh, $NPROC ranks)"
        OUT="$OUT/ranks" GS_NPROC="$NPROC" GS_BUILD="$(dirname "$SHIM")" PYTHON="$PYTHON" \
            bash "$ROOT/samples/ranks-test.sh" >"$OUT/ranks-test.log" 2>&1
        while IFS= read -r w; do log "$w"; done < <(grep -v '^ranks-test: [0-9]* passed' "$OUT/ranks-test.log")
        read -r rp rf < <(sed -n 's/^ranks-test: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$OUT/ranks-test.log")
        if [ -z "${rp:-}" ]; then
            NFAIL=$((NFAIL + 1)); FAILS+=("ranks-test: no result (see $OUT/ranks-test.log)")
        else
            NPASS=$((NPASS + rp)); NFAIL=$((NFAIL + rf))
            [ "$rf" = 0 ] || FAILS+=("ranks-test: $rf failed (see $OUT/ranks-test.log)")
        fi
        ROWS+=("$(printf '%-16s %-7s %9s %9s %-9s %8s %8s %s' ranks-test tr - - - - - "${rp:-0} passed, ${rf:-1} failed")")
    else
        NSKIP=$((NSKIP + 1))
        ROWS+=("$(printf '%-16s %-7s %9s %9s %-9s %8s %8s %s' ranks-test tr - - - - - SKIP)")
        log "  $(printf '%-16s %-7s %s  (needs %s GPUs; this machine has %s)' ranks-test tr SKIP "$NPROC" "${NGPU:-0}")"
    fi
fi

# ------------------------------------------------------------------ extra runs: NVTX, compute-sanitizer
PROBE="$OUT/nvtxprobe.so"
LAUNCHER="$(dirname "$SHIM")/graphshim"
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer 2>/dev/null || true)}
[ -n "$SAN" ] || SAN=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
[ -x "$SAN" ] || SAN=
SAN_ITERS=20
SAN_TIMEOUT=${GS_SAN_TIMEOUT:-600}

# extra_result NAME RUNTIME DIR IDENTICAL REPLAYS [WHY...]: records a row of an
# extra run; no WHY: PASS; WHY "SKIP: ..." alone: SKIP.
extra_result() {
    local name=$1 rt=$2 dir=$3 ident=$4 replays=$5 res=PASS
    shift 5
    if [ $# -eq 1 ] && [[ "$1" == SKIP:* ]]; then
        res=SKIP
        NSKIP=$((NSKIP + 1))
        printf '%s\n' "${1#SKIP: }" >"$dir/SKIP"
    elif [ $# -gt 0 ]; then
        res=FAIL
        NFAIL=$((NFAIL + 1))
        local w
        for w in "$@"; do FAILS+=("$name/$rt: $w"); done
        printf '%s\n' "$@" >"$dir/FAIL"
    else
        NPASS=$((NPASS + 1))
    fi
    ROWS+=("$(printf '%-16s %-7s %9s %9s %-9s %8s %8s %s' "$name" "$rt" - - "$ident" "$replays" - "$res")")
    log "  $(printf '%-16s %-7s %s' "$name" "$rt" "$res")${1:+  ($1)}"
}

# exit_why DIR VARIANT...: a line for each run that did not exit 0
exit_why() {
    local dir=$1 v rc
    shift
    for v in "$@"; do
        rc=$(run_field "$dir" "$v" rc)
        [ "$rc" = 0 ] || echo "$v: exit $rc ($(grep -v '^[[:space:]]*$' "$dir/$v.stderr" | tail -1 | cut -c1-160))"
    done
}

# nvtx_case NAME RUNTIME: the sample under the shim with tests/nvtxprobe as the NVTX tool.
nvtx_case() {
    local name=$1 rt=$2 dir="$OUT/$1.nvtx.$2" bin="$BIN/$1.$2" ident=no replays=NA
    local -a why=()
    mkdir -p "$dir"
    if [ ! -f "$PROBE" ]; then
        extra_result "$name+nvtx" "$rt" "$dir" - - "cannot build tests/nvtxprobe (see $OUT/nvtxprobe.log)"
        return
    fi
    run_variant "$dir" plain "$bin"
    run_variant "$dir" nvtx LD_PRELOAD="$SHIM" NVTX_INJECTION64_PATH="$PROBE" NVTXPROBE_OUT="$dir/nvtx.txt" \
        GRAPHSHIM_REPORT="$dir/report.json" "$bin"
    mapfile -t why < <(exit_why "$dir" plain nvtx)
    if cmp -s "$dir/plain.stdout" "$dir/nvtx.stdout" && [ -s "$dir/plain.stdout" ]; then
        ident=yes
    else
        why+=("nvtx: stdout differs from plain")
    fi
    read -r replays _ <<<"$(parse_report "$dir/report.json")"
    while IFS= read -r w; do why+=("$w"); done < <(check_nvtx "$dir/nvtx.txt" "$dir/report.json")
    extra_result "$name+nvtx" "$rt" "$dir" "$ident" "${replays:-NA}" "${why[@]}"
}

# san_case NAME RUNTIME: compute-sanitizer memcheck over the launcher running the sample.
san_case() {
    local name=$1 rt=$2 dir="$OUT/$1.san.$2" bin="$BIN/$1.$2" ident=no replays=NA errs probes
    local -a why=()
    mkdir -p "$dir"
    if [ -z "$SAN" ]; then
        extra_result "$name+san" "$rt" "$dir" - - "SKIP: compute-sanitizer not found (PATH, \$CUDA_HOME/bin, COMPUTE_SANITIZER)"
        return
    fi
    run_variant "$dir" plain "$bin" "$SAN_ITERS"
    RUN_TIMEOUT=$SAN_TIMEOUT run_variant "$dir" san "$SAN" --tool memcheck --target-processes all \
        --log-file "$dir/san.%p.log" "$LAUNCHER" run --report "$dir/report.json" -- "$bin" "$SAN_ITERS"
    mapfile -t why < <(exit_why "$dir" plain san)
    if cmp -s "$dir/plain.stdout" "$dir/san.stdout" && [ -s "$dir/plain.stdout" ]; then
        ident=yes
    else
        why+=("san: stdout differs from plain")
    fi
    # graphshim's own layout probe (cuFuncGetParamInfo past the last parameter)
    # is reported as an API error of the program: set aside, as make sanitize does.
    read -r errs probes < <(cat "$dir"/san.*.log 2>/dev/null | awk '
        /ERROR SUMMARY: [0-9]+ error/ { for (i = 1; i <= NF; i++) if ($i == "SUMMARY:") e += $(i + 1); found = 1 }
        /Program hit CUDA_ERROR_INVALID_VALUE .* on CUDA API call to cu(Func|Kernel)GetParamInfo/ { p++ }
        END { print (found ? e + 0 : "NA"), p + 0 }')
    if [ "$errs" = NA ]; then
        why+=("san: no 'ERROR SUMMARY' in the sanitizer log")
    elif [ $((errs - probes)) -ne 0 ]; then
        why+=("san: $errs sanitizer errors, $probes of them graphshim's layout probe")
    fi
    [ "${probes:-0}" -gt 0 ] && echo "note: $probes sanitizer reports are graphshim's layout probe" >>"$dir/notes"
    read -r replays _ <<<"$(parse_report "$dir/report.json")"
    [ "$CHECK_REPORT" = 0 ] || [ -f "$dir/report.json" ] || why+=("san: the shim wrote no report: it did not run")
    extra_result "$name+san" "$rt" "$dir" "$ident" "${replays:-NA}" "${why[@]}"
}

if [ "$EXTRA" != 0 ] && printf '%s\n' "${SEL[@]}" | grep -qx "$EXTRA_SAMPLE"; then
    log "gpu-test: extra runs of $EXTRA_SAMPLE: NVTX tool, compute-sanitizer${SAN:+ ($SAN)}"
    "${CC:-cc}" -O2 -fPIC -shared -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$PROBE" \
        "$ROOT/tests/nvtxprobe/nvtxprobe.c" -ldl -lpthread >"$OUT/nvtxprobe.log" 2>&1 || rm -f "$PROBE"
    for rt in $RUNTIMES; do
        nvtx_case "$EXTRA_SAMPLE" "$rt"
        san_case "$EXTRA_SAMPLE" "$rt"
    done
fi

# ------------------------------------------------------------------ summary
{
    echo
    printf '%-16s %-7s %9s %9s %-9s %8s %8s %s\n' sample runtime launches in_trace identical 'replays(+b)' hit_rate result
    printf '%s\n' "${ROWS[@]}"
    if [ ${#FAILS[@]} -gt 0 ]; then
        echo
        echo "failures:"
        printf '  %s\n' "${FAILS[@]}"
    fi
    echo
    echo "gpu-test: logs in $OUT; report checks $([ "$CHECK_REPORT" != 0 ] && echo on || echo 'off (GS_CHECK_REPORT=0)'); elapsed $((SECONDS - T0)) s"
    echo "gpu-test: $NPASS passed, $NFAIL failed, $NSKIP skipped, $NNONDET nondeterministic"
} | tee "$OUT/summary.txt"

if [ "$PACK_LOGS" = 1 ]; then
    (cd "$OUT" && shopt -s nullglob && dirs=(*.static *.shared *.py *.tr) &&
        [ ${#dirs[@]} -gt 0 ] && tar czf logs.tar.gz "${dirs[@]}" && rm -rf -- "${dirs[@]}")
fi

[ "$NFAIL" -eq 0 ] && [ "$NNONDET" -eq 0 ] && [ $((NPASS + NSKIP)) -gt 0 ]
