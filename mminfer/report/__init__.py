"""report.md and what reads records: the renderer (render), Korean helpers (korean), the
comparison of models (compare), the plot job (plot_job; each section's picture in its folder's
plot.py, over drawing's helpers). Never imports torch.
"""
