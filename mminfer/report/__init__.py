"""report.md and what reads records: the renderer (render), Korean helpers (korean), the
comparison of models (compare), the pictures (plots, plot_job). Never imports torch.
"""
