#!/usr/bin/env bash
# Play the open result tables into their resumable logs for a fixed time, on any machine:
#
#   bash benchmarks/play_tables.sh SECONDS WORKERS TABLE [TABLE ...]
#
# TABLE (the commands are those benchmarks/RESULTS.md gives for each table):
#   connectfour, breakthrough   issue 14 point 6: each classic search vs random and mcts
#   snake-heuristics, snake-algorithms
#                               issue 15 point 5: the paper's Table 1, 8-snake board
#
# Each table runs as its own `ggp eval` / `ggp tournament` with WORKERS workers, all the
# tables at once, and is stopped (SIGINT, as Ctrl-C) after SECONDS; a log keeps every
# finished game, and a later run (here or on another machine, from a copy of the logs)
# goes on where it stopped. Give each table no more workers than the cores it may use:
# the searches run on a clock. With $OUT set (the lent device machine), the logs are
# copied there at the end. Print the tables with benchmarks/eval_tables.py (issue 14) or
# by running the same `ggp tournament` command again (it reads the log and plays nothing
# once the games are in).
set -u
if [ $# -lt 3 ]; then
  sed -n 2,18p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
seconds=$1 workers=$2
shift 2
cd "$(dirname "$0")/.."
ggp=.venv/bin/ggp
[ -x "$ggp" ] || ggp=ggp
data=benchmarks/data
corpus=../shared/gdl/gdl

classic() {  # GAME LOG PLAYERS...: each player vs random and mcts, one after the other
  local game=$1 log=$2
  shift 2
  for p in "$@"; do
    "$ggp" eval "$corpus/$game" --player "$p" --vs random,mcts --games 100 \
      --workers "$workers" --play-clock 1 --seed 0 --no-progress --log "$data/$log"
  done
}

snakes() {  # FIELD LOG
  "$ggp" tournament games/battlesnake/eight_11x11.gdl --games 500 --workers "$workers" \
    --play-clock 0.13 --seed 0 --no-progress --field "$1" --log "$data/$2"
}

M=margin=0.03 T=weights=tuned
pids=()
for table in "$@"; do
  case $table in
    connectfour)
      classic connectFour.kif eval-connectfour.jsonl alphabeta pvs mtdf paranoid maxn mcts & ;;
    breakthrough)
      classic breakthrough.kif eval-breakthrough.jsonl alphabeta pvs mtdf paranoid maxn mcts & ;;
    snake-heuristics)
      snakes "idapos:$T,$M,idapos:eval=greedy,$M,idapos:eval=aggressive,$M,idapos:eval=tailchaser,$M" \
        battlesnake-table1-heuristics.jsonl & ;;
    snake-algorithms)
      snakes "idapos:$T,$M,idapos:search=maxn,$T,$M,idapos:search=alphabeta,$T,$M,idapos:search=minimax,$T,$M" \
        battlesnake-table1-algorithms.jsonl & ;;
    *)
      echo "play_tables.sh: no table '$table' (connectfour, breakthrough, snake-heuristics, snake-algorithms)" >&2
      kill "${pids[@]}" 2>/dev/null
      exit 2 ;;
  esac
  pids+=($!)
done

# Stop every table after SECONDS: first the loop of each table (so it starts no next
# player), then its ggp process and that process's pool workers, with SIGINT as Ctrl-C.
descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
( sleep "$seconds"
  for p in "${pids[@]}"; do
    tree=$(descendants "$p")
    kill "$p" 2>/dev/null
    for c in $tree; do kill -INT "$c" 2>/dev/null; done
  done ) &
timer=$!
wait "${pids[@]}" 2>/dev/null
kill "$timer" 2>/dev/null
if [ -n "${OUT:-}" ]; then
  cp "$data"/eval-*.jsonl "$data"/battlesnake-table1-*.jsonl "$OUT"/ 2>/dev/null
fi
wc -l "$data"/eval-*.jsonl "$data"/battlesnake-table1-*.jsonl
