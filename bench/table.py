#!/usr/bin/python3
"""bench/table.py: the final table of bench/run, from its metric lines on
stdin ("metric value unit"). A metric with a "ratio_vs_REF" line gets one row:
pgmq's value, REF's (the line metric_REF), the ratio."""
import sys

values = {}  # (name, unit) -> value
order = []
for line in sys.stdin:
    parts = line.split()
    if len(parts) != 3 or line.startswith("#"):
        continue
    values[(parts[0], parts[2])] = parts[1]
    order.append((parts[0], parts[2]))


def measured(name):
    """The (unit, value) of a metric's own line, not its ratio line."""
    for (n, unit), value in values.items():
        if n == name and not unit.startswith("ratio_vs_"):
            return unit, value
    return "?", "?"


shown = set()
print()
print(f"{'compared (medians)':<40} {'pgmq':>9} {'reference':>10} {'ratio':>6}  unit, reference")
for name, unit in order:
    if not unit.startswith("ratio_vs_"):
        continue
    reference = unit[len("ratio_vs_"):]
    own_unit, ours = measured(name)
    _, theirs = measured(f"{name}_{reference}")
    print(f"{name:<40} {ours:>9} {theirs:>10} {values[(name, unit)]:>6}  {own_unit}, {reference}")
    shown.update({(name, unit), (name, own_unit), (f"{name}_{reference}", own_unit)})
print()
for name, unit in order:
    if (name, unit) not in shown:
        print(f"{name:<40} {values[(name, unit)]:>9} {unit}")
