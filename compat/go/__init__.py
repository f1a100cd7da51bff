"""The Go programs compat/ drives (franz-go harness, rpk) and their build (build.py)."""
