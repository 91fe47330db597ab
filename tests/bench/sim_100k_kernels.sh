#!/bin/sh
# Times msprof-sim on a process that launches N kernels (default 100000) through
# the Python helper: the seven metric runs plus the sample run, exactly as the
# PyPTO scripts issue them. Usage: tests/bench/sim_100k_kernels.sh [build dir] [N]
set -eu
BUILD=${1:-build}
N=${2:-100000}
MSPROF="$BUILD/sim-bin/msprof"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
APP="python3 -c 'import msprof_sim as m
for i in range($N):
    m.launch(\"_Z6kernelv\" if i % 4 == 0 else \"aclnnAdd_AddAiCore_Add\", \"AI_VECTOR_CORE\", 48,
             inputs=[((1024, 1024), \"DT_FLOAT16\", \"ND\")], gm_to_ub=4 << 20, ub_to_gm=2 << 20, vec_fp16=1 << 21)
'"
export MSPROF_SIM_STATE_DIR="$OUT/state" MSPROF_SIM_SEED=1
start=$(date +%s.%N)
for g in PipeUtilization ArithmeticUtilization Memory MemoryL0 MemoryUB L2Cache ResourceConflictRatio; do
  t0=$(date +%s.%N)
  eval "$MSPROF --output=$OUT/PROF_$g --ai-core=on --aic-metrics=$g --task-time=on --ascendcl=on $APP" >/dev/null
  rows=$(($(wc -l < "$(ls "$OUT"/PROF_$g/PROF_*/mindstudio_profiler_output/op_summary_*.csv)") - 1))
  printf '%-22s %6.2f s  op_summary rows=%d\n' "$g" "$(echo "$(date +%s.%N) - $t0" | bc)" "$rows"
done
t0=$(date +%s.%N)
eval "$MSPROF --output=$OUT/PROF_Sample --ai-core=on --aic-metrics=PipeUtilization --aic-mode=sample-based --aic-freq=100 --task-time=on --ascendcl=on $APP" >/dev/null
db=$(ls "$OUT"/PROF_Sample/PROF_*/device_0/sqlite/ai_vector_core.db)
printf '%-22s %6.2f s  AICoreOriginalData rows=%s\n' "Sample" "$(echo "$(date +%s.%N) - $t0" | bc)" \
  "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from AICoreOriginalData').fetchone()[0])" "$db")"
printf 'total %.2f s for %d kernels x 8 runs\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$N"
