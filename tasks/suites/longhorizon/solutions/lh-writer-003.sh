#!/usr/bin/env bash
# Reference solution: dedupe and sort references, renumber them and remap in-text citations.
set -euo pipefail
python3 - <<'PY'
import re
import docx
path = "/home/user/paper.docx"
doc = docx.Document(path)
refs = [p for p in doc.paragraphs if re.match(r"^\[\d+\] ", p.text)]
entries = {int(re.match(r"^\[(\d+)\] (.*)$", p.text).group(1)): re.match(r"^\[(\d+)\] (.*)$", p.text).group(2) for p in refs}
unique = sorted(set(entries.values()))
new_number = {old: unique.index(text) + 1 for old, text in entries.items()}
for p in refs[len(unique):]:
    p._element.getparent().remove(p._element)
for p, text in zip(refs, unique):
    p.text = f"[{unique.index(text) + 1}] {text}"
for p in doc.paragraphs:
    if p in refs or "[" not in p.text or re.match(r"^\[\d+\] ", p.text):
        continue
    p.text = re.sub(r"\[(\d+)\]", lambda m: f"[{new_number[int(m.group(1))]}]", p.text)
doc.save(path)
PY
