#!/usr/bin/env bash
# Reference solution: tar the February logs, delete them, write the index with the total line count.
set -euo pipefail
mkdir -p /home/user/archive
cd /home/user/logs
mapfile -t old < <(printf '%s\n' app-*.log | awk -F'[-.]' '($2 "-" $3 "-" $4) < "2024-03-01"' | LC_ALL=C sort)
tar -czf /home/user/archive/logs_before_2024-03-01.tar.gz "${old[@]}"
total=$(cat "${old[@]}" | wc -l)
{ printf '%s\n' "${old[@]}"; echo "TOTAL_LINES=$total"; } > /home/user/archive/index.txt
rm -- "${old[@]}"
