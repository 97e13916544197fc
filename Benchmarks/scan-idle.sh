#!/usr/bin/env bash
# `nearplay scan` at rest: CPU and resident memory with no devices around, against the BlueZ
# mock on a private bus (Benchmarks/mock-bluez.sh). Prints the figures.
#   Benchmarks/scan-idle.sh [seconds]      (default 60; builds nearplay in release mode first)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
swift build -c release --product nearplay >/dev/null
nearplay="$(swift build -c release --show-bin-path)/nearplay"
eval "$(Benchmarks/mock-bluez.sh)"
cleanup() { kill $scan $NEARPLAY_MOCK_PIDS 2>/dev/null || true; rm -rf "$NEARPLAY_MOCK_DIR"; }
"$nearplay" scan --json >/dev/null 2>&1 &
scan=$!
trap cleanup EXIT
sleep 3  # start-up: connect, discover, first allocations
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$scan/stat"; }
before=$(cpu)
sleep "$seconds"
after=$(cpu)
rss_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$scan/status")
hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$scan/status")
awk -v b="$before" -v a="$after" -v t="$ticks" -v s="$seconds" -v r="$rss_kb" -v h="$hwm_kb" 'BEGIN {
  printf "nearplay scan idle for %d s: CPU %.3f %% of one core (%d ticks of 1/%d s); RSS %.1f MB (peak %.1f MB)\n",
         s, 100 * (a - b) / t / s, a - b, t, r / 1024, h / 1024 }'
