#!/usr/bin/env bash
# Reference solution: sort downloads into category folders by extension and write the manifest.
set -euo pipefail
cd /home/user/Downloads
mkdir -p images documents archives other
for f in *; do
  [ -f "$f" ] || continue
  lower=$(printf '%s' "$f" | tr '[:upper:]' '[:lower:]')
  case "$lower" in
    *.jpg|*.png|*.gif) dir=images ;;
    *.pdf|*.txt|*.docx|*.xlsx|*.md) dir=documents ;;
    *.zip|*.tar.gz) dir=archives ;;
    *) dir=other ;;
  esac
  mv -- "$f" "$dir/"
done
{
  echo "category,filename,size_bytes"
  for dir in images documents archives other; do
    for f in "$dir"/*; do
      [ -f "$f" ] && printf '%s,%s,%s\n' "$dir" "$(basename "$f")" "$(stat -c %s "$f")"
    done
  done | LC_ALL=C sort
} > manifest.csv
