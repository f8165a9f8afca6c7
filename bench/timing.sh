# Sourced by the bench scripts. best_of_three CMD...: runs CMD three times
# (stdout to out.txt, stderr dropped) and prints "WALL CPU" in seconds of the
# run with the smallest wall time; CPU is user + sys, the steadier figure on a
# shared machine. Needs GNU time (/usr/bin/time) and a writable current folder.
best_of_three() {
  local best="" pair wall user sys cpu
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %U %S" -o time.txt "$@" >out.txt 2>/dev/null || true
    read -r wall user sys < <(tail -n 1 time.txt)
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z "$best" ]] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$wall
      pair="$wall $cpu"
    fi
  done
  echo "$pair"
}
