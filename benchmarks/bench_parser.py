"""Parser speed: lines per second on a 5,000-line KIF file (issue: >= 20,000 lines/s),
and the validator's time on the large scale files (target: under 1 s each).

The file is made by concatenating real game descriptions (the public corpus in ../shared
when present, else games/) until it has 5,000 lines. Prints the median of several runs.
The scale files (../shared/scale) are validated when the corpus is present.

    python benchmarks/bench_parser.py [--lines 5000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ggp.gdl.parser import _get_parser, parse_file, parse_text
from ggp.gdl.validate import validate

ROOT = Path(__file__).resolve().parents[1]


def make_text(lines: int) -> str:
    sources = sorted((ROOT.parent / "shared" / "gdl").rglob("*.kif")) or sorted(
        (ROOT / "games").glob("*.gdl")
    )
    chunks: list[str] = []
    count = 0
    while count < lines:
        for path in sources:
            for line in path.read_text(encoding="utf-8").splitlines():
                chunks.append(line)
                count += 1
                if count >= lines:
                    break
            if count >= lines:
                break
    text = "\n".join(chunks)
    # Cut at the end of a complete sentence so the text parses.
    depth, end = 0, 0
    in_comment = False
    for i, ch in enumerate(text):
        if in_comment:
            in_comment = ch != "\n"
        elif ch == ";":
            in_comment = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                end = i + 1
    return text[:end] + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    text = make_text(args.lines)
    lines = text.count("\n")
    _get_parser()  # build the parser once: grammar compilation is not parsing
    start = time.perf_counter()
    parse_text(text)  # cold: every term is new to the intern tables
    cold = time.perf_counter() - start
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        description = parse_text(text)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print("| file | lines | rules | first parse s | median s | lines/s (median) |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(
        f"| concatenated corpus | {lines:,} | {len(description.rules):,} | {cold:.3f} | "
        f"{median:.3f} | {lines / median:,.0f} |"
    )
    scale = sorted((ROOT.parent / "shared" / "scale").glob("*.kif"))
    if scale:
        print()
        print("| scale file | rules | validate s (median of 3) |")
        print("| --- | --- | --- |")
    for path in scale:
        description = parse_file(path)
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            validate(description)
            runs.append(time.perf_counter() - start)
        print(f"| {path.name} | {len(description.rules):,} | {statistics.median(runs):.3f} |")


if __name__ == "__main__":
    main()
