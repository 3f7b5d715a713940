#!/usr/bin/env bash
# Speed-up of a 64-point sweep (bench/sweep64.yaml) by threads (-j) and by
# MPI ranks (mpirun -np), against one process with one thread.  Needs a
# build configured --with-mpi.  Each configuration runs into a fresh
# folder; its sweep.csv is checked against the first one's (wall_s aside).
# Usage: bench/mpi-sweep.sh   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# --bind-to none: by default mpirun binds each of up to 2 ranks to one core,
# where its -j threads would queue (commsim warns when that happens)
mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
configs=(
  "1 process, -j 1|sim/commsim sweep -q -j 1"
  "1 process, -j 2|sim/commsim sweep -q -j 2"
  "mpirun -np 1, -j 1|$mpirun -np 1 sim/commsim sweep -q -j 1"
  "mpirun -np 2, -j 1|$mpirun -np 2 sim/commsim sweep -q -j 1"
  "mpirun -np 1, -j 2|$mpirun -np 1 sim/commsim sweep -q -j 2"
  "mpirun -np 2, -j 2|$mpirun -np 2 sim/commsim sweep -q -j 2"
  "mpirun -np 1, -j 2, bound to a core (mpirun's default)|${mpirun% --bind-to none} -np 1 sim/commsim sweep -q -j 2"
)
base=""
i=0
for c in "${configs[@]}"; do
  label=${c%%|*}
  cmd=${c#*|}
  dir="$out/$i"
  start=$(date +%s.%N)
  $cmd bench/sweep64.yaml -o "$dir" > /dev/null 2> "$dir.err" || { cat "$dir.err"; exit 1; }
  end=$(date +%s.%N)
  wall=$(echo "$end - $start" | bc)
  [ -z "$base" ] && base=$wall
  # the rows must not depend on how the points were spread (wall_s is column 27)
  cut -d, -f1-26,28- "$dir/sweep.csv" > "$dir/rows"
  cmp -s "$out/0/rows" "$dir/rows" || { echo "$label: sweep.csv differs from the first run's"; exit 1; }
  printf "%-54s wall %6.2f s   speed-up %.2f   (64 points, sweep.csv identical)\n" "$label" "$wall" "$(echo "$base / $wall" | bc -l)"
  i=$((i + 1))
done
