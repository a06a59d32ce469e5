"""Scripts the guest routes run in the sandbox (python3 -c SCRIPT ARG), on its standard library."""

RUN_PYTHON = """
import runpy, sys, tempfile
code = sys.argv[1]
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
    handle.write(code)
sys.argv = [handle.name]
runpy.run_path(handle.name, run_name="__main__")
"""
"""OSWorld's /run_python writes the code to a file and runs it as a script."""

LIST_DIRECTORY = """
import json, os, sys
MAX_ENTRIES = 20000
count = 0
def tree(path):
    global count
    node = {"type": "directory", "name": os.path.basename(path), "children": []}
    stack = [(path, node)]
    while stack:
        folder, parent = stack.pop()
        for entry in sorted(os.listdir(folder)):
            count += 1
            if count > MAX_ENTRIES:
                return node
            full = os.path.join(folder, entry)
            if os.path.isdir(full) and not os.path.islink(full):
                child = {"type": "directory", "name": entry, "children": []}
                stack.append((full, child))
            else:
                child = {"type": "file", "name": entry}
            parent["children"].append(child)
    return node
path = os.path.expanduser(sys.argv[1])
if not os.path.isdir(path):
    sys.exit("Directory not found")
print(json.dumps(tree(path)))
"""
"""The folder as OSWorld's /list_directory nests it, walked without recursion and capped."""
