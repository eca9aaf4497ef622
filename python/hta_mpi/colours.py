"""The colours the PNG figures (plots.py) and the HTML report (report.py)
share, defined once so that a rank or a category looks the same in both."""

# The timeline's layers.
CATEGORY_COLORS = {"compute": "#4c72b0", "communicate": "#dd8452", "overlap": "#55a868",
                   "empty": "#c7c7c7"}
# Causes of /gpu_gaps.
GAP_CAUSE_COLORS = {"sync": "#d62728", "dataloader": "#8c564b", "cpu_op": "#1f77b4",
                    "launch_delay": "#ff7f0e", "unknown": "#7f7f7f"}
# Classes of /outliers.
FLAG_COLORS = {"outlier": "#d62728", "likely": "#ff7f0e", "robust": "#9467bd"}
# Kernel-type slices: matplotlib's default colour cycle, which the PNG pie
# draws with.
KERNEL_TYPE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                      "#e377c2", "#7f7f7f"]
# The heatmaps' colour map, and its ends and middle for the report's SVG.
HEATMAP_CMAP = "coolwarm"
COOL, NEUTRAL, WARM = (59, 76, 192), (221, 221, 221), (180, 4, 38)
