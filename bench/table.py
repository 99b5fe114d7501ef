#!/usr/bin/python3
"""bench/table.py: the final table of bench/run, from its metric lines on
stdin ("metric value unit")."""
import sys

values = {}
order = []
for line in sys.stdin:
    parts = line.split()
    if len(parts) != 3 or line.startswith("#"):
        continue
    name, value, unit = parts
    values[(name, unit)] = value
    order.append((name, unit))

compared = [(name, unit) for name, unit in order if unit.startswith("ratio_vs_")]
done = set()
print()
print(f"{'throughput (median msgs/s)':<40} {'pgmq':>9} {'reference':>10} {'ratio':>6}  reference")
for name, unit in compared:
    reference = unit[len("ratio_vs_"):]
    ours = values[(name, "msgs/s")]
    theirs = values[(f"{name}_{reference}", "msgs/s")]
    print(f"{name:<40} {ours:>9} {theirs:>10} {values[(name, unit)]:>6}  {reference}")
    done.update({(name, unit), (name, "msgs/s"), (f"{name}_{reference}", "msgs/s")})
print()
for name, unit in order:
    if (name, unit) not in done:
        print(f"{name:<40} {values[(name, unit)]:>9} {unit}")
