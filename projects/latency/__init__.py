"""Response-time percentiles: the histogram each rollup keeps
(histogram.py) and the percentiles of a range read from the rollups
(ranges.py). docs/objectives.md states the formulas."""
