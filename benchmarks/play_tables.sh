#!/usr/bin/env bash
# Play the open result tables into their resumable logs for a fixed time, on any machine:
#
#   bash benchmarks/play_tables.sh SECONDS WORKERS TABLE [TABLE ...]
#   bash benchmarks/play_tables.sh left TABLE [TABLE ...]
#
# TABLE (the commands are those benchmarks/RESULTS.md gives for each table):
#   connectfour, breakthrough   issue 14 point 6: each classic search vs random and mcts
#   connectfour-roundrobin, breakthrough-roundrobin
#                               and the round robin of the game's best three, chosen by
#                               their scores in the finished mcts column (benchmarks/
#                               eval_tables.py --best 3; connect four: mtdf, paranoid,
#                               mcts); the pairings with mcts are the column's own games,
#                               only the rest is played
#   snake-heuristics, snake-algorithms
#                               issue 15 point 5: the paper's Table 1, 8-snake board,
#                               100 ms a move (two of each variant)
#   snake4-heuristics, snake4-algorithms
#                               the same columns on the standard 11x11 four-snake game,
#                               500 ms a move (one of each)
#   snake-duels                 IDAPOS against each other variant on the 11x11 duel,
#                               500 ms a move, 100 games a seat
#   rts-melee, rts-full         issue 16 point 4: the paper's Tables 3 and 4, each pairing
#                               of the bots and RTMM / RRTMM (0.1 s a decision), 50 games
#                               a seat; the bots' cells first, the searches' last
#   battlecity-small, battlecity-arena13, battlecity-maze18, battlecity-maze26
#                               issue 16 points 4 and 5 on one BattleCity map: the rows of
#                               the paper's Table 1 (the bots, RTMM / RRTMM at 0.05 s; 25
#                               games a seat a map), then the shipped network's (50 games
#                               a seat)
#   battlecity-small-beyond, battlecity-arena13-beyond (and the mazes')
#                               issue 16 point 5 on one BattleCity map: alpha-beta with
#                               the paper's evaluation and MCTS against Table 1's field,
#                               25 games a seat a map as Table 1's rows (`small`'s log
#                               already holds 50 a seat)
#   rts-melee-beyond, rts-full-beyond
#                               issue 16 point 5: the shipped network (PUCT without
#                               playouts), alpha-beta and MCTS (the paper's evaluation
#                               at the leaves) against the same four, into the same logs
#
# Each table runs as its own `ggp eval` / `ggp tournament` with WORKERS workers, all the
# tables at once. Games start for SECONDS (`--stop-at`); those running then are played
# out and logged, so no game is lost at the stop, and the run ends when they are (a game
# of RTS-Melee takes 5 minutes). What is still running PLAY_TABLES_GRACE seconds later
# (default 900) is stopped as by Ctrl-C, losing those games. A later run (here or on
# another machine, from a copy of the logs) goes on where this one stopped. Give each
# table no more workers than the cores it may use: the searches run on a clock. With
# $OUT set (the lent device machine), the logs are copied there at the end. Print the
# tables with benchmarks/eval_tables.py (issue 14) or by running the same `ggp
# tournament` command again (it reads the log and plays nothing once the games are in).
#
# `left` plays nothing: each table's commands run one after the other with --dry-run
# (the games each cell's log holds and those left, with the core-hours they take at the
# logged games' mean length; a cell with none, at that of its player's games against
# its opponent in the other seat, else the median of the log's other players in its
# seat), then the sum over the tables; the logs are only read,
# so it may run beside a run that is playing them.
set -u
usage() {
  sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
}
dry=()
if [ "${1:-}" = left ]; then
  [ $# -lt 2 ] && usage
  if [ -z "${_PLAY_TABLES_LEFT:-}" ]; then  # run again below, summing the tables' lines
    _PLAY_TABLES_LEFT=1 bash "$0" "$@" | awk '{ print }
      /^left: / {
        games += $2
        if (match($0, /about [0-9.]+ core-hours/)) { split(substr($0, RSTART, RLENGTH), w, " "); hours += w[2] }
        else untimed += $2
      }
      END {
        printf "\nall the tables: %d games left, about %.1f core-hours", games, hours
        if (untimed) printf " and %d games with none logged to time them", untimed
        print ""
      }'
    exit "${PIPESTATUS[0]}"
  fi
  dry=(--dry-run) seconds=0 workers=1
  shift
else
  [ $# -lt 3 ] && usage
  seconds=$1 workers=$2
  shift 2
fi
cd "$(dirname "$0")/.."
ggp=.venv/bin/ggp
[ -x "$ggp" ] || ggp=ggp
python=.venv/bin/python
[ -x "$python" ] || python=python3
data=benchmarks/data
corpus=../shared/gdl/gdl
stop=$(($(date +%s) + seconds))

play() {  # ggp ARGS...: a table's command, with the stop time; none once it has passed
  if [ ${#dry[@]} -gt 0 ]; then
    "$ggp" "$@" --dry-run
  elif [ "$(date +%s)" -lt "$stop" ]; then
    "$ggp" "$@" --stop-at "@$stop"
  fi
}

classic() {  # GAME LOG PLAYERS...: each player vs random and mcts, one after the other
  local game=$1 log=$2
  shift 2
  for p in "$@"; do
    play eval "$corpus/$game" --player "$p" --vs random,mcts --games 100 \
      --workers "$workers" --play-clock 1 --seed 0 --no-progress --log "$data/$log"
  done
}

roundrobin() {  # GAME LOG PLAYERS...: each player against those after it, 100 games a role
  local game=$1 log=$2 i vs
  shift 2
  local players=("$@")
  for ((i = 0; i < ${#players[@]} - 1; i++)); do
    vs=$(IFS=,; echo "${players[*]:i+1}")
    play eval "$corpus/$game" --player "${players[$i]}" --vs "$vs" --games 100 \
      --workers "$workers" --play-clock 1 --seed 0 --no-progress --log "$data/$log"
  done
}

snakes() {  # GAME CLOCK FIELD LOG: a tournament of 500 games
  play tournament "games/battlesnake/$1" --games 500 --workers "$workers" \
    --play-clock "$2" --seed 0 --no-progress --field "$3" --log "$data/$4"
}

M=margin=0.03 T=weights=tuned
heuristics="idapos:$T,$M,idapos:eval=greedy,$M,idapos:eval=aggressive,$M,idapos:eval=tailchaser,$M"
algorithms="idapos:$T,$M,idapos:search=maxn,$T,$M,idapos:search=alphabeta,$T,$M,idapos:search=minimax,$T,$M"
# the duels' opponents: every variant of both columns but IDAPOS itself; the searches
# first, alpha-beta first of all: in a duel it is IDAPOS but for locality (RESULTS), the
# pairing that decides whether IDAPOS beats every variant
duels="idapos:search=alphabeta,$T,$M;idapos:search=maxn,$T,$M;idapos:search=minimax,$T,$M"
duels="$duels;idapos:eval=greedy,$M;idapos:eval=aggressive,$M;idapos:eval=tailchaser,$M"
rts() {  # GAME LOG: the upper triangle of the paper's table, cheapest rows first
  local game=$1 log=$2 row col vs
  local field=(rtsbot:stochastic rtsbot:rush rtmm:time=0.1 rrtmm:time=0.1)
  for row in 0 1 2 3; do
    vs=$(IFS=,; echo "${field[*]:$row}")
    play eval "games/rts/$game" --player "${field[$row]}" --vs "$vs" --games 50 \
      --workers "$workers" --play-clock 1 --seed 0 --wdl --no-progress --log "$data/$log"
  done
}

battlecity() {  # MAP: Table 1's rows on one map (25 games a seat), then the network's (50)
  local map=$1 row player vs games
  local all=rtsbot:random,rtsbot:follower,rtmm:time=0.05,rrtmm:time=0.05
  local rows=("rtsbot:random;rtsbot:random,rtsbot:follower;25" "rtsbot:follower;rtsbot:follower;25"
    "rtmm:time=0.05;$all;25" "rrtmm:time=0.05;$all;25"
    "cfr+nn:checkpoints/battlecity_$map/latest.pt,time=0.05;$all;50")
  for row in "${rows[@]}"; do
    IFS=';' read -r player vs games <<< "$row"
    play eval "games/rts/battlecity_$map.gdl" --player "$player" --vs "$vs" \
      --games "$games" --workers "$workers" --play-clock 0.5 --seed 0 --wdl --no-progress \
      --log "$data/rts-battlecity-$map.jsonl"
  done
}

battlecity_beyond() {  # MAP: the classic searches against Table 1's field, 25 games a seat
  local map=$1 player
  for player in alphabeta:eval=battlecity,time=0.05 mcts:time=0.05; do
    play eval "games/rts/battlecity_$map.gdl" --player "$player" \
      --vs rtsbot:random,rtsbot:follower,rtmm:time=0.05,rrtmm:time=0.05 --games 25 \
      --workers "$workers" --play-clock 0.5 --seed 0 --wdl --no-progress \
      --log "$data/rts-battlecity-$map.jsonl"
  done
}

beyond() {  # GAME LOG: rows beyond the paper against its field, 50 games a seat each
  local game=$1 log=$2 row
  local rows=("cfr+nn:checkpoints/${game%.gdl}/latest.pt,rollout=0,time=0.1"
    alphabeta:eval=rts,time=0.1 mcts:eval=rts,time=0.1)
  for row in "${rows[@]}"; do
    play eval "games/rts/$game" --player "$row" \
      --vs rtsbot:stochastic,rtsbot:rush,rtmm:time=0.1,rrtmm:time=0.1 --games 50 \
      --workers "$workers" --play-clock 1 --seed 0 --wdl --no-progress --log "$data/$log"
  done
}

pids=()
for table in "$@"; do
  case $table in
    connectfour)
      classic connectFour.kif eval-connectfour.jsonl alphabeta pvs mtdf paranoid maxn mcts & ;;
    breakthrough)
      classic breakthrough.kif eval-breakthrough.jsonl alphabeta pvs mtdf paranoid maxn mcts & ;;
    connectfour-roundrobin|breakthrough-roundrobin)  # the best three by the finished column
      log=eval-${table%-roundrobin}.jsonl kif=breakthrough.kif
      [ "$table" = connectfour-roundrobin ] && kif=connectFour.kif
      if ! best=$("$python" benchmarks/eval_tables.py --best 3 "$data/$log"); then
        kill "${pids[@]}" 2>/dev/null
        exit 2
      fi
      roundrobin "$kif" "$log" ${best//,/ } & ;;
    snake-heuristics)
      snakes eight_11x11.gdl 0.13 "$heuristics" battlesnake-table1-heuristics.jsonl & ;;
    snake-algorithms)
      snakes eight_11x11.gdl 0.13 "$algorithms" battlesnake-table1-algorithms.jsonl & ;;
    snake4-heuristics)
      snakes standard_11x11.gdl 0.53 "$heuristics" battlesnake-four-heuristics.jsonl & ;;
    snake4-algorithms)
      snakes standard_11x11.gdl 0.53 "$algorithms" battlesnake-four-algorithms.jsonl & ;;
    snake-duels)
      ( IFS=';'
        for opponent in $duels; do
          play eval games/battlesnake/duel_11x11.gdl --player "idapos:$T,$M" \
            --vs "$opponent" --games 100 --workers "$workers" --play-clock 0.53 --seed 0 \
            --wdl --no-progress --log "$data/battlesnake-duels.jsonl"
        done ) & ;;
    rts-melee)
      rts rts_8x8_melee.gdl rts-melee.jsonl & ;;
    rts-full)
      rts rts_8x8_full.gdl rts-full.jsonl & ;;
    battlecity-small|battlecity-arena13|battlecity-maze18|battlecity-maze26)
      battlecity "${table#battlecity-}" & ;;
    battlecity-small-beyond|battlecity-arena13-beyond|battlecity-maze18-beyond|battlecity-maze26-beyond)
      map=${table#battlecity-}
      battlecity_beyond "${map%-beyond}" & ;;
    rts-melee-beyond)
      beyond rts_8x8_melee.gdl rts-melee.jsonl & ;;
    rts-full-beyond)
      beyond rts_8x8_full.gdl rts-full.jsonl & ;;
    *)
      echo "play_tables.sh: no table '$table' (see play_tables.sh with no arguments)" >&2
      kill "${pids[@]}" 2>/dev/null
      exit 2 ;;
  esac
  pids+=($!)
  [ ${#dry[@]} -gt 0 ] && wait $!  # one table after the other
done
if [ ${#dry[@]} -gt 0 ]; then
  exit 0
fi

# Stop what still runs PLAY_TABLES_GRACE seconds after the stop time: first the loop of
# each table (so it starts no next command), then its ggp process (SIGTERM: it stops as
# on Ctrl-C, and stops its workers). The timer's sleep goes with it when the tables end
# first (it would hold the output open: `play_tables.sh ... | tail` would wait for it).
( trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep "$((seconds + ${PLAY_TABLES_GRACE:-900}))" &
  sleeper=$!
  wait "$sleeper"
  for p in "${pids[@]}"; do
    ggps=$(pgrep -P "$p")
    kill "$p" 2>/dev/null
    for c in $ggps; do kill "$c" 2>/dev/null; done
  done ) &
timer=$!
wait "${pids[@]}" 2>/dev/null
kill "$timer" 2>/dev/null
if [ -n "${OUT:-}" ]; then
  cp "$data"/*.jsonl "$OUT"/
fi
wc -l "$data"/*.jsonl
