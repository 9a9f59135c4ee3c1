"""Time and peak memory of reading hostile YAML the way the import does
(projects/as_code/bounded_yaml.py): the review's 378-byte alias bomb
(S4-07) and deeper ones, and a file just under the size limit.

    python bench/yaml_bomb.py

Peak memory is what tracemalloc saw allocated while one file was read.
"""

from __future__ import annotations

import time
import tracemalloc

import harness  # noqa: F401  (puts the project on sys.path)

from projects.as_code import bounded_yaml


def bomb(depth: int) -> str:
    lines = ["version: 1", "projects:", "- name: laugh", "  url: http://127.0.0.1:9/"]
    lines.append("  headers:")
    lines.append('    A: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for level in range(1, depth):
        name, previous = chr(ord("a") + level), chr(ord("a") + level - 1)
        refs = ",".join([f"*{previous}"] * 9)
        lines.append(f"    {name.upper()}: &{name} [{refs}]")
    return "\n".join(lines) + "\n"


def flat(size: int) -> str:
    entry = "- name: p{0}\n  url: http://127.0.0.1:9/{0}\n"
    text, number = "version: 1\nprojects:\n", 0
    while len(text) < size - 200:
        text += entry.format(number)
        number += 1
    return text


def measure(label: str, text: str) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        bounded_yaml.load(text)
        outcome = "read"
    except bounded_yaml.Refused as error:
        outcome = f"refused: {error}"
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{label:28} {len(text):>9} B {elapsed * 1000:8.2f} ms {peak / 1e6:8.2f} MB")
    print(f"{'':28} {outcome[:80]}")


def main() -> None:
    for depth in (7, 9, 12):
        measure(f"alias bomb, depth {depth}", bomb(depth))
    measure("plain file under the limit", flat(bounded_yaml.MAX_BYTES))
    measure("one byte over the limit", "x" * (bounded_yaml.MAX_BYTES + 1))


if __name__ == "__main__":
    main()
