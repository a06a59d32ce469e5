#!/usr/bin/env bash
# Reference solution: rename party and date, drop clause 4, renumber clauses and cross-references, sign-off lines.
set -euo pipefail
python3 - <<'PY'
import re
import docx
doc = docx.Document("/home/user/Documents/contract.docx")
paragraphs = doc.paragraphs
drop = next(i for i, p in enumerate(paragraphs) if p.text.startswith("4. "))
for p in paragraphs[drop:drop + 2]:
    p._element.getparent().remove(p._element)
def renumber(match):
    n = int(match.group(1))
    return f"Clause {n - 1 if n > 4 else n}"
for p in doc.paragraphs:
    text = p.text.replace("Northwind Traders", "Fabrikam Ltd").replace("1 March 2024", "15 April 2024")
    text = re.sub(r"Clause (\d+)", renumber, text)
    heading = re.match(r"^(\d+)\. (.*)$", text)
    if heading and int(heading.group(1)) > 4:
        text = f"{int(heading.group(1)) - 1}. {heading.group(2)}"
    if text != p.text:
        p.text = text
doc.add_paragraph("Signed for the Client: Fabrikam Ltd")
doc.add_paragraph("Signed for the Provider: Contoso Consulting")
doc.save("/home/user/Documents/contract_v2.docx")
PY
