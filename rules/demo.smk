# The embedded demo model (built only when the resolved inputs are the demo's).
