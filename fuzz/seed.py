#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ with the inputs of parse/tests/cases/*.txt."""
import hashlib, pathlib
root = pathlib.Path(__file__).resolve().parent
cases = root.parent / "parse" / "tests" / "cases"
inputs = []
for path in sorted(cases.glob("*.txt")):
    for block in path.read_text().split("\n=== ")[1:]:
        lines, body, on = block.split("\n")[1:], [], False
        for line in lines:
            if line.startswith("--- "):
                on = line == "--- input"
                continue
            if on:
                body.append(line)
        inputs.append("\n".join(body).encode())
for target, prefix in (("tags", b""), ("text", b"\x00"), ("stream", b"\x00\x03")):
    out = root / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for data in inputs:
        data = prefix + data
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
print(f"{len(inputs)} seeds per target")
